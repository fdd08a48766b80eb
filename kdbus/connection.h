/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * connection.h - userspace connections (kernel: kdbus_conn)
 *
 * DOC: connection lifetime
 *
 * HELLO links a connection on the bus (id table, connection list,
 * monitor list); it is "connected" until BYEBYE, kdbus_conn_close() or
 * kdbus_bus_close() disconnects it.  Disconnecting releases its names
 * (handing them on and moving messages back to activators), emits
 * ID_REMOVE, drops its queue (REPLY_DEAD for queued calls), answers
 * trackers it owed with REPLY_DEAD (EPIPE for synchronous waiters) and
 * removes its matches and policy entries.  The memory lives while
 * references exist: the handle, a pending wakeup, a blocked synchronous
 * send.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "kdbus/bus.h"
#include "kdbus/core.h"
#include "kdbus/hash.h"
#include "kdbus/match.h"
#include "kdbus/metadata.h"
#include "kdbus/pool.h"
#include "kdbus/queue.h"
#include "util/list.h"

typedef struct KdbusUser KdbusUser;
typedef struct KdbusNameOwner KdbusNameOwner;

struct KdbusConn {
	KdbusBackend backend;		/* first: see handle.h */
	uint32_t refs;
	KdbusBus *bus;
	uint64_t id;
	uint64_t flags;			/* KDBUS_HELLO_* */
	uint64_t attach_send;
	uint64_t attach_recv;
	bool connected;
	bool handle_closed;
	bool privileged;
	bool owner;
	bool wake_queued;

	KdbusHashNode id_node;
	List bus_link;
	List monitor_link;
	List kmatch_link;
	uint64_t bcast_stamp;		/* last broadcast round queued to us */
	struct KdbusPayload *offer;	/* kdbus_payload_offer(): for the next send */
	const uint8_t *offer_ptr;
	bool offer_taken;		/* a send adopted the offer */
	KdbusInflight *inflight;	/* kdbus_conn_set_inflight_limit(), or NULL */

	KdbusPool pool;
	KdbusQueue queue;
	uint64_t lost_count;

	List names;			/* KdbusNameOwner.conn_link */
	uint64_t n_names;
	/* kdbus_conn_close_id_first(): its departure is announced before
	 * its names go, in the order it asked for them */
	bool id_first;
	KdbusNameOwner *activator_of;
	/* kdbus_conn_defer_handover(): the activator whose messages wait */
	bool defer_handover;
	KdbusConn *handover_from;
	uint64_t handover_name_id;

	KdbusMatchDb match_db;

	List replies_out;		/* KdbusReply.requester_link */
	uint64_t n_replies_out;
	List replies_in;		/* KdbusReply.callee_link */

	List policy_entries;

	KdbusMeta meta;
	KdbusUser *user;
	KdbusUserCharge self_charge;	/* names, matches, replies on @user */
	KdbusHash quotas;		/* per sending uid: kdbus_conn_quota_charge() */
	uint64_t quota_bytes;		/* bytes of all queued messages with a sender */

	/* one-entry cache of kdbus_conn_policy_talk(this, peer) */
	uint64_t talk_cache_peer;
	uint64_t talk_cache_gen;
	bool talk_cache_ok;

	KdbusWakeupFn wakeup_fn;
	void *wakeup_userdata;
};

/**
 * kdbus_conn_lock() - begin a command of @conn (kdbus_bus_lock())
 * @conn:	the connection
 *
 * The bus lock is held on return either way: end with kdbus_bus_unlock().
 *
 * Return: 0, or -ECONNRESET when @conn is disconnected.
 */
static inline int kdbus_conn_lock(KdbusConn *conn) {
	kdbus_bus_lock(conn->bus);
	return conn->connected ? 0 : -ECONNRESET;
}

static inline bool kdbus_conn_is_ordinary(const KdbusConn *c) {
	return !(c->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR));
}
static inline bool kdbus_conn_is_activator(const KdbusConn *c) {
	return c->flags & KDBUS_HELLO_ACTIVATOR;
}
static inline bool kdbus_conn_is_policy_holder(const KdbusConn *c) {
	return c->flags & KDBUS_HELLO_POLICY_HOLDER;
}
static inline bool kdbus_conn_is_monitor(const KdbusConn *c) {
	return c->flags & KDBUS_HELLO_MONITOR;
}

