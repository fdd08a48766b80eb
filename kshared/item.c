// SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later
/*
 * item.c - the framing and payload rules of kdbus items (see item.h)
 *
 * Compiled into the userspace core (kdbus/libkdbus.a) and into kdbus.ko
 * (kmod/kshared-item.c).  Every command's items and every message's items
 * pass here, on the SEND path too.
 */

#include "kshared/item.h"

int kdbus_item_validate(const struct kdbus_item *item)
{
	size_t len = kdbus_item_payload_size(item);
	const uint8_t *payload = kdbus_item_payload(item);

	switch (item->type) {
	case KDBUS_ITEM_NEGOTIATE:
	case KDBUS_ITEM_AUXGROUPS:
		if (len % sizeof(uint64_t))
			return -EINVAL;
		break;
	case KDBUS_ITEM_PAYLOAD_VEC:
	case KDBUS_ITEM_PAYLOAD_OFF:
		if (len != sizeof(struct kdbus_vec))
			return -EINVAL;
		if (item->vec.size == 0 || item->vec.size != (uint64_t)(size_t)item->vec.size)
			return -EINVAL;
		break;
	case KDBUS_ITEM_PAYLOAD_MEMFD:
		if (len != sizeof(struct kdbus_memfd))
			return -EINVAL;
		if (item->memfd.size == 0 || item->memfd.size != (uint64_t)(size_t)item->memfd.size)
			return -EINVAL;
		if (item->memfd.fd < 0)
			return -EBADF;
		break;
	case KDBUS_ITEM_FDS:
		if (len % sizeof(int))
			return -EINVAL;
		break;
	case KDBUS_ITEM_CANCEL_FD:
		if (len != sizeof(int))
			return -EINVAL;
		break;
	case KDBUS_ITEM_BLOOM_PARAMETER:
		if (len != sizeof(struct kdbus_bloom_parameter))
			return -EINVAL;
		break;
	case KDBUS_ITEM_BLOOM_FILTER:
		if (len < sizeof(struct kdbus_bloom_filter))
			return -EINVAL;
		if ((len - sizeof(struct kdbus_bloom_filter)) % sizeof(uint64_t))
			return -EFAULT;
		break;
	case KDBUS_ITEM_ATTACH_FLAGS_SEND:
	case KDBUS_ITEM_ATTACH_FLAGS_RECV:
	case KDBUS_ITEM_ID:
	case KDBUS_ITEM_DST_ID:
		if (len != sizeof(uint64_t))
			return -EINVAL;
		break;
	case KDBUS_ITEM_TIMESTAMP:
		if (len != sizeof(struct kdbus_timestamp))
			return -EINVAL;
		break;
	case KDBUS_ITEM_CREDS:
		if (len != sizeof(struct kdbus_creds))
			return -EINVAL;
		break;
	case KDBUS_ITEM_PIDS:
		if (len != sizeof(struct kdbus_pids))
			return -EINVAL;
		break;
	case KDBUS_ITEM_AUDIT:
		if (len != sizeof(struct kdbus_audit))
			return -EINVAL;
		break;
	case KDBUS_ITEM_POLICY_ACCESS:
		if (len != sizeof(struct kdbus_policy_access))
			return -EINVAL;
		break;
	case KDBUS_ITEM_CAPS:
		if (len < sizeof(uint32_t))
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
		if (!kdbus_str_is_terminated((const char *)payload, len))
			return -EINVAL;
		break;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		if (len < sizeof(struct kdbus_notify_name_change))
			return -EINVAL;
		/* the name is optional (a match's rule may leave it out) */
		len -= sizeof(struct kdbus_notify_name_change);
		if (len && !kdbus_str_is_terminated((const char *)payload +
						    sizeof(struct kdbus_notify_name_change), len))
			return -EINVAL;
		break;
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		if (len != sizeof(struct kdbus_notify_id_change))
			return -EINVAL;
		break;
	case KDBUS_ITEM_REPLY_TIMEOUT:
	case KDBUS_ITEM_REPLY_DEAD:
		if (len != 0)
			return -EINVAL;
		break;
	default:
		break;
	}
	return 0;
}

/* whether the item at @pos has its header and fits the @size bytes */
static inline bool kdbus_item_fits(const struct kdbus_item *item, size_t pos, size_t size)
{
	return size - pos >= KDBUS_ITEM_HEADER_SIZE && item->size >= KDBUS_ITEM_HEADER_SIZE &&
	       item->size <= size - pos;
}

int kdbus_items_validate(const struct kdbus_item *items, size_t size)
{
	const uint8_t *start = (const uint8_t *)items;
	size_t pos = 0;
	int r;

	while (pos < size) {
		const struct kdbus_item *item = (const void *)(start + pos);

		if (unlikely(!kdbus_item_fits(item, pos, size)))
			return -EINVAL;
		r = kdbus_item_validate(item);
		if (unlikely(r < 0))
			return r;
		pos += KDBUS_ALIGN8(item->size);
	}
	return 0;
}

int kdbus_items_parse(struct kdbus_item *items, size_t size, struct kdbus_arg *argv, size_t argc)
{
	uint8_t *start = (uint8_t *)items;
	size_t pos = 0, i;
	int r, n = 0;

	for (i = 0; i < argc; i++)
		argv[i].item = NULL;
	while (pos < size) {
		struct kdbus_item *item = (void *)(start + pos);

		if (unlikely(!kdbus_item_fits(item, pos, size)))
			return -EINVAL;
		for (i = 0; i < argc; i++)
			if (argv[i].type == item->type)
				break;
		if (unlikely(i == argc))
			return -EINVAL;
		r = kdbus_item_validate(item);
		if (unlikely(r < 0))
			return r;
		if (unlikely(argv[i].item && !argv[i].multiple))
			return -EINVAL;
		argv[i].item = item;
		pos += KDBUS_ALIGN8(item->size);
		n++;
	}
	return n;
}
