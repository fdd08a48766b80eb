/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver.c - org.freedesktop.DBus.
 *
 * The driver owns a kdbus connection.  Calls arrive on it through the core
 * like any message; each is answered through the core, so replies are
 * ordered with everything else the caller receives.  A call's signature is
 * checked against the method's before the method reads its arguments (with
 * compat/wire's WireReader); replies are built with the WireBuilder, with
 * the header fields dbus-daemon's replies have; errors carry dbus-daemon's
 * names and texts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/bloom.h"
#include "compat/hash-order.h"
#include "compat/kdbus-client.h"
#include "compat/match-key.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/launcher.h"
#include "daemon/log.h"
#include "daemon/monitor.h"
#include "daemon/peer-creds.h"
#include "daemon/service-registry.h"
#include "policy/compile.h"
#include "policy/config.h"
#include "util/format.h"
#include "util/idmap.h"
#include "util/macro.h"
#include "util/strutil.h"

struct Driver {
	Bus *bus;
	KdbusConn *conn;
	uint64_t id;
	uint64_t serial;
	bool dispatching;
	/* dbus-daemon's name registry (see "the order of ListNames") */
	HashOrder *names;
	char **names_to_check;	/* names of departed connections, maybe ownerless now */
	size_t n_names_to_check;
};

typedef struct DriverCall {
	Driver *driver;
	Client *caller;
	const WireHeader *h;	/* the call, validated by the caller's client */
	const uint8_t *body;
	bool canonical_path;
	BusError error;
	/* driver_shows_monitors_itself(): the call as forwarded, for them */
	const uint8_t *capture;
	size_t capture_len;
} DriverCall;

bool driver_shows_monitors_itself(const WireHeader *h) {
	return h->type == WIRE_TYPE_METHOD_CALL && h->member.s && streq(h->member.s, "ReloadConfig");
}

/* monitors see the call now (driver_shows_monitors_itself()) */
static void call_capture(DriverCall *call) {
	if (!call->capture)
		return;
	driver_capture(call->driver, call->capture, call->capture_len);
	call->capture = NULL;
}

uint64_t driver_id(const Driver *d) {
	return d ? d->id : 0;
}

/* ---- Debug.Stats' bookkeeping -------------------------------------------------- */

static int stats_count_name(const char *name, uint64_t flags, void *userdata) {
	(*(uint32_t *) userdata)++;
	return 0;
}

/* the well-known names @c owns or waits for, as the core has them */
static uint32_t stats_count_names(Driver *d, Client *c) {
	uint32_t n = 0;

	if (kclient_conn_names(d->conn, c->id, KDBUS_NAME_ACTIVATOR, stats_count_name, &n) < 0)
		return c->stats_wk_names;
	return n;
}

/*
 * As dbus-daemon counts a connection's names: its unique name and every
 * name it owns or is queued for; the peaks move when a name is added (at
 * Hello, @fresh: no well-known name yet, and at RequestName).
 */
void driver_stats_names(Driver *d, Client *c, bool fresh) {
	Bus *bus = d->bus;
	uint32_t n = fresh ? 0 : stats_count_names(d, c);

	client_set_wk_names_count(c, n);
	stats_peak(&bus->peak_bus_names_per_conn, 1 + (uint64_t) n);
	stats_peak(&bus->peak_bus_names, bus->n_complete + bus->stats_wk_names);
}

/* ---- sending ---------------------------------------------------------------- */

/* marshal @m (sender org.freedesktop.DBus, destination @to) and SEND it from
 * the driver's connection; @reply_cookie consumes the caller's reply tracker */
int driver_send_message(Driver *d, Client *to, WireBuilder *b, uint64_t reply_cookie,
			const int *fds, size_t n_fds) {
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	if (!to->conn) {
		wire_builder_done(b);
		return 0;
	}
	wire_builder_set_sender(b, DRIVER_NAME);
	if (!b->destination.s)
		wire_builder_set_destination(b, to->unique_name);
	/* as dbus-daemon: nothing the driver sends expects a reply */
	b->flags |= WIRE_FLAG_NO_REPLY_EXPECTED;
	b->serial = client_next_serial(to);
	r = wire_builder_finish(b, &buf, &len);
	wire_builder_done(b);
	if (r < 0)
		return r;

	/* the driver's signals are directed (NameAcquired, NameLost): plain
	 * unicasts, see message_kmsg_build() */
	uint64_t cookie = ++d->serial;
	r = kclient_send_bytes(d->conn, to->id, NULL, cookie, reply_cookie, buf, len, fds, n_fds);
	if (r == -EBADSLT && reply_cookie)
		/* the caller's tracker is gone (it timed out): deliver anyway,
		 * as a plain message, like dbus-daemon's error replies */
		r = kclient_send_bytes(d->conn, to->id, NULL, cookie, 0, buf, len, fds, n_fds);
	if (r < 0)
		log_debug("Cannot send driver message to %s: %s", to->unique_name, strerror(-r));
	return r;
}

/*
 * As dbus-daemon: NO_REPLY_EXPECTED only spares the empty replies
 * (send_ack_reply(): AddMatch, RemoveMatch, ReloadConfig, ...); replies with
 * a value (Hello, GetId, RequestName, ...) and errors are sent anyway.
 */
static bool call_wants_reply(const DriverCall *call, const WireBuilder *reply) {
	return !(call->h->flags & WIRE_FLAG_NO_REPLY_EXPECTED) || reply->sig_len > 0;
}

/* a method return to @call, as libdbus makes the ones of dbus-daemon (the
 * call's sender as destination, reply serial, NO_REPLY_EXPECTED, the fields
 * in that order; the serial is driver_send_message()'s), to be filled and
 * given to call_reply() */
