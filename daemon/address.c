/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * address.c - D-Bus address parsing and escaping, following libdbus's
 * dbus-address.c (same accepted syntax, same error texts).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "daemon/address.h"
#include "util/macro.h"
#include "util/strutil.h"

/* bytes that may appear unescaped in a value */
static bool optionally_escaped(unsigned char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '/' || c == '\\' || c == '*' || c == '.';
}

_printf_(2, 3)
static int set_error(char **ret_error, const char *fmt, ...) {
	va_list ap;

	if (!ret_error)
		return -EINVAL;
	va_start(ap, fmt);
	if (vasprintf(ret_error, fmt, ap) < 0)
		*ret_error = NULL;
	va_end(ap);
	return -EINVAL;
}

static int unescape_range(const char *s, size_t len, char **ret, char **ret_error) {
	_cleanup_free_ char *out = malloc(len + 1);
	size_t o = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (optionally_escaped(c))
			out[o++] = (char)c;
		else if (c == '%') {
			int hi, lo;

			if (len - i < 3)
				return set_error(ret_error, "In D-Bus address, percent character was not followed by two hex digits");
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return set_error(ret_error, "In D-Bus address, percent character was followed by characters other than hex digits");
			if (hi == 0 && lo == 0)
				return set_error(ret_error, "In D-Bus address, value contains an escaped NUL byte");
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			return set_error(ret_error, "In D-Bus address, character '%c' should have been escaped", c);
	}
	out[o] = 0;
	*ret = TAKE_PTR(out);
	return 0;
}

int address_unescape(const char *value, char **ret, char **ret_error) {
	assert_return(value, -EINVAL);
	assert_return(ret, -EINVAL);
	return unescape_range(value, strlen(value), ret, ret_error);
}

int address_escape(const char *value, char **ret) {
	static const char digits[] = "0123456789abcdef";
	size_t len, o = 0;
	char *out;

	assert_return(value, -EINVAL);
	assert_return(ret, -EINVAL);

	len = strlen(value);
	out = malloc(len * 3 + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];

		if (optionally_escaped(c))
			out[o++] = (char)c;
		else {
			out[o++] = '%';
			out[o++] = digits[c >> 4];
			out[o++] = digits[c & 15];
		}
	}
	out[o] = 0;
	*ret = out;
	return 0;
}

AddressEntry *address_entry_free(AddressEntry *e) {
	if (!e)
		return NULL;
	free(e->transport);
	strv_free(e->keys);
	strv_free(e->values);
	free(e);
	return NULL;
}

AddressEntry **address_entries_free(AddressEntry **l) {
	if (!l)
		return NULL;
	for (AddressEntry **i = l; *i; i++)
		address_entry_free(*i);
	free(l);
	return NULL;
}

const char *address_entry_get(const AddressEntry *e, const char *key) {
	if (!e || !key)
		return NULL;
	for (size_t i = 0; i < e->n_pairs; i++)
		if (streq(e->keys[i], key))
			return e->values[i];
	return NULL;
}

static int entry_add_pair(AddressEntry *e, char *key, char *value) {
	char **k, **v;

	k = realloc(e->keys, (e->n_pairs + 2) * sizeof(char *));
	if (!k)
		return -ENOMEM;
	e->keys = k;
	v = realloc(e->values, (e->n_pairs + 2) * sizeof(char *));
	if (!v)
		return -ENOMEM;
	e->values = v;
	e->keys[e->n_pairs] = key;
	e->values[e->n_pairs] = value;
	e->n_pairs++;
	e->keys[e->n_pairs] = NULL;
	e->values[e->n_pairs] = NULL;
	return 0;
}

