/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * policy.h - the bus policy database (kernel: kdbus_policy_db)
 *
 * DOC: policy
 *
 * Entries come from activators and policy holders (HELLO and UPDATE
 * items: KDBUS_ITEM_NAME followed by KDBUS_ITEM_POLICY_ACCESS) and belong
 * to that connection.  An entry is a name, or a wildcard "a.b.*", with a
 * list of USER/GROUP/WORLD grants of SEE < TALK < OWN.  A lookup takes the
 * exact entry first; without one it takes the wildcard entry of the
 * nearest enclosing prefix.  Our extension: "a.b.*" matches ANY depth below
 * a.b (a.b.c, a.b.c.d), not just one level as in the kernel, so that
 * dbus-daemon's own_prefix maps onto it; it does not match "a.b" itself.
 * Both exact and wildcard lookups are hash lookups, one per element of the
 * name.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/hash.h"
#include "kdbus/kdbus.h"
#include "util/list.h"

typedef struct KdbusMeta KdbusMeta;

typedef struct KdbusPolicyEntry {
	KdbusHashNode node;
	List owner_link;
	const void *owner;
	bool wildcard;
	size_t n_access;
	struct kdbus_policy_access *access;
	size_t len;
	char name[];		/* without the ".*" of a wildcard */
} KdbusPolicyEntry;

typedef struct KdbusPolicyDb {
	KdbusHash entries;
} KdbusPolicyDb;

/** kdbus_policy_db_init() - empty database. */
void kdbus_policy_db_init(KdbusPolicyDb *db);

/** kdbus_policy_db_deinit() - the database must be empty. */
void kdbus_policy_db_deinit(KdbusPolicyDb *db);

/**
 * kdbus_policy_set() - replace the entries of @owner atomically
 * @db:		the database
 * @items:	item list; NAME and POLICY_ACCESS items are used, others skipped
 * @items_size:	its size
 * @max_policies: how many NAME entries are allowed (0: no limit)
 * @allow_wildcards: accept "a.b.*"
 * @owner:	the owner's identity (pointer compared only)
 * @owner_list:	the owner's list of entries (KdbusPolicyEntry.owner_link)
 *
 * Return: 0, -EINVAL (bad name, POLICY_ACCESS before NAME, bad access),
 * -EEXIST (entry owned by someone else, or given twice), -ENOMEM.  On
 * failure the old entries stay.
 */
int kdbus_policy_set(KdbusPolicyDb *db, const struct kdbus_item *items, size_t items_size,
		     size_t max_policies, bool allow_wildcards, const void *owner,
		     List *owner_list);

/** kdbus_policy_remove_owner() - drop every entry on @owner_list. */
void kdbus_policy_remove_owner(KdbusPolicyDb *db, List *owner_list);

/**
 * kdbus_policy_query() - highest access the db grants @who for @name
 * @db:		the database
 * @who:	identity (euid, egid, auxiliary groups)
 * @name:	the name
 *
 * Return: KDBUS_POLICY_SEE/TALK/OWN, -EPERM if an entry covers @name but
 * grants @who nothing, -ENOENT if no entry covers @name (the caller then
 * applies the bus's policy fallback, see kdbus_bus_set_policy_fallback()).
 */
int kdbus_policy_query(KdbusPolicyDb *db, const KdbusMeta *who, const char *name);

/** kdbus_policy_db_empty() - whether no entry exists (fast path). */
static inline bool kdbus_policy_db_empty(const KdbusPolicyDb *db) {
	return db->entries.n_entries == 0;
}
