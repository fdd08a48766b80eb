/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * pool.h - the receive pool of a userspace connection, and the bus's
 * allocation cache
 *
 * DOC: userspace pool
 *
 * The userspace pool has no backing memory of its own: pool base is
 * address 0 and the offset of a slice is the address of its data.  A
 * KdbusSlice records what the slice charges against the connection's
 * pool_size, and whether the kernel side (a queue) and the user side (a
 * RECV, LIST, CONN_INFO or HELLO result not yet freed) still reference it.
 * Slices that were handed to the user ("published") are filed in a hash
 * table by offset, so that KDBUS_CMD_FREE finds them in O(1).  Messages
 * taken with kdbus_recv_batch() are "held" instead: listed on the pool
 * (for KDBUS_CMD_FREE and for the connection's end) and found again by
 * kdbus_free_batch() from their address, without the hash.  A slice is
 * released when neither side references it any more.
 *
 * DOC: allocation cache
 *
 * Queue entries, payload buffers, reply trackers and notifications come
 * from per-bus free lists of a few size classes (KdbusCache), so that the
 * message path does not call malloc() once the lists are warm.  A list
 * keeps up to KDBUS_CACHE_MAX_FREE_BYTES of blocks.  Blocks
 * above the largest class go straight to malloc().  All of it runs under
 * the bus mutex.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/hash.h"
#include "util/list.h"

#define KDBUS_CACHE_CLASSES	6	/* 128, 256, ..., 4096 bytes */
/* bytes of free blocks kept per class: as many as were in use at once
 * (a broadcast to 50 receivers, 128 deep, is 6,400 entries), up to this;
 * kdbus_bus_trim() gives them all back */
#define KDBUS_CACHE_MAX_FREE_BYTES	(8 * 1024 * 1024)

typedef struct KdbusCache {
	void *free[KDBUS_CACHE_CLASSES];
	size_t n_free[KDBUS_CACHE_CLASSES];
} KdbusCache;

enum {
	KDBUS_SLICE_DATA,	/* a query result (HELLO, CONN_INFO, LIST) */
	KDBUS_SLICE_ENTRY,	/* a message: embedded in a KdbusQueueEntry */
};

typedef struct KdbusSlice {
	KdbusHashNode node;
	uint64_t offset;
	uint64_t size;
	bool published;		/* filed in the pool's hash */
	bool user_ref;		/* handed out and not yet freed */
	bool kernel_ref;	/* still queued (entries only) */
	bool held;		/* user_ref through kdbus_recv_batch(): on
				 * KdbusPool.held, not in the hash */
	uint8_t kind;
} KdbusSlice;

typedef struct KdbusPool {
	uint64_t size;
	uint64_t used;
	KdbusHash slices;
	List held;		/* KdbusQueueEntry.held_link */
} KdbusPool;

/**
 * kdbus_cache_alloc() - a block of at least @size bytes, 16-byte aligned
 * @c:		the cache
 * @size:	bytes needed
 *
 * Return: the block, or NULL.
 */
void *kdbus_cache_alloc(KdbusCache *c, size_t size);

/**
 * kdbus_cache_free() - return a block of kdbus_cache_alloc(); accepts NULL
 * @c:		the cache
 * @p:		the block
 */
void kdbus_cache_free(KdbusCache *c, void *p);

/** kdbus_cache_deinit() - release every cached block. */
void kdbus_cache_deinit(KdbusCache *c);

/**
 * kdbus_pool_init() - set up an empty pool of @size bytes
 * @p:		the pool
 * @size:	pool_size of HELLO
 */
void kdbus_pool_init(KdbusPool *p, uint64_t size);

/**
 * kdbus_pool_charge_msg() - account an incoming message of @size bytes
 * @p:		the receiver's pool
 * @size:	bytes (message, items and payload, each 8-aligned)
 *
 * Return: 0, -ENOBUFS (pool full), -EXFULL (more than half of what is
 * left).
 */
int kdbus_pool_charge_msg(KdbusPool *p, uint64_t size);

/**
 * kdbus_pool_charge_query() - account a query result of @size bytes
 * @p:		the pool
 * @size:	bytes
 *
 * Return: 0 or -ENOBUFS.
 */
int kdbus_pool_charge_query(KdbusPool *p, uint64_t size);

/** kdbus_pool_uncharge() - give back @size bytes. */
void kdbus_pool_uncharge(KdbusPool *p, uint64_t size);

/**
 * kdbus_pool_publish() - hand @s to the user: it becomes freeable
 * @p:		the pool
 * @s:		the slice
 *
 * Return: 0 or -ENOMEM.
 */
int kdbus_pool_publish(KdbusPool *p, KdbusSlice *s);

/** kdbus_pool_unpublish() - remove @s from the offset table, if filed. */
void kdbus_pool_unpublish(KdbusPool *p, KdbusSlice *s);

/**
 * kdbus_pool_find() - the published slice at @offset
 *
 * Return: the slice or NULL.
 */
KdbusSlice *kdbus_pool_find(KdbusPool *p, uint64_t offset);

/**
 * kdbus_pool_data_new() - a query-result slice with @size bytes of data,
 * zeroed and charged against @p (not yet published)
 * @p:		the pool
 * @size:	bytes
 * @ret:	the slice; its data is at (void *)ret->offset
 *
 * Return: 0, -ENOBUFS, -ENOMEM.
 */
int kdbus_pool_data_new(KdbusPool *p, uint64_t size, KdbusSlice **ret);

/** kdbus_pool_data_free() - unpublish, uncharge and free a data slice. */
void kdbus_pool_data_free(KdbusPool *p, KdbusSlice *s);

/**
 * kdbus_pool_data_publish() - kdbus_pool_publish() a data slice, or free it
 * (kdbus_pool_data_free()) when that fails
 * @p:		the pool
 * @s:		a slice from kdbus_pool_data_new()
 *
 * Return: 0 or -ENOMEM (@s is then gone).
 */
int kdbus_pool_data_publish(KdbusPool *p, KdbusSlice *s);

static inline void *kdbus_slice_data(const KdbusSlice *s) {
	return (void *)(uintptr_t)s->offset;
}
