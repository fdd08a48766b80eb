/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * policy.h - dbus-daemon's policy decisions over a loaded BusConfig.
 *
 * DOC: model (dbus-daemon 1.14, bus/policy.c)
 *
 * A Policy is compiled once from a BusConfig: users and groups are
 * resolved, and the rules are sorted into the lists dbus-daemon keeps
 * (default, mandatory, per uid, per gid, at_console true/false).  For each
 * connection a PolicySnapshot (dbus-daemon's BusClientPolicy) is built from
 * the connection's identity: the own/send/receive rules of, in this order,
 *
 *   <policy context="default">, then <policy group="G"> for each group
 *   of the connection in the connection's group order, then
 *   <policy user="U">, then <policy at_console="true|false">, then
 *   <policy context="mandatory">,
 *
 * each list in document order.  As in dbus-daemon the snapshot is then
 * "optimized": a rule that matches every message of its kind (a send rule
 * without type, path, interface, member, error and destination; the same
 * for receive without sender; own="*") removes all earlier rules of its
 * kind.  This is not quite neutral - such a rule may still carry
 * send_broadcast, min_fds/max_fds, requested_reply or eavesdrop
 * conditions - and is reproduced because dbus-daemon behaves so
 * (<deny send_broadcast="true"/> drops every earlier send rule).
 *
 * A check walks the snapshot and the last matching rule decides; with no
 * matching rule the answer is deny.  Connection admission
 * (policy_check_connect(), bus_policy_allow_unix_user()) uses the
 * user="..."/group="..." rules of the default and mandatory contexts,
 * starting from "allowed if the uid is the bus's own uid".
 *
 * How dbus-daemon's bus_context_check_security_policy() uses these, which
 * the caller reproduces: a message to the bus driver is a send check with
 * receiver_names == NULL; a message from the driver is a receive check with
 * sender_names == NULL; other messages need the sender's send check and
 * the recipient's receive check (a broadcast is checked per recipient, so
 * send_destination rules match the names of each recipient);
 * requested_reply is true when the message
 * is a reply the recipient is waiting for; an eavesdropper gets the
 * sender's send check against the eavesdropper's names and its own
 * receive check with eavesdropping = true; activation checks send with
 * receiver_names == NULL (the service is assumed to own only that name).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/config.h"
#include "util/macro.h"

typedef struct Policy Policy;
typedef struct PolicySnapshot PolicySnapshot;
typedef struct PolicyIdentity PolicyIdentity;
typedef struct PolicyMessage PolicyMessage;
typedef struct PolicyDecision PolicyDecision;
typedef struct PolicyLookup PolicyLookup;

/* rules are the loader's; ret_rule pointers stay valid while the Policy lives */
typedef BusConfigRule PolicyRule;

#define POLICY_UID_INVALID ((uid_t)-1)

/*
 * Who a connection is.  @uid is POLICY_UID_INVALID for a connection
 * without a uid (ANONYMOUS): it then gets no user, group or at_console
 * rules, as in dbus-daemon.  @gids decides <policy group=...>: dbus-daemon
 * uses the groups of the uid in the user database (primary group first,
 * then getgrouplist() order), see policy_groups_from_uid().
 * @is_at_console is asked once per snapshot, and only if the policy has
 * at_console rules: > 0 at a console, 0 not, < 0 an error (the snapshot
 * fails); NULL means never at a console.  The daemon uses
 * sd_uid_get_seats(uid, 0, NULL) > 0.
 */
struct PolicyIdentity {
	uid_t uid;
	const gid_t *gids;
	size_t n_gids;
	int (*is_at_console)(uid_t uid, void *userdata);
	void *userdata;
};

/* The message, as the checks see it: header fields (NULL when absent). */
struct PolicyMessage {
	BusConfigMessageType type;     /* METHOD_CALL .. SIGNAL */
	const char *destination;       /* DESTINATION header field */
	const char *sender;            /* SENDER header field (used when the sender is the bus) */
	const char *path;
	const char *interface;
	const char *member;
	const char *error_name;
	bool has_reply_serial;         /* REPLY_SERIAL present (and not 0) */
	unsigned n_fds;                /* UNIX_FDS */
};

/* The outcome of a check. */
struct PolicyDecision {
	const PolicyRule *rule;        /* the rule that decided, NULL if none matched */
	unsigned n_matched;            /* rules that matched ("%d matched rules" in dbus-daemon's errors) */
	bool log;                      /* send checks: the deciding rule has log="true" */
};

/* Resolving users and groups when compiling; NULL members use NSS. */
struct PolicyLookup {
	int (*lookup_user)(const char *name, uid_t *ret_uid, void *userdata);
	int (*lookup_group)(const char *name, gid_t *ret_gid, void *userdata);
	void *userdata;
};

/**
 * policy_lookup_user() - resolve a user name of the configuration
 * @l:    the lookup, or NULL for NSS (bus_config_lookup_user())
 * @name: the name, or NULL
 * @ret:  the uid
 *
 * Return: 0, -ESRCH (no such user, or no name), -ENOMEM.
 */
int policy_lookup_user(const PolicyLookup *l, const char *name, uid_t *ret);