/* parse "transport:k=v,k=v" in [s, s+len) */
static int parse_entry(const char *s, size_t len, AddressEntry **ret, char **ret_error) {
	_cleanup_(address_entry_freep) AddressEntry *e = NULL;
	const char *colon, *p, *end = s + len;
	int r;

	colon = memchr(s, ':', len);
	if (!colon)
		return set_error(ret_error, "Address does not contain a colon");

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->transport = strndup(s, (size_t)(colon - s));
	e->keys = calloc(1, sizeof(char *));
	e->values = calloc(1, sizeof(char *));
	if (!e->transport || !e->keys || !e->values)
		return -ENOMEM;

	p = colon + 1;
	while (p < end) {
		_cleanup_free_ char *key = NULL, *value = NULL;
		const char *comma, *eq;

		comma = memchr(p, ',', (size_t)(end - p));
		if (!comma)
			comma = end;
		eq = memchr(p, '=', (size_t)(comma - p));
		if (!eq || eq == p || eq + 1 == comma)
			return set_error(ret_error, "'=' character not found or has no value following it");

		key = strndup(p, (size_t)(eq - p));
		if (!key)
			return -ENOMEM;
		r = unescape_range(eq + 1, (size_t)(comma - eq - 1), &value, ret_error);
		if (r < 0)
			return r;
		r = entry_add_pair(e, key, value);
		if (r < 0)
			return r;
		key = value = NULL;
		p = comma + 1;
	}

	*ret = TAKE_PTR(e);
	return 0;
}

int address_parse(const char *address, AddressEntry ***ret, size_t *ret_n, char **ret_error) {
	_cleanup_(address_entries_freep) AddressEntry **l = NULL;
	const char *p, *end;
	size_t n = 0;
	int r;

	assert_return(address, -EINVAL);
	assert_return(ret, -EINVAL);

	if (!*address)
		return set_error(ret_error, "Empty address '%s'", address);

	l = calloc(1, sizeof(AddressEntry *));
	if (!l)
		return -ENOMEM;

	p = address;
	end = address + strlen(address);
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		AddressEntry **nl, *e = NULL;

		if (!semi)
			semi = end;
		r = parse_entry(p, (size_t)(semi - p), &e, ret_error);
		if (r < 0)
			return r;
		nl = realloc(l, (n + 2) * sizeof(AddressEntry *));
		if (!nl) {
			address_entry_free(e);
			return -ENOMEM;
		}
		l = nl;
		l[n++] = e;
		l[n] = NULL;
		p = semi + 1;
	}

	*ret = TAKE_PTR(l);
	if (ret_n)
		*ret_n = n;
	return 0;
}

int address_guid_generate(char ret[static ADDRESS_GUID_HEX_LEN + 1]) {
	static const char digits[] = "0123456789abcdef";
	uint8_t b[16];
	uint32_t now;
	size_t got = 0;

	assert_return(ret, -EINVAL);

	while (got < 12) {
		ssize_t k = getrandom(b + got, 12 - got, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)k;
	}
	now = (uint32_t)time(NULL);
	b[12] = (uint8_t)(now >> 24);
	b[13] = (uint8_t)(now >> 16);
	b[14] = (uint8_t)(now >> 8);
	b[15] = (uint8_t)now;
	for (size_t i = 0; i < 16; i++) {
		ret[2 * i] = digits[b[i] >> 4];
		ret[2 * i + 1] = digits[b[i] & 15];
	}
	ret[ADDRESS_GUID_HEX_LEN] = 0;
	return 0;
}

bool address_guid_valid(const char *s) {
	if (!s || strlen(s) != ADDRESS_GUID_HEX_LEN)
		return false;
	for (size_t i = 0; i < ADDRESS_GUID_HEX_LEN; i++)
		if (hexval(s[i]) < 0)
			return false;
	return true;
}

int address_append_guid(const char *address, const char *guid_hex, char **ret) {
	size_t len, n_entries = 1, o = 0;
	char *out;

	assert_return(address, -EINVAL);
	assert_return(ret, -EINVAL);
	assert_return(address_guid_valid(guid_hex), -EINVAL);

	len = strlen(address);
	for (size_t i = 0; i < len; i++)
		if (address[i] == ';')
			n_entries++;
	out = malloc(len + n_entries * (strlen(",guid=") + ADDRESS_GUID_HEX_LEN) + 1);
	if (!out)
		return -ENOMEM;

	for (const char *p = address;;) {
		const char *semi = strchr(p, ';');
		size_t l = semi ? (size_t)(semi - p) : strlen(p);

		if (l > 0) {
			memcpy(out + o, p, l);
			o += l;
			o += (size_t)sprintf(out + o, ",guid=%s", guid_hex);
		}
		if (!semi)
			break;
		out[o++] = ';';
		p = semi + 1;
	}
	/* no trailing ';' for an address that ended with one */
	if (o > 0 && out[o - 1] == ';')
		o--;
	out[o] = 0;
	*ret = out;
	return 0;
}
