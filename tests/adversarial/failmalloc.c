/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * failmalloc.c - LD_PRELOAD shim for tests/adversarial: while the file
 * named by $FAILMALLOC_FILE exists (checked every 16 calls), every
 * $FAILMALLOC_EVERY-th malloc/calloc/realloc fails with ENOMEM.  The
 * number of failures so far is written to $FAILMALLOC_LOG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static unsigned long calls, failures, every;
static int on, inside;

static int should_fail(void) {
	if (inside)
		return 0;
	inside = 1;
	if (every == 0) {
		const char *e = getenv("FAILMALLOC_EVERY");
		every = e ? strtoul(e, NULL, 10) : 0;
		if (every == 0)
			every = (unsigned long) -1;
	}
	if ((calls++ & 15) == 0) {
		const char *f = getenv("FAILMALLOC_FILE");
		on = f && access(f, F_OK) == 0;
	}
	int r = on && every != (unsigned long) -1 && calls % every == 0;
	if (r) {
		const char *l = getenv("FAILMALLOC_LOG");
		failures++;
		if (l) {
			int fd = open(l, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0) {
				char b[32];
				int n = snprintf(b, sizeof(b), "%lu\n", failures);
				(void) !write(fd, b, n);
				close(fd);
			}
		}
	}
	inside = 0;
	return r;
}

void *malloc(size_t n) {
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b) {
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n) {
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}
