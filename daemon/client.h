/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * client.h - one classic D-Bus connection (AF_UNIX or TCP) and, once it has
 * said Hello, its kdbus connection.  The client reads dbus1 frames,
 * validates them, rewrites the header (sender, header filtering) and SENDs
 * them to the core; in the other direction it RECVs pool slices and writes
 * them to the socket straight from the shared payload.
 */

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "compat/kdbus-client.h"
#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/call-overflow.h"
#include "daemon/client-describe.h"
#include "daemon/out-ring.h"
#include "daemon/owed-replies.h"
#include "daemon/peer-creds.h"
#include "util/list.h"

typedef struct Auth Auth;
typedef struct Bus Bus;
typedef struct ClientMatch ClientMatch;
typedef struct ClientHeaderCache ClientHeaderCache;
typedef struct ClientRbufPool ClientRbufPool;
typedef struct MatchRule MatchRule;
typedef struct Policy Policy;

typedef enum ClientState {
	CLIENT_NONCE,		/* nonce-tcp: waiting for the 16-byte nonce */
	CLIENT_AUTH,		/* SASL */
	CLIENT_AWAIT_HELLO,	/* authenticated, first message must be Hello */
	CLIENT_ACTIVE,
	CLIENT_MONITOR,
	CLIENT_CLOSED,
} ClientState;

typedef struct ClientCreds {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	bool have_groups;	/* the kernel gave them (SO_PEERGROUPS) */
	char *label;		/* SO_PEERSEC, or NULL */
	/* no pidfd: GetConnectionCredentials asks the socket (SO_PEERPIDFD
	 * names the process that connected), so that a connection is one fd */
	bool have_pid;
} ClientCreds;

typedef enum ClientInputState {
	CLIENT_INPUT_READ,
	CLIENT_INPUT_HELD,
	CLIENT_INPUT_RESUMED,
	CLIENT_INPUT_YIELDED,	/* on kdbus.ko, after a batch: client_yield_input() */
} ClientInputState;

/* what the bus read from a client and has not dispatched yet:
 * daemon/client-io.c alone writes it (forward.c and SASL take from it
 * through client_input_*()) */
typedef struct ClientInput {
	uint8_t *buf;
	size_t len, cap;
	void *handle;		/* buf is a core payload buffer (client_rbuf_new()) */
	bool given;		/* client_dispatch() gave buf to the core */
	int *fds;		/* the fds read with it, oldest first */
	size_t n_fds;
	/* CLIENT_INPUT_HELD: what the client sent and the bus still holds
	 * is at max_incoming_bytes / max_incoming_unix_fds; its socket is
	 * not read (nor the messages already read dispatched) until the core
	 * says it dropped below (kdbus_conn_set_inflight_limit()), and then
	 * (CLIENT_INPUT_RESUMED) what was read comes first */
	ClientInputState state;
} ClientInput;

/* a client's match rules: daemon/client-match.c alone writes them */
typedef struct ClientMatches {
	List list;		/* ClientMatch */
	size_t n;
	uint64_t next_cookie;
	size_t n_noc_rules;	/* rules that may match NameOwnerChanged */
	struct {		/* the last broadcast a header-only rule matched */
		uint64_t header_id, sender_id;	/* header_id 0: none */
	} memo;			/* cleared when a rule goes */
	uint32_t peak;		/* the most it had (Debug.Stats) */
} ClientMatches;

/* the policy as it applies to a client: daemon/client-policy.c alone
 * writes it */
typedef struct ClientPolicy {
	struct PolicySnapshot *snapshot;	/* the bus policy for this identity */
	struct {		/* the last broadcast the policy let through to us */
		uint64_t header_id, sender_id, generation, names_generation;
		const struct PolicySnapshot *policy;
	} memo;
	/* our names as the policy sees them (client_policy_names()), while
	 * kdbus_bus_names_generation() stays @names_gen */
	char **names;
	uint64_t names_gen;
} ClientPolicy;

/* a client's deadlines and the one timer that fires at the earliest:
 * daemon/client-io.c alone writes them */
