/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_NAMES_H
#define KSHARED_NAMES_H

/*
 * names.h - who holds a well-known name after NAME_ACQUIRE or NAME_RELEASE
 *
 * DOC: name ownership
 *
 * A name has at most one primary owner, a queue of waiters behind it
 * (KDBUS_NAME_IN_QUEUE) and at most one activator, kept apart from the
 * queue: the activator holds the name whenever nobody else does.  The
 * functions here take the state of one name, as seen by the connection
 * that asks, and the request's flags, and say what happens; the caller
 * (kdbus/names.c, kmod/names.c) holds its lock, allocates the owner
 * object, moves the queue, moves messages and sends the notifications.
 *
 * NAME_ACQUIRE, without KDBUS_NAME_ACTIVATOR.  "saved" is the request's
 * ALLOW_REPLACEMENT and QUEUE, which the requester keeps; "owner" is the
 * primary owner, "allows" its ALLOW_REPLACEMENT; REPLACE stands for
 * REPLACE_EXISTING.  The first row that fits decides:
 *
 *  requester  name              request  action      flags afterwards  ACQUIRED
 *  activator  -                 -        -EUCLEAN    -                 -
 *  -          free              -        TAKE        saved|PRIMARY     yes
 *  -          activator only    -        HANDOVER    saved|PRIMARY     yes
 *  owner      -                 -        UPDATE      saved|PRIMARY     no
 *  -, waiter  owner allows      REPLACE  REPLACE     saved|PRIMARY     yes
 *  -          owner             QUEUE    QUEUE       saved|IN_QUEUE    yes
 *             (with REPLACE)             QUEUE_NEXT  saved|IN_QUEUE    yes
 *  waiter     owner             QUEUE    STAY        saved|IN_QUEUE    no
 *             (with REPLACE)             QUEUE_NEXT  saved|IN_QUEUE    no
 *  -          owner             -        -EEXIST     (not on it)       -
 *  waiter     owner             -        LEAVE       (not on it)       -
 *
 * TAKE: NAME_ADD.  HANDOVER: the activator's messages (and their reply
 * trackers) move to the requester, NAME_CHANGE from the activator, which
 * waits (IN_QUEUE).  REPLACE: NAME_CHANGE from the owner, which waits
 * right behind the requester when it had QUEUE and loses the name
 * otherwise.  QUEUE appends, QUEUE_NEXT puts the requester right behind
 * the owner (as dbus-daemon: it wanted the name), STAY keeps its place;
 * queueing, UPDATE and LEAVE (the waiter leaves the queue, -EEXIST) are
 * silent.  Refused, return_flags are the saved flags (0 for -EUCLEAN).
 *
 * An activator's HELLO (KDBUS_NAME_ACTIVATOR):
 *
 *  requester  name              action           flags afterwards
 *  any role   -                 -EALREADY        -
 *  -          has an activator  -EEXIST          -
 *  -          free              ACTIVATE         ACTIVATOR|PRIMARY (NAME_ADD)
 *  -          owner             ACTIVATE_BEHIND  ACTIVATOR|IN_QUEUE (silent)
 *
 * NAME_RELEASE (and a connection's disconnect, name by name):
 *
 *  requester  name                 action
 *  -          -                    -EADDRINUSE
 *  waiter     -                    SILENT: it leaves the queue
 *  activator  owner                SILENT: it leaves
 *  activator  no owner             REMOVE: NAME_REMOVE
 *  owner      a waiter             TO_WAITER: the first waiter owns it, NAME_CHANGE
 *  owner      no waiter, activator TO_ACTIVATOR: what waits in the releaser's queue
 *                                  addressed to the name returns, NAME_CHANGE
 *  owner      nobody else          REMOVE: NAME_REMOVE
 */

#include "kdbus/kdbus.h"
#include "kshared/platform.h"

/* the flags NAME_ACQUIRE accepts from a connection */
#define KDBUS_NAME_ACQUIRE_FLAGS \
	(KDBUS_NAME_REPLACE_EXISTING | KDBUS_NAME_ALLOW_REPLACEMENT | KDBUS_NAME_QUEUE)

