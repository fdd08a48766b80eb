/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * message.h - staging and delivery of messages (kernel: message.c and the
 * send paths of connection.c and bus.c)
 *
 * DOC: staging
 *
 * SEND validates the kdbus_msg and its items, copies every PAYLOAD_VEC
 * into one KdbusPayload (the vecs become one contiguous payload, zero-
 * filled for vecs with a NULL address) and duplicates the FDS.  Delivery
 * then builds one queue entry per receiver from that staging object: the
 * unicast destination, each matching broadcast receiver, every monitor.
 * Kernel notifications go through the same path with a notification item
 * instead of a payload.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/kdbus.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;
typedef struct KdbusPayload KdbusPayload;
typedef struct KdbusReply KdbusReply;
typedef struct KdbusQueueEntry KdbusQueueEntry;

typedef struct KdbusStaging {
	const struct kdbus_msg *msg;	/* header as sent (user) */
	KdbusConn *src;			/* NULL for kernel messages */
	uint64_t flags;
	uint64_t dst_id;
	uint64_t cookie;
	uint64_t cookie_reply;		/* reply, or notification's cookie */
	int64_t priority;
	uint64_t payload_type;
	uint64_t seqnum;
	uint64_t dst_name_id;
	const char *dst_name;
	size_t dst_name_size;		/* incl. NUL */
	const struct kdbus_bloom_filter *bloom;
	const uint64_t *keys;		/* KDBUS_ITEM_MATCH_KEYS (bus.h) */
	size_t n_keys;
	KdbusPayload *payload;
	const int *fds;			/* the sender's fds */
	size_t n_fds;
	const struct kdbus_item *notify;	/* kernel notification item */
	bool have_ts;
	struct kdbus_timestamp ts;
} KdbusStaging;

/**
 * kdbus_entry_deliver() - build @dst's queue entry for @s, charge it and
 * queue it on @dst; a failure (queue or quota full, fds to a receiver
 * without ACCEPT_FD, no memory) counts as a message @dst lost
 * @bus:	the bus
 * @dst:	the receiver
 * @s:		the staging object
 * @with_fds:	duplicate and attach the fds
 */
void kdbus_entry_deliver(KdbusBus *bus, KdbusConn *dst, KdbusStaging *s, bool with_fds);

/** kdbus_bus_eavesdrop() - copy @s to every monitor (failures count as lost). */
void kdbus_bus_eavesdrop(KdbusBus *bus, KdbusStaging *s);

/** kdbus_bus_broadcast() - deliver a broadcast to monitors and matching receivers. */
void kdbus_bus_broadcast(KdbusBus *bus, KdbusStaging *s);

/* userspace implementation behind handle.c */
int kdbus_us_send(KdbusConn *conn, struct kdbus_cmd_send *cmd);
