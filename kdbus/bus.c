/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus.c - the userspace bus: BUS_MAKE, teardown, the command lock with its
 * deferred wakeups, reply deadlines, BUS_CREATOR_INFO (see core.h)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/item.h"
#include "kdbus/notify.h"
#include "kdbus/user.h"
#include "util/macro.h"

/* the "domain" of the userspace backend: every bus of this process */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static List registry = LIST_INIT(registry);
static uint64_t registry_last_id;

static const KdbusLimits kdbus_default_limits = {
	.max_names_per_conn = 256,
	.max_matches_per_conn = 256,
	.max_requests_pending = 128,
	.max_msgs_per_conn = 256,
	.max_conns_per_user = 1024,
	.max_fds_per_msg = 253,
	.max_payload_size = 2 * 1024 * 1024,
	.max_msg_size = 8 * 1024,
	.max_bytes_per_user = 512 * 1024 * 1024,
	.max_fds_per_user = 4096,
	.max_msgs_per_user = 65536,
	/* 64 connections' worth; kdbus_bus_set_limits() derives them likewise */
	.max_names_per_user = 256 * 64,
	.max_matches_per_user = 256 * 64,
	.max_requests_per_user = 128 * 64,
};

static bool kdbus_registry_has(const char *name) {
	list_for_each(i, &registry) {
		KdbusBus *b = list_entry(i, KdbusBus, registry_link);

		if (streq(b->name, name))
			return true;
	}
	return false;
}

static void kdbus_bus_free(KdbusBus *bus) {
	KdbusHashNode *n;

	kdbus_notify_drop(bus);
	kdbus_user_flush(bus);
	/* every tracker went with its connections; free leftovers raw */
	while ((n = kdbus_hash_pop(&bus->replies)))
		kdbus_cache_free(&bus->cache, container_of(n, KdbusReply, node));
	kdbus_hash_deinit(&bus->replies);
	kdbus_reply_heap_deinit(&bus->heap);
	kdbus_hash_deinit(&bus->conns_by_id);
	kdbus_hash_deinit(&bus->users);
	kdbus_name_registry_deinit(&bus->names);
	kdbus_policy_db_deinit(&bus->policy);
	kdbus_meta_deinit(&bus->creator_meta);
	kdbus_cache_deinit(&bus->cache);
	free(bus->wakes);
	free(bus->spare_wakes);
	kdbus_hash_deinit(&bus->umatch_keyed);
	free(bus->umatch_index);
	free(bus->umatch_index_load);
	free(bus->umatch_index_used);
	free(bus->umatch_index_freq);
	pthread_cond_destroy(&bus->sync_cond);
	pthread_mutex_destroy(&bus->lock);
	free(bus->name);
	free(bus);
}

KdbusBus *kdbus_bus_ref(KdbusBus *bus) {
	__atomic_add_fetch(&bus->refs, 1, __ATOMIC_RELAXED);
	return bus;
}

KdbusBus *kdbus_bus_unref(KdbusBus *bus) {
	if (bus && __atomic_sub_fetch(&bus->refs, 1, __ATOMIC_ACQ_REL) == 0)
		kdbus_bus_free(bus);
	return NULL;
}

