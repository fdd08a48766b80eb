/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * user.c - per-uid accounting and quotas (see user.h)
 */

#include <errno.h>
#include <stdlib.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/user.h"
#include "util/macro.h"

static KdbusUser *kdbus_user_find(KdbusBus *bus, uint64_t uid) {
	return kdbus_hash_find_u64(&bus->users, uid, KdbusUser, node, uid);
}

static void kdbus_user_set_max(KdbusBus *bus, KdbusUser *u) {
	const uint64_t max[_KDBUS_USER_N_SLOTS] = {
		[KDBUS_USER_BYTES] = bus->limits.max_bytes_per_user,
		[KDBUS_USER_FDS] = bus->limits.max_fds_per_user,
		[KDBUS_USER_MSGS] = bus->limits.max_msgs_per_user,
		[KDBUS_USER_NAMES] = bus->limits.max_names_per_user,
		[KDBUS_USER_MATCHES] = bus->limits.max_matches_per_user,
		[KDBUS_USER_REPLIES] = bus->limits.max_requests_per_user,
	};

	for (size_t i = 0; i < _KDBUS_USER_N_SLOTS; i++) {
		uint64_t used = u->max[i] - u->remaining[i];

		/* a lowered limit leaves what is in use; nothing new fits */
		u->max[i] = max[i];
		u->remaining[i] = used < max[i] ? max[i] - used : 0;
		/* max - remaining must stay what is in use */
		if (used > max[i])
			u->max[i] = used;
	}
}

void kdbus_user_apply_limits(KdbusBus *bus) {
	for (size_t b = 0; b < bus->users.n_buckets; b++)
		for (KdbusHashNode *n = bus->users.buckets[b]; n; n = n->next)
			kdbus_user_set_max(bus, container_of(n, KdbusUser, node));
}

static void kdbus_user_free(KdbusBus *bus, KdbusUser *u) {
	kdbus_hash_remove(&bus->users, &u->node);
	kdbus_hash_deinit(&u->usages);
	free(u);
}

static void kdbus_user_unref(KdbusBus *bus, KdbusUser *u) {
	if (--u->n_refs > 0)
		return;
	kdbus_user_free(bus, u);
}

static int kdbus_user_get(KdbusBus *bus, uint64_t uid, KdbusUser **ret) {
	KdbusUser *u = kdbus_user_find(bus, uid);

	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		kdbus_hash_init(&u->usages);
		if (kdbus_hash_add(&bus->users, &u->node, kdbus_hash_u64(uid)) < 0) {
			free(u);
			return -ENOMEM;
		}
		kdbus_user_set_max(bus, u);
	}
	*ret = u;
	return 0;
}

int kdbus_user_acquire(KdbusBus *bus, uint64_t uid, KdbusUser **ret) {
	KdbusUser *u;
	int r;

	r = kdbus_user_get(bus, uid, &u);
	if (r < 0)
		return r;
	if (u->n_conns >= bus->limits.max_conns_per_user) {
		if (u->n_refs == 0)
			kdbus_user_free(bus, u);
		return -EMFILE;
	}
	u->n_conns++;
	u->n_refs++;
	*ret = u;
	return 0;
}

void kdbus_user_release(KdbusBus *bus, KdbusUser *u) {
	if (!u)
		return;
	u->n_conns--;
	kdbus_user_unref(bus, u);
}

static KdbusUserUsage *kdbus_usage_find(KdbusUser *u, uint64_t actor) {
	return kdbus_hash_find_u64(&u->usages, actor, KdbusUserUsage, node, uid);
}

static void kdbus_usage_unref(KdbusBus *bus, KdbusUserUsage *g) {
	KdbusUser *u = g->user;

	if (--g->n_refs > 0)
		return;
	if (u->self_usage == g)
		u->self_usage = NULL;
	kdbus_hash_remove(&u->usages, &g->node);
	u->n_usages--;
	free(g);
	kdbus_user_unref(bus, u);
}

/* dbus-broker's check: (share + amount) * (users + 1) - share <= remaining */
static bool kdbus_user_share_ok(uint64_t remaining, uint64_t users, uint64_t share, uint64_t amount) {
	uint64_t limit;

	return !__builtin_add_overflow(share, amount, &limit) &&
	       !__builtin_mul_overflow(limit, users + 1, &limit) &&
	       limit - share <= remaining;
}

/* may @amount of @slot be charged: against what remains for the user's own
 * charges (@self), else against the share of an actor holding @used of
 * it, among @n_actors */
