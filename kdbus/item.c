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

static int kdbus_item_validate_nul(const struct kdbus_item *item) {
	size_t l = KDBUS_ITEM_PAYLOAD_SIZE(item);

	if (l == 0 || strnlen(item->str, l) != l - 1)
		return -EINVAL;
	return 0;
}

int kdbus_item_validate(const struct kdbus_item *item) {
	size_t payload_size;

	if (item->size < KDBUS_ITEM_HEADER_SIZE)
		return -EINVAL;
	payload_size = KDBUS_ITEM_PAYLOAD_SIZE(item);

	switch (item->type) {
	case KDBUS_ITEM_NEGOTIATE:
		if (payload_size % sizeof(uint64_t) != 0)
			return -EINVAL;
		break;
	case KDBUS_ITEM_PAYLOAD_VEC:
	case KDBUS_ITEM_PAYLOAD_OFF:
		if (payload_size != sizeof(struct kdbus_vec))
			return -EINVAL;
		if (item->vec.size == 0 || item->vec.size > SIZE_MAX)
			return -EINVAL;
		break;
	case KDBUS_ITEM_PAYLOAD_MEMFD:
		if (payload_size != sizeof(struct kdbus_memfd))
			return -EINVAL;
		if (item->memfd.size == 0 || item->memfd.size > SIZE_MAX)
			return -EINVAL;
		if (item->memfd.fd < 0)
			return -EBADF;
		break;
	case KDBUS_ITEM_FDS:
		if (payload_size % sizeof(int) != 0)
			return -EINVAL;
		break;
	case KDBUS_ITEM_CANCEL_FD:
		if (payload_size != sizeof(int))
			return -EINVAL;
		break;
	case KDBUS_ITEM_BLOOM_PARAMETER:
		if (payload_size != sizeof(struct kdbus_bloom_parameter))
			return -EINVAL;
		break;
	case KDBUS_ITEM_BLOOM_FILTER:
		if (payload_size < sizeof(struct kdbus_bloom_filter))
			return -EINVAL;
		break;
	case KDBUS_ITEM_BLOOM_MASK:
		/* the size depends on the bus's bloom size */
		break;
	case KDBUS_ITEM_MATCH_KEYS:
		if (payload_size == 0 || payload_size % sizeof(uint64_t) != 0 ||
		    payload_size > KDBUS_MATCH_KEYS_MAX * sizeof(uint64_t))
			return -EINVAL;
		break;
	case KDBUS_ITEM_ATTACH_FLAGS_SEND:
	case KDBUS_ITEM_ATTACH_FLAGS_RECV:
	case KDBUS_ITEM_ID:
	case KDBUS_ITEM_DST_ID:
		if (payload_size != sizeof(uint64_t))
			return -EINVAL;
		break;
	case KDBUS_ITEM_TIMESTAMP:
		if (payload_size != sizeof(struct kdbus_timestamp))
			return -EINVAL;
		break;
	case KDBUS_ITEM_CREDS:
		if (payload_size != sizeof(struct kdbus_creds))
			return -EINVAL;
		break;
	case KDBUS_ITEM_PIDS:
		if (payload_size != sizeof(struct kdbus_pids))
			return -EINVAL;
		break;
	case KDBUS_ITEM_AUXGROUPS:
		if (payload_size % sizeof(uint64_t) != 0)
			return -EINVAL;
		break;
	case KDBUS_ITEM_MAKE_NAME:
	case KDBUS_ITEM_CONN_DESCRIPTION:
	case KDBUS_ITEM_NAME:
	case KDBUS_ITEM_DST_NAME:
	case KDBUS_ITEM_PID_COMM:
	case KDBUS_ITEM_TID_COMM:
	case KDBUS_ITEM_EXE:
	case KDBUS_ITEM_CMDLINE:
	case KDBUS_ITEM_CGROUP:
	case KDBUS_ITEM_SECLABEL:
		return kdbus_item_validate_nul(item);
	case KDBUS_ITEM_CAPS:
		if (payload_size < sizeof(uint32_t))
			return -EINVAL;
		break;
	case KDBUS_ITEM_AUDIT:
		if (payload_size != sizeof(struct kdbus_audit))
			return -EINVAL;
		break;
	case KDBUS_ITEM_POLICY_ACCESS:
		if (payload_size != sizeof(struct kdbus_policy_access))
			return -EINVAL;
		break;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		if (payload_size < sizeof(struct kdbus_notify_name_change))
			return -EINVAL;
		if (payload_size > sizeof(struct kdbus_notify_name_change)) {
			size_t l = payload_size - sizeof(struct kdbus_notify_name_change);

			if (strnlen(item->name_change.name, l) != l - 1)
				return -EINVAL;
		}
		break;
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		if (payload_size != sizeof(struct kdbus_notify_id_change))
			return -EINVAL;
		break;
	case KDBUS_ITEM_REPLY_TIMEOUT:
	case KDBUS_ITEM_REPLY_DEAD:
		if (payload_size != 0)
			return -EINVAL;
		break;
	default:
		break;
	}

	return 0;
}

