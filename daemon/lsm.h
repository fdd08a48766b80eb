/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * lsm.h - whether the bus may start under AppArmor as dbus-daemon would.
 *
 * dbus-daemon asks AppArmor (when the kernel offers D-Bus mediation:
 * apparmorfs has features/dbus) about every name request and every
 * message.  busbridged does not mediate with AppArmor yet, so where
 * dbus-daemon would, it refuses to start rather than run a bus without
 * the boundary the system's policy relies on; where dbus-daemon would not
 * (no AppArmor, no D-Bus support in it, <apparmor mode="disabled"/>), it
 * starts as dbus-daemon does, and <apparmor mode="required"/> without
 * AppArmor fails as on dbus-daemon.  (SELinux is mediated:
 * daemon/selinux.c.)
 */

#include <stdbool.h>

#include "policy/config.h"

/* where the checks look (the real paths, or a test's) */
typedef struct LsmPaths {
	const char *apparmor_enabled;	/* /sys/module/apparmor/parameters/enabled */
	const char *mounts;		/* /proc/self/mounts: securityfs's mount point */
} LsmPaths;

extern const LsmPaths lsm_system_paths;

/*
 * lsm_apparmor_mediates_dbus() - AppArmor is enabled and offers D-Bus
 * mediation, as dbus-daemon's bus_apparmor_pre_init() finds out
 * (libapparmor's aa_is_enabled(), then <apparmorfs>/features/dbus/mask can
 * be opened)
 */
bool lsm_apparmor_mediates_dbus(const LsmPaths *paths);

/**
 * lsm_check_startup() - may the bus start under these security modules?
 * @config:	the configuration (its <apparmor mode=>)
 * @paths:	where to look (&lsm_system_paths)
 * @ret_error:	out: why not, malloc()ed, for "Failed to start message
 *		bus: " (NULL on -ENOMEM)
 *
 * Return: 0, or -EPERM with @ret_error set.
 */
int lsm_check_startup(const BusConfig *config, const LsmPaths *paths, char **ret_error);
