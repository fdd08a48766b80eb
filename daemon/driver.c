/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver.c - org.freedesktop.DBus: the driver's connection, its method
 * table and the dispatch of calls.
 *
 * The driver owns a kdbus connection.  Calls arrive on it through the core
 * like any message; each is answered through the core, so replies are
 * ordered with everything else the caller receives.  A call's signature is
 * checked against the method's before the method reads its arguments (with
 * compat/wire's WireReader); replies are built with the WireBuilder, with
 * the header fields dbus-daemon's replies have; errors carry dbus-daemon's
 * names and texts.
 *
 * This file holds struct Driver's lifecycle, the interfaces, methods and
 * properties the driver has, the dispatch of what arrives on its
 * connection, and the methods that have no file of their own (match rules,
 * BecomeMonitor, ReloadConfig, UpdateActivationEnvironment, GetId, Peer).
 * The rest is by job: driver-call.c (answering a call), driver-messages.c
 * (the messages the bus synthesizes and sends), driver-hello.c (Hello),
 * driver-names.c (the name methods and the order of ListNames),
 * driver-connection-info.c (a connection's credentials),
 * driver-introspect.c (Introspect and the properties), driver-stats.c
 * (Debug.Stats); driver-call.h is what they share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compat/hash-order.h"
#include "compat/kdbus-client.h"
#include "compat/match-rule.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/bus.h"
#include "daemon/bus-hooks.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "daemon/launcher.h"
#include "daemon/log.h"
#include "daemon/monitor.h"
#include "daemon/service-registry.h"
#include "policy/config.h"
#include "util/macro.h"
#include "util/strutil.h"

/* ---- methods ---------------------------------------------------------------- */

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

static int method_reload_config(DriverCall *call) {
	_cleanup_free_ char *error = NULL;
	int r = call->driver->bus->hooks->reload(call->driver->bus, &error);
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

	if (c->matches.n >= bus->limits.max_match_rules_per_connection) {
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
	/* ... and AppArmor's eavesdrop */
	if (match_rule_is_eavesdrop(rule) && bus_apparmor_enabled()) {
		AppArmorRefusal refusal;
		if (!bus_apparmor_allows_eavesdrop(c, &refusal)) {
			match_rule_free(rule);
			return call_fail_apparmor(call, &refusal);
		}
	}
	bool eavesdrop = match_rule_is_eavesdrop(rule);
	r = client_match_add(c, rule);
	if (r == -EXFULL)
		return call_fail(call, DBUS_ERR("LimitsExceeded"), "Too many match rules for \"%s\"", c->unique_name);
	if (r < 0)
		return r;
	/* the rule makes @c an eavesdropper (when that fails, the rule stays) */
	if (eavesdrop) {
		r = monitor_eavesdropper_ref(call->driver->bus, c);
		if (r < 0)
			return r;
	}
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
	if (match_rule_is_eavesdrop(rule))
		monitor_eavesdropper_unref(call->driver->bus, c);
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

	/* AppArmor's eavesdrop first, as dbus-daemon */
	if (bus_apparmor_enabled()) {
		AppArmorRefusal refusal;
		if (!bus_apparmor_allows_eavesdrop(c, &refusal))
			return call_fail_apparmor(call, &refusal);
	}
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
	{ "GetConnectionAppArmorSecurityContext", "s", "s", method_get_connection_apparmor_security_context,
	  METHOD_ANY_PATH | METHOD_APPARMOR },
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

const DriverInterface driver_interfaces[] = {
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
			if (_unlikely_(m->flags & METHOD_APPARMOR) && !bus_apparmor_enabled())
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

	Client *c = client_registry_find(&d->bus->registry, km->src_id);
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
	if (!c->hello_done && driver_is_hello(&h)) {
		r = driver_hello(d, c, &h);
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
	if (d->bus->registry.n_monitors && driver_shows_monitors_itself(&h)) {
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

static int driver_take(KdbusConn *conn, struct kdbus_msg *m, void *userdata) {
	driver_handle_message(userdata, m);
	return 0;
}

void driver_dispatch(Driver *d) {
	if (d->dispatching)
		return;
	d->dispatching = true;
	(void) kclient_recv_each(d->conn, driver_take, d);
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
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bus = bus;
	r = hash_order_new(&d->names);
	if (r < 0)
		return r;
	r = kclient_hello(bus->kbus, KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_HIDDEN_ID, 64 * 1024 * 1024, NULL, &d->conn,
			  &d->id);
	if (r < 0)
		return r;
	kdbus_conn_set_wakeup(d->conn, driver_wakeup, d);
	r = client_registry_internal_add(&bus->registry, d->conn);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(d);
	return 0;
}

Driver *driver_free(Driver *d) {
	if (!d)
		return NULL;
	client_registry_internal_remove(&d->bus->registry, d->conn);
	d->conn = kdbus_conn_close(d->conn);
	for (size_t i = 0; i < d->n_names_to_check; i++)
		free(d->names_to_check[i]);
	free(d->names_to_check);
	hash_order_free(d->names);
	free(d);
	return NULL;
}
