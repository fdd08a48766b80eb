/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * lsm.h - whether AppArmor mediates the bus, as dbus-daemon decides it:
 * where the kernel offers AppArmor D-Bus mediation (apparmorfs has
 * features/dbus) and the configuration does not say
 * <apparmor mode="disabled"/>; <apparmor mode="required"/> without it fails
 * as on dbus-daemon.  (The mediation itself: daemon/apparmor.c; SELinux:
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

/* AppArmor's directory in securityfs (malloc()ed), or NULL */
char *lsm_apparmorfs(const LsmPaths *paths);

/**
 * lsm_apparmor_decide() - does AppArmor mediate the bus?
 * @config:	the configuration (its <apparmor mode=>)
 * @paths:	where to look (&lsm_system_paths)
 * @ret_mediate: out: it does
 * @ret_error:	out: why the bus may not start, malloc()ed, for "Failed to
 *		start message bus: " (NULL on -ENOMEM)
 *
 * Return: 0, or -EPERM (mode "required" without mediation) with @ret_error
 * set.
 */
int lsm_apparmor_decide(const BusConfig *config, const LsmPaths *paths, bool *ret_mediate, char **ret_error);