static int call_reply_init(DriverCall *call, WireBuilder *b) {
	int r = wire_builder_init(b, WIRE_TYPE_METHOD_RETURN, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	if (call->h->sender.s)
		wire_builder_set_destination(b, call->h->sender.s);
	wire_builder_set_reply_serial(b, call->h->serial);
	return 0;
}

/* send @reply (consumed), unless the caller wants none */
static int call_reply(DriverCall *call, WireBuilder *reply) {
	if (!call_wants_reply(call, reply)) {
		wire_builder_done(reply);
		return 0;
	}
	return driver_send_message(call->driver, call->caller, reply, call->h->serial, NULL, 0);
}

/* reply with the values of @types: s (const char *), u (uint32_t), b (bool) */
static int call_reply_args(DriverCall *call, const char *types, ...) {
	WireBuilder reply;
	va_list ap;
	int r;

	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	va_start(ap, types);
	for (const char *t = types; *t; t++) {
		if (*t == 's') {
			wire_builder_append_basic(&reply, 's', va_arg(ap, const char *));
		} else if (*t == 'u') {
			uint32_t u = va_arg(ap, uint32_t);
			wire_builder_append_basic(&reply, 'u', &u);
		} else {
			bool v = va_arg(ap, int);
			wire_builder_append_basic(&reply, 'b', &v);
		}
	}
	va_end(ap);
	return call_reply(call, &reply);
}

static int bus_error_setv(BusError *e, const char *name, const char *fmt, va_list ap) {
	char *text = NULL;

	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	free(e->text);
	e->name = name;
	e->text = text;
	return -EPROTO;
}

int bus_error_set(BusError *e, const char *name, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	bus_error_setv(e, name, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

void bus_error_clear(BusError *e) {
	free(e->text);
	*e = (BusError) {};
}

/* the last error set is the one sent */
static int call_fail(DriverCall *call, const char *name, const char *fmt, ...) _printf_(3, 4);
static int call_fail(DriverCall *call, const char *name, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	bus_error_setv(&call->error, name, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/*
 * Read the call's leading arguments of @types: s (const char **, pointing
 * into the call), u (uint32_t *).  The call's signature was checked against
 * the method's (driver_handle_call()), so this only fails on a body that
 * is not what its signature says.
 */
static int call_read_args(DriverCall *call, const char *types, ...) {
	WireReader rd;
	va_list ap;
	int r = 0;

	wire_reader_init(&rd, call->h, call->body);
	va_start(ap, types);
	for (const char *t = types; *t && r >= 0; t++)
		r = wire_reader_read_basic(&rd, *t, va_arg(ap, void *));
	va_end(ap);
	if (r < 0)
		return call_fail(call, DBUS_ERR("InvalidArgs"), "Arguments of %s are not of type %s",
				 strempty(call->h->member.s), types);
	return 0;
}

static int call_fail_unprivileged(DriverCall *call) {
	Client *c = call->caller;
	const char *member = call->h->member.s;
	_cleanup_free_ char *text = NULL;
	char uid[24] = "unknown uid";

	/* as dbus-daemon's bus_driver_check_caller_is_privileged(): logged */
	if (c->is_unix && c->creds.uid != (uid_t) -1)
		snprintf(uid, sizeof(uid), "uid %u", (unsigned) c->creds.uid);
	text = format("rejected attempt to call %s by connection %s (%s) with %s", member, client_name(c),
		      client_loginfo(c), uid);
	if (!text)
		return call_fail(call, DBUS_ERR("NoMemory"), "Not enough memory");
	log_security("%s", text);
	return call_fail(call, DBUS_ERR("AccessDenied"), "%s", text);
}

/* messages the bus originates outside a driver call (errors of the
 * forwarding path, signals for the core's notifications), as bytes */
int driver_build_error(Client *to, uint32_t reply_serial, const char *name, const char *text,
		       uint8_t **ret_msg, size_t *ret_len) {
	return driver_build_error_to(to, to->unique_name_len ? to->unique_name : NULL, reply_serial, name, text,
				     ret_msg, ret_len);
}

int driver_build_error_to(Client *to, const char *destination, uint32_t reply_serial, const char *name,
			  const char *text, uint8_t **ret_msg, size_t *ret_len) {
	WireBuilder b;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_ERROR, WIRE_FLAG_NO_REPLY_EXPECTED, client_next_serial(to));
	if (r < 0)
		return r;
	/*
	 * The fields in the order dbus-daemon's libdbus writes them: its
	 * errors come from dbus_message_new_error() (destination, error
	 * name, reply serial, the text, then the sender), but NoReply, which
	 * it builds field by field (reply serial, error name, the text, the
	 * sender, the destination).
	 */
	if (streq(name, DBUS_ERR("NoReply"))) {
		wire_builder_set_reply_serial(&b, reply_serial);
		wire_builder_set_error_name(&b, name);
		wire_builder_append_string(&b, 's', text, strlen(text));
		wire_builder_set_sender(&b, DRIVER_NAME);
		if (destination)
			wire_builder_set_destination(&b, destination);
	} else {
		if (destination)
			wire_builder_set_destination(&b, destination);
		wire_builder_set_error_name(&b, name);
		wire_builder_set_reply_serial(&b, reply_serial);
		wire_builder_append_string(&b, 's', text, strlen(text));
		wire_builder_set_sender(&b, DRIVER_NAME);
	}
	r = wire_builder_finish(&b, ret_msg, ret_len);
	wire_builder_done(&b);
	return r;
}

/*
 * A message without a destination that dbus-daemon leaves to its end of the
 * connection (libdbus, dbus-connection.c): the peer filter answers every
 * message of org.freedesktop.DBus.Peer, whatever its type and flags (Ping
 * and GetMachineId calls, UnknownMethod for anything else); the object tree
 * answers other method calls (Introspect: an empty node; anything else:
 * UnknownMethod); the rest is dropped.  The answers carry no sender, and
 * the message's own SENDER field, if the client wrote one, as destination
 * (dbus_message_new_method_return(), dbus_message_new_error()).  *ret_msg
 * is NULL when no answer is due.
 */
int driver_build_undirected_reply(Client *to, const WireHeader *h, uint8_t **ret_msg, size_t *ret_len) {
	static const char empty_node[] = DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE "<node>\n</node>\n";
	const char *iface = h->interface.s, *member = h->member.s;
	bool call = h->type == WIRE_TYPE_METHOD_CALL;
	_cleanup_free_ char *text = NULL;
	const char *error = NULL, *value = NULL;
	WireBuilder b;
	int r;

	*ret_msg = NULL;
	*ret_len = 0;
	if (driver_is_peer_message(h)) {
		if (call && streq(member, "GetMachineId"))
			value = to->bus->machine_id;
		else if (!call || !streq(member, "Ping")) {
			error = DBUS_ERR("UnknownMethod");
			value = "Unknown method invoked on " DRIVER_PEER_INTERFACE " interface";
		}
	} else if (!call || !member) {
		return 0;
	} else if ((!iface || streq(iface, "org.freedesktop.DBus.Introspectable")) && streq(member, "Introspect")) {
		value = empty_node;
	} else {
		if (asprintf(&text, "Method \"%s\" with signature \"%s\" on interface \"%s\" doesn't exist\n", member,
			     strempty(h->signature.s), iface ? iface : "(null)") < 0)
			return -ENOMEM;
		error = DBUS_ERR("UnknownMethod");
		value = text;
	}
	r = wire_builder_init(&b, error ? WIRE_TYPE_ERROR : WIRE_TYPE_METHOD_RETURN, WIRE_FLAG_NO_REPLY_EXPECTED,
			      client_next_serial(to));
	if (r < 0)
		return r;
	if (h->sender.s)
		wire_builder_set_destination(&b, h->sender.s);
	if (error)
		wire_builder_set_error_name(&b, error);
	wire_builder_set_reply_serial(&b, h->serial);
	if (value)
		wire_builder_append_string(&b, 's', value, strlen(value));
	r = wire_builder_finish(&b, ret_msg, ret_len);
	wire_builder_done(&b);
	return r;
}

static int driver_build_signal(Client *to, const char *destination, const char *member, const char *const *args,
			       size_t n_args, uint8_t **ret_msg, size_t *ret_len) {
	WireBuilder b;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, client_next_serial(to));
	if (r < 0)
		return r;
	/* in the order of dbus-daemon's fields: NameOwnerChanged gets its
	 * sender before its arguments, NameAcquired and NameLost after */
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, DRIVER_INTERFACE);
	wire_builder_set_member(&b, member);
	if (destination)
		wire_builder_set_destination(&b, destination);
	if (!destination)
		wire_builder_set_sender(&b, DRIVER_NAME);
	for (size_t i = 0; i < n_args; i++)
		wire_builder_append_string(&b, 's', args[i], strlen(args[i]));
	wire_builder_set_sender(&b, DRIVER_NAME);
	r = wire_builder_finish(&b, ret_msg, ret_len);
	wire_builder_done(&b);
	return r;
}

int driver_build_name_owner_changed(Client *to, const char *name, const char *old_owner,
				    const char *new_owner, uint8_t **ret_msg, size_t *ret_len) {
	const char *args[] = { name, old_owner, new_owner };
	return driver_build_signal(to, NULL, "NameOwnerChanged", args, 3, ret_msg, ret_len);
}

int driver_build_name_signal(Client *to, const char *member, const char *name, uint8_t **ret_msg, size_t *ret_len) {
	return driver_build_name_signal_to(to, to->unique_name, member, name, ret_msg, ret_len);
}

int driver_build_name_signal_to(Client *to, const char *destination, const char *member, const char *name,
				uint8_t **ret_msg, size_t *ret_len) {
	return driver_build_signal(to, destination, member, &name, 1, ret_msg, ret_len);
}

/* SEND prebuilt dbus1 bytes from the driver to connection @dst_id */
static int driver_send_raw_id(Driver *d, uint64_t dst_id, const uint8_t *msg, size_t len, uint64_t reply_cookie) {
	_Alignas(8) uint8_t buf[MESSAGE_KMSG_BYTES_SIZE];
	struct kdbus_msg *m = message_kmsg_bytes(buf, dst_id, ++d->serial, reply_cookie, msg, len);
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) m };

	int r = kdbus_cmd_send(d->conn, &cmd);
	if (_unlikely_(r == -ENOBUFS) && client_take_queue(d->bus, dst_id))
		r = kdbus_cmd_send(d->conn, &cmd);
	if (r == -EBADSLT && reply_cookie) {
		m->cookie_reply = 0;
		r = kdbus_cmd_send(d->conn, &cmd);
	}
	return r;
}

/* SEND prebuilt dbus1 bytes from the driver to @to */
static int driver_send_raw(Driver *d, Client *to, const uint8_t *msg, size_t len, uint64_t reply_cookie) {
	return driver_send_raw_id(d, to->id, msg, len, reply_cookie);
}

/*
 * A new connection's NameOwnerChanged, as monitors see it: after its Hello
 * reply and before its NameAcquired, as dbus-daemon sends them.  Monitors
 * ignore the core's ID_ADD notifications; this copy reaches them through
 * the sink connection, in order with the driver's other messages.
 */
static void driver_monitors_new_connection(Driver *d, Client *c) {
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;
	uint64_t sink;

	if (!d->bus->n_monitors || !(sink = monitor_sink_id(d->bus)))
		return;
	if (driver_build_name_owner_changed(c, c->unique_name, "", c->unique_name, &msg, &len) >= 0)
		(void) driver_send_raw_id(d, sink, msg, len, 0);
}

void driver_capture(Driver *d, const uint8_t *msg, size_t len) {
	uint64_t sink;

	if (d->bus->n_monitors && (sink = monitor_sink_id(d->bus)))
		(void) driver_send_raw_id(d, sink, msg, len, 0);
}

/* a plain Hello (no arguments, our interface or none) */
static bool driver_is_plain_hello(const WireHeader *h) {
	return h->type == WIRE_TYPE_METHOD_CALL && h->member.s && streq(h->member.s, "Hello") && !h->signature.s &&
	       (!h->interface.s || streq(h->interface.s, DRIVER_INTERFACE));
}

/* the Hello reply and the NameAcquired of the unique name that follows it,
 * each in its 8-aligned buffer of DRIVER_HELLO_BUF bytes */
#define DRIVER_HELLO_BUF 256
static int driver_hello_build(Client *c, const WireHeader *h, uint8_t *reply, size_t *reply_len, uint8_t *acquired,
			      size_t *acquired_len) {
	const char *name = c->unique_name;
	WireBuilder b;
	uint8_t *msg;
	int r;

	/* dbus-daemon replies even to a Hello with NO_REPLY_EXPECTED */
	r = wire_builder_init_buffer(&b, reply, DRIVER_HELLO_BUF, WIRE_TYPE_METHOD_RETURN, WIRE_FLAG_NO_REPLY_EXPECTED,
				     client_next_serial(c));
	if (r < 0)
		return r;
	/* the fields in dbus-daemon's order (as in driver_send_message()) */
	wire_builder_set_destination(&b, name);
	wire_builder_set_reply_serial(&b, h->serial);
	wire_builder_append_string(&b, 's', name, c->unique_name_len);
	wire_builder_set_sender(&b, DRIVER_NAME);
	r = wire_builder_finish(&b, &msg, reply_len);
	if (r < 0)
		return r;
	r = wire_builder_init_buffer(&b, acquired, DRIVER_HELLO_BUF, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED,
				     client_next_serial(c));
	if (r < 0)
		return r;
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, DRIVER_INTERFACE);
	wire_builder_set_member(&b, "NameAcquired");
	wire_builder_set_destination(&b, name);
	wire_builder_append_string(&b, 's', name, c->unique_name_len);
	wire_builder_set_sender(&b, DRIVER_NAME);
	return wire_builder_finish(&b, &msg, acquired_len);
}

/* Hello from buffers on the stack, without a DriverCall: it is every
 * connection's first call */
static int driver_hello_fast(Driver *d, Client *c, const WireHeader *h) {
	_Alignas(8) uint8_t reply[DRIVER_HELLO_BUF], acquired[DRIVER_HELLO_BUF];
	size_t reply_len, acquired_len;
	int r;

	client_mark_hello_done(c);
	r = driver_hello_build(c, h, reply, &reply_len, acquired, &acquired_len);
	if (r < 0)
		return r;
	r = driver_send_raw(d, c, reply, reply_len, h->serial);
	if (r < 0)
		return r;
	driver_monitors_new_connection(d, c);
	/* NameAcquired for the unique name follows the reply */
	r = driver_send_raw(d, c, acquired, acquired_len, 0);
	if (r >= 0)
		client_policy_capture_driver_refusal(c, acquired, acquired_len);
	return r;
}

