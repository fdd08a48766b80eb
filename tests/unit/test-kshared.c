/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kshared.c - the kdbus semantics shared by the userspace core and
 * kdbus.ko (kshared/), as the userspace build compiles them
 *
 * The conformance suite (tests/kdbus) checks the same decisions through
 * each backend's commands; this checks the functions themselves, edge by
 * edge.
 */

#include <string.h>

#include "kshared/name.h"
#include "tests/unit/test.h"

static const struct {
	const char *name;
	bool valid;		/* without wildcards */
	bool valid_wildcard;	/* with */
} names[] = {
	{ "a.b", true, true },
	{ "foo.bar.test", true, true },
	{ "a-b.c_d.e9", true, true },
	{ "_a.-b", true, true },
	{ "A.Z", true, true },
	{ "foo", false, false },
	{ "", false, false },
	{ ".", false, false },
	{ ".foo.bar", false, false },
	{ "foo.bar.", false, false },
	{ "foo..bar", false, false },
	{ "foo.1bar", false, false },
	{ "1foo.bar", false, false },
	{ "foo.b1r", true, true },
	{ "foo.b$r", false, false },
	{ "foo.b r", false, false },
	{ "foo/bar.baz", false, false },
	{ ":1.42", false, false },
	/* ASCII only: the kernel's isalpha() would take Latin-1 0xe9 */
	{ "foo.b\xe9r", false, false },
	{ "foo.b\xc3\xa9r", false, false },
	/* wildcards: a last element "*" only */
	{ "foo.bar.*", false, true },
	{ "a.*", false, true },
	{ "*", false, false },
	{ ".*", false, false },
	{ "*.foo", false, false },
	{ "foo.*.bar", false, false },
	{ "foo.b*", false, false },
	{ "foo.*x", false, false },
	{ "foo.**", false, false },
	{ "foo.bar*", false, false },
};

TEST(name_table) {
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool v = kdbus_name_is_valid(names[i].name, false);
		bool w = kdbus_name_is_valid(names[i].name, true);

		check(v == names[i].valid);
		check(w == names[i].valid_wildcard);
		if (v != names[i].valid || w != names[i].valid_wildcard)
			fprintf(stderr, "  \"%s\": %d/%d, expected %d/%d\n", names[i].name, v, w,
				names[i].valid, names[i].valid_wildcard);
	}
}

TEST(name_length) {
	char n[KDBUS_NAME_MAX_LEN + 8];

	/* KDBUS_NAME_MAX_LEN characters are valid, one more is not */
	memset(n, 'a', sizeof(n));
	n[1] = '.';
	n[KDBUS_NAME_MAX_LEN] = '\0';
	check(strlen(n) == KDBUS_NAME_MAX_LEN);
	check(kdbus_name_is_valid(n, false));
	n[KDBUS_NAME_MAX_LEN] = 'a';
	n[KDBUS_NAME_MAX_LEN + 1] = '\0';
	check(!kdbus_name_is_valid(n, false));
	check(!kdbus_name_is_valid(n, true));
	/* a wildcard counts its ".*" */
	n[KDBUS_NAME_MAX_LEN - 2] = '.';
	n[KDBUS_NAME_MAX_LEN - 1] = '*';
	n[KDBUS_NAME_MAX_LEN] = '\0';
	check(kdbus_name_is_valid(n, true));
	check(!kdbus_name_is_valid(n, false));
	n[KDBUS_NAME_MAX_LEN - 1] = 'a';
	n[KDBUS_NAME_MAX_LEN] = '.';
	n[KDBUS_NAME_MAX_LEN + 1] = '*';
	n[KDBUS_NAME_MAX_LEN + 2] = '\0';
	check(!kdbus_name_is_valid(n, true));
}

int main(void) {
	RUN(name_table);
	RUN(name_length);

	return test_done();
}