typedef struct ClientTimers {
	struct event *ev;	/* fires at the earliest deadline below */
	/* CLOCK_MONOTONIC µs, 0: none */
	uint64_t hello;		/* auth_timeout from accept, until Hello */
	uint64_t fds;		/* pending_fd_timeout from when fds arrived */
	uint64_t stall;		/* a partial message that makes no progress */
	uint64_t armed_at;	/* when ev is armed for, 0: not armed */
	size_t stall_rlen;	/* in.len and the messages read when the timer */
	uint64_t stall_msgs;	/* was last looked at: progress restarts it */
} ClientTimers;

/* a client's figures, written only through client_stats_message_in()
 * (forward.c) and client_set_wk_names_count() (client.c) */
typedef struct ClientStats {
	uint64_t in_messages;	/* read from it (the stall deadline's progress) */
	uint32_t wk_names;	/* well-known names owned or queued for */
	uint32_t peak_bus_names;	/* the most names it had, its unique one too
					 * (GetConnectionStats' PeakBusNames) */
} ClientStats;

struct Client {
	Bus *bus;
	List link;		/* Bus.clients */
	List ready_link;	/* Bus.ready */
	List yield_link;	/* Bus.yielded */
	ClientState state;
	int fd;
	bool is_unix;
	bool unix_fd;		/* NEGOTIATE_UNIX_FD agreed */
	struct event *ev;	/* EV_READ (| EV_WRITE while output is blocked) */
	ClientTimers timers;	/* its deadlines (client-io.c) */
	bool want_write;
	const uint8_t *nonce;	/* nonce-tcp */

	ClientCreds creds;
	struct security_id *selinux_sid;	/* its label's SID (daemon/selinux.c), when SELinux is enabled */
	AppArmorLabel apparmor;	/* its label, split (daemon/apparmor.c), when AppArmor mediates */
	char *loginfo;		/* client_loginfo(), made when first asked for */
	bool said_hello;	/* ... which describes the client from Hello on */
	uint8_t comm_len;	/* /proc/PID/cmdline as read at Hello */
	char comm[PEER_COMMAND_MAX];
	struct timespec connect_time;	/* CLOCK_MONOTONIC, for the auth_timeout log */
	Auth *auth;
	ClientPolicy policy;	/* the policy for it (client-policy.c) */

	KdbusConn *conn;
	uint64_t id;
	char unique_name[24];
	size_t unique_name_len;
	uint64_t serial;	/* of messages the bus originates to this client:
				 * client_next_serial() */

	ClientInput in;		/* what it sent, read (client-io.c) */
	bool want_read;		/* ev has EV_READ */

	/* output */
	OutRing out;		/* daemon/out-ring.h */
	/* client_limit_output(): at most out_limit bytes not read by the peer
	 * (in its socket and the ring); the rest waits in the core */
	size_t out_limit;
	bool out_held;		/* held back: EV_WRITE says when the peer read */
	bool sndbuf_grown;	/* client_grow_sndbuf() */
	bool out_shut;		/* the peer no longer reads: client_write_shut() */

	ClientMatches matches;	/* its match rules (client-match.c) */
	bool hello_done;
	bool own_names_watched;	/* client_watch_own_names() */

	struct ClientBloomCache *bloom_cache;	/* the last broadcast's bloom filter */
	KernelCalls kernel_calls;	/* our calls in kdbus.ko's trackers (call-overflow.h) */
	OwedReplies owed_replies;	/* on kdbus.ko: the calls we were handed */
	bool handover_unchecked;	/* client_expect_handover() */
	bool kqueue_drained;		/* client_pull() found its kernel queue empty */

	MatchRule **monitor_rules;	/* BecomeMonitor */
	size_t n_monitor_rules;

	ClientStats stats;	/* its figures */
};

/* a message was read from @c */
static inline void client_stats_message_in(Client *c) {
	c->stats.in_messages++;
}

/* @guid: the GUID of the listener it came in on, sent with SASL's OK */
int client_new(Client **ret, Bus *bus, int fd, bool is_unix, const uint8_t *nonce, const char *guid);
/* read what a new connection already sent (a client writes its AUTH right
 * after connect()), instead of after the next poll; @c may be gone after */
void client_start(Client *c);
/* client_resume_yielded() - the input client_yield_input() stopped goes on
 * (bus_on_yield(), after the loop polled) */
void client_resume_yielded(Client *c);
/* client_free() - @c goes at once, with what its departure causes (the
 * bus's exit and a client_new() that failed; a closed client too) */
