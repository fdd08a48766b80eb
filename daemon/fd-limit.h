/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fd-limit.h - RLIMIT_NOFILE as dbus-daemon handles it
 * (_dbus_rlimit_save_fd_limit(), _dbus_rlimit_raise_fd_limit() and
 * _dbus_rlimit_restore_fd_limit()): raised at startup, and the limit the
 * daemon started with given back to each activated service.
 */

/* save the limit, then raise it (root: to at least 65536; anyone: the soft
 * limit to the hard one); a failure is logged as dbus-daemon logs it */
void fd_limit_raise(void);
/* in an activated service's process: the limit the daemon started with */
void fd_limit_restore(void);
