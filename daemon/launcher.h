/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * launcher.h - starting activated services: fork and exec (directly, or
 * through the setuid launch helper), User= on a system bus, the activation
 * environment, and reaping the children with what dbus-daemon answers
 * when one fails (Spawn.ExecFailed, Spawn.ChildExited, ...).  Which names
 * to start and when is service-registry.c's.
 */

#include <stdint.h>

typedef struct Bus Bus;
typedef struct Launcher Launcher;
typedef struct LauncherChild LauncherChild;

/*
 * LauncherExitFn - a child started for @token was reaped.  @error_name is
 * NULL when it exited with status 0 (a service may daemonize: no
 * failure); else the D-Bus error of the failure and its @text (NULL
 * without memory).
 */
typedef void (*LauncherExitFn)(void *userdata, uint64_t token, const char *error_name, const char *text);

/* a launcher for @bus; its SIGCHLD handler reaps the children */
int launcher_new(Bus *bus, LauncherExitFn exited, void *userdata, Launcher **ret);
/* forgets the children (they keep running) */
Launcher *launcher_free(Launcher *l);

/**
 * launcher_set_address() - the address activated services get in
 * DBUS_STARTER_ADDRESS (and DBUS_SESSION_BUS_ADDRESS /
 * DBUS_SYSTEM_BUS_ADDRESS); without it, the one built from the bus's
 * listeners.  Return: 0 or -ENOMEM.
 */
int launcher_set_address(Launcher *l, const char *address);

/**
 * launcher_setenv() - set one variable of the activation environment
 * (UpdateActivationEnvironment).  Return: 0 or -ENOMEM.
 */
int launcher_setenv(Bus *bus, const char *key, const char *value);

/**
 * launcher_spawn() - start the service of activatable @name
 * @l:		the launcher
 * @name:	the activatable name (the launch helper's argument, and in texts)
 * @exec:	its Exec= line
 * @user:	its User= (or NULL): on a system bus, the uid it runs as
 * @token:	given to the exit callback (non-zero)
 * @ret_child:	the child, until its exit is reported or it is detached
 * @ret_error:	on failure, the D-Bus error name, if there is one
 * @ret_text:	... and its text (the caller frees it)
 *
 * The configured <servicehelper> is used if there is one; on a system bus
 * whose daemon is not root, the launch helper when it is installed setuid
 * root and @user is not the daemon's.
 *
 * Return: 0 or a negative errno.
 */
int launcher_spawn(Launcher *l, const char *name, const char *exec, const char *user, uint64_t token,
		   LauncherChild **ret_child, const char **ret_error, char **ret_text);

/* the launch helper a service of User= @user is started through, or NULL
 * when the daemon execs it itself (see launcher_spawn()) */
const char *launcher_helper(Launcher *l, const char *user);

/* the launch of @ch is over: its exit is no longer reported */
void launcher_child_detach(LauncherChild *ch);
/* SIGKILL (an activation that timed out) */
void launcher_child_kill(LauncherChild *ch);
