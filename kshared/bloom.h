/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_BLOOM_H
#define KSHARED_BLOOM_H

/*
 * bloom.h - the bloom test of a broadcast against a match rule's masks
 *
 * A bus has one bloom size (BLOOM_PARAMETER at BUS_MAKE, a multiple of 8
 * bytes).  A signal carries one filter of exactly that size, with a
 * generation; a rule's BLOOM_MASK holds one mask of that size per
 * generation (at least one).  The filter passes a rule when it has every
 * bit of the mask of its generation, or of the rule's last generation
 * when the filter's is newer.
 */

#include "kdbus/kdbus.h"
#include "kshared/platform.h"

/**
 * kdbus_bloom_mask_is_valid() - whether a BLOOM_MASK fits the bus
 * @mask_size:	the item's payload size in bytes
 * @bloom_size:	the bus's bloom size in bytes (not 0)
 *
 * Return: true for one or more whole masks of the bus's size (else the
 * command fails with EDOM).
 */
static inline bool kdbus_bloom_mask_is_valid(uint64_t mask_size, uint64_t bloom_size)
{
	return mask_size >= bloom_size && mask_size % bloom_size == 0;
}

/**
 * kdbus_bloom_match() - the bloom test of one rule
 * @filter:	the message's filter (of the bus's size), or NULL for none
 * @words:	the bus's bloom size / 8
 * @mask:	the rule's masks, @generations of @words words each
 * @generations: how many masks (not 0)
 *
 * Return: true if (filter & mask) == mask in every word of the mask of
 * the filter's generation (or of the last one); false without a filter.
 */
static inline bool kdbus_bloom_match(const struct kdbus_bloom_filter *filter, size_t words,
				     const uint64_t *mask, uint64_t generations)
{
	uint64_t g;
	size_t i;

	if (!filter)
		return false;
	g = filter->generation < generations - 1 ? filter->generation : generations - 1;
	mask += g * words;
	for (i = 0; i < words; i++)
		if ((filter->data[i] & mask[i]) != mask[i])
			return false;
	return true;
}

#endif /* KSHARED_BLOOM_H */