int driver_hello_direct(Driver *d, Client *c, const WireHeader *h) {
	_Alignas(8) uint8_t reply[DRIVER_HELLO_BUF], acquired[DRIVER_HELLO_BUF];
	size_t reply_len, acquired_len, len = 0;
	uint8_t *out;
	int r;

	/* with monitors or eavesdroppers the Hello goes through the core */
	if (d->bus->n_monitors || d->bus->eavesdrop || c->hello_done || !driver_is_plain_hello(h))
		return 0;
	r = driver_hello_build(c, h, reply, &reply_len, acquired, &acquired_len);
	if (r < 0)
		return r;
	out = malloc(reply_len + acquired_len);
	if (!out)
		return -ENOMEM;
	/* the receive rules apply as to anything from the driver */
	if (client_policy_receives_from_driver(c, reply, reply_len)) {
		memcpy(out, reply, reply_len);
		len = reply_len;
	}
	if (client_policy_receives_from_driver(c, acquired, acquired_len)) {
		memcpy(out + len, acquired, acquired_len);
		len += acquired_len;
	}
	if (!len) {
		free(out);
	} else {
		r = client_queue_owned(c, out, len);	/* frees @out on failure */
		if (r < 0)
			return r;
		bus_schedule_ready(d->bus, c);
	}
	client_mark_hello_done(c);
	return 1;
}

int driver_send_error(Driver *d, Client *to, uint32_t reply_serial, const char *name, const char *fmt, ...) {
	_cleanup_free_ char *text = NULL;
	WireBuilder b;
	va_list ap;
	int r;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return -ENOMEM;
	/* NO_REPLY_EXPECTED as libdbus sets it on dbus-daemon's errors */
	r = wire_builder_init(&b, WIRE_TYPE_ERROR, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	/* dbus_message_new_error()'s order: destination, error name, reply
	 * serial, the text (driver_send_message() adds the sender) */
	if (to->unique_name_len)
		wire_builder_set_destination(&b, to->unique_name);
	wire_builder_set_error_name(&b, name);
	wire_builder_set_reply_serial(&b, reply_serial);
	wire_builder_append_basic(&b, 's', text);
	/* no tracker: the failed send created none */
	return driver_send_message(d, to, &b, 0, NULL, 0);
}

const char *driver_error_for_send(int r) {
	switch (r) {
	case -ESRCH:
	case -ENXIO:
	case -EADDRNOTAVAIL:
		return DBUS_ERR("ServiceUnknown");
	case -EPERM:
	case -EACCES:
		return DBUS_ERR("AccessDenied");
	case -EMLINK:
	case -ENOBUFS:
	case -EXFULL:
	case -EDQUOT:
	case -EMFILE:
		return DBUS_ERR("LimitsExceeded");
	case -ECOMM:
		return DBUS_ERR("NotSupported");
	case -ENOMEM:
		return DBUS_ERR("NoMemory");
	case -ECONNRESET:
		return DBUS_ERR("NoReply");
	default:
		return DBUS_ERR("Failed");
	}
}

/* ---- sending by name (activation: daemon/service-registry.c) ------------- */

/*
 * driver_send_message_to_name() - as driver_send_message(), but addressed
 * to the well-known @name (KDBUS_DST_ID_NAME and the name), so an
 * activator holding @name queues it until the real owner takes the name.
 */
int driver_send_message_to_name(Driver *d, const char *name, WireBuilder *b) {
	size_t l = strlen(name);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	if (l > 255) {
		wire_builder_done(b);
		return -EINVAL;
	}
	wire_builder_set_sender(b, DRIVER_NAME);
	wire_builder_set_destination(b, name);
	b->flags |= WIRE_FLAG_NO_REPLY_EXPECTED;
	uint32_t serial = (uint32_t) ++d->serial;
	if (!serial)
		serial = (uint32_t) ++d->serial;
	b->serial = serial;
	r = wire_builder_finish(b, &buf, &len);
	wire_builder_done(b);
	if (r < 0)
		return r;

	/* no KDBUS_MSG_SIGNAL: a directed signal travels as a plain unicast */
	r = kclient_send_bytes(d->conn, KDBUS_DST_ID_NAME, name, d->serial, 0, buf, len, NULL, 0);
	if (r < 0)
		log_debug("Cannot send driver message to %s: %s", name, strerror(-r));
	return r;
}

/* ---- name lookups ----------------------------------------------------------- */

/* the kdbus id owning @name (unique or well-known), 0 if none; activators
 * and waiters do not count as owners */
static uint64_t driver_lookup_owner(Driver *d, const char *name) {
	uint64_t id;

	if (name[0] == ':') {
		if (!message_unique_name_to_id(name, strlen(name), &id) || id == d->id)
			return 0;
		Client *c = bus_find_client(d->bus, id);
		if (!c)	/* a native peer of the kernel bus has its unique name too */
			return kernel_peer_get(d->bus, d->conn, id) ? id : 0;
		return c->state == CLIENT_ACTIVE ? id : 0;
	}

	return bus_name_owner(d->conn, name, &id) < 0 ? 0 : id;
}

typedef enum Found { FOUND_ERROR, FOUND_SELF, FOUND_PEER, FOUND_KERNEL_PEER } Found;

/* bus_driver_get_conn_helper(): the single string argument names a peer */
static Found call_get_peer_or_kernel_peer(DriverCall *call, const char *what, const char **ret_name,
					   Client **ret_peer, const KernelPeer **ret_kernel_peer) {
	const char *name;

	if (call_read_args(call, "s", &name) < 0)
		return FOUND_ERROR;
	*ret_name = name;
	if (streq(name, DRIVER_NAME))
		return FOUND_SELF;
	uint64_t id = driver_lookup_owner(call->driver, name);
	Client *c = id ? bus_find_client(call->driver->bus, id) : NULL;
	/* a native peer of the kernel bus: what the kernel tells of it */
	const KernelPeer *kp = !c && id && ret_kernel_peer ? kernel_peer_get(call->driver->bus, call->driver->conn, id) :
							      NULL;
	if (kp) {
		*ret_kernel_peer = kp;
		return FOUND_KERNEL_PEER;
	}
	if (!c) {
		call_fail(call, DBUS_ERR("NameHasNoOwner"), "Could not get %s of name '%s': no such name", what, name);
		return FOUND_ERROR;
	}
	*ret_peer = c;
	return FOUND_PEER;
}

static Found call_get_peer(DriverCall *call, const char *what, const char **ret_name, Client **ret_peer) {
	return call_get_peer_or_kernel_peer(call, what, ret_name, ret_peer, NULL);
}

/* ---- the order of ListNames -------------------------------------------------- */

/*
 * dbus-daemon lists its name registry (bus/services.c) in the iteration
 * order of the libdbus hash table that holds it, which depends on the
 * sequence of inserts and removals since the bus started.  d->names
 * replays that sequence on a model of the table (compat/hash-order.h):
 *  - a unique name goes in at Hello, and out when its connection goes
 *    away or becomes a monitor;
 *  - a well-known name goes in when a RequestName gives it its first
 *    owner or waiter, and out when its last one leaves (ReleaseName, a
 *    disconnection, BecomeMonitor).
 * Removals never reorder the table, so their order among themselves does
 * not matter, only that they come before the next insert.  The names of a
 * connection that goes away are therefore only noted (the core releases
 * them when the connection is closed, after this); the next name event
 * drops those left without an owner, before it inserts anything.  The set
 * ListNames returns is still the core's; d->names only orders it.
 */

static int driver_names_note(Driver *d, const char *name) {
	char **l = realloc(d->names_to_check, (d->n_names_to_check + 1) * sizeof(char *));
	if (!l)
		return -ENOMEM;
	d->names_to_check = l;
	if (!(l[d->n_names_to_check] = strdup(name)))
		return -ENOMEM;
	d->n_names_to_check++;
	return 0;
}

static uint64_t driver_lookup_owner(Driver *d, const char *name);

/* drop the noted names that have no owner left */
static void driver_names_settle(Driver *d) {
	for (size_t i = 0; i < d->n_names_to_check; i++) {
		if (!driver_lookup_owner(d, d->names_to_check[i]))
			hash_order_remove(d->names, d->names_to_check[i]);
		free(d->names_to_check[i]);
	}
	d->n_names_to_check = 0;
}

static int driver_names_note_one(const char *name, uint64_t flags, void *userdata) {
	if (driver_names_note(userdata, name) < 0)
		log_debug("Out of memory: ListNames may list %s out of order", name);
	return 0;
}

/* @c leaves the registry (disconnection, BecomeMonitor): its unique name
 * now, the well-known names it owns or waits for once the core released
 * them */
static void driver_names_leave(Driver *d, Client *c) {
	if (c->state != CLIENT_ACTIVE)
		return;
	hash_order_remove(d->names, c->unique_name);
	if (c->own_names_watched)
		(void) kclient_conn_names(d->conn, c->id, KDBUS_NAME_ACTIVATOR, driver_names_note_one, d);
}

void driver_names_hello(Driver *d, Client *c) {
	driver_names_settle(d);
	if (hash_order_insert(d->names, c->unique_name) < 0)
		log_debug("Out of memory: ListNames may list %s out of order", c->unique_name);
}

/* after a RequestName that made @c an owner or a waiter of @name, or a
 * ReleaseName: @name is in the registry while it has an owner */
static void driver_names_update(Driver *d, const char *name, bool owned) {
	if (!owned)
		hash_order_remove(d->names, name);
	else if (hash_order_insert(d->names, name) < 0)
		log_debug("Out of memory: ListNames may list %s out of order", name);
}

/* ---- methods ---------------------------------------------------------------- */

static int method_hello(DriverCall *call) {
	Client *c = call->caller;
	const char *name = c->unique_name;
	WireBuilder b;
	int r;

	if (c->hello_done)
		return call_fail(call, DBUS_ERR("Failed"), "Already handled an Hello message");
	client_mark_hello_done(c);
	r = call_reply_args(call, "s", name);
	if (r < 0)
		return r;
	driver_monitors_new_connection(call->driver, c);
	/* NameAcquired for the unique name follows the reply */
	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, DRIVER_INTERFACE);
	wire_builder_set_member(&b, "NameAcquired");
	wire_builder_append_basic(&b, 's', name);
	wire_builder_set_destination(&b, c->unique_name);
	return driver_send_message(call->driver, c, &b, 0, NULL, 0);
}

static int name_acquire_or_release(Driver *d, Client *c, const char *name, uint64_t flags, bool acquire,
				   uint64_t *ret_flags) {
	return acquire ? kclient_name_acquire(c->conn, name, flags, ret_flags) :
			 kclient_name_release(c->conn, name, flags, ret_flags);
}

