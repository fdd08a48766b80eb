/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * kdbus-client.h - the kdbus commands of the daemon, in its own words
 *
 * The daemon talks to the core (kdbus/bus.h) through these functions
 * instead of building item lists by hand: make the bus, HELLO a client
 * with its credentials or an activator for a name, send prebuilt dbus1
 * bytes, acquire and release names, install the matches it uses, list the
 * names a connection owns, and read what it receives (the parts of a
 * message, the core's notifications).  Like the core's API, every command
 * returns 0 on success and a negative errno on failure.
 *
 * The readers of a received message (its parts, its notifications) are on
 * the message path of every client and are inline (a macro for the parts).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "kdbus/bus.h"
#include "kdbus/kdbus.h"

/* the largest command structure the core takes (the kernel's
 * KDBUS_CMD_MAX_SIZE, kdbus/item.h) */
#define KCLIENT_CMD_MAX_SIZE (32 * 1024)

/* ---- the bus and its connections --------------------------------------- */

/* what every connection of the bus must send (HELLO's attach_flags_send):
 * the daemon decides the XML policy for native peers by their uid */
#define KCLIENT_REQUIRED_METADATA (KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS)

/**
 * kclient_bus_make() - KDBUS_CMD_BUS_MAKE with a bloom filter of
 * @bloom_size bytes and @bloom_n_hash hash functions, requiring
 * KCLIENT_REQUIRED_METADATA of every connection
 * @flags:	KDBUS_MAKE_ACCESS_*
 */
int kclient_bus_make(KdbusBackend backend, const char *name, uint64_t bloom_size, uint64_t bloom_n_hash,
		     uint64_t flags, KdbusBus **ret);

/**
 * struct KclientIdentity - who a connection is made for (HELLO's faked
 * credentials): the uid and gid stand for all four of each
 * @groups:	auxiliary groups, passed only when 1..256 of them
 * @label:	security label, passed only when shorter than 1024 bytes
 */
typedef struct KclientIdentity {
	uid_t uid;
	gid_t gid;
	bool have_pid;
	pid_t pid;
	const gid_t *groups;
	size_t n_groups;
	const char *label;
} KclientIdentity;

/**
 * kclient_hello() - KDBUS_CMD_HELLO of a connection that sends all
 * metadata and receives none
 * @flags:	KDBUS_HELLO_*
 * @identity:	the credentials the connection has, or NULL for the
 *		caller's own
 * @ret_id:	its id (may be NULL)
 *
 * The HELLO items in the pool are freed.
 */
int kclient_hello(KdbusBus *bus, uint64_t flags, uint64_t pool_size, const KclientIdentity *identity,
		  KdbusConn **ret, uint64_t *ret_id);

/**
 * kclient_hello_activator() - KDBUS_CMD_HELLO of an activator for @name
 * (KDBUS_HELLO_ACTIVATOR is added to @flags), with the caller's identity
 *
 * Return: as kclient_hello(), -EINVAL for a name longer than 255 bytes.
 */
int kclient_hello_activator(KdbusBus *bus, const char *name, uint64_t flags, uint64_t pool_size,
			    KdbusConn **ret);

/**
 * kclient_hello_activator_policy() - kclient_hello_activator() with the
 * policy entry of @name: @n_access POLICY_ACCESS grants (at most
 * KCLIENT_ACTIVATOR_MAX_ACCESS), as a policy holder would give them; the
 * final kdbus takes a name's entry from one owner only
 */
#define KCLIENT_ACTIVATOR_MAX_ACCESS 256
int kclient_hello_activator_policy(KdbusBus *bus, const char *name, const struct kdbus_policy_access *access,
				   size_t n_access, uint64_t flags, uint64_t pool_size, KdbusConn **ret);

/**
 * kclient_hello_policy_holder() - a policy holder (hidden) carrying
 * @items, @size bytes of NAME and POLICY_ACCESS items
 */
int kclient_hello_policy_holder(KdbusBus *bus, const void *items, size_t size, KdbusConn **ret);
/** kclient_update_items() - KDBUS_CMD_UPDATE of @conn with @items, @size bytes */
int kclient_update_items(KdbusConn *conn, const void *items, size_t size);

/* ---- connection info ----------------------------------------------------- */

/* what CONN_INFO tells of a connection's credentials */
typedef struct KclientConnCreds {
	uint64_t flags;		/* its KDBUS_HELLO_* */
	bool have_ids;		/* KDBUS_ITEM_CREDS: */
	uid_t uid;		/* the effective ids */
	gid_t gid;
	bool have_pid;
	pid_t pid;
	char comm[16];		/* KDBUS_ITEM_PID_COMM, "" without */
	gid_t *groups;		/* KDBUS_ITEM_AUXGROUPS, NULL without */
	size_t n_groups;
	char *label;		/* KDBUS_ITEM_SECLABEL, NULL without */
} KclientConnCreds;

/**
 * kclient_conn_creds() - KDBUS_CMD_CONN_INFO of connection @id, asked
 * through @via, with its credentials, pids, comm, groups and label
 * (kclient_conn_creds_done() frees them).  Return: as
 * kdbus_cmd_conn_info() (-ENXIO: no such connection)
 */
int kclient_conn_creds(KdbusConn *via, uint64_t id, KclientConnCreds *ret);
void kclient_conn_creds_done(KclientConnCreds *c);
/* whether connection @id exists, asked through @via */
bool kclient_conn_exists(KdbusConn *via, uint64_t id);

/* ---- sending ------------------------------------------------------------ */

/* what kclient_send() makes of a message before it goes */
enum {
	/* a plain unicast: no reply expected, not a signal, answering
	 * nothing (monitors' copies, what is refused, unrequested replies) */
	KCLIENT_SEND_PLAIN = 1 << 0,
	/* no reply tracker: not EXPECT_REPLY (its timeout stays unless
	 * KCLIENT_SEND_NO_TIMEOUT) */
	KCLIENT_SEND_NO_TRACKER = 1 << 1,
	KCLIENT_SEND_NO_TIMEOUT = 1 << 2,
	/* not a reply: no cookie_reply (the dbus1 header keeps its
	 * REPLY_SERIAL) */
	KCLIENT_SEND_NOT_REPLY = 1 << 3,
};

/**
 * kclient_send() - KDBUS_CMD_SEND of @m (built by compat/message.c's
 * message_kmsg_build() or message_kmsg_bytes()), changed first as @how
 * says (KCLIENT_SEND_*: the changes stay in @m, for a second try)
 * @ret_return_flags:	the command's return flags (KDBUS_SEND_RETURN_*), or NULL
 *
 * The one way the daemon sends a message it built; inline, and @how a
 * constant at each call, so that it costs what the open-coded send cost.
 * Return: as kdbus_cmd_send().
 */
static inline int kclient_send(KdbusConn *conn, struct kdbus_msg *m, unsigned how, uint64_t *ret_return_flags) {
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) m };
	int r;

	if (how & KCLIENT_SEND_PLAIN) {
		m->flags &= ~(uint64_t) (KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_SIGNAL);
		m->cookie_reply = 0;
	}
	if (how & KCLIENT_SEND_NO_TRACKER)
		m->flags &= ~(uint64_t) KDBUS_MSG_EXPECT_REPLY;
	if (how & KCLIENT_SEND_NO_TIMEOUT)
		m->timeout_ns = 0;
	if (how & KCLIENT_SEND_NOT_REPLY)
		m->cookie_reply = 0;
	r = kdbus_cmd_send(conn, &cmd);
	if (ret_return_flags)
		*ret_return_flags = cmd.return_flags;
	return r;
}