int kdbus_us_bus_make(struct kdbus_cmd *cmd, KdbusBus **ret_bus) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_MAKE_NAME, .mandatory = true },
		{ .type = KDBUS_ITEM_BLOOM_PARAMETER },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_SEND },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_RECV },
	};
	_cleanup_free_ KdbusBus *bus = NULL;
	pthread_condattr_t ca;
	const char *name;
	char prefix[32];
	uint64_t req = 0, owner = _KDBUS_ATTACH_ALL;
	int r;

	*ret_bus = NULL;
	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd, items),
			     KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	name = argv[1].item->str;
	r = kdbus_sysname_is_valid(name);
	if (r < 0)
		return r;
	snprintf(prefix, sizeof(prefix), "%u-", (unsigned)geteuid());
	if (strncmp(name, prefix, strlen(prefix)) != 0 || strlen(name) == strlen(prefix))
		return -EINVAL;

	if (!argv[2].item)
		return -EBADMSG;
	{
		const struct kdbus_bloom_parameter *b = &argv[2].item->bloom_parameter;

		if (b->size < 8 || b->size > KDBUS_BUS_BLOOM_MAX_SIZE || b->size % 8 || b->n_hash < 1)
			return -EINVAL;
	}
	if (argv[3].item) {
		r = kdbus_sanitize_attach_flags(argv[3].item->data64[0], &req);
		if (r < 0)
			return r;
	}
	if (argv[4].item) {
		r = kdbus_sanitize_attach_flags(argv[4].item->data64[0], &owner);
		if (r < 0)
			return r;
	}

	bus = calloc(1, sizeof(*bus));
	if (!bus)
		return -ENOMEM;
	bus->backend = KDBUS_BACKEND_USERSPACE;
	bus->refs = 1;
	bus->name = strdup(name);
	if (!bus->name)
		return -ENOMEM;
	r = kdbus_meta_init_proc(&bus->creator_meta);
	if (r < 0) {
		free(bus->name);
		return r;
	}

	pthread_mutex_init(&bus->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bus->sync_cond, &ca);
	pthread_condattr_destroy(&ca);

	bus->make_flags = cmd->flags;
	bus->bloom = argv[2].item->bloom_parameter;
	bus->attach_flags_req = req;
	bus->attach_flags_owner = owner;
	bus->creator_euid = geteuid();
	bus->policy_fallback = -1;
	bus->limits = kdbus_default_limits;
	if (getrandom(bus->id128, sizeof(bus->id128), GRND_NONBLOCK) != sizeof(bus->id128)) {
		uint64_t t = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)bus;

		memcpy(bus->id128, &t, sizeof(t));
	}
	bus->id128[6] = (bus->id128[6] & 0x0f) | 0x40;	/* version 4 */
	bus->id128[8] = (bus->id128[8] & 0x3f) | 0x80;	/* DCE variant */

	kdbus_hash_init(&bus->conns_by_id);
	kdbus_hash_init(&bus->users);
	kdbus_hash_init(&bus->replies);
	list_init(&bus->conns);
	list_init(&bus->monitors);
	list_init(&bus->umatch_unindexed);
	kdbus_hash_init(&bus->umatch_keyed);
	list_init(&bus->conns_kmatch);
	list_init(&bus->notifications);
	kdbus_name_registry_init(&bus->names);
	kdbus_policy_db_init(&bus->policy);

	pthread_mutex_lock(&registry_lock);
	if (kdbus_registry_has(name)) {
		pthread_mutex_unlock(&registry_lock);
		kdbus_bus_free(TAKE_PTR(bus));
		return -EEXIST;
	}
	list_link_tail(&registry, &bus->registry_link);
	bus->seqnum = 0;
	bus->talk_gen = 1;
	registry_last_id++;
	pthread_mutex_unlock(&registry_lock);

	*ret_bus = TAKE_PTR(bus);
	return 0;
}

void kdbus_us_bus_close(KdbusBus *bus) {
	pthread_mutex_lock(&registry_lock);
	list_unlink(&bus->registry_link);
	pthread_mutex_unlock(&registry_lock);

	kdbus_bus_lock(bus);
	bus->closed = true;
	while (!list_is_empty(&bus->conns)) {
		KdbusConn *c = list_first_entry(&bus->conns, KdbusConn, bus_link);

		kdbus_conn_disconnect(c);
	}
	kdbus_bus_unlock(bus);
	kdbus_bus_unref(bus);
}

void kdbus_bus_lock(KdbusBus *bus) {
	pthread_mutex_lock(&bus->lock);
}

