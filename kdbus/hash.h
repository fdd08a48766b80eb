/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * hash.h - intrusive chained hash tables for the userspace core
 *
 * Objects embed a KdbusHashNode and are filed under a 64-bit hash.  The
 * table doubles its bucket array when the load factor exceeds one, so
 * insertion, lookup and removal are O(1) amortised.  Keys are compared by
 * the caller: kdbus_hash_for_each_candidate() walks the nodes of the bucket
 * that carry the same hash value.
 */

#include <stddef.h>
#include <stdint.h>

typedef struct KdbusHashNode KdbusHashNode;
typedef struct KdbusHash KdbusHash;

struct KdbusHashNode {
	KdbusHashNode *next;
	uint64_t hash;
};

struct KdbusHash {
	KdbusHashNode **buckets;
	size_t n_buckets;	/* power of two, or 0 before the first insert */
	size_t n_entries;
};

#define KDBUS_HASH_INIT { NULL, 0, 0 }

/**
 * kdbus_hash_init() - initialise an empty table
 * @h:		the table
 */
void kdbus_hash_init(KdbusHash *h);

/**
 * kdbus_hash_deinit() - release the bucket array (the nodes are the
 * caller's and must have been removed or abandoned before)
 * @h:		the table
 */
void kdbus_hash_deinit(KdbusHash *h);

/**
 * kdbus_hash_add() - file @n under @hash
 * @h:		the table
 * @n:		the node, not in any table
 * @hash:	its hash value
 *
 * Return: 0, or -ENOMEM if the first bucket array cannot be allocated
 * (a failed resize is ignored: the table just gets fuller).
 */
int kdbus_hash_add(KdbusHash *h, KdbusHashNode *n, uint64_t hash);

/**
 * kdbus_hash_remove() - unlink @n from @h
 * @h:		the table
 * @n:		a node filed in @h
 */
void kdbus_hash_remove(KdbusHash *h, KdbusHashNode *n);

/**
 * kdbus_hash_bucket() - first node of the bucket of @hash
 * @h:		the table
 * @hash:	the hash value
 *
 * Return: the head of the chain, NULL if it is empty.
 */
static inline KdbusHashNode *kdbus_hash_bucket(const KdbusHash *h, uint64_t hash) {
	return h->n_buckets ? h->buckets[hash & (h->n_buckets - 1)] : NULL;
}

#define kdbus_hash_for_each_candidate(n, h, _hash)                          \
	for ((n) = kdbus_hash_bucket((h), (_hash)); (n); (n) = (n)->next)    \
		if ((n)->hash == (_hash))

/**
 * kdbus_hash_u64() - hash of an integer key (splitmix64 finaliser)
 * @v:		the key
 *
 * Return: the hash value.
 */
static inline uint64_t kdbus_hash_u64(uint64_t v) {
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return v;
}

/**
 * kdbus_hash_find_u64() - the object of @type filed in @h under the integer
 * key @key (hashed with kdbus_hash_u64())
 * @h:		the table
 * @key:	the key
 * @type:	the type of the objects in @h
 * @member:	their KdbusHashNode member
 * @key_member:	their key member, compared with @key
 *
 * Return: the object (@type *), or NULL.
 */
#define kdbus_hash_find_u64(h, key, type, member, key_member) ({               \
	uint64_t _key_ = (key), _hash_ = kdbus_hash_u64(_key_);                 \
	type *_found_ = NULL;                                                   \
	KdbusHashNode *_n_;                                                     \
                                                                                \
	kdbus_hash_for_each_candidate(_n_, (h), _hash_) {                       \
		type *_o_ = (type *)((char *)_n_ - offsetof(type, member));     \
                                                                                \
		if (_o_->key_member == _key_) {                                 \
			_found_ = _o_;                                          \
			break;                                                  \
		}                                                               \
	}                                                                       \
	_found_;                                                                \
})

/**
 * kdbus_hash_str() - hash of a string key of @len bytes (FNV-1a, seeded
 * per process so that names cannot be chosen to collide)
 * @s:		the string
 * @len:	its length
 *
 * Return: the hash value.
 */
uint64_t kdbus_hash_str(const char *s, size_t len);

/**
 * kdbus_hash_pop() - unlink and return any node (for teardown)
 * @h:		the table
 *
 * Return: a node that was in @h, or NULL if @h is empty.
 */
KdbusHashNode *kdbus_hash_pop(KdbusHash *h);
