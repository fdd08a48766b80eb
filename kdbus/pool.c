/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pool.c - userspace receive pools and the bus's allocation cache
 * (see pool.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/kdbus.h"
#include "kdbus/pool.h"

#define KDBUS_CACHE_MIN_SHIFT	7
#define KDBUS_CACHE_HDR		16

/* the hidden header before each block: its class, or -1 for malloc() */
typedef struct KdbusCacheHdr {
	int32_t cls;
	uint32_t pad;
	void *next;
} KdbusCacheHdr;

static int kdbus_cache_class(size_t size) {
	size_t total = size + KDBUS_CACHE_HDR;

	for (int i = 0; i < KDBUS_CACHE_CLASSES; i++)
		if (total <= ((size_t)1 << (KDBUS_CACHE_MIN_SHIFT + i)))
			return i;
	return -1;
}

void *kdbus_cache_alloc(KdbusCache *c, size_t size) {
	int cls = kdbus_cache_class(size);
	KdbusCacheHdr *h;

	if (cls >= 0 && c->free[cls]) {
		h = c->free[cls];
		c->free[cls] = h->next;
		c->n_free[cls]--;
	} else {
		size_t total = cls >= 0 ? ((size_t)1 << (KDBUS_CACHE_MIN_SHIFT + cls))
					: size + KDBUS_CACHE_HDR;

		if (total < size)
			return NULL;
		h = malloc(total);
		if (!h)
			return NULL;
		h->cls = cls;
	}
	h->next = NULL;
	return (uint8_t *)h + KDBUS_CACHE_HDR;
}

void kdbus_cache_free(KdbusCache *c, void *p) {
	KdbusCacheHdr *h;

	if (!p)
		return;
	h = (KdbusCacheHdr *)((uint8_t *)p - KDBUS_CACHE_HDR);
	if (h->cls < 0 || c->n_free[h->cls] >= (KDBUS_CACHE_MAX_FREE_BYTES >> (KDBUS_CACHE_MIN_SHIFT + h->cls))) {
		free(h);
		return;
	}
	h->next = c->free[h->cls];
	c->free[h->cls] = h;
	c->n_free[h->cls]++;
}

void kdbus_cache_deinit(KdbusCache *c) {
	for (int i = 0; i < KDBUS_CACHE_CLASSES; i++) {
		while (c->free[i]) {
			KdbusCacheHdr *h = c->free[i];

			c->free[i] = h->next;
			free(h);
		}
		c->n_free[i] = 0;
	}
}

void kdbus_pool_init(KdbusPool *p, uint64_t size) {
	p->size = size;
	p->used = 0;
	kdbus_hash_init(&p->slices);
	list_init(&p->held);
}

int kdbus_pool_charge_msg(KdbusPool *p, uint64_t size) {
	uint64_t left = p->size - p->used;

	if (size > left)
		return -ENOBUFS;
	if (size > left / 2)
		return -EXFULL;
	p->used += size;
	return 0;
}

int kdbus_pool_charge_query(KdbusPool *p, uint64_t size) {
	if (size > p->size - p->used)
		return -ENOBUFS;
	p->used += size;
	return 0;
}

void kdbus_pool_uncharge(KdbusPool *p, uint64_t size) {
	p->used -= size <= p->used ? size : p->used;
}

int kdbus_pool_publish(KdbusPool *p, KdbusSlice *s) {
	if (!s->published) {
		int r = kdbus_hash_add(&p->slices, &s->node, kdbus_hash_u64(s->offset));

		if (r < 0)
			return r;
		s->published = true;
	}
	s->user_ref = true;
	return 0;
}

void kdbus_pool_unpublish(KdbusPool *p, KdbusSlice *s) {
	if (s->published) {
		kdbus_hash_remove(&p->slices, &s->node);
		s->published = false;
	}
	s->user_ref = false;
}

KdbusSlice *kdbus_pool_find(KdbusPool *p, uint64_t offset) {
	uint64_t h = kdbus_hash_u64(offset);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &p->slices, h) {
		KdbusSlice *s = (KdbusSlice *)n;

		if (s->offset == offset)
			return s;
	}
	return NULL;
}

typedef struct KdbusDataSlice {
	KdbusSlice slice;
	uint64_t data[];
} KdbusDataSlice;

int kdbus_pool_data_new(KdbusPool *p, uint64_t size, KdbusSlice **ret) {
	KdbusDataSlice *d;
	uint64_t charge = KDBUS_ALIGN8(size ? size : 8);
	int r;

	r = kdbus_pool_charge_query(p, charge);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d) + charge);
	if (!d) {
		kdbus_pool_uncharge(p, charge);
		return -ENOMEM;
	}
	d->slice.offset = (uint64_t)(uintptr_t)d->data;
	d->slice.size = charge;
	d->slice.kind = KDBUS_SLICE_DATA;
	*ret = &d->slice;
	return 0;
}

void kdbus_pool_data_free(KdbusPool *p, KdbusSlice *s) {
	if (!s)
		return;
	kdbus_pool_unpublish(p, s);
	kdbus_pool_uncharge(p, s->size);
	free(s);
}

int kdbus_pool_data_publish(KdbusPool *p, KdbusSlice *s) {
	int r = kdbus_pool_publish(p, s);

	if (r < 0)
		kdbus_pool_data_free(p, s);
	return r;
}
