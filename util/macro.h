/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * macro.h - small helpers every component uses: cleanup attributes,
 * container_of, alignment, overflow-safe arithmetic, assert_return.
 * Nothing here knows D-Bus or kdbus.
 */

#include <assert.h>
#include <stdbool.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((__cleanup__(f)))
#define _unused_ __attribute__((__unused__))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
#define _printf_(a, b) __attribute__((__format__(printf, a, b)))
#define _noreturn_ __attribute__((__noreturn__))
#define _noinline_ __attribute__((__noinline__))
#define _packed_ __attribute__((__packed__))
#define _warn_unused_result_ __attribute__((__warn_unused_result__))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define ALIGN_TO(l, a) (((l) + (a) - 1) & ~((__typeof__(l))(a) - 1))
#define ALIGN8(l) ALIGN_TO((l), 8)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* DEFINE_CLEANUP(Thing *, thing_free) generates thing_freep() */
#define DEFINE_CLEANUP(type, func)                         \
	static inline void func##p(type *p) {              \
		if (*p)                                    \
			func(*p);                          \
	}                                                  \
	struct __useless_struct_to_allow_trailing_semicolon__

static inline void freep(void *p) {
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int close_nointr(int fd) {
	int r = close(fd);
	return (r < 0 && errno != EINTR) ? -errno : 0;
}

static inline int safe_close(int fd) {
	if (fd >= 0) {
		int saved = errno;
		close_nointr(fd);
		errno = saved;
	}
	return -1;
}

static inline void closep(int *fd) {
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* strv: NULL-terminated arrays of strings */
static inline char **strv_free(char **l) {
	if (l) {
		for (char **i = l; *i; i++)
			free(*i);
		free(l);
	}
	return NULL;
}
static inline void strv_freep(char ***l) {
	strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* take ownership: x = TAKE_PTR(p) returns p and sets it to NULL */
#define TAKE_PTR(p) ({ __typeof__(p) _p_ = (p); (p) = NULL; _p_; })
#define TAKE_FD(fd) ({ int _fd_ = (fd); (fd) = -1; _fd_; })

/* overflow-safe arithmetic: return true on overflow */
#define ADD_OVERFLOW(a, b, res) __builtin_add_overflow((a), (b), (res))
#define MUL_OVERFLOW(a, b, res) __builtin_mul_overflow((a), (b), (res))

/*
 * assert_return() - validate arguments at a module entry point: return
 * @err (a negative errno) instead of aborting.  Internal invariants use
 * plain assert().
 */
#define assert_return(expr, err)                 \
	do {                                     \
		if (_unlikely_(!(expr)))         \
			return (err);            \
	} while (0)

#define RET_NERRNO(expr) ({ int _r_ = (expr); _r_ < 0 ? -errno : _r_; })

static inline bool streq_ptr(const char *a, const char *b) {
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}
#define streq(a, b) (strcmp((a), (b)) == 0)

static inline const char *strempty(const char *s) {
	return s ? s : "";
}
