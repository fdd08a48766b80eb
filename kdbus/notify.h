/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * notify.h - kernel notifications (kernel: notify.c)
 *
 * Notifications are queued on the bus during a command and delivered by
 * kdbus_notify_flush() at its end: broadcasts (ID_ADD, ID_REMOVE,
 * NAME_ADD, NAME_REMOVE, NAME_CHANGE) to connections with a matching
 * notification rule and to monitors, unicasts (REPLY_TIMEOUT, REPLY_DEAD)
 * to the requester.  They have src_id 0 and payload_type
 * KDBUS_PAYLOAD_KERNEL; each gets the next global sequence number.  A
 * notification that does not fit a receiver's queue counts as dropped.
 */

#include <stdint.h>

#include "util/list.h"

typedef struct KdbusBus KdbusBus;

/** kdbus_notify_id_change() - queue ID_ADD or ID_REMOVE. */
int kdbus_notify_id_change(KdbusBus *bus, uint64_t type, uint64_t id, uint64_t flags);

/** kdbus_notify_name_change() - queue NAME_ADD, NAME_REMOVE or NAME_CHANGE. */
int kdbus_notify_name_change(KdbusBus *bus, uint64_t type,
			     uint64_t old_id, uint64_t new_id,
			     uint64_t old_flags, uint64_t new_flags,
			     const char *name);

/** kdbus_notify_reply() - queue REPLY_TIMEOUT or REPLY_DEAD for @id. */
int kdbus_notify_reply(KdbusBus *bus, uint64_t type, uint64_t id, uint64_t cookie);

/** kdbus_notify_flush() - deliver everything queued (bus locked). */
void kdbus_notify_flush(KdbusBus *bus);

/** kdbus_notify_drop() - discard everything queued (bus teardown). */
void kdbus_notify_drop(KdbusBus *bus);