/* RequestName of a name the XML policy does not let the caller own */
static int driver_own_denied(DriverCall *call, const char *name) {
	return call_fail(call, DBUS_ERR("AccessDenied"),
			 "Connection \"%s\" is not allowed to own the service \"%s\" due to security policies in "
			 "the configuration file", call->caller->unique_name, name);
}

/* RequestName over max_names_per_connection: dbus-daemon logs it, as a
 * warning, and answers LimitsExceeded */
static int driver_names_limit_exceeded(DriverCall *call) {
	Client *c = call->caller;
	uint64_t max = call->driver->bus->limits.max_names_per_connection;

	log_warning("Connection \"%s\" is not allowed to own more services (increase limits in configuration "
		    "file if required; max_names_per_connection=%" PRIu64 ")", c->unique_name, max);
	return call_fail(call, DBUS_ERR("LimitsExceeded"),
			 "Connection \"%s\" is not allowed to own more services (increase limits in "
			 "configuration file if required; max_names_per_connection=%" PRIu64 ")",
			 c->unique_name, max);
}

static int method_request_name(DriverCall *call) {
	Client *c = call->caller;
	Bus *bus = call->driver->bus;
	const char *name;
	uint32_t flags, result;
	uint64_t kflags = 0, ret_flags = 0;
	int r;

	if (call_read_args(call, "su", &name, &flags) < 0)
		return -EPROTO;
	if (!wire_bus_name_is_valid(name, strlen(name)))
		return call_fail(call, DBUS_ERR("InvalidArgs"), "Requested bus name \"%s\" is not valid", name);
	if (name[0] == ':')
		return call_fail(call, DBUS_ERR("InvalidArgs"),
				 "Cannot acquire a service starting with ':' such as \"%s\"", name);
	if (streq(name, DRIVER_NAME))
		return call_fail(call, DBUS_ERR("InvalidArgs"),
				 /* sic: dbus-daemon's text lacks the space */
				 "Connection \"%s\" is not allowed to own the service \"%s\"because it is "
				 "reserved for D-Bus' use only", c->unique_name, name);
	/* where the core's NAME_ACQUIRE provably decides as policy.c does,
	 * its EPERM is the answer (below); the rest is the daemon's */
	if (!bus->compiled || !policy_compiled_own_is_exact(bus->compiled, name)) {
		r = bus_policy_check_own(bus, c, name);
		if (r == 0)
			return driver_own_denied(call, name);
	}

	/*
	 * As dbus-daemon: a connection with max_names_per_connection names
	 * (its unique name counted) may request none, not even one it owns
	 * or waits for already; the policy's refusal comes first
	 */
	if (1 + (uint64_t) stats_count_names(call->driver, c) >= bus->limits.max_names_per_connection) {
		if (bus_policy_check_own(bus, c, name) == 0)
			return driver_own_denied(call, name);
		return driver_names_limit_exceeded(call);
	}

	/* NameAcquired and NameLost need the core's notifications */
	r = client_watch_own_names(c);
	if (r == -ENOMEM)
		return -ENOMEM;
	if (r < 0)
		return call_fail(call, DBUS_ERR("LimitsExceeded"),
				 "Connection \"%s\" cannot watch its names: %s", c->unique_name, strerror(-r));

	if (flags & DBUS_NAME_FLAG_ALLOW_REPLACEMENT)
		kflags |= KDBUS_NAME_ALLOW_REPLACEMENT;
	if (flags & DBUS_NAME_FLAG_REPLACE_EXISTING)
		kflags |= KDBUS_NAME_REPLACE_EXISTING;
	if (!(flags & DBUS_NAME_FLAG_DO_NOT_QUEUE))
		kflags |= KDBUS_NAME_QUEUE;

	/*
	 * An activatable name (doc/activation.md, "Handover"): the service
	 * reads this reply before the messages the activator held for it,
	 * and what it has not read stays in the core (client_limit_output()),
	 * so that what it had not read goes to the next instance if it dies.
	 */
	bool activatable = service_registry_is_activatable(bus, name);
	if (activatable)
		kdbus_conn_defer_handover(c->conn);
	driver_names_settle(call->driver);
	r = name_acquire_or_release(call->driver, c, name, kflags, true, &ret_flags);
	driver_stats_names(call->driver, c, false);
	if (r == 0)
		driver_names_update(call->driver, name, true);
	if (activatable && r != 0)
		kdbus_conn_finish_handover(c->conn);	/* nothing was handed over */
	switch (r) {
	case 0:
		/* the owner already: success without KDBUS_NAME_ACQUIRED */
		if (ret_flags & KDBUS_NAME_IN_QUEUE)
			result = DBUS_REQUEST_NAME_REPLY_IN_QUEUE;
		else if (ret_flags & KDBUS_NAME_ACQUIRED)
			result = DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
		else
			result = DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER;
		if (activatable && result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
			client_limit_output(c);
			if (bus->on_kernel)
				client_expect_handover(c);
			service_registry_name_taken(bus);
		}
		break;
	case -EEXIST:
		result = DBUS_REQUEST_NAME_REPLY_EXISTS;
		break;
	case -E2BIG:
		return driver_names_limit_exceeded(call);
	case -EPERM:
		return driver_own_denied(call, name);
	case -EINVAL:
		return call_fail(call, DBUS_ERR("InvalidArgs"), "Requested bus name \"%s\" is not valid", name);
	default:
		return r;
	}
	r = call_reply_args(call, "u", result);
	if (activatable)
		kdbus_conn_finish_handover(c->conn);
	return r;
}

static int method_release_name(DriverCall *call) {
	Client *c = call->caller;
	const char *name;
	uint32_t result;
	int r;

	if (call_read_args(call, "s", &name) < 0)
		return -EPROTO;
	if (!wire_bus_name_is_valid(name, strlen(name)))
		return call_fail(call, DBUS_ERR("InvalidArgs"), "Given bus name \"%s\" is not valid", name);
	if (name[0] == ':')
		return call_fail(call, DBUS_ERR("InvalidArgs"),
				 "Cannot release a service starting with ':' such as \"%s\"", name);
	if (streq(name, DRIVER_NAME))
		return call_fail(call, DBUS_ERR("InvalidArgs"),
				 "Cannot release the %s service because it is owned by the bus", DRIVER_NAME);

	driver_names_settle(call->driver);
	r = name_acquire_or_release(call->driver, c, name, 0, false, NULL);
	driver_stats_names(call->driver, c, false);
	switch (r) {
	case 0:
		driver_names_update(call->driver, name, driver_lookup_owner(call->driver, name) != 0);
		result = DBUS_RELEASE_NAME_REPLY_RELEASED;
		break;
	case -ESRCH:
		result = DBUS_RELEASE_NAME_REPLY_NON_EXISTENT;
		break;
	case -EADDRINUSE:
		/* as dbus-daemon, a name only an activator holds has no
		 * owner at all */
		result = driver_lookup_owner(call->driver, name) ? DBUS_RELEASE_NAME_REPLY_NOT_OWNER :
								    DBUS_RELEASE_NAME_REPLY_NON_EXISTENT;
		break;
	default:
		return r;
	}
	return call_reply_args(call, "u", result);
}

static int method_start_service_by_name(DriverCall *call) {
	const char *name;
	uint32_t flags, result;

	if (call_read_args(call, "su", &name, &flags) < 0)
		return -EPROTO;
	int r = service_registry_start(call->driver->bus, call->caller, name, call->h, &call->error);
	if (r != 1)
		return r;
	result = DBUS_START_REPLY_ALREADY_RUNNING;
	return call_reply_args(call, "u", result);
}

static int method_update_activation_environment(DriverCall *call) {
	Bus *bus = call->driver->bus;
	WireReader rd;

	/* dbus-daemon refuses only when a <servicehelper> is configured */
	if (bus->config->servicehelper)
		return call_fail(call, DBUS_ERR("AccessDenied"), "Cannot change activation environment on a system bus.");

	/* a{ss}, as the signature check made sure */
	wire_reader_init(&rd, call->h, call->body);
	if (wire_reader_enter(&rd, 'a') < 0)
		return -EBADMSG;
	while (wire_reader_peek(&rd) == '{') {
		const char *key = NULL, *value = NULL;
		if (wire_reader_enter(&rd, '{') < 0 || wire_reader_read_basic(&rd, 's', &key) < 0 ||
		    wire_reader_read_basic(&rd, 's', &value) < 0 || wire_reader_exit(&rd) < 0)
			return -EBADMSG;
		int r = launcher_setenv(bus, key, value);
		if (r < 0)
			return r;
	}
	if (bus->systemd_activation)
		service_registry_forward_environment(bus, call->h, call->body);
	return call_reply_args(call, "");
}

static int method_name_has_owner(DriverCall *call) {
	const char *name;
	bool has;

	if (call_read_args(call, "s", &name) < 0)
		return -EPROTO;
	has = streq(name, DRIVER_NAME) || driver_lookup_owner(call->driver, name) != 0;
	return call_reply_args(call, "b", has);
}

/* every name on the bus; with @only_name, the unique names of that name's
 * owner and waiters, in queue order */
typedef struct ListNames {
	const char *only_name;
	const char *unique;
	char **l;
	size_t n;
} ListNames;

/* one name of a connection in the LIST: with only_name the connection's
 * unique name where it is that name's owner or waiter, else the name */
static int list_names_add(const char *name, uint64_t flags, void *userdata) {
	ListNames *ln = userdata;

	if (ln->only_name)
		return streq(name, ln->only_name) ? strv_push_dup(&ln->l, &ln->n, ln->unique) : 0;
	return strv_push_dup(&ln->l, &ln->n, name);
}

