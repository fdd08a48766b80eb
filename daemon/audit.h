/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * audit.h - the audit log, as dbus-daemon's bus/audit.c writes to it: a
 * socket opened once at start-up, and only when the bus may write to the
 * audit log (CAP_AUDIT_WRITE in its effective set) and the kernel has
 * audit.  The security modules (selinux.c, apparmor.c) write their
 * denials there, and to syslog when it is not open.
 */

#include <stdbool.h>

/* open it if the bus may (again: a no-op); before privileges are dropped */
void bus_audit_open(void);
void bus_audit_close(void);

/* the open socket, or -1 */
int bus_audit_fd(void);

/* @text as a user-space AVC record of @type (AUDIT_USER_AVC, ...): false
 * when the audit log is not open */
bool bus_audit_log_avc(int type, const char *text);
