/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kdbus-test.c - runner of the kdbus conformance suite
 *
 * Every test gets a fresh bus and one ordinary connection (ACCEPT_FD).
 * The backend comes from KDBUS_TEST_BACKEND: "userspace" (default) or
 * "ioctl" (exit 77 when /sys/fs/kdbus/control does not exist).  An
 * optional argument selects the tests whose name contains it.
 * KDBUS_TEST_SKIP names a file of lines "<test> <reason>" (# comments):
 * those tests are not run and are reported as skipped with their reason
 * (the kernel module lists there what it does not implement yet).  Output
 * is TAP; the exit status is 1 if any test failed.
 */

#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus-test.h"

unsigned kt_bus_counter;
const char *kt_skip_reason;

typedef struct Test {
	const char *name;
	int (*fn)(Env *env);
} Test;

#define KT_ENTRY(n) { #n, test_##n },
static const Test tests[] = { KT_TESTS(KT_ENTRY) };

static int run_one(KdbusBackend backend, const Test *t) {
	Env env = { .backend = backend };
	int r;

	snprintf(env.name, sizeof(env.name), "%u-kt%u-%u", (unsigned)geteuid(), (unsigned)getpid(),
		 ++kt_bus_counter);
	r = kt_bus_make(backend, env.name, 0, &env.bus);
	if (r < 0) {
		fprintf(stderr, "# bus make failed: %s\n", strerror(-r));
		return TEST_ERR;
	}
	env.conn = kt_hello(&env, KDBUS_HELLO_ACCEPT_FD);
	if (!env.conn) {
		fprintf(stderr, "# hello failed\n");
		kdbus_bus_close(env.bus);
		return TEST_ERR;
	}
	r = t->fn(&env);
	kdbus_conn_close(env.conn);
	kdbus_bus_close(env.bus);
	return r;
}

/* the reason @name is listed in the skip file, or NULL */
static const char *skip_reason(const char *skip_file, const char *name) {
	static char line[512];
	const char *reason = NULL;
	FILE *f;

	if (!skip_file || !*skip_file)
		return NULL;
	f = fopen(skip_file, "re");
	if (!f)
		return NULL;
	while (!reason && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, " \t\n");
		char *r;

		if (line[0] == '#' || n != strlen(name) || strncmp(line, name, n) != 0)
			continue;
		r = line + n;
		while (*r && isspace((unsigned char)*r))
			r++;
		r[strcspn(r, "\n")] = 0;
		reason = *r ? r : "listed in KDBUS_TEST_SKIP";
	}
	fclose(f);
	return reason;
}

int main(int argc, char **argv) {
	const char *skip_file = getenv("KDBUS_TEST_SKIP");
	const char *b = getenv("KDBUS_TEST_BACKEND");
	KdbusBackend backend = KDBUS_BACKEND_USERSPACE;
	unsigned n = 0, failed = 0, skipped = 0;

	signal(SIGPIPE, SIG_IGN);
	if (b && strcmp(b, "ioctl") == 0) {
		backend = KDBUS_BACKEND_IOCTL;
		if (access("/sys/fs/kdbus/control", F_OK) < 0) {
			printf("1..0 # SKIP no /sys/fs/kdbus/control\n");
			return 77;
		}
	} else if (b && *b && strcmp(b, "userspace") != 0) {
		fprintf(stderr, "unknown KDBUS_TEST_BACKEND=%s\n", b);
		return 2;
	}

	size_t total = sizeof(tests) / sizeof(tests[0]), selected = 0;

	for (size_t i = 0; i < total; i++)
		if (argc < 2 || strstr(tests[i].name, argv[1]))
			selected++;
	printf("1..%zu\n", selected);
	for (size_t i = 0; i < total; i++) {
		const Test *t = &tests[i];
		int r;

		if (argc >= 2 && !strstr(t->name, argv[1]))
			continue;
		n++;
		const char *why = skip_reason(skip_file, t->name);

		if (why) {
			printf("ok %u - test_%s # SKIP %s\n", n, t->name, why);
			skipped++;
			continue;
		}
		kt_skip_reason = NULL;
		r = run_one(backend, t);
		fflush(stderr);
		if (r == TEST_OK) {
			printf("ok %u - test_%s\n", n, t->name);
		} else if (r == TEST_SKIP) {
			printf("ok %u - test_%s # SKIP%s%s\n", n, t->name, kt_skip_reason ? " " : "",
			       kt_skip_reason ? kt_skip_reason : "");
			skipped++;
		} else {
			printf("not ok %u - test_%s\n", n, t->name);
			failed++;
		}
		fflush(stdout);
	}
	printf("# %u tests, %u passed, %u skipped, %u failed (backend %s)\n", n, n - failed - skipped,
	       skipped, failed, backend == KDBUS_BACKEND_IOCTL ? "ioctl" : "userspace");
	return failed ? 1 : 0;
}
