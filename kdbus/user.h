/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * user.h - per-uid accounting of a bus (kernel: kdbus_user), with quotas
 * in the spirit of dbus-broker's user accounting.
 *
 * Every connection is owned by the user (uid) that made it.  Each user has
 * a budget per resource (slot): bytes, fds and messages queued on its
 * connections, names its connections own or queue for, match rules,
 * replies its connections wait for.  A user never exceeds its budget.
 *
 * Messages are charged to the *receiving* connection's user, on behalf of
 * the *sending* user (the actor).  A sender that is not the receiver's
 * user may only take a share of what is left: a charge of @amount by an
 * actor already holding @share of the receiving user's slot passes only if
 *
 *	(share + amount) * (n_actors + 1) - share <= remaining
 *
 * where n_actors is the number of users currently holding any of the
 * receiving user's resources (dbus-broker's A(n) = n + 1 allocator: each
 * actor gets between 1/n and 1/n^2 of the budget).  So one user filling up
 * a stuck reader cannot take the room other users' messages to it need.
 * Names, matches and pending replies are charged to the connection's own
 * user (self charges are limited by the budget only).
 *
 * Kernel-originated messages (notifications) are not charged.
 */

#include <stdint.h>

#include "kdbus/hash.h"

typedef struct KdbusBus KdbusBus;

typedef enum KdbusUserSlot {
	KDBUS_USER_BYTES,	/* bytes queued on the user's connections */
	KDBUS_USER_FDS,		/* fds queued on the user's connections */
	KDBUS_USER_MSGS,	/* messages queued on the user's connections */
	KDBUS_USER_NAMES,	/* names owned or queued for */
	KDBUS_USER_MATCHES,	/* match entries */
	KDBUS_USER_REPLIES,	/* replies waited for */
	_KDBUS_USER_N_SLOTS,
} KdbusUserSlot;

typedef struct KdbusUser KdbusUser;

/* what one actor (uid) holds of a user's slots */
typedef struct KdbusUserUsage {
	KdbusHashNode node;	/* in KdbusUser.usages, by actor uid */
	KdbusUser *user;
	uint64_t uid;		/* the actor */
	uint64_t n_refs;	/* charges pointing here */
	uint64_t used[_KDBUS_USER_N_SLOTS];
} KdbusUserUsage;

struct KdbusUser {
	KdbusHashNode node;
	uint64_t uid;
	uint64_t n_conns;
	uint64_t n_refs;	/* n_conns + usages: freed at 0 */
	uint64_t remaining[_KDBUS_USER_N_SLOTS];
	uint64_t max[_KDBUS_USER_N_SLOTS];
	KdbusHash usages;
	KdbusUserUsage *self_usage;	/* in usages, if it is there: the user's own */
	uint64_t n_usages;
	uint64_t n_refused;	/* charges refused over quota (statistics) */
};

/*
 * A charge on a user's slots on behalf of one actor: what it holds, so
 * that it can be given back.  Zeroed: nothing charged.
 */
typedef struct KdbusUserCharge {
	KdbusUserUsage *usage;
	uint64_t amount[_KDBUS_USER_N_SLOTS];
} KdbusUserCharge;

/**
 * kdbus_user_acquire() - count one more connection of @uid
 * @bus:	the bus
 * @uid:	the uid
 * @ret:	the user object
 *
 * Return: 0, -EMFILE (max_conns_per_user reached), -ENOMEM.
 */
int kdbus_user_acquire(KdbusBus *bus, uint64_t uid, KdbusUser **ret);

/** kdbus_user_release() - count one connection less; accepts NULL. */
void kdbus_user_release(KdbusBus *bus, KdbusUser *u);

/**
 * kdbus_user_charge() - charge @amount units of @slot to @user on behalf
 * of @actor
 * @bus:	the bus
 * @user:	whose budget (NULL: not accounted, nothing happens)
 * @actor:	on whose behalf (the same uid: a self charge)
 * @c:		the charge to add to; zeroed or already charged for the
 *		same @user and @actor
 * @slot:	which slot
 * @amount:	units
 *
 * Return: 0, -EDQUOT (over budget or over the actor's share), -ENOMEM.
 */
int kdbus_user_charge(KdbusBus *bus, KdbusUser *user, uint64_t actor, KdbusUserCharge *c, KdbusUserSlot slot,
		      uint64_t amount);

/**
 * kdbus_user_charge_msg() - charge one message to @user on behalf of
 * @actor: @bytes of KDBUS_USER_BYTES, @fds of KDBUS_USER_FDS and one of
 * KDBUS_USER_MSGS, all or nothing
 * @ret_usage: set to what the charge holds (NULL when @user is NULL);
 *	       the message keeps it with @bytes and @fds to give them back
 *
 * Return: 0, -EDQUOT, -ENOMEM.
 */
int kdbus_user_charge_msg(KdbusBus *bus, KdbusUser *user, uint64_t actor, KdbusUserUsage **ret_usage,
			  uint64_t bytes, uint64_t fds);

/**
 * kdbus_user_uncharge() - give back everything @c holds and zero it;
 * accepts a zeroed charge.
 */
void kdbus_user_uncharge(KdbusBus *bus, KdbusUserCharge *c);

/**
 * kdbus_user_uncharge_msg() - give back a kdbus_user_charge_msg() of
 * @bytes and @fds; *@usage becomes NULL (accepted NULL: nothing charged)
 */
void kdbus_user_uncharge_msg(KdbusBus *bus, KdbusUserUsage **usage, uint64_t bytes, uint64_t fds);
/**
 * kdbus_user_uncharge_one() - give back one unit of @slot of @c (the rest
 * stays charged)
 */
void kdbus_user_uncharge_one(KdbusBus *bus, KdbusUserCharge *c, KdbusUserSlot slot);

/**
 * kdbus_user_charge_set() - make @c hold exactly @count units of @slot of
 * @user, as a self charge (names, matches, replies: the connection's own
 * count); growing may fail, shrinking never does
 *
 * Return: 0, -EDQUOT, -ENOMEM.
 */
int kdbus_user_charge_set(KdbusBus *bus, KdbusUser *user, KdbusUserCharge *c, KdbusUserSlot slot,
			  uint64_t count);

/*
 * Per receiving connection, as the kernel's kdbus_conn_quota_inc(): a
 * sender of another user may hold at most a third of what is unused of
 * the connection's queue half of the pool (its own bytes counted as
 * unused), and likewise of max_msgs_per_conn.  Messages of the
 * receiver's own user are counted, not limited.
 */
typedef struct KdbusConn KdbusConn;

/** kdbus_conn_quota_charge() - Return: 0, -EDQUOT, -ENOMEM */
int kdbus_conn_quota_charge(KdbusConn *dst, uint64_t actor, uint64_t bytes);
void kdbus_conn_quota_uncharge(KdbusConn *dst, uint64_t actor, uint64_t bytes);
/** kdbus_conn_quota_flush() - free what is left (connection teardown) */
void kdbus_conn_quota_flush(KdbusConn *conn);

/** kdbus_user_apply_limits() - (re)apply the bus's per-user limits to every user */
void kdbus_user_apply_limits(KdbusBus *bus);

/** kdbus_user_flush() - free all user objects (bus teardown). */
void kdbus_user_flush(KdbusBus *bus);