/* walk an item list; *ret_end is set to the first byte after the last item */
static bool kdbus_item_fits(const struct kdbus_item *item, const uint8_t *start, size_t size) {
	const uint8_t *p = (const uint8_t *)item;

	if (p < start || (size_t)(p - start) + KDBUS_ITEM_HEADER_SIZE > size)
		return false;
	if (item->size < KDBUS_ITEM_HEADER_SIZE || item->size > size - (size_t)(p - start))
		return false;
	return true;
}

int kdbus_items_validate(const struct kdbus_item *items, size_t size) {
	const uint8_t *start = (const uint8_t *)items;
	size_t pos = 0;
	int r;

	while (pos < size) {
		const struct kdbus_item *item = (const void *)(start + pos);

		if (!kdbus_item_fits(item, start, size))
			return -EINVAL;
		r = kdbus_item_validate(item);
		if (r < 0)
			return r;
		pos += KDBUS_ALIGN8(item->size);
	}
	/* the list must end exactly at ALIGN8 of the container size */
	if (pos != KDBUS_ALIGN8(size))
		return -EINVAL;
	return 0;
}

int kdbus_args_parse(void *cmdp, size_t min_size, size_t items_offset,
		     uint64_t allowed_flags, KdbusArg *argv, size_t argc) {
	struct kdbus_cmd *cmd = cmdp;
	uint8_t *start;
	size_t size, pos = 0;
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

	for (size_t i = 0; i < argc; i++)
		argv[i].item = NULL;

	start = (uint8_t *)cmd + items_offset;
	size = cmd->size - items_offset;
	while (pos < size) {
		struct kdbus_item *item = (void *)(start + pos);
		size_t i;

		if (!kdbus_item_fits(item, start, size))
			return -EINVAL;
		for (i = 0; i < argc; i++)
			if (argv[i].type == item->type)
				break;
		if (i >= argc)
			return -EINVAL;
		r = kdbus_item_validate(item);
		if (r < 0)
			return r;
		if (argv[i].item && !argv[i].multiple)
			return -EINVAL;
		argv[i].item = item;
		pos += KDBUS_ALIGN8(item->size);
	}
	if (pos != KDBUS_ALIGN8(size))
		return -EINVAL;

	negotiate = cmd->flags & KDBUS_FLAG_NEGOTIATE;
	for (size_t i = 0; i < argc && !negotiate; i++)
		if (argv[i].mandatory && !argv[i].item)
			return -EINVAL;

	if (negotiate)
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
		negotiate = true;
	}

	return negotiate ? 1 : 0;
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

void *kdbus_item_append(void *p, uint64_t type, const void *data, size_t size) {
	struct kdbus_item *item = p;
	size_t total = KDBUS_ITEM_HEADER_SIZE + size;

	item->size = total;
	item->type = type;
	if (size)
		memcpy(item->data, data, size);
	/* zero the padding so that no stale bytes reach the receiver */
	if (KDBUS_ALIGN8(total) > total)
		memset((uint8_t *)p + total, 0, KDBUS_ALIGN8(total) - total);
	return (uint8_t *)p + KDBUS_ALIGN8(total);
}
