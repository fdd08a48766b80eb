/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * match-rule.h - dbus-daemon match rules (AddMatch / RemoveMatch): parsing
 * with dbus-daemon 1.14's exact grammar and limits (bus/signals.c), its
 * equality for RemoveMatch, its matching semantics, and its string form
 * (Debug.Stats GetAllMatchRules).
 *
 * Grammar (as dbus-daemon's tokenizer, quirks included):
 *   - the rule is at most 1024 bytes (-E2BIG: dbus-daemon answers
 *     org.freedesktop.DBus.Error.LimitsExceeded); the text ends at the first
 *     NUL byte;
 *   - key=value pairs separated by ','; whitespace (space, \t, \n, \r) is
 *     skipped before a key and around it, but is part of a value;
 *   - a value may mix quoted and unquoted parts: '...' quotes anything but
 *     an apostrophe; outside quotes \' is an apostrophe and a backslash
 *     before anything else is literal; an unterminated quote is invalid;
 *   - at most 16 pairs are read; the rest of the text is ignored; an '='
 *     where a key should start also ends the rule silently (dbus-daemon
 *     behaviour);
 *   - keys: type, sender, interface, member, path, path_namespace,
 *     destination, eavesdrop, argN, argNpath (N <= 63, parsed with
 *     strtoul(base 0): "arg0x1" is arg1), arg0namespace; unknown keys, keys
 *     given twice (eavesdrop excepted: the last one wins), path together
 *     with path_namespace, and invalid values are -EINVAL.  sender=,
 *     destination= and arg0namespace= use libdbus's bus-name syntax, which
 *     accepts dot-less unique names.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/wire.h"
#include "util/macro.h"

typedef struct MatchRule MatchRule;

#define MATCH_RULE_MAX_LENGTH 1024
#define MATCH_RULE_MAX_ARGS 64		/* arg0 .. arg63 */

/* flags: which keys a rule has (match_rule_get_flags()) */
enum {
	MATCH_RULE_TYPE		= 1u << 0,
	MATCH_RULE_INTERFACE	= 1u << 1,
	MATCH_RULE_MEMBER	= 1u << 2,
	MATCH_RULE_SENDER	= 1u << 3,
	MATCH_RULE_DESTINATION	= 1u << 4,
	MATCH_RULE_PATH		= 1u << 5,
	MATCH_RULE_ARGS		= 1u << 6,
	MATCH_RULE_PATH_NAMESPACE = 1u << 7,
	MATCH_RULE_EAVESDROP	= 1u << 8,
};

/* what an argN key compares (match_rule_get_arg()) */
typedef enum MatchArgKind {
	MATCH_ARG_NONE = 0,	/* no key for this argument */
	MATCH_ARG_STRING,	/* argN='v': string argument equal to v */
	MATCH_ARG_PATH,		/* argNpath='v': string or object path, prefix rules */
	MATCH_ARG_NAMESPACE,	/* arg0namespace='v': string v or below v. */
} MatchArgKind;

/**
 * struct MatchContext - what a rule needs beyond the message
 * @sender:	the sender's unique name, "org.freedesktop.DBus" for the bus
 *		driver; NULL: use the message's SENDER field (a message without
 *		one counts as sent by the driver, as in dbus-daemon)
 * @sender_has_name: does the sender own (as primary owner) the well-known
 *		name?  NULL: never
 * @userdata:	passed to the callbacks
 * @receiver:	unique name of the connection the message is addressed to
 *		(for eavesdropping rules with destination=), NULL if none or
 *		the driver: then destination= compares with the DESTINATION field
 * @receiver_has_name: does the receiver own the well-known name (a rule's
 *		destination= that is not unique)?  NULL: compare the name with
 *		the DESTINATION field
 */
typedef struct MatchContext {
	const char *sender;
	bool (*sender_has_name)(void *userdata, const char *name);
	void *userdata;
	const char *receiver;
	bool (*receiver_has_name)(void *userdata, const char *name);
	bool eavesdropping;	/* every rule counts as eavesdrop='true' (monitors) */
} MatchContext;

/* why match_rule_parse() refused a rule, in dbus-daemon's words (its
 * error's message; the return value says which error) */
typedef struct MatchRuleError {
	char message[MATCH_RULE_MAX_LENGTH + 256];
} MatchRuleError;

/**
 * match_rule_parse() - parse an AddMatch / RemoveMatch rule
 * @text:	the rule (need not be NUL-terminated; a NUL ends it)
 * @len:	its length
 * @ret:	out: the new rule
 * @error:	out (or NULL): on -EINVAL and -E2BIG, dbus-daemon's message
 *
 * The rule is read as dbus-daemon reads it: every key=value first (so a
 * key without '=' or an unbalanced quote anywhere is the error), then each
 * key in order; the first refusal is the one dbus-daemon gives.
 *
 * Return: 0, -EINVAL (invalid rule: dbus-daemon's MatchRuleInvalid),
 * -E2BIG (longer than 1024 bytes: LimitsExceeded), -ENOMEM.
 */
int match_rule_parse(const char *text, size_t len, MatchRule **ret, MatchRuleError *error);

/**
 * match_rule_free() - free a rule
 * @r:		the rule, or NULL
 *
 * Return: NULL.
 */
MatchRule *match_rule_free(MatchRule *r);

/**
 * match_rule_equal() - are two rules the same for RemoveMatch?
 * @a, @b:	two rules
 *
 * As dbus-daemon's match_rule_equal(): the same keys with the same values
 * (eavesdrop='false' is the same as no eavesdrop key; key order and quoting
 * do not matter).  Unlike dbus-daemon, path_namespace values are compared
 * too (dbus-daemon only compares path=, so RemoveMatch of one namespace
 * could remove another).
 *
 * Return: true if equal.
 */
bool match_rule_equal(const MatchRule *a, const MatchRule *b);

/**
 * match_rule_matches() - does a message match the rule?
 * @r:		the rule
 * @h:		the message's parsed header
 * @body:	its validated body (h->body_len bytes); may be NULL when the
 *		rule has no arg keys
 * @ctx:	sender and receiver information
 *
 * dbus-daemon's match_rule_matches(): every key must match.  A rule without
 * eavesdrop='true' only matches messages without a DESTINATION (broadcasts);
 * a rule with destination= only matches if it is eavesdropping.  argN only
 * matches string arguments, argNpath string and object-path arguments with
 * dbus-daemon's prefix rules, arg0namespace strings; path_namespace='/'
 * matches every path.
 *
 * Return: true on a match.
 */
bool match_rule_matches(const MatchRule *r, const WireHeader *h, const uint8_t *body,
			const MatchContext *ctx);

/**
 * match_rule_is_eavesdrop() - has the rule eavesdrop='true'?
 * @r:		the rule
 *
 * Return: true if so.
 */
bool match_rule_is_eavesdrop(const MatchRule *r);

/**
 * match_rule_may_match_name_owner_changed() - can the rule match the bus
 * driver's NameOwnerChanged signal?  On kdbus the signal is made from the
 * kernel's name and id notifications, which a connection gets only when
 * it asks for them.
 *
 * Return: true if so (its type, sender, interface, member and path allow
 * it; its arguments are not looked at).
 */
bool match_rule_may_match_name_owner_changed(const MatchRule *r);

/**
 * match_rule_to_string() - dbus-daemon's canonical text of a rule
 * @r:		the rule
 *
 * Keys in dbus-daemon's order (type, interface, member, path,
 * path_namespace, sender, destination, eavesdrop, args), values quoted with
 * apostrophes as '\'' .  Parsing the result gives an equal rule.
 *
 * Return: a malloc'd string, or NULL if out of memory.
 */
char *match_rule_to_string(const MatchRule *r);

/*
 * Accessors, for indexing rules (e.g. by type, then interface, then member,
 * as dbus-daemon does, or by sender for kdbus ID/NAME match items).  Each
 * returns NULL (0 for the type) when the rule does not have the key.
 */

/* MATCH_RULE_* bits of the keys present */
unsigned match_rule_get_flags(const MatchRule *r);
/* WIRE_TYPE_*, or WIRE_TYPE_INVALID if any type matches */
uint8_t match_rule_get_type(const MatchRule *r);
const char *match_rule_get_sender(const MatchRule *r);
const char *match_rule_get_interface(const MatchRule *r);
const char *match_rule_get_member(const MatchRule *r);
/* path='...' only; path_namespace is separate */
const char *match_rule_get_path(const MatchRule *r);
const char *match_rule_get_path_namespace(const MatchRule *r);
const char *match_rule_get_destination(const MatchRule *r);
/* one more than the highest argN index used, 0 if none */
unsigned match_rule_get_n_args(const MatchRule *r);
/**
 * match_rule_get_arg() - the argN key of a rule
 * @r:		the rule
 * @n:		the argument index
 * @ret_len:	out (optional): the value's length
 *
 * Return: the kind of key (MATCH_ARG_NONE if none, then NULL is the value).
 */
MatchArgKind match_rule_get_arg(const MatchRule *r, unsigned n, const char **ret_value,
				size_t *ret_len);

DEFINE_CLEANUP(MatchRule *, match_rule_free);
