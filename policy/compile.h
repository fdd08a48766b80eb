/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * compile.h - dbus-daemon's XML policy compiled into kdbus policy items
 * plus a residual rule table (doc/policy.md has the full story).
 *
 * DOC: what is compiled
 *
 * The compiler splits the names a configuration talks about into
 * *classes*, exactly as the core's policy db looks names up: one exact
 * class per name mentioned in own=, own_prefix=, send_destination= or
 * send_destination_prefix=, one wildcard class "P.*" per own_prefix or
 * send_destination_prefix P (every name below P, at any depth, that is
 * neither mentioned nor below a deeper prefix: our any-depth wildcard),
 * and the fallback class (every other name; the core's
 * kdbus_bus_set_policy_fallback()).  For each class and each of two
 * decisions it proves, by enumerating every identity class the rules can
 * tell apart (root, the bus creator's uid, each uid with a <policy user>,
 * any other uid, a connection without uid, every ordered combination of
 * the groups whose <policy group> matters, at a console or not), whether
 * the core's answer equals policy.c's for every identity:
 *
 *  OWN:  policy_check_own() for any name of the class;
 *  TALK: the sender side of policy_check_send() for every unicast
 *        method call or signal without REPLY_SERIAL (any path, interface,
 *        member, number of fds) to a receiver owning a name of the class.
 *
 * The core's answer is: allowed if the connection is privileged (uid 0)
 * or has the bus creator's uid; else the entry's USER/GROUP/WORLD grants;
 * for TALK also allowed between two connections of one uid.  kdbus grants
 * only add up, so a decision is expressible only if the allowed identities
 * are exactly "listed uids, members of listed groups, or everyone" plus
 * root and the bus uid, independent of the message, of at_console and of
 * group order, and (TALK) everyone who may own a name of the class may
 * also talk to it.  A decision that passes is *exact*; any other is
 * *residual*: the entry then lets everybody through (WORLD OWN, or WORLD
 * TALK) and the daemon decides with policy.c.
 *
 * With the core as it is, TALK entries also filter broadcasts (receivers
 * need TALK to the sender), ignore the names a connection is queued for
 * and give no fallback to a name without entry when another name of the
 * same connection has one.  So by default every entry grants WORLD TALK
 * and TALK is exact only where everyone may send everything;
 * POLICY_COMPILE_TALK_ENTRIES allows restricted TALK grants once the core
 * has the three changes listed there.
 *
 * DOC: using it in the daemon
 *
 *  - Install every entry (policy_compiled_build_items(), as one or more
 *    KDBUS_HELLO_POLICY_HOLDER connections, or KDBUS_CMD_UPDATE to swap)
 *    and set the fallback to policy_compiled_get_fallback() (OWN).
 *  - RequestName: if policy_compiled_own_is_exact(name), NAME_ACQUIRE's
 *    EPERM is the answer; otherwise check policy_snapshot_check_own().
 *  - A unicast method call or signal without REPLY_SERIAL: if
 *    policy_compiled_talk_is_exact(owned, queued) the core's TALK check is
 *    the sender-side answer; otherwise check policy_snapshot_check_send().
 *    The receive side (receive_* rules) is always the daemon's.
 *  - Everything else (replies, broadcasts, eavesdropping, messages to the
 *    driver, activation) is checked with policy.c as today.
 *
 * Every <allow>/<deny> lands in exactly one place (policy_compiled_rules()):
 * "kdbus" when its whole effect is carried by the entries of the classes
 * it matches, "residual" otherwise, with the reason.  Where the daemon
 * runs policy.c (the residual cases above) it evaluates the whole
 * snapshot, compiled rules included, because dbus-daemon's last-match
 * rule needs them in place.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kdbus/kdbus.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"

typedef struct PolicyCompiled PolicyCompiled;
typedef struct PolicyCompileOptions PolicyCompileOptions;
typedef struct PolicyCompiledName PolicyCompiledName;
typedef struct PolicyCompiledRule PolicyCompiledRule;