static int driver_list_names(Driver *d, const char *only_name, char ***ret, size_t *ret_n) {
	ListNames ln = { .only_name = only_name };
	uint64_t offset, size;
	int r = 0;

	/* (kdbus.ko's LIST takes no name: its records are filtered here) */
	r = kclient_list(d->conn,
			 only_name ? (KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED) : (KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES),
			 d->bus->on_kernel ? NULL : only_name, &offset, &size);
	if (r < 0)
		return r;

	struct kdbus_info *base = kdbus_pool_ptr(d->conn, offset);
	struct kdbus_info *info;
	IdMap seen = IDMAP_INIT;
	KDBUS_FOREACH(info, base, size) {
		char unique[24];

		if (bus_is_internal_id(d->bus, info->id) ||
		    (info->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_MONITOR | KDBUS_HELLO_POLICY_HOLDER)))
			continue;
		Client *c = bus_find_client(d->bus, info->id);
		if (!c || c->state != CLIENT_ACTIVE)
			continue;
		message_unique_name_format(unique, info->id);
		/* one entry per name, and each connection's unique name once
		 * (kdbus.ko lists by name: a connection's entries need not be
		 * in a row) */
		if (!only_name && !idmap_get(&seen, info->id)) {
			if ((r = idmap_put(&seen, info->id, (void *) 1)) < 0 ||
			    (r = strv_push_dup(&ln.l, &ln.n, unique)) < 0)
				break;
		}
		ln.unique = unique;
		r = kclient_info_names(info, only_name ? 0 : (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR),
				       list_names_add, &ln);
		if (r < 0)
			break;
	}
	idmap_done(&seen);
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };
	(void) kdbus_cmd_free(d->conn, &f);
	if (r < 0) {
		strv_free(ln.l);
		return r;
	}
	*ret_n = ln.n;
	*ret = ln.l;
	return 0;
}

static int reply_strv(DriverCall *call, const char *first, char **l, size_t n) {
	WireBuilder reply;
	int r = call_reply_init(call, &reply);

	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "s");
	if (first)
		wire_builder_append_basic(&reply, 's', first);
	for (size_t i = 0; i < n; i++)
		wire_builder_append_basic(&reply, 's', l[i]);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

static int method_list_names(DriverCall *call) {
	_cleanup_strv_free_ char **l = NULL;
	size_t n = 0;
	int r = driver_list_names(call->driver, NULL, &l, &n);
	if (r < 0)
		return r;
	/* the bus driver first, then dbus-daemon's registry order */
	driver_names_settle(call->driver);
	r = hash_order_sort(call->driver->names, l, n);
	if (r < 0)
		return r;
	return reply_strv(call, DRIVER_NAME, l, n);
}

static int method_list_activatable_names(DriverCall *call) {
	_cleanup_strv_free_ char **l = NULL;
	size_t n = 0;
	int r = service_registry_list(call->driver->bus, &l, &n);
	if (r < 0)
		return r;
	return reply_strv(call, DRIVER_NAME, l, n);
}

static int method_list_queued_owners(DriverCall *call) {
	_cleanup_strv_free_ char **l = NULL;
	const char *name;
	size_t n = 0;
	int r;

	if (call_read_args(call, "s", &name) < 0)
		return -EPROTO;
	if (streq(name, DRIVER_NAME))
		return reply_strv(call, DRIVER_NAME, NULL, 0);
	if (name[0] == ':') {
		if (!driver_lookup_owner(call->driver, name))
			return call_fail(call, DBUS_ERR("NameHasNoOwner"),
					 "Could not get owners of name '%s': no such name", name);
		return reply_strv(call, name, NULL, 0);
	}
	/* as dbus-daemon, which looks a name up without checking it: one that
	 * is not valid (too long, say) has no owner */
	if (wire_bus_name_is_valid(name, strlen(name))) {
		r = driver_list_names(call->driver, name, &l, &n);
		if (r < 0)
			return r;
	}
	if (n == 0)
		return call_fail(call, DBUS_ERR("NameHasNoOwner"), "Could not get owners of name '%s': no such name",
				 name);
	return reply_strv(call, NULL, l, n);
}

static int method_get_name_owner(DriverCall *call) {
	const char *name, *owner;
	char unique[24];

	if (call_read_args(call, "s", &name) < 0)
		return -EPROTO;
	if (streq(name, DRIVER_NAME))
		owner = DRIVER_NAME;
	else {
		uint64_t id = driver_lookup_owner(call->driver, name);
		if (!id)
			return call_fail(call, DBUS_ERR("NameHasNoOwner"), "Could not get owner of name '%s': no such name",
					 name);
		message_unique_name_format(unique, id);
		owner = unique;
	}
	return call_reply_args(call, "s", owner);
}

static int method_get_connection_unix_user(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	uint32_t uid;

	switch (call_get_peer_or_kernel_peer(call, "UID", &name, &peer, &kp)) {
	case FOUND_SELF:
		uid = getuid();
		break;
	case FOUND_PEER:
		if (!peer->is_unix)
			return call_fail(call, DBUS_ERR("Failed"), "Could not determine UID for '%s'", name);
		uid = peer->creds.uid;
		break;
	case FOUND_KERNEL_PEER:
		if (kp->uid == (uid_t) -1)
			return call_fail(call, DBUS_ERR("Failed"), "Could not determine UID for '%s'", name);
		uid = kp->uid;
		break;
	default:
		return -EPROTO;
	}
	return call_reply_args(call, "u", uid);
}

static int method_get_connection_unix_process_id(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	const ClientCreds *creds;
	uint32_t pid;

	switch (call_get_peer_or_kernel_peer(call, "PID", &name, &peer, &kp)) {
	case FOUND_SELF:
		pid = getpid();
		break;
	case FOUND_PEER:
	case FOUND_KERNEL_PEER:
		creds = peer ? &peer->creds : &kp->creds;
		if (!creds->have_pid)
			return call_fail(call, DBUS_ERR("UnixProcessIdUnknown"), "Could not determine PID for '%s'", name);
		pid = creds->pid;
		break;
	default:
		return -EPROTO;
	}
	return call_reply_args(call, "u", pid);
}

static int method_get_adt_audit_session_data(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;

	if (call_get_peer_or_kernel_peer(call, "audit session data", &name, &peer, &kp) == FOUND_ERROR)
		return -EPROTO;
	return call_fail(call, DBUS_ERR("AdtAuditDataUnknown"), "Could not determine audit session data for '%s'", name);
}

static int method_get_connection_selinux_security_context(DriverCall *call) {
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;

	if (call_get_peer_or_kernel_peer(call, "security context", &name, &peer, &kp) == FOUND_ERROR)
		return -EPROTO;
	return call_fail(call, DBUS_ERR("SELinuxSecurityContextUnknown"),
			 "Could not determine security context for '%s'", name);
}

/* a{sv} entries: the builder's errors are sticky, wire_builder_finish()
 * reports them */
static void asv_open(WireBuilder *b, const char *key, const char *sig) {
	wire_builder_open_container(b, '{', "sv");
	wire_builder_append_basic(b, 's', key);
	wire_builder_open_container(b, 'v', sig);
}

static void asv_close(WireBuilder *b) {
	wire_builder_close_container(b);
	wire_builder_close_container(b);
}

/* @v: as for wire_builder_append_basic() */
static void asv_add_basic(WireBuilder *b, const char *key, char type, const void *v) {
	char sig[2] = { type, 0 };
	asv_open(b, key, sig);
	wire_builder_append_basic(b, type, v);
	asv_close(b);
}

static void asv_add_u32(WireBuilder *b, const char *key, uint32_t v) {
	asv_add_basic(b, key, 'u', &v);
}

/* @v: @n values of 'y' (uint8_t) or 'u' (uint32_t) */
static void asv_add_fixed_array(WireBuilder *b, const char *key, char type, const void *v, size_t n) {
	char sig[3] = { 'a', type, 0 };
	asv_open(b, key, sig);
	wire_builder_open_container(b, 'a', sig + 1);
	for (size_t i = 0; i < n; i++)
		wire_builder_append_basic(b, type, type == 'y' ? (const void *) ((const uint8_t *) v + i)
							       : (const void *) ((const uint32_t *) v + i));
	wire_builder_close_container(b);
	asv_close(b);
}

