/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * out-ring.h - a client's output: the messages on their way to its socket,
 * oldest first, in a ring that grows by doubling.  A message is a slice of
 * the client's pool in the core (written straight from the core's shared
 * payloads) or a buffer of its own (what the bus itself says).  The ring
 * counts its messages and their bytes; what is written, and when, is
 * client-io.c's.
 */

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "compat/kdbus-client.h"

/* one message on its way to the socket */
typedef struct ClientOut {
	uint64_t slice;		/* pool slice to FREE when written, 0 if none */
	uint8_t *owned;		/* or a buffer the client owns */
	struct iovec iov[2];
	unsigned n_iov;
	size_t len, sent;
	int *fds;
	unsigned n_fds;
} ClientOut;

typedef struct OutRing {
	ClientOut *slots;
	size_t head, n, cap;	/* cap: 0 or a power of two */
	size_t bytes;		/* of the n messages */
	size_t peak_bytes;	/* the most bytes it ever held */
} OutRing;

/* the slot @i places after the head */
static inline ClientOut *out_ring_at(const OutRing *r, size_t i) {
	return &r->slots[(r->head + i) & (r->cap - 1)];
}

/* the oldest message (the ring is not empty) */
static inline ClientOut *out_ring_first(const OutRing *r) {
	return &r->slots[r->head];
}

ClientOut *out_ring_grow(OutRing *r);

/* a free slot at the tail (growing the ring; NULL without memory), not
 * yet counted: filled in place, then out_ring_commit() */
static inline ClientOut *out_ring_reserve(OutRing *r) {
	if (r->n < r->cap)
		return out_ring_at(r, r->n);
	return out_ring_grow(r);
}

/* the reserved slot @o joins the ring */
static inline void out_ring_commit(OutRing *r, const ClientOut *o) {
	assert(o == out_ring_at(r, r->n));
	r->n++;
	r->bytes += o->len;
	if (r->bytes > r->peak_bytes)
		r->peak_bytes = r->bytes;
}

/* the first message leaves the ring; its slot keeps what it holds, for
 * out_slot_release() or for out_ring_reserve() to fill anew */
static inline ClientOut *out_ring_pop(OutRing *r) {
	ClientOut *o = &r->slots[r->head];

	r->bytes -= o->len;
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
	return o;
}

/* what slot @o holds is let go: its buffer and fds freed, its slice given
 * back to @conn's pool (NULL: the connection is gone, and its pool) */
void out_slot_release(ClientOut *o, KdbusConn *conn);
/* a copy of @o joins the ring.  Return: 0, -ENOMEM (nothing changed) */
int out_ring_push(OutRing *r, const ClientOut *o);
/* every message leaves the ring, released */
void out_ring_clear(OutRing *r, KdbusConn *conn);
/* the fds of the messages in the ring */
unsigned out_ring_fds(const OutRing *r);
/* the ring is freed, empty (out_ring_clear()) */
void out_ring_free(OutRing *r);
