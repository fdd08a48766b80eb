/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash-order.c - the iteration order of libdbus's string hash table (see
 * hash-order.h for the model and why).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/hash-order.h"

#define SMALL_TABLE 4		/* buckets of a new table, and the fewest a table shrinks to */
#define KEYS_PER_BUCKET 3	/* a table grows when it holds this many keys per bucket */
#define FIRST_DOWN_SHIFT 28	/* libdbus's growth limit: at most 14 growths */

struct HashOrderEntry {
	HashOrderEntry *next;	/* in its bucket's chain */
	unsigned hash;
	size_t rank;		/* scratch for hash_order_sort() */
	char key[];
};

struct HashOrder {
	HashOrderEntry **buckets;
	size_t n_buckets;
	size_t n_entries;
	size_t hi_rebuild_size;	/* grow when n_entries reaches this */
	size_t lo_rebuild_size;	/* shrink when n_entries is below this (after an insert) */
	unsigned mask;
	int down_shift;
};

/* the string hash of libdbus, bytes read as (signed) char as on the
 * platforms dbus-daemon runs on; bus names are ASCII anyway */
static unsigned string_hash(const char *s) {
	unsigned h = (unsigned) (int) (signed char) s[0];

	if (h)
		for (const char *p = s + 1; *p; p++)
			h = (h << 5) - h + (unsigned) (int) (signed char) *p;
	return h;
}

static void table_init_params(HashOrder *t) {
	t->n_buckets = SMALL_TABLE;
	t->n_entries = 0;
	t->hi_rebuild_size = SMALL_TABLE * KEYS_PER_BUCKET;
	t->lo_rebuild_size = 0;
	t->mask = SMALL_TABLE - 1;
	t->down_shift = FIRST_DOWN_SHIFT;
}

int hash_order_new(HashOrder **ret) {
	HashOrder *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->buckets = calloc(SMALL_TABLE, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return -ENOMEM;
	}
	table_init_params(t);
	*ret = t;
	return 0;
}

static void table_free_entries(HashOrder *t) {
	for (size_t i = 0; i < t->n_buckets; i++)
		for (HashOrderEntry *e = t->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
}

HashOrder *hash_order_free(HashOrder *t) {
	if (!t)
		return NULL;
	table_free_entries(t);
	free(t->buckets);
	free(t);
	return NULL;
}

void hash_order_reset(HashOrder *t) {
	HashOrderEntry **small;

	table_free_entries(t);
	if (t->n_buckets == SMALL_TABLE) {
		memset(t->buckets, 0, SMALL_TABLE * sizeof(*t->buckets));
	} else if ((small = calloc(SMALL_TABLE, sizeof(*small)))) {
		free(t->buckets);
		t->buckets = small;
	} else {
		/* keep the big array, use its first buckets */
		memset(t->buckets, 0, t->n_buckets * sizeof(*t->buckets));
	}
	table_init_params(t);
}

/* rebuild_table() of libdbus: after an insert that reached a threshold;
 * without memory the table stays as it is, as there */
static void table_rebuild(HashOrder *t) {
	bool growing = t->n_entries >= t->hi_rebuild_size;
	size_t n_new;

	if (growing) {
		if (t->n_buckets >= INT_MAX / 4 || t->down_shift < 2)
			return;
		n_new = t->n_buckets * 4;
	} else {
		n_new = t->n_buckets / 4;
		if (n_new < SMALL_TABLE)
			return;
	}
	HashOrderEntry **old = t->buckets, **new = calloc(n_new, sizeof(*new));
	size_t n_old = t->n_buckets;
	if (!new)
		return;

	t->buckets = new;
	t->n_buckets = n_new;
	if (growing) {
		t->lo_rebuild_size = t->hi_rebuild_size;
		t->hi_rebuild_size *= 4;
		t->down_shift -= 2;
		t->mask = (t->mask << 2) + 3;
	} else {
		t->hi_rebuild_size = t->lo_rebuild_size;
		t->lo_rebuild_size /= 4;
		t->down_shift += 2;
		t->mask >>= 2;
	}
	for (size_t i = 0; i < n_old; i++)
		while (old[i]) {
			HashOrderEntry *e = old[i];
			HashOrderEntry **b = &new[e->hash & t->mask];
			old[i] = e->next;
			e->next = *b;
			*b = e;
		}
	free(old);
}

static HashOrderEntry **table_find(const HashOrder *t, const char *key, unsigned hash) {
	HashOrderEntry **p = &t->buckets[hash & t->mask];

	while (*p && strcmp((*p)->key, key) != 0)
		p = &(*p)->next;
	return p;
}

int hash_order_insert(HashOrder *t, const char *key) {
	unsigned hash = string_hash(key);
	HashOrderEntry **p = table_find(t, key, hash);
	size_t len = strlen(key);

	if (*p)
		return 0;
	HashOrderEntry *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	e->hash = hash;
	e->rank = 0;
	memcpy(e->key, key, len + 1);
	HashOrderEntry **b = &t->buckets[hash & t->mask];
	e->next = *b;
	*b = e;
	t->n_entries++;
	/* only an insert rebuilds: libdbus's tables may lose entries while
	 * they are iterated */
	if (t->n_entries >= t->hi_rebuild_size || t->n_entries < t->lo_rebuild_size)
		table_rebuild(t);
	return 1;
}

bool hash_order_remove(HashOrder *t, const char *key) {
	HashOrderEntry **p = table_find(t, key, string_hash(key));
	HashOrderEntry *e = *p;

	if (!e)
		return false;
	*p = e->next;
	free(e);
	t->n_entries--;
	return true;
}

bool hash_order_contains(const HashOrder *t, const char *key) {
	return *table_find(t, key, string_hash(key)) != NULL;
}

size_t hash_order_size(const HashOrder *t) {
	return t->n_entries;
}

size_t hash_order_n_buckets(const HashOrder *t) {
	return t->n_buckets;
}

static const HashOrderEntry *table_first_from(const HashOrder *t, size_t bucket) {
	for (size_t i = bucket; i < t->n_buckets; i++)
		if (t->buckets[i])
			return t->buckets[i];
	return NULL;
}

const HashOrderEntry *hash_order_first(const HashOrder *t) {
	return table_first_from(t, 0);
}

const HashOrderEntry *hash_order_next(const HashOrder *t, const HashOrderEntry *e) {
	return e->next ? e->next : table_first_from(t, (size_t) (e->hash & t->mask) + 1);
}

const char *hash_order_entry_key(const HashOrderEntry *e) {
	return e->key;
}

typedef struct SortItem {
	char *name;
	size_t rank;
} SortItem;

static int sort_item_cmp(const void *a, const void *b) {
	const SortItem *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int hash_order_sort(HashOrder *t, char **names, size_t n) {
	size_t rank = 0;

	if (n < 2)
		return 0;
	SortItem *items = calloc(n, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_buckets; i++)
		for (HashOrderEntry *e = t->buckets[i]; e; e = e->next)
			e->rank = rank++;
	for (size_t i = 0; i < n; i++) {
		HashOrderEntry *e = *table_find(t, names[i], string_hash(names[i]));
		items[i].name = names[i];
		/* the others after every key, in their order */
		items[i].rank = e ? e->rank : rank + i;
	}
	qsort(items, n, sizeof(*items), sort_item_cmp);
	for (size_t i = 0; i < n; i++)
		names[i] = items[i].name;
	free(items);
	return 0;
}