static int method_get_connection_credentials(DriverCall *call) {
	WireBuilder reply;
	const char *name;
	Client *peer = NULL;
	const KernelPeer *kp = NULL;
	const ClientCreds *creds = NULL;
	uint32_t pid, uid;
	int r;
	bool have_pid, have_uid;

	switch (call_get_peer_or_kernel_peer(call, "credentials", &name, &peer, &kp)) {
	case FOUND_SELF:
		pid = getpid();
		uid = getuid();
		have_pid = have_uid = true;
		break;
	case FOUND_PEER:
		creds = peer->is_unix ? &peer->creds : NULL;
		pid = peer->creds.pid;
		uid = peer->creds.uid;
		have_pid = peer->creds.have_pid;
		have_uid = peer->is_unix;
		break;
	case FOUND_KERNEL_PEER:
		creds = kp->uid != (uid_t) -1 ? &kp->creds : NULL;
		pid = kp->creds.pid;
		uid = kp->uid;
		have_pid = kp->creds.have_pid;
		have_uid = kp->uid != (uid_t) -1;
		break;
	default:
		return -EPROTO;
	}

	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	if (have_pid)
		asv_add_u32(&reply, "ProcessID", pid);
	if (have_uid)
		asv_add_u32(&reply, "UnixUserID", uid);
	if (creds) {
		uint32_t gids[257];
		int n = 0;
		gids[n++] = creds->gid;
		for (size_t i = 0; i < creds->n_groups && n < 257; i++) {
			bool dup = false;
			for (int k = 0; k < n; k++)
				dup = dup || gids[k] == creds->groups[i];
			if (!dup)
				gids[n++] = creds->groups[i];
		}
		/* dbus-daemon sorts the groups */
		for (int i = 1; i < n; i++)
			for (int k = i; k > 0 && gids[k - 1] > gids[k]; k--) {
				uint32_t t = gids[k];
				gids[k] = gids[k - 1];
				gids[k - 1] = t;
			}
		asv_add_fixed_array(&reply, "UnixGroupIDs", 'u', gids, (size_t) n);
	}
	const char *label = peer ? peer->creds.label : kp ? kp->creds.label : NULL;
	if (label)
		asv_add_fixed_array(&reply, "LinuxSecurityLabel", 'y', label, strlen(label) + 1);
	/* no ProcessFD: dbus-daemon 1.14 has none (it came with 1.15.8) */
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

static int method_reload_config(DriverCall *call) {
	_cleanup_free_ char *error = NULL;
	int r = bus_reload(call->driver->bus, &error);
	/* as dbus-daemon, whose reload sends ActivatableServicesChanged
	 * from a transaction of its own, before the call's */
	call_capture(call);
	if (r < 0) {
		/* the running configuration stays; the error names file and line */
		log_info("Unable to reload configuration: %s", error ? error : strerror(-r));
		return call_fail(call, DBUS_ERR("Failed"), "%s", error ? error : strerror(-r));
	}
	return call_reply_args(call, "");
}

static int method_get_id(DriverCall *call) {
	const char *id = call->driver->bus->guid;
	return call_reply_args(call, "s", id);
}

/* a rule match_rule_parse() refused, answered in dbus-daemon's words */
static int match_rule_refuse(DriverCall *call, int r, const MatchRuleError *e) {
	if (r == -E2BIG)
		return call_fail(call, DBUS_ERR("LimitsExceeded"), "%s", e->message);
	if (r == -EINVAL)
		return call_fail(call, DBUS_ERR("MatchRuleInvalid"), "%s", e->message);
	return r;
}

static int method_add_match(DriverCall *call) {
	Client *c = call->caller;
	Bus *bus = call->driver->bus;
	MatchRuleError error;
	const char *text;
	MatchRule *rule;
	int r;

	if (c->n_matches >= bus->limits.max_match_rules_per_connection) {
		/* dbus-daemon logs this one */
		log_security("Connection \"%s\" is not allowed to add more match rules (increase limits in "
			     "configuration file if required; max_match_rules_per_connection=%" PRIu64 ")",
			     c->unique_name, bus->limits.max_match_rules_per_connection);
		return call_fail(call, DBUS_ERR("LimitsExceeded"),
				 "Connection \"%s\" is not allowed to add more match rules (increase limits in "
				 "configuration file if required; max_match_rules_per_connection=%" PRIu64 ")",
				 c->unique_name, bus->limits.max_match_rules_per_connection);
	}
	if (call_read_args(call, "s", &text) < 0)
		return -EPROTO;

	r = match_rule_parse(text, strlen(text), &rule, &error);
	if (r < 0)
		return match_rule_refuse(call, r, &error);
	/* as dbus-daemon: eavesdropping needs the caller to be root or the
	 * bus's own uid; the receive policy (eavesdrop="true") then applies */
	if (match_rule_is_eavesdrop(rule) && !client_is_privileged(c)) {
		match_rule_free(rule);
		return call_fail_unprivileged(call);
	}
	r = client_match_add(c, rule);
	if (r == -EXFULL)
		return call_fail(call, DBUS_ERR("LimitsExceeded"), "Too many match rules for \"%s\"", c->unique_name);
	if (r < 0)
		return r;
	return call_reply_args(call, "");
}

static int method_remove_match(DriverCall *call) {
	Client *c = call->caller;
	_cleanup_(match_rule_freep) MatchRule *rule = NULL;
	MatchRuleError error;
	const char *text;
	int r;

	if (call_read_args(call, "s", &text) < 0)
		return -EPROTO;
	r = match_rule_parse(text, strlen(text), &rule, &error);
	if (r < 0)
		return match_rule_refuse(call, r, &error);
	if (client_match_remove(c, rule) < 0)
		return call_fail(call, DBUS_ERR("MatchRuleNotFound"),
				 "The given match rule wasn't found and can't be removed");
	return call_reply_args(call, "");
}

static int method_become_monitor(DriverCall *call) {
	Client *c = call->caller;
	WireReader rd;
	size_t n = 0;
	uint32_t flags = 0;
	MatchRule **parsed = NULL;
	size_t n_parsed = 0;
	MatchRuleError error;
	int r;

	/* asu: count the rules, then read the flags after them */
	wire_reader_init(&rd, call->h, call->body);
	if (wire_reader_enter(&rd, 'a') < 0)
		return -EBADMSG;
	while (wire_reader_peek(&rd) == 's') {
		if (wire_reader_read_basic(&rd, 's', NULL) < 0)
			return -EBADMSG;
		n++;
	}
	if (wire_reader_exit(&rd) < 0 || wire_reader_read_basic(&rd, 'u', &flags) < 0)
		return -EBADMSG;
	if (flags != 0)
		return call_fail(call, DBUS_ERR("InvalidArgs"), "BecomeMonitor does not support any flags yet");
	parsed = calloc(n + 1, sizeof(*parsed));
	if (!parsed)
		return -ENOMEM;
	wire_reader_init(&rd, call->h, call->body);
	r = wire_reader_enter(&rd, 'a');
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const char *rule = NULL;
		r = wire_reader_read_basic(&rd, 's', &rule);
		if (r < 0)
			break;
		r = match_rule_parse(rule, strlen(rule), &parsed[n_parsed], &error);
		if (r < 0) {
			r = match_rule_refuse(call, r, &error);
			break;
		}
		n_parsed++;
	}
	if (r < 0) {
		for (size_t k = 0; k < n_parsed; k++)
			match_rule_free(parsed[k]);
		free(parsed);
		return r;
	}

	r = call_reply_args(call, "");
	if (r >= 0) {
		/* its names go, the unique one too (dbus-daemon releases
		 * them all, bus_connection_be_monitor()) */
		driver_names_settle(call->driver);
		driver_names_leave(call->driver, c);
		r = monitor_become(call->driver->bus, c, parsed, n_parsed);
	}
	else {
		for (size_t k = 0; k < n_parsed; k++)
			match_rule_free(parsed[k]);
		free(parsed);
	}
	return r;
}

static int method_get_machine_id(DriverCall *call) {
	const char *id = call->driver->bus->machine_id;
	return call_reply_args(call, "s", id);
}

static int method_ping(DriverCall *call) {
	return call_reply_args(call, "");
}

static int method_introspect(DriverCall *call);
static int method_properties_get(DriverCall *call);
static int method_properties_get_all(DriverCall *call);
static int method_properties_set(DriverCall *call);
static int method_get_stats(DriverCall *call);
static int method_get_connection_stats(DriverCall *call);
static int method_get_all_match_rules(DriverCall *call);

typedef enum MethodFlags {
	METHOD_ANY_PATH = 1 << 0,	/* available at every object path */
	METHOD_PRIVILEGED = 1 << 1,	/* caller's uid must be ours or 0 */
} MethodFlags;

typedef struct DriverMethod {
	const char *name;
	const char *in;
	const char *out;
	int (*handler)(DriverCall *call);
	MethodFlags flags;
} DriverMethod;

typedef struct DriverProperty {
	const char *name;
	const char *type;
} DriverProperty;

typedef enum InterfaceFlags {
	IFACE_ANY_PATH = 1 << 0,
	IFACE_UNINTERESTING = 1 << 1,	/* not in the Interfaces property */
} InterfaceFlags;

typedef struct DriverInterface {
	const char *name;
	const DriverMethod *methods;
	const char *extra_xml;
	InterfaceFlags flags;
	const DriverProperty *properties;
} DriverInterface;

static const DriverMethod dbus_methods[] = {
	{ "Hello", "", "s", method_hello, METHOD_ANY_PATH },
	{ "RequestName", "su", "u", method_request_name, METHOD_ANY_PATH },
	{ "ReleaseName", "s", "u", method_release_name, METHOD_ANY_PATH },
	{ "StartServiceByName", "su", "u", method_start_service_by_name, METHOD_ANY_PATH },
	{ "UpdateActivationEnvironment", "a{ss}", "", method_update_activation_environment, METHOD_PRIVILEGED },
	{ "NameHasOwner", "s", "b", method_name_has_owner, METHOD_ANY_PATH },
	{ "ListNames", "", "as", method_list_names, METHOD_ANY_PATH },
	{ "ListActivatableNames", "", "as", method_list_activatable_names, METHOD_ANY_PATH },
	{ "AddMatch", "s", "", method_add_match, METHOD_ANY_PATH },
	{ "RemoveMatch", "s", "", method_remove_match, METHOD_ANY_PATH },
	{ "GetNameOwner", "s", "s", method_get_name_owner, METHOD_ANY_PATH },
	{ "ListQueuedOwners", "s", "as", method_list_queued_owners, METHOD_ANY_PATH },
	{ "GetConnectionUnixUser", "s", "u", method_get_connection_unix_user, METHOD_ANY_PATH },
	{ "GetConnectionUnixProcessID", "s", "u", method_get_connection_unix_process_id, METHOD_ANY_PATH },
	{ "GetAdtAuditSessionData", "s", "ay", method_get_adt_audit_session_data, METHOD_ANY_PATH },
	{ "GetConnectionSELinuxSecurityContext", "s", "ay", method_get_connection_selinux_security_context,
	  METHOD_ANY_PATH },
	{ "ReloadConfig", "", "", method_reload_config, METHOD_ANY_PATH },
	{ "GetId", "", "s", method_get_id, METHOD_ANY_PATH },
	{ "GetConnectionCredentials", "s", "a{sv}", method_get_connection_credentials, METHOD_ANY_PATH },
	{}
};

static const DriverProperty dbus_properties[] = {
	{ "Features", "as" },
	{ "Interfaces", "as" },
	{}
};

static const DriverMethod properties_methods[] = {
	{ "Get", "ss", "v", method_properties_get, 0 },
	{ "GetAll", "s", "a{sv}", method_properties_get_all, 0 },
	{ "Set", "ssv", "", method_properties_set, 0 },
	{}
};

static const DriverMethod introspectable_methods[] = {
	{ "Introspect", "", "s", method_introspect, METHOD_ANY_PATH },
	{}
};

static const DriverMethod monitoring_methods[] = {
	{ "BecomeMonitor", "asu", "", method_become_monitor, METHOD_PRIVILEGED },
	{}
};

static const DriverMethod stats_methods[] = {
	{ "GetStats", "", "a{sv}", method_get_stats, 0 },
	{ "GetConnectionStats", "s", "a{sv}", method_get_connection_stats, 0 },
	{ "GetAllMatchRules", "", "a{sas}", method_get_all_match_rules, 0 },
	{}
};

static const DriverMethod peer_methods[] = {
	{ "GetMachineId", "", "s", method_get_machine_id, METHOD_ANY_PATH },
	{ "Ping", "", "", method_ping, METHOD_ANY_PATH },
	{}
};

