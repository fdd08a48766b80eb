/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash.c - intrusive chained hash tables (see hash.h)
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kdbus/hash.h"

void kdbus_hash_init(KdbusHash *h) {
	h->buckets = NULL;
	h->n_buckets = 0;
	h->n_entries = 0;
}

void kdbus_hash_deinit(KdbusHash *h) {
	free(h->buckets);
	kdbus_hash_init(h);
}

static void kdbus_hash_resize(KdbusHash *h, size_t n_buckets) {
	KdbusHashNode **b;

	b = calloc(n_buckets, sizeof(*b));
	if (!b)
		return;

	for (size_t i = 0; i < h->n_buckets; i++) {
		KdbusHashNode *n = h->buckets[i];

		while (n) {
			KdbusHashNode *next = n->next;
			KdbusHashNode **slot = &b[n->hash & (n_buckets - 1)];

			n->next = *slot;
			*slot = n;
			n = next;
		}
	}

	free(h->buckets);
	h->buckets = b;
	h->n_buckets = n_buckets;
}

int kdbus_hash_add(KdbusHash *h, KdbusHashNode *n, uint64_t hash) {
	KdbusHashNode **slot;

	if (h->n_buckets == 0) {
		/* small: every connection has a few tables, most of them tiny */
		kdbus_hash_resize(h, 4);
		if (h->n_buckets == 0)
			return -ENOMEM;
	} else if (h->n_entries >= h->n_buckets) {
		kdbus_hash_resize(h, h->n_buckets * 2);
	}

	n->hash = hash;
	slot = &h->buckets[hash & (h->n_buckets - 1)];
	n->next = *slot;
	*slot = n;
	h->n_entries++;
	return 0;
}

void kdbus_hash_remove(KdbusHash *h, KdbusHashNode *n) {
	KdbusHashNode **p;

	if (h->n_buckets == 0)
		return;

	for (p = &h->buckets[n->hash & (h->n_buckets - 1)]; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			n->next = NULL;
			h->n_entries--;
			return;
		}
	}
}

static uint64_t hash_seed;
static pthread_once_t hash_seed_once = PTHREAD_ONCE_INIT;

static void hash_seed_init(void) {
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
		s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	hash_seed = s | 1;
}

uint64_t kdbus_hash_str(const char *s, size_t len) {
	uint64_t h;

	pthread_once(&hash_seed_once, hash_seed_init);
	h = 0xcbf29ce484222325ULL ^ hash_seed;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return kdbus_hash_u64(h);
}

KdbusHashNode *kdbus_hash_pop(KdbusHash *h) {
	for (size_t i = 0; i < h->n_buckets && h->n_entries > 0; i++) {
		KdbusHashNode *n = h->buckets[i];

		if (n) {
			h->buckets[i] = n->next;
			n->next = NULL;
			h->n_entries--;
			return n;
		}
	}
	return NULL;
}
