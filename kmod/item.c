// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * item.c - command copies, item list validation, flag negotiation, names
 */
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "internal.h"

/**
 * kdbus_cmd_copy() - copy a command that starts with its __u64 size
 * @argp:	the ioctl argument
 * @min:	smallest valid size
 * @max:	largest valid size
 *
 * The caller's memory is read here and never again: every command works
 * on this copy.
 *
 * Return: a kmalloc()ed copy, or ERR_PTR(-EFAULT) for an unaligned or
 * unreadable argument, -EINVAL below @min or when the size changed while
 * it was copied, -EMSGSIZE above @max.
 */
void *kdbus_cmd_copy(void __user *argp, size_t min, size_t max)
{
	u64 size, *copy;

	if (!IS_ALIGNED((unsigned long)argp, 8))
		return ERR_PTR(-EFAULT);
	if (get_user(size, (u64 __user *)argp))
		return ERR_PTR(-EFAULT);
	if (size < min)
		return ERR_PTR(-EINVAL);
	if (size > max)
		return ERR_PTR(-EMSGSIZE);
	copy = kmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!copy)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(copy, argp, size)) {
		kfree(copy);
		return ERR_PTR(-EFAULT);
	}
	/*
	 * The size was read twice: another thread may have changed it in
	 * between.  Only the copy is used from here on, and its size must be
	 * the one that was checked and allocated.
	 */
	if (copy[0] != size) {
		kfree(copy);
		return ERR_PTR(-EINVAL);
	}
	return copy;
}

/**
 * kdbus_items_validate() - check the framing of an item list
 * @items:	first item
 * @size:	bytes from @items to the end of the enclosing structure
 *
 * Every item has at least its header, lies inside the structure, and the
 * list ends exactly where the structure ends (the last item's padding may
 * be left out).
 *
 * Return: 0 or -EINVAL.
 */
int kdbus_items_validate(const struct kdbus_item *items, size_t size)
{
	const u8 *p = (const u8 *)items, *end = p + size;
	size_t n = 0;

	while (p < end) {
		const struct kdbus_item *it = (const void *)p;

		if (end - p < KDBUS_ITEM_HEADER_SIZE)
			return -EINVAL;
		if (it->size < KDBUS_ITEM_HEADER_SIZE || it->size > (u64)(end - p))
			return -EINVAL;
		if (++n > 512)
			return -E2BIG;
		p += KDBUS_ALIGN8(it->size);
	}
	return 0;
}

bool kdbus_item_allowed(u64 type, const u64 *types, size_t n_types)
{
	size_t i;

	for (i = 0; i < n_types; i++)
		if (types[i] == type)
			return true;
	return false;
}

/**
 * kdbus_negotiate() - answer KDBUS_FLAG_NEGOTIATE
 * @argp:	the ioctl argument
 * @cmd:	its copy (starting with size, flags)
 * @items_off:	offset of the items in the command
 * @valid_flags: the flags the command supports
 * @types:	the item types the command supports
 * @n_types:	number of @types
 *
 * Writes @valid_flags into flags and zeroes every unsupported type in the
 * command's KDBUS_ITEM_NEGOTIATE item, then copies the command back.
 *
 * Return: 0, -EINVAL, or -EFAULT.
 */