void kdbus_bus_unlock(KdbusBus *bus) {
	KdbusTimerFn tfn = NULL;
	void *tdata = NULL;
	uint64_t deadline = 0;
	KdbusWakeList *wl, *old;

	/* (the check inline: most commands leave no notification, and the
	 * flush's staging area would cost every unlock a stack canary) */
	if (!list_is_empty(&bus->notifications))
		kdbus_notify_flush(bus);

	if (bus->timer_pending) {
		bus->timer_pending = false;
		tfn = bus->timer_fn;
		tdata = bus->timer_userdata;
		deadline = bus->timer_armed;
	}

	wl = bus->wakes;
	bus->wakes = NULL;
	if (wl) {
		for (size_t i = 0; i < wl->n; i++) {
			KdbusConn *c = wl->w[i].conn;

			c->wake_queued = false;
			wl->w[i].fn = c->handle_closed ? NULL : c->wakeup_fn;
			wl->w[i].userdata = c->wakeup_userdata;
		}
		kdbus_bus_ref(bus);
	}
	pthread_mutex_unlock(&bus->lock);

	if (tfn && deadline)
		tfn(bus, deadline, tdata);

	if (!wl)
		return;
	for (size_t i = 0; i < wl->n; i++)
		if (wl->w[i].fn)
			wl->w[i].fn(wl->w[i].conn, wl->w[i].userdata);
	for (size_t i = 0; i < wl->n; i++)
		kdbus_conn_unref(wl->w[i].conn);
	wl->n = 0;
	old = __atomic_exchange_n(&bus->spare_wakes, wl, __ATOMIC_ACQ_REL);
	free(old);
	kdbus_bus_unref(bus);
}

void kdbus_bus_wake(KdbusBus *bus, KdbusConn *conn) {
	KdbusWakeList *wl = bus->wakes;

	if (!conn->wakeup_fn || conn->wake_queued || conn->handle_closed)
		return;

	if (!wl) {
		wl = __atomic_exchange_n(&bus->spare_wakes, NULL, __ATOMIC_ACQ_REL);
		if (!wl) {
			wl = malloc(sizeof(*wl) + 16 * sizeof(KdbusWake));
			if (!wl)
				return;
			wl->cap = 16;
		}
		wl->n = 0;
		bus->wakes = wl;
	}
	if (wl->n == wl->cap) {
		KdbusWakeList *nw = realloc(wl, sizeof(*wl) + 2 * wl->cap * sizeof(KdbusWake));

		if (!nw)
			return;
		nw->cap *= 2;
		bus->wakes = wl = nw;
	}
	wl->w[wl->n].conn = kdbus_conn_ref(conn);
	wl->w[wl->n].fn = NULL;
	wl->w[wl->n].userdata = NULL;
	wl->n++;
	conn->wake_queued = true;
}

KdbusConn *kdbus_bus_find_conn(KdbusBus *bus, uint64_t id) {
	uint64_t h = kdbus_hash_u64(id);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &bus->conns_by_id, h) {
		KdbusConn *c = container_of(n, KdbusConn, id_node);

		if (c->id == id)
			return c;
	}
	return NULL;
}

void kdbus_bus_timer_update(KdbusBus *bus, uint64_t deadline) {
	if (bus->timer_armed == 0 || deadline < bus->timer_armed) {
		bus->timer_armed = deadline;
		bus->timer_pending = bus->timer_fn != NULL;
	}
}

uint64_t kdbus_bus_names_generation(KdbusBus *bus) {
	if (!bus || bus->backend != KDBUS_BACKEND_USERSPACE)
		return 0;
	/* no lock round for a counter that is only ever incremented */
	return __atomic_load_n(&bus->names.generation, __ATOMIC_ACQUIRE);
}

void kdbus_bus_trim(KdbusBus *bus) {
	if (!bus || bus->backend != KDBUS_BACKEND_USERSPACE)
		return;
	kdbus_bus_lock(bus);
	kdbus_cache_deinit(&bus->cache);
	kdbus_bus_unlock(bus);
}

int kdbus_bus_set_limits(KdbusBus *bus, const KdbusLimits *limits) {
	assert_return(bus && limits, -EINVAL);
	if (bus->backend != KDBUS_BACKEND_USERSPACE)
		return -EOPNOTSUPP;

	kdbus_bus_lock(bus);
#define LIMIT(f) bus->limits.f = limits->f ? limits->f : kdbus_default_limits.f
	LIMIT(max_names_per_conn);
	LIMIT(max_matches_per_conn);
	LIMIT(max_requests_pending);
	LIMIT(max_msgs_per_conn);
	LIMIT(max_conns_per_user);
	LIMIT(max_fds_per_msg);
	LIMIT(max_payload_size);
	LIMIT(max_msg_size);
	LIMIT(max_bytes_per_user);
	LIMIT(max_fds_per_user);
	LIMIT(max_msgs_per_user);
#undef LIMIT
#define LIMIT_PER_USER(f, per_conn) \
	bus->limits.f = limits->f ? limits->f : bus->limits.per_conn * 64
	LIMIT_PER_USER(max_names_per_user, max_names_per_conn);
	LIMIT_PER_USER(max_matches_per_user, max_matches_per_conn);
	LIMIT_PER_USER(max_requests_per_user, max_requests_pending);
#undef LIMIT_PER_USER
	kdbus_user_apply_limits(bus);
	kdbus_bus_unlock(bus);
	return 0;
}

