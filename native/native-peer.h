/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * native-peer.h - a D-Bus peer that speaks kdbus directly, beside the
 * classic clients busbridged bridges onto the same kernel bus
 *
 * A native peer says HELLO on the bus's endpoint file (busbridged --kdbus
 * names it in BUSBRIDGE_KDBUS_BUS for the services it starts, and
 * `busbridge-native --find` finds it) and exchanges dbus1 messages with
 * everyone on the bus: classic clients see it as ":1.N" like any other
 * connection, it sees them the same way.  Messages travel as the kdbus
 * payload of busbridged's own connections: the whole dbus1 message, header
 * and body, with a SENDER field, the kdbus cookie being the dbus1 serial.
 *
 * What dbus-daemon's driver does for a classic client, the kernel does for
 * a native peer through ioctls: RequestName and ReleaseName are
 * native_peer_request_name() and native_peer_release_name(); AddMatch is
 * native_peer_add_match() (a bloom mask in the kernel, the exact rule here);
 * NameOwnerChanged, NameAcquired and NameLost are built here from the
 * kernel's name and id notifications, and the NoReply error of a call
 * whose callee timed out or went away from its REPLY_TIMEOUT and
 * REPLY_DEAD.  The bus's driver (org.freedesktop.DBus) is not a peer on
 * the kernel bus: a message to it is refused with -EOPNOTSUPP.
 *
 * Every function returns 0 (or a positive count) on success and a
 * negative errno on failure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/wire.h"

typedef struct NativePeer NativePeer;

/**
 * struct NativeMessage - one received message
 * @data:	the whole dbus1 message (header and body), with SENDER
 * @len:	its size
 * @h:		its parsed header (strings point into @data)
 * @fds:	the fds it carries, @n_fds of them; they belong to the message
 *		until the caller takes them (set the entries to -1)
 * @cookie:	the kdbus cookie (the sender's serial)
 *
 * Valid until native_message_clear().
 */
typedef struct NativeMessage {
	const uint8_t *data;
	size_t len;
	WireHeader h;
	int *fds;
	size_t n_fds;
	uint64_t cookie;
	/* private */
	uint64_t slice;		/* its slice in the pool, 0 for none */
	uint8_t *owned;		/* a message built or copied here */
} NativeMessage;

/**
 * native_peer_connect() - open @bus_path (/sys/fs/kdbus/<bus>/bus) and say
 * HELLO: a connection that takes fds, with the bus's bloom parameters
 * @description:	its CONN_DESCRIPTION, or NULL
 */
int native_peer_connect(const char *bus_path, const char *description, NativePeer **ret);

/** native_peer_free() - BYEBYE by closing; the fds of unread messages go */
NativePeer *native_peer_free(NativePeer *p);

/** native_peer_get_fd() - the connection's fd: readable when a message waits */
int native_peer_get_fd(const NativePeer *p);

/** native_peer_get_unique_name() - ":1.N", as every peer on the bus sees it */
const char *native_peer_get_unique_name(const NativePeer *p);

/** native_peer_get_id() - the kdbus connection id */
uint64_t native_peer_get_id(const NativePeer *p);

/** native_peer_next_serial() - a serial for the next message built */
uint32_t native_peer_next_serial(NativePeer *p);

/**
 * native_peer_request_name() - RequestName
 * @flags:	DBUS_NAME_FLAG_*
 * @ret_reply:	DBUS_REQUEST_NAME_REPLY_*
 *
 * Return: 0, or the kernel's refusal: -EPERM (the bus's policy), -EINVAL
 * (not a well-known name), -EMFILE (too many names).
 */
int native_peer_request_name(NativePeer *p, const char *name, uint32_t flags, uint32_t *ret_reply);

/**
 * native_peer_release_name() - ReleaseName
 * @ret_reply:	DBUS_RELEASE_NAME_REPLY_*
 */
int native_peer_release_name(NativePeer *p, const char *name, uint32_t *ret_reply);

/**
 * native_peer_add_match() - AddMatch of a dbus1 match rule: broadcasts
 * that pass its bloom mask are delivered by the kernel and tested against
 * the rule here; a rule that can match NameOwnerChanged also asks for the
 * kernel's name and id notifications.
 *
 * Return: 0, -EBADMSG (not a valid rule), -ENOMEM.
 */
int native_peer_add_match(NativePeer *p, const char *rule);

/** native_peer_remove_match() - RemoveMatch; -ENOENT if @rule was never added */
int native_peer_remove_match(NativePeer *p, const char *rule);

/**
 * native_peer_send() - send a dbus1 message (built with its serial, without
 * SENDER: the peer's unique name is written in)
 * @fds:	@n_fds fds for its UNIX_FDS field
 * @timeout_usec: for a call that expects a reply: how long the kernel
 *		waits for it before REPLY_TIMEOUT (0: 25 s, as libdbus)
 *
 * Return: 0, -EBADMSG (not a message), -EOPNOTSUPP (to the bus driver),
 * or the kernel's answer: -ESRCH or -ENXIO (no such destination),
 * -ECONNRESET (the destination is leaving the bus, or this peer), -EPERM
 * (refused by the policy), -EADDRNOTAVAIL (NO_AUTO_START to an
 * activatable name), -ENOBUFS, -EMLINK (too many calls pending).
 */
int native_peer_send(NativePeer *p, const uint8_t *msg, size_t len, const int *fds, size_t n_fds,
		     uint64_t timeout_usec);

/**
 * native_peer_call() - send a method call and wait for its answer (the
 * kernel's synchronous call)
 * @ret_reply:	the METHOD_RETURN or ERROR
 *
 * When no answer comes in time, or the callee goes away without one, the
 * answer is the NoReply error that libdbus gives a blocking call.  So is
 * a call to an activatable name whose service fails to start: the bus
 * answers a classic client's call with the reason (Spawn.ChildExited and
 * the like), but an activator may only PEEK and DROP what it holds, so
 * the kernel tells a native caller only that its call died (REPLY_DEAD).
 *
 * Return: 0, what native_peer_send() returns, -EINVAL (not a call that
 * expects a reply).
 */
int native_peer_call(NativePeer *p, const uint8_t *msg, size_t len, const int *fds, size_t n_fds,
		     uint64_t timeout_usec, NativeMessage *ret_reply);

/**
 * native_peer_receive() - the next message
 *
 * Broadcasts no rule of this peer matches are passed over (the kernel's
 * bloom filter is a prefilter), as are messages whose SENDER is not the
 * unique name of the connection that sent them.
 *
 * Return: 0 and *@ret filled in, -EAGAIN when nothing waits.
 */
int native_peer_receive(NativePeer *p, NativeMessage *ret);

/** native_message_clear() - give @m's slice back to the kernel, close its fds */
void native_message_clear(NativePeer *p, NativeMessage *m);

/**
 * native_peer_wait() - poll the connection until a message waits or
 * @timeout_msec passes (-1: forever)
 *
 * Return: 1 when readable, 0 on timeout.
 */
int native_peer_wait(NativePeer *p, int timeout_msec);

static inline void native_peer_freep(NativePeer **p) {
	if (*p)
		native_peer_free(*p);
}
