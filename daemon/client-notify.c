/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-notify.c - the core's notifications (names and ids coming and
 * going, reply timeouts) made into the dbus1 signals and errors the bus
 * sends a client: NameOwnerChanged, NameAcquired, NameLost, NoReply.
 */

#include <stdlib.h>

#include "compat/kdbus-client.h"
#include "compat/message.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/answered-calls.h"

static int client_queue_synth(Client *c, uint8_t *msg, size_t len, bool broadcast) {
	WireHeader h;

	/* what the bus synthesizes is subject to the receive policy too
	 * (forbidding.conf denies receiving NameAcquired) */
	if (!client_policy_receives_from_driver(c, msg, len)) {
		free(msg);
		return 0;
	}

	if (broadcast) {
		/* exact dbus1 matching of a signal the bus synthesizes */
		uint64_t dst = KDBUS_DST_ID_BROADCAST;
		if (wire_header_parse(msg, len, &h) < 0 ||
		    (h.destination.s && !message_unique_name_to_id(h.destination.s, h.destination.len, &dst)) ||
		    !client_match_any(c, &h, msg + h.header_len, 0, dst, c->state == CLIENT_MONITOR)) {
			free(msg);
			return 0;
		}
	}
	return client_queue_owned(c, msg, len);
}

bool client_matches_driver_signal(Client *c, const uint8_t *msg, size_t len) {
	WireHeader h;

	return wire_header_parse(msg, len, &h) >= 0 &&
	       client_match_any_of(c, &h, msg + h.header_len, 0, KDBUS_DST_ID_BROADCAST, false, false, NULL);
}

void client_monitor_queue_signal(Client *c, uint8_t *msg, size_t len) {
	(void) client_queue_synth(c, msg, len, true);
}
/* monitor @c's copy @msg of what the driver sends to @owner_id; with the
 * error dbus-daemon shows monitors if @owner refuses it */
static void client_monitor_queue_driver_copy(Client *c, uint64_t owner_id, uint8_t *msg, size_t len) {
	uint8_t *err = NULL;
	size_t elen;
	int r = client_driver_refusal_error(client_registry_find(&c->bus->registry, owner_id), c, msg, len, &err, &elen);

	client_queue_synth(c, msg, len, true);
	if (r > 0) {
		WireHeader h;
		if (wire_header_parse(err, elen, &h) >= 0 &&
		    client_match_any(c, &h, err + h.header_len, 0, KDBUS_DST_ID_NAME, true))
			client_queue_owned(c, err, elen);
		else
			free(err);
	}
}

static void client_name_change(Client *c, const char *name, uint64_t old_id, uint64_t new_id,
			       bool old_queued_or_activator, bool new_queued_or_activator) {
	char old_name[24] = "", new_name[24] = "";
	uint8_t *msg;
	size_t len;

	/* activators and waiters are not owners in dbus1 terms */
	if (old_id && !old_queued_or_activator)
		message_unique_name_format(old_name, old_id);
	if (new_id && !new_queued_or_activator)
		message_unique_name_format(new_name, new_id);
	if (streq(old_name, new_name))
		return;

	/* dbus-daemon's order: NameLost before NameOwnerChanged, and
	 * NameAcquired after it.  A monitor sees the NameLost and NameAcquired
	 * the driver sends to the owners, too. */
	bool own = c->state == CLIENT_ACTIVE && name;
	bool mon = c->state == CLIENT_MONITOR;
	if (own && old_id == c->id && old_name[0] &&
	    driver_build_name_signal(c, "NameLost", name, &msg, &len) >= 0)
		client_queue_synth(c, msg, len, false);
	/* a departing connection is told that it loses its unique name
	 * too (it never reads it; monitors see it) */
	if (mon && old_name[0] &&
	    driver_build_name_signal_to(c, old_name, "NameLost", name ? name : old_name, &msg, &len) >= 0)
		client_monitor_queue_driver_copy(c, old_id, msg, len);
	if (c->state == CLIENT_MONITOR || c->matches.n_noc_rules > 0) {
		if (driver_build_name_owner_changed(c, name ? name : (new_id ? new_name : old_name),
						    old_name, new_name, &msg, &len) >= 0)
			client_queue_synth(c, msg, len, true);
	}
	if (own && new_id == c->id && new_name[0] &&
	    driver_build_name_signal(c, "NameAcquired", name, &msg, &len) >= 0)
		client_queue_synth(c, msg, len, false);
	if (mon && name && new_name[0] &&
	    driver_build_name_signal_to(c, new_name, "NameAcquired", name, &msg, &len) >= 0)
		client_monitor_queue_driver_copy(c, new_id, msg, len);
}

void client_no_reply(Client *c, uint32_t serial, bool callee_gone) {
	uint8_t *msg;
	size_t len;

	if (driver_build_error(c, serial, DBUS_ERR("NoReply"),
			       callee_gone ? "Message recipient disconnected from message bus without replying"
					   : "Message did not receive a reply (timeout by message bus)",
			       &msg, &len) < 0)
		return;
	driver_capture(c->bus->driver, msg, len);
	client_queue_owned(c, msg, len);
}

/* a kernel message: notifications become dbus1 signals or errors */
_noinline_ void client_handle_kernel_msg(Client *c, struct kdbus_msg *m) {
	const struct kdbus_item *cursor = NULL;
	KclientNotify nt;

	while (kclient_notify_next(m, &cursor, &nt)) {
		switch (nt.type) {
		case KCLIENT_NAME_ADD:
		case KCLIENT_NAME_REMOVE:
		case KCLIENT_NAME_CHANGE:
			client_name_change(c, nt.name, nt.old_id, nt.new_id,
					   nt.old_flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR),
					   nt.new_flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR));
			break;
		case KCLIENT_ID_ADD:
		case KCLIENT_ID_REMOVE: {
			const uint64_t hidden = KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER;
			uint64_t id = nt.id;
			if (id == c->id || (nt.flags & hidden) || client_registry_is_internal(&c->bus->registry, id))
				break;
			/* the driver shows monitors a new connection after its Hello */
			if (nt.type == KCLIENT_ID_ADD && c->state == CLIENT_MONITOR)
				break;
			if (nt.type == KCLIENT_ID_ADD)
				client_name_change(c, NULL, 0, id, false, false);
			else
				client_name_change(c, NULL, id, 0, false, false);
			break;
		}
		case KCLIENT_REPLY_TIMEOUT:
			/* a monitor sees the requester's trackers end: the
			 * requester's client shows it the NoReply */
			if (c->state == CLIENT_MONITOR)
				break;
			client_no_reply(c, (uint32_t) m->cookie_reply, false);
			break;
		case KCLIENT_REPLY_DEAD:
			/* a failed activation already answered this call; and
			 * none when the bus exits: dbus-daemon sends these from
			 * its main loop (the expiry of its pending replies),
			 * which no longer runs */
			if (c->state == CLIENT_MONITOR || c->bus->exiting ||
			    answered_calls_consume(&c->bus->answered, c->id, m->cookie_reply))
				break;
			client_no_reply(c, (uint32_t) m->cookie_reply, true);
			break;
		}
	}
}
