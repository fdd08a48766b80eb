/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus.h - the kdbus command API
 *
 * One function per kdbus ioctl, taking the very structures of kdbus/kdbus.h.
 * Two backends implement it:
 *
 *  - KDBUS_BACKEND_USERSPACE: the in-process core (kdbus/bus.c,
 *    connection.c, names.c, ...).  It is the default, since kdbus never
 *    landed in Linux.
 *  - KDBUS_BACKEND_IOCTL: a thin wrapper around the real uapi on
 *    /sys/fs/kdbus (kdbus/ioctl.c), where the module exists.
 *
 * Every function returns 0 (or a documented positive value) on success and
 * a negative errno on failure, with the errno values of the kernel module
 * (kdbus-reference.md §1.14).  Structures are passed in and out exactly as
 * with ioctl(2): the caller fills size/flags/items, the backend writes the
 * return fields.
 *
 * DOC: the pool
 *
 * Results that the kernel places in the connection's pool (received
 * messages, CONN_INFO, LIST and HELLO items) are returned as an @offset and
 * must be released with kdbus_cmd_free().  kdbus_pool_ptr() turns an offset
 * into a pointer.  For the ioctl backend that is the mmap()ed pool plus the
 * offset.  For the userspace backend the pool base is address 0: an offset
 * *is* the address of the data, and every KDBUS_ITEM_PAYLOAD_OFF item of a
 * received message points straight at the one immutable copy of the payload
 * that all receivers of the message share.  The data stays valid until the
 * slice is freed.  The bytes are charged against each receiver's
 * @pool_size all the same, so quotas behave as with the kernel.
 *
 * DOC: wakeups and timeouts (userspace backend)
 *
 * The userspace core runs in the caller's process and owns no thread or
 * event loop.  A connection gets a wakeup callback (kdbus_conn_set_wakeup())
 * that stands in for POLLIN on the kdbus fd: it is called when the
 * connection's queue goes from empty to non-empty.  Callbacks never run
 * inside a command of the connection they concern's peer with core state
 * half-changed: the core collects them and runs them just before the
 * command that caused them returns (like kdbus_notify_flush()).  A callback
 * should only schedule work; it may issue commands, but on other
 * connections only.  Reply deadlines are run by the caller's event loop
 * through kdbus_bus_set_timer() and kdbus_bus_dispatch_timeouts().
 *
 * The core takes one bus-wide mutex per command, so threads may use it (the
 * conformance suite does, for KDBUS_SEND_SYNC_REPLY); the daemon itself is
 * single-threaded.
 *
 * DOC: identity of a connection (userspace backend)
 *
 * The bridge makes connections on behalf of its clients, so HELLO takes the
 * client's identity as the kernel's "faked credentials" items:
 * KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS, KDBUS_ITEM_AUXGROUPS,
 * KDBUS_ITEM_SECLABEL, KDBUS_ITEM_PID_COMM (all optional; missing ones are
 * taken from the calling process).  A connection is *privileged* when its
 * euid is 0 and the bus *owner* when privileged or its euid equals the
 * bus creator's, exactly as kdbus decides from the opener's credentials.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kdbus/kdbus.h"

typedef struct KdbusBus KdbusBus;
typedef struct KdbusConn KdbusConn;

/*
 * KDBUS_MSG_HANDED_OVER - set by the userspace core in the flags of a
 * received message that was moved between queues by a name handover (from
 * an activator to the new owner, or given back by an owner that released
 * the name).  Such a message was queued while no ordinary connection owned
 * its name, so the receiver's side was never checked when it was sent.  It
 * is never accepted in KDBUS_CMD_SEND, and the ioctl backend never sets it.
 */
#define KDBUS_MSG_HANDED_OVER (1ULL << 63)

