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

#include "kshared/bloom.h"
#include "kshared/name.h"
#include "kshared/names.h"
#include "kshared/policy.h"
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

TEST(policy_name_parse) {
	size_t len = 99;
	bool w = true;

	check(kdbus_policy_name_parse("a.b", true, &len, &w) == 0 && len == 3 && !w);
	check(kdbus_policy_name_parse("a.b", false, &len, &w) == 0 && len == 3 && !w);
	check(kdbus_policy_name_parse("a.b.*", true, &len, &w) == 0 && len == 3 && w);
	check(kdbus_policy_name_parse("a.*", true, &len, &w) == 0 && len == 1 && w);
	/* on failure the outputs stay as they were */
	len = 99;
	w = false;
	check(kdbus_policy_name_parse("a.b.*", false, &len, &w) == -EINVAL && len == 99 && !w);
	check(kdbus_policy_name_parse("*", true, &len, &w) == -EINVAL);
	check(kdbus_policy_name_parse(".*", true, &len, &w) == -EINVAL);
	check(kdbus_policy_name_parse("a.*.b", true, &len, &w) == -EINVAL);
	check(kdbus_policy_name_parse("a", true, &len, &w) == -EINVAL);
	check(kdbus_policy_name_parse("", true, &len, &w) == -EINVAL && len == 99);
}

TEST(policy_precedence) {
	static const char name[] = "org.example.deep.name";
	size_t len = strlen(name);
	const char *expect[] = { "org.example.deep", "org.example", "org" };
	size_t i = 0;

	/* after the exact entry: each enclosing prefix, nearest first */
	while ((len = kdbus_policy_next_wildcard(name, len)) > 0) {
		check(i < 3);
		if (i < 3)
			check(len == strlen(expect[i]) && memcmp(name, expect[i], len) == 0);
		i++;
	}
	check(i == 3);
	check(kdbus_policy_next_wildcard("a.b", 3) == 1);
	check(kdbus_policy_next_wildcard("a.b", 1) == 0);
	check(kdbus_policy_next_wildcard("a.b", 0) == 0);
}

TEST(policy_key_hash) {
	check(kdbus_policy_key_hash(0x1234, false) == 0x1234);
	check(kdbus_policy_key_hash(0x1234, true) != 0x1234);
	/* the kernel keeps 32 bits: the wildcard mix must survive them */
	check((uint32_t)kdbus_policy_key_hash(0x1234, true) != 0x1234);
}

TEST(policy_access) {
	struct kdbus_policy_access a = { KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, 0 };

	check(kdbus_policy_access_is_valid(&a));
	a.type = KDBUS_POLICY_ACCESS_GROUP;
	check(kdbus_policy_access_is_valid(&a));
	a.type = KDBUS_POLICY_ACCESS_WORLD;
	a.access = KDBUS_POLICY_SEE;
	check(kdbus_policy_access_is_valid(&a));
	a.access = KDBUS_POLICY_OWN + 1;
	check(!kdbus_policy_access_is_valid(&a));
	a.access = KDBUS_POLICY_TALK;
	a.type = _KDBUS_POLICY_ACCESS_NULL;
	check(!kdbus_policy_access_is_valid(&a));
	a.type = KDBUS_POLICY_ACCESS_WORLD + 1;
	check(!kdbus_policy_access_is_valid(&a));
}

TEST(bloom_mask_size) {
	check(kdbus_bloom_mask_is_valid(64, 64));
	check(kdbus_bloom_mask_is_valid(192, 64));
	check(!kdbus_bloom_mask_is_valid(0, 64));
	check(!kdbus_bloom_mask_is_valid(32, 64));
	check(!kdbus_bloom_mask_is_valid(72, 64));
}

TEST(bloom_generations) {
	uint64_t buf[1 + 2] = {};
	struct kdbus_bloom_filter *f = (struct kdbus_bloom_filter *)buf;
	/* three generations of two words */
	const uint64_t mask[6] = { 0x1, 0, 0x2, 0, 0x4, 0x8 };

	f->data[0] = 0x1;
	f->generation = 0;
	check(kdbus_bloom_match(f, 2, mask, 3));
	f->generation = 1;		/* its generation's mask: 0x2 */
	check(!kdbus_bloom_match(f, 2, mask, 3));
	f->data[0] = 0x2;
	check(kdbus_bloom_match(f, 2, mask, 3));
	f->generation = 7;		/* newer than the rule: its last mask */
	check(!kdbus_bloom_match(f, 2, mask, 3));
	f->data[0] = 0x4;
	f->data[1] = 0x8 | 0x10;	/* a superset passes */
	check(kdbus_bloom_match(f, 2, mask, 3));
	f->data[1] = 0x10;
	check(!kdbus_bloom_match(f, 2, mask, 3));
	check(!kdbus_bloom_match(NULL, 2, mask, 3));
}

