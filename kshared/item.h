/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_ITEM_H
#define KSHARED_ITEM_H

/*
 * item.h - the framing of kdbus items
 *
 * What a command or a message brings: every item at least its header,
 * inside its container, 8-byte aligned, of a type the command takes, once
 * unless the command takes several, with a payload of the size its type
 * has (kdbus_items_validate(), kdbus_items_parse()).  What the bus writes:
 * the size of each item it puts in a pool (notifications, metadata, owned
 * names) and the item itself with its padding zeroed (kdbus_item_write()).
 *
 * Everything works on memory the caller already holds (a command copied
 * from its caller, a notification being built); nothing here reads user
 * memory, allocates or locks.
 */

#include "kshared/platform.h"
#include "kdbus/kdbus.h"

/**
 * struct kdbus_arg - one item type a command takes
 * @type:	the item type
 * @item:	output: the (last) item of @type, NULL if there is none
 * @multiple:	whether the command takes more than one item of @type
 * @mandatory:	whether the command needs one (the caller checks it, after
 *		a negotiation was ruled out)
 */
struct kdbus_arg {
	uint64_t type;
	struct kdbus_item *item;
	bool multiple;
	bool mandatory;
};

/**
 * kdbus_item_payload() - the payload of an item, by offset
 * @item:	the item
 *
 * The uapi's zero-length members (str, data, name_change.name) are objects
 * of size 0 to FORTIFY_SOURCE, which panics on a strlen() or memcpy()
 * through them; this pointer is not.
 *
 * Return: the first byte after the item's header.
 */
static inline uint8_t *kdbus_item_payload(const struct kdbus_item *item)
{
	return (uint8_t *)item + KDBUS_ITEM_HEADER_SIZE;
}

/**
 * kdbus_item_payload_size() - the bytes of an item's payload
 * @item:	an item whose size is at least KDBUS_ITEM_HEADER_SIZE
 *
 * Return: its size without its header (and without its padding).
 */
static inline size_t kdbus_item_payload_size(const struct kdbus_item *item)
{
	return item->size - KDBUS_ITEM_HEADER_SIZE;
}

/**
 * kdbus_str_is_terminated() - whether @len bytes are one C string
 * @s:		the bytes
 * @len:	how many
 *
 * Return: true if the last of the @len bytes is the only NUL among them
 * (so @len is at least 1).
 */
static inline bool kdbus_str_is_terminated(const char *s, size_t len)
{
	return len > 0 && memchr(s, '\0', len) == s + len - 1;
}

/**
 * kdbus_item_is_string() - whether an item's payload is one C string
 * @item:	the item, whose size fits its container
 *
 * Return: true if the payload is NUL-terminated and has no other NUL (an
 * empty string, a payload of one NUL, passes).
 */
static inline bool kdbus_item_is_string(const struct kdbus_item *item)
{
	return kdbus_str_is_terminated((const char *)kdbus_item_payload(item),
				       kdbus_item_payload_size(item));
}

/**
 * kdbus_item_validate() - the payload rules of an item's type
 * @item:	an item whose size is at least its header and fits its
 *		container
 *
 * Fixed-size items (vec, memfd, CANCEL_FD, BLOOM_PARAMETER, ids, attach
 * flags, TIMESTAMP, CREDS, PIDS, AUDIT, POLICY_ACCESS, ID_ADD/ID_REMOVE,
 * REPLY_TIMEOUT/REPLY_DEAD) have exactly their size; arrays (NEGOTIATE,
 * AUXGROUPS, FDS) whole elements; strings (names, descriptions, comm, exe,
 * cmdline, cgroup, seclabel) exactly one NUL, at the end; NAME_ADD,
 * NAME_REMOVE and NAME_CHANGE their ids and an optional string; a vec or
 * memfd at least one byte; a BLOOM_FILTER its generation and whole 64-bit
 * words.  Types without a rule (BLOOM_MASK, whose size is the bus's,
 * unknown types, which the command refuses) pass.
 *
 * Return: 0; -EINVAL for a payload of the wrong size or shape; -EBADF for
 * a memfd's negative fd; -EFAULT for a BLOOM_FILTER that is not whole
 * 64-bit words (its size against the bus's: kdbus_bloom_filter_check()).
 */
int kdbus_item_validate(const struct kdbus_item *item);

/**
 * kdbus_items_validate() - the framing and payload rules of an item list
 * @items:	the first item, 8-byte aligned
 * @size:	the bytes from @items to the end of their container
 *
 * Every item has at least its header and lies inside the container, the
 * next starts at the 8-byte aligned end of the previous one (the last
 * one's padding may be left out) and passes kdbus_item_validate().
 *
 * Return: 0, -EINVAL for broken framing, or kdbus_item_validate()'s error.
 */
int kdbus_items_validate(const struct kdbus_item *items, size_t size);

/**
 * kdbus_items_parse() - kdbus_items_validate() against a command's types
 * @items:	the first item, 8-byte aligned
 * @size:	the bytes from @items to the end of the command
 * @argv:	the types the command takes; each @item is set here
 * @argc:	number of @argv entries
 *
 * Checks each item's framing, that its type is in @argv, its payload
 * (kdbus_item_validate()) and that a type without @multiple comes once,
 * in that order, item by item.  @mandatory is left to the caller, and so
 * is a bound on the number of items (@size, a command's, bounds it).
 *
 * Return: the number of items, -EINVAL for broken framing, an unexpected
 * or a duplicated item, or kdbus_item_validate()'s error.
 */
