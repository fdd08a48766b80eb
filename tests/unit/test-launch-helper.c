/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-launch-helper.c - unit tests for the launch helper: its reading of
 * the system bus configuration and of .service files, bus names, the
 * daemon's mapping of its exit status, and the helper binary itself run
 * without setuid on a test configuration (as root it switches to nobody;
 * as anyone else it must refuse with PermissionsInvalid).
 *
 * The exit codes and error names/texts are dbus-daemon 1.14's
 * (bus/activation-exit-codes.h, bus/activation.c).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat/service-file.h"
#include "daemon/launch-helper.h"
#include "util/macro.h"
#include "tests/unit/test.h"

static char tmpdir[] = "/tmp/test-launch-helper-XXXXXX";

static void write_str(const char *name, const char *content) {
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	assert(f);
	assert(fputs(content, f) >= 0);
	fclose(f);
}

static int config(const char *xml, char **user, char ***dirs) {
	return launch_helper_config_parse(xml, strlen(xml), user, dirs);
}

static void test_keys_optional(void) {
	ServiceFile *f = NULL;
	const char *s;

	s = "[D-BUS Service]\nExec=/bin/true\nUser=root\n";
	assert(service_file_parse(s, strlen(s), "/d/a.service", &f, NULL) == -EBADMSG);
	assert(service_file_parse_full(s, strlen(s), "/d/a.service", SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL) == 0);
	assert(!f->name && streq(f->exec, "/bin/true") && streq(f->user, "root") && !f->name_valid);
	f = service_file_free(f);

	s = "[D-BUS Service]\nName=a.b\n";
	assert(service_file_parse_full(s, strlen(s), "/d/a.b.service", SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL) == 0);
	assert(streq(f->name, "a.b") && !f->exec && !f->user && f->name_matches_filename && f->name_valid);
	f = service_file_free(f);

	/* no [D-BUS Service] group at all */
	s = "[Other]\nName=a.b\n";
	assert(service_file_parse_full(s, strlen(s), "/d/a.b.service", SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL) == 0);
	assert(!f->name && !f->exec);
	f = service_file_free(f);

	/* syntax errors still fail */
	s = "[D-BUS Service\nName=a.b\n";
	assert(service_file_parse_full(s, strlen(s), "/d/a.service", SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL) == -EBADMSG);
	assert(!f);
}

static void test_config(void) {
	_cleanup_free_ char *user = NULL;
	_cleanup_strv_free_ char **dirs = NULL;

	/* <include> is not followed; servicedir content trimmed, kept as written */
	assert(config("<busconfig>\n <type>system</type>\n <user>\n  messagebus \n</user>\n"
		      " <include>/etc/nothing.conf</include>\n"
		      " <servicedir> /a/b </servicedir>\n <servicedir>rel</servicedir>\n"
		      " <standard_system_servicedirs/>\n <servicedir>/usr/share/dbus-1/system-services</servicedir>\n"
		      " <standard_system_servicedirs/>\n <policy context=\"default\"><allow user=\"*\"/></policy>\n"
		      "</busconfig>\n", &user, &dirs) == 0);
	assert(streq(user, "messagebus"));
	const char *want[] = { "/a/b", "rel", "/usr/local/share/dbus-1/system-services",
			       "/usr/share/dbus-1/system-services", "/lib/dbus-1/system-services",
			       "/usr/share/dbus-1/system-services", NULL };
	for (size_t i = 0; i < ELEMENTSOF(want); i++)
		assert(streq_ptr(dirs[i], want[i]));
	free(user);
	user = NULL;
	dirs = strv_free(dirs);

	/* no <user>: "" (the helper then refuses with PermissionsInvalid) */
	assert(config("<busconfig><servicedir>/x</servicedir></busconfig>", &user, &dirs) == 0);
	assert(streq(user, "") && streq(dirs[0], "/x") && !dirs[1]);
	free(user);
	user = NULL;
	dirs = strv_free(dirs);

	/* the last <user> */
	assert(config("<busconfig><user>a</user><user>b</user></busconfig>", &user, &dirs) == 0);
	assert(streq(user, "b") && !dirs[0]);
	free(user);
	user = NULL;
	dirs = strv_free(dirs);

	assert(config("<busconfig><user>a</busconfig>", &user, &dirs) == -EBADMSG);
	assert(config("", &user, &dirs) == -EBADMSG);
}

