/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_NAME_H
#define KSHARED_NAME_H

/*
 * name.h - the syntax of a kdbus well-known name
 */

#include "kshared/platform.h"

/* the longest well-known name, without its NUL (the D-Bus specification's) */
#define KDBUS_NAME_MAX_LEN		255

/**
 * kdbus_name_is_valid() - whether @name is a valid well-known name
 * @name:		the name, NUL-terminated
 * @allow_wildcard:	accept a last element "*" ("a.b.*"), as a policy
 *			entry may have (policy holders, custom endpoints);
 *			activators, NAME_ACQUIRE, SEND, CONN_INFO and
 *			matches pass false
 *
 * At least two elements separated by dots, none of them empty; each of
 * [A-Za-z0-9_-] (ASCII only) and not starting with a digit; at most
 * KDBUS_NAME_MAX_LEN characters.
 *
 * Return: true if @name is valid.
 */
bool kdbus_name_is_valid(const char *name, bool allow_wildcard);

#endif /* KSHARED_NAME_H */