enum {
	/*
	 * The daemon passes each connection's user-database groups
	 * (policy_groups_from_uid(): egid = the primary group, AUXGROUPS =
	 * the rest) in HELLO, so GROUP entries see what policy.c sees.
	 * Without it (the daemon today passes SO_PEERGROUPS), a decision that
	 * depends on group membership is residual.
	 */
	POLICY_COMPILE_GROUPS_FROM_USERDB = 1u << 0,
	/*
	 * Restricted TALK grants may be used.  Needs three core changes:
	 * broadcasts are not filtered by TALK entries, the names a
	 * destination is queued for count for TALK (dbus-daemon's
	 * send_destination matches queued owners), and a name without entry
	 * gets the fallback even if another name of the destination has one.
	 */
	POLICY_COMPILE_TALK_ENTRIES = 1u << 1,
	/* analyse connections without uid (ANONYMOUS, TCP) even if the
	 * configuration has no allow_anonymous and only unix: listeners */
	POLICY_COMPILE_ANONYMOUS = 1u << 2,
	/*
	 * The entries also serve native peers (kdbus.ko's bus, where programs
	 * say HELLO on the endpoint themselves), whose NAME_ACQUIRE the daemon
	 * never sees: an OWN decision that is residual grants nobody (the
	 * entry gives WORLD TALK only), so that the kernel never lets a native
	 * peer own a name the XML might refuse it.  The daemon's own clients
	 * are privileged connections there, which no entry binds.
	 */
	POLICY_COMPILE_NO_RESIDUAL_OWN = 1u << 3,
};

struct PolicyCompileOptions {
	unsigned flags;              /* POLICY_COMPILE_* */
	/* the bus creator's euid (the core's "owner": its connections bypass
	 * policy); POLICY_UID_INVALID or 0: only root.  busbridged makes the
	 * bus before dropping privileges, so this is 0 on the system bus */
	uid_t bus_uid;
	const PolicyLookup *lookup;  /* NULL: NSS, as policy_new() */
};

typedef enum PolicyCompiledClassType {
	POLICY_CLASS_EXACT,          /* one name */
	POLICY_CLASS_WILDCARD,       /* entry "name.*": names below it without a nearer entry */
	POLICY_CLASS_FALLBACK,       /* every other name: the bus's fallback, no entry */
} PolicyCompiledClassType;

/* One class: a kdbus policy entry (except the fallback) and its verdicts. */
struct PolicyCompiledName {
	PolicyCompiledClassType type;
	const char *name;            /* without ".*"; NULL for the fallback */
	bool own_residual;           /* NAME_ACQUIRE passes everybody; the daemon decides */
	bool talk_residual;          /* TALK passes everybody; the daemon decides */
	bool residual;               /* own_residual || talk_residual */
	const char *own_reason;      /* why residual, or what the grant is */
	const char *talk_reason;
	/* the entry's grants, as installed (empty: only root and the bus uid) */
	const struct kdbus_policy_access *access;
	size_t n_access;
	/* TALK-level grants compared by policy_compiled_talk_is_exact() */
	size_t talk_key;
};

typedef enum PolicyCompiledRulePlace {
	POLICY_RULE_KDBUS,           /* carried by kdbus entries */
	POLICY_RULE_RESIDUAL,        /* the daemon's per-message / per-request check */
} PolicyCompiledRulePlace;

/* Every <allow>/<deny> of the configuration, in document order. */
struct PolicyCompiledRule {
	PolicyCompiledRulePlace place;
	const char *file;            /* as in BusConfigRule */
	unsigned line;
	const char *text;            /* "<allow own=\"x\"/>" re-rendered */
	const char *context;         /* "<policy user=\"root\">" */
	const char *reason;          /* residual: why; kdbus: which entries */
	size_t policy_index;         /* BusConfig.policies[] */
	size_t rule_index;           /* .rules[] */
};

/**
 * policy_compile() - compile the policy of a configuration
 * @c:    the loaded configuration (not referenced afterwards)
 * @opts: options, or NULL (no flags, bus uid 0, NSS)
 * @ret:  the result
 *
 * Users and groups that do not resolve drop their <policy> or rule, as in
 * policy_new().
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int policy_compile(const BusConfig *c, const PolicyCompileOptions *opts, PolicyCompiled **ret);

/** policy_compiled_free() - free; accepts NULL, returns NULL. */
PolicyCompiled *policy_compiled_free(PolicyCompiled *pc);

/**
 * policy_compiled_n_names() / policy_compiled_get_name() - iterate the
 * entries in installation order (shallower names first); index
 * policy_compiled_n_names() is not valid, the fallback class is
 * policy_compiled_get_fallback_class().
 */
size_t policy_compiled_n_names(const PolicyCompiled *pc);
const PolicyCompiledName *policy_compiled_get_name(const PolicyCompiled *pc, size_t i);
const PolicyCompiledName *policy_compiled_get_fallback_class(const PolicyCompiled *pc);