/* policy_lookup_group() - the same for a group name */
int policy_lookup_group(const PolicyLookup *l, const char *name, gid_t *ret);

/**
 * policy_context_id() - the uid of a <policy user=> or the gid of a
 * <policy group=>
 * @l:      the lookup, as for policy_lookup_user()
 * @pol:    the <policy>
 * @ret_id: the uid or gid; left alone for the other contexts
 *
 * Return: 0 (also for the contexts without a user or group), -ESRCH when the
 * user or group does not exist (the <policy> is then ignored, as in
 * dbus-daemon), -ENOMEM.
 */
int policy_context_id(const PolicyLookup *l, const BusConfigPolicy *pol, uint32_t *ret_id);

/**
 * policy_new() - compile the policy of a configuration
 * @ret:    the policy (refcount 1)
 * @config: the loaded configuration; the policy copies what it needs
 * @lookup: user/group resolution, or NULL for NSS (bus_config_lookup_user()
 *          and bus_config_lookup_group())
 *
 * Users and groups that do not resolve drop their <policy> or rule, as in
 * dbus-daemon.
 *
 * Return: 0 or -ENOMEM.
 */
int policy_new(Policy **ret, const BusConfig *config, const PolicyLookup *lookup);

/**
 * policy_ref() - take a reference
 * @p: the policy, or NULL
 *
 * Return: @p.
 */
Policy *policy_ref(Policy *p);

/**
 * policy_unref() - drop a reference
 * @p: the policy, or NULL
 *
 * Return: NULL.
 */
Policy *policy_unref(Policy *p);

/**
 * policy_has_at_console_rules() - does any <policy at_console> have rules
 * @p: the policy
 *
 * Return: true if so.
 */
bool policy_has_at_console_rules(const Policy *p);

/**
 * policy_snapshot_new() - the rules that apply to one connection
 * @ret:    the snapshot; it holds a reference on @p
 * @p:      the policy
 * @id:     the connection's identity (copied; the gids need not outlive the call)
 *
 * Return: 0, -ENOMEM, or the negative errno of @id->is_at_console.
 */
int policy_snapshot_new(PolicySnapshot **ret, Policy *p, const PolicyIdentity *id);

/**
 * policy_snapshot_free() - free a snapshot
 * @s: the snapshot, or NULL
 *
 * Return: NULL.
 */
PolicySnapshot *policy_snapshot_free(PolicySnapshot *s);

/**
 * policy_snapshot_receives_all() - may the connection receive anything
 * @s: the snapshot, or NULL
 *
 * True when policy_snapshot_check_receive() allows every message that is
 * not eavesdropped (@eavesdropping false, or no destination) and is not an
 * unrequested reply (no reply serial, or @requested_reply true), whatever
 * its sender: the checks of such messages can be skipped.  Decided once,
 * when the snapshot is made.
 *
 * Return: true if so; false for NULL.
 */
bool policy_snapshot_receives_all(const PolicySnapshot *s);

/**
 * policy_snapshot_sends_all() - may the connection send anything
 * @s: the snapshot, or NULL
 *
 * policy_snapshot_receives_all() for policy_snapshot_check_send(): true
 * when it allows every message that is not an unrequested reply, to any
 * receiver.
 *
 * Return: true if so; false for NULL.
 */
bool policy_snapshot_sends_all(const PolicySnapshot *s);

/**
 * policy_snapshot_logs_sends() - whether an allow send rule has
 * log="true": a message it lets through is logged ("Would reject
 * message"), so every send has to be checked
 * @s: the snapshot
 */
bool policy_snapshot_logs_sends(const PolicySnapshot *s);

/**
 * policy_snapshot_get_policy() - the policy a snapshot was made from
 * @s: the snapshot
 *
 * Return: the policy (no new reference).
 */
Policy *policy_snapshot_get_policy(const PolicySnapshot *s);

/**
 * policy_snapshot_get_rules() - the snapshot's rules after optimization
 * @s:       the snapshot
 * @ret_n:   their number
 *
 * Return: the rules in evaluation order.
 */
const PolicyRule *const *policy_snapshot_get_rules(const PolicySnapshot *s, size_t *ret_n);

/**
 * policy_snapshot_check_own() - may the connection own @name
 * @s:        the connection's snapshot
 * @name:     the well-known name
 * @ret_rule: the deciding rule (NULL if none matched); may be NULL
 *
 * bus_client_policy_check_can_own(): own="X" matches X, own="*" anything,
 * own_prefix="X" matches X and every name below it (X.a, X.a.b).
 *
 * Return: 1 allowed, 0 denied, -EINVAL for bad arguments.
 */
int policy_snapshot_check_own(const PolicySnapshot *s, const char *name, const PolicyRule **ret_rule);

