/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-apparmor-reply.c - libFuzzer target for daemon/apparmor-reply.c.
 *
 * The first four bytes are the permissions asked about, the rest is the
 * kernel's answer.  Whatever the input, the reader answers 0 or
 * -EPROTONOSUPPORT; when it accepts, the answer is exactly the kernel's
 * format, and its decision is the one computed from the four values read
 * back another way (strtoul()).
 */

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apparmor-reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	uint32_t mask, v[4];
	char buf[APPARMOR_REPLY_LEN + 1], printed[APPARMOR_REPLY_LEN + 1];
	int allow = -1, audit = -1, r;

	if (size < 4)
		return 0;
	memcpy(&mask, data, 4);
	data += 4;
	size -= 4;
	r = apparmor_reply_decide((const char *) data, size, mask, &allow, &audit);
	assert(r == 0 || r == -EPROTONOSUPPORT);
	if (r < 0)
		return 0;
	assert(size == APPARMOR_REPLY_LEN && (allow == 0 || allow == 1) && (audit == 0 || audit == 1));
	memcpy(buf, data, size);
	buf[size] = 0;
	/* the same four values, read by strtoul() from their fixed places */
	static const size_t at[4] = { 8, 17 + 7, 33 + 8, 50 + 8 };
	for (size_t i = 0; i < 4; i++) {
		char hex[9];
		memcpy(hex, buf + at[i], 8);
		hex[8] = 0;
		v[i] = (uint32_t) strtoul(hex, NULL, 16);
	}
	/* the format, printed again (hex digits in either case) */
	snprintf(printed, sizeof(printed), "allow 0x%08x\ndeny 0x%08x\naudit 0x%08x\nquiet 0x%08x\n", v[0], v[1], v[2],
		 v[3]);
	assert(strcasecmp(printed, buf) == 0);
	int want_allow = !(mask & ~(v[0] & ~v[1]));
	int want_audit = !(mask & ~((want_allow ? v[2] : UINT32_MAX) & ~v[3]));
	assert(allow == want_allow && audit == want_audit);
	return 0;
}
