/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * apparmor-reply.h - the kernel's answer to an AppArmor label query
 * (<apparmorfs>/.access), read as libapparmor's aa_query_label() reads it:
 * "allow 0x%08x\ndeny 0x%08x\naudit 0x%08x\nquiet 0x%08x\n", the
 * permissions the policy allows, denies, audits and keeps quiet about.
 */

#include <stddef.h>
#include <stdint.h>

#define APPARMOR_REPLY_LEN 67

/**
 * apparmor_reply_decide() - what @reply says about the permissions @mask
 * @ret_allow:	out: all of @mask is allowed (and not denied)
 * @ret_audit:	out: the decision is to be audited (every denial but the
 *		quiet ones; what audit rules name)
 *
 * Return: 0, or -EPROTONOSUPPORT when @reply (@len bytes) is not such an
 * answer.
 */
int apparmor_reply_decide(const char *reply, size_t len, uint32_t mask, int *ret_allow, int *ret_audit);
