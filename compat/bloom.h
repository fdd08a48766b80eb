/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bloom.h - kdbus bloom filters with systemd's conventions (sd-bus
 * bus-bloom.c, kdbus-reference.md §1.11): SipHash-2-4 with systemd's eight
 * fixed keys; each hash function takes ceil(log2(m) / 8) bytes of hash
 * output as a bit index; the words are "key:value" strings.
 *
 * A message's filter holds:
 *	message-type:<method_call|method_return|error|signal>
 *	interface:<i>  member:<m>  path:<p>
 *	path-slash-prefix:<p and each of its '/' prefixes, with and without the
 *			   trailing '/'>
 *	argN:<v>  argN-dot-prefix:<...>  argN-slash-prefix:<...>
 *			for each string, object path or signature argument N < 64
 *	argN-has:<e>	for each element of an as, ao or ag argument N < 64
 * Deviation from sd-bus: sd-bus stops at the first argument that is
 * neither (and, through a missing "else", right after the first plain
 * string argument); we skip other arguments and go on, so that a rule on
 * arg1 matches a message whose arg0 is an integer.  The filter is only ever
 * tested against masks we build ourselves.
 *
 * A match rule's mask holds only the words every matching message's filter
 * is guaranteed to contain: type, interface, member, path, path_namespace
 * (as path-slash-prefix), argN (as argN) and arg0namespace (as
 * arg0-dot-prefix).  argNpath, sender, destination and eavesdrop add no bits:
 * they are checked exactly afterwards.  So a message that matches a rule
 * always passes the rule's mask; the converse is probabilistic.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/match-rule.h"
#include "compat/wire.h"

#define BLOOM_DEFAULT_SIZE 64		/* bytes (m = 512 bits) */
#define BLOOM_DEFAULT_N_HASH 8

/**
 * bloom_parameters_valid() - can a filter of this size use n_hash functions?
 * @size:	filter size in bytes: a non-zero multiple of 8
 * @n_hash:	number of hash functions, > 0
 *
 * As sd-bus's bloom_validate_parameters(), plus the kdbus requirement that
 * the size be a multiple of 8.
 *
 * Return: true if valid.
 */
bool bloom_parameters_valid(size_t size, unsigned n_hash);

/**
 * bloom_add_data() - add one word
 * @filter:	size / 8 words
 * @size:	filter size in bytes
 * @n_hash:	number of hash functions
 * @data, @len:	the word
 */
void bloom_add_data(uint64_t *filter, size_t size, unsigned n_hash, const void *data, size_t len);

/**
 * bloom_add_pair() - add "@a:@b"
 * @filter, @size, @n_hash: as bloom_add_data()
 * @a:		the key (NUL-terminated)
 * @b, @blen:	the value
 */
void bloom_add_pair(uint64_t *filter, size_t size, unsigned n_hash, const char *a,
		    const char *b, size_t blen);

/**
 * bloom_add_prefixes() - add "@a:@b" and "@a:" + every @sep prefix of @b
 * @filter, @size, @n_hash, @a, @b, @blen: as bloom_add_pair()
 * @sep:	'.' or '/'
 *
 * As sd-bus's bloom_add_prefixes(): for "x.y.z" with '.' it adds "x.y.z",
 * "x.y.", "x.y", "x.", "x".
 */
void bloom_add_prefixes(uint64_t *filter, size_t size, unsigned n_hash, const char *a,
			const char *b, size_t blen, char sep);

/**
 * bloom_add_message() - add the words of a message
 * @filter:	size / 8 words, usually zeroed first
 * @size:	filter size in bytes
 * @n_hash:	number of hash functions
 * @h:		the message's parsed header
 * @body:	its validated body, or NULL (no argument words)
 */
void bloom_add_message(uint64_t *filter, size_t size, unsigned n_hash, const WireHeader *h,
		       const uint8_t *body);

/**
 * bloom_add_rule_mask() - add the words a match rule requires
 * @mask:	size / 8 words, usually zeroed first
 * @size:	filter size in bytes
 * @n_hash:	number of hash functions
 * @r:		the rule
 *
 * A rule that needs no word leaves the mask untouched (all zero: matches
 * everything).
 */
void bloom_add_rule_mask(uint64_t *mask, size_t size, unsigned n_hash, const MatchRule *r);

/**
 * bloom_matches() - does a filter pass a mask?
 * @filter:	the message's filter
 * @mask:	the rule's mask
 * @size:	their size in bytes
 *
 * Return: true if every bit set in @mask is set in @filter.
 */
bool bloom_matches(const uint64_t *filter, const uint64_t *mask, size_t size);
