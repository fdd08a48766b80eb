/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus-policy.h - the bus's policy, a part of Bus (Bus.policy): the XML
 * policy compiled from the configuration (policy/policy.h) and what is
 * derived from it, the part the core enforces and the connections that
 * hold its entries (policy/compile.h), and the groups of the user
 * database the policy asks about.  bus-policy.c alone writes it; bus.c
 * decides when (start, reload, exit).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/idmap.h"

typedef struct Bus Bus;
typedef struct BusConfig BusConfig;
typedef struct Client Client;
typedef struct KdbusConn KdbusConn;
typedef struct Policy Policy;
typedef struct PolicySnapshot PolicySnapshot;
struct PolicyCompiled;
struct kdbus_policy_access;

typedef struct BusPolicy {
	Policy *xml;			/* compiled from the config; swapped on reload */
	uint64_t generation;		/* bumped each time it is set */
	bool needs_names;		/* some rule names a destination or sender */
	bool everyone_receives;		/* bus_policy_everyone_receives() */
	/* clients and native peers whose snapshot does not let everything in
	 * (policy_snapshot_receives_all()): bus_policy_swap_snapshot() counts */
	size_t n_strict_receivers;
	/* the part the core enforces (policy/compile.h): NULL when it is not
	 * installed, and then the daemon checks everything */
	struct PolicyCompiled *compiled;
	KdbusConn **holders;		/* the connections holding its entries */
	size_t n_holders;
	struct PolicyCompiled *kernel;	/* the entries for native peers (kernel bus only) */
	IdMap groups_by_uid;		/* uid + 1 → BusGroups, the user database's groups */
} BusPolicy;

/* @bus's policy becomes @p (taken), compiled from @config, and is
 * installed in the core; clients' snapshots are the caller's */
void bus_policy_set(Bus *bus, Policy *p, const BusConfig *config);
/* the snapshot in *@slot (a client's, a native peer's) becomes @s (taken;
 * the old one is freed), counted among the strict receivers */
void bus_policy_swap_snapshot(Bus *bus, PolicySnapshot **slot, PolicySnapshot *s);
/* the holders close (before the core goes) and the compiled parts are freed */
void bus_policy_close_holders(Bus *bus);
/* what is left goes: the groups and the XML policy (after
 * bus_policy_close_holders()) */
void bus_policy_done(Bus *bus);

/* policy decisions of the daemon: 1 allow, 0 deny */
int bus_policy_check_own(Bus *bus, Client *c, const char *name);
int bus_policy_check_connect(Bus *bus, Client *c);

/**
 * bus_groups_for_uid() - the groups of @uid in the user database, as
 * dbus-daemon's policy uses them; cached until the next reload
 * (bus_groups_flush(); dbus-daemon caches its user database too)
 *
 * Return: 0 and a borrowed array, or a negative errno.
 */
int bus_groups_for_uid(Bus *bus, uid_t uid, const gid_t **ret_gids, size_t *ret_n);
int bus_groups_of_client(Bus *bus, const Client *c, const gid_t **ret_gids, size_t *ret_n);
void bus_groups_flush(Bus *bus);

/*
 * bus_kernel_policy_install() - on kdbus.ko, the policy entries for native
 * peers in the policy holders, but for the names @skip says (the
 * activatable names: called when their set is known, after each load of
 * the service files); bus_kernel_policy_of() - the grants of @name's own entry, which
 * its activator carries (none: no entry of its own).
 */
void bus_kernel_policy_install(Bus *bus, bool (*skip)(const char *name, void *userdata), void *userdata);
/* bus_kernel_policy_uninstall() - the holders' entries go (before new
 * activators are made: the kernel refuses a name's entry from a second
 * owner, EEXIST); until the next install native peers of other users may
 * own and reach less, never more */
void bus_kernel_policy_uninstall(Bus *bus);
int bus_kernel_policy_of(Bus *bus, const char *name, const struct kdbus_policy_access **ret_access,
			 size_t *ret_n);
