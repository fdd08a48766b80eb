/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * audit.c - the audit log's socket (see audit.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <libaudit.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/audit.h"

static int audit_fd = -1;

/* CAP_AUDIT_WRITE in the effective set: dbus-daemon's bus_audit_init()
 * opens the audit socket only then */
static bool may_write_audit(void) {
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2] = {};

	if (syscall(SYS_capget, &hdr, caps) < 0)
		return false;
	return caps[CAP_TO_INDEX(CAP_AUDIT_WRITE)].effective & CAP_TO_MASK(CAP_AUDIT_WRITE);
}

void bus_audit_open(void) {
	if (audit_fd >= 0 || !may_write_audit())
		return;
	audit_fd = audit_open();
	/* no audit in this kernel: as dbus-daemon, syslog then */
	if (audit_fd < 0)
		audit_fd = -1;
}

void bus_audit_close(void) {
	if (audit_fd >= 0)
		audit_close(audit_fd);
	audit_fd = -1;
}

int bus_audit_fd(void) {
	return audit_fd;
}

bool bus_audit_log_avc(int type, const char *text) {
	if (audit_fd < 0)
		return false;
	/* (dbus-daemon's records name the bus's real uid) */
	(void) audit_log_user_avc_message(audit_fd, type, text, NULL, NULL, NULL, getuid());
	return true;
}