Client *client_free(Client *c);
/* client_close() - @c is disconnected now (what its departure causes is
 * sent, its socket closed) and is CLIENT_CLOSED; the struct is released
 * later from the loop (client_release(), bus_schedule_release()), so that
 * whoever called up to here may still look at it */
void client_close(Client *c, const char *reason);
/* the struct of a closed client goes (bus.c, from the loop) */
void client_release(Client *c);

/*
 * client_watch_own_names() - install the core matches that bring the
 * notifications about @c's own names (NameAcquired, NameLost); once, before
 * @c first asks for a name.  Return: 0 or the core's negative errno.
 */
int client_watch_own_names(Client *c);

/* the bus's pool of read buffers no client holds (Bus.rbuf_pool), made
 * with the bus and freed before its core */
int client_rbuf_pool_new(Bus *bus);
void client_rbuf_pool_free(Bus *bus);
/* ... and of the headers received messages share (Bus.header_cache) */
int client_header_cache_new(Bus *bus);
void client_header_cache_free(Bus *bus);

/* pull messages from the kdbus queue and write them to the socket */
void client_flush(Client *c);

/*
 * client_limit_output() - keep what this connection has not read in the
 * core rather than in its socket.  For the owner of an activatable name:
 * what the core still holds goes back to the activator, and to the next
 * instance, if the service dies; what is in its socket dies with it.
 */
void client_limit_output(Client *c);

/*
 * client_expect_handover() - @c took an activatable name on kdbus.ko, which
 * moved the messages its activator held into @c's queue without a mark
 * (the in-process core marks them KDBUS_MSG_HANDED_OVER): until @c's queue
 * is next empty, what comes to it by name passes its receive rules here
 */
void client_expect_handover(Client *c);

/* client_no_reply() - the bus's NoReply to @c's call @serial: its reply
 * timeout passed, or (@callee_gone) the callee left without replying */
void client_no_reply(Client *c, uint32_t serial, bool callee_gone);

/*
 * client_take_queue() - on kdbus.ko, a send to connection @id failed with
 * ENOBUFS: the kernel queues at most 256 messages of one user for a
 * connection, where dbus-daemon keeps a slow reader's messages up to
 * max_outgoing_bytes.  If @id is a client of ours, what its kernel queue
 * holds moves to its ring now (client_pull()), and it is flushed later.
 * Return: whether something moved (the send may be tried again).
 */
bool client_take_queue(Bus *bus, uint64_t id);

/*
 * client_take_queued() - move what the core holds for @c to its output ring
 * now (within the ring's limits, as client_flush() would), so that the
 * signals made from the core's notifications queued before get their
 * serials before the next message the bus numbers for @c.  For the
 * driver, between a name command and its reply: dbus-daemon numbers the
 * messages a call makes it send a connection in the order they are sent
 * (NameLost, NameAcquired, then the reply).
 */
void client_take_queued(Client *c);

/* move everything queued in the core to the output ring, without limit */
void client_drain(Client *c);

/* the core's POLLIN callback for client connections */
void client_wakeup(KdbusConn *conn, void *userdata);

/*
 * client_match_add() - @rule (taken, in any case) becomes the last of @c's
 * match rules: installed in the core under a cookie of its own (a bloom
 * mask, its match key, and the name and id notifications when it may
 * match NameOwnerChanged), counted in Debug.Stats' figures.  That an
 * eavesdrop rule makes @c an eavesdropper is the caller's
 * (monitor_eavesdropper_ref(), the driver's AddMatch and RemoveMatch).
 * Return: 0; -EXFULL when the core takes no more matches of @c (the rule
 * is not added); another negative errno (the rule is not added).
 */
int client_match_add(Client *c, MatchRule *rule);

/* client_match_remove() - the most recently added of @c's rules equal to
 * @rule goes, with its matches in the core.  Return: 0 or -ENOENT */
int client_match_remove(Client *c, const MatchRule *rule);

/* client_matches_init() - @c has no rules yet (client_new()) */
void client_matches_init(Client *c);
/* client_matches_clear() - all of @c's rules go (the core's matches go with
 * the connection they were installed on, which is closed) */
void client_matches_clear(Client *c);

