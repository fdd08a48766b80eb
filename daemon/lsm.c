/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lsm.c - whether AppArmor mediates this bus, as dbus-daemon decides it
 * (see lsm.h).
 *
 * The AppArmor check follows dbus-daemon's bus_apparmor_pre_init() and
 * bus_apparmor_full_init(): AppArmor is enabled (libapparmor's
 * aa_is_enabled(): the module parameter says Y and securityfs, mounted,
 * has an apparmor directory) and the kernel offers D-Bus mediation (its
 * features/dbus/mask can be opened; a stat() would succeed in a container
 * whose profile forbids the open, where dbus-daemon does not mediate).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/lsm.h"
#include "util/macro.h"

const LsmPaths lsm_system_paths = {
	.apparmor_enabled = "/sys/module/apparmor/parameters/enabled",
	.mounts = "/proc/self/mounts",
};

/* the first byte of @path, or 0 */
static char read_first_byte(const char *path) {
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char c = 0;

	if (fd < 0 || read(fd, &c, 1) != 1)
		return 0;
	return c;
}

static bool path_opens(const char *path) {
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

/* <securityfs>/apparmor, as libapparmor's aa_find_mountpoint(), or NULL */
static char *apparmorfs_find(const char *mounts) {
	_cleanup_(fclosep) FILE *f = setmntent(mounts, "re");
	struct mntent *m;
	struct stat st;

	if (!f)
		return NULL;
	while ((m = getmntent(f))) {
		char *dir;

		if (!streq(m->mnt_type, "securityfs"))
			continue;
		if (asprintf(&dir, "%s/apparmor", m->mnt_dir) < 0)
			return NULL;
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return dir;
		free(dir);
	}
	return NULL;
}

char *lsm_apparmorfs(const LsmPaths *paths) {
	return apparmorfs_find(paths->mounts);
}

bool lsm_apparmor_mediates_dbus(const LsmPaths *paths) {
	_cleanup_free_ char *apparmorfs = NULL, *mask = NULL;

	if (read_first_byte(paths->apparmor_enabled) != 'Y')
		return false;
	apparmorfs = apparmorfs_find(paths->mounts);
	if (!apparmorfs || asprintf(&mask, "%s/features/dbus/mask", apparmorfs) < 0)
		return false;
	return path_opens(mask);
}

int lsm_apparmor_decide(const BusConfig *config, const LsmPaths *paths, bool *ret_mediate, char **ret_error) {
	*ret_mediate = false;
	*ret_error = NULL;
	if (lsm_apparmor_mediates_dbus(paths)) {
		*ret_mediate = config->apparmor_mode != BUS_CONFIG_APPARMOR_DISABLED;
		return 0;
	}
	if (config->apparmor_mode == BUS_CONFIG_APPARMOR_REQUIRED) {
		/* dbus-daemon's words */
		*ret_error = strdup("AppArmor mediation required but not present");
		return -EPERM;
	}
	return 0;
}
