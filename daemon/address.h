/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * address.h - D-Bus server addresses as dbus-daemon reads them in <listen>
 * and --address: "transport:key=value,key=value;transport:...", values
 * %-escaped.  Parsing, escaping and GUIDs; opening sockets is
 * listen-socket.h.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

typedef struct AddressEntry AddressEntry;

/* D-Bus GUIDs: 16 bytes, 32 hex characters */
#define ADDRESS_GUID_HEX_LEN 32

/**
 * struct AddressEntry - one semicolon-separated entry of an address
 * @transport:	the part before ':' ("unix", "tcp", ...); may be empty
 * @keys:	NULL-terminated keys, in order, as written (keys are not escaped)
 * @values:	NULL-terminated values, unescaped; @values[i] belongs to @keys[i]
 * @n_pairs:	number of key/value pairs
 *
 * A key may appear more than once; address_entry_get() returns the first,
 * as libdbus does.
 */
struct AddressEntry {
	char *transport;
	char **keys;
	char **values;
	size_t n_pairs;
};

/**
 * address_parse() - split an address into its entries
 * @address:	the address
 * @ret:	NULL-terminated array of entries; free with address_entries_free()
 * @ret_n:	number of entries (may be NULL)
 * @ret_error:	on -EINVAL, a message worded as dbus-daemon words it
 *		("Address does not contain a colon", ...); free() it.  May be NULL.
 *
 * Empty entries after a trailing ';' and empty pairs after a trailing ','
 * are ignored, as in libdbus.  A value that unescapes to a NUL byte is
 * refused.
 *
 * Return: 0, -EINVAL for a malformed address, -ENOMEM.
 */
int address_parse(const char *address, AddressEntry ***ret, size_t *ret_n, char **ret_error);

/**
 * address_entry_free() - free one entry
 * @e:	the entry, or NULL
 *
 * Return: NULL.
 */
AddressEntry *address_entry_free(AddressEntry *e);

/**
 * address_entries_free() - free a NULL-terminated array of entries
 * @l:	the array, or NULL
 *
 * Return: NULL.
 */
AddressEntry **address_entries_free(AddressEntry **l);

/**
 * address_entry_get() - the value of a key
 * @e:		the entry
 * @key:	the key
 *
 * Return: the first value given for @key (owned by @e), or NULL.
 */
const char *address_entry_get(const AddressEntry *e, const char *key);

/**
 * address_escape() - escape a value for use in an address
 * @value:	the raw value
 * @ret:	the escaped value: bytes outside [-0-9A-Za-z_/.\*] become %xx
 *
 * Return: 0 or -ENOMEM.
 */
int address_escape(const char *value, char **ret);

/**
 * address_unescape() - unescape one value
 * @value:	the escaped value
 * @ret:	the raw value
 * @ret_error:	on -EINVAL, the dbus-daemon wording; may be NULL
 *
 * Return: 0, -EINVAL for a bad %-escape, a byte that should have been
 * escaped or an escaped NUL, -ENOMEM.
 */
int address_unescape(const char *value, char **ret, char **ret_error);

/**
 * address_guid_generate() - a new server GUID, as libdbus makes them
 * @ret:	33 bytes: 32 lower-case hex characters and a NUL.  96 random
 *		bits followed by the 32-bit big-endian time in seconds.
 *
 * Return: 0 or a negative errno from getrandom().
 */
int address_guid_generate(char ret[static ADDRESS_GUID_HEX_LEN + 1]);

/**
 * address_guid_valid() - whether a string is a GUID
 * @s:	the string
 *
 * Return: true for exactly 32 hex characters.
 */
bool address_guid_valid(const char *s);

/**
 * address_append_guid() - the address a client connects to
 * @address:	connectable address, one or more entries
 * @guid_hex:	the server GUID
 * @ret:	@address with ",guid=@guid_hex" appended to every entry
 *
 * Return: 0, -EINVAL for a bad GUID, -ENOMEM.
 */
int address_append_guid(const char *address, const char *guid_hex, char **ret);

DEFINE_CLEANUP(AddressEntry *, address_entry_free);
DEFINE_CLEANUP(AddressEntry **, address_entries_free);