/**
 * kclient_send_bytes() - KDBUS_CMD_SEND of a whole dbus1 message as a
 * plain unicast (no flags)
 * @dst_id:	the receiving connection, or KDBUS_DST_ID_NAME with @dst_name
 * @dst_name:	the well-known name for KDBUS_DST_ID_NAME, else NULL
 * @cookie_reply: the call this answers, or 0
 * @msg:	header and body, @len bytes
 * @fds:	@n_fds fds to pass along (at most KCLIENT_SEND_MAX_FDS)
 *
 * Return: as kdbus_cmd_send(), -EINVAL for a name longer than 255 bytes
 * or too many fds.
 */
#define KCLIENT_SEND_MAX_FDS 253
int kclient_send_bytes(KdbusConn *conn, uint64_t dst_id, const char *dst_name, uint64_t cookie,
		       uint64_t cookie_reply, const void *msg, size_t len, const int *fds, size_t n_fds);

/* ---- names -------------------------------------------------------------- */

/**
 * kclient_name_acquire() - KDBUS_CMD_NAME_ACQUIRE of @name
 * @flags:	KDBUS_NAME_*
 * @ret_flags:	the command's return_flags (may be NULL; written on failure
 *		too)
 *
 * Return: as kdbus_cmd_name_acquire(), -EINVAL for a name longer than 255
 * bytes.
 */
