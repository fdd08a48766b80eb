/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * strbuf.h - a string that grows as it is appended to, always
 * NUL-terminated.  Once an allocation fails it stays failed (@oom) and
 * takes nothing more, so that a sequence of appends is checked once.
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

typedef struct StrBuf {
	char *s;	/* NULL until something is added */
	size_t len, size;
	bool oom;
} StrBuf;

/* room for @n more bytes (and the NUL) */
static inline bool strbuf_reserve(StrBuf *b, size_t n) {
	if (b->oom)
		return false;
	if (b->len + n + 1 > b->size) {
		size_t size = MAX(b->size * 2, b->len + n + 64);
		char *s = realloc(b->s, size);

		if (!s) {
			b->oom = true;
			return false;
		}
		b->s = s;
		b->size = size;
	}
	return true;
}

static inline void strbuf_add(StrBuf *b, const void *p, size_t n) {
	if (!strbuf_reserve(b, n))
		return;
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
}

static inline void strbuf_puts(StrBuf *b, const char *s) {
	strbuf_add(b, s, strlen(s));
}

static inline void strbuf_byte(StrBuf *b, char c) {
	strbuf_add(b, &c, 1);
}

/* back to its first @len bytes */
static inline void strbuf_truncate(StrBuf *b, size_t len) {
	if (b->s && len < b->len) {
		b->len = len;
		b->s[len] = 0;
	}
}

static inline void strbuf_done(StrBuf *b) {
	free(b->s);
	*b = (StrBuf) {};
}
