/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-policy.c - the bus's policy (bus-policy.h): the XML policy and what
 * is derived from it, the part the core enforces and its holders, the
 * groups of the user database, and the checks the bus makes itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "daemon/bus-policy.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/log.h"
#include "policy/compile.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"

typedef struct BusGroups {
	gid_t *gids;
	size_t n;
} BusGroups;

/* the groups of @c for the policy, as dbus-daemon's
 * bus_connection_get_unix_groups(): those the kernel gave with the peer's
 * credentials (SO_PEERGROUPS, in its order), else the user database's */
int bus_groups_of_client(Bus *bus, const Client *c, const gid_t **ret_gids, size_t *ret_n) {
	if (c->creds.have_groups) {
		*ret_gids = c->creds.groups;
		*ret_n = c->creds.n_groups;
		return 0;
	}
	return bus_groups_for_uid(bus, c->creds.uid, ret_gids, ret_n);
}

int bus_groups_for_uid(Bus *bus, uid_t uid, const gid_t **ret_gids, size_t *ret_n) {
	BusGroups *g = idmap_get(&bus->policy.groups_by_uid, (uint64_t) uid + 1);
	int r;

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		r = policy_groups_from_uid(uid, &g->gids, &g->n);
		if (r < 0) {
			free(g);
			return r;
		}
		r = idmap_put(&bus->policy.groups_by_uid, (uint64_t) uid + 1, g);
		if (r < 0) {
			free(g->gids);
			free(g);
			return r;
		}
	}
	*ret_gids = g->gids;
	*ret_n = g->n;
	return 0;
}

void bus_groups_flush(Bus *bus) {
	for (size_t i = 0; bus->policy.groups_by_uid.entries && i <= bus->policy.groups_by_uid.mask; i++) {
		BusGroups *g = bus->policy.groups_by_uid.entries[i].value;
		if (bus->policy.groups_by_uid.entries[i].key && g) {
			free(g->gids);
			free(g);
		}
	}
	idmap_done(&bus->policy.groups_by_uid);
}

/*
 * Whether the policy lets every connection receive anything, whoever it
 * is: the default context's rules do, and no rule anywhere denies a
 * receive (another context's rules can then only allow more).  On the
 * kernel bus a native peer's snapshot is made when it is first seen, so
 * client_policy_send() skips the receive side only when this holds.
 */
static bool bus_policy_everyone_receives(const BusConfig *c, Policy *p) {
	PolicySnapshot *s = NULL;
	PolicyIdentity nobody = { .uid = POLICY_UID_INVALID };

	for (size_t i = 0; i < c->n_policies; i++)
		for (size_t j = 0; j < c->policies[i].n_rules; j++) {
			const BusConfigRule *r = &c->policies[i].rules[j];
			if (r->type == BUS_CONFIG_RULE_RECEIVE && !r->allow && !r->eavesdrop)
				return false;
		}
	if (policy_snapshot_new(&s, p, &nobody) < 0)
		return false;
	bool all = policy_snapshot_receives_all(s);
	policy_snapshot_free(s);
	return all;
}

int bus_policy_check_own(Bus *bus, Client *c, const char *name) {
	const BusConfigRule *rule = NULL;
	int r;

	if (!c->policy.snapshot)
		return 0;
	r = policy_snapshot_check_own(c->policy.snapshot, name, &rule);
	if (r == 0 && rule && rule->log)
		/* dbus-daemon does not log refused names */
		log_debug("Connection %s (%s) is not allowed to own the service \"%s\" (%s:%u)", c->unique_name,
			  client_loginfo(c), name, rule->file, rule->line);
	return r > 0;
}

/* <allow user=...>/<allow group=...>: may this uid connect at all */
int bus_policy_check_connect(Bus *bus, Client *c) {
	const gid_t *gids = NULL;
	size_t n = 0;
	int r;

	if (!c->is_unix)
		return 1;	/* no uid: anonymous or tcp, as the <auth> config allows */
	r = bus_groups_of_client(bus, c, &gids, &n);
	if (r < 0)
		return 0;	/* dbus-daemon rejects a uid whose groups it cannot look up */
	r = policy_check_connect(bus->policy.xml, c->creds.uid, gids, n, bus->euid, NULL);
	return r > 0;
}