int kclient_name_acquire(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags);

/** kclient_name_release() - KDBUS_CMD_NAME_RELEASE, as kclient_name_acquire() */
int kclient_name_release(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags);

/*
 * kclient_name_owner() - who owns well-known @name in dbus1 terms, asked
 * through connection @via: *ret_id is the owner's id, or 0 when only an
 * activator holds the name (activators and waiters are not owners).
 * Return: 0, -ESRCH when nobody holds it, not even an activator (or it is
 * not a name).
 */
int kclient_name_owner(KdbusConn *via, const char *name, uint64_t *ret_id);

/**
 * KclientNameFn - called for one name a connection owns or is queued for
 * @flags:	its KDBUS_NAME_* flags (IN_QUEUE, ACTIVATOR, ...)
 *
 * Return: 0 to go on, a negative errno to stop.
 */
typedef int (*KclientNameFn)(const char *name, uint64_t flags, void *userdata);

/**
 * kclient_info_names() - the names of a kdbus_info (OWNED_NAME items), in
 * the order the connection asked for them
 * @skip_flags:	names with any of these KDBUS_NAME_* flags are left out
 *
 * Return: 0, or what @fn returned to stop.
 */
int kclient_info_names(const struct kdbus_info *info, uint64_t skip_flags, KclientNameFn fn, void *userdata);

/**
 * kclient_conn_names() - KDBUS_CMD_CONN_INFO of connection @id asked on
 * @via, and its names as kclient_info_names()
 *
 * Return: 0, the command's error (@fn not called) or what @fn returned.
 */
int kclient_conn_names(KdbusConn *via, uint64_t id, uint64_t skip_flags, KclientNameFn fn, void *userdata);

/**
 * kclient_conn_names_strv() - kclient_conn_names() appending copies of the
 * names to the NULL-terminated list *@strv (of length *@n, if @n is given)
 *
 * Return: as kclient_conn_names(); -ENOMEM keeps what was appended before.
 */
int kclient_conn_names_strv(KdbusConn *via, uint64_t id, uint64_t skip_flags, char ***strv, size_t *n);

/**
 * kclient_list() - KDBUS_CMD_LIST
 * @flags:	KDBUS_LIST_*
 * @name:	only the owner and waiters of this name, or NULL
 * @ret_offset:	where the kdbus_info records are in the pool (free with
 *		kdbus_cmd_free())
 * @ret_size:	their size in bytes
 *
 * Return: as kdbus_cmd_list(), -EINVAL for a name longer than 255 bytes.
 */
int kclient_list(KdbusConn *conn, uint64_t flags, const char *name, uint64_t *ret_offset, uint64_t *ret_size);

/* ---- receiving ----------------------------------------------------------- */

/* KDBUS_CMD_FREE of what a command or RECV left at @offset of @conn's pool */
void kclient_free(KdbusConn *conn, uint64_t offset);

/* KDBUS_CMD_RECV with KDBUS_RECV_PEEK: the first message queued on @conn
 * stays queued, and *@ret_offset is where it is in the pool (free it with
 * kclient_free()).  Return: as kdbus_cmd_recv() (-EAGAIN: none queued) */
int kclient_recv_peek(KdbusConn *conn, uint64_t *ret_offset);
/* KDBUS_CMD_RECV with KDBUS_RECV_DROP: the first message queued goes
 * unread (a call's tracker with it).  Return: as kdbus_cmd_recv() */
int kclient_recv_drop(KdbusConn *conn);

/* a received message, in @conn's pool until the handler returns; a
 * non-zero return stops kclient_recv_each() (after the message is freed) */
typedef int (*KclientMsgFn)(KdbusConn *conn, struct kdbus_msg *m, void *userdata);

/**
 * kclient_recv_each() - RECV every message queued on @conn, hand each to
 * @fn and FREE it, until the queue is empty or @fn asks to stop
 *
 * Return: how many messages @fn was handed.
 */
size_t kclient_recv_each(KdbusConn *conn, KclientMsgFn fn, void *userdata);

/* ---- notifications and matches ------------------------------------------ */

