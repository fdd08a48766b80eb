/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * user.h - per-uid accounting of a bus (kernel: kdbus_user)
 */

#include <stdint.h>

#include "kdbus/hash.h"

typedef struct KdbusBus KdbusBus;

typedef struct KdbusUser {
	KdbusHashNode node;
	uint64_t uid;
	uint64_t n_conns;
} KdbusUser;

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

/** kdbus_user_flush() - free all user objects (bus teardown). */
void kdbus_user_flush(KdbusBus *bus);
