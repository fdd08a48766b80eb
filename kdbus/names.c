/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * names.c - the name registry (see names.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/names.h"
#include "kdbus/notify.h"
#include "util/macro.h"

#define KDBUS_NAME_SAVED_MASK (KDBUS_NAME_ALLOW_REPLACEMENT | KDBUS_NAME_QUEUE)

void kdbus_name_registry_init(KdbusNameRegistry *reg) {
	reg->generation = 1;
	kdbus_hash_init(&reg->names);
	reg->name_seq = 0;
}

void kdbus_name_registry_deinit(KdbusNameRegistry *reg) {
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&reg->names)))
		free(container_of(n, KdbusNameEntry, node));
	kdbus_hash_deinit(&reg->names);
}

KdbusNameEntry *kdbus_name_lookup(KdbusNameRegistry *reg, const char *name) {
	size_t len = strlen(name);
	uint64_t h = kdbus_hash_str(name, len);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &reg->names, h) {
		KdbusNameEntry *e = container_of(n, KdbusNameEntry, node);

		if (e->len == len && memcmp(e->name, name, len) == 0)
			return e;
	}
	return NULL;
}

KdbusNameOwner *kdbus_name_entry_primary(KdbusNameEntry *e) {
	return list_first_entry(&e->queue, KdbusNameOwner, name_link);
}

KdbusConn *kdbus_name_entry_holder(KdbusNameEntry *e) {
	KdbusNameOwner *o = kdbus_name_entry_primary(e);

	return o ? o->conn : e->activator->conn;
}

static KdbusNameEntry *kdbus_name_entry_new(KdbusNameRegistry *reg, const char *name) {
	size_t len = strlen(name);
	KdbusNameEntry *e;

	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->name, name, len + 1);
	e->len = len;
	list_init(&e->queue);
	e->name_id = ++reg->name_seq;
	if (kdbus_hash_add(&reg->names, &e->node, kdbus_hash_str(name, len)) < 0) {
		free(e);
		return NULL;
	}
	return e;
}

static void kdbus_name_entry_maybe_free(KdbusNameRegistry *reg, KdbusNameEntry *e) {
	if (e && !e->activator && list_is_empty(&e->queue)) {
		kdbus_hash_remove(&reg->names, &e->node);
		free(e);
	}
}

static KdbusNameOwner *kdbus_name_owner_find(KdbusNameEntry *e, KdbusConn *conn) {
	KdbusNameOwner *o;

	if (e->activator && e->activator->conn == conn)
		return e->activator;
	list_for_each_entry(o, &e->queue, name_link)
		if (o->conn == conn)
			return o;
	return NULL;
}

static bool kdbus_name_owner_is_used(KdbusNameOwner *o) {
	return list_is_linked(&o->name_link) || o->entry->activator == o;
}

static int kdbus_name_owner_new(KdbusBus *bus, KdbusConn *conn, KdbusNameEntry *e,
				KdbusNameOwner **ret) {
	KdbusNameOwner *o;

	if (conn->n_names >= bus->limits.max_names_per_conn)
		return -E2BIG;
	/* the user's budget for all its connections (user.h) */
	if (kdbus_user_charge_set(bus, conn->user, &conn->self_charge, KDBUS_USER_NAMES, conn->n_names + 1) < 0)
		return -E2BIG;
	o = calloc(1, sizeof(*o));
	if (!o) {
		(void)kdbus_user_charge_set(bus, conn->user, &conn->self_charge, KDBUS_USER_NAMES, conn->n_names);
		return -ENOMEM;
	}
	o->conn = conn;
	o->entry = e;
	list_init(&o->name_link);
	list_link_tail(&conn->names, &o->conn_link);
	conn->n_names++;
	*ret = o;
	return 0;
}

static void kdbus_name_owner_free(KdbusNameOwner *o) {
	if (!o)
		return;
	list_unlink(&o->name_link);
	list_unlink(&o->conn_link);
	o->conn->n_names--;
	(void)kdbus_user_charge_set(o->conn->bus, o->conn->user, &o->conn->self_charge, KDBUS_USER_NAMES,
				    o->conn->n_names);
	if (o->conn->activator_of == o)
		o->conn->activator_of = NULL;
	free(o);
}