/**
 * enum KclientNotifyType - what a core notification says
 */
typedef enum KclientNotifyType {
	KCLIENT_NAME_ADD = KDBUS_ITEM_NAME_ADD,
	KCLIENT_NAME_REMOVE = KDBUS_ITEM_NAME_REMOVE,
	KCLIENT_NAME_CHANGE = KDBUS_ITEM_NAME_CHANGE,
	KCLIENT_ID_ADD = KDBUS_ITEM_ID_ADD,
	KCLIENT_ID_REMOVE = KDBUS_ITEM_ID_REMOVE,
	KCLIENT_REPLY_TIMEOUT = KDBUS_ITEM_REPLY_TIMEOUT,
	KCLIENT_REPLY_DEAD = KDBUS_ITEM_REPLY_DEAD,
} KclientNotifyType;

/**
 * kclient_match_name_change() - KDBUS_CMD_MATCH_ADD of one name
 * notification
 * @type:	KCLIENT_NAME_ADD, _REMOVE or _CHANGE
 * @old_id:	the previous owner, or KDBUS_MATCH_ID_ANY
 * @new_id:	the new owner, or KDBUS_MATCH_ID_ANY
 */
int kclient_match_name_change(KdbusConn *conn, uint64_t cookie, KclientNotifyType type, uint64_t old_id,
			      uint64_t new_id);

/**
 * kclient_match_id_change() - KDBUS_CMD_MATCH_ADD of one id notification
 * @type:	KCLIENT_ID_ADD or _REMOVE
 * @id:		the connection, or KDBUS_MATCH_ID_ANY
 */
int kclient_match_id_change(KdbusConn *conn, uint64_t cookie, KclientNotifyType type, uint64_t id);

/**
 * kclient_match_bloom() - KDBUS_CMD_MATCH_ADD of a broadcast match
 * @mask:	the bloom mask, @bloom_size bytes (at most KCLIENT_BLOOM_MAX_SIZE)
 * @keys:	@n_keys match keys (KDBUS_ITEM_MATCH_KEYS, at most
 *		KDBUS_MATCH_KEYS_MAX); passed on the userspace backend only
 */
#define KCLIENT_BLOOM_MAX_SIZE 512
int kclient_match_bloom(KdbusConn *conn, uint64_t cookie, const uint64_t *mask, size_t bloom_size,
			const uint64_t *keys, size_t n_keys);

/**
 * kclient_match_remove() - KDBUS_CMD_MATCH_REMOVE of the matches under
 * @cookie
 */
int kclient_match_remove(KdbusConn *conn, uint64_t cookie);

/**
 * struct KclientNotify - one notification of a kernel message
 * @type:	what it says
 * @name:	NAME_*: the name
 * @old_id, @old_flags:	NAME_*: the previous owner (0: none) and its
 *			KDBUS_NAME_* flags
 * @new_id, @new_flags:	NAME_*: the new owner (0: none) and its flags
 * @id, @flags:	ID_*: the connection and its KDBUS_HELLO_* flags
 *
 * For REPLY_* the call is the message's cookie_reply.
 */
typedef struct KclientNotify {
	KclientNotifyType type;
	const char *name;
	uint64_t old_id, old_flags;
	uint64_t new_id, new_flags;
	uint64_t id, flags;
} KclientNotify;

/**
 * kclient_notify_next() - the next notification of kernel message @m
 * @cursor:	NULL before the first call; items that are no notification
 *		are passed over
 *
 * Return: true and *@ret filled in, false at the end.
 */
static inline bool kclient_notify_next(const struct kdbus_msg *m, const struct kdbus_item **cursor,
				       KclientNotify *ret) {
	const struct kdbus_item *first = m->items;
	const uint8_t *end = (const uint8_t *) m + m->size;
	const struct kdbus_item *it = *cursor ? KDBUS_ITEM_NEXT(*cursor) : first;

	for (; (const uint8_t *) it < end && (const uint8_t *) it >= (const uint8_t *) first;
	     it = KDBUS_ITEM_NEXT(it)) {
		*ret = (KclientNotify) { .type = (KclientNotifyType) it->type };
		switch (it->type) {
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE:
			ret->name = it->name_change.name;
			ret->old_id = it->name_change.old_id.id;
			ret->old_flags = it->name_change.old_id.flags;
			ret->new_id = it->name_change.new_id.id;
			ret->new_flags = it->name_change.new_id.flags;
			break;
		case KDBUS_ITEM_ID_ADD:
		case KDBUS_ITEM_ID_REMOVE:
			ret->id = it->id_change.id;
			ret->flags = it->id_change.flags;
			break;
		case KDBUS_ITEM_REPLY_TIMEOUT:
		case KDBUS_ITEM_REPLY_DEAD:
			break;
		default:
			continue;
		}
		*cursor = it;
		return true;
	}
	*cursor = it;
	return false;
}

