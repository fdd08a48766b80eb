/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/monitor.h"
#include "daemon/monitor-sink.h"
#include "util/format.h"
#include "util/macro.h"

static int monitor_hello(Bus *bus, KdbusConn **ret) {
	return kclient_hello(bus->kbus, KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_HIDDEN_ID,
			     64 * 1024 * 1024, NULL, ret, NULL);
}

/* the well-known names @c owns (not those it waits for), in the order it
 * asked for them; NULL-terminated, the caller frees it */
static char **monitor_owned_names(Client *c) {
	char **l = calloc(1, sizeof(char *));
	size_t n = 0;

	if (l)
		(void) kclient_conn_names_strv(c->conn, c->id, KDBUS_NAME_IN_QUEUE, &l, &n);
	return l;
}

/*
 * What the new monitor @c (unique name @unique) is sent as it loses
 * @name (NULL: its unique name), as dbus-daemon sends it: the NameLost to
 * it; when other monitors were there to capture them (@captured) and its
 * monitor rules (in before its names go) take them, the NameOwnerChanged
 * and the successor's NameAcquired; and the NameOwnerChanged again if its
 * own match rules (dropped after its names) take it.
 */
static void monitor_lose_name(Client *c, const char *unique, const char *name, bool captured) {
	char new_name[24] = "";
	uint64_t owner = 0;
	uint8_t *msg, *noc;
	size_t len, noc_len;

	if (driver_build_name_signal_to(c, unique, "NameLost", name ? name : unique, &msg, &len) >= 0)
		(void) client_queue_owned(c, msg, len);
	if (name && kclient_name_owner(c->conn, name, &owner) >= 0 && owner)
		message_unique_name_format(new_name, owner);
	if (driver_build_name_owner_changed(c, name ? name : unique, unique, new_name, &noc, &noc_len) < 0)
		return;
	if (captured && (msg = malloc(noc_len))) {
		memcpy(msg, noc, noc_len);
		client_monitor_queue_signal(c, msg, noc_len);
	}
	if (client_matches_driver_signal(c, noc, noc_len))
		(void) client_queue_owned(c, noc, noc_len);
	else
		free(noc);
	if (captured && new_name[0] &&
	    driver_build_name_signal_to(c, new_name, "NameAcquired", name, &msg, &len) >= 0)
		client_monitor_queue_signal(c, msg, len);
}

int monitor_become(Bus *bus, Client *c, MatchRule **rules, size_t n) {
	KdbusConn *mon = NULL;
	bool captured = bus->registry.n_monitors > 0;
	char **names;
	int r;

	/* what was already queued for the client (the BecomeMonitor reply
	 * among it) is written before it turns into a monitor */
	client_drain(c);

	names = monitor_owned_names(c);
	if (!names) {
		for (size_t i = 0; i < n; i++)
			match_rule_free(rules[i]);
		free(rules);
		return -ENOMEM;
	}

	client_set_wk_names_count(c, 0);

	/* closing the client's connection releases its names: everyone
	 * sees the unique name and then the others go, as with dbus-daemon */
	client_log_names_lost(c);
	client_drop_conn(c);

	/* the monitor connection comes after: what it sees of its own
	 * names going is made up below */
	r = monitor_hello(bus, &mon);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			match_rule_free(rules[i]);
		free(rules);
		strv_free(names);
		client_matches_clear(c);
		client_close(c, "cannot become a monitor");
		return 0;
	}
	client_become_monitor(c, mon, rules, n);

	/* as dbus-daemon: the monitor loses its unique name first, then the
	 * others in the order it got them, and is told so */
	monitor_lose_name(c, c->unique_name, NULL, captured);
	for (char **nm = names; *nm; nm++)
		monitor_lose_name(c, c->unique_name, *nm, captured);
	strv_free(names);
	monitor_forget_client(c->bus, c);	/* no eavesdropper any more */
	client_matches_clear(c);	/* it is a monitor now */
	log_info("Connection %s (%s) became a monitor.", c->unique_name, client_loginfo(c));
	return 0;
}

/* ---- eavesdropping ---------------------------------------------------------- */