/*
 * KDBUS_ITEM_MATCH_KEYS - userspace-backend extension item: one to
 * KDBUS_MATCH_KEYS_MAX uint64_t keys, exact values the caller derives from
 * a message (the userspace core gives them no meaning).
 *
 * In KDBUS_CMD_SEND of a signal it lists the keys the message has.  In
 * KDBUS_CMD_MATCH_ADD it is a rule: a message passes it only if it has
 * every key of the item.  Besides narrowing a match, a key is an index:
 * the core files a user match with a key under its first key, and a
 * broadcast looks up the matches filed under its own keys instead of
 * testing them by bloom bits, so that matches on other keys cost it
 * nothing (the bloom index serves the matches without a key).  The ioctl
 * backend does not know the item; callers add it only on the userspace
 * backend (kdbus_conn_is_userspace()).
 */
#define KDBUS_ITEM_MATCH_KEYS	0x0f00
#define KDBUS_MATCH_KEYS_MAX	8

typedef enum KdbusBackend {
	KDBUS_BACKEND_USERSPACE,
	KDBUS_BACKEND_IOCTL,
} KdbusBackend;

/**
 * struct KdbusLimits - tunable limits of a userspace bus
 *
 * The kernel's limits (ipc/kdbus/limits.h) are compile-time constants; the
 * userspace core takes them per bus, so that dbus-daemon's configurable
 * limits (<limit name="max_names_per_connection"> …) map onto it.  A zero
 * field means "the kernel's value" (given in brackets).
 *
 * @max_names_per_conn:		names owned or queued per connection [256]
 * @max_matches_per_conn:	matches (cookies) per connection [256]
 * @max_requests_pending:	pending replies a connection may wait for [128]
 * @max_msgs_per_conn:		messages queued on one connection [256]
 * @max_conns_per_user:		connections per uid [1024]
 * @max_fds_per_msg:		fds in one message [253]
 * @max_payload_size:		bytes of PAYLOAD_VEC in one message [2 MiB]
 * @max_msg_size:		size of struct kdbus_msg with its items [8 KiB]
 *
 * Per-user budgets (userspace extension, kdbus/user.h): what all
 * connections of one uid may hold together.  Messages are charged to the
 * receiver's user on behalf of the sender's, who gets only a share of
 * what is left; the rest to the connection's own user.
 * @max_bytes_per_user:		bytes queued on the user's connections [512 MiB]
 * @max_fds_per_user:		fds queued on the user's connections [4096]
 * @max_msgs_per_user:		messages queued on the user's connections [65536]
 * @max_names_per_user:		names owned or queued for [64 * max_names_per_conn]
 * @max_matches_per_user:	matches [64 * max_matches_per_conn]
 * @max_requests_per_user:	pending replies waited for [64 * max_requests_pending]
 */
typedef struct KdbusLimits {
	uint64_t max_names_per_conn;
	uint64_t max_matches_per_conn;
	uint64_t max_requests_pending;
	uint64_t max_msgs_per_conn;
	uint64_t max_conns_per_user;
	uint64_t max_fds_per_msg;
	uint64_t max_payload_size;
	uint64_t max_msg_size;
	uint64_t max_bytes_per_user;
	uint64_t max_fds_per_user;
	uint64_t max_msgs_per_user;
	uint64_t max_names_per_user;
	uint64_t max_matches_per_user;
	uint64_t max_requests_per_user;
} KdbusLimits;

typedef void (*KdbusWakeupFn)(KdbusConn *conn, void *userdata);
typedef void (*KdbusTimerFn)(KdbusBus *bus, uint64_t deadline_ns, void *userdata);

/**
 * struct KdbusFdWatch - the caller's event loop, for the ioctl backend
 * @add:	watch @fd for POLLIN, edge-triggered, and call
 *		kdbus_conn_fd_ready(@conn) when it fires; returns a handle for
 *		@remove, or NULL when it cannot
 * @remove:	stop the watch @add returned
 * @userdata:	their first argument
 *
 * On the ioctl backend a connection's wakeup callback
 * (kdbus_conn_set_wakeup()) is driven by its fd: the backend asks the
 * caller's loop to watch the fd while a callback is set.  A wakeup may
 * then come for each message queued rather than only when the queue stops
 * being empty: callbacks must take spurious wakeups.
 */
