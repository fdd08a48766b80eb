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
#include "kshared/match.h"
#include "kshared/name.h"
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

/* a notification item as the bus writes one: header, payload, the name */
static struct kdbus_item *notification(void *buf, uint64_t type, uint64_t old_id, uint64_t new_id, const char *name) {
	struct kdbus_item *n = buf;

	memset(buf, 0, 256);
	n->type = type;
	if (type == KDBUS_ITEM_ID_ADD || type == KDBUS_ITEM_ID_REMOVE) {
		n->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_id_change);
		n->id_change.id = type == KDBUS_ITEM_ID_ADD ? new_id : old_id;
	} else {
		n->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change) + strlen(name) + 1;
		n->name_change.old_id.id = old_id;
		n->name_change.new_id.id = new_id;
		/* (through buf: name[0] has no size of its own) */
		memcpy((uint8_t *) buf + KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change), name,
		       strlen(name) + 1);
	}
	return n;
}

TEST(match_notification) {
	_Alignas(8) uint8_t buf[256];
	const uint64_t any = KDBUS_MATCH_ID_ANY;
	struct kdbus_item *n;

	n = notification(buf, KDBUS_ITEM_ID_ADD, 0, 5, NULL);
	check(kdbus_match_notification(KDBUS_ITEM_ID_ADD, any, any, NULL, n));
	check(kdbus_match_notification(KDBUS_ITEM_ID_ADD, any, 5, NULL, n));
	check(!kdbus_match_notification(KDBUS_ITEM_ID_ADD, any, 6, NULL, n));
	check(!kdbus_match_notification(KDBUS_ITEM_ID_REMOVE, any, any, NULL, n));	/* another type */

	n = notification(buf, KDBUS_ITEM_ID_REMOVE, 7, 0, NULL);
	check(kdbus_match_notification(KDBUS_ITEM_ID_REMOVE, 7, any, NULL, n));
	check(!kdbus_match_notification(KDBUS_ITEM_ID_REMOVE, 8, any, NULL, n));

	n = notification(buf, KDBUS_ITEM_NAME_CHANGE, 3, 4, "org.example.A");
	check(kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, any, any, NULL, n));
	check(kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, 3, 4, "org.example.A", n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, 4, any, NULL, n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, any, 3, NULL, n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, any, any, "org.example.B", n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_CHANGE, any, any, "org.example", n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_ADD, any, any, NULL, n));

	n = notification(buf, KDBUS_ITEM_NAME_ADD, 0, 9, "a.b");
	check(kdbus_match_notification(KDBUS_ITEM_NAME_ADD, 0, 9, "a.b", n));
	check(kdbus_match_notification(KDBUS_ITEM_NAME_ADD, any, 9, NULL, n));
	n = notification(buf, KDBUS_ITEM_NAME_REMOVE, 9, 0, "a.b");
	check(kdbus_match_notification(KDBUS_ITEM_NAME_REMOVE, 9, 0, "a.b", n));
	check(!kdbus_match_notification(KDBUS_ITEM_NAME_REMOVE, 9, 1, NULL, n));
	/* a rule of a type that is no notification matches nothing */
	n->type = KDBUS_ITEM_BLOOM_MASK;
	check(!kdbus_match_notification(KDBUS_ITEM_BLOOM_MASK, any, any, NULL, n));
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
	RUN(match_notification);

	return test_done();
}
