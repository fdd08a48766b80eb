/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_POLICY_H
#define KSHARED_POLICY_H

/*
 * policy.h - the rules of a kdbus policy database that do not depend on
 * how it is stored
 *
 * DOC: policy entries and their precedence
 *
 * An entry is a well-known name ("a.b.c") or, where wildcards are allowed
 * (policy holders, custom endpoints; not activators), a wildcard "a.b.*",
 * kept as the name "a.b" with a wildcard flag; the two never collide.
 * Each entry lists POLICY_ACCESS rules (USER, GROUP or WORLD, and a level:
 * SEE < TALK < OWN, each implying the lower ones).
 *
 * A name is decided by one entry: its exact entry if there is one, else
 * the nearest wildcard above it ("a.b.*" before "a.*"), at any depth (our
 * extension: kdbus's wildcard covered one level only); the prefix itself
 * is not covered by its wildcard.  No entry: the caller's default.  The
 * entry grants the highest level of its rules that match the caller, or
 * nothing (-EPERM).
 *
 * A database keys its entries by (name, wildcard): the hash of a key is
 * the hash of its name, by the caller's string hash, mixed with
 * kdbus_policy_key_hash().
 */

#include "kdbus/kdbus.h"
#include "kshared/name.h"
#include "kshared/platform.h"

/**
 * kdbus_policy_name_parse() - the key of a policy entry from its NAME item
 * @name:		the item's string, NUL-terminated
 * @allow_wildcard:	whether a wildcard "a.b.*" is allowed here
 * @ret_len:		the length of the entry's name ("a.b" for "a.b.*")
 * @ret_wildcard:	whether the entry is a wildcard
 *
 * Return: 0, or -EINVAL for a name that is not valid here (the outputs
 * are then not written).
 */
static inline int kdbus_policy_name_parse(const char *name, bool allow_wildcard, size_t *ret_len,
					  bool *ret_wildcard)
{
	size_t len;
	bool wildcard;

	if (!kdbus_name_is_valid(name, allow_wildcard))
		return -EINVAL;
	len = strlen(name);
	/* only a valid wildcard name ends in '*', and then in ".*" */
	wildcard = name[len - 1] == '*';
	*ret_len = wildcard ? len - 2 : len;
	*ret_wildcard = wildcard;
	return 0;
}

/**
 * kdbus_policy_key_hash() - the hash of an entry's key
 * @name_hash:	the hash of its name (without ".*")
 * @wildcard:	whether it is a wildcard
 *
 * Return: the hash to store and look the entry up by.
 */
static inline uint64_t kdbus_policy_key_hash(uint64_t name_hash, bool wildcard)
{
	return name_hash ^ (wildcard ? 0x5bd1e995ULL : 0);
}

/**
 * kdbus_policy_next_wildcard() - the next entry that may decide a name
 * @name:	the name being decided
 * @len:	the length of the prefix of @name tried last: strlen(@name)
 *		after its exact entry, then this function's last result
 *
 * The order of precedence: after the exact entry, the wildcards of
 * every enclosing prefix, nearest first ("a.b.c": "a.b.*", then "a.*").
 *
 * Return: the length of the prefix whose wildcard entry is next, or 0
 * when there is none left (no entry decides @name).
 */
static inline size_t kdbus_policy_next_wildcard(const char *name, size_t len)
{
	while (len > 0 && name[len - 1] != '.')
		len--;
	return len > 0 ? len - 1 : 0;
}

/**
 * kdbus_policy_access_is_valid() - whether a POLICY_ACCESS item's payload
 * is one an entry may hold
 * @a:		the payload
 *
 * Return: true for a type USER, GROUP or WORLD and a level up to OWN (the
 * id is the caller's to translate).
 */
static inline bool kdbus_policy_access_is_valid(const struct kdbus_policy_access *a)
{
	return a->type >= KDBUS_POLICY_ACCESS_USER && a->type <= KDBUS_POLICY_ACCESS_WORLD &&
	       a->access <= KDBUS_POLICY_OWN;
}

#endif /* KSHARED_POLICY_H */