typedef struct KdbusFdWatch {
	void *(*add)(void *userdata, int fd, KdbusConn *conn);
	void (*remove)(void *userdata, void *handle);
	void *userdata;
} KdbusFdWatch;

/* ---- bus owner ("control fd") ------------------------------------------ */

/**
 * kdbus_cmd_bus_make() - KDBUS_CMD_BUS_MAKE: create a bus
 * @backend:	which implementation
 * @cmd:	flags KDBUS_MAKE_ACCESS_*, items KDBUS_ITEM_MAKE_NAME (required),
 *		KDBUS_ITEM_BLOOM_PARAMETER (required),
 *		KDBUS_ITEM_ATTACH_FLAGS_SEND (metadata every sender must allow)
 * @ret_bus:	the owner handle; the bus lives until kdbus_bus_close()
 *
 * Return: 0, -EINVAL (bad name or items), -EBADMSG (no bloom parameter),
 * -EEXIST (name taken), -ENOMEM, -ENOENT (ioctl backend: no kdbusfs).
 */
int kdbus_cmd_bus_make(KdbusBackend backend, struct kdbus_cmd *cmd, KdbusBus **ret_bus);

/**
 * kdbus_bus_close() - close the owner handle: every connection is
 * disconnected and the bus is freed once the last connection handle is
 * closed.  Accepts NULL, returns NULL.
 */
KdbusBus *kdbus_bus_close(KdbusBus *bus);

/**
 * kdbus_bus_trim() - free the blocks a userspace bus keeps for reuse
 * (queue entries, reply trackers), e.g. after a flood, so that malloc can
 * give the memory back; no-op on the ioctl backend
 */
void kdbus_bus_trim(KdbusBus *bus);

/**
 * kdbus_bus_set_limits() - replace the limits of a userspace bus
 *
 * Return: 0, -EOPNOTSUPP on the ioctl backend.
 */
int kdbus_bus_set_limits(KdbusBus *bus, const KdbusLimits *limits);

/**
 * kdbus_bus_set_policy_fallback() - WORLD access for what no policy entry
 * covers (userspace extension)
 * @access:	KDBUS_POLICY_SEE, _TALK or _OWN, or -1 for none (the kernel's
 *		behaviour, and the default)
 *
 * With kdbus, a connection that is not the bus owner can own no name and
 * talk to no other user's connection unless a policy holder or activator
 * grants it.  The bridge enforces dbus-daemon's XML policy, in which
 * anything may be allowed to anyone; the fallback is what a non-owner gets
 * for a name without a policy entry (NAME_ACQUIRE) and for a destination
 * none of whose names has an entry, including one that owns no names
 * (TALK).  Entries, where they exist, still decide.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP on the ioctl backend.
 */
int kdbus_bus_set_policy_fallback(KdbusBus *bus, int access);

/**
 * kdbus_bus_set_broadcast_fds() - let broadcasts carry fds (userspace
 * extension)
 * @enable:	false for the kernel's behaviour, and the default: SEND of a
 *		broadcast with KDBUS_ITEM_FDS fails with -ENOTUNIQ
 *
 * dbus1 signals may carry fds.  When enabled, every receiver that
 * accepts fds (KDBUS_HELLO_ACCEPT_FD) gets its own copies, charged to
 * its quotas as for a unicast; a receiver that does not accept fds does
 * not get the broadcast at all, as with dbus-daemon.  Monitors get the
 * fds as for unicasts.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP on the ioctl backend.
 */
int kdbus_bus_set_broadcast_fds(KdbusBus *bus, bool enable);

/**
 * kdbus_bus_set_timer() - register the callback that (re)arms the caller's
 * timer for the earliest reply deadline of the bus.  It is called whenever
 * that deadline moves earlier; a deadline of 0 means none.
 */
void kdbus_bus_set_timer(KdbusBus *bus, KdbusTimerFn fn, void *userdata);