static void test_names(void) {
	assert(launch_helper_bus_name_is_valid("org.example.Foo"));
	assert(launch_helper_bus_name_is_valid("a-b._c"));
	assert(launch_helper_bus_name_is_valid(":1.42"));
	assert(!launch_helper_bus_name_is_valid("org"));
	assert(!launch_helper_bus_name_is_valid("org..x"));
	assert(!launch_helper_bus_name_is_valid(".org.x"));
	assert(!launch_helper_bus_name_is_valid("org.x."));
	assert(!launch_helper_bus_name_is_valid("org.1x"));
	assert(!launch_helper_bus_name_is_valid("1org.x"));
	assert(!launch_helper_bus_name_is_valid("org/x.y"));
	assert(!launch_helper_bus_name_is_valid("../../etc/x"));
	assert(!launch_helper_bus_name_is_valid(""));
	assert(!launch_helper_bus_name_is_valid(":"));
}

static void test_exit_errors(void) {
	static const struct {
		int status;
		const char *name, *text;
	} t[] = {
		{ 2, "org.freedesktop.DBus.Error.NoMemory", "Launcher could not run (out of memory)" },
		{ 3, "org.freedesktop.DBus.Error.Spawn.ConfigInvalid", "Invalid configuration (missing or empty <user>?)" },
		{ 4, "org.freedesktop.DBus.Error.Spawn.FailedToSetup", "Failed to setup environment correctly" },
		{ 5, "org.freedesktop.DBus.Error.Spawn.ServiceNotValid", "Bus name is not valid or missing" },
		{ 6, "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "Bus name not found in system service directory" },
		{ 7, "org.freedesktop.DBus.Error.Spawn.PermissionsInvalid", "The permission of the setuid helper is not correct" },
		{ 8, "org.freedesktop.DBus.Error.Spawn.PermissionsInvalid",
		  "The service file is incorrect or does not have all required attributes" },
		{ 9, "org.freedesktop.DBus.Error.Spawn.ExecFailed", "Cannot launch daemon, file not found or permissions invalid" },
		{ 10, "org.freedesktop.DBus.Error.InvalidArgs", "Invalid arguments to command line" },
		{ 11, "org.freedesktop.DBus.Error.Spawn.ChildSignaled", "Launched child was signaled, it probably crashed" },
		{ 1, "org.freedesktop.DBus.Error.Spawn.ChildExited", "Launch helper exited with unknown return code 1" },
		{ 42, "org.freedesktop.DBus.Error.Spawn.ChildExited", "Launch helper exited with unknown return code 42" },
	};
	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		const char *name, *text;
		char buf[80];

		launch_helper_exit_error(t[i].status, &name, &text, buf, sizeof(buf));
		assert(streq(name, t[i].name));
		assert(streq(text, t[i].text));
	}
}