static const DriverInterface driver_interfaces[] = {
	{ DRIVER_INTERFACE, dbus_methods,
	  "    <signal name=\"NameOwnerChanged\">\n"
	  "      <arg type=\"s\"/>\n"
	  "      <arg type=\"s\"/>\n"
	  "      <arg type=\"s\"/>\n"
	  "    </signal>\n"
	  "    <signal name=\"NameLost\">\n"
	  "      <arg type=\"s\"/>\n"
	  "    </signal>\n"
	  "    <signal name=\"NameAcquired\">\n"
	  "      <arg type=\"s\"/>\n"
	  "    </signal>\n"
	  "    <signal name=\"ActivatableServicesChanged\">\n"
	  "    </signal>\n",
	  IFACE_ANY_PATH | IFACE_UNINTERESTING, dbus_properties },
	{ "org.freedesktop.DBus.Properties", properties_methods,
	  "    <signal name=\"PropertiesChanged\">\n"
	  "      <arg type=\"s\" name=\"interface_name\"/>\n"
	  "      <arg type=\"a{sv}\" name=\"changed_properties\"/>\n"
	  "      <arg type=\"as\" name=\"invalidated_properties\"/>\n"
	  "    </signal>\n",
	  IFACE_UNINTERESTING, NULL },
	{ "org.freedesktop.DBus.Introspectable", introspectable_methods, NULL, IFACE_ANY_PATH | IFACE_UNINTERESTING,
	  NULL },
	{ "org.freedesktop.DBus.Monitoring", monitoring_methods, NULL, 0, NULL },
	{ "org.freedesktop.DBus.Debug.Stats", stats_methods, NULL, 0, NULL },
	{ "org.freedesktop.DBus.Peer", peer_methods, NULL, IFACE_ANY_PATH | IFACE_UNINTERESTING, NULL },
	{}
};

/* a{sv}-free helpers for the two properties */
static void append_property_value(Driver *d, const char *name, WireBuilder *b) {
	wire_builder_open_container(b, 'a', "s");
	if (streq(name, "Features")) {
		wire_builder_append_basic(b, 's', "ActivatableServicesChanged");
		wire_builder_append_basic(b, 's', "HeaderFiltering");
		if (d->bus->systemd_activation)
			wire_builder_append_basic(b, 's', "SystemdActivation");
	} else {
		for (const DriverInterface *i = driver_interfaces; i->name; i++)
			if (!(i->flags & IFACE_UNINTERESTING))
				wire_builder_append_basic(b, 's', i->name);
	}
	wire_builder_close_container(b);
}

static const DriverInterface *find_interface(DriverCall *call, const char *name) {
	for (const DriverInterface *i = driver_interfaces; i->name; i++)
		if (streq(i->name, name))
			return i;
	call_fail(call, DBUS_ERR("UnknownInterface"), "Interface \"%s\" not found", name);
	return NULL;
}

static const DriverProperty *find_property(DriverCall *call, const DriverInterface *i, const char *name) {
	for (const DriverProperty *p = i->properties; p && p->name; p++)
		if (streq(p->name, name))
			return p;
	call_fail(call, DBUS_ERR("UnknownProperty"), "Property \"%s.%s\" not found", i->name, name);
	return NULL;
}

static int method_properties_get(DriverCall *call) {
	const char *iface, *prop;
	const DriverInterface *i;
	const DriverProperty *p;
	WireBuilder reply;
	int r;

	if (call_read_args(call, "ss", &iface, &prop) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)) || !(p = find_property(call, i, prop)))
		return -EPROTO;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'v', p->type);
	append_property_value(call->driver, p->name, &reply);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

static int method_properties_get_all(DriverCall *call) {
	const char *iface;
	const DriverInterface *i;
	WireBuilder reply;
	int r;

	if (call_read_args(call, "s", &iface) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)))
		return -EPROTO;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	for (const DriverProperty *p = i->properties; p && p->name; p++) {
		asv_open(&reply, p->name, p->type);
		append_property_value(call->driver, p->name, &reply);
		asv_close(&reply);
	}
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

static int method_properties_set(DriverCall *call) {
	const char *iface, *prop;
	const DriverInterface *i;

	if (call_read_args(call, "ss", &iface, &prop) < 0)
		return -EPROTO;
	if (!(i = find_interface(call, iface)) || !find_property(call, i, prop))
		return -EPROTO;
	return call_fail(call, DBUS_ERR("PropertyReadOnly"), "Property '%s.%s' cannot be set", iface, prop);
}

/* one <arg> per complete type of @sig */
static void introspect_args(FILE *f, const char *sig, const char *dir) {
	size_t len = strlen(sig), n;

	for (; len > 0 && (n = wire_signature_next_len(sig, len)) > 0; sig += n, len -= n)
		fprintf(f, "      <arg direction=\"%s\" type=\"%.*s\"/>\n", dir, (int) n, sig);
}

/* the introspection XML of the driver at @path */
static char *driver_introspect_at(const char *path) {
	bool canonical = path && streq(path, DRIVER_PATH);
	char *xml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);

	if (!f)
		return NULL;
	fputs(DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE "<node>\n", f);
	for (const DriverInterface *i = driver_interfaces; i->name; i++) {
		if (!canonical && !(i->flags & IFACE_ANY_PATH))
			continue;
		fprintf(f, "  <interface name=\"%s\">\n", i->name);
		for (const DriverMethod *m = i->methods; m->name; m++) {
			fprintf(f, "    <method name=\"%s\">\n", m->name);
			introspect_args(f, m->in, "in");
			introspect_args(f, m->out, "out");
			fputs("    </method>\n", f);
		}
		for (const DriverProperty *p = i->properties; p && p->name; p++)
			fprintf(f,
				"    <property name=\"%s\" type=\"%s\" access=\"read\">\n"
				"      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n"
				"    </property>\n",
				p->name, p->type);
		if (i->extra_xml)
			fputs(i->extra_xml, f);
		fputs("  </interface>\n", f);
	}
	if (path && streq(path, "/"))
		fputs("  <node name=\"org/freedesktop/DBus\"/>\n", f);
	else if (path && streq(path, "/org"))
		fputs("  <node name=\"freedesktop/DBus\"/>\n", f);
	else if (path && streq(path, "/org/freedesktop"))
		fputs("  <node name=\"DBus\"/>\n", f);
	fputs("</node>\n", f);
	if (fclose(f) != 0) {
		free(xml);
		return NULL;
	}
	return xml;
}

char *driver_introspect_string(void) {
	return driver_introspect_at(DRIVER_PATH);
}

static int method_introspect(DriverCall *call) {
	_cleanup_free_ char *xml = driver_introspect_at(call->h->path.s);

	if (!xml)
		return -ENOMEM;
	return call_reply_args(call, "s", xml);
}

/* the names and peaks of every client, brought up to date */
static void stats_refresh(Driver *d) {
	Client *c;

	list_for_each_entry(c, &d->bus->clients, link)
		if (c->state == CLIENT_ACTIVE && c->conn)
			driver_stats_names(d, c, false);
}

static int method_get_stats(DriverCall *call) {
	static uint32_t stats_serial;	/* as dbus-daemon: one per method */
	Bus *bus = call->driver->bus;
	WireBuilder reply;
	uint32_t serial = stats_serial++, zero = 0, active = bus->n_complete, incomplete = bus->n_incomplete;
	uint32_t rules, names;
	int r;

	stats_refresh(call->driver);
	rules = bus->stats_match_rules;
	names = bus->n_complete + bus->stats_wk_names;
	/* libdbus' list allocator's pools (ListMemPool*) have no equivalent */
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	asv_add_u32(&reply, "Serial", serial);
	asv_add_u32(&reply, "ListMemPoolUsedBytes", zero);
	asv_add_u32(&reply, "ListMemPoolCachedBytes", zero);
	asv_add_u32(&reply, "ListMemPoolAllocatedBytes", zero);
	asv_add_u32(&reply, "ActiveConnections", active);
	asv_add_u32(&reply, "IncompleteConnections", incomplete);
	asv_add_u32(&reply, "MatchRules", rules);
	asv_add_u32(&reply, "PeakMatchRules", bus->peak_match_rules);
	asv_add_u32(&reply, "PeakMatchRulesPerConnection", bus->peak_match_rules_per_conn);
	asv_add_u32(&reply, "BusNames", names);
	asv_add_u32(&reply, "PeakBusNames", bus->peak_bus_names);
	asv_add_u32(&reply, "PeakBusNamesPerConnection", bus->peak_bus_names_per_conn);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

static int method_get_connection_stats(DriverCall *call) {
	static uint32_t stats_serial;
	WireBuilder reply;
	const char *name;
	Client *peer = NULL;
	int r;

	switch (call_get_peer(call, "statistics", &name, &peer)) {
	case FOUND_PEER:
		break;
	case FOUND_SELF:
		return call_fail(call, DBUS_ERR("InvalidArgs"),
				 "GetConnectionStats is not meaningful for the message bus \"%s\" itself", DRIVER_NAME);
	default:
		return -EPROTO;
	}
	driver_stats_names(call->driver, peer, false);
	/* what dbus-daemon reads from its DBusConnection: messages and bytes
	 * it holds for the peer now, and the peaks of those; it has read and
	 * routed whatever the peer sent, so nothing is held incoming */
	const char *unique = peer->unique_name;
	uint32_t serial = stats_serial++, zero = 0, rules = peer->n_matches, names = 1 + peer->stats_wk_names;
	uint32_t out = peer->out_n, out_bytes = peer->out_bytes, out_fds = 0, peak = peer->peak_out_bytes;
	for (size_t i = 0; i < peer->out_n; i++)
		out_fds += peer->out[(peer->out_head + i) % peer->out_cap].n_fds;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	asv_add_u32(&reply, "Serial", serial);
	asv_add_u32(&reply, "MatchRules", rules);
	asv_add_u32(&reply, "PeakMatchRules", peer->peak_match_rules);
	asv_add_u32(&reply, "BusNames", names);
	asv_add_u32(&reply, "PeakBusNames", peer->peak_bus_names);
	asv_add_basic(&reply, "UniqueName", 's', unique);
	asv_add_u32(&reply, "IncomingMessages", zero);
	asv_add_u32(&reply, "IncomingBytes", zero);
	asv_add_u32(&reply, "IncomingFDs", zero);
	asv_add_u32(&reply, "PeakIncomingBytes", zero);
	asv_add_u32(&reply, "PeakIncomingFDs", zero);
	asv_add_u32(&reply, "OutgoingMessages", out);
	asv_add_u32(&reply, "OutgoingBytes", out_bytes);
	asv_add_u32(&reply, "OutgoingFDs", out_fds);
	asv_add_u32(&reply, "PeakOutgoingBytes", peak);
	asv_add_u32(&reply, "PeakOutgoingFDs", zero);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

/* one rule of GetAllMatchRules' answer, as a string into the array @userdata */
static int append_match_rule(const MatchRule *rule, void *userdata) {
	_cleanup_free_ char *s = match_rule_to_string(rule);

	if (!s)
		return -ENOMEM;
	wire_builder_append_basic(userdata, 's', s);
	return 0;
}

static int method_get_all_match_rules(DriverCall *call) {
	Bus *bus = call->driver->bus;
	WireBuilder reply;
	Client *c;
	int r;

	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sas}");
	list_for_each_entry(c, &bus->clients, link) {
		if (c->state != CLIENT_ACTIVE)
			continue;
		wire_builder_open_container(&reply, '{', "sas");
		wire_builder_append_basic(&reply, 's', c->unique_name);
		wire_builder_open_container(&reply, 'a', "s");
		if (client_match_foreach(c, append_match_rule, &reply) < 0) {
			wire_builder_done(&reply);
			return -ENOMEM;
		}
		wire_builder_close_container(&reply);
		wire_builder_close_container(&reply);
	}
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

/*
 * ActivatableServicesChanged: a broadcast of the driver, as dbus-daemon
 * sends it whenever it has read the service directories again (ReloadConfig,
 * a change in a directory), whether anything changed or not.
 */
void driver_broadcast_activatable_services_changed(Driver *d) {
	_Alignas(8) uint8_t kbuf[MESSAGE_KMSG_BASE_SIZE];
	uint64_t bloom[BLOOM_DEFAULT_SIZE / 8] = {}, keys[MATCH_KEYS_MAX];
	_cleanup_free_ uint8_t *msg = NULL;
	WireBuilder b;
	WireHeader h;
	size_t len;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, (uint32_t) ++d->serial ?: 1);
	if (r < 0)
		return;
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, DRIVER_INTERFACE);
	wire_builder_set_member(&b, "ActivatableServicesChanged");
	wire_builder_set_sender(&b, DRIVER_NAME);
	r = wire_builder_finish(&b, &msg, &len);
	wire_builder_done(&b);
	if (r < 0 || wire_header_parse(msg, len, &h) < 0)
		return;
	bloom_add_message(bloom, BLOOM_DEFAULT_SIZE, BLOOM_DEFAULT_N_HASH, &h, msg + h.header_len);
	MessageTarget t = { .dst_id = KDBUS_DST_ID_BROADCAST };
	MessageSendParts parts = {
		.header = msg,
		.header_len = h.header_len,
		.body = msg + h.header_len,
		.body_len = h.body_len,
		.bloom = bloom,
		.bloom_size = BLOOM_DEFAULT_SIZE,
		.keys = keys,
		.n_keys = kdbus_conn_is_userspace(d->conn) ? match_keys_of_signal(DRIVER_INTERFACE,
										  "ActivatableServicesChanged", keys) : 0,
	};
	struct kdbus_msg *km = message_kmsg_build(&h, &t, &parts, kbuf);
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) km };
	r = kdbus_cmd_send(d->conn, &cmd);
	if (r < 0)
		log_debug("Cannot broadcast ActivatableServicesChanged: %s", strerror(-r));
}

