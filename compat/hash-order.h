/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * hash-order.h - the order in which dbus-daemon lists a set of strings.
 *
 * dbus-daemon keeps the names of the bus (bus/services.c) and the
 * activatable names (bus/activation.c) in libdbus's string hash table, and
 * ListNames / ListActivatableNames return them in that table's iteration
 * order, which depends on the keys and on the exact sequence of inserts and
 * removals since the table was created.  A HashOrder replays that sequence
 * on a table that behaves the same way (the same string hash, bucket
 * count, growth and shrink points, chain order and rebuild walk), so that
 * its iteration order is dbus-daemon's.  It keeps the keys only.
 *
 * The model, as libdbus 1.14 (dbus/dbus-hash.c) does it:
 *  - bucket = hash(key) & mask, hash(s) = s[0], then h = h * 31 + s[i]
 *    (bytes as signed char), on 32 bits;
 *  - a new key is put at the head of its bucket's chain;
 *  - 4 buckets at first; after an insert, the table grows 4x when it holds
 *    3 keys per bucket, and shrinks 4x (never below 4 buckets) when it holds
 *    fewer than the count at which it last grew; removals never rebuild;
 *  - a rebuild walks the old buckets in order, each chain from its head,
 *    putting every key at the head of its new bucket;
 *  - iteration walks the buckets in order, each chain from its head.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

typedef struct HashOrder HashOrder;
typedef struct HashOrderEntry HashOrderEntry;

/**
 * hash_order_new() - an empty table, as _dbus_hash_table_new() makes one
 * @ret:	the table
 *
 * Return: 0 or -ENOMEM.
 */
int hash_order_new(HashOrder **ret);

/**
 * hash_order_free() - free a table; accepts NULL
 * @t:		the table
 *
 * Return: NULL.
 */
HashOrder *hash_order_free(HashOrder *t);

/**
 * hash_order_reset() - empty @t, as if it had just been created (the
 * bucket count back to 4)
 * @t:		the table
 */
void hash_order_reset(HashOrder *t);

/**
 * hash_order_insert() - add @key if it is not there
 * @t:		the table
 * @key:	the key (copied)
 *
 * A key already there keeps its place (libdbus replaces the value only).
 *
 * Return: 1 if added, 0 if it was there, -ENOMEM.
 */
int hash_order_insert(HashOrder *t, const char *key);

/**
 * hash_order_remove() - remove @key if it is there
 * @t:		the table
 * @key:	the key
 *
 * Return: true if it was there.
 */
bool hash_order_remove(HashOrder *t, const char *key);

/**
 * hash_order_contains() - whether @key is in @t
 * @t:		the table
 * @key:	the key
 *
 * Return: true if it is.
 */
bool hash_order_contains(const HashOrder *t, const char *key);

/**
 * hash_order_size() - the number of keys
 * @t:		the table
 *
 * Return: the number of keys in @t.
 */
size_t hash_order_size(const HashOrder *t);

/**
 * hash_order_n_buckets() - the current bucket count (for tests)
 * @t:		the table
 *
 * Return: the number of buckets.
 */
size_t hash_order_n_buckets(const HashOrder *t);

/**
 * hash_order_first() - the first entry in iteration order
 * @t:		the table
 *
 * Iterate with hash_order_next(); the table must not change meanwhile.
 *
 * Return: the entry, or NULL if @t is empty.
 */
const HashOrderEntry *hash_order_first(const HashOrder *t);

/**
 * hash_order_next() - the entry after @e in iteration order
 * @t:		the table
 * @e:		an entry of @t
 *
 * Return: the entry, or NULL after the last one.
 */
const HashOrderEntry *hash_order_next(const HashOrder *t, const HashOrderEntry *e);

/**
 * hash_order_entry_key() - an entry's key
 * @e:		the entry
 *
 * Return: the key.
 */
const char *hash_order_entry_key(const HashOrderEntry *e);

/**
 * hash_order_sort() - put @names in @t's iteration order
 * @t:		the table
 * @names:	the strings to sort, in place
 * @n:		their number
 *
 * Strings that are keys of @t come first, in iteration order; the others
 * follow in the order they had.  Used to order a set taken from elsewhere
 * (the names the bus core has) by the table that mirrors dbus-daemon's.
 *
 * Return: 0 or -ENOMEM.
 */
int hash_order_sort(HashOrder *t, char **names, size_t n);

DEFINE_CLEANUP(HashOrder *, hash_order_free);