static inline bool kdbus_user_slot_ok(const KdbusUser *u, bool self, uint64_t n_actors, uint64_t used,
				      KdbusUserSlot slot, uint64_t amount) {
	return self ? amount <= u->remaining[slot] : kdbus_user_share_ok(u->remaining[slot], n_actors, used, amount);
}

/* @actor's usage of @u, with one more reference; created if need be */
static KdbusUserUsage *kdbus_usage_get(KdbusUser *u, uint64_t actor) {
	KdbusUserUsage *g = actor == u->uid && u->self_usage ? u->self_usage : kdbus_usage_find(u, actor);

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return NULL;
		g->user = u;
		g->uid = actor;
		if (kdbus_hash_add(&u->usages, &g->node, kdbus_hash_u64(actor)) < 0) {
			free(g);
			return NULL;
		}
		u->n_usages++;
		u->n_refs++;
		if (actor == u->uid)
			u->self_usage = g;
	}
	g->n_refs++;
	return g;
}

int kdbus_user_charge(KdbusBus *bus, KdbusUser *u, uint64_t actor, KdbusUserCharge *c, KdbusUserSlot slot,
		      uint64_t amount) {
	KdbusUserUsage *g;
	bool fresh = false;

	if (!u)
		return 0;
	g = c->usage;
	if (!g) {
		g = kdbus_usage_get(u, actor);
		if (!g)
			return -ENOMEM;
		fresh = true;
	}
	if (amount && !kdbus_user_slot_ok(u, actor == u->uid, u->n_usages, g->used[slot], slot, amount)) {
		u->n_refused++;
		if (fresh)
			kdbus_usage_unref(bus, g);
		return -EDQUOT;
	}
	u->remaining[slot] -= amount;
	g->used[slot] += amount;
	c->amount[slot] += amount;
	c->usage = g;
	return 0;
}

/* kdbus_user_charge() of one message: the three message slots only */
int kdbus_user_charge_msg(KdbusBus *bus, KdbusUser *u, uint64_t actor, KdbusUserUsage **ret_usage,
			  uint64_t bytes, uint64_t fds) {
	static const uint64_t none[_KDBUS_USER_N_SLOTS];
	const uint64_t *used;
	KdbusUserUsage *g;
	uint64_t n_actors;
	bool self;

	*ret_usage = NULL;
	if (!u)
		return 0;
	self = actor == u->uid;
	g = self ? NULL : kdbus_usage_find(u, actor);
	used = g ? g->used : none;
	n_actors = u->n_usages + (!self && !g);	/* a new actor counts in its own check */
	if ((bytes && !kdbus_user_slot_ok(u, self, n_actors, used[KDBUS_USER_BYTES], KDBUS_USER_BYTES, bytes)) ||
	    (fds && !kdbus_user_slot_ok(u, self, n_actors, used[KDBUS_USER_FDS], KDBUS_USER_FDS, fds)) ||
	    !kdbus_user_slot_ok(u, self, n_actors, used[KDBUS_USER_MSGS], KDBUS_USER_MSGS, 1)) {
		u->n_refused++;
		return -EDQUOT;
	}
	g = kdbus_usage_get(u, actor);
	if (!g)
		return -ENOMEM;
	u->remaining[KDBUS_USER_BYTES] -= bytes;
	u->remaining[KDBUS_USER_FDS] -= fds;
	u->remaining[KDBUS_USER_MSGS] -= 1;
	g->used[KDBUS_USER_BYTES] += bytes;
	g->used[KDBUS_USER_FDS] += fds;
	g->used[KDBUS_USER_MSGS] += 1;
	*ret_usage = g;
	return 0;
}

void kdbus_user_uncharge_one(KdbusBus *bus, KdbusUserCharge *c, KdbusUserSlot slot) {
	KdbusUserUsage *g = c->usage;

	if (!g || !c->amount[slot])
		return;
	c->amount[slot]--;
	g->used[slot]--;
	g->user->remaining[slot]++;
	for (size_t i = 0; i < _KDBUS_USER_N_SLOTS; i++)
		if (c->amount[i])
			return;
	c->usage = NULL;
	kdbus_usage_unref(bus, g);
}

void kdbus_user_uncharge(KdbusBus *bus, KdbusUserCharge *c) {
	KdbusUserUsage *g = c->usage;

	if (!g)
		return;
	for (size_t i = 0; i < _KDBUS_USER_N_SLOTS; i++) {
		g->used[i] -= c->amount[i];
		g->user->remaining[i] += c->amount[i];
		c->amount[i] = 0;
	}
	c->usage = NULL;
	kdbus_usage_unref(bus, g);
}

