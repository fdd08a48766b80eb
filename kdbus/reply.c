/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reply.c - reply trackers and their deadline heap (see reply.h)
 */

#include <errno.h>
#include <stdlib.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/queue.h"
#include "kdbus/reply.h"
#include "util/macro.h"

static uint64_t kdbus_reply_hash(uint64_t requester_id, uint64_t cookie) {
	return kdbus_hash_u64(requester_id * 0x9e3779b97f4a7c15ULL ^ cookie);
}

/* ---- min-heap by deadline ---- */

static void heap_swap(KdbusReplyHeap *h, size_t a, size_t b) {
	KdbusReply *t = h->v[a];

	h->v[a] = h->v[b];
	h->v[b] = t;
	h->v[a]->heap_idx = a;
	h->v[b]->heap_idx = b;
}

static void heap_up(KdbusReplyHeap *h, size_t i) {
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (h->v[p]->deadline_ns <= h->v[i]->deadline_ns)
			break;
		heap_swap(h, p, i);
		i = p;
	}
}

static void heap_down(KdbusReplyHeap *h, size_t i) {
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->v[l]->deadline_ns < h->v[m]->deadline_ns)
			m = l;
		if (r < h->n && h->v[r]->deadline_ns < h->v[m]->deadline_ns)
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
}

static int heap_push(KdbusReplyHeap *h, KdbusReply *r) {
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		KdbusReply **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = r;
	r->heap_idx = h->n++;
	heap_up(h, r->heap_idx);
	return 0;
}

static void heap_remove(KdbusReplyHeap *h, KdbusReply *r) {
	size_t i = r->heap_idx;

	if (i == SIZE_MAX)
		return;
	r->heap_idx = SIZE_MAX;
	if (i == --h->n)
		return;
	h->v[i] = h->v[h->n];
	h->v[i]->heap_idx = i;
	heap_up(h, i);
	heap_down(h, h->v[i]->heap_idx);
}

KdbusReply *kdbus_reply_heap_top(KdbusBus *bus) {
	return bus->heap.n ? bus->heap.v[0] : NULL;
}

void kdbus_reply_heap_deinit(KdbusReplyHeap *h) {
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

/* ---- trackers ---- */

int kdbus_reply_new(KdbusBus *bus, KdbusConn *requester, KdbusConn *callee,
		    uint64_t cookie, uint64_t deadline_ns, uint64_t name_id,
		    bool sync, KdbusReply **ret) {
	KdbusReply *r;

	if (requester->n_replies_out >= bus->limits.max_requests_pending)
		return -EMLINK;
	/* the user's budget (user.h) */
	if (kdbus_user_charge_set(bus, requester->user, &requester->self_charge, KDBUS_USER_REPLIES,
				  requester->n_replies_out + 1) < 0)
		return -EMLINK;

	r = kdbus_cache_alloc(&bus->cache, sizeof(*r));
	if (!r) {
		(void)kdbus_user_charge_set(bus, requester->user, &requester->self_charge, KDBUS_USER_REPLIES,
				    requester->n_replies_out);
		return -ENOMEM;
	}
	*r = (KdbusReply){
		.requester = requester,
		.callee = callee,
		.requester_id = requester->id,
		.cookie = cookie,
		.deadline_ns = deadline_ns,
		.name_id = name_id,
		.heap_idx = SIZE_MAX,
		.sync = sync,
	};
	if (kdbus_hash_add(&bus->replies, &r->node, kdbus_reply_hash(requester->id, cookie)) < 0) {
		kdbus_cache_free(&bus->cache, r);
		(void)kdbus_user_charge_set(bus, requester->user, &requester->self_charge, KDBUS_USER_REPLIES,
				    requester->n_replies_out);
		return -ENOMEM;
	}
	if (!sync) {
		if (heap_push(&bus->heap, r) < 0) {
			kdbus_hash_remove(&bus->replies, &r->node);
			kdbus_cache_free(&bus->cache, r);
			(void)kdbus_user_charge_set(bus, requester->user, &requester->self_charge, KDBUS_USER_REPLIES,
					    requester->n_replies_out);
			return -ENOMEM;
		}
		kdbus_bus_timer_update(bus, deadline_ns);
	}
	list_link_tail(&requester->replies_out, &r->requester_link);
	requester->n_replies_out++;

	list_link_tail(&callee->replies_in, &r->callee_link);
	*ret = r;
	return 0;
}

KdbusReply *kdbus_reply_find(KdbusBus *bus, KdbusConn *callee,
			     uint64_t requester_id, uint64_t cookie) {
	uint64_t h = kdbus_reply_hash(requester_id, cookie);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &bus->replies, h) {
		KdbusReply *r = container_of(n, KdbusReply, node);

		if (r->requester_id == requester_id && r->cookie == cookie &&
		    r->callee == callee && !r->done)
			return r;
	}
	return NULL;
}

void kdbus_reply_set_callee(KdbusReply *r, KdbusConn *callee) {
	list_unlink(&r->callee_link);
	r->callee = callee;
	list_link_tail(&callee->replies_in, &r->callee_link);
}

void kdbus_reply_free(KdbusBus *bus, KdbusReply *r) {
	if (!r)
		return;
	kdbus_hash_remove(&bus->replies, &r->node);
	heap_remove(&bus->heap, r);
	if (r->requester) {
		list_unlink(&r->requester_link);
		r->requester->n_replies_out--;
		(void)kdbus_user_charge_set(bus, r->requester->user, &r->requester->self_charge,
					    KDBUS_USER_REPLIES, r->requester->n_replies_out);
	}
	if (r->callee)
		list_unlink(&r->callee_link);
	if (r->entry)
		r->entry->reply = NULL;
	if (r->reply_entry)
		kdbus_queue_entry_free(bus, r->reply_entry);
	kdbus_cache_free(&bus->cache, r);
}
