/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-messages.c - the messages the bus synthesizes and sends from
 * org.freedesktop.DBus: driver_send_message() (a message finished with
 * the driver's sender, the receiver's serial and NO_REPLY_EXPECTED, sent
 * through the core), the errors and signals other files of daemon/ build
 * as bytes (driver_build_error(), driver_build_name_owner_changed(), ...,
 * with the fields in dbus-daemon's order), the answers to messages without
 * a destination, prebuilt bytes sent from the driver's connection (and
 * shown to monitors: driver_capture()), driver_send_error(), sending to a
 * well-known name for activation, and the ActivatableServicesChanged
 * broadcast.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/bloom.h"
#include "compat/kdbus-client.h"
#include "compat/match-key.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/monitor-sink.h"
#include "util/macro.h"
#include "util/strutil.h"

uint64_t driver_id(const Driver *d) {
	return d ? d->id : 0;
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

static int driver_build_signal(uint32_t serial, const char *destination, const char *member,
			       const char *const *args, size_t n_args, uint8_t **ret_msg, size_t *ret_len) {
	WireBuilder b;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, serial);
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
	return driver_build_name_owner_changed_numbered(client_next_serial(to), name, old_owner, new_owner, ret_msg,
						       ret_len);
}

int driver_build_name_owner_changed_numbered(uint32_t serial, const char *name, const char *old_owner,
					     const char *new_owner, uint8_t **ret_msg, size_t *ret_len) {
	const char *args[] = { name, old_owner, new_owner };
	return driver_build_signal(serial, NULL, "NameOwnerChanged", args, 3, ret_msg, ret_len);
}

int driver_build_name_signal(Client *to, const char *member, const char *name, uint8_t **ret_msg, size_t *ret_len) {
	return driver_build_name_signal_to(to, to->unique_name, member, name, ret_msg, ret_len);
}

int driver_build_name_signal_to(Client *to, const char *destination, const char *member, const char *name,
				uint8_t **ret_msg, size_t *ret_len) {
	return driver_build_signal(client_next_serial(to), destination, member, &name, 1, ret_msg, ret_len);
}

/* SEND prebuilt dbus1 bytes from the driver to connection @dst_id */
int driver_send_raw_id(Driver *d, uint64_t dst_id, const uint8_t *msg, size_t len, uint64_t reply_cookie) {
	_Alignas(8) uint8_t buf[MESSAGE_KMSG_BYTES_SIZE];
	struct kdbus_msg *m = message_kmsg_bytes(buf, dst_id, ++d->serial, reply_cookie, msg, len);

	int r = kclient_send(d->conn, m, 0, NULL);
	if (_unlikely_(r == -ENOBUFS) && client_take_queue(d->bus, dst_id))
		r = kclient_send(d->conn, m, 0, NULL);
	if (r == -EBADSLT && reply_cookie)
		r = kclient_send(d->conn, m, KCLIENT_SEND_NOT_REPLY, NULL);
	return r;
}

/* SEND prebuilt dbus1 bytes from the driver to @to */
int driver_send_raw(Driver *d, Client *to, const uint8_t *msg, size_t len, uint64_t reply_cookie) {
	return driver_send_raw_id(d, to->id, msg, len, reply_cookie);
}

void driver_capture(Driver *d, const uint8_t *msg, size_t len) {
	uint64_t sink;

	if (d->bus->registry.n_monitors && (sink = monitor_sink_id(d->bus)))
		(void) driver_send_raw_id(d, sink, msg, len, 0);
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

/* ---- broadcast (service directories read again) -------------------------- */

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
	r = kclient_send(d->conn, km, 0, NULL);
	if (r < 0)
		log_debug("Cannot broadcast ActivatableServicesChanged: %s", strerror(-r));
}