/* the request flags a holder keeps (and reports in OWNED_NAME items) */
#define KDBUS_NAME_SAVED_FLAGS (KDBUS_NAME_ALLOW_REPLACEMENT | KDBUS_NAME_QUEUE)

/* the requester's place on the name before the call */
enum kdbus_name_role {
	KDBUS_NAME_ROLE_NONE,		/* it neither holds nor waits for the name */
	KDBUS_NAME_ROLE_PRIMARY,	/* the primary owner */
	KDBUS_NAME_ROLE_WAITER,		/* in the queue behind the primary owner */
	KDBUS_NAME_ROLE_ACTIVATOR,	/* the name's activator */
};

/**
 * kdbus_name_role_of() - the requester's place on a name
 * @is_activator:	it is the name's activator
 * @is_primary:		it is the first in the name's queue
 * @is_queued:		it is in the name's queue
 *
 * The activator is kept apart from the queue (it holds the name while the
 * queue is empty): it is the activator before anything else.
 *
 * Return: the role; KDBUS_NAME_ROLE_NONE when it is not on the name.
 */
static inline enum kdbus_name_role kdbus_name_role_of(bool is_activator, bool is_primary, bool is_queued)
{
	if (is_activator)
		return KDBUS_NAME_ROLE_ACTIVATOR;
	if (is_primary)
		return KDBUS_NAME_ROLE_PRIMARY;
	if (is_queued)
		return KDBUS_NAME_ROLE_WAITER;
	return KDBUS_NAME_ROLE_NONE;
}

/**
 * struct kdbus_name_state - one name, as the requester sees it
 * @role:		the requester's place on the name
 * @has_primary:	a connection other than the activator owns the name
 * @has_waiter:		someone waits behind the primary owner
 * @has_activator:	the name has an activator
 * @primary_flags:	the primary owner's flags (with @has_primary)
 */
struct kdbus_name_state {
	enum kdbus_name_role role;
	bool has_primary;
	bool has_waiter;
	bool has_activator;
	uint64_t primary_flags;
};

/* what the caller does with the requester's owner object */
enum kdbus_name_action {
	KDBUS_NAME_DO_REFUSE,		/* nothing changes; decision.error says why */
	KDBUS_NAME_DO_TAKE,		/* first in the queue of a free name; NAME_ADD */
	KDBUS_NAME_DO_HANDOVER,		/* first in the queue, the activator's messages
					 * move to it; NAME_CHANGE from the activator */
	KDBUS_NAME_DO_UPDATE,		/* the primary owner stays; new flags, silent */
	KDBUS_NAME_DO_REPLACE,		/* first in the queue before the owner;
					 * NAME_CHANGE; the owner waits or leaves */
	KDBUS_NAME_DO_QUEUE,		/* joins the queue at its tail, silent */
	KDBUS_NAME_DO_STAY,		/* keeps its place in the queue; new flags */
	KDBUS_NAME_DO_QUEUE_NEXT,	/* waits right behind the owner, silent */
	KDBUS_NAME_DO_LEAVE,		/* leaves the queue; decision.error is -EEXIST */
	KDBUS_NAME_DO_ACTIVATE,		/* becomes the activator and holds the name; NAME_ADD */
	KDBUS_NAME_DO_ACTIVATE_BEHIND,	/* becomes the activator behind an owner, silent */
};

/**
 * struct kdbus_name_decision - what NAME_ACQUIRE does
 * @error:		0, or the command's error: -EEXIST, -EALREADY, -EUCLEAN
 * @action:		what happens to the requester
 * @prev_leaves:	REPLACE: the replaced owner had no QUEUE and loses the name
 * @flags:		the requester's flags afterwards (not with REFUSE)
 * @return_flags:	the command's return_flags: @flags, with
 *			KDBUS_NAME_ACQUIRED when this call put the requester
 *			on the name (0 when refused for its role)
 * @prev_flags:		HANDOVER, REPLACE without @prev_leaves: the flags of
 *			the previous holder (activator, owner) afterwards
 */
