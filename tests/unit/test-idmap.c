/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdio.h>

#include "util/idmap.h"
#include "tests/unit/test.h"

static void test_empty(void) {
	IdMap m = IDMAP_INIT;
	assert(idmap_get(&m, 1) == NULL);
	assert(idmap_remove(&m, 1) == NULL);
	assert(idmap_put(&m, 0, &m) == -EINVAL);
	idmap_done(&m);
}

static void test_put_get_replace(void) {
	IdMap m = IDMAP_INIT;
	int a, b;
	assert(idmap_put(&m, 7, &a) == 0);
	assert(idmap_get(&m, 7) == &a);
	assert(idmap_put(&m, 7, &b) == 0);
	assert(idmap_get(&m, 7) == &b);
	assert(m.n == 1);
	idmap_done(&m);
}

/* many keys, removals in a pattern that exercises backward-shift deletion
 * across wrap-around, checked against a plain array */
static void test_against_array(void) {
	enum { N = 20000 };
	static char present[N + 1];
	IdMap m = IDMAP_INIT;
	uint64_t x = 88172645463325252ULL;

	for (uint64_t k = 1; k <= N; k++) {
		assert(idmap_put(&m, k, (void *) (uintptr_t) (k * 3)) == 0);
		present[k] = 1;
	}
	for (int round = 0; round < 4 * N; round++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t k = x % N + 1;
		if (present[k]) {
			assert(idmap_remove(&m, k) == (void *) (uintptr_t) (k * 3));
			present[k] = 0;
		} else {
			assert(idmap_put(&m, k, (void *) (uintptr_t) (k * 3)) == 0);
			present[k] = 1;
		}
	}
	size_t n = 0;
	for (uint64_t k = 1; k <= N; k++) {
		void *v = idmap_get(&m, k);
		if (present[k]) {
			assert(v == (void *) (uintptr_t) (k * 3));
			n++;
		} else
			assert(v == NULL);
	}
	assert(n == m.n);
	idmap_done(&m);
}

int main(void) {
	RUN(empty);
	RUN(put_get_replace);
	RUN(against_array);
	return test_done();
}
