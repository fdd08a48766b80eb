/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * core.h - the userspace bus object (kernel: kdbus_bus + kdbus_domain)
 *
 * DOC: locking
 *
 * Every command takes the bus mutex with kdbus_bus_lock() and ends with
 * kdbus_bus_unlock(), which flushes the notifications queued during the
 * command, takes the collected wakeups (and a pending timer update) off
 * the bus, drops the mutex and only then invokes the callbacks.  A
 * connection to wake is collected once (conn->wake_queued) and holds a
 * reference until its callback returned.  Synchronous senders wait on the
 * bus condition variable (CLOCK_MONOTONIC) with the mutex released.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kdbus/bus.h"
#include "kdbus/hash.h"
#include "kdbus/metadata.h"
#include "kdbus/names.h"
#include "kdbus/policy.h"
#include "kdbus/pool.h"
#include "kdbus/reply.h"
#include "util/list.h"

typedef struct KdbusWake {
	KdbusConn *conn;
	KdbusWakeupFn fn;
	void *userdata;
} KdbusWake;

typedef struct KdbusWakeList {
	size_t n;
	size_t cap;
	KdbusWake w[];
} KdbusWakeList;

struct KdbusBus {
	KdbusBackend backend;		/* first: see handle.h */
	uint32_t refs;			/* owner handle + connection handles */
	pthread_mutex_t lock;
	pthread_cond_t sync_cond;
	List registry_link;

	char *name;
	uint64_t make_flags;
	struct kdbus_bloom_parameter bloom;
	uint64_t attach_flags_req;
	uint64_t attach_flags_owner;
	uint8_t id128[16];
	uint64_t creator_euid;
	KdbusMeta creator_meta;
	KdbusLimits limits;
	int policy_fallback;		/* kdbus_bus_set_policy_fallback(), -1: none */
	bool broadcast_fds;		/* kdbus_bus_set_broadcast_fds() */
	bool closed;

	uint64_t last_conn_id;
	uint64_t last_hidden_id;	/* KDBUS_HELLO_HIDDEN_ID connections */
	uint64_t seqnum;
	uint64_t talk_gen;		/* bumped on every name or policy change */
	KdbusHash conns_by_id;
	List conns;			/* KdbusConn.bus_link, by id */
	List monitors;			/* KdbusConn.monitor_link */
	/* user matches indexed by one bit of their bloom mask (match.c:
	 * kdbus_match_index_*), built on the first indexable match */
	List *umatch_index;		/* [bloom.size * 8] of KdbusMatchIndex.link */
	uint32_t *umatch_index_load;	/* matches filed per bit */
	uint32_t *umatch_index_freq;	/* indexed masks that have the bit */
	uint64_t *umatch_index_used;	/* [bloom.size / 8]: bits with matches */
	List umatch_unindexed;		/* user matches without a usable mask */
	KdbusHash umatch_keyed;		/* user matches with MATCH_KEYS, by their first key */
	uint64_t umatch_n;		/* user matches in the index and the list */
	uint64_t bcast_stamp;		/* kdbus_bus_broadcast() round */
	/* the key of the last indexed broadcast (sender, destination, bloom
	 * filter): a new stamp when it changes (message.c), so that user
	 * matches remember their answer while it repeats */
	uint64_t bcast_memo_stamp;
	bool bcast_memo_on;		/* this broadcast may use the memo */
	uint64_t bcast_memo_src, bcast_memo_dst;
	uint64_t bcast_memo_keys[KDBUS_MATCH_KEYS_MAX];
	size_t bcast_memo_n_keys;
#define KDBUS_BCAST_MEMO_WORDS 32	/* filters up to 256 bytes */
	uint64_t bcast_memo_bloom[1 + KDBUS_BCAST_MEMO_WORDS];	/* generation, data */
	uint64_t payload_seq;		/* the last KdbusPayload.id */
	List conns_kmatch;		/* conns that can match notifications */
	KdbusHash users;
	KdbusNameRegistry names;
	KdbusPolicyDb policy;
	KdbusHash replies;
	KdbusReplyHeap heap;
	List notifications;
	KdbusCache cache;

	KdbusTimerFn timer_fn;
	void *timer_userdata;
	uint64_t timer_armed;
	bool timer_pending;

	KdbusWakeList *wakes;		/* under the lock */
	KdbusWakeList *spare_wakes;	/* atomic exchange */
};

/** kdbus_bus_lock() - begin a command. */
void kdbus_bus_lock(KdbusBus *bus);

/** kdbus_bus_unlock() - end a command: flush, unlock, run callbacks. */
void kdbus_bus_unlock(KdbusBus *bus);

/** kdbus_bus_wake() - collect the wakeup of @conn (queue became non-empty). */
void kdbus_bus_wake(KdbusBus *bus, KdbusConn *conn);

/** kdbus_bus_ref() - one more reference. */
KdbusBus *kdbus_bus_ref(KdbusBus *bus);

/** kdbus_bus_unref() - drop a reference; the last one frees. Return: NULL. */
KdbusBus *kdbus_bus_unref(KdbusBus *bus);

/** kdbus_bus_find_conn() - the connection with @id, or NULL. */
KdbusConn *kdbus_bus_find_conn(KdbusBus *bus, uint64_t id);

/** kdbus_bus_timer_update() - a tracker with @deadline was added. */
void kdbus_bus_timer_update(KdbusBus *bus, uint64_t deadline);

/* userspace implementations behind handle.c */
int kdbus_us_bus_make(struct kdbus_cmd *cmd, KdbusBus **ret_bus);
void kdbus_us_bus_close(KdbusBus *bus);
int kdbus_us_bus_creator_info(KdbusConn *conn, struct kdbus_cmd_info *cmd);
uint64_t kdbus_us_dispatch_timeouts(KdbusBus *bus, uint64_t now_ns);