/**
 * kdbus_bus_dispatch_timeouts() - expire reply trackers whose deadline is at
 * or before @now_ns (CLOCK_MONOTONIC): each requester gets its
 * KDBUS_ITEM_REPLY_TIMEOUT notification.
 *
 * Return: the next deadline, or 0 if there is none.
 */
uint64_t kdbus_bus_dispatch_timeouts(KdbusBus *bus, uint64_t now_ns);

/* ---- connections ---------------------------------------------------------- */

/**
 * kdbus_cmd_hello() - KDBUS_CMD_HELLO: open a connection on @bus
 * @bus:	the bus (the userspace backend needs no endpoint file)
 * @cmd:	flags KDBUS_HELLO_*, attach flags, pool_size; items
 *		CONN_DESCRIPTION, NAME + POLICY_ACCESS (activator, policy
 *		holder), and the identity items described above
 * @ret_conn:	the connection handle
 *
 * On success @cmd->id, bus_flags, id128, offset and items_size are set; the
 * slice at @offset holds a KDBUS_ITEM_BLOOM_PARAMETER item and must be freed.
 *
 * Return: 0, -EINVAL, -EFAULT (bad pool size), -EPERM (role needs
 * privilege), -ECONNREFUSED (required metadata refused), -EMFILE (too many
 * connections for this user), -EEXIST (activator name taken), -ENOMEM.
 */
int kdbus_cmd_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn);

/**
 * kdbus_bus_open_endpoint() - open the bus's endpoint file (ioctl backend)
 *
 * A kernel connection has the credentials of its fd's opener: a process
 * that opens the file as one user and lets another say HELLO on it (fd
 * passing, fork) makes a connection of the first.
 *
 * Return: the fd (close-on-exec, non-blocking) or a negative errno;
 * -EOPNOTSUPP on the userspace backend, whose connections have no file.
 */
int kdbus_bus_open_endpoint(KdbusBus *bus);

/**
 * kdbus_bus_endpoint_path() - the bus's endpoint file
 * (/sys/fs/kdbus/<bus>/bus), where native peers say HELLO; NULL on the
 * userspace backend
 */
const char *kdbus_bus_endpoint_path(KdbusBus *bus);

/**
 * kdbus_cmd_hello_fd() - kdbus_cmd_hello() on @fd, from
 * kdbus_bus_open_endpoint() (perhaps in another process); takes @fd in
 * every case.  -EOPNOTSUPP on the userspace backend.
 */
int kdbus_cmd_hello_fd(KdbusBus *bus, int fd, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn);

/*
 * KDBUS_HELLO_HIDDEN_ID - an extension of the userspace backend to
 * kdbus_cmd_hello()'s flags: the connection takes its id from a second
 * sequence that starts at KDBUS_ID_HIDDEN_BASE, so that the ids of the
 * other connections count 1, 2, 3... without gaps whatever helper
 * connections the bus owner opens in between.  The ioctl backend drops the
 * flag (the kernel knows no such thing).
 */
#define KDBUS_HELLO_HIDDEN_ID	(1ULL << 48)
#define KDBUS_ID_HIDDEN_BASE	(1ULL << 62)

/**
 * kdbus_conn_close() - close the connection handle (close(2) of its fd):
 * the connection is disconnected if it still is, its queue is dropped and
 * every method call still queued or unanswered gets KDBUS_ITEM_REPLY_DEAD
 * to its requester; names are released (handing them to waiters or
 * activators).  Accepts NULL, returns NULL.
 */
KdbusConn *kdbus_conn_close(KdbusConn *conn);

/**
 * kdbus_conn_close_id_first() - kdbus_conn_close(), but the connection's
 * KDBUS_ITEM_ID_REMOVE comes before its names are released, and those go
 * in the order it acquired them (a userspace extension: the order in
 * which dbus-daemon releases the names of a connection that becomes a
 * monitor).  The ioctl backend closes as kdbus_conn_close().
 */
KdbusConn *kdbus_conn_close_id_first(KdbusConn *conn);