/* ---- dispatch ------------------------------------------------------------- */

static int driver_handle_call(DriverCall *call) {
	const WireHeader *h = call->h;
	const char *iface = h->interface.s;
	const char *member = h->member.s;
	bool found_iface = false;

	call->canonical_path = h->path.s && streq(h->path.s, DRIVER_PATH);

	for (const DriverInterface *i = driver_interfaces; i->name; i++) {
		if (!call->canonical_path && !(i->flags & IFACE_ANY_PATH))
			continue;
		if (iface && !streq(iface, i->name))
			continue;
		found_iface = true;
		for (const DriverMethod *m = i->methods; m->name; m++) {
			if (!streq(m->name, member))
				continue;
			if ((m->flags & METHOD_PRIVILEGED) && !client_is_privileged(call->caller))
				return call_fail_unprivileged(call);
			if (!call->canonical_path && !(m->flags & METHOD_ANY_PATH))
				return call_fail(call, DBUS_ERR("AccessDenied"),
						 "Method '%s' is only available at the canonical object path '%s'", member,
						 DRIVER_PATH);
			if (!streq(strempty(h->signature.s), m->in))
				return call_fail(call, DBUS_ERR("InvalidArgs"), "Call to %s has wrong args (%s, expected %s)\n",
						 member, strempty(h->signature.s), m->in);
			return m->handler(call);
		}
	}
	return call_fail(call, found_iface ? DBUS_ERR("UnknownMethod") : DBUS_ERR("UnknownInterface"),
			 "%s does not understand message %s", DRIVER_NAME, member);
}

static void driver_handle_message(Driver *d, struct kdbus_msg *km) {
	KclientMsgParts parts;
	int r;

	Client *c = bus_find_client(d->bus, km->src_id);
	if (!c || km->payload_type != KDBUS_PAYLOAD_DBUS)
		return;
	kclient_msg_read(d->conn, km, &parts);
	/* fds sent to the driver are not used */
	for (unsigned i = 0; i < parts.n_fds; i++)
		safe_close(parts.fds[i]);
	const uint8_t *data = parts.payload.iov_base;
	size_t len = parts.len;
	if (!data)
		return;

	WireHeader h = {};
	/* validated by the sender's client (client_header_parse_shared(), and
	 * the body by wire_body_validate()) */
	if (wire_header_parse_trusted(data, len, &h) < 0) {
		log_debug("Dropping a message from %s to the bus driver: its header does not parse", c->unique_name);
		return;
	}
	if (!c->hello_done && driver_is_plain_hello(&h)) {
		r = driver_hello_fast(d, c, &h);
		if (r < 0)
			log_debug("Cannot answer Hello of %s: %s", c->unique_name, strerror(-r));
		else
			monitor_eavesdrop_driver_message(d->bus, c, data, len);
		return;
	}
	if (!h.destination.s) {
		/* through the driver only to keep its place among the
		 * client's calls (its header as the client wrote it, as a
		 * plain message: forward_rewrite()) */
		_cleanup_free_ uint8_t *reply = NULL;
		size_t reply_len;
		r = driver_build_undirected_reply(c, &h, &reply, &reply_len);
		if (r >= 0 && reply)
			r = driver_send_raw(d, c, reply, reply_len, 0);
		if (r < 0)
			log_debug("Cannot answer a call of %s without destination: %s", c->unique_name,
				  strerror(-r));
		return;
	}

	if (h.type != WIRE_TYPE_METHOD_CALL) {
		/* ignored (ActivationFailure was handled before it was sent,
		 * service_registry_activation_failure_raw()), and so taken */
		monitor_eavesdrop_driver_message(d->bus, c, data, len);
		return;
	}

	DriverCall call = { .driver = d, .caller = c, .h = &h, .body = data + h.header_len };
	/* @h: parsed above (this is no Hello, and has a destination) */
	if (d->bus->n_monitors && driver_shows_monitors_itself(&h)) {
		call.capture = data;
		call.capture_len = len;
	}
	r = driver_handle_call(&call);
	call_capture(&call);
	if (r >= 0 && c->conn)
		monitor_eavesdrop_driver_message(d->bus, c, data, len);
	if (r < 0 && c->conn) {
		const char *name, *text;
		WireBuilder e;
		if (call.error.name) {
			name = call.error.name;
			text = call.error.text ? call.error.text : "";
		} else if (r == -ENOMEM) {
			name = DBUS_ERR("NoMemory");
			text = "Not enough memory";
		} else {
			name = DBUS_ERR("Failed");
			text = strerror(-r);
		}
		/* as libdbus makes dbus-daemon's errors: the call's sender as
		 * destination, error name, reply serial (the fields in that
		 * order), NO_REPLY_EXPECTED */
		r = wire_builder_init(&e, WIRE_TYPE_ERROR, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
		if (r >= 0) {
			if (h.sender.s)
				wire_builder_set_destination(&e, h.sender.s);
			wire_builder_set_error_name(&e, name);
			wire_builder_set_reply_serial(&e, h.serial);
			wire_builder_append_basic(&e, 's', text);
			r = driver_send_message(d, c, &e, h.serial, NULL, 0);
		}
		if (r < 0)
			log_debug("Cannot answer %s of %s with %s: %s", strempty(h.member.s), c->unique_name, name,
				  strerror(-r));
	}
	bus_error_clear(&call.error);
}

void driver_dispatch(Driver *d) {
	if (d->dispatching)
		return;
	d->dispatching = true;
	for (;;) {
		struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
		int r = kdbus_cmd_recv(d->conn, &recv);
		if (r < 0)
			break;
		driver_handle_message(d, kdbus_pool_ptr(d->conn, recv.msg.offset));
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = recv.msg.offset };
		(void) kdbus_cmd_free(d->conn, &f);
	}
	d->dispatching = false;
}

static void driver_wakeup(KdbusConn *conn, void *userdata) {
	Driver *d = userdata;
	/* calls addressed by name are run by the client right after its send;
	 * anything else (e.g. a queued call) is run from the ready event */
	bus_schedule_driver(d->bus);
}

void driver_forget_client(Driver *d, Client *c) {
	driver_names_leave(d, c);
}

int driver_new(Driver **ret, Bus *bus) {
	_cleanup_(driver_freep) Driver *d = NULL;
	struct kdbus_cmd_hello h = {
		.size = sizeof(h),
		.flags = KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_HIDDEN_ID,
		.attach_flags_send = _KDBUS_ATTACH_ALL,
		.pool_size = 64 * 1024 * 1024,
	};
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bus = bus;
	r = hash_order_new(&d->names);
	if (r < 0)
		return r;
	r = kdbus_cmd_hello(bus->kbus, &h, &d->conn);
	if (r < 0)
		return r;
	if (h.offset) {	/* (at offset 0 it stays: compat/kdbus-client.c's hello()) */
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = h.offset };
		(void) kdbus_cmd_free(d->conn, &f);
	}
	d->id = h.id;
	kdbus_conn_set_wakeup(d->conn, driver_wakeup, d);
	r = bus_internal_conn_add(bus, d->conn);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(d);
	return 0;
}

Driver *driver_free(Driver *d) {
	if (!d)
		return NULL;
	bus_internal_conn_remove(d->bus, d->conn);
	d->conn = kdbus_conn_close(d->conn);
	for (size_t i = 0; i < d->n_names_to_check; i++)
		free(d->names_to_check[i]);
	free(d->names_to_check);
	hash_order_free(d->names);
	free(d);
	return NULL;
}