void kdbus_user_uncharge_msg(KdbusBus *bus, KdbusUserUsage **usage, uint64_t bytes, uint64_t fds) {
	KdbusUserUsage *g = *usage;
	KdbusUser *u;

	if (!g)
		return;
	u = g->user;
	g->used[KDBUS_USER_BYTES] -= bytes;
	g->used[KDBUS_USER_FDS] -= fds;
	g->used[KDBUS_USER_MSGS] -= 1;
	u->remaining[KDBUS_USER_BYTES] += bytes;
	u->remaining[KDBUS_USER_FDS] += fds;
	u->remaining[KDBUS_USER_MSGS] += 1;
	*usage = NULL;
	kdbus_usage_unref(bus, g);
}

int kdbus_user_charge_set(KdbusBus *bus, KdbusUser *user, KdbusUserCharge *c, KdbusUserSlot slot,
			  uint64_t count) {
	if (!user)
		return 0;
	if (count > c->amount[slot])
		return kdbus_user_charge(bus, user, user->uid, c, slot, count - c->amount[slot]);
	while (c->amount[slot] > count)
		kdbus_user_uncharge_one(bus, c, slot);
	return 0;
}

void kdbus_user_flush(KdbusBus *bus) {
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&bus->users))) {
		KdbusUser *u = container_of(n, KdbusUser, node);
		KdbusHashNode *m;

		while ((m = kdbus_hash_pop(&u->usages)))
			free(container_of(m, KdbusUserUsage, node));
		kdbus_hash_deinit(&u->usages);
		free(u);
	}
}

/* ---- per receiving connection ---- */

typedef struct KdbusConnQuota {
	KdbusHashNode node;	/* in KdbusConn.quotas, by actor uid */
	uint64_t uid;
	uint64_t bytes, msgs;
} KdbusConnQuota;

static KdbusConnQuota *kdbus_conn_quota_find(KdbusConn *c, uint64_t actor) {
	uint64_t h = kdbus_hash_u64(actor);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &c->quotas, h) {
		KdbusConnQuota *q = container_of(n, KdbusConnQuota, node);

		if (q->uid == actor)
			return q;
	}
	return NULL;
}

/* the kernel's rule: own + amount <= (available - accounted + own) / 3 */
static bool kdbus_conn_quota_ok(uint64_t available, uint64_t accounted, uint64_t own, uint64_t amount) {
	if (available < accounted)
		return false;
	available = (available - accounted + own) / 3;
	return available >= own && available - own >= amount;
}

int kdbus_conn_quota_charge(KdbusConn *dst, uint64_t actor, uint64_t bytes) {
	KdbusConnQuota *q;
	bool foreign = !dst->user || dst->user->uid != actor;

	/* the connection's own user has no share to track: only the total
	 * (kdbus_conn_quota_uncharge() tells it by the missing entry) */
	if (!foreign) {
		dst->quota_bytes += bytes;
		return 0;
	}
	q = kdbus_conn_quota_find(dst, actor);
	if ((!kdbus_conn_quota_ok(dst->pool.size / 2, dst->quota_bytes, q ? q->bytes : 0, bytes) ||
	     !kdbus_conn_quota_ok(dst->bus->limits.max_msgs_per_conn, dst->queue.n_msgs, q ? q->msgs : 0, 1))) {
		if (dst->user)
			dst->user->n_refused++;
		return -EDQUOT;
	}
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
		q->uid = actor;
		if (kdbus_hash_add(&dst->quotas, &q->node, kdbus_hash_u64(actor)) < 0) {
			free(q);
			return -ENOMEM;
		}
	}
	q->bytes += bytes;
	q->msgs++;
	dst->quota_bytes += bytes;
	return 0;
}

void kdbus_conn_quota_uncharge(KdbusConn *dst, uint64_t actor, uint64_t bytes) {
	KdbusConnQuota *q = dst->quotas.n_entries ? kdbus_conn_quota_find(dst, actor) : NULL;

	if (!q) {
		/* a charge of the connection's own user */
		dst->quota_bytes -= bytes <= dst->quota_bytes ? bytes : dst->quota_bytes;
		return;
	}
	q->bytes -= bytes <= q->bytes ? bytes : q->bytes;
	dst->quota_bytes -= bytes <= dst->quota_bytes ? bytes : dst->quota_bytes;
	if (q->msgs)
		q->msgs--;
	if (q->msgs == 0) {
		kdbus_hash_remove(&dst->quotas, &q->node);
		free(q);
	}
}

void kdbus_conn_quota_flush(KdbusConn *conn) {
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&conn->quotas)))
		free(container_of(n, KdbusConnQuota, node));
	kdbus_hash_deinit(&conn->quotas);
	conn->quota_bytes = 0;
}
