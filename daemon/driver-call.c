/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-call.c - answering a call to the driver: struct DriverCall's
 * helpers every method uses (the method return as dbus-daemon's libdbus
 * makes it, replies of basic values, reading the arguments, the error a
 * method fails with, the refusal of an unprivileged caller, the a{sv}
 * entries of a reply), BusError, and the calls monitors see from the
 * driver when it handles them (driver_shows_monitors_itself()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/log.h"
#include "util/format.h"
#include "util/macro.h"
#include "util/strutil.h"

bool driver_shows_monitors_itself(const WireHeader *h) {
	return h->type == WIRE_TYPE_METHOD_CALL && h->member.s && streq(h->member.s, "ReloadConfig");
}

/* monitors see the call now (driver_shows_monitors_itself()) */
void call_capture(DriverCall *call) {
	if (!call->capture)
		return;
	driver_capture(call->driver, call->capture, call->capture_len);
	call->capture = NULL;
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
int call_reply_init(DriverCall *call, WireBuilder *b) {
	int r = wire_builder_init(b, WIRE_TYPE_METHOD_RETURN, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	if (call->h->sender.s)
		wire_builder_set_destination(b, call->h->sender.s);
	wire_builder_set_reply_serial(b, call->h->serial);
	return 0;
}

/* send @reply (consumed), unless the caller wants none */
int call_reply(DriverCall *call, WireBuilder *reply) {
	if (!call_wants_reply(call, reply)) {
		wire_builder_done(reply);
		return 0;
	}
	return driver_send_message(call->driver, call->caller, reply, call->h->serial, NULL, 0);
}

/* reply with the values of @types: s (const char *), u (uint32_t), b (bool) */
int call_reply_args(DriverCall *call, const char *types, ...) {
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
int call_fail(DriverCall *call, const char *name, const char *fmt, ...) {
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
int call_read_args(DriverCall *call, const char *types, ...) {
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

int call_fail_apparmor(DriverCall *call, AppArmorRefusal *refusal) {
	_cleanup_free_ char *text = TAKE_PTR(refusal->text);

	if (!text)
		return -ENOMEM;
	return call_fail(call, refusal->error_name, "%s", text);
}

int call_fail_unprivileged(DriverCall *call) {
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

/* a{sv} entries: the builder's errors are sticky, wire_builder_finish()
 * reports them */
void asv_open(WireBuilder *b, const char *key, const char *sig) {
	wire_builder_open_container(b, '{', "sv");
	wire_builder_append_basic(b, 's', key);
	wire_builder_open_container(b, 'v', sig);
}

void asv_close(WireBuilder *b) {
	wire_builder_close_container(b);
	wire_builder_close_container(b);
}

/* @v: as for wire_builder_append_basic() */
void asv_add_basic(WireBuilder *b, const char *key, char type, const void *v) {
	char sig[2] = { type, 0 };
	asv_open(b, key, sig);
	wire_builder_append_basic(b, type, v);
	asv_close(b);
}

void asv_add_u32(WireBuilder *b, const char *key, uint32_t v) {
	asv_add_basic(b, key, 'u', &v);
}

/* @v: @n values of 'y' (uint8_t) or 'u' (uint32_t) */
void asv_add_fixed_array(WireBuilder *b, const char *key, char type, const void *v, size_t n) {
	char sig[3] = { 'a', type, 0 };
	asv_open(b, key, sig);
	wire_builder_open_container(b, 'a', sig + 1);
	for (size_t i = 0; i < n; i++)
		wire_builder_append_basic(b, type, type == 'y' ? (const void *) ((const uint8_t *) v + i)
							       : (const void *) ((const uint32_t *) v + i));
	wire_builder_close_container(b);
	asv_close(b);
}

/* ---- name lookups ----------------------------------------------------------- */

/* the kdbus id owning @name (unique or well-known), 0 if none; activators
 * and waiters do not count as owners */
uint64_t driver_lookup_owner(Driver *d, const char *name) {
	uint64_t id;

	if (name[0] == ':') {
		if (!message_unique_name_to_id(name, strlen(name), &id) || id == d->id)
			return 0;
		Client *c = client_registry_find(&d->bus->registry, id);
		if (!c)	/* a native peer of the kernel bus has its unique name too */
			return kernel_peer_get(d->bus, d->conn, id) ? id : 0;
		return c->state == CLIENT_ACTIVE ? id : 0;
	}

	return kclient_name_owner(d->conn, name, &id) < 0 ? 0 : id;
}

/* bus_driver_get_conn_helper(): the single string argument names a peer */
Found call_get_peer_or_kernel_peer(DriverCall *call, const char *what, const char **ret_name,
					   Client **ret_peer, const KernelPeer **ret_kernel_peer) {
	const char *name;

	if (call_read_args(call, "s", &name) < 0)
		return FOUND_ERROR;
	*ret_name = name;
	if (streq(name, DRIVER_NAME))
		return FOUND_SELF;
	uint64_t id = driver_lookup_owner(call->driver, name);
	Client *c = id ? client_registry_find(&call->driver->bus->registry, id) : NULL;
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

Found call_get_peer(DriverCall *call, const char *what, const char **ret_name, Client **ret_peer) {
	return call_get_peer_or_kernel_peer(call, what, ret_name, ret_peer, NULL);
}