struct kdbus_name_decision {
	int error;
	enum kdbus_name_action action;
	bool prev_leaves;
	uint64_t flags;
	uint64_t return_flags;
	uint64_t prev_flags;
};

/**
 * kdbus_name_flags_waiting() - a holder's flags once it waits again
 * @flags:	its flags as the primary owner or the holding activator
 *
 * Return: @flags without KDBUS_NAME_PRIMARY, with KDBUS_NAME_IN_QUEUE.
 */
static inline uint64_t kdbus_name_flags_waiting(uint64_t flags)
{
	return (flags & ~(uint64_t)KDBUS_NAME_PRIMARY) | KDBUS_NAME_IN_QUEUE;
}

/**
 * kdbus_name_flags_primary() - a waiter's flags once it holds the name
 * @flags:	its flags as a waiter (or as an activator behind an owner)
 *
 * Return: @flags without KDBUS_NAME_IN_QUEUE, with KDBUS_NAME_PRIMARY.
 */
static inline uint64_t kdbus_name_flags_primary(uint64_t flags)
{
	return (flags & ~(uint64_t)KDBUS_NAME_IN_QUEUE) | KDBUS_NAME_PRIMARY;
}

/**
 * kdbus_name_decide_activator() - an activator's HELLO, the name part
 * @s:		the name; @s->role is the activator's place on it
 *
 * Return: the decision: REFUSE (-EALREADY when the connection already
 * holds or waits for the name, -EEXIST when the name has an activator),
 * ACTIVATE or ACTIVATE_BEHIND.
 */
static inline struct kdbus_name_decision
kdbus_name_decide_activator(const struct kdbus_name_state *s)
{
	struct kdbus_name_decision d = { .action = KDBUS_NAME_DO_REFUSE };

	if (s->role != KDBUS_NAME_ROLE_NONE) {
		d.error = -EALREADY;
	} else if (s->has_activator) {
		d.error = -EEXIST;
	} else if (s->has_primary) {
		d.action = KDBUS_NAME_DO_ACTIVATE_BEHIND;
		d.flags = KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE;
		d.return_flags = d.flags | KDBUS_NAME_ACQUIRED;
	} else {
		d.action = KDBUS_NAME_DO_ACTIVATE;
		d.flags = KDBUS_NAME_ACTIVATOR | KDBUS_NAME_PRIMARY;
		d.return_flags = d.flags | KDBUS_NAME_ACQUIRED;
	}
	return d;
}

/**
 * kdbus_name_decide_acquire() - NAME_ACQUIRE of a name, the decision
 * @s:		the name; @s->role is the requester's place on it
 * @flags:	the request's flags (KDBUS_NAME_ACQUIRE_FLAGS; with
 *		KDBUS_NAME_ACTIVATOR, kdbus_name_decide_activator() decides)
 *
 * The table is in "DOC: name ownership" above: a free name, or one only
 * its activator holds, goes to the requester whatever its flags; the
 * owner asking again updates its flags; REPLACE_EXISTING takes a name
 * whose owner allowed replacement; QUEUE waits; otherwise -EEXIST.
 *
 * Return: the decision.
 */
