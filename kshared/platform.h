/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-or-later */
#ifndef KSHARED_PLATFORM_H
#define KSHARED_PLATFORM_H

/*
 * platform.h - what the shared kdbus semantics may use, in the kernel and
 * in userspace alike
 *
 * Fixed-width types (uint8_t ... uint64_t, size_t, bool), memchr(),
 * memcmp(), memcpy(), memset(), strlen(), the errno constants and
 * likely()/unlikely().
 * Nothing else: code under kshared/ allocates nothing, takes no lock,
 * sleeps never and logs never; it decides, and its caller acts.
 */

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif
#endif

/*
 * ASCII classes without a locale or the kernel's Latin-1 table: the
 * kernel's isalpha() accepts 0xc0-0xff, userspace's follows the locale,
 * and a kdbus name is ASCII.
 */
static inline bool kshared_isalpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool kshared_isdigit(char c)
{
	return c >= '0' && c <= '9';
}

#endif /* KSHARED_PLATFORM_H */