/* ---- names.h: the decision table of NAME_ACQUIRE and NAME_RELEASE ---- */

#define R_NONE		KDBUS_NAME_ROLE_NONE
#define R_PRIMARY	KDBUS_NAME_ROLE_PRIMARY
#define R_WAITER	KDBUS_NAME_ROLE_WAITER
#define R_ACTIVATOR	KDBUS_NAME_ROLE_ACTIVATOR
#define REPLACE		KDBUS_NAME_REPLACE_EXISTING
#define ALLOW		KDBUS_NAME_ALLOW_REPLACEMENT
#define QUEUE		KDBUS_NAME_QUEUE
#define IN_QUEUE	KDBUS_NAME_IN_QUEUE
#define ACTIVATOR	KDBUS_NAME_ACTIVATOR
#define PRIMARY		KDBUS_NAME_PRIMARY
#define ACQUIRED	KDBUS_NAME_ACQUIRED

static const struct {
	const char *row;
	/* the name, as the requester sees it */
	enum kdbus_name_role role;
	bool has_primary, has_activator;
	uint64_t primary_flags;
	uint64_t request;
	/* the decision */
	int error;
	enum kdbus_name_action action;
	uint64_t flags, return_flags, prev_flags;
	bool prev_leaves;
} acquire_rows[] = {
	{ "the activator asks for its own name", R_ACTIVATOR, false, true, 0, 0,
	  -EUCLEAN, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "the activator, behind an owner", R_ACTIVATOR, true, true, PRIMARY | ALLOW, REPLACE | QUEUE,
	  -EUCLEAN, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "a free name", R_NONE, false, false, 0, 0,
	  0, KDBUS_NAME_DO_TAKE, PRIMARY, PRIMARY | ACQUIRED, 0, false },
	{ "a free name: ALLOW and QUEUE kept, REPLACE not", R_NONE, false, false, 0, REPLACE | ALLOW | QUEUE,
	  0, KDBUS_NAME_DO_TAKE, ALLOW | QUEUE | PRIMARY, ALLOW | QUEUE | PRIMARY | ACQUIRED, 0, false },
	{ "only an activator: handover", R_NONE, false, true, 0, 0,
	  0, KDBUS_NAME_DO_HANDOVER, PRIMARY, PRIMARY | ACQUIRED, ACTIVATOR | IN_QUEUE, false },
	{ "only an activator: any flags take it", R_NONE, false, true, 0, QUEUE,
	  0, KDBUS_NAME_DO_HANDOVER, QUEUE | PRIMARY, QUEUE | PRIMARY | ACQUIRED, ACTIVATOR | IN_QUEUE, false },
	{ "the owner again: flags updated, no ACQUIRED", R_PRIMARY, true, false, PRIMARY, ALLOW,
	  0, KDBUS_NAME_DO_UPDATE, ALLOW | PRIMARY, ALLOW | PRIMARY, 0, false },
	{ "the owner again drops ALLOW and QUEUE", R_PRIMARY, true, true, PRIMARY | ALLOW | QUEUE, 0,
	  0, KDBUS_NAME_DO_UPDATE, PRIMARY, PRIMARY, 0, false },
	{ "the owner again with REPLACE", R_PRIMARY, true, false, PRIMARY | ALLOW, REPLACE,
	  0, KDBUS_NAME_DO_UPDATE, PRIMARY, PRIMARY, 0, false },
	{ "replace an owner without QUEUE: it loses the name", R_NONE, true, false, PRIMARY | ALLOW, REPLACE,
	  0, KDBUS_NAME_DO_REPLACE, PRIMARY, PRIMARY | ACQUIRED, 0, true },
	{ "replace an owner with QUEUE: it waits", R_NONE, true, false, PRIMARY | ALLOW | QUEUE, REPLACE,
	  0, KDBUS_NAME_DO_REPLACE, PRIMARY, PRIMARY | ACQUIRED, ALLOW | QUEUE | IN_QUEUE, false },
	{ "a waiter replaces the owner", R_WAITER, true, false, PRIMARY | ALLOW, REPLACE | QUEUE,
	  0, KDBUS_NAME_DO_REPLACE, QUEUE | PRIMARY, QUEUE | PRIMARY | ACQUIRED, 0, true },
	{ "replace with an activator behind", R_NONE, true, true, PRIMARY | ALLOW | QUEUE, REPLACE | ALLOW,
	  0, KDBUS_NAME_DO_REPLACE, ALLOW | PRIMARY, ALLOW | PRIMARY | ACQUIRED, ALLOW | QUEUE | IN_QUEUE, false },
	{ "queue behind an owner", R_NONE, true, false, PRIMARY, QUEUE,
	  0, KDBUS_NAME_DO_QUEUE, QUEUE | IN_QUEUE, QUEUE | IN_QUEUE | ACQUIRED, 0, false },
	{ "queue behind an owner that allows replacement", R_NONE, true, false, PRIMARY | ALLOW, QUEUE | ALLOW,
	  0, KDBUS_NAME_DO_QUEUE, ALLOW | QUEUE | IN_QUEUE, ALLOW | QUEUE | IN_QUEUE | ACQUIRED, 0, false },
	{ "a waiter queues again: it stays", R_WAITER, true, false, PRIMARY, QUEUE,
	  0, KDBUS_NAME_DO_STAY, QUEUE | IN_QUEUE, QUEUE | IN_QUEUE, 0, false },
	{ "a waiter queues again with ALLOW", R_WAITER, true, true, PRIMARY, QUEUE | ALLOW,
	  0, KDBUS_NAME_DO_STAY, ALLOW | QUEUE | IN_QUEUE, ALLOW | QUEUE | IN_QUEUE, 0, false },
	{ "REPLACE refused, QUEUE: next in line", R_NONE, true, false, PRIMARY, REPLACE | QUEUE,
	  0, KDBUS_NAME_DO_QUEUE_NEXT, QUEUE | IN_QUEUE, QUEUE | IN_QUEUE | ACQUIRED, 0, false },
	{ "a waiter: REPLACE refused, QUEUE: next in line", R_WAITER, true, false, PRIMARY | QUEUE, REPLACE | QUEUE,
	  0, KDBUS_NAME_DO_QUEUE_NEXT, QUEUE | IN_QUEUE, QUEUE | IN_QUEUE, 0, false },
	{ "taken, no flags", R_NONE, true, false, PRIMARY, 0,
	  -EEXIST, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "taken, REPLACE refused, no QUEUE", R_NONE, true, false, PRIMARY | QUEUE, REPLACE,
	  -EEXIST, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "taken, ALLOW only", R_NONE, true, true, PRIMARY | ALLOW, ALLOW,
	  -EEXIST, KDBUS_NAME_DO_REFUSE, ALLOW, ALLOW, 0, false },
	{ "a waiter without QUEUE leaves", R_WAITER, true, false, PRIMARY, 0,
	  -EEXIST, KDBUS_NAME_DO_LEAVE, 0, 0, 0, false },
	{ "a waiter, REPLACE refused, without QUEUE leaves", R_WAITER, true, true, PRIMARY | QUEUE, REPLACE,
	  -EEXIST, KDBUS_NAME_DO_LEAVE, 0, 0, 0, false },
	/* an activator's HELLO */
	{ "activator of a free name", R_NONE, false, false, 0, ACTIVATOR,
	  0, KDBUS_NAME_DO_ACTIVATE, ACTIVATOR | PRIMARY, ACTIVATOR | PRIMARY | ACQUIRED, 0, false },
	{ "activator behind an owner", R_NONE, true, false, PRIMARY | ALLOW, ACTIVATOR,
	  0, KDBUS_NAME_DO_ACTIVATE_BEHIND, ACTIVATOR | IN_QUEUE, ACTIVATOR | IN_QUEUE | ACQUIRED, 0, false },
	{ "activator: other flags do not count", R_NONE, true, false, PRIMARY | ALLOW, ACTIVATOR | REPLACE | QUEUE,
	  0, KDBUS_NAME_DO_ACTIVATE_BEHIND, ACTIVATOR | IN_QUEUE, ACTIVATOR | IN_QUEUE | ACQUIRED, 0, false },
	{ "a second activator", R_NONE, false, true, 0, ACTIVATOR,
	  -EEXIST, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "a second activator behind an owner", R_NONE, true, true, PRIMARY, ACTIVATOR,
	  -EEXIST, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "activator: already the owner", R_PRIMARY, true, false, PRIMARY, ACTIVATOR,
	  -EALREADY, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "activator: already waiting", R_WAITER, true, true, PRIMARY, ACTIVATOR,
	  -EALREADY, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
	{ "activator: already its activator", R_ACTIVATOR, false, true, 0, ACTIVATOR,
	  -EALREADY, KDBUS_NAME_DO_REFUSE, 0, 0, 0, false },
};

TEST(names_acquire_table) {
	for (size_t i = 0; i < sizeof(acquire_rows) / sizeof(acquire_rows[0]); i++) {
		const __typeof__(acquire_rows[0]) *t = &acquire_rows[i];
		struct kdbus_name_state s = {
			.role = t->role,
			.has_primary = t->has_primary,
			.has_waiter = t->role == R_WAITER,
			.has_activator = t->has_activator,
			.primary_flags = t->primary_flags,
		};
		struct kdbus_name_decision d = kdbus_name_decide_acquire(&s, t->request);
		bool ok = d.error == t->error && d.action == t->action &&
			  (d.action == KDBUS_NAME_DO_REFUSE || d.flags == t->flags) &&
			  d.return_flags == t->return_flags && d.prev_leaves == t->prev_leaves &&
			  ((t->action != KDBUS_NAME_DO_HANDOVER && t->action != KDBUS_NAME_DO_REPLACE) ||
			   t->prev_leaves || d.prev_flags == t->prev_flags);

		check(ok);
		if (!ok)
			fprintf(stderr, "  %s: error %d action %d flags %#llx return %#llx prev %#llx%s\n", t->row,
				d.error, d.action, (unsigned long long)d.flags,
				(unsigned long long)d.return_flags, (unsigned long long)d.prev_flags,
				d.prev_leaves ? " leaves" : "");
	}
}

/* the ACTIVATOR flag of a request hands it to kdbus_name_decide_activator() */
TEST(names_activator_same) {
	struct kdbus_name_state s = { .role = R_NONE, .has_primary = true, .primary_flags = PRIMARY };
	struct kdbus_name_decision a = kdbus_name_decide_acquire(&s, ACTIVATOR);
	struct kdbus_name_decision b = kdbus_name_decide_activator(&s);

	check(a.error == b.error && a.action == b.action && a.flags == b.flags &&
	      a.return_flags == b.return_flags);
}

/* over every state and request: what holds whatever the row */
TEST(names_acquire_invariants) {
	static const enum kdbus_name_role roles[] = { R_NONE, R_PRIMARY, R_WAITER, R_ACTIVATOR };
	unsigned n = 0;

	for (size_t r = 0; r < 4; r++)
	for (unsigned st = 0; st < 4; st++)
	for (uint64_t pf = 0; pf <= (ALLOW | QUEUE); pf += ALLOW)
	for (uint64_t req = 0; req <= (REPLACE | ALLOW | QUEUE); req++) {
		struct kdbus_name_state s = {
			.role = roles[r],
			.has_primary = st & 1,
			.has_waiter = roles[r] == R_WAITER,
			.has_activator = (st & 2) || roles[r] == R_ACTIVATOR,
			.primary_flags = (st & 1) ? (pf & (ALLOW | QUEUE)) | PRIMARY : 0,
		};
		struct kdbus_name_decision d;

		/* a requester on the queue implies an owner */
		if ((roles[r] == R_PRIMARY || roles[r] == R_WAITER) && !s.has_primary)
			continue;
		d = kdbus_name_decide_acquire(&s, req);
		n++;
		/* an error exactly when refused or leaving */
		check(!d.error == (d.action != KDBUS_NAME_DO_REFUSE && d.action != KDBUS_NAME_DO_LEAVE));
		/* never both PRIMARY and IN_QUEUE; never REPLACE_EXISTING kept */
		check((d.flags & (PRIMARY | IN_QUEUE)) != (PRIMARY | IN_QUEUE));
		check(!(d.flags & (REPLACE | ACQUIRED | ACTIVATOR)));
		/* the saved flags are the request's */
		if (!d.error)
			check((d.flags & (ALLOW | QUEUE)) == (req & (ALLOW | QUEUE)));
		/* return_flags: flags, ACQUIRED at most added */
		check((d.return_flags & ~(uint64_t)ACQUIRED) == (d.action == KDBUS_NAME_DO_REFUSE ? d.return_flags
											  & ~(uint64_t)ACQUIRED : d.flags));
		/* ACQUIRED: the call put a newcomer on the name, or gave it to a waiter */
		if (d.return_flags & ACQUIRED)
			check(roles[r] == R_NONE || d.action == KDBUS_NAME_DO_REPLACE);
		if (roles[r] == R_NONE && !d.error)
			check(d.return_flags & ACQUIRED);
		/* a free name or one only its activator holds: anyone but the activator takes it */
		if (!s.has_primary && roles[r] != R_ACTIVATOR)
			check(d.action == (s.has_activator ? KDBUS_NAME_DO_HANDOVER : KDBUS_NAME_DO_TAKE));
		/* the activator never gets its own name */
		if (roles[r] == R_ACTIVATOR)
			check(d.error == -EUCLEAN);
		/* REPLACE only when asked for and allowed */
		if (d.action == KDBUS_NAME_DO_REPLACE)
			check((req & REPLACE) && (s.primary_flags & ALLOW) && roles[r] != R_PRIMARY);
		else if (s.has_primary && (req & REPLACE) && (s.primary_flags & ALLOW))
			check(roles[r] == R_PRIMARY || roles[r] == R_ACTIVATOR);
		/* prev_leaves only on REPLACE, for an owner without QUEUE */
		check(d.prev_leaves == (d.action == KDBUS_NAME_DO_REPLACE && !(s.primary_flags & QUEUE)));
	}
	check(n == 4 * 4 * 4 * 8 - 2 * 2 * 4 * 8);
}

static const struct {
	const char *row;
	enum kdbus_name_role role;
	bool has_primary, has_waiter, has_activator;
	int result;
} release_rows[] = {
	{ "not on the name", R_NONE, true, true, true, -EADDRINUSE },
	{ "not on a free name", R_NONE, false, false, false, -EADDRINUSE },
	{ "a waiter", R_WAITER, true, true, false, KDBUS_NAME_RELEASE_SILENT },
	{ "a waiter, an activator", R_WAITER, true, true, true, KDBUS_NAME_RELEASE_SILENT },
	{ "the activator behind an owner", R_ACTIVATOR, true, false, true, KDBUS_NAME_RELEASE_SILENT },
	{ "the activator holding the name", R_ACTIVATOR, false, false, true, KDBUS_NAME_RELEASE_REMOVE },
	{ "the owner, a waiter", R_PRIMARY, true, true, false, KDBUS_NAME_RELEASE_TO_WAITER },
	{ "the owner, a waiter before the activator", R_PRIMARY, true, true, true, KDBUS_NAME_RELEASE_TO_WAITER },
	{ "the owner, the activator", R_PRIMARY, true, false, true, KDBUS_NAME_RELEASE_TO_ACTIVATOR },
	{ "the owner alone", R_PRIMARY, true, false, false, KDBUS_NAME_RELEASE_REMOVE },
};

TEST(names_release_table) {
	for (size_t i = 0; i < sizeof(release_rows) / sizeof(release_rows[0]); i++) {
		struct kdbus_name_state s = {
			.role = release_rows[i].role,
			.has_primary = release_rows[i].has_primary,
			.has_waiter = release_rows[i].has_waiter,
			.has_activator = release_rows[i].has_activator,
			.primary_flags = release_rows[i].has_primary ? PRIMARY : 0,
		};
		int r = kdbus_name_decide_release(&s);

		check(r == release_rows[i].result);
		if (r != release_rows[i].result)
			fprintf(stderr, "  %s: %d, expected %d\n", release_rows[i].row, r, release_rows[i].result);
	}
}

TEST(names_flags) {
	/* the activator hands over and waits; it holds the name again */
	check(kdbus_name_flags_waiting(ACTIVATOR | PRIMARY) == (ACTIVATOR | IN_QUEUE));
	check(kdbus_name_flags_primary(ACTIVATOR | IN_QUEUE) == (ACTIVATOR | PRIMARY));
	/* a replaced owner keeps what it asked for */
	check(kdbus_name_flags_waiting(ALLOW | QUEUE | PRIMARY) == (ALLOW | QUEUE | IN_QUEUE));
	check(kdbus_name_flags_primary(QUEUE | IN_QUEUE) == (QUEUE | PRIMARY));
	check(kdbus_name_flags_primary(kdbus_name_flags_waiting(ALLOW | PRIMARY)) == (ALLOW | PRIMARY));
	check(KDBUS_NAME_ACQUIRE_FLAGS == (REPLACE | ALLOW | QUEUE));
	check(KDBUS_NAME_SAVED_FLAGS == (ALLOW | QUEUE));
}

int main(void) {
	RUN(name_table);
	RUN(name_length);
	RUN(policy_name_parse);
	RUN(policy_precedence);
	RUN(policy_key_hash);
	RUN(policy_access);
	RUN(bloom_mask_size);
	RUN(bloom_generations);
	RUN(names_acquire_table);
	RUN(names_activator_same);
	RUN(names_acquire_invariants);
	RUN(names_release_table);
	RUN(names_flags);

	return test_done();
}
