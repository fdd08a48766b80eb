/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver-names.c - the driver's name methods: RequestName, ReleaseName
 * (onto the core's NAME_ACQUIRE and NAME_RELEASE, with dbus-daemon's
 * policy and limit refusals), StartServiceByName, NameHasOwner, ListNames,
 * ListActivatableNames, ListQueuedOwners (onto LIST), GetNameOwner; the
 * lookup of a name's owner and of the peer a call names; and the
 * bookkeeping that lists names in dbus-daemon's order ("the order of
 * ListNames").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compat/hash-order.h"
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
#include "daemon/service-registry.h"
#include "daemon/apparmor.h"
#include "daemon/selinux.h"
#include "policy/compile.h"
#include "util/idmap.h"
#include "util/macro.h"
#include "util/strutil.h"

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

/* drop the noted names that have no owner left */
void driver_names_settle(Driver *d) {
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
void driver_names_leave(Driver *d, Client *c) {
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

int method_request_name(DriverCall *call) {
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
	/* SELinux's acquire_svc, then AppArmor's bind, as dbus-daemon */
	if (bus_selinux_enabled()) {
		_cleanup_free_ char *text = NULL;
		if (!bus_selinux_allows_acquire(c, name, &text)) {
			if (!text)
				return -ENOMEM;
			return call_fail(call, DBUS_ERR("AccessDenied"), "%s", text);
		}
	}
	if (bus_apparmor_enabled()) {
		AppArmorRefusal refusal;
		if (!bus_apparmor_allows_acquire(c, name, &refusal))
			return call_fail_apparmor(call, &refusal);
	}
	/* where the core's NAME_ACQUIRE provably decides as policy.c does,
	 * its EPERM is the answer (below); the rest is the daemon's */
	if (!bus->policy.compiled || !policy_compiled_own_is_exact(bus->policy.compiled, name)) {
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
		bool handover = activatable && result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
		if (handover) {
			/* (kdbus.ko moved the activator's messages already:
			 * they are taken below under the receive rules) */
			if (bus->on_kernel)
				client_expect_handover(c);
			/* "Successfully activated" is logged before a
			 * refusal of the NameAcquired, as by dbus-daemon */
			service_registry_name_taken(bus);
		}
		/* the NameAcquired queued for the caller (the NameLost of an
		 * owner it replaced is the other's) is numbered before the
		 * reply, as dbus-daemon's transaction numbers them; before the
		 * output is limited, which would keep it in the core */
		client_take_queued(c);
		if (handover)
			client_limit_output(c);
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

int method_release_name(DriverCall *call) {
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
		/* the caller's NameLost is numbered before the reply
		 * (method_request_name()) */
		client_take_queued(c);
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

int method_start_service_by_name(DriverCall *call) {
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

int method_name_has_owner(DriverCall *call) {
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

		if (client_registry_is_internal(&d->bus->registry, info->id) ||
		    (info->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_MONITOR | KDBUS_HELLO_POLICY_HOLDER)))
			continue;
		Client *c = client_registry_find(&d->bus->registry, info->id);
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
	kclient_free(d->conn, offset);
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

int method_list_names(DriverCall *call) {
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

int method_list_activatable_names(DriverCall *call) {
	_cleanup_strv_free_ char **l = NULL;
	size_t n = 0;
	int r = service_registry_list(call->driver->bus, &l, &n);
	if (r < 0)
		return r;
	return reply_strv(call, DRIVER_NAME, l, n);
}

int method_list_queued_owners(DriverCall *call) {
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

int method_get_name_owner(DriverCall *call) {
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