int kdbus_items_parse(struct kdbus_item *items, size_t size, struct kdbus_arg *argv, size_t argc);

/**
 * kdbus_bloom_filter_check() - a BLOOM_FILTER item against the bus
 * @item:	a BLOOM_FILTER item whose size fits its container
 * @bloom_size:	the bus's bloom size in bytes (a multiple of 8)
 *
 * A filter is of the bus's size whatever the message, broadcast or not:
 * the match tests read that much of it.
 *
 * Return: 0; -EINVAL below a generation, -EFAULT if the filter is not
 * whole 64-bit words, -EDOM if it is not @bloom_size bytes.
 */
static inline int kdbus_bloom_filter_check(const struct kdbus_item *item, uint64_t bloom_size)
{
	size_t len = kdbus_item_payload_size(item);

	if (unlikely(len < sizeof(struct kdbus_bloom_filter)))
		return -EINVAL;
	len -= sizeof(struct kdbus_bloom_filter);
	if (unlikely(len % sizeof(uint64_t)))
		return -EFAULT;
	if (unlikely(len != bloom_size))
		return -EDOM;
	return 0;
}

/* ---- the items the bus writes -------------------------------------------- */

/**
 * kdbus_notify_payload_size() - the payload of a notification item
 * @type:	KDBUS_ITEM_ID_ADD, ID_REMOVE, NAME_ADD, NAME_REMOVE,
 *		NAME_CHANGE, REPLY_TIMEOUT or REPLY_DEAD
 * @name_len:	for the NAME_* ones, strlen() of the name
 *
 * Return: the bytes after the item's header: the id change, the name
 * change with the name and its NUL, or nothing (the replies, and types
 * that are no notification).
 */
static inline size_t kdbus_notify_payload_size(uint64_t type, size_t name_len)
{
	switch (type) {
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		return sizeof(struct kdbus_notify_id_change);
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		return sizeof(struct kdbus_notify_name_change) + name_len + 1;
	default:
		return 0;
	}
}

/**
 * kdbus_notify_item_size() - the room of a notification item
 * @type:	as for kdbus_notify_payload_size()
 * @name_len:	as for kdbus_notify_payload_size()
 *
 * Return: its header, payload and padding (KDBUS_ITEM_SIZE()).
 */
static inline size_t kdbus_notify_item_size(uint64_t type, size_t name_len)
{
	return KDBUS_ITEM_SIZE(kdbus_notify_payload_size(type, name_len));
}

/**
 * kdbus_string_item_size() - the room of an item holding one string
 * @len:	strlen() of the string
 *
 * Return: KDBUS_ITEM_SIZE() of the string with its NUL.
 */
static inline size_t kdbus_string_item_size(size_t len)
{
	return KDBUS_ITEM_SIZE(len + 1);
}

/**
 * kdbus_owned_name_item_size() - the room of a KDBUS_ITEM_OWNED_NAME
 * @name_len:	strlen() of the name
 *
 * Return: KDBUS_ITEM_SIZE() of its struct kdbus_name with the name and NUL.
 */
static inline size_t kdbus_owned_name_item_size(size_t name_len)
{
	return KDBUS_ITEM_SIZE(sizeof(struct kdbus_name) + name_len + 1);
}

/**
 * kdbus_caps_payload_size() - the payload of a KDBUS_ITEM_CAPS
 * @words:	32-bit words of one capability set
 *
 * struct kdbus_caps: last_cap, then the inheritable, permitted, effective
 * and bounding sets, @words each.
 *
 * Return: its size in bytes.
 */
static inline size_t kdbus_caps_payload_size(size_t words)
{
	return sizeof(uint32_t) + 4 * words * sizeof(uint32_t);
}

/**
 * kdbus_item_init() - the header and padding of an item at @p
 * @p:		8-byte aligned room of KDBUS_ITEM_SIZE(@len) bytes
 * @type:	its type
 * @len:	the bytes of its payload, which the caller writes
 *
 * The padding after the payload is zeroed: no stale byte reaches a pool.
 *
 * Return: the item's end (where the next one starts).
 */
static inline void *kdbus_item_init(void *p, uint64_t type, size_t len)
{
	struct kdbus_item *item = p;
	size_t size = KDBUS_ITEM_HEADER_SIZE + len;

	item->size = size;
	item->type = type;
	if (size & 7)
		memset((uint8_t *)p + size, 0, KDBUS_ALIGN8(size) - size);
	return (uint8_t *)p + KDBUS_ALIGN8(size);
}

/**
 * kdbus_item_write() - write an item at @p
 * @p:		8-byte aligned room of KDBUS_ITEM_SIZE(@len) bytes
 * @type:	its type
 * @data:	its payload (may be NULL when @len is 0)
 * @len:	the bytes of @data
 *
 * Return: the item's end (where the next one starts); its padding zeroed.
 */
static inline void *kdbus_item_write(void *p, uint64_t type, const void *data, size_t len)
{
	if (len)
		memcpy(kdbus_item_payload(p), data, len);
	return kdbus_item_init(p, type, len);
}

#endif /* KSHARED_ITEM_H */