typedef struct Eavesdrop {
	KdbusConn *conn;
	Client **clients;
	size_t n_clients;
	unsigned *refs;
} Eavesdrop;

static Eavesdrop *eavesdrop_of(Bus *bus) {
	return bus->eavesdrop;
}

/* monitors see that @c could not get @h's fds (dbus-daemon's
 * send_one_message()); the sender does not */
static void eavesdrop_capture_no_fds(Bus *bus, const struct kdbus_msg *km, const WireHeader *h, Client *c) {
	Client *sender = client_registry_find(&bus->registry, km->src_id);
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;

	if (!bus->registry.n_monitors || !sender)
		return;
	text = format("broadcast cannot be delivered to %s (%s) because it does not support receiving Unix fds",
		      c->unique_name, client_loginfo(c));
	if (text && driver_build_error(sender, h->serial, "org.freedesktop.DBus.Error.NotSupported", text, &msg,
				       &len) >= 0)
		driver_capture(bus->driver, msg, len);
}

/* eavesdrop_deliver() of the message @data (@fds stay the caller's) */
static void eavesdrop_deliver_to(Bus *bus, const struct kdbus_msg *km, uint64_t dst_id, const uint8_t *data,
				 size_t len, const WireHeader *hp, const int *fds, size_t n_fds) {
	Eavesdrop *e = eavesdrop_of(bus);
	const WireHeader h = *hp;

	for (size_t i = 0; i < e->n_clients; i++) {
		Client *c = e->clients[i];
		/* as dbus-daemon, the addressed recipient gets it once; the
		 * sender's own eavesdrop rules count */
		if (c->id == dst_id || c->state != CLIENT_ACTIVE)
			continue;
		if (!client_eavesdrop_matches(c, &h, data + h.header_len, km->src_id, dst_id) ||
		    !client_policy_eavesdrop(c, &h, client_registry_find(&bus->registry, km->src_id)))
			continue;
		/* as dbus-daemon, an eavesdropper that takes fds gets its
		 * own copies; one that does not, not the message, which
		 * monitors see answered with NotSupported */
		if (n_fds && !c->unix_fd) {
			eavesdrop_capture_no_fds(bus, km, &h, c);
			continue;
		}
		size_t at = ALIGN_TO(len, sizeof(int));
		uint8_t *copy = malloc(at + n_fds * sizeof(int));
		if (!copy)
			continue;
		memcpy(copy, data, len);
		int *cfds = (int *) (void *) (copy + at);
		size_t n = 0;
		for (; n < n_fds; n++) {
			cfds[n] = fcntl(fds[n], F_DUPFD_CLOEXEC, 3);
			if (cfds[n] < 0)
				break;
		}
		if (n < n_fds) {
			for (size_t k = 0; k < n; k++)
				safe_close(cfds[k]);
			free(copy);
			continue;
		}
		client_queue_owned_fds(c, copy, len, cfds, n_fds);
		bus_schedule_ready(bus, c);
	}
}

/*
 * monitor_eavesdrop_driver_message() - as dbus-daemon, a message to the
 * driver that it took (a call it answered without an error, anything
 * else it ignores) is then matched against the eavesdroppers' rules, the
 * sender's own too.  The copies go through the sink: after what the
 * driver's handling queued for them.
 */
void monitor_eavesdrop_driver_message(Bus *bus, Client *sender, const uint8_t *data, size_t len) {
	Eavesdrop *e = eavesdrop_of(bus);
	static uint64_t cookie;
	WireHeader h;

	if (!e || wire_header_parse(data, len, &h) < 0 || !monitor_sink_id(bus))
		return;
	for (size_t i = 0; i < e->n_clients; i++) {
		Client *c = e->clients[i];
		if (c->state != CLIENT_ACTIVE || !c->conn ||
		    !client_eavesdrop_matches(c, &h, data + h.header_len, sender->id, 0) ||
		    !client_policy_eavesdrop(c, &h, sender))
			continue;
		_Alignas(8) uint8_t buf[MESSAGE_KMSG_BYTES_SIZE];
		struct kdbus_msg *m = message_kmsg_bytes(buf, c->id, ++cookie, 0, data, len);
		(void) kclient_send(bus->sink, m, 0, NULL);
	}
}

