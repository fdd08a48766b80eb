/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch-helper.c - busbridge-launch-helper SERVICE: the setuid-root helper
 * that starts a system bus service as its User=.  This file is security
 * sensitive.
 *
 * It behaves as dbus-daemon's dbus-daemon-launch-helper
 * (bus/activation-helper.c, bus/activation-helper-bin.c), so that the
 * daemon may run either:
 *
 *  1. clear the environment but for DBUS_STARTER_ADDRESS (the system bus's
 *     default address) and DBUS_STARTER_BUS_TYPE=system;
 *  2. check that SERVICE is a valid bus name;
 *  3. read the system bus configuration (only <user>, <servicedir> and
 *     <standard_system_servicedirs/>, following no <include>);
 *  4. check that it was run by that <user> (getuid()) and is setuid root;
 *  5. find SERVICE.service in the service directories (the first that
 *     loads), require Name= (SERVICE), Exec= and User=;
 *  6. switch to User= (initgroups, setgid, setuid), split Exec= and execv()
 *     it, with the environment of step 1.
 *
 * Every failure exits with dbus-daemon's exit code for it
 * (daemon/launch-helper.h), which the daemon turns into the error
 * dbus-daemon reports.  The configuration is DBUS_DATADIR/dbus-1/system.conf;
 * $BUSBRIDGE_LAUNCH_HELPER_CONFIG names another one, for tests, and is
 * obeyed only when the helper is not running setuid or setgid.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat/protocol.h"
#include "compat/service-file.h"
#include "daemon/launch-helper.h"
#include "util/macro.h"

#define SYSTEM_CONFIG DBUS_DATADIR "/dbus-1/system.conf"
#define SYSTEM_BUS_DEFAULT_ADDRESS "unix:path=" DBUS_SYSTEM_SOCKET
#define CONFIG_MAX (1024 * 1024)

/* stdin, stdout and stderr are open (to /dev/null if they were not), so
 * that nothing we open becomes one of them */
static int ensure_standard_fds(void) {
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int n = open("/dev/null", O_RDWR);
		if (n < 0)
			return -errno;
		if (n != fd) {
			/* a lower one was closed: cannot happen, we go upwards */
			close(n);
			return -EBADF;
		}
	}
	return 0;
}

static int read_file(const char *path, char **ret, size_t *ret_size) {
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *data = NULL;
	size_t size = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	data = malloc(CONFIG_MAX + 1);
	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, data + size, CONFIG_MAX + 1 - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		size += n;
		if (size > CONFIG_MAX)
			return -EFBIG;
	}
	*ret = TAKE_PTR(data);
	*ret_size = size;
	return 0;
}

/* _dbus_reset_oom_score_adj(): a service does not keep the daemon's
 * protection from the OOM killer (best effort) */
static void reset_oom_score_adj(void) {
	int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	char c = 0;

	if (fd < 0)
		return;
	ssize_t n = read(fd, &c, 1);
	close(fd);
	if (n != 1 || c != '-')
		return;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "0", 1) < 0)
		fprintf(stderr, "busbridge-launch-helper: cannot reset oom_score_adj: %s\n", strerror(errno));
	close(fd);
}

static int fail(int code, const char *fmt, ...) _printf_(2, 3);
static int fail(int code, const char *fmt, ...) {
	va_list ap;

	/* dbus-daemon's helper prints only what has no exit code of its own */
	if (code == LAUNCH_HELPER_EXIT_GENERIC_FAILURE) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return code;
}

/* a key the .service file lacks, in the words dbus-daemon-launch-helper
 * prints for it (the error's name and its message, which ends a line) */
static int fail_missing_key(const char *key) {
	return fail(LAUNCH_HELPER_EXIT_GENERIC_FAILURE, DBUS_ERR("Failed") ": No \"%s\" key in .service file\n", key);
}

