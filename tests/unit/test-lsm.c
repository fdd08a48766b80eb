/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-lsm.c - daemon/lsm.c: when AppArmor mediates the bus, as on
 * dbus-daemon, and whether busbridged starts, on fake module parameters,
 * mount tables and apparmorfs in a temporary directory (every AppArmor
 * mode with AppArmor absent, enabled without D-Bus mediation and with it).  tests/integration/test-startup-diff.sh compares the real
 * system's case with dbus-daemon.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/lsm.h"
#include "util/macro.h"
#include "tests/unit/test.h"

static char root[] = "/tmp/test-lsm-XXXXXX";
static char enabled_path[256], mounts_path[256];

static LsmPaths paths(void) {
	return (LsmPaths) { enabled_path, mounts_path };
}

static void write_file(const char *path, const char *text) {
	FILE *f = fopen(path, "we");

	assert(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *under_root) {
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/%s", root, under_root);
	assert(system(cmd) == 0);
}

static void clean(void) {
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/*", root);
	assert(system(cmd) == 0);
}

typedef enum { AA_ABSENT, AA_NO_DBUS, AA_DBUS, AA_DBUS_UNMOUNTED } AppArmorState;

/* lay out the fake system */
static void set_up(AppArmorState aa) {
	char p[512];

	clean();
	snprintf(enabled_path, sizeof(enabled_path), "%s/aa-enabled", root);
	snprintf(mounts_path, sizeof(mounts_path), "%s/mounts", root);
	write_file(enabled_path, aa == AA_ABSENT ? "N\n" : "Y\n");
	/* securityfs, as /proc/self/mounts lists it, after other mounts (or
	 * the same tree on a tmpfs: not securityfs, so not AppArmor's) */
	snprintf(p, sizeof(p), "proc /proc proc rw 0 0\nsecurityfs %s/sec %s rw,nosuid 0 0\n", root,
		 aa == AA_DBUS_UNMOUNTED ? "tmpfs" : "securityfs");
	write_file(mounts_path, p);
	mkdirs("sec");
	if (aa != AA_ABSENT)
		mkdirs("sec/apparmor/features/file");
	if (aa == AA_DBUS || aa == AA_DBUS_UNMOUNTED) {
		mkdirs("sec/apparmor/features/dbus");
		snprintf(p, sizeof(p), "%s/sec/apparmor/features/dbus/mask", root);
		write_file(p, "acquire send receive\n");
	}
}

static int start(BusConfigApparmorMode mode, bool *ret_mediate, char **ret_error) {
	BusConfig config = { .apparmor_mode = mode };
	LsmPaths p = paths();

	return lsm_apparmor_decide(&config, &p, ret_mediate, ret_error);
}

TEST(apparmor) {
	static const BusConfigApparmorMode modes[] = {
		BUS_CONFIG_APPARMOR_ENABLED, BUS_CONFIG_APPARMOR_DISABLED, BUS_CONFIG_APPARMOR_REQUIRED,
	};
	static const struct {
		AppArmorState state;
		bool mediates;
	} states[] = {
		{ AA_ABSENT, false }, { AA_NO_DBUS, false }, { AA_DBUS, true }, { AA_DBUS_UNMOUNTED, false },
	};

	for (size_t s = 0; s < ELEMENTSOF(states); s++) {
		LsmPaths p;

		set_up(states[s].state);
		p = paths();
		check(lsm_apparmor_mediates_dbus(&p) == states[s].mediates);
		for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
			_cleanup_free_ char *error = NULL;
			bool mediate = true;
			int r = start(modes[m], &mediate, &error);

			if (states[s].mediates) {
				/* mediated, unless told not to */
				check(r == 0 && !error);
				check(mediate == (modes[m] != BUS_CONFIG_APPARMOR_DISABLED));
			} else if (modes[m] == BUS_CONFIG_APPARMOR_REQUIRED) {
				check(r == -EPERM && !mediate && error &&
				      streq(error, "AppArmor mediation required but not present"));
			} else {
				check(r == 0 && !mediate && !error);
			}
		}
	}
}

TEST(apparmor_mask_unopenable) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	LsmPaths lp;
	int fd;

	/* a mask that stat() finds but open() refuses, as in a container
	 * whose profile forbids the open: no mediation, as dbus-daemon
	 * decides with open() (a socket is such a file, even for root) */
	set_up(AA_DBUS);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sec/apparmor/features/dbus/mask", root);
	assert(unlink(sa.sun_path) == 0);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	check(stat(sa.sun_path, &st) == 0);
	lp = paths();
	check(!lsm_apparmor_mediates_dbus(&lp));
	close(fd);
}

int main(void) {
	assert(mkdtemp(root));
	RUN(apparmor);
	RUN(apparmor_mask_unopenable);
	clean();
	rmdir(root);
	return test_done();
}
