/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon/log.h"

static unsigned log_targets = LOG_TARGET_STDERR;
int log_max_level = LOG_INFO;
/* as dbus-daemon's _dbus_init_system_log("dbus-daemon", ...): the name on
 * stderr and the syslog identifier, so that searches for dbus-daemon's
 * lines find ours */
static const char *log_ident = "dbus-daemon";
static char log_prefix[64];
static bool log_syslog_open;

void log_set_target(unsigned targets) {
	log_targets = targets;
	if ((targets & LOG_TARGET_SYSLOG) && !log_syslog_open) {
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
		log_syslog_open = true;
	}
}

unsigned log_get_target(void) {
	return log_targets;
}

void log_set_max_level(int level) {
	log_max_level = level;
}

void log_set_ident(const char *ident) {
	log_ident = ident;
}

void log_set_bus_type(const char *type) {
	if (type && strcmp(type, "system") == 0)
		snprintf(log_prefix, sizeof(log_prefix), "[system] ");
	else if (type && strcmp(type, "session") == 0)
		snprintf(log_prefix, sizeof(log_prefix), "[session uid=%u pid=%d] ", (unsigned) geteuid(),
			 (int) getpid());
	else
		log_prefix[0] = '\0';
}

/* dbus-daemon's severities as syslog priorities: INFO and WARNING go to
 * the daemon facility, SECURITY (refusals) is auth.notice, ERROR
 * daemon.crit */
static int log_syslog_priority(int level) {
	if (level == LOG_NOTICE)
		return LOG_AUTH | LOG_NOTICE;
	if (level <= LOG_ERR)
		return LOG_DAEMON | LOG_CRIT;
	return LOG_DAEMON | level;
}

static void log_line(int level, const char *prefix, const char *fmt, va_list ap) {
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (log_targets & LOG_TARGET_SYSLOG)
		syslog(log_syslog_priority(level), "%s%s", prefix, buf);
	if (log_targets & LOG_TARGET_STDERR)
		fprintf(stderr, "%s[%d]: %s%s\n", log_ident, (int) getpid(), prefix, buf);
}

int log_full(int level, int error, const char *fmt, ...) {
	va_list ap;
	int saved = errno;

	if (level > log_max_level)
		return error;

	if (error < 0)
		errno = -error;
	va_start(ap, fmt);
	log_line(level, log_prefix, fmt, ap);
	va_end(ap);

	errno = saved;
	return error;
}

void log_unprefixed(int level, const char *fmt, ...) {
	va_list ap;
	int saved = errno;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	log_line(level, "", fmt, ap);
	va_end(ap);
	errno = saved;
}