static void eavesdrop_deliver(Bus *bus, struct kdbus_msg *km) {
	Eavesdrop *e = eavesdrop_of(bus);
	KclientMsgParts parts;
	WireHeader h;

	kclient_msg_read(e->conn, km, &parts);
	const uint8_t *data = parts.payload.iov_base;
	size_t len = parts.len;
	int *fds = parts.fds;
	unsigned n_fds = parts.n_fds;
	/* as dbus-daemon: neither what is sent to or by the driver nor a
	 * refused message (sent to the sink) reaches eavesdroppers */
	uint64_t dst_id = km->dst_id;
	if (km->payload_type == KDBUS_PAYLOAD_DBUS && dst_id != KDBUS_DST_ID_BROADCAST &&
	    !client_registry_is_internal(&bus->registry, dst_id) && !client_registry_is_internal(&bus->registry, km->src_id) && data &&
	    wire_header_parse(data, len, &h) >= 0) {
		/* sent to a well-known name: its owner is the recipient; one
		 * that an activator holds is not delivered yet (dbus-daemon
		 * shows eavesdroppers what starts a service only once it
		 * is delivered) */
		if (dst_id == KDBUS_DST_ID_NAME &&
		    (!h.destination.s || kclient_name_owner(e->conn, h.destination.s, &dst_id) < 0))
			dst_id = 0;
		if (dst_id)
			eavesdrop_deliver_to(bus, km, dst_id, data, len, &h, fds, n_fds);
	}
	for (size_t i = 0; i < n_fds; i++)
		safe_close(fds[i]);
}

static int eavesdrop_take(KdbusConn *conn, struct kdbus_msg *m, void *userdata) {
	eavesdrop_deliver(userdata, m);
	return 0;
}

static void eavesdrop_wakeup(KdbusConn *conn, void *userdata) {
	Bus *bus = userdata;
	Eavesdrop *e = eavesdrop_of(bus);

	if (e)
		(void) kclient_recv_each(e->conn, eavesdrop_take, bus);
}

int monitor_eavesdropper_ref(Bus *bus, Client *c) {
	Eavesdrop *e = eavesdrop_of(bus);
	int r;

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		r = monitor_hello(bus, &e->conn);
		if (r < 0) {
			free(e);
			return r;
		}
		kdbus_conn_set_wakeup(e->conn, eavesdrop_wakeup, bus);
		bus->eavesdrop = e;
	}
	for (size_t i = 0; i < e->n_clients; i++)
		if (e->clients[i] == c) {
			e->refs[i]++;
			return 0;
		}
	Client **nc = realloc(e->clients, (e->n_clients + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	e->clients = nc;
	unsigned *nr = realloc(e->refs, (e->n_clients + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	e->refs = nr;
	e->clients[e->n_clients] = c;
	e->refs[e->n_clients] = 1;
	e->n_clients++;
	return 0;
}

static void eavesdrop_remove_at(Eavesdrop *e, size_t i) {
	e->clients[i] = e->clients[e->n_clients - 1];
	e->refs[i] = e->refs[e->n_clients - 1];
	e->n_clients--;
}

void monitor_eavesdropper_unref(Bus *bus, Client *c) {
	Eavesdrop *e = eavesdrop_of(bus);

	if (!e)
		return;
	for (size_t i = 0; i < e->n_clients; i++)
		if (e->clients[i] == c && --e->refs[i] == 0) {
			eavesdrop_remove_at(e, i);
			break;
		}
	if (e->n_clients == 0)
		monitor_free(bus);
}

void monitor_forget_client(Bus *bus, Client *c) {
	Eavesdrop *e = eavesdrop_of(bus);

	if (!e)
		return;
	for (size_t i = 0; i < e->n_clients; i++)
		if (e->clients[i] == c) {
			eavesdrop_remove_at(e, i);
			break;
		}
	if (e->n_clients == 0)
		monitor_free(bus);
}

void monitor_free(Bus *bus) {
	Eavesdrop *e = eavesdrop_of(bus);

	if (!e)
		return;
	kdbus_conn_close(e->conn);
	free(e->clients);
	free(e->refs);
	free(e);
	bus->eavesdrop = NULL;
}