static inline struct kdbus_name_decision
kdbus_name_decide_acquire(const struct kdbus_name_state *s, uint64_t flags)
{
	struct kdbus_name_decision d = { .action = KDBUS_NAME_DO_REFUSE };
	uint64_t saved = flags & KDBUS_NAME_SAVED_FLAGS;
	bool acquired = false;

	if (flags & KDBUS_NAME_ACTIVATOR)
		return kdbus_name_decide_activator(s);

	if (s->role == KDBUS_NAME_ROLE_ACTIVATOR) {
		/* an activator cannot own the name it activates */
		d.error = -EUCLEAN;
		return d;
	}

	if (!s->has_primary) {
		d.action = s->has_activator ? KDBUS_NAME_DO_HANDOVER : KDBUS_NAME_DO_TAKE;
		d.flags = saved | KDBUS_NAME_PRIMARY;
		if (s->has_activator)
			d.prev_flags = kdbus_name_flags_waiting(KDBUS_NAME_ACTIVATOR);
		acquired = true;
	} else if (s->role == KDBUS_NAME_ROLE_PRIMARY) {
		/* success without ACQUIRED: the final ABI, not -EALREADY */
		d.action = KDBUS_NAME_DO_UPDATE;
		d.flags = saved | KDBUS_NAME_PRIMARY;
	} else if ((s->primary_flags & KDBUS_NAME_ALLOW_REPLACEMENT) &&
		   (flags & KDBUS_NAME_REPLACE_EXISTING)) {
		d.action = KDBUS_NAME_DO_REPLACE;
		d.flags = saved | KDBUS_NAME_PRIMARY;
		if (s->primary_flags & KDBUS_NAME_QUEUE)
			d.prev_flags = kdbus_name_flags_waiting(s->primary_flags);
		else
			d.prev_leaves = true;
		acquired = true;
	} else if (flags & KDBUS_NAME_QUEUE) {
		d.flags = saved | KDBUS_NAME_IN_QUEUE;
		acquired = s->role != KDBUS_NAME_ROLE_WAITER;
		if (flags & KDBUS_NAME_REPLACE_EXISTING)
			/* as dbus-daemon: it wanted the name, it is next */
			d.action = KDBUS_NAME_DO_QUEUE_NEXT;
		else if (acquired)
			d.action = KDBUS_NAME_DO_QUEUE;
		else
			d.action = KDBUS_NAME_DO_STAY;
	} else {
		/* taken, no queueing: a waiter that no longer queues leaves */
		d.error = -EEXIST;
		d.flags = saved;
		if (s->role == KDBUS_NAME_ROLE_WAITER)
			d.action = KDBUS_NAME_DO_LEAVE;
	}

	d.return_flags = d.flags | (acquired ? KDBUS_NAME_ACQUIRED : 0);
	return d;
}

/* what NAME_RELEASE does besides removing the releaser */
enum kdbus_name_release_action {
	KDBUS_NAME_RELEASE_SILENT,	/* the owner stays; nobody is told */
	KDBUS_NAME_RELEASE_TO_WAITER,	/* the first waiter owns it; NAME_CHANGE */
	KDBUS_NAME_RELEASE_TO_ACTIVATOR, /* the activator holds it again, with the
					  * releaser's messages to the name;
					  * NAME_CHANGE */
	KDBUS_NAME_RELEASE_REMOVE,	/* nobody holds it; NAME_REMOVE */
};

/**
 * kdbus_name_decide_release() - NAME_RELEASE of a name, the decision
 * @s:		the name before the release; @s->role is the releaser's place
 *		on it (@s->primary_flags is not used)
 *
 * A waiter leaves silently, and so does an activator behind an owner.
 * When the holder goes, the name passes to the first waiter, else back to
 * the activator, else it is gone.  The new holder's flags are
 * kdbus_name_flags_primary() of its own.
 *
 * Return: a KDBUS_NAME_RELEASE_* action, or -EADDRINUSE when the releaser
 * neither holds nor waits for the name.
 */
static inline int kdbus_name_decide_release(const struct kdbus_name_state *s)
{
	switch (s->role) {
	case KDBUS_NAME_ROLE_WAITER:
		return KDBUS_NAME_RELEASE_SILENT;
	case KDBUS_NAME_ROLE_ACTIVATOR:
		return s->has_primary ? KDBUS_NAME_RELEASE_SILENT : KDBUS_NAME_RELEASE_REMOVE;
	case KDBUS_NAME_ROLE_PRIMARY:
		if (s->has_waiter)
			return KDBUS_NAME_RELEASE_TO_WAITER;
		return s->has_activator ? KDBUS_NAME_RELEASE_TO_ACTIVATOR : KDBUS_NAME_RELEASE_REMOVE;
	case KDBUS_NAME_ROLE_NONE:
	default:
		return -EADDRINUSE;
	}
}

#endif /* KSHARED_NAMES_H */