#define POLICY_COMPILED_FOREACH_NAME(pc, i, n) \
	for (size_t i = 0; (i) < policy_compiled_n_names(pc) && ((n) = policy_compiled_get_name(pc, i)); (i)++)

/**
 * policy_compiled_lookup() - the class the core uses for @name: the exact
 * entry, else the nearest enclosing wildcard, else the fallback class
 */
const PolicyCompiledName *policy_compiled_lookup(const PolicyCompiled *pc, const char *name);

/** policy_compiled_get_fallback() - the access to pass to kdbus_bus_set_policy_fallback() */
int policy_compiled_get_fallback(const PolicyCompiled *pc);

/**
 * policy_compiled_own_is_exact() - NAME_ACQUIRE of @name decides as
 * policy_check_own() would, for every identity
 */
bool policy_compiled_own_is_exact(const PolicyCompiled *pc, const char *name);

/**
 * policy_compiled_talk_is_exact() - the core's TALK check decides the
 * sender side of every unicast method call or signal without REPLY_SERIAL
 * to a receiver with these names as policy_check_send() would
 * @owned:  NULL-terminated well-known names the receiver owns (may be NULL)
 * @queued: NULL-terminated names it is queued for (may be NULL)
 *
 * True when every name's class (the fallback class for a receiver without
 * names) is TALK-exact and all have the same TALK grants.
 */
bool policy_compiled_talk_is_exact(const PolicyCompiled *pc, const char *const *owned,
				   const char *const *queued);

/**
 * policy_compiled_rules() - every rule with the place it landed in
 * @ret_n: their number
 */
const PolicyCompiledRule *policy_compiled_rules(const PolicyCompiled *pc, size_t *ret_n);

/**
 * policy_compiled_build_items() - KDBUS_ITEM_NAME + KDBUS_ITEM_POLICY_ACCESS
 * items for HELLO (KDBUS_HELLO_POLICY_HOLDER) or KDBUS_CMD_UPDATE
 * @pc:        the compiled policy
 * @cursor:    in: the first entry to add; out: the first one not added
 *             (== policy_compiled_n_names() when done)
 * @max_size:  room for items (e.g. KDBUS_CMD_MAX_SIZE minus the command
 *             header and other items); at least one entry must fit
 * @ret_items: malloc()ed, 8-aligned item list
 * @ret_size:  its size in bytes
 *
 * One holder may carry several entries; an entry never spans two
 * buffers (the core refuses the same name from two owners).
 *
 * Return: 0, -ENOBUFS (an entry does not fit in @max_size), -ENOMEM.
 */
int policy_compiled_build_items(const PolicyCompiled *pc, size_t *cursor, size_t max_size,
				void **ret_items, size_t *ret_size);

/**
 * policy_compiled_build_items_except() - policy_compiled_build_items()
 * without the exact entries whose names @skip says yes to: on kdbus.ko a
 * name an activator holds gets its entry in the activator's HELLO (the
 * final ABI refuses a name's entries from two owners with EEXIST)
 */
typedef bool (*PolicyCompiledSkipFn)(const char *name, void *userdata);
int policy_compiled_build_items_except(const PolicyCompiled *pc, size_t *cursor, size_t max_size,
				       PolicyCompiledSkipFn skip, void *userdata, void **ret_items, size_t *ret_size);

/**
 * policy_compiled_kdbus_decide() - what the core would answer, for tests
 * and busbridge-policy: the entry lookup, privilege/bus-uid bypass and
 * the fallback (not the same-uid TALK bypass)
 * @access: KDBUS_POLICY_OWN or KDBUS_POLICY_TALK
 * @uid:    the connection's uid (POLICY_UID_INVALID for none)
 * @gids:   the groups the core sees
 *
 * Return: 1 allowed, 0 denied.
 */
int policy_compiled_kdbus_decide(const PolicyCompiled *pc, const char *name, unsigned access,
				 uid_t uid, const gid_t *gids, size_t n_gids);

/** policy_compiled_get_flags() - the options' flags plus POLICY_COMPILE_ANONYMOUS if detected */
unsigned policy_compiled_get_flags(const PolicyCompiled *pc);
uid_t policy_compiled_get_bus_uid(const PolicyCompiled *pc);

DEFINE_CLEANUP(PolicyCompiled *, policy_compiled_free);