/**
 * kdbus_conn_set_wakeup() - the POLLIN callback of a connection (see
 * "wakeups"); NULL removes it.  On the ioctl backend the connection's fd
 * is watched meanwhile through the bus's KdbusFdWatch, if it has one
 * (kdbus_bus_set_fd_watch()); without one, kdbus_conn_get_fd() is the
 * caller's to poll.
 */
void kdbus_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata);

/** kdbus_kernel_available() - whether kdbusfs is mounted (/sys/fs/kdbus/control). */
bool kdbus_kernel_available(void);

/**
 * kdbus_bus_set_fd_watch() - the event loop that watches the fds of the
 * bus's connections (ioctl backend; a no-op on the userspace core, whose
 * wakeups need none).  Set it before the first kdbus_conn_set_wakeup().
 */
void kdbus_bus_set_fd_watch(KdbusBus *bus, const KdbusFdWatch *watch);

/**
 * kdbus_conn_fd_ready() - the connection's fd became readable: its
 * wakeup callback runs (ioctl backend; called by the KdbusFdWatch).
 */
void kdbus_conn_fd_ready(KdbusConn *conn);

/** kdbus_conn_get_fd() - the fd to poll (ioctl backend), -1 otherwise. */
int kdbus_conn_get_fd(KdbusConn *conn);

/** kdbus_conn_get_id() - the connection id returned by HELLO. */
uint64_t kdbus_conn_get_id(KdbusConn *conn);

/**
 * kdbus_conn_defer_handover() - let @conn's next NAME_ACQUIRE that takes a
 * name from its activator leave the activator's messages where they are
 * until kdbus_conn_finish_handover() (userspace backend; a no-op for the
 * ioctl backend).
 *
 * For a bridge that answers the acquire on @conn's behalf: it queues its
 * answer first, then finishes the handover, so that @conn reads the answer
 * before the messages it is handed, as a native client does (its ioctl
 * returns before it RECVs them).  Nothing may be sent to the name between
 * the two calls.
 */
void kdbus_conn_defer_handover(KdbusConn *conn);

/**
 * kdbus_conn_finish_handover() - move the messages of a deferred handover
 * to @conn (in order, with their trackers), and stop deferring.
 */
void kdbus_conn_finish_handover(KdbusConn *conn);

/**
 * kdbus_conn_has_messages() - whether RECV would return a message now
 * (userspace backend; the ioctl backend polls its fd).
 */
bool kdbus_conn_has_messages(KdbusConn *conn);

/*
 * KDBUS_SEND_RETURN_INFLIGHT_FULL - set by the userspace core in
 * kdbus_cmd_send()'s @return_flags (whatever the result) when the sending
 * connection's in-flight charge is at or over its limit after the command
 * (kdbus_conn_set_inflight_limit()).
 */
#define KDBUS_SEND_RETURN_INFLIGHT_FULL (1ULL << 63)

/**
 * kdbus_conn_set_inflight_limit() - limit what @conn has in flight
 * @max_bytes:	payload bytes
 * @max_fds:	fds (counted once per message, however many receivers)
 *
 * Userspace-backend extension, for a bus daemon that stops reading a
 * client while too much of what it sent is still on its way, as
 * dbus-daemon does with max_incoming_bytes and max_incoming_unix_fds.
 * Every message @conn sends is charged its payload bytes and fds until the
 * last of its receivers freed it (or lost it: a receiver that goes away, a
 * broadcast that nobody matched).  The core refuses nothing on that
 * account: SEND reports KDBUS_SEND_RETURN_INFLIGHT_FULL once the charge is
 * at or over a limit, and then @conn's wakeup callback runs when it drops
 * below both again (kdbus_conn_inflight_full() says which).
 *
 * Return: 0, -ECONNRESET, -ENOMEM, -EOPNOTSUPP on the ioctl backend.
 */
int kdbus_conn_set_inflight_limit(KdbusConn *conn, uint64_t max_bytes, uint64_t max_fds);

