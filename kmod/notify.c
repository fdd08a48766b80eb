// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * notify.c - ID and name notifications
 *
 * They are collected while the registry or the connection table is
 * locked, and delivered afterwards, in order, by kdbus_notify_flush():
 * a kernel message to every connection with a match for it (of a custom
 * endpoint, name changes only for the names it may see).
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "internal.h"

struct kdbus_notification {
	struct list_head entry;
	struct kdbus_item item;		/* its size says how much follows */
};

/* a notification item of @type (kdbus_notify_payload_size()), zeroed */
static struct kdbus_notification *kdbus_notification_new(u64 type, size_t name_len)
{
	struct kdbus_notification *n;

	n = kzalloc(offsetof(struct kdbus_notification, item) + kdbus_notify_item_size(type, name_len),
		    GFP_KERNEL);
	if (!n)
		return NULL;
	kdbus_item_init(&n->item, type, kdbus_notify_payload_size(type, name_len));
	return n;
}

static void kdbus_notification_queue(struct kdbus_bus *bus, struct kdbus_notification *n)
{
	spin_lock(&bus->notify_lock);
	list_add_tail(&n->entry, &bus->notify_list);
	spin_unlock(&bus->notify_lock);
}

void kdbus_notify_id_change(struct kdbus_bus *bus, u64 type, u64 id, u64 flags)
{
	struct kdbus_notification *n;

	n = kdbus_notification_new(type, 0);
	if (!n)
		return;		/* lost for everybody, like an unqueueable broadcast */
	n->item.id_change.id = id;
	n->item.id_change.flags = flags;
	kdbus_notification_queue(bus, n);
}

void kdbus_notify_name_change(struct kdbus_bus *bus, u64 type, u64 old_id, u64 new_id,
			      u64 old_flags, u64 new_flags, const char *name)
{
	size_t len = strlen(name) + 1;
	struct kdbus_notification *n;

	n = kdbus_notification_new(type, len - 1);
	if (!n)
		return;
	n->item.name_change.old_id.id = old_id;
	n->item.name_change.old_id.flags = old_flags;
	n->item.name_change.new_id.id = new_id;
	n->item.name_change.new_id.flags = new_flags;
	memcpy(kdbus_item_name_change_str(&n->item), name, len);
	kdbus_notification_queue(bus, n);
}

/* does @dst get @notify: ID changes go to everybody, name changes only to
 * those who may see the name (custom endpoints); with the policy lock held */
static bool kdbus_notify_visible(struct kdbus_conn *dst, const struct kdbus_item *notify)
{
	if (notify->type == KDBUS_ITEM_ID_ADD || notify->type == KDBUS_ITEM_ID_REMOVE)
		return true;
	return kdbus_conn_may_see_name_locked(dst, kdbus_item_name_change_str(notify));
}

/* deliver what was collected; called with no bus or connection lock held */
void kdbus_notify_flush(struct kdbus_bus *bus)
{
	struct kdbus_notification *n, *tmp;
	struct kdbus_staging stamp = {};
	struct kdbus_conn *dst;
	LIST_HEAD(list);
	int i;

	mutex_lock(&bus->notify_flush_lock);
	spin_lock(&bus->notify_lock);
	list_splice_init(&bus->notify_list, &list);
	spin_unlock(&bus->notify_lock);

	list_for_each_entry_safe(n, tmp, &list, entry) {
		kdbus_staging_stamp(&stamp, bus);
		down_read(&bus->policy_lock);
		down_read(&bus->conn_lock);
		hash_for_each(bus->conns, i, dst, hentry)
			if (kdbus_notify_visible(dst, &n->item))
				kdbus_conn_enqueue_kernel(dst, &n->item, KDBUS_DST_ID_BROADCAST, 0, &stamp);
		hlist_for_each_entry(dst, &bus->monitors, hentry)
			kdbus_conn_enqueue_kernel(dst, &n->item, KDBUS_DST_ID_BROADCAST, 0, &stamp);
		up_read(&bus->conn_lock);
		up_read(&bus->policy_lock);
		list_del(&n->entry);
		kfree(n);
	}
	mutex_unlock(&bus->notify_flush_lock);
}
