/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.c - one classic D-Bus connection.
 *
 * Input: bytes are read into one buffer (recvmsg with SCM_RIGHTS), framed,
 * validated and handed on: before Hello to the SASL state machine, then
 * each message is header-rewritten (sender set, unknown fields dropped) and
 * SENT to the core with the body bytes as they came.  Messages to
 * org.freedesktop.DBus go to the driver's connection, and the driver runs
 * before the next message of this client is looked at, so a client's
 * messages take effect in order.
 *
 * Output: the core wakes the client when its queue becomes non-empty; the
 * client RECVs slices and writes them with one sendmsg() per batch,
 * straight from the payload the core shares between receivers.  While the
 * socket is full it stops RECVing, so messages wait in the core, where
 * quotas apply to their senders.
 *
 * The client module, in the order a message goes through it:
 *   client-io.c      the socket: read buffer, recvmsg(), framing, the output
 *                    ring, RECV from the core, sendmsg(), events and timers
 *   client-header.c  the headers received messages share, parsed once
 *   forward.c        one message from its frame to KDBUS_CMD_SEND
 *   client-policy.c  the send and receive policy, with its memos
 *   client-match.c   the client's match rules: kept, installed in the core,
 *                    checked against a message
 *   client-notify.c  the core's notifications as the driver's signals
 *   client.c         (this file) the lifecycle: accept, SASL, Hello, the
 *                    switch to a monitor, free
 * client-internal.h declares what they share among themselves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "compat/auth.h"
#include "compat/bloom.h"
#include "compat/kdbus-client.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "daemon/apparmor.h"
#include "daemon/bus.h"
#include "daemon/bus-hooks.h"
#include "daemon/call-overflow.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/selinux.h"
#include "daemon/monitor.h"
#include "util/format.h"
#include "util/macro.h"

void client_mark_hello_done(Client *c) {
	c->hello_done = true;
}

void client_set_wk_names_count(Client *c, uint32_t n) {
	Bus *bus = c->bus;

	bus_stats_wk_names(&bus->stats, c->stats.wk_names, n);
	c->stats.wk_names = n;
	stats_peak(&c->stats.peak_bus_names, 1 + (uint64_t) n);
}

/* give back one of our names (client_drop_conn()) */
static int client_release_name(const char *name, uint64_t flags, void *userdata) {
	(void) kclient_name_release(userdata, name, 0, NULL);
	return 0;
}

void client_drop_conn(Client *c) {
	/*
	 * BecomeMonitor: dbus-daemon releases the unique name and then the
	 * others in the order they were taken.  The in-process core does so
	 * on close; kdbus.ko releases a departing connection's names last
	 * taken first, so the names it owns go here first, oldest first
	 * (CONN_INFO's order; the queues it waits in it leaves on close,
	 * which nobody sees), and its unique name then goes last, which only
	 * the core can change: doc/deviations.md
	 */
	if (c->bus->on_kernel && c->conn)
		(void) kclient_conn_names(c->conn, c->id, KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE,
					  client_release_name, c->conn);
	client_registry_unregister(&c->bus->registry, c);
	c->conn = kdbus_conn_close_id_first(c->conn);
}

void client_become_monitor(Client *c, KdbusConn *mon, MatchRule **rules, size_t n) {
	c->conn = mon;
	c->state = CLIENT_MONITOR;
	client_registry_count_monitor(&c->bus->registry, c);
	c->monitor_rules = rules;
	c->n_monitor_rules = n;
	kdbus_conn_set_wakeup(c->conn, client_wakeup, c);
}

bool client_is_privileged(const Client *c) {
	return c->is_unix && (c->creds.uid == 0 || c->creds.uid == c->bus->euid);
}

static void client_creds_done(ClientCreds *cr) {
	free(cr->groups);
	free(cr->label);
	*cr = (ClientCreds) {};
}

/*
 * client_teardown() - everything of @c goes but the struct itself: its
 * names, matches and calls (what its departure causes is sent now, as
 * dbus-daemon sends it when it notices the disconnection), its buffers,
 * its core connection, its socket.  @c is CLIENT_CLOSED after.
 */
static void client_teardown(Client *c) {
	Bus *bus = c->bus;

	client_log_names_lost(c);

	client_registry_uncount(&bus->registry, c);
	bus_stats_wk_names(&bus->stats, c->stats.wk_names, 0);

	bus->hooks->client_forget(c);
	client_registry_remove(&bus->registry, c);
	bus_schedule_forget(c);

	client_drop_output(c);
	out_ring_free(&c->out);
	client_input_done(c);
	kernel_calls_done(&c->kernel_calls);

	client_matches_clear(c);
	for (size_t i = 0; i < c->n_monitor_rules; i++)
		match_rule_free(c->monitor_rules[i]);
	free(c->monitor_rules);
	c->monitor_rules = NULL;
	c->n_monitor_rules = 0;

	c->conn = kdbus_conn_close(c->conn);
	client_policy_done(c);
	owed_replies_done(&c->owed_replies);
	c->auth = auth_free(c->auth);
	client_events_free(c);
	c->fd = safe_close(c->fd);
	client_creds_done(&c->creds);
	bus_apparmor_client_done(c);
	free(c->loginfo);
	c->loginfo = NULL;
	c->state = CLIENT_CLOSED;

	bus->hooks->client_gone(bus);
}

