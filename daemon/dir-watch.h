/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * dir-watch.h - the directories whose changes reload the configuration, as
 * dbus-daemon's bus/dir-watch-inotify.c watches them: the <includedir>
 * directories that existed when the configuration was read, then the
 * service directories but those not to be watched.  Any event in any of
 * them reloads the whole configuration, as dbus-daemon sends itself SIGHUP
 * (and logs "Reloaded configuration").
 *
 * The set is computed again at every load of the configuration (start-up,
 * ReloadConfig, SIGHUP, an event), never at the rescans of an activation:
 * a directory that does not exist is not watched until a load finds it,
 * and a path keeps the watch it had, even once its directory is gone, as
 * long as the configuration names it (dbus-daemon's table keeps it by
 * name).
 */

#include <stdbool.h>

typedef struct Bus Bus;
typedef struct DirWatch DirWatch;

/**
 * dir_watch_new() - an inotify instance for @bus, watching nothing yet
 * @bus:	the bus, whose event loop and configuration it uses
 * @changed:	runs with @userdata on every event (the bus reloads)
 * @ret:	the watcher
 *
 * Return: 0, -ENOMEM, or inotify_init1()'s -errno.
 */
int dir_watch_new(Bus *bus, void (*changed)(void *userdata), void *userdata, DirWatch **ret);

/**
 * dir_watch_update() - watch the directories of @bus's configuration now
 * @w:		the watcher (NULL: nothing happens)
 *
 * Directories that cannot be watched are left out (and looked at again at
 * the next load).
 */
void dir_watch_update(DirWatch *w);

/** dir_watch_free() - stop watching; accepts NULL. Return: NULL. */
DirWatch *dir_watch_free(DirWatch *w);
