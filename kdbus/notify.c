/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.c - kernel notifications (see notify.h)
 */

#include <errno.h>
#include <string.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/item.h"
#include "kdbus/message.h"
#include "kdbus/notify.h"
#include "util/macro.h"

typedef struct KdbusNotification {
	List link;
	uint64_t dst_id;
	uint64_t cookie_reply;
	struct kdbus_item item;		/* variable size */
} KdbusNotification;

static KdbusNotification *kdbus_notify_new(KdbusBus *bus, uint64_t dst_id, uint64_t type,
					   size_t payload) {
	KdbusNotification *n;
	size_t isize = KDBUS_ITEM_SIZE(payload);

	n = kdbus_cache_alloc(&bus->cache, offsetof(KdbusNotification, item) + isize);
	if (!n)
		return NULL;
	memset(n, 0, offsetof(KdbusNotification, item) + isize);
	n->dst_id = dst_id;
	kdbus_item_init(&n->item, type, payload);
	list_link_tail(&bus->notifications, &n->link);
	return n;
}

int kdbus_notify_id_change(KdbusBus *bus, uint64_t type, uint64_t id, uint64_t flags) {
	KdbusNotification *n;

	n = kdbus_notify_new(bus, KDBUS_DST_ID_BROADCAST, type, kdbus_notify_payload_size(type, 0));
	if (!n)
		return -ENOMEM;
	n->item.id_change.id = id;
	n->item.id_change.flags = flags;
	return 0;
}

int kdbus_notify_name_change(KdbusBus *bus, uint64_t type,
			     uint64_t old_id, uint64_t new_id,
			     uint64_t old_flags, uint64_t new_flags,
			     const char *name) {
	size_t len = strlen(name) + 1;
	KdbusNotification *n;

	/* every change of a primary owner is announced here */
	bus->talk_gen++;
	n = kdbus_notify_new(bus, KDBUS_DST_ID_BROADCAST, type, kdbus_notify_payload_size(type, len - 1));
	if (!n)
		return -ENOMEM;
	n->item.name_change.old_id.id = old_id;
	n->item.name_change.old_id.flags = old_flags;
	n->item.name_change.new_id.id = new_id;
	n->item.name_change.new_id.flags = new_flags;
	memcpy(n->item.name_change.name, name, len);
	return 0;
}

int kdbus_notify_reply(KdbusBus *bus, uint64_t type, uint64_t id, uint64_t cookie) {
	KdbusNotification *n;

	n = kdbus_notify_new(bus, id, type, kdbus_notify_payload_size(type, 0));
	if (!n)
		return -ENOMEM;
	n->cookie_reply = cookie;
	return 0;
}

_noinline_ void kdbus_notify_flush(KdbusBus *bus) {
	if (bus->closed) {
		/* everybody is being disconnected: nobody to tell */
		kdbus_notify_drop(bus);
		return;
	}
	while (!list_is_empty(&bus->notifications)) {
		KdbusNotification *n = list_first_entry(&bus->notifications, KdbusNotification, link);
		KdbusStaging s = {
			.dst_id = n->dst_id,
			.cookie_reply = n->cookie_reply,
			.payload_type = KDBUS_PAYLOAD_KERNEL,
			.seqnum = ++bus->seqnum,
			.notify = &n->item,
		};

		list_unlink(&n->link);
		if (n->dst_id == KDBUS_DST_ID_BROADCAST) {
			kdbus_bus_broadcast(bus, &s);
		} else {
			KdbusConn *dst = kdbus_bus_find_conn(bus, n->dst_id);

			if (dst && dst->connected)
				kdbus_entry_deliver(bus, dst, &s, false);
			kdbus_bus_eavesdrop(bus, &s);
		}
		kdbus_cache_free(&bus->cache, n);
	}
}

void kdbus_notify_drop(KdbusBus *bus) {
	while (!list_is_empty(&bus->notifications)) {
		KdbusNotification *n = list_first_entry(&bus->notifications, KdbusNotification, link);

		list_unlink(&n->link);
		kdbus_cache_free(&bus->cache, n);
	}
}
