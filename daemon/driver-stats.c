/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-stats.c - org.freedesktop.DBus.Debug.Stats: GetStats,
 * GetConnectionStats and GetAllMatchRules, with the counts of names and
 * their peaks as dbus-daemon keeps them (driver_stats_names()).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "compat/kdbus-client.h"
#include "compat/match-rule.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver-call.h"
#include "daemon/driver.h"
#include "util/list.h"
#include "util/macro.h"

/* ---- Debug.Stats' bookkeeping -------------------------------------------------- */

static int stats_count_name(const char *name, uint64_t flags, void *userdata) {
	(*(uint32_t *) userdata)++;
	return 0;
}

/* the well-known names @c owns or waits for, as the core has them */
uint32_t stats_count_names(Driver *d, Client *c) {
	uint32_t n = 0;

	if (kclient_conn_names(d->conn, c->id, KDBUS_NAME_ACTIVATOR, stats_count_name, &n) < 0)
		return c->stats.wk_names;
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
	bus_stats_names_peak(&bus->stats, 1 + (uint64_t) n, bus->registry.n_complete + bus->stats.wk_names);
}

/* ---- methods ---------------------------------------------------------------- */

/* the names and peaks of every client, brought up to date */
static void stats_refresh(Driver *d) {
	Client *c;

	list_for_each_entry(c, &d->bus->registry.all, link)
		if (c->state == CLIENT_ACTIVE && c->conn)
			driver_stats_names(d, c, false);
}

int method_get_stats(DriverCall *call) {
	static uint32_t stats_serial;	/* as dbus-daemon: one per method */
	Bus *bus = call->driver->bus;
	WireBuilder reply;
	uint32_t serial = stats_serial++, zero = 0, active = bus->registry.n_complete, incomplete = bus->registry.n_incomplete;
	uint32_t rules, names;
	int r;

	stats_refresh(call->driver);
	rules = bus->stats.match_rules;
	names = bus->registry.n_complete + bus->stats.wk_names;
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
	asv_add_u32(&reply, "PeakMatchRules", bus->stats.peak_match_rules);
	asv_add_u32(&reply, "PeakMatchRulesPerConnection", bus->stats.peak_match_rules_per_conn);
	asv_add_u32(&reply, "BusNames", names);
	asv_add_u32(&reply, "PeakBusNames", bus->stats.peak_bus_names);
	asv_add_u32(&reply, "PeakBusNamesPerConnection", bus->stats.peak_bus_names_per_conn);
	wire_builder_close_container(&reply);
	return call_reply(call, &reply);
}

int method_get_connection_stats(DriverCall *call) {
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
	uint32_t serial = stats_serial++, zero = 0, rules = peer->matches.n, names = 1 + peer->stats.wk_names;
	uint32_t out = peer->out.n, out_bytes = peer->out.bytes, out_fds = out_ring_fds(&peer->out);
	uint32_t peak = peer->out.peak_bytes;
	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sv}");
	asv_add_u32(&reply, "Serial", serial);
	asv_add_u32(&reply, "MatchRules", rules);
	asv_add_u32(&reply, "PeakMatchRules", peer->matches.peak);
	asv_add_u32(&reply, "BusNames", names);
	asv_add_u32(&reply, "PeakBusNames", peer->stats.peak_bus_names);
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

int method_get_all_match_rules(DriverCall *call) {
	Bus *bus = call->driver->bus;
	WireBuilder reply;
	Client *c;
	int r;

	r = call_reply_init(call, &reply);
	if (r < 0)
		return r;
	wire_builder_open_container(&reply, 'a', "{sas}");
	list_for_each_entry(c, &bus->registry.all, link) {
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
