/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-apparmor-reply.c - daemon/apparmor-reply.c: the kernel's answers
 * to AppArmor queries, decided as libapparmor's aa_query_label() decides
 * them (allowed: every permission asked allowed and none denied; audited:
 * a denial unless quiet, an allowed permission that an audit rule names),
 * and answers that are not the kernel's format refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/apparmor.h>

#include "daemon/apparmor-reply.h"
#include "tests/unit/test.h"

static int decide(uint32_t allow, uint32_t deny, uint32_t audit, uint32_t quiet, uint32_t mask, int *ret_allow,
		  int *ret_audit) {
	char reply[APPARMOR_REPLY_LEN + 1];

	snprintf(reply, sizeof(reply), "allow 0x%08x\ndeny 0x%08x\naudit 0x%08x\nquiet 0x%08x\n", allow, deny, audit,
		 quiet);
	return apparmor_reply_decide(reply, strlen(reply), mask, ret_allow, ret_audit);
}

TEST(decisions) {
	static const struct {
		uint32_t allow, deny, audit, quiet, mask;
		int want_allow, want_audit;
	} cases[] = {
		/* `dbus send,`: allowed, not audited */
		{ AA_DBUS_SEND | AA_DBUS_RECEIVE, 0, 0, 0, AA_DBUS_SEND, 1, 0 },
		/* no rule: denied, audited */
		{ 0, 0, 0, 0, AA_DBUS_RECEIVE, 0, 1 },
		/* `deny dbus bind,`: denied, quiet */
		{ 0, AA_DBUS_BIND, 0, AA_DBUS_BIND, AA_DBUS_BIND, 0, 0 },
		/* `audit dbus send,`: allowed, audited */
		{ AA_DBUS_SEND, 0, AA_DBUS_SEND, 0, AA_DBUS_SEND, 1, 1 },
		/* allowed and denied: the denial wins */
		{ AA_DBUS_EAVESDROP, AA_DBUS_EAVESDROP, 0, 0, AA_DBUS_EAVESDROP, 0, 1 },
		/* a permission not asked about does not count */
		{ AA_DBUS_SEND, AA_DBUS_RECEIVE, 0, 0, AA_DBUS_SEND, 1, 0 },
		/* two asked, one allowed */
		{ AA_DBUS_SEND, 0, 0, 0, AA_DBUS_SEND | AA_DBUS_RECEIVE, 0, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int allow = -1, audit = -1;
		check(decide(cases[i].allow, cases[i].deny, cases[i].audit, cases[i].quiet, cases[i].mask, &allow,
			     &audit) == 0);
		check(allow == cases[i].want_allow);
		check(audit == cases[i].want_audit);
	}
}

TEST(malformed) {
	static const char *const bad[] = {
		"",
		"allow 0x66\ndeny 0x0\naudit 0x0\nquiet 0x0\n",
		"allow 0x00000066\ndeny 0x00000000\naudit 0x00000000\nquiet 0x0000000g\n",
		"allow 0x00000066\ndeny 0x00000000\naudit 0x00000000\nquiet 0x00000000 ",
		"allow 0x00000066\ndeny 0x00000000\nquiet 0x00000000\naudit 0x00000000\n",
		"allow 0x00000066 deny 0x00000000\naudit 0x00000000\nquiet 0x00000000\n",
		"allow 0x00000066\ndeny 0x00000000\naudit 0x00000000\nquiet 0x00000000\n\n",
	};
	int allow, audit;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check(apparmor_reply_decide(bad[i], strlen(bad[i]), AA_DBUS_SEND, &allow, &audit) == -EPROTONOSUPPORT);
	/* upper-case digits are hex digits too */
	const char *upper = "allow 0x000000FF\ndeny 0x00000000\naudit 0x00000000\nquiet 0x00000000\n";
	check(apparmor_reply_decide(upper, strlen(upper), AA_DBUS_EAVESDROP, &allow, &audit) == 0 && allow == 1);
}

int main(void) {
	RUN(decisions);
	RUN(malformed);
	return test_done();
}
