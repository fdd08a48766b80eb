/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dir-watch.c - the configuration's directories, watched with inotify as
 * dbus-daemon's bus/dir-watch-inotify.c watches them (dir-watch.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "daemon/bus.h"
#include "daemon/dir-watch.h"
#include "daemon/log.h"
#include "policy/config.h"
#include "util/macro.h"
#include "util/strutil.h"

#define DIR_WATCH_MASK (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM)

/* one watched path: the descriptor inotify gave it when it was added */
typedef struct DirWatchEntry {
	char *path;
	int wd;
} DirWatchEntry;

struct DirWatch {
	Bus *bus;
	void (*changed)(void *userdata);
	void *userdata;
	int fd;
	struct event *ev;
	DirWatchEntry *entries;
	size_t n_entries;
};

/* as dbus-daemon's _handle_inotify_watch(): whatever was read (an event of
 * the mask, a watch gone with its directory, an overflow) is one reload */
static void dir_watch_on_event(evutil_socket_t fd, short what, void *userdata) {
	DirWatch *w = userdata;
	_Alignas(struct inotify_event) char buf[4096];
	bool any = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		any = true;
	if (any)
		w->changed(w->userdata);
}

int dir_watch_new(Bus *bus, void (*changed)(void *userdata), void *userdata, DirWatch **ret) {
	DirWatch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->bus = bus;
	w->changed = changed;
	w->userdata = userdata;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		int r = -errno;
		free(w);
		return r;
	}
	w->ev = event_new(bus->base, w->fd, EV_READ | EV_PERSIST, dir_watch_on_event, w);
	if (!w->ev) {
		dir_watch_free(w);
		return -ENOMEM;
	}
	event_add(w->ev, NULL);
	*ret = w;
	return 0;
}

/* the directories to watch, in dbus-daemon's order (bus_config_parser_get_
 * watched_dirs()): NULL-terminated, the strings are @c's */
static const char **dir_watch_wanted(const BusConfig *c) {
	size_t n = 0;
	const char **l = calloc(strv_length(c->includedirs) + c->n_servicedirs + 1, sizeof(char *));

	if (!l)
		return NULL;
	for (char **d = c->includedirs; d && *d; d++)
		l[n++] = *d;
	for (size_t i = 0; i < c->n_servicedirs; i++)
		if (!c->servicedir_flags || !(c->servicedir_flags[i] & BUS_CONFIG_SERVICE_DIR_NO_WATCH))
			l[n++] = c->servicedirs[i];
	return l;
}

/* the entry of @path in @w's table, or NULL */
static DirWatchEntry *dir_watch_find(DirWatch *w, const char *path) {
	for (size_t i = 0; i < w->n_entries; i++)
		if (w->entries[i].path && streq(w->entries[i].path, path))
			return &w->entries[i];
	return NULL;
}

void dir_watch_update(DirWatch *w) {
	_cleanup_free_ const char **wanted = NULL;
	DirWatchEntry *next;
	size_t n = 0;

	if (!w)
		return;
	wanted = dir_watch_wanted(w->bus->config);
	if (!wanted || !(next = calloc(strv_length((char **) wanted) + 1, sizeof(*next))))
		return;
	/* a path watched before keeps its watch, as it is; a new one is added
	 * if its directory is there (dbus-daemon skips the others quietly) */
	for (const char **p = wanted; *p; p++) {
		DirWatchEntry *old = dir_watch_find(w, *p);

		if (old) {
			next[n++] = *old;
			*old = (DirWatchEntry) { .wd = -1 };
			continue;
		}
		int wd = inotify_add_watch(w->fd, *p, DIR_WATCH_MASK);
		if (wd < 0) {
			if (errno != ENOENT)
				log_debug("Cannot watch %s: %m", *p);
			continue;
		}
		next[n].path = strdup(*p);
		if (!next[n].path) {
			(void) inotify_rm_watch(w->fd, wd);
			continue;
		}
		next[n++].wd = wd;
	}
	/* what left the configuration stops being watched */
	for (size_t i = 0; i < w->n_entries; i++) {
		if (w->entries[i].wd >= 0)
			(void) inotify_rm_watch(w->fd, w->entries[i].wd);
		free(w->entries[i].path);
	}
	free(w->entries);
	w->entries = next;
	w->n_entries = n;
}

DirWatch *dir_watch_free(DirWatch *w) {
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n_entries; i++)
		free(w->entries[i].path);
	free(w->entries);
	if (w->ev)
		event_free(w->ev);
	safe_close(w->fd);
	free(w);
	return NULL;
}
