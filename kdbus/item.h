/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * item.h - validation of command structures and their item lists
 *
 * The userspace core follows the kernel's handle.c/item.c: every command
 * declares the item types it accepts (KdbusArg), kdbus_args_parse() checks
 * sizes, alignment, flags and items, handles KDBUS_FLAG_NEGOTIATE and
 * KDBUS_ITEM_NEGOTIATE, and records the items found.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/bus.h"
#include "kdbus/kdbus.h"
#include "kshared/item.h"
#include "kshared/name.h"

#define KDBUS_CMD_MAX_SIZE		(32 * 1024)
#define KDBUS_SYSNAME_MAX_LEN		63
#define KDBUS_BUS_BLOOM_MAX_SIZE	4096
#define KDBUS_ITEM_PAYLOAD_SIZE(i)	((i)->size - KDBUS_ITEM_HEADER_SIZE)

/* one accepted item type of a command (kshared/item.h) */
typedef struct kdbus_arg KdbusArg;

/**
 * kdbus_match_keys_validate() - a KDBUS_ITEM_MATCH_KEYS (bus.h), the
 * userspace core's extension the shared rules do not know
 * @item:	the item
 *
 * Return: 0, or -EINVAL unless it has 1 to KDBUS_MATCH_KEYS_MAX keys.
 */
static inline int kdbus_match_keys_validate(const struct kdbus_item *item) {
	size_t len = KDBUS_ITEM_PAYLOAD_SIZE(item);

	if (len == 0 || len % sizeof(uint64_t) != 0 || len > KDBUS_MATCH_KEYS_MAX * sizeof(uint64_t))
		return -EINVAL;
	return 0;
}

/**
 * kdbus_args_parse() - validate a command structure in place
 * @cmd:		the command (starts with size, flags, return_flags)
 * @min_size:		the size of the fixed part
 * @items_offset:	where its items start
 * @allowed_flags:	flags the command accepts (without NEGOTIATE)
 * @argv:		accepted items; argv[0] must be KDBUS_ITEM_NEGOTIATE
 * @argc:		number of @argv entries
 *
 * Checks alignment (-EFAULT), size (-EINVAL below @min_size, -EMSGSIZE
 * above KDBUS_CMD_MAX_SIZE), flags (-EINVAL), the items
 * (kdbus_items_parse(): framing, unexpected or duplicated items, per-type
 * payloads; MATCH_KEYS is MATCH_ADD's to check, kdbus_match_keys_validate())
 * and mandatory items (-EINVAL).  With KDBUS_FLAG_NEGOTIATE the flags field is
 * overwritten with @allowed_flags and the NEGOTIATE item's unsupported
 * types are zeroed; without it a NEGOTIATE item is left alone (the
 * commands skip it).  return_flags is reset to 0.
 *
 * Return: 0 to go on, 1 if the call was a negotiation (the command must
 * then do nothing and return 0), or a negative errno.
 */
int kdbus_args_parse(void *cmd, size_t min_size, size_t items_offset,
		     uint64_t allowed_flags, KdbusArg *argv, size_t argc);

/**
 * kdbus_sysname_is_valid() - bus name syntax: [A-Za-z0-9_], '-' and '.'
 * except at either end
 * @name:	the name
 *
 * Return: 0, -EINVAL or -ENAMETOOLONG.
 */
int kdbus_sysname_is_valid(const char *name);

/**
 * kdbus_sanitize_attach_flags() - check an attach mask
 * @flags:	the mask given by userspace
 * @ret:	the mask to use (_KDBUS_ATTACH_ANY becomes _KDBUS_ATTACH_ALL)
 *
 * Return: 0, or -EINVAL for unknown bits.
 */
int kdbus_sanitize_attach_flags(uint64_t flags, uint64_t *ret);

/**
 * kdbus_info_args_parse() - kdbus_args_parse() of a CONN_INFO or
 * BUS_CREATOR_INFO command (no flags), then its attach mask
 * @cmd:	the command
 * @argv:	accepted items, as for kdbus_args_parse()
 * @argc:	number of @argv entries
 * @ret_mask:	the sanitized attach_flags (kdbus_sanitize_attach_flags())
 *
 * Return: as kdbus_args_parse(); -EINVAL for unknown attach bits.
 */
int kdbus_info_args_parse(struct kdbus_cmd_info *cmd, KdbusArg *argv, size_t argc, uint64_t *ret_mask);
