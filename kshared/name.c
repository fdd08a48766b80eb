// SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later
/*
 * name.c - the syntax of a kdbus well-known name (see name.h)
 *
 * Compiled into the userspace core (kdbus/libkdbus.a) and into kdbus.ko
 * (kmod/kshared-name.c).  It runs for every message sent to a name.
 */

#include "kshared/name.h"

bool kdbus_name_is_valid(const char *name, bool allow_wildcard)
{
	bool elem_start = true, has_dot = false;
	const char *p;

	for (p = name; *p; p++) {
		char c = *p;

		if (unlikely(p - name >= KDBUS_NAME_MAX_LEN))
			return false;
		if (c == '.') {
			if (elem_start)
				return false;
			has_dot = true;
			elem_start = true;
			continue;
		}
		if (!kshared_isalpha(c) && c != '_' && c != '-' &&
		    !(!elem_start && kshared_isdigit(c)) &&
		    !(allow_wildcard && elem_start && c == '*' && p[1] == '\0'))
			return false;
		elem_start = false;
	}
	return has_dot && !elem_start;
}
