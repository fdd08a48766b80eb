/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * format.h - printf into a new malloc()ed string.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "util/macro.h"

/* vasprintf() that returns the string, NULL on failure */
_printf_(1, 0) static inline char *format_v(const char *fmt, va_list ap) {
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

/* asprintf() that returns the string, NULL on failure */
_printf_(1, 2) static inline char *format(const char *fmt, ...) {
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = format_v(fmt, ap);
	va_end(ap);
	return s;
}

/* the decimal digits of @v written at @p, without a NUL; returns the end
 * (at most 20 bytes): for strings built on paths where printf costs */
static inline char *format_decimal(char *p, uint64_t v) {
	char t[20];
	size_t n = 0;

	do
		t[n++] = (char) ('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}
