/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-hello.c - Hello, a connection's first call, answered in one
 * place (driver_hello_answer()): the reply, then the NameAcquired of the
 * unique name; monitors see the new connection's NameOwnerChanged between
 * the two.  It goes straight into the client's output while neither a
 * monitor nor an eavesdropper watches (driver_hello_direct(), from
 * forward.c), else through the core to the driver (driver_hello()).  A
 * second Hello is refused by the method table (method_hello()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/monitor-sink.h"
#include "util/macro.h"
#include "util/strutil.h"

/*
 * A new connection's NameOwnerChanged, as monitors see it: after its Hello
 * reply and before its NameAcquired, as dbus-daemon sends them.  Monitors
 * ignore the core's ID_ADD notifications; this copy reaches them through
 * the sink connection, in order with the driver's other messages.  It is
 * not numbered on the new connection, which does not receive it: that
 * would shift the serials of everything the bus sends it next (dbus-daemon
 * numbers a broadcast on one of its receivers, the last NameOwnerChanged
 * subscriber its match rules found, or a monitor).
 */
static void driver_monitors_new_connection(Driver *d, Client *c) {
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;
	uint64_t sink;

	if (!d->bus->registry.n_monitors || !(sink = monitor_sink_id(d->bus)))
		return;
	if (driver_build_name_owner_changed_numbered(client_peek_serial(c), c->unique_name, "", c->unique_name, &msg,
						     &len) >= 0)
		(void) driver_send_raw_id(d, sink, msg, len, 0);
}

/* a Hello the table would take (no arguments, our interface or none) */
bool driver_is_hello(const WireHeader *h) {
	return h->type == WIRE_TYPE_METHOD_CALL && h->member.s && streq(h->member.s, "Hello") &&
	       (!h->signature.s || !h->signature.s[0]) && (!h->interface.s || streq(h->interface.s, DRIVER_INTERFACE));
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

/*
 * The one answer to Hello: the reply and the NameAcquired of the unique
 * name, built once on the stack.  @direct: straight into @c's output (the
 * receive rules apply as to anything from the driver); else through the
 * core, as the driver sends, with the monitors' NameOwnerChanged between
 * the two.  Return: 0, negative errno.
 */
static int driver_hello_answer(Driver *d, Client *c, const WireHeader *h, bool direct) {
	_Alignas(8) uint8_t reply[DRIVER_HELLO_BUF], acquired[DRIVER_HELLO_BUF];
	size_t reply_len, acquired_len, len = 0;
	uint8_t *out;
	int r;

	r = driver_hello_build(c, h, reply, &reply_len, acquired, &acquired_len);
	if (r < 0)
		return r;
	client_mark_hello_done(c);
	if (!direct) {
		r = driver_send_raw(d, c, reply, reply_len, h->serial);
		if (r < 0)
			return r;
		driver_monitors_new_connection(d, c);
		r = driver_send_raw(d, c, acquired, acquired_len, 0);
		if (r >= 0)
			client_policy_capture_driver_refusal(c, acquired, acquired_len);
		return r;
	}
	out = malloc(reply_len + acquired_len);
	if (!out)
		return -ENOMEM;
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
		return 0;
	}
	r = client_queue_owned(c, out, len);	/* frees @out on failure */
	if (r < 0)
		return r;
	bus_schedule_ready(d->bus, c);
	return 0;
}

int driver_hello_direct(Driver *d, Client *c, const WireHeader *h) {
	/* with monitors or eavesdroppers the Hello goes through the core */
	if (d->bus->registry.n_monitors || d->bus->eavesdrop || c->hello_done || !driver_is_hello(h))
		return 0;
	int r = driver_hello_answer(d, c, h, true);
	return r < 0 ? r : 1;
}

int driver_hello(Driver *d, Client *c, const WireHeader *h) {
	return driver_hello_answer(d, c, h, false);
}

/* a Hello the driver did not take as the first (driver_is_hello()): only
 * a second one reaches the method table */
int method_hello(DriverCall *call) {
	return call_fail(call, DBUS_ERR("Failed"), "Already handled an Hello message");
}