Client *client_free(Client *c) {
	if (!c)
		return NULL;
	if (c->state != CLIENT_CLOSED)
		client_teardown(c);
	else
		bus_schedule_forget(c);	/* off the list of those to release */
	client_release(c);
	return NULL;
}

void client_release(Client *c) {
	free(c->loginfo);	/* (described once more after the teardown) */
	free(c);
}

/* client_close() - disconnect, logging the reason once */
void client_close(Client *c, const char *reason) {
	if (c->state == CLIENT_CLOSED)
		return;	/* once */
	/* dbus-daemon does not log why it closes a connection: debug only */
	if (reason)
		log_debug("Closing connection %s (%s): %s", client_name(c), client_loginfo(c), reason);
	/* as dbus-daemon, while it runs (not when it exits) */
	if (c->state == CLIENT_MONITOR)
		log_info("Monitoring connection %s closed.", c->unique_name);
	client_teardown(c);
	/* the struct goes later, from the loop: who called up to here may
	 * still look at it (it is CLIENT_CLOSED) */
	bus_schedule_release(c->bus, c);
}

int client_auth_step(Client *c) {
	size_t consumed = 0;
	int r = auth_feed(c->auth, c->in.buf, c->in.len, &consumed);

	client_input_consumed(c, consumed);

	/* send what SASL has to say */
	for (;;) {
		size_t l;
		const void *p = auth_output(c->auth, &l);
		if (!p || l == 0)
			break;
		ssize_t k = send(c->fd, p, l, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		auth_output_consume(c->auth, k);
	}
	if (r < 0)
		return r;
	if (r == AUTH_DONE) {
		if (!bus_policy_check_connect(c->bus, c))
			return -EACCES;
		c->unix_fd = auth_unix_fd_negotiated(c->auth);
		c->auth = auth_free(c->auth);
		/* auth_timeout runs on until Hello, as dbus-daemon's
		 * expiry of incomplete connections */
		c->state = CLIENT_AWAIT_HELLO;
	}
	return 0;
}

/* dbus-daemon's bus_connections_check_limits(), at Hello: 1 if the client
 * may register, 0 if it got a LimitsExceeded error instead */
int client_check_limits(Client *c, uint32_t serial) {
	Bus *bus = c->bus;
	_cleanup_free_ char *text = NULL;
	const char *limit_name;
	uint64_t limit;
	uint8_t *msg;
	size_t len;
	int r;

	if (bus->registry.n_complete >= bus->limits.max_completed_connections) {
		limit_name = "max_completed_connections";
		limit = bus->limits.max_completed_connections;
		if (asprintf(&text, "The maximum number of active connections has been reached") < 0)
			return -ENOMEM;
	} else {
		uint64_t n = 0;
		Client *o;
		if (!c->is_unix)
			return 1;
		list_for_each_entry(o, &bus->registry.all, link)
			if (o != c && o->is_unix && o->creds.uid == c->creds.uid &&
			    (o->state == CLIENT_ACTIVE || o->state == CLIENT_MONITOR))
				n++;
		if (n < bus->limits.max_connections_per_user)
			return 1;
		limit_name = "max_connections_per_user";
		limit = bus->limits.max_connections_per_user;
		if (asprintf(&text, "The maximum number of active connections for UID %u has been reached",
			     (unsigned) c->creds.uid) < 0)
			return -ENOMEM;
	}
	log_warning("%s (%s=%" PRIu64 ")", text, limit_name, limit);
	r = driver_build_error(c, serial, DBUS_ERR("LimitsExceeded"), text, &msg, &len);
	if (r < 0)
		return r;
	return client_send_owned(c, msg, len);
}

void client_nonce_accepted(Client *c) {
	c->state = CLIENT_AUTH;
}

int client_register(Client *c) {
	Bus *bus = c->bus;
	uint64_t pool = bus->limits.max_outgoing_bytes;
	int r;

	if (bus->registry.n_complete >= bus->limits.max_completed_connections)
		return -EMFILE;

	pool = pool < 16 * 1024 * 1024 ? 16 * 1024 * 1024 : pool;
	pool = pool > (1ULL << 40) ? (1ULL << 40) : pool;
	pool = ALIGN_TO(pool, (uint64_t) 4096);

	KclientIdentity identity = {
		.uid = c->creds.uid,
		.gid = c->creds.gid,
		.have_pid = c->creds.have_pid,
		.pid = c->creds.pid,
		.groups = c->creds.groups,
		.n_groups = c->creds.n_groups,
		.label = c->creds.label,
	};
	uint64_t hello_flags = c->unix_fd ? KDBUS_HELLO_ACCEPT_FD : 0;
	r = bus->registry.kernel_unprivileged ? -EPERM : kclient_hello(bus->kbus, hello_flags, pool, &identity, &c->conn, &c->id);
	if (r == -EPERM && bus->on_kernel) {
		/*
		 * kdbus.ko lets only a connection with CAP_IPC_OWNER stand for
		 * another (the final ABI): without it, as for a bus started
		 * as an ordinary user, the client's connection is the bus
		 * owner's, which the kernel's policy lets do anything, and
		 * the XML policy is the daemon's alone (it is anyway for
		 * classic clients: their credentials are the daemon's record)
		 */
		if (!bus->registry.kernel_unprivileged)
			log_info("Without CAP_IPC_OWNER the clients' kernel connections carry the bus's own credentials");
		client_registry_set_kernel_unprivileged(&bus->registry);
		r = kclient_hello(bus->kbus, hello_flags, pool, NULL, &c->conn, &c->id);
	}
	if (r < 0)
		return r;
	c->unique_name_len = message_unique_name_format(c->unique_name, c->id);
	/* dbus-daemon's dbus_connection_set_max_received_size() and
	 * _unix_fds(): what the client sent and is not yet written to every
	 * recipient (or dropped) holds its reading at these */
	r = kdbus_conn_set_inflight_limit(c->conn, bus->limits.max_incoming_bytes,
					  bus->limits.max_incoming_unix_fds);
	if (r < 0 && r != -EOPNOTSUPP)
		return r;
	/* dbus-daemon reads the command line at Hello: the process may be
	 * gone when the description is first needed */
	if (c->creds.have_pid)
		c->comm_len = (uint8_t) peer_command_read(c->creds.pid, c->comm);
	c->said_hello = true;
	PolicySnapshot *snap;
	r = client_policy_snapshot(c, bus->policy.xml, &snap);
	if (r < 0)
		return r;
	client_set_policy(c, snap);
	r = client_registry_register(&bus->registry, c);
	if (r < 0)
		return r;
	c->state = CLIENT_ACTIVE;
	bus->hooks->client_registered(bus);
	return 0;
}

/*
 * NameAcquired / NameLost come from the core's notifications about the
 * client's own names.  A connection can only own or queue for a name
 * after it asked for one, so the four notification matches are installed
 * on its first RequestName: most connections never ask, and their Hello
 * and goodbye cost four MATCH_ADDs and their removal less.
 */
int client_watch_own_names(Client *c) {
	static const KclientNotifyType types[] = { KCLIENT_NAME_ADD, KCLIENT_NAME_CHANGE, KCLIENT_NAME_CHANGE,
						   KCLIENT_NAME_REMOVE };
	int r;

	if (c->own_names_watched)
		return 0;
	if (!c->conn)
		return -ENOTCONN;
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		bool own_is_new = (i == 0 || i == 1);

		/* cookie 0: the client's own-name matches */
		r = kclient_match_name_change(c->conn, 0, types[i], own_is_new ? KDBUS_MATCH_ID_ANY : c->id,
					      own_is_new ? c->id : KDBUS_MATCH_ID_ANY);
		if (r < 0) {
			(void) kclient_match_remove(c->conn, 0);
			return r;
		}
	}
	c->own_names_watched = true;
	return 0;
}

