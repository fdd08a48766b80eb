/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * queue.h - queue entries and payload buffers (kernel: kdbus_queue)
 *
 * DOC: queue entries
 *
 * A message is one KdbusPayload (the PAYLOAD_VEC bytes of the SEND, copied
 * once into one contiguous, immutable, refcounted buffer) and one
 * KdbusQueueEntry per receiver.  The entry embeds the receiver's pool
 * slice: struct kdbus_msg with its items (DST_NAME, one PAYLOAD_OFF
 * pointing into the payload buffer, FDS, metadata), built at SEND time.
 * The entry owns the receiver's duplicates of the message's fds until RECV
 * hands them over.  After RECV the entry stays allocated as a published
 * (or, through kdbus_recv_batch(), held) slice until KDBUS_CMD_FREE.  The
 * queue is FIFO by global sequence number.
 *
 * In memory the message follows the entry at a fixed distance
 * (kdbus_queue_entry_of_msg()), then come the fds.
 *
 * DOC: in-flight charge (userspace extension)
 *
 * A connection with an in-flight limit (kdbus_conn_set_inflight_limit())
 * has a KdbusInflight: the bytes and fds of the messages it sent that are
 * still alive, queued or received and not yet freed by one of their
 * receivers.  SEND charges a message's payload bytes and fds to it once,
 * however many receivers get the message; the payload then counts its
 * users (the staging object during SEND, and each queue entry built from
 * it) and the charge goes back when the last of them goes.  A
 * KdbusInflight outlives its connection while messages are charged to it
 * (@conn is cleared at disconnect; the last release frees it).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/kdbus.h"
#include "kdbus/pool.h"
#include "kdbus/user.h"
#include "util/list.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;
typedef struct KdbusReply KdbusReply;

typedef struct KdbusInflight {
	uint64_t bytes, fds;		/* what is charged (a message is > 0 bytes) */
	uint64_t max_bytes, max_fds;
	KdbusConn *conn;		/* the sender; NULL once disconnected */
	bool full;			/* SEND said so: wake @conn once below */
} KdbusInflight;

typedef struct KdbusPayload {
	uint64_t refs;
	/* the message's charge while @users (staging and queue entries) are
	 * left; NULL: not charged (see "in-flight charge") */
	KdbusInflight *inflight;
	uint32_t inflight_fds;
	uint32_t users;
	uint64_t size;
	uint8_t *ptr;			/* the bytes: @data, or inside it if adopted */
	uint64_t cap;			/* bytes allocated at @data */
	bool offered;			/* made by kdbus_payload_new() */
	uint64_t id;			/* unique on the bus (kdbus_payload_id()); also
					 * the 8 bytes before @ptr */
	uint64_t data[];
} KdbusPayload;

typedef struct KdbusQueueEntry {
	KdbusSlice slice;		/* offset == address of @msg */
	List link;			/* in the queue */
	List held_link;			/* in the pool's held list (slice.held) */
	KdbusConn *conn;		/* whose pool/queue */
	KdbusPayload *payload;
	KdbusReply *reply;		/* the tracker of this call, while queued */
	uint64_t seqnum;
	uint64_t dst_name_id;
	int64_t priority;
	uint64_t charge;		/* bytes charged to the pool */
	/* kdbus_user_charge_msg() on the receiver's user, for the sender's:
	 * @charge bytes, @ucharge_fds fds and the message */
	KdbusUserUsage *ucharge;
	uint32_t ucharge_fds;
	uint64_t actor;			/* the sender's uid, if @has_actor */
	bool has_actor;
	uint32_t n_fds;			/* fds still owned by the entry */
	uint32_t fds_item_off;		/* offset of the FDS item in @msg, or 0 */
	int *fds;
	struct kdbus_msg *msg;
} KdbusQueueEntry;

typedef struct KdbusQueue {
	List msgs;
	uint64_t n_msgs;
} KdbusQueue;

/* the entry whose message starts at @msg (a queue entry's slice offset) */
static inline KdbusQueueEntry *kdbus_queue_entry_of_msg(const void *msg) {
	return (KdbusQueueEntry *)((uint8_t *)msg - KDBUS_ALIGN8(sizeof(KdbusQueueEntry)));
}

/** kdbus_payload_unref() - drop a reference; accepts NULL. Return: NULL. */
KdbusPayload *kdbus_payload_unref(KdbusBus *bus, KdbusPayload *p);

/* kdbus_payload_put() of the last user: the sender is gone, or may be
 * woken */
void kdbus_inflight_released(KdbusBus *bus, KdbusInflight *f);

/**
 * kdbus_payload_put() - a message user (staging, queue entry) drops its
 * reference: the last one gives the in-flight charge back.  Accepts NULL.
 * Return: NULL.
 */
static inline KdbusPayload *kdbus_payload_put(KdbusBus *bus, KdbusPayload *p) {
	if (!p)
		return NULL;
	if (p->inflight && --p->users == 0) {
		KdbusInflight *f = p->inflight;

		p->inflight = NULL;
		f->bytes -= p->size;
		f->fds -= p->inflight_fds;
		if (__builtin_expect(f->full || !f->conn, 0))
			kdbus_inflight_released(bus, f);
	}
	return kdbus_payload_unref(bus, p);
}

/**
 * kdbus_inflight_charge() - charge @p (@n_fds fds) to @f, with one user
 * (the caller's staging reference)
 */
static inline void kdbus_inflight_charge(KdbusInflight *f, KdbusPayload *p, uint32_t n_fds) {
	p->inflight = f;
	p->inflight_fds = n_fds;
	p->users = 1;
	f->bytes += p->size;
	f->fds += n_fds;
}

/** kdbus_inflight_is_full() - at or over a limit (dbus-daemon compares >=) */
static inline bool kdbus_inflight_is_full(const KdbusInflight *f) {
	return f->bytes >= f->max_bytes || f->fds >= f->max_fds;
}

/**
 * kdbus_inflight_detach() - @f's connection goes away: @f is freed now if
 * nothing is charged, else by the last release
 */
void kdbus_inflight_detach(KdbusInflight *f);

/**
 * kdbus_queue_entry_alloc() - allocate an entry with room for @msg_size
 * bytes of message and @n_fds fds (not linked, not charged)
 *
 * Return: the entry or NULL.
 */
KdbusQueueEntry *kdbus_queue_entry_alloc(KdbusBus *bus, size_t msg_size, size_t n_fds);

/**
 * kdbus_queue_entry_free() - release an entry: close its fds, drop the
 * payload, uncharge the pool, unpublish the slice.  It must not be queued.
 */
void kdbus_queue_entry_free(KdbusBus *bus, KdbusQueueEntry *e);

/**
 * kdbus_queue_link() - insert @e into @q in sequence-number order
 *
 * Return: true if the queue was empty before.
 */
bool kdbus_queue_link(KdbusQueue *q, KdbusQueueEntry *e);

/** kdbus_queue_unlink() - remove @e from @q. */
void kdbus_queue_unlink(KdbusQueue *q, KdbusQueueEntry *e);

/**
 * kdbus_queue_peek() - the next entry to receive
 * @q:		the queue
 * @priority:	with @use_priority: the lowest priority value wins and must
 *		be <= @priority
 * @use_priority: KDBUS_RECV_USE_PRIORITY
 * @ret:	the entry
 *
 * Return: 0, -EAGAIN (empty), -ENOMSG (nothing at this priority).
 */
int kdbus_queue_peek(KdbusQueue *q, int64_t priority, bool use_priority,
		     KdbusQueueEntry **ret);