/* run the helper for @name on @conf; its exit status */
static int helper(const char *conf, const char *name) {
	pid_t pid = fork();
	int status;

	assert(pid >= 0);
	if (pid == 0) {
		setenv(LAUNCH_HELPER_CONFIG_ENV, conf, 1);
		setenv("SECRET_OF_THE_CALLER", "1", 1);
		execl(LAUNCH_HELPER_BUILD_PATH, LAUNCH_HELPER_BUILD_PATH, name, (char *) NULL);
		_exit(127);
	}
	assert(waitpid(pid, &status, 0) == pid);
	assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_helper(void) {
	char conf[4200], out[4200], buf[4096];
	struct passwd *pw = getpwuid(getuid());
	bool root = getuid() == 0 && getpwnam("nobody");
	FILE *f;

	assert(pw);
	snprintf(conf, sizeof(conf), "%s/system.conf", tmpdir);
	snprintf(out, sizeof(out), "%s/out/env", tmpdir);
	snprintf(buf, sizeof(buf), "%s/out", tmpdir);
	assert(mkdir(buf, 01777) == 0 && chmod(buf, 01777) == 0);
	assert(chmod(tmpdir, 0755) == 0);
	assert(mkdir(strcat(strcpy(buf, tmpdir), "/d1"), 0755) == 0);
	assert(mkdir(strcat(strcpy(buf, tmpdir), "/d2"), 0755) == 0);
	snprintf(buf, sizeof(buf),
		 "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		 " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		 "<busconfig><type>system</type><user>%s</user>\n"
		 "<servicedir>%s/none</servicedir><servicedir>%s/d1</servicedir><servicedir>%s/d2</servicedir>\n"
		 "</busconfig>\n", pw->pw_name, tmpdir, tmpdir, tmpdir);
	write_str("system.conf", buf);

	snprintf(buf, sizeof(buf), "[D-BUS Service]\nName=com.example.Ok\nUser=nobody\n"
		 "Exec=/bin/sh -c 'id -u >%s; id -g >>%s; id -G >>%s; env | LC_ALL=C sort >>%s'\n", out, out, out, out);
	write_str("d1/com.example.Ok.service", buf);
	write_str("d2/com.example.Ok.service", "[D-BUS Service]\nName=com.example.Ok\nUser=root\nExec=/bin/false\n");
	/* a file that does not load is skipped: the next directory's wins */
	write_str("d1/com.example.Second.service", "[D-BUS Service\n");
	write_str("d2/com.example.Second.service", "[D-BUS Service]\nName=com.example.Second\nUser=nobody\n"
		  "Exec=/bin/sh -c 'exit 0'\n");
	write_str("d1/com.example.Mismatch.service", "[D-BUS Service]\nName=com.example.Other\nUser=nobody\nExec=/bin/true\n");
	write_str("d1/com.example.NoUser.service", "[D-BUS Service]\nName=com.example.NoUser\nExec=/bin/true\n");
	write_str("d1/com.example.NoExec.service", "[D-BUS Service]\nName=com.example.NoExec\nUser=nobody\n");
	write_str("d1/com.example.NoName.service", "[D-BUS Service]\nExec=/bin/true\nUser=nobody\n");
	write_str("d1/com.example.BadUser.service", "[D-BUS Service]\nName=com.example.BadUser\nUser=no-such-user-x\n"
		  "Exec=/bin/true\n");
	write_str("d1/com.example.BadExec.service", "[D-BUS Service]\nName=com.example.BadExec\nUser=nobody\n"
		  "Exec=/no/such/program\n");
	write_str("d1/com.example.Quotes.service", "[D-BUS Service]\nName=com.example.Quotes\nUser=nobody\n"
		  "Exec=/bin/sh -c 'unclosed\n");
	write_str("d1/com.example.Exit3.service", "[D-BUS Service]\nName=com.example.Exit3\nUser=nobody\n"
		  "Exec=/bin/sh -c 'exit 3'\n");

	assert(helper(conf, "not a name") == LAUNCH_HELPER_EXIT_NAME_INVALID);
	assert(helper("/no/such/system.conf", "com.example.Ok") == LAUNCH_HELPER_EXIT_GENERIC_FAILURE);
	if (!root) {
		/* not setuid root: refused whoever the configuration names */
		assert(helper(conf, "com.example.Ok") == LAUNCH_HELPER_EXIT_PERMISSIONS_INVALID);
		return;
	}
	assert(helper(conf, "com.example.Missing") == LAUNCH_HELPER_EXIT_SERVICE_NOT_FOUND);
	assert(helper(conf, "com.example.Mismatch") == LAUNCH_HELPER_EXIT_FILE_INVALID);
	assert(helper(conf, "com.example.NoUser") == LAUNCH_HELPER_EXIT_GENERIC_FAILURE);
	assert(helper(conf, "com.example.NoExec") == LAUNCH_HELPER_EXIT_GENERIC_FAILURE);
	assert(helper(conf, "com.example.NoName") == LAUNCH_HELPER_EXIT_GENERIC_FAILURE);
	assert(helper(conf, "com.example.BadUser") == LAUNCH_HELPER_EXIT_SETUP_FAILED);
	assert(helper(conf, "com.example.BadExec") == LAUNCH_HELPER_EXIT_EXEC_FAILED);
	assert(helper(conf, "com.example.Quotes") == LAUNCH_HELPER_EXIT_INVALID_ARGS);
	assert(helper(conf, "com.example.Exit3") == 3);
	assert(helper(conf, "com.example.Second") == 0);

	/* the configuration's <user> must be the caller */
	snprintf(buf, sizeof(buf), "<busconfig><user>nobody</user><servicedir>%s/d1</servicedir></busconfig>", tmpdir);
	write_str("other.conf", buf);
	snprintf(buf, sizeof(buf), "%s/other.conf", tmpdir);
	assert(helper(buf, "com.example.Ok") == LAUNCH_HELPER_EXIT_PERMISSIONS_INVALID);

	/* as nobody, in an environment of the two starter variables only */
	assert(helper(conf, "com.example.Ok") == 0);
	pw = getpwnam("nobody");
	char want[512];
	snprintf(want, sizeof(want), "%u\n%u\n%u\nDBUS_STARTER_ADDRESS=unix:path=%s\nDBUS_STARTER_BUS_TYPE=system\n",
		 (unsigned) pw->pw_uid, (unsigned) pw->pw_gid, (unsigned) pw->pw_gid, DBUS_SYSTEM_SOCKET);
	f = fopen(out, "re");
	assert(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* sh adds PWD (and may add SHLVL, _): keep the DBUS_ lines and the ids */
	char got[4096] = "";
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (strchr("0123456789", line[0]) || strncmp(line, "DBUS_", 5) == 0 || strncmp(line, "SECRET", 6) == 0)
			strcat(strcat(got, line), "\n");
	if (!streq(got, want)) {
		fprintf(stderr, "got:\n%swant:\n%s", got, want);
		assert(false);
	}
}

int main(void) {
	assert(mkdtemp(tmpdir));

	RUN(keys_optional);
	RUN(config);
	RUN(names);
	RUN(exit_errors);
	RUN(helper);

	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		(void) !system(cmd);
	}
	return test_done();
}