static int kdbus_name_become_activator(KdbusBus *bus, KdbusNameOwner *o, uint64_t *ret_flags) {
	KdbusNameEntry *e = o->entry;

	if (kdbus_name_owner_is_used(o))
		return -EALREADY;
	if (e->activator)
		return -EEXIST;

	e->activator = o;
	o->conn->activator_of = o;
	o->flags = KDBUS_NAME_ACTIVATOR;
	if (kdbus_name_entry_primary(e)) {
		o->flags |= KDBUS_NAME_IN_QUEUE;
	} else {
		o->flags |= KDBUS_NAME_PRIMARY;
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_ADD, 0, o->conn->id,
					 0, o->flags, e->name);
	}
	*ret_flags = o->flags | KDBUS_NAME_ACQUIRED;
	return 0;
}

static int kdbus_name_update(KdbusBus *bus, KdbusNameOwner *o, uint64_t flags, uint64_t *ret_flags) {
	KdbusNameEntry *e = o->entry;
	KdbusNameOwner *primary = kdbus_name_entry_primary(e);
	KdbusNameOwner *activator = e->activator;
	uint64_t nflags = 0;
	int r = 0;

	if (o == activator)
		return -EUCLEAN;

	o->flags = flags & KDBUS_NAME_SAVED_MASK;

	if (!primary) {
		/* no owner, maybe an activator: take the name */
		list_link_front(&e->queue, &o->name_link);
		o->flags |= KDBUS_NAME_PRIMARY;
		nflags |= KDBUS_NAME_ACQUIRED;

		if (activator) {
			/* the handover: queue and trackers move in one step */
			if (o->conn->defer_handover && !o->conn->handover_from) {
				/* moved by kdbus_conn_finish_handover() */
				o->conn->handover_from = kdbus_conn_ref(activator->conn);
				o->conn->handover_name_id = e->name_id;
			} else {
				kdbus_conn_move_messages(o->conn, activator->conn, e->name_id);
			}
			kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE,
						 activator->conn->id, o->conn->id,
						 activator->flags, o->flags, e->name);
			activator->flags &= ~(uint64_t)KDBUS_NAME_PRIMARY;
			activator->flags |= KDBUS_NAME_IN_QUEUE;
		} else {
			kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_ADD, 0, o->conn->id,
						 0, o->flags, e->name);
		}
	} else if (o == primary) {
		/* already the owner: flags are updated, like dbus-daemon;
		 * success without KDBUS_NAME_ACQUIRED (the final ABI) */
		o->flags |= KDBUS_NAME_PRIMARY;
	} else if ((primary->flags & KDBUS_NAME_ALLOW_REPLACEMENT) &&
		   (flags & KDBUS_NAME_REPLACE_EXISTING)) {
		list_unlink(&o->name_link);
		list_link_front(&e->queue, &o->name_link);
		o->flags |= KDBUS_NAME_PRIMARY;
		nflags |= KDBUS_NAME_ACQUIRED;

		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE,
					 primary->conn->id, o->conn->id,
					 primary->flags, o->flags, e->name);

		if (primary->flags & KDBUS_NAME_QUEUE) {
			primary->flags &= ~(uint64_t)KDBUS_NAME_PRIMARY;
			primary->flags |= KDBUS_NAME_IN_QUEUE;
		} else {
			kdbus_name_owner_free(primary);
		}
	} else if (flags & KDBUS_NAME_QUEUE) {
		o->flags |= KDBUS_NAME_IN_QUEUE;
		if (!list_is_linked(&o->name_link))
			nflags |= KDBUS_NAME_ACQUIRED;
		if (flags & KDBUS_NAME_REPLACE_EXISTING) {
			/* as dbus-daemon: a waiter that wanted to replace the
			 * owner is next in line */
			list_unlink(&o->name_link);
			list_link_before(primary->name_link.next, &o->name_link);
		} else if (!list_is_linked(&o->name_link)) {
			list_link_tail(&e->queue, &o->name_link);
		}
	} else {
		/* taken, no queueing: a waiter that no longer queues leaves */
		list_unlink(&o->name_link);
		r = -EEXIST;
	}

	*ret_flags = o->flags | nflags;
	return r;
}

