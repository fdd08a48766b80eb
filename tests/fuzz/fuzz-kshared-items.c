/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-kshared-items.c - libFuzzer target for kshared/item.c, the item
 * framing both kdbus backends run on every command and message.
 *
 * The input is an item list (copied to 8-byte aligned memory, as a
 * command's copy is).  kdbus_items_validate() and kdbus_items_parse() must
 * agree; an accepted list is walked again and every item must lie inside
 * the input, pass kdbus_item_validate(), and its strings must end where the
 * item says; kdbus_item_write() of an accepted item must give the same
 * item back, padding zeroed.  Nothing may read outside the input (ASan).
 */

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kshared/item.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* every type the ABI has a payload rule for, as a command taking them all */
static const uint64_t known[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_PAYLOAD_VEC, KDBUS_ITEM_PAYLOAD_OFF,
	KDBUS_ITEM_PAYLOAD_MEMFD, KDBUS_ITEM_FDS, KDBUS_ITEM_CANCEL_FD,
	KDBUS_ITEM_BLOOM_PARAMETER, KDBUS_ITEM_BLOOM_FILTER, KDBUS_ITEM_BLOOM_MASK,
	KDBUS_ITEM_DST_NAME, KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_ATTACH_FLAGS_SEND,
	KDBUS_ITEM_ATTACH_FLAGS_RECV, KDBUS_ITEM_ID, KDBUS_ITEM_NAME, KDBUS_ITEM_DST_ID,
	KDBUS_ITEM_POLICY_ACCESS, KDBUS_ITEM_TIMESTAMP, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
	KDBUS_ITEM_AUXGROUPS, KDBUS_ITEM_OWNED_NAME, KDBUS_ITEM_TID_COMM, KDBUS_ITEM_PID_COMM,
	KDBUS_ITEM_EXE, KDBUS_ITEM_CMDLINE, KDBUS_ITEM_CGROUP, KDBUS_ITEM_CAPS,
	KDBUS_ITEM_SECLABEL, KDBUS_ITEM_AUDIT, KDBUS_ITEM_CONN_DESCRIPTION,
	KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE,
	KDBUS_ITEM_ID_ADD, KDBUS_ITEM_ID_REMOVE, KDBUS_ITEM_REPLY_TIMEOUT,
	KDBUS_ITEM_REPLY_DEAD,
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

static bool is_known(uint64_t type) {
	for (size_t i = 0; i < N_KNOWN; i++)
		if (known[i] == type)
			return true;
	return false;
}

static bool is_string_type(uint64_t type) {
	switch (type) {
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
		return true;
	default:
		return false;
	}
}

static void check_item(const struct kdbus_item *it) {
	size_t len = kdbus_item_payload_size(it);
	uint8_t *copy;
	uint8_t *end;

	assert(kdbus_item_validate(it) == 0);
	if (is_string_type(it->type)) {
		assert(kdbus_item_is_string(it));
		assert(strlen((const char *)kdbus_item_payload(it)) == len - 1);
	}
	if (it->type == KDBUS_ITEM_BLOOM_FILTER) {
		int r = kdbus_bloom_filter_check(it, 64);

		assert(r == 0 || r == -EDOM);
		assert((r == 0) == (len == 8 + 64));
	}
	if (it->type == KDBUS_ITEM_NAME_ADD || it->type == KDBUS_ITEM_NAME_CHANGE ||
	    it->type == KDBUS_ITEM_NAME_REMOVE) {
		if (len > sizeof(struct kdbus_notify_name_change)) {
			const char *name = (const char *)kdbus_item_payload(it) +
					   sizeof(struct kdbus_notify_name_change);

			assert(kdbus_notify_payload_size(it->type, strlen(name)) == len);
		} else {
			assert(len == sizeof(struct kdbus_notify_name_change));
		}
	}
	if (it->type == KDBUS_ITEM_ID_ADD || it->type == KDBUS_ITEM_ID_REMOVE ||
	    it->type == KDBUS_ITEM_REPLY_TIMEOUT || it->type == KDBUS_ITEM_REPLY_DEAD)
		assert(kdbus_notify_payload_size(it->type, 0) == len);

	/* written again: the same item, its padding zeroed */
	copy = malloc(KDBUS_ITEM_SIZE(len));
	assert(copy);
	memset(copy, 0xa5, KDBUS_ITEM_SIZE(len));
	end = kdbus_item_write(copy, it->type, kdbus_item_payload(it), len);
	assert(end == copy + KDBUS_ITEM_SIZE(len));
	assert(memcmp(copy, it, it->size) == 0);
	for (size_t i = it->size; i < KDBUS_ITEM_SIZE(len); i++)
		assert(copy[i] == 0);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct kdbus_arg argv[N_KNOWN], once[N_KNOWN];
	uint64_t *buf;
	struct kdbus_item *items;
	size_t pos, n = 0;
	int r, rp, ro;

	if (size > 64 * 1024)
		return 0;
	/* exactly @size bytes, 8-byte aligned: ASan sees any read beyond */
	buf = aligned_alloc(8, KDBUS_ALIGN8(size) ? KDBUS_ALIGN8(size) : 8);
	assert(buf);
	memcpy(buf, data, size);
	items = (struct kdbus_item *)buf;

	for (size_t i = 0; i < N_KNOWN; i++) {
		argv[i] = (struct kdbus_arg){ .type = known[i], .multiple = true };
		once[i] = (struct kdbus_arg){ .type = known[i] };
	}
	r = kdbus_items_validate(items, size);
	rp = kdbus_items_parse(items, size, argv, N_KNOWN);
	ro = kdbus_items_parse(items, size, once, N_KNOWN);
	assert(r == 0 || r == -EINVAL || r == -EBADF || r == -EFAULT);
	/* accepted: the number of items, the same for both tables */
	assert(rp >= 0 || rp == -EINVAL || rp == -EBADF || rp == -EFAULT);
	assert(ro >= 0 || ro == -EINVAL || ro == -EBADF || ro == -EFAULT);
	/* a refused list is refused by a command that takes every type */
	if (r < 0)
		assert(rp < 0);
	/* taking each type once is stricter */
	if (ro >= 0)
		assert(rp == ro);
	if (rp >= 0)
		assert(r == 0);

	if (r == 0) {
		bool all_known = true;

		for (pos = 0; pos < size; ) {
			const struct kdbus_item *it = (const void *)((const uint8_t *)buf + pos);

			assert(size - pos >= KDBUS_ITEM_HEADER_SIZE);
			assert(it->size >= KDBUS_ITEM_HEADER_SIZE && it->size <= size - pos);
			check_item(it);
			if (!is_known(it->type))
				all_known = false;
			n++;
			pos += KDBUS_ALIGN8(it->size);
		}
		assert(n <= size / KDBUS_ITEM_HEADER_SIZE);
		/* every type known: the parse takes what the validation took */
		if (all_known)
			assert(rp == (int)n);
		if (rp >= 0)
			for (size_t i = 0; i < N_KNOWN; i++)
				if (argv[i].item)
					assert(argv[i].item->type == known[i]);
	}
	free(buf);
	return 0;
}
