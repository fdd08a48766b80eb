/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * match.h - match databases and bloom filters (kernel: kdbus_match_db)
 *
 * DOC: matches
 *
 * A match is one MATCH_ADD: a cookie and a list of rules that must all
 * pass.  A message passes a connection's database if any match passes.
 * Rules on user messages are BLOOM_MASK, ID, NAME, DST_ID and the
 * extension MATCH_KEYS (bus.h); rules on
 * kernel notifications are NAME_ADD, NAME_REMOVE, NAME_CHANGE, ID_ADD and
 * ID_REMOVE.  A match with no rule passes everything.  Each match is kept
 * on the "user" and/or the "kernel" list of its database according to
 * what it can pass.  Every user match is also filed in the bus's
 * broadcast index (by one bit of its bloom mask, by its first MATCH_KEYS
 * key, or on the unindexed list), and the bus keeps a list of the
 * connections whose databases can pass a notification, so that a
 * broadcast only looks at connections that asked for something.
 * Matches are found by cookie in O(1).  The bloom test is the kernel code's: for every 64-bit
 * word, (filter & mask) == mask, with the mask generation
 * min(filter.generation, generations - 1).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/hash.h"
#include "kdbus/kdbus.h"
#include "kshared/bloom.h"
#include "util/list.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;

typedef struct KdbusMatchRule {
	uint64_t type;
	uint64_t old_id;		/* ID (src), DST_ID, *_REMOVE, NAME_* */
	uint64_t new_id;		/* ID_ADD, NAME_* */
	const char *name;		/* NAME, NAME_* (optional) */
	const uint64_t *mask;		/* BLOOM_MASK; MATCH_KEYS: the keys */
	uint64_t generations;		/* BLOOM_MASK; MATCH_KEYS: how many */
} KdbusMatchRule;

/* what a user message shows the rules */
typedef struct KdbusMatchMsg {
	KdbusConn *src;
	uint64_t dst_id;
	const struct kdbus_bloom_filter *bloom;	/* or NULL */
	const uint64_t *keys;			/* KDBUS_ITEM_MATCH_KEYS, or NULL */
	size_t n_keys;
} KdbusMatchMsg;

/* where a user match is in the bus's broadcast index (match.c); kept
 * after the match's own bytes, and only for user matches, since every
 * connection has kernel matches for its own names */
typedef struct KdbusMatchIndex {
	List link;			/* KdbusBus.umatch_index[key_bit] or .umatch_unindexed */
	KdbusHashNode key_node;		/* KdbusBus.umatch_keyed, by @key */
	struct KdbusMatch *match;
	KdbusConn *conn;
	uint64_t key;			/* the first MATCH_KEYS key, if @keyed */
	bool keyed;			/* filed by @key, not by a bloom bit */
	int32_t key_bit;		/* -1: not indexed by a bit */
	uint32_t quick_word;		/* the mask's word with the most bits... */
	uint64_t quick_bits;		/* ...and its bits: a cheap first test (0: none) */
	/* its answer for the broadcast key of round memo_stamp
	 * (KdbusBus.bcast_memo_*); only for matches whose answer depends on
	 * nothing else (memo_ok: no NAME rule) */
	uint64_t memo_stamp;
	bool memo_ok, memo_match;
} KdbusMatchIndex;

typedef struct KdbusMatch {
	KdbusHashNode node;
	List user_link;
	List kernel_link;
	struct KdbusMatchIndex *ix;	/* user matches only (match.c) */
	uint64_t cookie;
	size_t n_rules;
	KdbusMatchRule rules[];
} KdbusMatch;

typedef struct KdbusMatchDb {
	KdbusHash by_cookie;
	List user;
	List kernel;
	uint64_t n_matches;
	uint64_t n_user;
	uint64_t n_kernel;
} KdbusMatchDb;

/** kdbus_match_db_init() - empty database. */
void kdbus_match_db_init(KdbusMatchDb *db);

/** kdbus_match_db_flush() - remove every match of @conn. */
void kdbus_match_db_flush(KdbusBus *bus, KdbusConn *conn);

/**
 * kdbus_match_add() - MATCH_ADD on @conn's database
 * @bus:	the bus (locked)
 * @conn:	the owner
 * @cmd:	the validated command
 *
 * Return: 0, -EINVAL, -EDOM (bloom mask size), -EMFILE (too many), -ENOMEM.
 */
int kdbus_match_add(KdbusBus *bus, KdbusConn *conn, struct kdbus_cmd_match *cmd);

/**
 * kdbus_match_remove() - MATCH_REMOVE of every match with @cookie
 *
 * Return: 0 or -EBADSLT.
 */
int kdbus_match_remove(KdbusBus *bus, KdbusConn *conn, uint64_t cookie);

/**
 * kdbus_match_one_user() - whether a user message passes match @m (every
 * rule of it); for kdbus_bus_broadcast() over the bus's index.
 */
bool kdbus_match_one_user(KdbusBus *bus, const KdbusMatch *m, const KdbusMatchMsg *msg);

/**
 * kdbus_match_db_match_user() - whether a user message passes @conn's db
 * @bus:	the bus
 * @conn:	the receiver
 * @msg:	the message
 *
 * Return: true if some match passes.
 */
bool kdbus_match_db_match_user(KdbusBus *bus, KdbusConn *conn, const KdbusMatchMsg *msg);

/**
 * kdbus_match_db_match_kernel() - whether a notification passes @conn's db
 * @conn:	the receiver
 * @n:		the notification item
 *
 * Return: true if some match passes.
 */
bool kdbus_match_db_match_kernel(KdbusConn *conn, const struct kdbus_item *n);

