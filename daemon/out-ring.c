/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * out-ring.c - a client's output ring (out-ring.h).
 */

#include <errno.h>
#include <stdlib.h>

#include "daemon/out-ring.h"
#include "util/macro.h"

/* a full ring doubles (small at first: an idle connection keeps its ring) */
ClientOut *out_ring_grow(OutRing *r) {
	size_t cap = r->cap ? r->cap * 2 : 2;
	ClientOut *n = calloc(cap, sizeof(*n));

	if (!n)
		return NULL;
	for (size_t i = 0; i < r->n; i++)
		n[i] = *out_ring_at(r, i);
	free(r->slots);
	r->slots = n;
	r->head = 0;
	r->cap = cap;
	return out_ring_at(r, r->n);
}

void out_slot_release(ClientOut *o, KdbusConn *conn) {
	/* every slice of ours came from kdbus_recv_batch() */
	if (o->slice && conn)
		(void) kdbus_free_batch(conn, &o->slice, 1);
	for (unsigned i = 0; i < o->n_fds; i++)
		safe_close(o->fds[i]);
	free(o->owned);
	*o = (ClientOut) {};
}

int out_ring_push(OutRing *r, const ClientOut *o) {
	ClientOut *slot = out_ring_reserve(r);

	if (!slot)
		return -ENOMEM;
	*slot = *o;
	out_ring_commit(r, slot);
	return 0;
}

void out_ring_clear(OutRing *r, KdbusConn *conn) {
	while (r->n)
		out_slot_release(out_ring_pop(r), conn);
	r->bytes = 0;
}

unsigned out_ring_fds(const OutRing *r) {
	unsigned n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += out_ring_at(r, i)->n_fds;
	return n;
}

void out_ring_free(OutRing *r) {
	free(r->slots);
	*r = (OutRing) {};
}
