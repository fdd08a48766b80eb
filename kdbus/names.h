/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * names.h - the name registry (kernel: kdbus_name_registry, final ABI)
 *
 * DOC: names
 *
 * A KdbusNameEntry exists while a name has an owner, waiters or an
 * activator.  Its queue of KdbusNameOwner objects starts with the primary
 * owner; the activator (if any) is kept apart and owns the name whenever
 * the queue is empty.  Each registration has a sequence number (name_id)
 * that queued messages addressed to the name carry, so that a release
 * moves exactly those back to the activator.  Entries are found in O(1)
 * by name; a connection's owner objects are on its own list.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/hash.h"
#include "util/list.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;
typedef struct KdbusNameEntry KdbusNameEntry;

typedef struct KdbusNameOwner {
	List conn_link;
	List name_link;
	KdbusConn *conn;
	KdbusNameEntry *entry;
	uint64_t flags;
} KdbusNameOwner;

struct KdbusNameEntry {
	KdbusHashNode node;
	List queue;
	KdbusNameOwner *activator;
	uint64_t name_id;
	size_t len;
	char name[];
};

typedef struct KdbusNameRegistry {
	KdbusHash names;
	uint64_t name_seq;
	uint64_t generation;	/* bumped whenever an owner or a queue may have changed */
} KdbusNameRegistry;

/** kdbus_name_registry_init() - empty registry. */
void kdbus_name_registry_init(KdbusNameRegistry *reg);

/** kdbus_name_registry_deinit() - the registry must be empty. */
void kdbus_name_registry_deinit(KdbusNameRegistry *reg);

/** kdbus_name_lookup() - the entry of @name, or NULL. */
KdbusNameEntry *kdbus_name_lookup(KdbusNameRegistry *reg, const char *name);

/** kdbus_name_entry_primary() - the primary owner (not the activator), or NULL. */
KdbusNameOwner *kdbus_name_entry_primary(KdbusNameEntry *e);

/** kdbus_name_entry_holder() - who a message to the name goes to: the
 * primary owner's connection, else the activator's (an entry always has
 * one of them) */
KdbusConn *kdbus_name_entry_holder(KdbusNameEntry *e);

/**
 * kdbus_name_acquire() - NAME_ACQUIRE semantics of the final kernel
 * @bus:	the bus (locked)
 * @conn:	the caller
 * @name:	a valid name
 * @flags:	KDBUS_NAME_* (ACTIVATOR for the HELLO of an activator)
 * @ret_flags:	return_flags (PRIMARY, ACQUIRED, IN_QUEUE, ...)
 *
 * What happens is kdbus_name_decide_acquire()'s decision (kshared/names.h);
 * the primary owner asking again has its flags updated and succeeds
 * without KDBUS_NAME_ACQUIRED.
 *
 * Return: 0, -EEXIST, -EALREADY and -EEXIST (an activator's HELLO),
 * -EUCLEAN (an activator for its own name), -EPERM, -E2BIG, -ENOMEM.
 */
int kdbus_name_acquire(KdbusBus *bus, KdbusConn *conn, const char *name,
		       uint64_t flags, uint64_t *ret_flags);

/**
 * kdbus_name_release() - NAME_RELEASE (kdbus_name_decide_release() decides)
 *
 * Return: 0, -ESRCH (no such name), -EADDRINUSE (not ours).
 */
int kdbus_name_release(KdbusBus *bus, KdbusConn *conn, const char *name);

/** kdbus_name_release_all() - release every name of a dying connection. */
void kdbus_name_release_all(KdbusBus *bus, KdbusConn *conn, bool oldest_first);

/** kdbus_conn_has_name() - whether @conn is the primary owner of @name. */
bool kdbus_conn_has_name(KdbusBus *bus, const KdbusConn *conn, const char *name);