static bool config_needs_names(const BusConfig *c) {
	for (size_t i = 0; i < c->n_policies; i++)
		for (size_t j = 0; j < c->policies[i].n_rules; j++) {
			const BusConfigRule *r = &c->policies[i].rules[j];
			if ((r->type == BUS_CONFIG_RULE_SEND && r->destination) ||
			    (r->type == BUS_CONFIG_RULE_RECEIVE && r->sender))
				return true;
		}
	return false;
}

/* ---- the compiled policy in the core ---------------------------------------- */

/* close the policy holders from index @from on: their entries go with them */
static void bus_policy_holders_close(Bus *bus, size_t from) {
	for (size_t i = from; i < bus->policy.n_holders; i++) {
		client_registry_internal_remove(&bus->registry, bus->policy.holders[i]);
		kdbus_conn_close(bus->policy.holders[i]);
		bus->policy.holders[i] = NULL;
	}
	if (bus->policy.n_holders > from)
		bus->policy.n_holders = from;
}

/* holder @i carries @items: UPDATE of an existing holder (atomic), or HELLO */
static int bus_policy_holder_set(Bus *bus, size_t i, const void *items, size_t size) {
	BusPolicy *bp = &bus->policy;
	KdbusConn *conn = NULL;
	int r;

	if (i < bp->n_holders)
		return kclient_update_items(bp->holders[i], items, size);
	KdbusConn **nh = realloc(bp->holders, (i + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	bp->holders = nh;
	r = kclient_hello_policy_holder(bus->kbus, items, size, &conn);
	if (r < 0)
		return r;
	(void) client_registry_internal_add(&bus->registry, conn);
	bp->holders[bp->n_holders++] = conn;
	return 0;
}

/*
 * On kdbus.ko the daemon's clients are privileged connections, which no
 * policy entry binds: the daemon decides the whole XML policy for them,
 * and bus->policy.compiled stays NULL.  The entries are for native peers
 * (kernel-peers.h), whose NAME_ACQUIRE and sends the daemon does not see:
 * compiled so that a residual OWN grants nobody
 * (POLICY_COMPILE_NO_RESIDUAL_OWN), held by policy holders but for the
 * activatable names, whose entries their activators carry (the final ABI
 * takes a name's entries from one owner).  The kernel has no fallback: a
 * name no rule mentions has no entry, and a native peer of another user
 * than the bus's may neither own it nor talk to its owner.
 */
static void bus_kernel_policy_compile(Bus *bus, const BusConfig *config) {
	PolicyCompileOptions o = { .bus_uid = bus->creator_uid, .flags = POLICY_COMPILE_NO_RESIDUAL_OWN };
	PolicyCompiled *pc = NULL;
	int r;

	r = policy_compile(config, &o, &pc);
	if (r < 0) {
		log_warning("Cannot compile the policy for the kernel (%s): native peers of other users may not "
			    "own names or talk to clients", strerror(-r));
		pc = NULL;
	}
	policy_compiled_free(bus->policy.kernel);
	bus->policy.kernel = pc;
}

void bus_kernel_policy_uninstall(Bus *bus) {
	if (bus->on_kernel)
		bus_policy_holders_close(bus, 0);
}

void bus_kernel_policy_install(Bus *bus, bool (*skip)(const char *name, void *userdata), void *userdata) {
	size_t cursor = 0, used = 0;
	int r = 0;

	if (!bus->on_kernel)
		return;
	while (bus->policy.kernel && cursor < policy_compiled_n_names(bus->policy.kernel)) {
		_cleanup_free_ void *items = NULL;
		size_t size;
		r = policy_compiled_build_items_except(bus->policy.kernel, &cursor, KCLIENT_CMD_MAX_SIZE - 1024,
						       skip, userdata, &items, &size);
		if (r < 0 || size == 0)
			break;	/* (an UPDATE without NAME items would keep the old entries) */
		r = bus_policy_holder_set(bus, used, items, size);
		if (r < 0)
			break;
		used++;
	}
	if (r < 0)
		log_warning("Cannot install the policy in the kernel (%s): native peers of other users may not "
			    "own names or talk to clients", strerror(-r));
	bus_policy_holders_close(bus, r < 0 ? 0 : used);
}

int bus_kernel_policy_of(Bus *bus, const char *name, const struct kdbus_policy_access **ret_access,
			 size_t *ret_n) {
	const PolicyCompiledName *c = bus->policy.kernel ? policy_compiled_lookup(bus->policy.kernel, name) : NULL;

	*ret_access = NULL;
	*ret_n = 0;
	if (!c || c->type != POLICY_CLASS_EXACT)
		return 0;
	*ret_access = c->access;
	*ret_n = c->n_access;
	return 0;
}

/*
 * bus_policy_install() - compile @config's policy into kdbus entries
 * (policy/compile.h) and install them: the core then enforces NAME_ACQUIRE
 * and destination TALK where the compiler proved its answer equals
 * policy.c's, and lets everything else through for the daemon to decide.
 * On a reload the holders are UPDATEd, which swaps their entries
 * atomically.  If anything fails the core gets pass-through (no entries,
 * fallback OWN) and bus->policy.compiled is NULL: the daemon then checks
 * everything itself, as correct as before, only without the core's help.
 */
static void bus_policy_install(Bus *bus, const BusConfig *config) {
	PolicyCompileOptions o = { .bus_uid = bus->creator_uid };
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;
	size_t cursor = 0, used = 0;
	int r;

	/* until the new entries are in, the daemon decides alone */
	bus->policy.compiled = policy_compiled_free(bus->policy.compiled);
	if (bus->on_kernel) {
		bus_kernel_policy_compile(bus, config);
		return;
	}
	r = policy_compile(config, &o, &pc);
	if (r < 0)
		goto fail;
	while (cursor < policy_compiled_n_names(pc)) {
		_cleanup_free_ void *items = NULL;
		size_t size;
		r = policy_compiled_build_items(pc, &cursor, KCLIENT_CMD_MAX_SIZE - 1024, &items, &size);
		if (r < 0)
			goto fail;
		r = bus_policy_holder_set(bus, used, items, size);
		if (r < 0)
			goto fail;
		used++;
	}
	bus_policy_holders_close(bus, used);
	r = kdbus_bus_set_policy_fallback(bus->kbus, policy_compiled_get_fallback(pc));
	if (r < 0)
		goto fail;
	bus->policy.compiled = TAKE_PTR(pc);
	return;
fail:
	log_warning("Cannot install the policy in the core (%s); the daemon checks all of it", strerror(-r));
	bus_policy_holders_close(bus, 0);
	(void) kdbus_bus_set_policy_fallback(bus->kbus, KDBUS_POLICY_OWN);
}

/* ---- the policy's life --------------------------------------------------- */

void bus_policy_set(Bus *bus, Policy *p, const BusConfig *config) {
	BusPolicy *bp = &bus->policy;

	policy_unref(bp->xml);
	bp->xml = p;
	bp->needs_names = config_needs_names(config);
	bp->everyone_receives = bus_policy_everyone_receives(config, p);
	bp->generation++;
	bus_policy_install(bus, config);
}

void bus_policy_swap_snapshot(Bus *bus, PolicySnapshot **slot, PolicySnapshot *s) {
	BusPolicy *bp = &bus->policy;

	if (*slot && !policy_snapshot_receives_all(*slot))
		bp->n_strict_receivers--;
	policy_snapshot_free(*slot);
	*slot = s;
	if (s && !policy_snapshot_receives_all(s))
		bp->n_strict_receivers++;
}

void bus_policy_close_holders(Bus *bus) {
	BusPolicy *bp = &bus->policy;

	bus_policy_holders_close(bus, 0);
	free(bp->holders);
	bp->holders = NULL;
	bp->compiled = policy_compiled_free(bp->compiled);
	bp->kernel = policy_compiled_free(bp->kernel);
}

void bus_policy_done(Bus *bus) {
	bus_groups_flush(bus);
	bus->policy.xml = policy_unref(bus->policy.xml);
}
