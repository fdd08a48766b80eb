/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * idmap.h - open-addressing hash map from a non-zero uint64_t key to a
 * pointer (linear probing, backward-shift deletion, power-of-two size).
 * Used for objects looked up by a numeric id on hot paths.
 */

#include <stdint.h>
#include <stdlib.h>

#include "util/macro.h"

typedef struct IdMapEntry {
	uint64_t key;	/* 0 = empty */
	void *value;
} IdMapEntry;

typedef struct IdMap {
	IdMapEntry *entries;
	size_t mask;	/* size - 1, or 0 if not allocated */
	size_t n;
} IdMap;

#define IDMAP_INIT { NULL, 0, 0 }

static inline uint64_t idmap_hash(uint64_t k) {
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static inline void idmap_done(IdMap *m) {
	free(m->entries);
	*m = (IdMap) IDMAP_INIT;
}

static inline void *idmap_get(const IdMap *m, uint64_t key) {
	if (!m->entries)
		return NULL;
	for (size_t i = idmap_hash(key) & m->mask;; i = (i + 1) & m->mask) {
		if (m->entries[i].key == key)
			return m->entries[i].value;
		if (m->entries[i].key == 0)
			return NULL;
	}
}

static inline int idmap_resize(IdMap *m, size_t size) {
	IdMapEntry *old = m->entries;
	size_t old_size = old ? m->mask + 1 : 0;
	IdMapEntry *e = calloc(size, sizeof(*e));
	if (!e)
		return -ENOMEM;
	m->entries = e;
	m->mask = size - 1;
	for (size_t j = 0; j < old_size; j++) {
		if (!old[j].key)
			continue;
		size_t i = idmap_hash(old[j].key) & m->mask;
		while (e[i].key)
			i = (i + 1) & m->mask;
		e[i] = old[j];
	}
	free(old);
	return 0;
}

/* idmap_put() - insert or replace. Return: 0, -ENOMEM, -EINVAL (key 0) */
static inline int idmap_put(IdMap *m, uint64_t key, void *value) {
	if (key == 0)
		return -EINVAL;
	if (!m->entries || (m->n + 1) * 4 > (m->mask + 1) * 3) {
		int r = idmap_resize(m, m->entries ? (m->mask + 1) * 2 : 16);
		if (r < 0)
			return r;
	}
	size_t i = idmap_hash(key) & m->mask;
	while (m->entries[i].key && m->entries[i].key != key)
		i = (i + 1) & m->mask;
	if (!m->entries[i].key)
		m->n++;
	m->entries[i].key = key;
	m->entries[i].value = value;
	return 0;
}

/* idmap_remove() - remove @key; returns its value or NULL */
static inline void *idmap_remove(IdMap *m, uint64_t key) {
	if (!m->entries)
		return NULL;
	size_t i = idmap_hash(key) & m->mask;
	while (m->entries[i].key != key) {
		if (!m->entries[i].key)
			return NULL;
		i = (i + 1) & m->mask;
	}
	void *v = m->entries[i].value;
	/* backward-shift deletion keeps probe chains intact */
	for (size_t j = (i + 1) & m->mask; m->entries[j].key; j = (j + 1) & m->mask) {
		size_t h = idmap_hash(m->entries[j].key) & m->mask;
		/* can entry j move to the hole at i? */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->entries[i] = m->entries[j];
			i = j;
		}
	}
	m->entries[i].key = 0;
	m->entries[i].value = NULL;
	m->n--;
	return v;
}
