/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * message.h - dbus1 → kdbus translation of one message: the kdbus_msg and
 * its SEND items for a (validated, header-rewritten) dbus1 message, and the
 * mapping between unique names ":1.N" and kdbus connection ids.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/wire.h"
#include "kdbus/kdbus.h"

/* room for a kdbus_msg with every SEND item the bridge uses, except fds */
#define MESSAGE_KMSG_BASE_SIZE 1024

/**
 * struct MessageTarget - where a dbus1 message goes, decided from its
 * DESTINATION field
 * @dst_id:	the kdbus dst_id (a connection id, KDBUS_DST_ID_NAME or
 *		KDBUS_DST_ID_BROADCAST)
 * @dst_name:	the well-known name for KDBUS_DST_ID_NAME, else NULL
 */
typedef struct MessageTarget {
	uint64_t dst_id;
	const char *dst_name;
	size_t dst_name_len;
} MessageTarget;

/**
 * message_unique_name_to_id() - parse ":1.N"
 *
 * Return: true and *ret_id = N + 1 if @s is ":1.N", the unique name of
 * connection N + 1 of this bus (not one of KDBUS_HELLO_HIDDEN_ID).
 */
bool message_unique_name_to_id(const char *s, size_t len, uint64_t *ret_id);

/**
 * message_unique_name_format() - write ":1.N" for connection @id = N + 1
 * Return: the length written (without NUL); @buf must hold 24 bytes.
 */
size_t message_unique_name_format(char *buf, uint64_t id);

/**
 * message_target() - kdbus destination of a parsed message
 *
 * Return: 0, -ENXIO for a unique name that no connection can have
 * (":1.N" with N not a valid id, or another bus's prefix).
 */
int message_target(const WireHeader *h, MessageTarget *ret);

/**
 * message_kmsg_size() - bytes needed for the kdbus_msg of a message (with
 * room for its match keys)
 */
size_t message_kmsg_size(const MessageTarget *t, size_t n_fds, size_t bloom_size);

/**
 * struct MessageSendParts - the pieces of one outgoing message
 */
typedef struct MessageSendParts {
	const uint8_t *header;		/* rewritten header */
	size_t header_len;
	const uint8_t *body;
	size_t body_len;
	const int *fds;
	size_t n_fds;
	const uint64_t *bloom;		/* broadcasts only */
	size_t bloom_size;		/* bytes */
	const uint64_t *keys;		/* KDBUS_ITEM_MATCH_KEYS (match-key.h), or NULL */
	size_t n_keys;
	uint64_t timeout_ns;		/* absolute deadline for calls expecting a reply */
} MessageSendParts;

/**
 * message_kmsg_build() - fill a kdbus_msg for KDBUS_CMD_SEND
 * @h:		parsed dbus1 header (type, flags, serial, reply serial)
 * @t:		its destination
 * @p:		payload, fds, bloom filter, deadline
 * @buf:	8-byte aligned, at least message_kmsg_size() bytes
 *
 * Return: the kdbus_msg in @buf.
 */
struct kdbus_msg *message_kmsg_build(const WireHeader *h, const MessageTarget *t,
				     const MessageSendParts *p, void *buf);

/* bytes message_kmsg_bytes() fills */
#define MESSAGE_KMSG_BYTES_SIZE (sizeof(struct kdbus_msg) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec)))

/**
 * message_kmsg_bytes() - fill a kdbus_msg carrying prebuilt dbus1 bytes
 * @buf:		8-byte aligned, at least MESSAGE_KMSG_BYTES_SIZE bytes
 * @dst_id:		the receiving connection
 * @cookie:		the kdbus cookie
 * @cookie_reply:	the call this answers, or 0
 * @msg:		the whole dbus1 message (header and body), @len bytes;
 *			it must stay valid until the SEND
 *
 * Return: the kdbus_msg in @buf (a plain unicast, no flags).
 */
struct kdbus_msg *message_kmsg_bytes(void *buf, uint64_t dst_id, uint64_t cookie, uint64_t cookie_reply,
				     const void *msg, size_t len);
