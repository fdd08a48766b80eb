// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * item.c - command copies, their items checked (kshared/item.h), flag
 * negotiation
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
 * Writes @valid_flags into flags and zeroes every unsupported type in the command's KDBUS_ITEM_NEGOTIATE items (already parsed:
 * kdbus_args_parse()), then copies the command back.
 *
 * Return: 0 or -EFAULT.
 */
int kdbus_negotiate(void __user *argp, void *cmd, size_t items_off, u64 valid_flags,
		    const u64 *types, size_t n_types)
{
	u64 *hdr = cmd;		/* size, flags */
	struct kdbus_item *it;

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

static const u64 no_items[] = { KDBUS_ITEM_NEGOTIATE };

/* ---- command arguments ----------------------------------------------------- */

/* the most item types a command takes (HELLO: 9) */
#define KDBUS_ARGS_MAX	16
/* the most items of a command: a bound on the work done under the locks
 * for one call (policy entries: each name against the others) */
#define KDBUS_CMD_MAX_ITEMS	512

/**
 * kdbus_args_parse() - copy an ioctl's command and check what all commands check
 * @argp:	the ioctl argument
 * @min:	smallest valid size of the command
 * @items_off:	offset of the items in the command
 * @valid_flags: the flags the command supports
 * @types:	the item types the command takes (at most KDBUS_ARGS_MAX)
 * @n_types:	number of @types
 * @ret_items_size: where to store the bytes of items, or NULL for a command
 *		that takes no items but KDBUS_ITEM_NEGOTIATE (and skips it)
 *
 * Copies the command (kdbus_cmd_copy()), refuses flags outside @valid_flags
 * (KDBUS_FLAG_NEGOTIATE aside), checks the items (kdbus_items_parse():
 * framing, a type of @types, the payload rules of the type; at most
 * KDBUS_CMD_MAX_ITEMS of them) and answers
 * KDBUS_FLAG_NEGOTIATE (kdbus_negotiate()), in that order.  Without the
 * flag a NEGOTIATE item is left to the command, which skips it.  Whether a
 * type may come more than once, and what its items mean, are the
 * command's to check.
 *
 * Return: the kmalloc()ed copy, NULL after a negotiation was answered, or an
 * ERR_PTR: those of kdbus_cmd_copy(), kdbus_items_parse() and
 * kdbus_negotiate(), -EINVAL for an unsupported flag, -E2BIG for more
 * than KDBUS_CMD_MAX_ITEMS items.
 */
void *kdbus_args_parse(void __user *argp, size_t min, size_t items_off, u64 valid_flags,
		       const u64 *types, size_t n_types, size_t *ret_items_size)
{
	u64 *cmd = kdbus_cmd_copy(argp, min, KDBUS_CMD_MAX_SIZE);	/* size, flags */
	struct kdbus_arg argv[KDBUS_ARGS_MAX];
	size_t i;
	int r;

	if (IS_ERR(cmd))
		return cmd;
	r = -EINVAL;
	if (cmd[1] & ~(valid_flags | KDBUS_FLAG_NEGOTIATE))
		goto err;
	if (WARN_ON(n_types > KDBUS_ARGS_MAX))
		goto err;
	for (i = 0; i < n_types; i++)
		argv[i] = (struct kdbus_arg){ .type = types[i], .multiple = true };
	r = kdbus_items_parse((void *)((u8 *)cmd + items_off), cmd[0] - items_off, argv, n_types);
	if (r < 0)
		goto err;
	if (r > KDBUS_CMD_MAX_ITEMS) {
		r = -E2BIG;
		goto err;
	}
	/* the flag makes the call a negotiation; a NEGOTIATE item without it
	 * is not answered, and the command goes on */
	if (cmd[1] & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, items_off, valid_flags, types, n_types);
		kfree(cmd);
		return r < 0 ? ERR_PTR(r) : NULL;
	}
	if (ret_items_size)
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
