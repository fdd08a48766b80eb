/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * match-key.h - exact keys of signals and of match rules, for the core's
 * keyed match index (KDBUS_ITEM_MATCH_KEYS, kdbus/bus.h)
 *
 * A signal has three keys: of its (interface, member) pair, of its member
 * and of its interface.  A rule has at most one: of the most specific of
 * these it names.  Whenever a rule matches a signal, the rule's key is one
 * of the signal's keys (equal strings give equal keys), so the key adds no
 * condition the rule does not have; it only lets the core find the rule
 * among many without testing the others.  A rule that names neither
 * interface nor member has no key and is found by its bloom mask.
 *
 * The keys are SipHash-2-4 under a secret drawn once per process, so that
 * names cannot be chosen to make keys collide in the core's table.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct MatchRule MatchRule;

#define MATCH_KEYS_MAX 3

/**
 * match_keys_of_signal() - the keys of a signal
 * @interface:	its INTERFACE field, or NULL
 * @member:	its MEMBER field, or NULL
 * @keys:	out: the keys
 *
 * Return: how many (0 when both fields are absent).
 */
size_t match_keys_of_signal(const char *interface, const char *member, uint64_t keys[static MATCH_KEYS_MAX]);

/**
 * match_key_of_rule() - the key of a match rule
 * @r:		the rule
 * @ret:	out: the key
 *
 * Return: true if the rule has one (it names an interface or a member).
 */
bool match_key_of_rule(const MatchRule *r, uint64_t *ret);
