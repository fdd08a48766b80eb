/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apparmor-reply.c - the kernel's answer to an AppArmor query (see
 * apparmor-reply.h), without sscanf(): with mediation every delivery asks
 * twice.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "daemon/apparmor-reply.h"

/* exactly eight hex digits (the kernel prints %08x) */
static bool parse_hex8(const char *p, uint32_t *ret) {
	uint32_t v = 0;

	for (size_t i = 0; i < 8; i++) {
		char c = p[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		v = v << 4 | d;
	}
	*ret = v;
	return true;
}

int apparmor_reply_decide(const char *reply, size_t len, uint32_t mask, int *ret_allow, int *ret_audit) {
	static const char *const keys[4] = { "allow 0x", "deny 0x", "audit 0x", "quiet 0x" };
	const char *p = reply;
	uint32_t v[4];	/* allow, deny, audit, quiet */

	if (len != APPARMOR_REPLY_LEN)
		return -EPROTONOSUPPORT;
	for (size_t i = 0; i < 4; i++) {
		size_t k = strlen(keys[i]);
		if ((size_t) (reply + len - p) < k + 9 || memcmp(p, keys[i], k) != 0 || !parse_hex8(p + k, &v[i]) ||
		    p[k + 8] != '\n')
			return -EPROTONOSUPPORT;
		p += k + 9;
	}
	if (p != reply + len)
		return -EPROTONOSUPPORT;
	/* libapparmor's arithmetic: a denial is audited unless quiet */
	*ret_allow = !(mask & ~(v[0] & ~v[1]));
	if (!*ret_allow)
		v[2] = UINT32_MAX;
	*ret_audit = !(mask & ~(v[2] & ~v[3]));
	return 0;
}
