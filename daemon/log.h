/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * log.h - the daemon's log: stderr, syslog or the journal, as dbus-daemon's
 * --syslog / --nosyslog / --syslog-only and <syslog/> decide.  Library code
 * (kdbus/, compat/, policy/) never logs; the daemon logs once, where it
 * decides.
 */

#include <stdbool.h>
#include <syslog.h>

#include "util/macro.h"

typedef enum LogTarget {
	LOG_TARGET_STDERR	= 1 << 0,
	LOG_TARGET_SYSLOG	= 1 << 1,
} LogTarget;

void log_set_target(unsigned targets);
unsigned log_get_target(void);
void log_set_max_level(int level);
void log_set_ident(const char *ident);
/* the prefix of every line, from the configuration's <type> when the bus
 * starts (not on reloads), as dbus-daemon: "[system] " for "system",
 * "[session uid=U pid=P] " (the daemon's own) for "session", else none */
void log_set_bus_type(const char *type);

/* log_full() - log at @level; returns @error (a negative errno) so callers
 * can write `return log_full(LOG_ERR, r, "...")`. */
int log_full(int level, int error, const char *fmt, ...) _printf_(3, 4);

/* a line without the bus type prefix (dbus-daemon's _dbus_warn()) */
void log_unprefixed(int level, const char *fmt, ...) _printf_(2, 3);

/* debug lines are off unless asked for: their arguments are not even
 * computed then */
extern int log_max_level;
#define log_debug(...) ((void) (log_max_level >= LOG_DEBUG && log_full(LOG_DEBUG, 0, __VA_ARGS__)))
#define log_info(...) log_full(LOG_INFO, 0, __VA_ARGS__)
/* dbus-daemon's DBUS_SYSTEM_LOG_SECURITY: refusals (syslog auth.notice) */
#define log_notice(...) log_full(LOG_NOTICE, 0, __VA_ARGS__)
#define log_security(...) log_full(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, 0, __VA_ARGS__)
#define log_error_errno(r, ...) log_full(LOG_ERR, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_full(LOG_WARNING, (r), __VA_ARGS__)
