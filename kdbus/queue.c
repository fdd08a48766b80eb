/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * queue.c - queue entries, payload buffers and the receive queue
 * (see queue.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/queue.h"
#include "kdbus/reply.h"
#include "util/macro.h"

KdbusPayload *kdbus_payload_unref(KdbusBus *bus, KdbusPayload *p) {
	if (p && --p->refs == 0)
		kdbus_cache_free(&bus->cache, p);
	return NULL;
}

void kdbus_inflight_released(KdbusBus *bus, KdbusInflight *f) {
	if (!f->conn) {
		if (!f->bytes)
			free(f);
		return;
	}
	if (f->full && !kdbus_inflight_is_full(f)) {
		f->full = false;
		kdbus_bus_wake(bus, f->conn);
	}
}

void kdbus_inflight_detach(KdbusInflight *f) {
	if (!f)
		return;
	f->conn = NULL;
	if (!f->bytes)
		free(f);
}

KdbusQueueEntry *kdbus_queue_entry_alloc(KdbusBus *bus, size_t msg_size, size_t n_fds) {
	size_t head = KDBUS_ALIGN8(sizeof(KdbusQueueEntry));
	KdbusQueueEntry *e;

	e = kdbus_cache_alloc(&bus->cache, head + KDBUS_ALIGN8(msg_size) + n_fds * sizeof(int));
	if (!e)
		return NULL;
	*e = (KdbusQueueEntry) {
		.slice = {
			.offset = (uint64_t)(uintptr_t)((uint8_t *)e + head),
			.kind = KDBUS_SLICE_ENTRY,
		},
		.msg = (struct kdbus_msg *)((uint8_t *)e + head),
		.fds = n_fds ? (int *)((uint8_t *)e + head + KDBUS_ALIGN8(msg_size)) : NULL,
	};
	list_init(&e->link);
	list_init(&e->held_link);
	return e;
}

void kdbus_queue_entry_free(KdbusBus *bus, KdbusQueueEntry *e) {
	if (!e)
		return;
	for (uint32_t i = 0; i < e->n_fds; i++)
		if (e->fds[i] >= 0)
			close(e->fds[i]);
	e->payload = kdbus_payload_put(bus, e->payload);
	if (e->slice.held) {
		list_unlink(&e->held_link);
		e->slice.held = false;
		e->slice.user_ref = false;
	}
	if (e->conn) {
		kdbus_pool_unpublish(&e->conn->pool, &e->slice);
		kdbus_pool_uncharge(&e->conn->pool, e->charge);
		if (e->has_actor)
			kdbus_conn_quota_uncharge(e->conn, e->actor, e->charge);
	}
	kdbus_user_uncharge_msg(bus, &e->ucharge, e->charge, e->ucharge_fds);
	if (e->reply)
		e->reply->entry = NULL;
	kdbus_cache_free(&bus->cache, e);
}

bool kdbus_queue_link(KdbusQueue *q, KdbusQueueEntry *e) {
	bool was_empty = list_is_empty(&q->msgs);

	/* always at the tail, moved messages too (kdbus' handover appends
	 * them): a new owner first gets what was queued for it before it
	 * took the name, then what is sent to it after; dbus1 clients rely on
	 * the replies to their own calls (Hello) not being overtaken by
	 * messages that were waiting on an activator */
	list_link_tail(&q->msgs, &e->link);
	q->n_msgs++;
	e->slice.kernel_ref = true;
	return was_empty;
}

void kdbus_queue_unlink(KdbusQueue *q, KdbusQueueEntry *e) {
	list_unlink(&e->link);
	q->n_msgs--;
	e->slice.kernel_ref = false;
}

int kdbus_queue_peek(KdbusQueue *q, int64_t priority, bool use_priority,
		     KdbusQueueEntry **ret) {
	KdbusQueueEntry *e, *best = NULL;

	if (list_is_empty(&q->msgs))
		return -EAGAIN;

	if (!use_priority) {
		*ret = list_first_entry(&q->msgs, KdbusQueueEntry, link);
		return 0;
	}

	/* lowest priority value first, FIFO among equals */
	list_for_each_entry(e, &q->msgs, link)
		if (!best || e->priority < best->priority)
			best = e;
	if (best->priority > priority)
		return -EAGAIN;	/* nothing at that priority (yet) */
	*ret = best;
	return 0;
}
