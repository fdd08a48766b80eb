/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kdbus-core.c - unit tests of the userspace core's building blocks:
 * hash tables (hash.c), item and name validation (item.c), the bloom test
 * (match.c) and the policy db lookup (policy.c).  No bus is made.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/hash.h"
#include "kdbus/item.h"
#include "kdbus/match.h"
#include "kdbus/metadata.h"
#include "kdbus/policy.h"
#include "util/list.h"
#include "tests/unit/test.h"

typedef struct Obj {
	KdbusHashNode node;
	uint64_t key;
} Obj;

static void test_hash_grow_remove(void) {
	KdbusHash h = KDBUS_HASH_INIT;
	static Obj o[10000];
	KdbusHashNode *n;
	size_t found = 0;

	for (size_t i = 0; i < 10000; i++) {
		o[i].key = i * 7919;
		assert(kdbus_hash_add(&h, &o[i].node, kdbus_hash_u64(o[i].key)) == 0);
	}
	assert(h.n_entries == 10000);
	assert(h.n_buckets >= 10000);
	for (size_t i = 0; i < 10000; i += 2)
		kdbus_hash_remove(&h, &o[i].node);
	assert(h.n_entries == 5000);
	for (size_t i = 0; i < 10000; i++) {
		uint64_t hv = kdbus_hash_u64(i * 7919);
		bool hit = false;

		kdbus_hash_for_each_candidate(n, &h, hv)
			if (((Obj *)n)->key == i * 7919)
				hit = true;
		assert(hit == (i % 2 == 1));
	}
	while ((n = kdbus_hash_pop(&h)))
		found++;
	assert(found == 5000 && h.n_entries == 0);
	kdbus_hash_deinit(&h);
}

static void test_hash_str(void) {
	assert(kdbus_hash_str("org.foo", 7) == kdbus_hash_str("org.foo.bar", 7));
	assert(kdbus_hash_str("org.foo", 7) != kdbus_hash_str("org.fop", 7));
}

static void test_name_is_valid(void) {
	assert(kdbus_name_is_valid("a.b", false));
	assert(kdbus_name_is_valid("org.freedesktop.DBus", false));
	assert(kdbus_name_is_valid("a-b.c_d", false));
	assert(!kdbus_name_is_valid("a", false));
	assert(!kdbus_name_is_valid("a.", false));
	assert(!kdbus_name_is_valid(".a", false));
	assert(!kdbus_name_is_valid("a..b", false));
	assert(!kdbus_name_is_valid("a.1b", false));
	assert(kdbus_name_is_valid("a.b1", false));
	assert(!kdbus_name_is_valid("a.b.*", false));
	assert(kdbus_name_is_valid("a.b.*", true));
	assert(!kdbus_name_is_valid("a.*.b", true));
	assert(!kdbus_name_is_valid("*", true));
}

static void test_sysname(void) {
	assert(kdbus_sysname_is_valid("0-system") == 0);
	assert(kdbus_sysname_is_valid("1000-user.x_y") == 0);
	assert(kdbus_sysname_is_valid("-x") == -EINVAL);
	assert(kdbus_sysname_is_valid("x-") == -EINVAL);
	assert(kdbus_sysname_is_valid("a/b") == -EINVAL);
	assert(kdbus_sysname_is_valid("") == -EINVAL);
	assert(kdbus_sysname_is_valid("0123456789012345678901234567890123456789012345678901234567890123") ==
	       -ENAMETOOLONG);
}

static void test_items_validate(void) {
	uint64_t buf[16] = {};
	struct kdbus_item *it = (struct kdbus_item *)buf;

	it->size = KDBUS_ITEM_HEADER_SIZE + 4;
	it->type = KDBUS_ITEM_NAME;
	strcpy(it->str, "a.b");
	assert(kdbus_items_validate(it, it->size) == 0);
	/* the list must end at ALIGN8 of the container */
	assert(kdbus_items_validate(it, 24) == 0);
	assert(kdbus_items_validate(it, 32) == -EINVAL);
	it->str[3] = 'x';
	assert(kdbus_items_validate(it, 20) == -EINVAL);
	it->type = KDBUS_ITEM_ID;
	it->size = KDBUS_ITEM_HEADER_SIZE + 4;
	assert(kdbus_items_validate(it, 24) == -EINVAL);
	it->size = KDBUS_ITEM_HEADER_SIZE + 8;
	assert(kdbus_items_validate(it, 24) == 0);
	it->size = 8;
	assert(kdbus_items_validate(it, 24) == -EINVAL);
}

