/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * user.c - per-uid accounting (see user.h)
 */

#include <errno.h>
#include <stdlib.h>

#include "kdbus/core.h"
#include "kdbus/user.h"
#include "util/macro.h"

static KdbusUser *kdbus_user_find(KdbusBus *bus, uint64_t uid) {
	uint64_t h = kdbus_hash_u64(uid);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &bus->users, h) {
		KdbusUser *u = container_of(n, KdbusUser, node);

		if (u->uid == uid)
			return u;
	}
	return NULL;
}

int kdbus_user_acquire(KdbusBus *bus, uint64_t uid, KdbusUser **ret) {
	KdbusUser *u = kdbus_user_find(bus, uid);

	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		if (kdbus_hash_add(&bus->users, &u->node, kdbus_hash_u64(uid)) < 0) {
			free(u);
			return -ENOMEM;
		}
	}
	if (u->n_conns >= bus->limits.max_conns_per_user) {
		if (u->n_conns == 0) {
			kdbus_hash_remove(&bus->users, &u->node);
			free(u);
		}
		return -EMFILE;
	}
	u->n_conns++;
	*ret = u;
	return 0;
}

void kdbus_user_release(KdbusBus *bus, KdbusUser *u) {
	if (!u)
		return;
	if (--u->n_conns == 0) {
		kdbus_hash_remove(&bus->users, &u->node);
		free(u);
	}
}

void kdbus_user_flush(KdbusBus *bus) {
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&bus->users)))
		free(container_of(n, KdbusUser, node));
}
