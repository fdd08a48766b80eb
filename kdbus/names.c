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
#include "kshared/names.h"
#include "util/macro.h"

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

/* the state of @e as @o sees it (@o NULL: a connection not on it) */
static struct kdbus_name_state kdbus_name_state(KdbusNameEntry *e, KdbusNameOwner *o) {
	KdbusNameOwner *primary = kdbus_name_entry_primary(e);
	struct kdbus_name_state s = {
		.role = KDBUS_NAME_ROLE_NONE,
		.has_primary = primary,
		.has_waiter = primary && primary->name_link.next != &e->queue,
		.has_activator = e->activator,
		.primary_flags = primary ? primary->flags : 0,
	};

	if (o)
		s.role = kdbus_name_role_of(o == e->activator, o == primary, list_is_linked(&o->name_link));
	return s;
}

/* carry out the decision of kshared/names.h for @o: its place, the
 * previous holder's, the messages of a handover, the notification */
static void kdbus_name_apply(KdbusBus *bus, KdbusNameOwner *o, const struct kdbus_name_decision *d) {
	KdbusNameEntry *e = o->entry;
	KdbusNameOwner *primary = kdbus_name_entry_primary(e);
	KdbusNameOwner *activator = e->activator;

	if (d->action == KDBUS_NAME_DO_REFUSE)
		return;
	o->flags = d->flags;

	switch (d->action) {
	case KDBUS_NAME_DO_ACTIVATE:
	case KDBUS_NAME_DO_ACTIVATE_BEHIND:
		e->activator = o;
		o->conn->activator_of = o;
		if (d->action == KDBUS_NAME_DO_ACTIVATE)
			kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_ADD, 0, o->conn->id,
						 0, o->flags, e->name);
		break;
	case KDBUS_NAME_DO_TAKE:
		list_link_front(&e->queue, &o->name_link);
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_ADD, 0, o->conn->id,
					 0, o->flags, e->name);
		break;
	case KDBUS_NAME_DO_HANDOVER:
		/* the handover: queue and trackers move in one step */
		list_link_front(&e->queue, &o->name_link);
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
		activator->flags = d->prev_flags;
		break;
	case KDBUS_NAME_DO_REPLACE:
		list_unlink(&o->name_link);
		list_link_front(&e->queue, &o->name_link);
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE,
					 primary->conn->id, o->conn->id,
					 primary->flags, o->flags, e->name);
		if (d->prev_leaves)
			kdbus_name_owner_free(primary);
		else
			primary->flags = d->prev_flags;
		break;
	case KDBUS_NAME_DO_QUEUE:
		list_link_tail(&e->queue, &o->name_link);
		break;
	case KDBUS_NAME_DO_QUEUE_NEXT:
		list_unlink(&o->name_link);
		list_link_before(primary->name_link.next, &o->name_link);
		break;
	case KDBUS_NAME_DO_LEAVE:
		list_unlink(&o->name_link);
		break;
	case KDBUS_NAME_DO_UPDATE:
	case KDBUS_NAME_DO_STAY:
	case KDBUS_NAME_DO_REFUSE:
		break;
	}
}

int kdbus_name_acquire(KdbusBus *bus, KdbusConn *conn, const char *name,
		       uint64_t flags, uint64_t *ret_flags) {
	struct kdbus_name_decision d;
	struct kdbus_name_state s;
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
	s = kdbus_name_state(e, o);
	d = kdbus_name_decide_acquire(&s, flags);
	kdbus_name_apply(bus, o, &d);
	*ret_flags = d.return_flags;

	if (!kdbus_name_owner_is_used(o))
		kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(&bus->names, e);
	return d.error;
}

/* @o leaves its name; @action: kdbus_name_decide_release()'s, not an error */
static void kdbus_name_release_owner(KdbusBus *bus, KdbusNameOwner *o, int action) {
	KdbusNameEntry *e = o->entry;
	KdbusNameOwner *next = NULL;

	__atomic_add_fetch(&bus->names.generation, 1, __ATOMIC_RELEASE);
	if (action == KDBUS_NAME_RELEASE_TO_WAITER)
		next = list_entry(o->name_link.next, KdbusNameOwner, name_link);
	else if (action == KDBUS_NAME_RELEASE_TO_ACTIVATOR)
		next = e->activator;

	list_unlink(&o->name_link);
	if (o == e->activator)
		e->activator = NULL;

	if (next) {
		next->flags = kdbus_name_flags_primary(next->flags);
		/* give-back: what was addressed to the name returns */
		if (action == KDBUS_NAME_RELEASE_TO_ACTIVATOR)
			kdbus_conn_move_messages(next->conn, o->conn, e->name_id);
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE,
					 o->conn->id, next->conn->id,
					 o->flags, next->flags, e->name);
	} else if (action == KDBUS_NAME_RELEASE_REMOVE) {
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_REMOVE,
					 o->conn->id, 0, o->flags, 0, e->name);
	}

	kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(&bus->names, e);
}

int kdbus_name_release(KdbusBus *bus, KdbusConn *conn, const char *name) {
	struct kdbus_name_state s;
	KdbusNameEntry *e;
	KdbusNameOwner *o;
	int r;

	e = kdbus_name_lookup(&bus->names, name);
	if (!e)
		return -ESRCH;
	o = kdbus_name_owner_find(e, conn);
	s = kdbus_name_state(e, o);
	r = kdbus_name_decide_release(&s);
	if (r < 0)
		return r;	/* -EADDRINUSE: not ours */
	kdbus_name_release_owner(bus, o, r);
	return 0;
}

/* the names a connection holds or waits for, the one it asked for last
 * first (dbus-daemon's order when a connection goes away), or the first
 * first (@oldest_first: its order when one becomes a monitor) */
void kdbus_name_release_all(KdbusBus *bus, KdbusConn *conn, bool oldest_first) {
	while (!list_is_empty(&conn->names)) {
		KdbusNameOwner *o = oldest_first ? list_first_entry(&conn->names, KdbusNameOwner, conn_link)
						 : list_last_entry(&conn->names, KdbusNameOwner, conn_link);
		struct kdbus_name_state s = kdbus_name_state(o->entry, o);

		kdbus_name_release_owner(bus, o, kdbus_name_decide_release(&s));
	}
}

bool kdbus_conn_has_name(KdbusBus *bus, const KdbusConn *conn, const char *name) {
	KdbusNameEntry *e = kdbus_name_lookup(&bus->names, name);
	KdbusNameOwner *p;

	if (!e)
		return false;
	p = kdbus_name_entry_primary(e);
	return p && p->conn == conn;
}