/**
 * policy_snapshot_check_send() - may the connection send @m
 * @s:               the sender's snapshot
 * @m:               the message
 * @receiver_names:  NULL-terminated names the receiving connection has:
 *                   its unique name and every well-known name it owns or
 *                   is queued for (dbus-daemon's bus_service_owner_in_queue()).
 *                   NULL when the receiver is the bus driver or a service
 *                   being activated: send_destination rules then compare
 *                   with @m->destination.
 * @requested_reply: @m is a reply the receiver asked for
 * @ret:             the decision; may be NULL
 *
 * bus_client_policy_check_can_send() of dbus-daemon 1.14.
 *
 * Return: 1 allowed, 0 denied, -EINVAL for bad arguments.
 */
int policy_snapshot_check_send(const PolicySnapshot *s, const PolicyMessage *m,
			       const char *const *receiver_names, bool requested_reply,
			       PolicyDecision *ret);

/**
 * policy_snapshot_check_receive() - may the connection receive @m
 * @s:               the receiver's snapshot
 * @m:               the message
 * @sender_names:    NULL-terminated names of the sending connection (unique,
 *                   owned and queued); NULL when the bus driver sent it:
 *                   receive_sender rules then compare with @m->sender
 * @requested_reply: @m is a reply the receiver asked for
 * @eavesdropping:   the receiver is not the addressed recipient (a monitor
 *                   or an eavesdrop match); as in dbus-daemon this only
 *                   counts when @m has a destination
 * @ret:             the decision; may be NULL
 *
 * bus_client_policy_check_can_receive() of dbus-daemon 1.14.
 *
 * Return: 1 allowed, 0 denied, -EINVAL for bad arguments.
 */
int policy_snapshot_check_receive(const PolicySnapshot *s, const PolicyMessage *m,
				  const char *const *sender_names, bool requested_reply,
				  bool eavesdropping, PolicyDecision *ret);

/**
 * policy_check_connect() - may a uid connect (bus_policy_allow_unix_user())
 * @p:        the policy
 * @uid:      the connecting uid
 * @gids:     its groups from the user database (policy_groups_from_uid())
 * @n_gids:   their number
 * @bus_uid:  the uid the bus runs as: that uid is allowed unless a rule says
 *            otherwise
 * @ret_rule: the deciding rule, NULL if none; may be NULL
 *
 * The user= and group= rules of the default, then the mandatory context,
 * last match wins.  dbus-daemon rejects a uid whose groups cannot be
 * looked up; the caller does that when policy_groups_from_uid() fails.
 *
 * Return: 1 allowed, 0 denied, -EINVAL for bad arguments.
 */
int policy_check_connect(const Policy *p, uid_t uid, const gid_t *gids, size_t n_gids,
			 uid_t bus_uid, const PolicyRule **ret_rule);

/**
 * policy_check_own() - policy_snapshot_check_own() for an identity
 * @p:        the policy
 * @id:       the identity
 * @name:     the name
 * @ret_rule: the deciding rule; may be NULL
 *
 * Builds a temporary snapshot; for tools and tests.
 *
 * Return: 1 allowed, 0 denied, negative errno.
 */
int policy_check_own(Policy *p, const PolicyIdentity *id, const char *name, const PolicyRule **ret_rule);

/**
 * policy_check_send() - policy_snapshot_check_send() for an identity
 * @p:               the policy
 * @id:              the sender's identity
 * @m:               the message
 * @receiver_names:  as for policy_snapshot_check_send()
 * @requested_reply: as for policy_snapshot_check_send()
 * @ret:             the decision; may be NULL
 *
 * Return: 1 allowed, 0 denied, negative errno.
 */
int policy_check_send(Policy *p, const PolicyIdentity *id, const PolicyMessage *m,
		      const char *const *receiver_names, bool requested_reply, PolicyDecision *ret);

/**
 * policy_check_receive() - policy_snapshot_check_receive() for an identity
 * @p:               the policy
 * @id:              the receiver's identity
 * @m:               the message
 * @sender_names:    as for policy_snapshot_check_receive()
 * @requested_reply: as for policy_snapshot_check_receive()
 * @eavesdropping:   as for policy_snapshot_check_receive()
 * @ret:             the decision; may be NULL
 *
 * Return: 1 allowed, 0 denied, negative errno.
 */
int policy_check_receive(Policy *p, const PolicyIdentity *id, const PolicyMessage *m,
			 const char *const *sender_names, bool requested_reply, bool eavesdropping,
			 PolicyDecision *ret);

/**
 * policy_groups_from_uid() - a uid's groups as dbus-daemon looks them up
 * @uid:     the uid
 * @ret:     malloc()ed array: the primary group, then getgrouplist() order
 * @ret_n:   its length
 *
 * _dbus_unix_groups_from_uid(): from the user database, not the socket.
 *
 * Return: 0, -ESRCH if the uid has no passwd entry, -ENOMEM.
 */
int policy_groups_from_uid(uid_t uid, gid_t **ret, size_t *ret_n);

/**
 * policy_name_has_prefix() - dbus-daemon's "starts with words"
 * @name:   a bus name
 * @prefix: the prefix
 *
 * True when @name equals @prefix or starts with @prefix followed by '.'.
 *
 * Return: true or false.
 */
bool policy_name_has_prefix(const char *name, const char *prefix);

DEFINE_CLEANUP(Policy *, policy_unref);
DEFINE_CLEANUP(PolicySnapshot *, policy_snapshot_free);
