/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "daemon/log.h"

static unsigned log_targets = LOG_TARGET_STDERR;
static int log_max_level = LOG_INFO;
static const char *log_ident = "busbridged";
static bool log_syslog_open;

void log_set_target(unsigned targets) {
	log_targets = targets;
	if ((targets & LOG_TARGET_SYSLOG) && !log_syslog_open) {
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
		log_syslog_open = true;
	}
}

void log_set_max_level(int level) {
	log_max_level = level;
}

void log_set_ident(const char *ident) {
	log_ident = ident;
}

int log_full(int level, int error, const char *fmt, ...) {
	char buf[2048];
	va_list ap;
	int saved = errno;

	if (level > log_max_level)
		return error;

	if (error < 0)
		errno = -error;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);

	if (log_targets & LOG_TARGET_SYSLOG)
		syslog(level, "%s", buf);
	if (log_targets & LOG_TARGET_STDERR)
		fprintf(stderr, "%s[%d]: %s\n", log_ident, (int) getpid(), buf);

	errno = saved;
	return error;
}