/* ---- receiving ------------------------------------------------------------ */

/**
 * KCLIENT_MSG_PARTS() - the payload and fds of received message @m, read
 * into the caller's lvalues
 * @conn:	the receiving connection (its pool)
 * @iov:	an array with room for @max_iov payload slices (PAYLOAD_OFF
 *		items, in order, one where they follow each other in the pool
 *		as the kernel lays out the vecs of a message sent in pieces;
 *		those beyond @max_iov are left out)
 * @n_iov:	set to the number of slices put in @iov
 * @len:	set to the bytes of those slices
 * @first_offset: set to the pool offset of the first slice, 0 if none
 * @fds:	set to the message's fds (its FDS item; a message has at most
 *		one), NULL if none; they belong to the receiver
 * @n_fds:	set to how many
 *
 * A statement rather than a function taking pointers: on the message path
 * (client_slice_fill()) the outputs are fields of one struct, which the
 * compiler knows apart, so the loop costs what the hand-written one did.
 * Elsewhere kclient_msg_read() is simpler.
 */
#define KCLIENT_MSG_PARTS(conn_, m_, iov_, max_iov_, n_iov_, len_, first_, fds_, n_fds_)		\
	do {												\
		const struct kdbus_item *it_;								\
													\
		(n_iov_) = 0;										\
		(len_) = 0;										\
		(fds_) = NULL;										\
		(n_fds_) = 0;										\
		(first_) = 0;										\
		KDBUS_ITEM_FOREACH(it_, (m_), items) {							\
			if (it_->type == KDBUS_ITEM_PAYLOAD_OFF && (n_iov_) > 0 &&			\
			    (uint8_t *) (iov_)[(n_iov_) - 1].iov_base + (iov_)[(n_iov_) - 1].iov_len ==	\
			    (uint8_t *) kdbus_pool_ptr((conn_), it_->vec.offset)) {			\
				/* right after the previous one in the pool (the kernel	\
				 * puts each vec apart, 8-aligned): one slice */		\
				(iov_)[(n_iov_) - 1].iov_len += it_->vec.size;			\
				(len_) += it_->vec.size;						\
			} else if (it_->type == KDBUS_ITEM_PAYLOAD_OFF && (n_iov_) < (max_iov_)) {	\
				if ((n_iov_) == 0)							\
					(first_) = it_->vec.offset;					\
				(iov_)[(n_iov_)].iov_base = kdbus_pool_ptr((conn_), it_->vec.offset);	\
				(iov_)[(n_iov_)].iov_len = it_->vec.size;				\
				(len_) += it_->vec.size;						\
				(n_iov_)++;								\
			} else if (it_->type == KDBUS_ITEM_FDS) {					\
				(fds_) = (int *) it_->fds;						\
				(n_fds_) = (it_->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int);		\
			}										\
		}											\
	} while (0)

/**
 * struct KclientMsgParts - the first payload slice and the fds of a
 * received message (kclient_msg_read())
 * @payload:	the first slice ({ NULL, 0 } if none)
 * @n_iov:	1 if there is one, else 0
 * @len:	its size
 * @first_offset: its pool offset, 0 if none
 * @fds:	the message's fds, NULL if none; they belong to the receiver
 * @n_fds:	how many
 */
typedef struct KclientMsgParts {
	struct iovec payload;
	unsigned n_iov;
	size_t len;
	uint64_t first_offset;
	int *fds;
	unsigned n_fds;
} KclientMsgParts;

/** kclient_msg_read() - KCLIENT_MSG_PARTS() of the first slice and the fds */
static inline void kclient_msg_read(KdbusConn *conn, const struct kdbus_msg *m, KclientMsgParts *ret) {
	ret->payload = (struct iovec) {};
	KCLIENT_MSG_PARTS(conn, m, &ret->payload, 1u, ret->n_iov, ret->len, ret->first_offset, ret->fds,
			  ret->n_fds);
}
