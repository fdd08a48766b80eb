/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fd-limit.c - RLIMIT_NOFILE raised and restored (fd-limit.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/fd-limit.h"
#include "daemon/log.h"

#define ENOUGH_FDS 65536	/* dbus-sysdeps-util-unix.c ENOUGH_FDS */

static struct rlimit initial_nofile;
static bool initial_nofile_saved;

void fd_limit_raise(void) {
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) < 0) {
		log_info("Failed to get fd limit: %m");
		return;
	}
	initial_nofile = lim;
	initial_nofile_saved = true;
	if (getuid() == 0) {
		if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < ENOUGH_FDS)
			lim.rlim_cur = ENOUGH_FDS;
		if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < lim.rlim_cur)
			lim.rlim_max = lim.rlim_cur;
	}
	if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < lim.rlim_max)
		lim.rlim_cur = lim.rlim_max;
	if (lim.rlim_cur == initial_nofile.rlim_cur && lim.rlim_max == initial_nofile.rlim_max)
		return;
	if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
		log_warning("org.freedesktop.DBus.Error.%s: Failed to set fd limit to %lu: %m",
			 errno == EPERM || errno == EACCES ? "AccessDenied" : "Failed", (unsigned long) lim.rlim_cur);
}

void fd_limit_restore(void) {
	if (initial_nofile_saved)
		(void) setrlimit(RLIMIT_NOFILE, &initial_nofile);
}
