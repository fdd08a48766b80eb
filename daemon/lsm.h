/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * lsm.h - the Linux security modules that mediate D-Bus in dbus-daemon, and
 * whether the bus may start under them.
 *
 * dbus-daemon asks AppArmor (when the kernel offers D-Bus mediation:
 * apparmorfs has features/dbus) and SELinux (class dbus) about every name
 * request and every message.  busbridged does not mediate with either yet,
 * so where dbus-daemon would, it refuses to start rather than run a bus
 * without the boundary the system's policy relies on; where dbus-daemon
 * would not (no LSM, no D-Bus support in it, <apparmor mode="disabled"/>,
 * SELinux permissive), it starts as dbus-daemon does, and
 * <apparmor mode="required"/> without AppArmor fails as on dbus-daemon.
 */

#include <stdbool.h>

#include "policy/config.h"

/* where the checks look (the real paths, or a test's) */
typedef struct LsmPaths {
	const char *apparmor_enabled;	/* /sys/module/apparmor/parameters/enabled */
	const char *mounts;		/* /proc/self/mounts: securityfs's mount point */
	const char *selinuxfs;		/* /sys/fs/selinux */
} LsmPaths;

extern const LsmPaths lsm_system_paths;

/*
 * lsm_apparmor_mediates_dbus() - AppArmor is enabled and offers D-Bus
 * mediation, as dbus-daemon's bus_apparmor_pre_init() finds out
 * (libapparmor's aa_is_enabled(), then <apparmorfs>/features/dbus/mask can
 * be opened)
 */
bool lsm_apparmor_mediates_dbus(const LsmPaths *paths);

/*
 * lsm_selinux_mediates_dbus() - SELinux is enforcing a policy that has the
 * dbus class, so dbus-daemon's checks would refuse what it denies
 */
bool lsm_selinux_mediates_dbus(const LsmPaths *paths);

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