int kdbus_name_acquire(KdbusBus *bus, KdbusConn *conn, const char *name,
		       uint64_t flags, uint64_t *ret_flags) {
	KdbusNameEntry *e;
	KdbusNameOwner *o = NULL;
	int r;

	*ret_flags = 0;
	if (!kdbus_conn_policy_own(conn, name))
		return -EPERM;

	e = kdbus_name_lookup(&bus->names, name);
	if (e)
		o = kdbus_name_owner_find(e, conn);
	else if (!(e = kdbus_name_entry_new(&bus->names, name)))
		return -ENOMEM;

	if (!o) {
		r = kdbus_name_owner_new(bus, conn, e, &o);
		if (r < 0) {
			kdbus_name_entry_maybe_free(&bus->names, e);
			return r;
		}
	}

	__atomic_add_fetch(&bus->names.generation, 1, __ATOMIC_RELEASE);
	if (flags & KDBUS_NAME_ACTIVATOR)
		r = kdbus_name_become_activator(bus, o, ret_flags);
	else
		r = kdbus_name_update(bus, o, flags, ret_flags);

	if (!kdbus_name_owner_is_used(o))
		kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(&bus->names, e);
	return r;
}

static void kdbus_name_release_owner(KdbusBus *bus, KdbusNameOwner *o) {
	KdbusNameEntry *e = o->entry;
	KdbusNameOwner *primary = kdbus_name_entry_primary(e), *next;

	__atomic_add_fetch(&bus->names.generation, 1, __ATOMIC_RELEASE);
	list_unlink(&o->name_link);
	if (o == e->activator)
		e->activator = NULL;

	if (!primary || o == primary) {
		next = kdbus_name_entry_primary(e);
		if (!next)
			next = e->activator;

		if (next) {
			next->flags &= ~(uint64_t)KDBUS_NAME_IN_QUEUE;
			next->flags |= KDBUS_NAME_PRIMARY;
			/* give-back: what was addressed to the name returns */
			if (next == e->activator)
				kdbus_conn_move_messages(next->conn, o->conn, e->name_id);
			kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE,
						 o->conn->id, next->conn->id,
						 o->flags, next->flags, e->name);
		} else {
			kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_REMOVE,
						 o->conn->id, 0, o->flags, 0, e->name);
		}
	}

	kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(&bus->names, e);
}

int kdbus_name_release(KdbusBus *bus, KdbusConn *conn, const char *name) {
	KdbusNameEntry *e;
	KdbusNameOwner *o;

	e = kdbus_name_lookup(&bus->names, name);
	if (!e)
		return -ESRCH;
	o = kdbus_name_owner_find(e, conn);
	if (!o)
		return -EADDRINUSE;
	kdbus_name_release_owner(bus, o);
	return 0;
}

/* the names a connection holds or waits for, the one it asked for last
 * first (dbus-daemon's order when a connection goes away), or the first
 * first (@oldest_first: its order when one becomes a monitor) */
void kdbus_name_release_all(KdbusBus *bus, KdbusConn *conn, bool oldest_first) {
	while (!list_is_empty(&conn->names))
		kdbus_name_release_owner(bus, oldest_first ? list_first_entry(&conn->names, KdbusNameOwner, conn_link)
							   : list_last_entry(&conn->names, KdbusNameOwner, conn_link));
}

bool kdbus_conn_has_name(KdbusBus *bus, const KdbusConn *conn, const char *name) {
	KdbusNameEntry *e = kdbus_name_lookup(&bus->names, name);
	KdbusNameOwner *p;

	if (!e)
		return false;
	p = kdbus_name_entry_primary(e);
	return p && p->conn == conn;
}
