/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test.h - the one harness of the unit tests.
 *
 *   TEST(name) { ... }        defines a test (static void test_name(void))
 *   RUN(name);                runs it and prints its TAP line
 *   check(expr);              an expectation: counted, reported, goes on
 *   assert(expr);             a precondition: stops the program
 *   test_skip("why %s", x);   the running test is skipped (then return)
 *   return test_done();       the plan, "N passed, N failed, N skipped";
 *                             exit 1 if any test failed, 77 if every test
 *                             was skipped, else 0
 *
 * A test fails when one of its check()s failed.  check()s outside any
 * test count against the program as a whole.
 */
#pragma once

#undef NDEBUG
#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
	unsigned n_run, n_failed, n_skipped;
	unsigned n_checks, n_checks_failed;
	bool skipping;
	char skip_reason[256];
} test_state;

#define TEST(name) static void test_##name(void)
#define RUN(name) test_run_one(#name, test_##name)

#define check(expr)                                                                    \
	do {                                                                           \
		test_state.n_checks++;                                                 \
		if (!(expr)) {                                                         \
			test_state.n_checks_failed++;                                  \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#expr);                                                \
		}                                                                      \
	} while (0)

__attribute__((format(printf, 1, 2), unused)) static void test_skip(const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(test_state.skip_reason, sizeof(test_state.skip_reason), fmt, ap);
	va_end(ap);
	test_state.skipping = true;
}

__attribute__((unused)) static void test_run_one(const char *name, void (*fn)(void)) {
	unsigned failed_before = test_state.n_checks_failed;

	test_state.skipping = false;
	fn();
	test_state.n_run++;
	if (test_state.n_checks_failed != failed_before) {
		test_state.n_failed++;
		printf("not ok %u - %s\n", test_state.n_run, name);
	} else if (test_state.skipping) {
		test_state.n_skipped++;
		printf("ok %u - %s # SKIP %s\n", test_state.n_run, name, test_state.skip_reason);
	} else {
		printf("ok %u - %s\n", test_state.n_run, name);
	}
	fflush(stdout);
}

__attribute__((unused)) static int test_done(void) {
	/* a check() that failed outside any RUN() fails the program too */
	unsigned failed = test_state.n_failed;
	if (failed == 0 && test_state.n_checks_failed > 0)
		failed = 1;

	printf("1..%u\n", test_state.n_run);
	if (test_state.n_checks)
		printf("# %u checks, %u failed\n", test_state.n_checks, test_state.n_checks_failed);
	printf("%u passed, %u failed, %u skipped\n", test_state.n_run - test_state.n_failed - test_state.n_skipped,
	       failed, test_state.n_skipped);
	if (failed)
		return 1;
	if (test_state.n_run > 0 && test_state.n_skipped == test_state.n_run)
		return 77;
	return 0;
}
