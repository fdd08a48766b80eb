/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strutil.h - the small string helpers every component needs: hex digits,
 * suffixes, path joining as libdbus does it, and growing strv arrays
 * (NULL-terminated, freed with strv_free() of util/macro.h).
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* the value of hex digit @c (either case), -1 if it is none */
static inline int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @len bytes as 2 * @len lower-case hex digits and a NUL into @out */
static inline void hex_encode(const uint8_t *in, size_t len, char *out) {
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = 0;
}

/*
 * hex_decode() - decode @len hex digits into a new NUL-terminated buffer,
 * as libdbus's _dbus_string_hex_decode(): an odd last digit is the high
 * half of one more byte ("3" decodes to "0").
 * Return: decoded length, -EINVAL for a non-hex digit, -ENOMEM.
 */
static inline ssize_t hex_decode(const char *s, size_t len, uint8_t **ret) {
	uint8_t *b;

	b = malloc(len / 2 + 2);
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		int v = hexval(s[i]);

		if (v < 0) {
			free(b);
			return -EINVAL;
		}
		if (i % 2)
			b[i / 2] |= (uint8_t) v;
		else
			b[i / 2] = (uint8_t) (v << 4);
	}
	b[(len + 1) / 2] = 0;
	*ret = b;
	return (ssize_t) ((len + 1) / 2);
}

static inline bool ends_with(const char *s, const char *suffix) {
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* _dbus_concat_dir_and_file(): @dir and @file joined with exactly one '/'
 * at the seam (none added when either is empty); NULL without memory */
static inline char *path_join(const char *dir, const char *file) {
	size_t a = strlen(dir), b = strlen(file);
	bool dir_slash = a > 0 && dir[a - 1] == '/', file_slash = b > 0 && file[0] == '/';
	char *r = malloc(a + b + 2);

	if (!r)
		return NULL;
	if (dir_slash && file_slash)
		a--;
	memcpy(r, dir, a);
	if (a > 0 && b > 0 && !dir_slash && !file_slash)
		r[a++] = '/';
	memcpy(r + a, file, b + 1);
	return r;
}

static inline size_t strv_length(char **l) {
	size_t n = 0;

	for (char **i = l; i && *i; i++)
		n++;
	return n;
}

/* append @s (taken over on success) to *@l; @n, if given, is its length
 * and is updated */
static inline int strv_push(char ***l, size_t *n, char *s) {
	size_t len = n ? *n : strv_length(*l);
	char **t = realloc(*l, (len + 2) * sizeof(char *));

	if (!t)
		return -ENOMEM;
	t[len] = s;
	t[len + 1] = NULL;
	*l = t;
	if (n)
		*n = len + 1;
	return 0;
}

/* append a copy of @s */
static inline int strv_push_dup(char ***l, size_t *n, const char *s) {
	char *d = strdup(s);

	if (!d)
		return -ENOMEM;
	if (strv_push(l, n, d) < 0) {
		free(d);
		return -ENOMEM;
	}
	return 0;
}