int kdbus_negotiate(void __user *argp, void *cmd, size_t items_off, u64 valid_flags,
		    const u64 *types, size_t n_types)
{
	u64 *hdr = cmd;		/* size, flags */
	struct kdbus_item *it;
	int ret;

	ret = kdbus_items_validate((void *)((u8 *)cmd + items_off), hdr[0] - items_off);
	if (ret < 0)
		return ret;
	KDBUS_ITEMS_FOREACH(it, (struct kdbus_item *)((u8 *)cmd + items_off), hdr[0] - items_off) {
		size_t i, n;

		if (it->type != KDBUS_ITEM_NEGOTIATE)
			continue;
		n = (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(u64);
		for (i = 0; i < n; i++)
			if (!kdbus_item_allowed(it->data64[i], types, n_types))
				it->data64[i] = 0;
	}
	hdr[1] = valid_flags;
	if (copy_to_user(argp, cmd, hdr[0]))
		return -EFAULT;
	return 0;
}

/* _KDBUS_ATTACH_ANY means all; other unknown bits are refused */
int kdbus_attach_flags_check(u64 *flags)
{
	if (*flags == _KDBUS_ATTACH_ANY) {
		*flags = _KDBUS_ATTACH_ALL;
		return 0;
	}
	return (*flags & ~(u64)_KDBUS_ATTACH_ALL) ? -EINVAL : 0;
}

/* ---- items and metadata ------------------------------------------------- */

void *kdbus_item_put(void *p, u64 type, const void *data, size_t len)
{
	struct kdbus_item *it = p;

	it->size = KDBUS_ITEM_HEADER_SIZE + len;
	it->type = type;
	if (len)
		memcpy(kdbus_item_str(it), data, len);
	return (u8 *)p + KDBUS_ITEM_SIZE(len);
}

/* a NUL-terminated string filling the item exactly */
bool kdbus_item_is_string(const struct kdbus_item *it)
{
	size_t n = it->size - KDBUS_ITEM_HEADER_SIZE;

	return n >= 1 && kdbus_item_str(it)[n - 1] == '\0' && strlen(kdbus_item_str(it)) == n - 1;
}


static const u64 no_items[] = { KDBUS_ITEM_NEGOTIATE };

/* ---- command arguments ----------------------------------------------------- */

/**
 * kdbus_args_parse() - copy an ioctl's command and check what all commands check
 * @argp:	the ioctl argument
 * @min:	smallest valid size of the command
 * @items_off:	offset of the items in the command
 * @valid_flags: the flags the command supports
 * @types:	the item types the command supports (for a negotiation)
 * @n_types:	number of @types
 * @ret_items_size: where to store the bytes of items, or NULL for a command
 *		that takes no items: its size must then be exactly @items_off
 *
 * Copies the command (kdbus_cmd_copy()), answers KDBUS_FLAG_NEGOTIATE
 * (kdbus_negotiate()), refuses flags outside @valid_flags and, for a command
 * with items, checks their framing (kdbus_items_validate()), in that order.
 * The item types themselves are the command's to check.
 *
 * Return: the kmalloc()ed copy, NULL after a negotiation was answered, or an
 * ERR_PTR: those of kdbus_cmd_copy(), kdbus_negotiate() and
 * kdbus_items_validate(), -EINVAL for an unsupported flag or, without items,
 * a size other than @items_off.
 */
void *kdbus_args_parse(void __user *argp, size_t min, size_t items_off, u64 valid_flags,
		       const u64 *types, size_t n_types, size_t *ret_items_size)
{
	u64 *cmd = kdbus_cmd_copy(argp, min, KDBUS_CMD_MAX_SIZE);	/* size, flags */
	int r;

	if (IS_ERR(cmd))
		return cmd;
	if (cmd[1] & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, items_off, valid_flags, types, n_types);
		kfree(cmd);
		return r < 0 ? ERR_PTR(r) : NULL;
	}
	r = -EINVAL;
	if (cmd[1] & ~valid_flags)
		goto err;
	if (!ret_items_size) {
		if (cmd[0] != items_off)
			goto err;	/* no item is expected */
		return cmd;
	}
	r = kdbus_items_validate((void *)((u8 *)cmd + items_off), cmd[0] - items_off);
	if (r < 0)
		goto err;
	*ret_items_size = cmd[0] - items_off;
	return cmd;
err:
	kfree(cmd);
	return ERR_PTR(r);
}

/**
 * kdbus_cmd_simple() - kdbus_args_parse() for a command without items
 * @argp:	the ioctl argument
 * @min:	smallest valid size (the command's whole size)
 * @items_off:	offset of the (empty) items
 * @valid:	the flags the command supports
 *
 * Return: as kdbus_args_parse(); a negotiation offers no item type but
 * KDBUS_ITEM_NEGOTIATE.
 */
void *kdbus_cmd_simple(void __user *argp, size_t min, size_t items_off, u64 valid)
{
	return kdbus_args_parse(argp, min, items_off, valid, no_items, ARRAY_SIZE(no_items), NULL);
}
