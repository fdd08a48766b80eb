/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_MATCH_H
#define KSHARED_MATCH_H

/*
 * match.h - whether a kernel notification passes one rule of a match
 *
 * A MATCH_ADD's ID_ADD, ID_REMOVE, NAME_ADD, NAME_CHANGE and NAME_REMOVE
 * items are rules for the notifications of the same type: an id of
 * KDBUS_MATCH_ID_ANY, and a name that is absent, match any.  A match
 * passes a notification when each of its rules does (the caller walks
 * them; a match of user-message rules never sees notifications).
 */

#include "kdbus/kdbus.h"
#include "kshared/platform.h"

/**
 * kdbus_match_notification() - whether notification @n passes one rule
 * @type:	the rule's item type (KDBUS_ITEM_ID_ADD ... NAME_REMOVE)
 * @old_id:	ID_REMOVE: the id that goes; NAME_*: the previous owner
 *		(KDBUS_MATCH_ID_ANY: any)
 * @new_id:	ID_ADD: the id that comes; NAME_*: the new owner
 *		(KDBUS_MATCH_ID_ANY: any)
 * @name:	NAME_*: the name, or NULL for any
 * @n:		the notification's item, as the bus made it (its name, for
 *		NAME_*, NUL-terminated)
 *
 * Return: true if @n is of the rule's type and matches it.
 */
static inline bool kdbus_match_notification(uint64_t type, uint64_t old_id, uint64_t new_id, const char *name,
					    const struct kdbus_item *n)
{
	if (n->type != type)
		return false;
	switch (type) {
	case KDBUS_ITEM_ID_ADD:
		return new_id == KDBUS_MATCH_ID_ANY || new_id == n->id_change.id;
	case KDBUS_ITEM_ID_REMOVE:
		return old_id == KDBUS_MATCH_ID_ANY || old_id == n->id_change.id;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_CHANGE:
	case KDBUS_ITEM_NAME_REMOVE:
		return (old_id == KDBUS_MATCH_ID_ANY || old_id == n->name_change.old_id.id) &&
		       (new_id == KDBUS_MATCH_ID_ANY || new_id == n->name_change.new_id.id) &&
		       (!name || strcmp(name, n->name_change.name) == 0);
	default:
		return false;
	}
}

#endif /* KSHARED_MATCH_H */