/* whether @conn's in-flight charge is at or over its limit; if so, the
 * wakeup callback runs when it drops below (false on the ioctl backend) */
bool kdbus_conn_inflight_full(KdbusConn *conn);

/**
 * kdbus_payload_new() - a payload buffer the sender fills itself
 * @size:       bytes at @ret_data
 * @ret_handle: the buffer, for kdbus_payload_offer() and _release()
 * @ret_data:   where to put the bytes (8-aligned)
 *
 * Userspace-backend extension, like KDBUS_ITEM_PAYLOAD_MEMFD but in the
 * process: a bus daemon reads messages into such a buffer, offers it to
 * the sending connection (kdbus_payload_offer(conn, handle, ptr)) and
 * sends with PAYLOAD_VECs that are exactly the bytes from @ptr (8-aligned)
 * on, one after the other.  KDBUS_CMD_SEND then takes the whole buffer as
 * the message's payload, by reference, instead of copying the vecs; the 8
 * bytes before @ptr must be in the buffer and become the core's.  Any
 * other send copies as usual.  An offer holds for one send: the caller
 * then clears it, kdbus_payload_offer(conn, NULL, NULL), which returns
 * whether the send took the buffer; if so its bytes must never change
 * again.  kdbus_payload_release() drops the caller's reference.
 *
 * Return: 0, -EOPNOTSUPP (ioctl backend), -EMSGSIZE, -ENOMEM.
 */
int kdbus_payload_new(KdbusBus *bus, size_t size, void **ret_handle, uint8_t **ret_data);
bool kdbus_payload_offer(KdbusConn *conn, void *handle, const void *ptr);
void kdbus_payload_release(KdbusBus *bus, void *handle);
/* whether the caller's is the only reference left: every message that
 * took the buffer is gone, and it may be written again */
bool kdbus_payload_unshared(KdbusBus *bus, void *handle);

/**
 * kdbus_payload_id() - which payload a received message carries
 * @offset: the offset of a KDBUS_ITEM_PAYLOAD_OFF item of a message that
 *          @conn received and has not freed
 *
 * Userspace-backend extension: every receiver of a message shares one
 * payload (see "the pool"), and this returns its number, unique on the bus
 * for its lifetime, so that a receiver can reuse what it derived from the
 * bytes for another receiver of the same message.
 *
 * Return: the id, or 0 (ioctl backend, or @offset 0).
 */
static inline uint64_t kdbus_payload_id(KdbusConn *conn, uint64_t offset);

/**
 * kdbus_pool_ptr() - the address of pool @offset of @conn (see "the pool").
 */
static inline void *kdbus_pool_ptr(KdbusConn *conn, uint64_t offset);

/* both on the message path: inline for the userspace backend (handle.h:
 * every handle starts with its KdbusBackend) */
void *kdbus_pool_ptr_mapped(KdbusConn *conn, uint64_t offset);

static inline bool kdbus_conn_is_userspace(const KdbusConn *conn) {
	return *(const KdbusBackend *)(const void *)conn == KDBUS_BACKEND_USERSPACE;
}

static inline void *kdbus_pool_ptr(KdbusConn *conn, uint64_t offset) {
	/* the userspace pool's base is address 0 */
	if (conn && !kdbus_conn_is_userspace(conn))
		return kdbus_pool_ptr_mapped(conn, offset);
	return (void *)(uintptr_t)offset;
}

static inline uint64_t kdbus_payload_id(KdbusConn *conn, uint64_t offset) {
	uint64_t id;

	if (!conn || !kdbus_conn_is_userspace(conn) || !offset)
		return 0;
	/* the 8 bytes before a payload's bytes are its id (queue.h) */
	__builtin_memcpy(&id, (const uint8_t *)(uintptr_t)offset - 8, 8);
	return id;
}

/** KDBUS_CMD_BYEBYE. Return: 0, -EBUSY (queue not empty), -EALREADY, -EOPNOTSUPP. */
int kdbus_cmd_byebye(KdbusConn *conn, struct kdbus_cmd *cmd);