int kdbus_bus_set_broadcast_fds(KdbusBus *bus, bool enable) {
	assert_return(bus, -EINVAL);
	if (bus->backend != KDBUS_BACKEND_USERSPACE)
		return -EOPNOTSUPP;

	kdbus_bus_lock(bus);
	bus->broadcast_fds = enable;
	kdbus_bus_unlock(bus);
	return 0;
}

int kdbus_bus_set_policy_fallback(KdbusBus *bus, int access) {
	assert_return(bus, -EINVAL);
	assert_return(access >= -1 && access <= KDBUS_POLICY_OWN, -EINVAL);
	if (bus->backend != KDBUS_BACKEND_USERSPACE)
		return -EOPNOTSUPP;

	kdbus_bus_lock(bus);
	bus->policy_fallback = access;
	bus->talk_gen++;
	kdbus_bus_unlock(bus);
	return 0;
}

void kdbus_bus_set_timer(KdbusBus *bus, KdbusTimerFn fn, void *userdata) {
	KdbusReply *top;

	if (!bus || bus->backend != KDBUS_BACKEND_USERSPACE)
		return;
	kdbus_bus_lock(bus);
	bus->timer_fn = fn;
	bus->timer_userdata = userdata;
	top = kdbus_reply_heap_top(bus);
	bus->timer_armed = top ? top->deadline_ns : 0;
	bus->timer_pending = fn && top;
	kdbus_bus_unlock(bus);
}

uint64_t kdbus_us_dispatch_timeouts(KdbusBus *bus, uint64_t now_ns) {
	KdbusReply *r;
	uint64_t next;

	kdbus_bus_lock(bus);
	while ((r = kdbus_reply_heap_top(bus)) && r->deadline_ns <= now_ns) {
		kdbus_notify_reply(bus, KDBUS_ITEM_REPLY_TIMEOUT, r->requester_id, r->cookie);
		kdbus_reply_free(bus, r);
	}
	next = r ? r->deadline_ns : 0;
	bus->timer_armed = next;
	bus->timer_pending = false;
	kdbus_bus_unlock(bus);
	return next;
}

int kdbus_us_bus_creator_info(KdbusConn *conn, struct kdbus_cmd_info *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	KdbusBus *bus = conn->bus;
	KdbusSlice *s;
	struct kdbus_info *info;
	uint64_t mask;
	size_t size, nlen;
	void *p;
	int r;

	r = kdbus_info_args_parse(cmd, argv, ELEMENTSOF(argv), &mask);
	if (r != 0)
		return r < 0 ? r : 0;

	r = kdbus_conn_lock(conn);
	if (r < 0)
		goto out;
	mask &= bus->attach_flags_owner;
	mask &= ~(uint64_t)(KDBUS_ATTACH_NAMES | KDBUS_ATTACH_TIMESTAMP);
	nlen = strlen(bus->name) + 1;
	size = sizeof(*info) + KDBUS_ITEM_SIZE(nlen) + kdbus_meta_size(&bus->creator_meta, NULL, mask);
	r = kdbus_pool_data_new(&conn->pool, size, &s);
	if (r < 0)
		goto out;
	info = kdbus_slice_data(s);
	info->size = size;
	info->id = 0;
	info->flags = bus->make_flags;
	p = kdbus_item_write(info->items, KDBUS_ITEM_MAKE_NAME, bus->name, nlen);
	kdbus_meta_write(p, &bus->creator_meta, NULL, mask, NULL);
	r = kdbus_pool_data_publish(&conn->pool, s);
	if (r < 0)
		goto out;
	cmd->offset = s->offset;
	cmd->info_size = size;
out:
	kdbus_bus_unlock(bus);
	return r;
}