/* client_match_foreach() - @fn for each of @c's rules in the order they
 * were added, until it returns non-zero; returns that, or 0 */
int client_match_foreach(Client *c, int (*fn)(const MatchRule *rule, void *userdata), void *userdata);

/* the serial of the next message the bus originates to @c (never 0);
 * Client.serial has no other writer */
static inline uint32_t client_next_serial(Client *c) {
	if (++c->serial == 0)
		++c->serial;
	return c->serial;
}
/* the serial client_next_serial() gives next, not taken */
static inline uint32_t client_peek_serial(const Client *c) {
	return (uint32_t) (c->serial + 1) ?: 1;
}

/*
 * client_drop_conn() - the first half of BecomeMonitor: @c's kdbus
 * connection is closed, its unique name going before its other names
 * (kdbus_conn_close_id_first()), and @c is no longer found by its id.  @c
 * keeps its unique name and state, without a connection, until
 * client_become_monitor() or client_close().
 */
void client_drop_conn(Client *c);

/*
 * client_become_monitor() - the second half: @c is a monitor on the
 * connection @mon (taken) with the rules @rules[@n] (taken), counted in
 * Bus.n_monitors (client_free() uncounts it), woken as any client.
 */
void client_become_monitor(Client *c, KdbusConn *mon, MatchRule **rules, size_t n);

/* client_mark_hello_done() - @c's Hello is answered (by the driver, or
 * directly at dispatch): another Hello is an error */
void client_mark_hello_done(Client *c);

/* client_set_wk_names_count() - @c owns or is queued for @n well-known
 * names (Debug.Stats): the bus's total and @c's peak (its unique name
 * counted) follow */
void client_set_wk_names_count(Client *c, uint32_t n);

/* whether one of @c's eavesdrop=true rules matches a unicast to someone else */
bool client_eavesdrop_matches(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			      uint64_t dst_id);
/* the policy for eavesdropping on @h from @sender_id: true may see it; a
 * refusal is shown to monitors */
bool client_policy_eavesdrop(Client *c, const WireHeader *h, Client *sender);

/* the driver sent @msg to @to: if @to's receive rules refuse it, show
 * monitors the AccessDenied error dbus-daemon synthesizes (from and to
 * org.freedesktop.DBus, in reply to @msg) */
void client_policy_capture_driver_refusal(Client *to, const uint8_t *msg, size_t len);

/* log the refusals of the NameLost signals dbus-daemon sends @c for each
 * of its names (its unique name last) when it disconnects or becomes a
 * monitor, if its receive rules deny them */
void client_log_names_lost(Client *c);

/* may @c receive @msg from the driver (its receive rules)? */
bool client_policy_receives_from_driver(Client *c, const uint8_t *msg, size_t len);

/* queue bytes the bus originates (driver replies, synthesized signals);
 * takes ownership of @msg */
int client_queue_owned(Client *c, uint8_t *msg, size_t len);
/* client_queue_owned(), then written out at once (answers of the bus to a
 * client that is not served through the core: before Hello, over limits) */
int client_send_owned(Client *c, uint8_t *msg, size_t len);

/* client_monitor_queue_signal() - a signal of the driver's @msg (taken)
 * for monitor @c, if its rules take it */
void client_monitor_queue_signal(Client *c, uint8_t *msg, size_t len);
/* whether one of @c's AddMatch rules (not its monitor rules) takes the
 * driver's signal @msg */
bool client_matches_driver_signal(Client *c, const uint8_t *msg, size_t len);
/* ... with @n_fds fds, which it closes once written; @fds must live in
 * @msg's allocation (it is freed with @msg) */
int client_queue_owned_fds(Client *c, uint8_t *msg, size_t len, int *fds, unsigned n_fds);


/* dbus-daemon's bus_driver_check_caller_is_privileged(): a unix peer that
 * is root or the bus's own uid */
bool client_is_privileged(const Client *c);

/* the policy snapshot for @c's identity under policy @p */
int client_policy_snapshot(Client *c, Policy *p, struct PolicySnapshot **ret);

/* @c's snapshot becomes @s (NULL: none), the old one is freed */
void client_set_policy(Client *c, struct PolicySnapshot *s);

DEFINE_CLEANUP(Client *, client_free);