static int run(const char *name) {
	_cleanup_free_ char *config_override = NULL, *data = NULL, *user = NULL;
	_cleanup_strv_free_ char **dirs = NULL, **argv = NULL;
	_cleanup_(service_file_freep) ServiceFile *f = NULL;
	const char *config = SYSTEM_CONFIG;
	struct passwd *pw;
	size_t size = 0;
	int r;

	/* a test configuration, never when running with privileges we were
	 * not started with */
	if (getuid() == geteuid() && getgid() == getegid()) {
		const char *e = secure_getenv(LAUNCH_HELPER_CONFIG_ENV);
		if (e && *e) {
			if (!(config_override = strdup(e)))
				return LAUNCH_HELPER_EXIT_NO_MEMORY;
			config = config_override;
		}
	}

	/* 1. the environment */
	if (clearenv() != 0)
		return LAUNCH_HELPER_EXIT_SETUP_FAILED;
	if (setenv("DBUS_STARTER_ADDRESS", SYSTEM_BUS_DEFAULT_ADDRESS, 1) < 0 ||
	    setenv("DBUS_STARTER_BUS_TYPE", "system", 1) < 0)
		return LAUNCH_HELPER_EXIT_NO_MEMORY;

	/* 2. the name */
	if (!launch_helper_bus_name_is_valid(name))
		return LAUNCH_HELPER_EXIT_NAME_INVALID;

	/* 3. the configuration */
	r = read_file(config, &data, &size);
	if (r == -ENOMEM)
		return LAUNCH_HELPER_EXIT_NO_MEMORY;
	if (r < 0)
		return fail(LAUNCH_HELPER_EXIT_GENERIC_FAILURE, "Failed to open \"%s\": %s", config, strerror(-r));
	r = launch_helper_config_parse(data, size, &user, &dirs);
	if (r == -ENOMEM)
		return LAUNCH_HELPER_EXIT_NO_MEMORY;
	if (r < 0)
		return fail(LAUNCH_HELPER_EXIT_GENERIC_FAILURE, "Error in file %s: not well-formed XML", config);

	/* 4. who runs us */
	pw = getpwnam(user);
	if (!pw || pw->pw_uid != getuid() || geteuid() != 0)
		return LAUNCH_HELPER_EXIT_PERMISSIONS_INVALID;

	/* 5. the .service file */
	for (size_t i = 0; dirs[i] && !f; i++) {
		_cleanup_free_ char *path = NULL;
		if (asprintf(&path, "%s/%s.service", dirs[i], name) < 0)
			return LAUNCH_HELPER_EXIT_NO_MEMORY;
		r = service_file_load_full(path, SERVICE_PARSE_KEYS_OPTIONAL, &f, NULL);
		if (r == -ENOMEM)
			return LAUNCH_HELPER_EXIT_NO_MEMORY;
	}
	if (!f)
		return LAUNCH_HELPER_EXIT_SERVICE_NOT_FOUND;
	/* as dbus-daemon-launch-helper: a missing key is a plain failure
	 * (bus_desktop_file_get_string()'s DBUS_ERROR_FAILED, exit 1), another
	 * Name= an invalid file */
	if (!f->name)
		return fail_missing_key("Name");
	if (!streq(f->name, name))
		return LAUNCH_HELPER_EXIT_FILE_INVALID;
	if (!f->exec)
		return fail_missing_key("Exec");
	if (!f->user)
		return fail_missing_key("User");

	/* 6. the service, as its user */
	reset_oom_score_adj();
	pw = getpwnam(f->user);
	if (!pw)
		return LAUNCH_HELPER_EXIT_SETUP_FAILED;
	if (initgroups(f->user, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
		return LAUNCH_HELPER_EXIT_SETUP_FAILED;
	r = service_exec_split(f->exec, &argv);
	if (r == -ENOMEM)
		return LAUNCH_HELPER_EXIT_NO_MEMORY;
	if (r < 0 || !argv[0])
		return LAUNCH_HELPER_EXIT_INVALID_ARGS;
	execv(argv[0], argv);
	return LAUNCH_HELPER_EXIT_EXEC_FAILED;
}

int main(int argc, char *argv[]) {
	if (argc != 2 || streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "-?")) {
		fprintf(stderr, "busbridge-launch-helper service.to.activate\n");
		return 0;
	}
	if (ensure_standard_fds() < 0)
		return LAUNCH_HELPER_EXIT_GENERIC_FAILURE;
	return run(argv[1]);
}
