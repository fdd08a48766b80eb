/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * reply.h - reply trackers (kernel: kdbus_reply)
 *
 * DOC: reply trackers
 *
 * A method call sent with KDBUS_MSG_EXPECT_REPLY creates a tracker that
 * links the requester and the callee.  Trackers are filed in a bus-wide
 * hash table keyed by (requester id, cookie), so that a reply finds its
 * tracker in O(1), and are linked into the requester's list (for
 * max_requests_pending and cleanup) and the callee's list (for REPLY_DEAD
 * when the callee goes away, and for the activator handover).
 * Asynchronous trackers sit in a min-heap by deadline that
 * kdbus_bus_dispatch_timeouts() consumes; synchronous ones are timed by the
 * blocked sender itself.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/hash.h"
#include "kdbus/queue.h"
#include "util/list.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;
typedef struct KdbusQueueEntry KdbusQueueEntry;

typedef struct KdbusReply {
	KdbusHashNode node;
	List requester_link;
	List callee_link;
	KdbusConn *requester;
	KdbusConn *callee;
	uint64_t requester_id;
	uint64_t cookie;
	uint64_t deadline_ns;
	uint64_t name_id;
	size_t heap_idx;		/* SIZE_MAX when not in the heap */
	KdbusQueueEntry *entry;		/* the request, while queued */
	bool sync;
	bool done;			/* sync: result is ready */
	int err;			/* sync: result */
	KdbusQueueEntry *reply_entry;	/* sync: the reply */
} KdbusReply;

/**
 * kdbus_reply_sync_done() - a synchronous request is over, with @err
 * @r:		the tracker (r->sync)
 * @err:	the result its waiter gets
 *
 * Marks the result ready and unlinks @r from its callee and from the queued
 * request, if any; the caller wakes the waiter (bus->sync_cond), which
 * frees @r.
 */
static inline void kdbus_reply_sync_done(KdbusReply *r, int err) {
	r->done = true;
	r->err = err;
	if (r->callee) {
		list_unlink(&r->callee_link);
		r->callee = NULL;
	}
	if (r->entry) {
		r->entry->reply = NULL;
		r->entry = NULL;
	}
}

typedef struct KdbusReplyHeap {
	KdbusReply **v;
	size_t n;
	size_t cap;
} KdbusReplyHeap;

/**
 * kdbus_reply_new() - track a method call from @requester to @callee
 * @bus:	the bus
 * @requester:	who waits for the reply
 * @callee:	who must answer
 * @cookie:	cookie of the call
 * @deadline_ns: absolute CLOCK_MONOTONIC deadline
 * @name_id:	name registration the call was addressed to, or 0
 * @sync:	KDBUS_SEND_SYNC_REPLY
 * @ret:	the tracker
 *
 * Return: 0, -EMLINK (too many pending), -ENOMEM.
 */
int kdbus_reply_new(KdbusBus *bus, KdbusConn *requester, KdbusConn *callee,
		    uint64_t cookie, uint64_t deadline_ns, uint64_t name_id,
		    bool sync, KdbusReply **ret);

/**
 * kdbus_reply_find() - the tracker that a reply from @callee with
 * cookie_reply @cookie to @requester_id consumes
 *
 * Return: the tracker or NULL.
 */
KdbusReply *kdbus_reply_find(KdbusBus *bus, KdbusConn *callee,
			     uint64_t requester_id, uint64_t cookie);

/**
 * kdbus_reply_free() - unlink @r everywhere and free it.  The request
 * entry, if still queued, forgets it.  Accepts NULL.
 */
void kdbus_reply_free(KdbusBus *bus, KdbusReply *r);

/**
 * kdbus_reply_set_callee() - move @r to a new callee (activator handover)
 */
void kdbus_reply_set_callee(KdbusReply *r, KdbusConn *callee);

/** kdbus_reply_heap_top() - the tracker with the earliest deadline, or NULL. */
KdbusReply *kdbus_reply_heap_top(KdbusBus *bus);

/** kdbus_reply_heap_deinit() - free the heap array. */
void kdbus_reply_heap_deinit(KdbusReplyHeap *h);