/** KDBUS_CMD_UPDATE: attach flags, or a policy holder's NAME/POLICY_ACCESS set (atomic). */
int kdbus_cmd_update(KdbusConn *conn, struct kdbus_cmd *cmd);

/**
 * kdbus_cmd_send() - KDBUS_CMD_SEND
 *
 * @cmd->msg_address points at a struct kdbus_msg whose items are
 * PAYLOAD_VEC (the dbus1 bytes, copied once), FDS (duplicated: the caller
 * keeps its own), DST_NAME, BLOOM_FILTER (broadcasts).  With
 * KDBUS_SEND_SYNC_REPLY the call blocks until the reply, a timeout or the
 * peer's death and returns the reply in @cmd->reply.
 *
 * Return: 0 or the errno of kdbus-reference.md §1.8 (ESRCH, ENXIO, EREMCHG,
 * EADDRNOTAVAIL, EPERM, EBADSLT, EMLINK, ENOBUFS, EXFULL, ECOMM,
 * ECONNRESET, ETIMEDOUT, EPIPE, ECANCELED, EMSGSIZE, EINVAL, EBADMSG,
 * ENOTUNIQ, EDOM, EDESTADDRREQ, EEXIST, E2BIG, EMFILE); userspace
 * extension: EDQUOT, the sender's user is over its share of the
 * receiver's or of the receiver's user's budget (kdbus/user.h).
 */
int kdbus_cmd_send(KdbusConn *conn, struct kdbus_cmd_send *cmd);

/**
 * kdbus_cmd_recv() - KDBUS_CMD_RECV: dequeue (or PEEK, or DROP) the next
 * message.  FDs are installed in the caller (userspace backend: the caller
 * owns the fds of KDBUS_ITEM_FDS and must close them).
 *
 * Return: 0, -EAGAIN (empty), -ENOMSG (nothing at this priority),
 * -ECONNRESET, -EOPNOTSUPP.  Lost broadcasts are reported with
 * KDBUS_RECV_RETURN_DROPPED_MSGS and @cmd->dropped_msgs.
 */
int kdbus_cmd_recv(KdbusConn *conn, struct kdbus_cmd_recv *cmd);

/** KDBUS_CMD_FREE. Return: 0, -ENXIO (no slice there), -EINVAL (not public). */
int kdbus_cmd_free(KdbusConn *conn, struct kdbus_cmd_free *cmd);

/**
 * kdbus_recv_batch() - up to @max KDBUS_CMD_RECV without flags at once
 * @offsets: the received messages' pool offsets, in queue order
 *
 * Userspace-backend extension (the ioctl backend loops over
 * KDBUS_CMD_RECV): one lock round for a batch of messages, which is what
 * a bus daemon that drains a queue into a socket needs.  Lost broadcasts
 * are not reported here; the next kdbus_cmd_recv() reports them.
 *
 * Return: how many were received (> 0), or what the first kdbus_cmd_recv()
 * would have failed with: -EAGAIN (empty), -ECONNRESET, -EOPNOTSUPP.
 */
int kdbus_recv_batch(KdbusConn *conn, uint64_t *offsets, size_t max);

/**
 * kdbus_free_batch() - KDBUS_CMD_FREE of @n messages kdbus_recv_batch()
 * took, under one lock (userspace-backend extension; the ioctl backend
 * loops).  The userspace core finds each message from its address instead
 * of looking the offset up, so @offsets must be kdbus_recv_batch()
 * results not yet freed (kdbus_cmd_free() takes those too, and anything
 * else).
 *
 * Return: 0, or -ENXIO if one of them was not such a message (the others
 * are freed).
 */
int kdbus_free_batch(KdbusConn *conn, const uint64_t *offsets, size_t n);

