/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * item.c - validation of command structures and item lists (see item.h)
 */

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "kdbus/bus.h"
#include "kdbus/item.h"
#include "util/macro.h"

int kdbus_args_parse(void *cmdp, size_t min_size, size_t items_offset,
		     uint64_t allowed_flags, KdbusArg *argv, size_t argc) {
	struct kdbus_cmd *cmd = cmdp;
	bool negotiate;
	int r;

	if (!cmd || ((uintptr_t)cmd & 7))
		return -EFAULT;
	if (cmd->size < min_size)
		return -EINVAL;
	if (cmd->size > KDBUS_CMD_MAX_SIZE)
		return -EMSGSIZE;

	cmd->return_flags = 0;
	if (cmd->flags & ~(allowed_flags | KDBUS_FLAG_NEGOTIATE))
		return -EINVAL;

	r = kdbus_items_parse((struct kdbus_item *)((uint8_t *)cmd + items_offset),
			      cmd->size - items_offset, argv, argc);
	if (r < 0)
		return r;	/* any number of items: KDBUS_CMD_MAX_SIZE bounds it */
	/* without the flag a NEGOTIATE item is not answered: the command goes on */
	negotiate = cmd->flags & KDBUS_FLAG_NEGOTIATE;
	if (!negotiate) {
		for (size_t i = 0; i < argc; i++)
			if (argv[i].mandatory && !argv[i].item)
				return -EINVAL;
		return 0;
	}

	cmd->flags = allowed_flags & ~KDBUS_FLAG_NEGOTIATE;
	if (argc > 0 && argv[0].type == KDBUS_ITEM_NEGOTIATE && argv[0].item) {
		struct kdbus_item *n = argv[0].item;
		size_t num = KDBUS_ITEM_PAYLOAD_SIZE(n) / sizeof(uint64_t);

		for (size_t i = 0; i < num; i++) {
			size_t j;

			for (j = 0; j < argc; j++)
				if (n->data64[i] == argv[j].type)
					break;
			if (j >= argc)
				n->data64[i] = 0;
		}
	}
	return 1;
}

int kdbus_sysname_is_valid(const char *name) {
	size_t len = strlen(name);

	if (len == 0)
		return -EINVAL;
	if (len > KDBUS_SYSNAME_MAX_LEN)
		return -ENAMETOOLONG;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = name[i];

		if (isalnum(c) || c == '_')
			continue;
		if (i > 0 && i + 1 < len && (c == '-' || c == '.'))
			continue;
		return -EINVAL;
	}
	return 0;
}

int kdbus_sanitize_attach_flags(uint64_t flags, uint64_t *ret) {
	if (flags == _KDBUS_ATTACH_ANY)
		flags = _KDBUS_ATTACH_ALL;
	else if (flags & ~(uint64_t)_KDBUS_ATTACH_ALL)
		return -EINVAL;
	*ret = flags;
	return 0;
}

int kdbus_info_args_parse(struct kdbus_cmd_info *cmd, KdbusArg *argv, size_t argc, uint64_t *ret_mask) {
	int r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_info, items), 0, argv, argc);

	if (r != 0)
		return r;
	return kdbus_sanitize_attach_flags(cmd->attach_flags, ret_mask);
}