int client_new(Client **ret, Bus *bus, int fd, bool is_unix, const uint8_t *nonce, const char *guid) {
	_cleanup_(client_freep) Client *c = NULL;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		safe_close(fd);
		return -ENOMEM;
	}
	c->bus = bus;
	c->fd = fd;
	c->is_unix = is_unix;
	c->nonce = nonce;
	c->state = nonce ? CLIENT_NONCE : CLIENT_AUTH;
	clock_gettime(CLOCK_MONOTONIC, &c->connect_time);
	list_init(&c->link);
	list_init(&c->ready_link);
	list_init(&c->yield_link);
	client_matches_init(c);
	client_registry_add(&bus->registry, c);

	if (is_unix) {
		PeerCreds pc;
		r = peer_creds_get_basic(fd, &pc);
		if (r < 0)
			return r;
		c->creds.pid = pc.pid;
		c->creds.have_pid = pc.pid > 0;
		c->creds.uid = pc.uid;
		c->creds.gid = pc.gid;
		c->creds.groups = TAKE_PTR(pc.groups);
		c->creds.n_groups = pc.n_groups;
		c->creds.have_groups = pc.have_groups;
		c->creds.label = TAKE_PTR(pc.label);
		peer_creds_done(&pc);
	}
	/* under SELinux, a connection without a label SELinux knows is
	 * refused, as dbus-daemon refuses it */
	r = bus_selinux_client_init(c);
	if (r < 0)
		return r;
	r = bus_apparmor_client_init(c);
	if (r < 0)
		return r;
	if (!is_unix) {
		c->creds.uid = (uid_t) -1;
		c->creds.gid = (gid_t) -1;
	}

	AuthConfig cfg = {
		.peer_uid = c->creds.uid,
		.peer_uid_known = is_unix,
		.unix_fd_possible = is_unix,
		.allow_anonymous = bus->allow_anonymous,
		.mechanisms = bus->auth_mechanisms,
		.guid_hex = guid,
	};
	r = auth_new(&c->auth, &cfg);
	if (r < 0)
		return r;

	r = client_events_new(c);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(c);
	return 0;
}