/**
 * kdbus_cmd_conn_info() - KDBUS_CMD_CONN_INFO
 *
 * Userspace extension: with KDBUS_ATTACH_NAMES, the names the connection
 * is queued for follow its owned names, as KDBUS_ITEM_OWNED_NAME items
 * flagged KDBUS_NAME_IN_QUEUE.
 *
 * Return: 0, -ESRCH (no such name), -ENXIO (no such id).
 */
int kdbus_cmd_conn_info(KdbusConn *conn, struct kdbus_cmd_info *cmd);

/**
 * kdbus_reply_pending() - does @conn owe connection @dst_id the reply to
 * its call @cookie (a tracker a reply with that cookie_reply would
 * consume)
 * @drop: if so, forget the call, as such a reply would (the tracker of a
 *        synchronous sender stays)
 *
 * Userspace-backend extension: a bus daemon that refuses a reply still
 * needs to know whether it was asked for, as dbus-daemon does.
 *
 * Return: 1 if so, 0 if not, -EOPNOTSUPP (ioctl backend), -ECONNRESET.
 */
int kdbus_reply_pending(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, bool drop);

/**
 * kdbus_name_owner() - who holds @name: the id and flags that
 * kdbus_cmd_conn_info() by name reports (the primary owner, else the
 * activator, whose flags have KDBUS_HELLO_ACTIVATOR), without a pool
 * slice to free (userspace-backend extension; the ioctl backend does the
 * CONN_INFO)
 *
 * Return: 0, -ESRCH (nobody holds it), -EINVAL (not a name),
 * -ECONNRESET.
 */
int kdbus_name_owner(KdbusConn *conn, const char *name, uint64_t *ret_id, uint64_t *ret_flags);

/**
 * kdbus_bus_names_generation() - a number that changes whenever a name's
 * owner or queue may have changed (userspace-backend extension), so that
 * what a caller derived from CONN_INFO's KDBUS_ATTACH_NAMES can be kept
 * while it stays the same
 *
 * Return: the generation, never 0; 0 on the ioctl backend (unknown:
 * nothing may be kept).
 */
uint64_t kdbus_bus_names_generation(KdbusBus *bus);

/** KDBUS_CMD_BUS_CREATOR_INFO. */
int kdbus_cmd_bus_creator_info(KdbusConn *conn, struct kdbus_cmd_info *cmd);

/**
 * kdbus_cmd_list() - KDBUS_CMD_LIST: array of struct kdbus_info in the pool,
 * one record per (connection, name) and one per name-less connection
 *
 * Userspace extension: with a KDBUS_ITEM_NAME item, only that name's
 * records are listed, owner first and then the waiters in queue order.
 */
int kdbus_cmd_list(KdbusConn *conn, struct kdbus_cmd_list *cmd);

/**
 * kdbus_cmd_name_acquire() - KDBUS_CMD_NAME_ACQUIRE (one KDBUS_ITEM_NAME)
 *
 * Return: 0 with KDBUS_NAME_PRIMARY|KDBUS_NAME_ACQUIRED or KDBUS_NAME_IN_QUEUE
 * in @cmd->return_flags; -EALREADY (already owner), -EEXIST (taken, no
 * queueing), -EPERM (policy), -EINVAL (bad name), -E2BIG (too many names),
 * -ECONNRESET.
 */
int kdbus_cmd_name_acquire(KdbusConn *conn, struct kdbus_cmd *cmd);

/** KDBUS_CMD_NAME_RELEASE. Return: 0, -ESRCH (no such name), -EADDRINUSE (owned by another). */
int kdbus_cmd_name_release(KdbusConn *conn, struct kdbus_cmd *cmd);

/** KDBUS_CMD_MATCH_ADD. Return: 0, -EINVAL, -EDOM (bloom size), -EMFILE (too many). */
int kdbus_cmd_match_add(KdbusConn *conn, struct kdbus_cmd_match *cmd);

/** KDBUS_CMD_MATCH_REMOVE. Return: 0, -EBADSLT (no match with this cookie). */
int kdbus_cmd_match_remove(KdbusConn *conn, struct kdbus_cmd_match *cmd);