static void test_args_negotiate(void) {
	struct {
		struct kdbus_cmd cmd;
		struct kdbus_item_hdr {
			uint64_t size, type;
			uint64_t v[2];
		} n;
	} c = {};
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME, .mandatory = true },
	};

	c.cmd.size = sizeof(c);
	c.cmd.flags = KDBUS_FLAG_NEGOTIATE;
	c.n.size = sizeof(c.n);
	c.n.type = KDBUS_ITEM_NEGOTIATE;
	c.n.v[0] = KDBUS_ITEM_NAME;
	c.n.v[1] = KDBUS_ITEM_FDS;
	assert(kdbus_args_parse(&c, sizeof(c.cmd), offsetof(struct kdbus_cmd, items), 0x5, argv, 2) == 1);
	assert(c.cmd.flags == 0x5);
	assert(c.n.v[0] == KDBUS_ITEM_NAME && c.n.v[1] == 0);
	c.cmd.flags = 0;
	/* without NEGOTIATE the mandatory NAME is missing */
	assert(kdbus_args_parse(&c, sizeof(c.cmd), offsetof(struct kdbus_cmd, items), 0x5, argv, 2) == -EINVAL);
	c.cmd.flags = 0x8;
	assert(kdbus_args_parse(&c, sizeof(c.cmd), offsetof(struct kdbus_cmd, items), 0x5, argv, 2) == -EINVAL);
	assert(kdbus_args_parse((uint8_t *)&c + 4, 24, 24, 0, argv, 2) == -EFAULT);
}

static void test_bloom(void) {
	uint64_t fbuf[1 + 2] = {}, mask[2 * 2] = {};
	struct kdbus_bloom_filter *f = (struct kdbus_bloom_filter *)fbuf;

	assert(kdbus_bloom_match(f, 2, mask, 1));		/* zero mask: everything */
	mask[0] = 0x3;
	assert(!kdbus_bloom_match(f, 2, mask, 1));		/* zero filter: nothing */
	f->data[0] = 0x1;
	assert(!kdbus_bloom_match(f, 2, mask, 1));
	f->data[0] = 0x7;
	assert(kdbus_bloom_match(f, 2, mask, 1));		/* superset */
	mask[2] = 0x10;					/* generation 1 */
	f->generation = 1;
	assert(!kdbus_bloom_match(f, 2, mask, 2));
	f->data[0] = 0x10;
	assert(kdbus_bloom_match(f, 2, mask, 2));
	f->generation = 9;					/* clamps to the last mask */
	assert(kdbus_bloom_match(f, 2, mask, 2));
	assert(!kdbus_bloom_match(NULL, 2, mask, 2));
}

static size_t put(uint8_t *p, uint64_t type, const void *d, size_t n) {
	struct kdbus_item *it = (struct kdbus_item *)p;

	it->size = KDBUS_ITEM_HEADER_SIZE + n;
	it->type = type;
	memcpy(it->data, d, n);
	return KDBUS_ALIGN8(it->size);
}

static void test_policy_lookup(void) {
	KdbusPolicyDb db;
	List owner = LIST_INIT(owner), other = LIST_INIT(other);
	uint64_t buf[64] = {};
	uint8_t *p = (uint8_t *)buf;
	size_t n = 0;
	struct kdbus_policy_access own = { KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, 1000 };
	struct kdbus_policy_access talk = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 };
	KdbusMeta u1000 = { .creds = { .euid = 1000 } }, u2 = { .creds = { .euid = 2 } };

	kdbus_policy_db_init(&db);
	n += put(p + n, KDBUS_ITEM_NAME, "a.b.*", 6);
	n += put(p + n, KDBUS_ITEM_POLICY_ACCESS, &own, sizeof(own));
	n += put(p + n, KDBUS_ITEM_NAME, "a.b.c", 6);
	n += put(p + n, KDBUS_ITEM_POLICY_ACCESS, &talk, sizeof(talk));
	assert(kdbus_policy_set(&db, (struct kdbus_item *)buf, n, 0, true, &owner, &owner) == 0);

	assert(kdbus_policy_query(&db, &u1000, "a.b.x") == KDBUS_POLICY_OWN);
	assert(kdbus_policy_query(&db, &u1000, "a.b.x.y.z") == KDBUS_POLICY_OWN);	/* any depth */
	assert(kdbus_policy_query(&db, &u1000, "a.b.c") == KDBUS_POLICY_TALK);		/* exact wins */
	assert(kdbus_policy_query(&db, &u2, "a.b.x") == -EPERM);			/* covered, not granted */
	assert(kdbus_policy_query(&db, &u2, "a.b") == -ENOENT);
	assert(kdbus_policy_query(&db, &u2, "x.y") == -ENOENT);

	/* another owner cannot take the same entry; a failed set keeps the old */
	assert(kdbus_policy_set(&db, (struct kdbus_item *)buf, n, 0, true, &other, &other) == -EEXIST);
	assert(list_is_empty(&other));
	/* a wildcard is refused where not allowed */
	assert(kdbus_policy_set(&db, (struct kdbus_item *)buf, n, 0, false, &other, &other) == -EINVAL);
	kdbus_policy_remove_owner(&db, &owner);
	assert(kdbus_policy_db_empty(&db));
	kdbus_policy_db_deinit(&db);
}

int main(void) {
	RUN(hash_grow_remove);
	RUN(hash_str);
	RUN(name_is_valid);
	RUN(sysname);
	RUN(items_validate);
	RUN(args_negotiate);
	RUN(bloom);
	RUN(policy_lookup);
	return test_done();
}