/** kdbus_conn_ref() - one more reference (atomic). */
KdbusConn *kdbus_conn_ref(KdbusConn *conn);

/** kdbus_conn_unref() - drop a reference; the last frees. Return: NULL. */
KdbusConn *kdbus_conn_unref(KdbusConn *conn);

/** kdbus_conn_disconnect() - take @conn off the bus (bus locked). */
void kdbus_conn_disconnect(KdbusConn *conn);

/** kdbus_conn_update_match_links() - keep the bus's match lists in sync. */
void kdbus_conn_update_match_links(KdbusConn *conn);

/**
 * kdbus_conn_enqueue() - link a built entry into @conn's queue, waking
 * @conn if its queue was empty
 */
void kdbus_conn_enqueue(KdbusConn *conn, KdbusQueueEntry *e);

/**
 * kdbus_conn_move_messages() - move queued entries (and their trackers)
 * addressed to registration @name_id from @src to @dst, in sequence
 * order; entries that do not fit @dst are dropped and counted in @dst's
 * lost_count (their requesters get REPLY_DEAD)
 */
void kdbus_conn_move_messages(KdbusConn *dst, KdbusConn *src, uint64_t name_id);

/**
 * kdbus_conn_policy_talk() - whether @conn may talk to @to
 *
 * Owners (privileged or the bus creator's euid) and the same euid always
 * may; otherwise the policy db must grant TALK for a name @to owns, or,
 * when none of @to's names is covered by an entry, the bus's policy
 * fallback must be TALK or more.  The answer is cached per (@conn, @to)
 * until a name or policy changes (bus->talk_gen).
 */
bool kdbus_conn_policy_talk(KdbusConn *conn, KdbusConn *to);

/** kdbus_conn_policy_own() - whether @conn may own @name (entry, else fallback). */
bool kdbus_conn_policy_own(KdbusConn *conn, const char *name);

/* userspace implementations behind handle.c */
int kdbus_us_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret);
void kdbus_us_conn_close(KdbusConn *conn);
void kdbus_us_conn_close_id_first(KdbusConn *conn);
void kdbus_us_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata);
bool kdbus_us_conn_has_messages(KdbusConn *conn);
void kdbus_us_conn_defer_handover(KdbusConn *conn);
void kdbus_us_conn_finish_handover(KdbusConn *conn);
int kdbus_us_byebye(KdbusConn *conn, struct kdbus_cmd *cmd);
int kdbus_us_update(KdbusConn *conn, struct kdbus_cmd *cmd);
int kdbus_us_recv(KdbusConn *conn, struct kdbus_cmd_recv *cmd);
int kdbus_us_free(KdbusConn *conn, struct kdbus_cmd_free *cmd);
int kdbus_us_recv_batch(KdbusConn *conn, uint64_t *offsets, size_t max);
int kdbus_us_payload_new(KdbusBus *bus, size_t size, void **ret_handle, uint8_t **ret_data);
bool kdbus_us_payload_offer(KdbusConn *conn, void *handle, const void *ptr);
void kdbus_us_payload_release(KdbusBus *bus, void *handle);
bool kdbus_us_payload_unshared(KdbusBus *bus, void *handle);
int kdbus_us_free_batch(KdbusConn *conn, const uint64_t *offsets, size_t n);
int kdbus_us_conn_set_inflight_limit(KdbusConn *conn, uint64_t max_bytes, uint64_t max_fds);
bool kdbus_us_conn_inflight_full(KdbusConn *conn);
int kdbus_us_conn_info(KdbusConn *conn, struct kdbus_cmd_info *cmd);
int kdbus_us_name_owner(KdbusConn *conn, const char *name, uint64_t *ret_id, uint64_t *ret_flags);
int kdbus_us_reply_pending(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, bool drop);
int kdbus_us_list(KdbusConn *conn, struct kdbus_cmd_list *cmd);
int kdbus_us_name_acquire(KdbusConn *conn, struct kdbus_cmd *cmd);
int kdbus_us_name_release(KdbusConn *conn, struct kdbus_cmd *cmd);
int kdbus_us_match_add(KdbusConn *conn, struct kdbus_cmd_match *cmd);
int kdbus_us_match_remove(KdbusConn *conn, struct kdbus_cmd_match *cmd);
