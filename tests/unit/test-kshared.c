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
#include "kshared/item.h"
#include "kshared/match.h"
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

/* ---- items (kshared/item.h) ------------------------------------------------ */

/* room for a few items, 8-byte aligned */
typedef union ItemBuf {
	uint64_t u64[512];
	uint8_t bytes[4096];
} ItemBuf;

/* an item of @type with @len payload bytes from @data at @p; returns the next */
static uint8_t *put_item(uint8_t *p, uint64_t type, const void *data, size_t len) {
	struct kdbus_item *it = (struct kdbus_item *)p;

	it->size = KDBUS_ITEM_HEADER_SIZE + len;
	it->type = type;
	if (len)
		memcpy(it->data, data, len);
	return p + KDBUS_ALIGN8(it->size);
}

/* kdbus_item_validate() of one item of @type with @len bytes of @data */
static int validate_one(uint64_t type, const void *data, size_t len) {
	ItemBuf b = {};

	put_item(b.bytes, type, data, len);
	return kdbus_item_validate((const struct kdbus_item *)b.bytes);
}

TEST(item_is_string) {
	check(kdbus_str_is_terminated("a", 2));
	check(kdbus_str_is_terminated("", 1));
	check(kdbus_str_is_terminated("foo.bar", 8));
	check(!kdbus_str_is_terminated("", 0));
	check(!kdbus_str_is_terminated("abc", 3));		/* no NUL */
	check(!kdbus_str_is_terminated("a\0b", 4));		/* a NUL inside */
	check(!kdbus_str_is_terminated("ab\0\0", 4));		/* two at the end */
	check(validate_one(KDBUS_ITEM_NAME, "a.b", 4) == 0);
	check(validate_one(KDBUS_ITEM_NAME, "a.b", 3) == -EINVAL);
	check(validate_one(KDBUS_ITEM_NAME, "", 0) == -EINVAL);
	check(validate_one(KDBUS_ITEM_DST_NAME, "a\0b", 4) == -EINVAL);
	check(validate_one(KDBUS_ITEM_MAKE_NAME, "0-x", 4) == 0);
	check(validate_one(KDBUS_ITEM_CONN_DESCRIPTION, "d\0\0", 4) == -EINVAL);
	check(validate_one(KDBUS_ITEM_PID_COMM, "c", 2) == 0);
	check(validate_one(KDBUS_ITEM_SECLABEL, "s", 1) == -EINVAL);
	check(validate_one(KDBUS_ITEM_CGROUP, "/", 2) == 0);
}

TEST(item_fixed_sizes) {
	uint8_t zeros[256] = {};
	static const struct {
		uint64_t type;
		size_t size;
	} fixed[] = {
		{ KDBUS_ITEM_CANCEL_FD, sizeof(int) },
		{ KDBUS_ITEM_BLOOM_PARAMETER, sizeof(struct kdbus_bloom_parameter) },
		{ KDBUS_ITEM_ATTACH_FLAGS_SEND, 8 },
		{ KDBUS_ITEM_ATTACH_FLAGS_RECV, 8 },
		{ KDBUS_ITEM_ID, 8 },
		{ KDBUS_ITEM_DST_ID, 8 },
		{ KDBUS_ITEM_TIMESTAMP, sizeof(struct kdbus_timestamp) },
		{ KDBUS_ITEM_CREDS, sizeof(struct kdbus_creds) },
		{ KDBUS_ITEM_PIDS, sizeof(struct kdbus_pids) },
		{ KDBUS_ITEM_AUDIT, sizeof(struct kdbus_audit) },
		{ KDBUS_ITEM_POLICY_ACCESS, sizeof(struct kdbus_policy_access) },
		{ KDBUS_ITEM_ID_ADD, sizeof(struct kdbus_notify_id_change) },
		{ KDBUS_ITEM_ID_REMOVE, sizeof(struct kdbus_notify_id_change) },
		{ KDBUS_ITEM_REPLY_TIMEOUT, 0 },
		{ KDBUS_ITEM_REPLY_DEAD, 0 },
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		check(validate_one(fixed[i].type, zeros, fixed[i].size) == 0);
		check(validate_one(fixed[i].type, zeros, fixed[i].size + 8) == -EINVAL);
		check(validate_one(fixed[i].type, zeros, fixed[i].size + 1) == -EINVAL);
		if (fixed[i].size)
			check(validate_one(fixed[i].type, zeros, fixed[i].size - 1) == -EINVAL);
	}
	/* arrays of whole elements */
	check(validate_one(KDBUS_ITEM_NEGOTIATE, zeros, 0) == 0);
	check(validate_one(KDBUS_ITEM_NEGOTIATE, zeros, 24) == 0);
	check(validate_one(KDBUS_ITEM_NEGOTIATE, zeros, 12) == -EINVAL);
	check(validate_one(KDBUS_ITEM_AUXGROUPS, zeros, 16) == 0);
	check(validate_one(KDBUS_ITEM_AUXGROUPS, zeros, 4) == -EINVAL);
	check(validate_one(KDBUS_ITEM_FDS, zeros, 12) == 0);
	check(validate_one(KDBUS_ITEM_FDS, zeros, 6) == -EINVAL);
	check(validate_one(KDBUS_ITEM_CAPS, zeros, 4) == 0);
	check(validate_one(KDBUS_ITEM_CAPS, zeros, 3) == -EINVAL);
	/* no rule here: the bus's size (BLOOM_MASK), the command (unknown) */
	check(validate_one(KDBUS_ITEM_BLOOM_MASK, zeros, 3) == 0);
	check(validate_one(0x7777, zeros, 5) == 0);
}

TEST(item_payloads) {
	struct kdbus_vec v = { .size = 1 };
	struct kdbus_memfd m = { .size = 1, .fd = 3 };
	struct {
		struct kdbus_notify_name_change nc;
		char name[8];
	} nc = { .name = "a.b" };

	check(validate_one(KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v)) == 0);
	check(validate_one(KDBUS_ITEM_PAYLOAD_OFF, &v, sizeof(v)) == 0);
	check(validate_one(KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v) - 8) == -EINVAL);
	v.size = 0;						/* an empty vec */
	check(validate_one(KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v)) == -EINVAL);
	check(validate_one(KDBUS_ITEM_PAYLOAD_MEMFD, &m, sizeof(m)) == 0);
	check(validate_one(KDBUS_ITEM_PAYLOAD_MEMFD, &m, sizeof(m) - 8) == -EINVAL);
	m.fd = -1;
	check(validate_one(KDBUS_ITEM_PAYLOAD_MEMFD, &m, sizeof(m)) == -EBADF);
	m.size = 0;						/* size first, then fd */
	check(validate_one(KDBUS_ITEM_PAYLOAD_MEMFD, &m, sizeof(m)) == -EINVAL);

	/* name changes: ids and an optional name */
	check(validate_one(KDBUS_ITEM_NAME_ADD, &nc, sizeof(nc.nc)) == 0);
	check(validate_one(KDBUS_ITEM_NAME_REMOVE, &nc, sizeof(nc.nc) + 4) == 0);
	check(validate_one(KDBUS_ITEM_NAME_CHANGE, &nc, sizeof(nc.nc) + 3) == -EINVAL);
	check(validate_one(KDBUS_ITEM_NAME_CHANGE, &nc, sizeof(nc.nc) + 5) == -EINVAL);
	check(validate_one(KDBUS_ITEM_NAME_ADD, &nc, sizeof(nc.nc) - 8) == -EINVAL);
}

TEST(item_bloom_filter) {
	uint64_t f[1 + 8] = {};
	ItemBuf b = {};
	const struct kdbus_item *it = (const struct kdbus_item *)b.bytes;

	/* a generation and whole words, then the bus's size */
	check(validate_one(KDBUS_ITEM_BLOOM_FILTER, f, 8 + 64) == 0);
	check(validate_one(KDBUS_ITEM_BLOOM_FILTER, f, 8) == 0);
	check(validate_one(KDBUS_ITEM_BLOOM_FILTER, f, 4) == -EINVAL);
	check(validate_one(KDBUS_ITEM_BLOOM_FILTER, f, 8 + 12) == -EFAULT);
	put_item(b.bytes, KDBUS_ITEM_BLOOM_FILTER, f, 8 + 64);
	check(kdbus_bloom_filter_check(it, 64) == 0);
	check(kdbus_bloom_filter_check(it, 32) == -EDOM);
	check(kdbus_bloom_filter_check(it, 128) == -EDOM);
	put_item(b.bytes, KDBUS_ITEM_BLOOM_FILTER, f, 8 + 60);
	check(kdbus_bloom_filter_check(it, 64) == -EFAULT);
	put_item(b.bytes, KDBUS_ITEM_BLOOM_FILTER, f, 7);
	check(kdbus_bloom_filter_check(it, 64) == -EINVAL);
}

TEST(items_framing) {
	uint64_t id = 1;
	ItemBuf b = {};
	struct kdbus_item *first = (struct kdbus_item *)b.bytes;
	uint8_t *p;

	check(kdbus_items_validate(first, 0) == 0);
	p = put_item(b.bytes, KDBUS_ITEM_ID, &id, 8);
	p = put_item(p, KDBUS_ITEM_NAME, "a.b", 4);	/* 20 bytes, padded to 24 */
	check(kdbus_items_validate(first, p - b.bytes) == 0);
	/* the last item's padding may be left out, not more */
	check(kdbus_items_validate(first, p - b.bytes - 4) == 0);
	check(kdbus_items_validate(first, p - b.bytes - 5) == -EINVAL);
	/* trailing bytes shorter than a header */
	check(kdbus_items_validate(first, p - b.bytes + 8) == -EINVAL);
	/* trailing zeroes: an item of size 0 */
	check(kdbus_items_validate(first, p - b.bytes + 16) == -EINVAL);
	/* an item below its header, or beyond its container */
	first->size = 8;
	check(kdbus_items_validate(first, p - b.bytes) == -EINVAL);
	first->size = 4096;
	check(kdbus_items_validate(first, p - b.bytes) == -EINVAL);
	first->size = ~0ULL;
	check(kdbus_items_validate(first, p - b.bytes) == -EINVAL);
	/* the payload rule's error comes through */
	first->size = KDBUS_ITEM_HEADER_SIZE + 4;
	check(kdbus_items_validate(first, 24 + 24) == -EINVAL);
	{
		struct kdbus_memfd m = { .size = 1, .fd = -5 };

		p = put_item(b.bytes, KDBUS_ITEM_PAYLOAD_MEMFD, &m, sizeof(m));
		check(kdbus_items_validate(first, p - b.bytes) == -EBADF);
	}
}

TEST(items_parse) {
	uint64_t id = 1;
	ItemBuf b = {};
	struct kdbus_item *first = (struct kdbus_item *)b.bytes;
	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_ID },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
	};
	uint8_t *p, *second;

	argv[1].item = first;			/* reset by the parse */
	check(kdbus_items_parse(first, 0, argv, 3) == 0);
	check(argv[0].item == NULL && argv[1].item == NULL && argv[2].item == NULL);

	p = put_item(b.bytes, KDBUS_ITEM_ID, &id, 8);
	second = p;
	p = put_item(p, KDBUS_ITEM_NAME, "a.b", 4);
	p = put_item(p, KDBUS_ITEM_NAME, "c.d", 4);
	check(kdbus_items_parse(first, p - b.bytes, argv, 3) == 3);	/* how many */
	check(argv[1].item == first);
	check(argv[2].item == (struct kdbus_item *)(second + 24));	/* the last one */
	check(argv[0].item == NULL);

	/* a second ID: only NAME is multiple */
	put_item(p, KDBUS_ITEM_ID, &id, 8);
	check(kdbus_items_parse(first, p - b.bytes + 24, argv, 3) == -EINVAL);
	/* a type the command does not take */
	put_item(p, KDBUS_ITEM_DST_ID, &id, 8);
	check(kdbus_items_parse(first, p - b.bytes + 24, argv, 3) == -EINVAL);
	check(kdbus_items_parse(first, p - b.bytes, argv, 2) == -EINVAL);
	/* the payload rule of a type it takes */
	put_item(p, KDBUS_ITEM_NEGOTIATE, &id, 4);
	check(kdbus_items_parse(first, p - b.bytes + 24, argv, 3) == -EINVAL);
	put_item(p, KDBUS_ITEM_NEGOTIATE, &id, 8);
	check(kdbus_items_parse(first, p - b.bytes + 24, argv, 3) == 4);
	check(argv[0].item == (struct kdbus_item *)p);
	/* framing */
	check(kdbus_items_parse(first, p - b.bytes + 8, argv, 3) == -EINVAL);
}

TEST(item_sizes) {
	check(kdbus_notify_payload_size(KDBUS_ITEM_ID_ADD, 0) == 16);
	check(kdbus_notify_payload_size(KDBUS_ITEM_ID_REMOVE, 99) == 16);
	check(kdbus_notify_payload_size(KDBUS_ITEM_NAME_ADD, 3) == 32 + 4);
	check(kdbus_notify_payload_size(KDBUS_ITEM_NAME_REMOVE, 0) == 33);
	check(kdbus_notify_payload_size(KDBUS_ITEM_NAME_CHANGE, 7) == 40);
	check(kdbus_notify_payload_size(KDBUS_ITEM_REPLY_TIMEOUT, 5) == 0);
	check(kdbus_notify_payload_size(KDBUS_ITEM_REPLY_DEAD, 0) == 0);
	check(kdbus_notify_item_size(KDBUS_ITEM_ID_ADD, 0) == 32);
	check(kdbus_notify_item_size(KDBUS_ITEM_NAME_CHANGE, 3) == 56);
	check(kdbus_notify_item_size(KDBUS_ITEM_NAME_CHANGE, 7) == 56);
	check(kdbus_notify_item_size(KDBUS_ITEM_NAME_CHANGE, 8) == 64);
	check(kdbus_notify_item_size(KDBUS_ITEM_REPLY_DEAD, 0) == KDBUS_ITEM_HEADER_SIZE);
	check(kdbus_string_item_size(0) == 24);
	check(kdbus_string_item_size(7) == 24);
	check(kdbus_string_item_size(8) == 32);
	check(kdbus_owned_name_item_size(3) == 16 + 8 + 8);
	check(kdbus_owned_name_item_size(8) == 16 + 8 + 16);
	check(kdbus_caps_payload_size(2) == 4 + 4 * 2 * 4);
	check(kdbus_caps_payload_size(1) == 20);
}

TEST(item_write) {
	ItemBuf b;
	struct kdbus_item *it = (struct kdbus_item *)b.bytes;
	struct kdbus_timestamp ts = { .seqnum = 7 };
	uint8_t *p;

	memset(&b, 0xaa, sizeof(b));
	p = kdbus_item_write(b.bytes, KDBUS_ITEM_DST_NAME, "a.b", 4);
	check(p == b.bytes + 24);
	check(it->size == 20 && it->type == KDBUS_ITEM_DST_NAME);
	check(strcmp(it->str, "a.b") == 0);
	check(b.bytes[20] == 0 && b.bytes[21] == 0 && b.bytes[22] == 0 && b.bytes[23] == 0);
	check(b.bytes[24] == 0xaa);				/* nothing beyond */
	check(kdbus_item_validate(it) == 0);

	p = kdbus_item_write(p, KDBUS_ITEM_TIMESTAMP, &ts, sizeof(ts));
	check(p == b.bytes + 24 + 16 + sizeof(ts));
	check(((struct kdbus_item *)(b.bytes + 24))->timestamp.seqnum == 7);
	check(kdbus_items_validate(it, p - b.bytes) == 0);

	/* a header alone, and a payload written in place */
	memset(&b, 0xaa, sizeof(b));
	p = kdbus_item_init(b.bytes, KDBUS_ITEM_REPLY_DEAD, 0);
	check(p == b.bytes + 16 && it->size == 16 && kdbus_item_validate(it) == 0);
	p = kdbus_item_init(b.bytes, KDBUS_ITEM_FDS, 3 * sizeof(int));
	check(p == b.bytes + 32 && it->size == 28);
	check(b.bytes[28] == 0 && b.bytes[31] == 0 && b.bytes[16] == 0xaa);
	check(kdbus_item_payload(it) == b.bytes + 16);
	check(kdbus_item_payload_size(it) == 12);
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

TEST(names_role) {
	/* the activator first, then the head of the queue, then the rest */
	check(kdbus_name_role_of(false, false, false) == R_NONE);
	check(kdbus_name_role_of(false, false, true) == R_WAITER);
	check(kdbus_name_role_of(false, true, false) == R_PRIMARY);
	check(kdbus_name_role_of(false, true, true) == R_PRIMARY);
	check(kdbus_name_role_of(true, false, false) == R_ACTIVATOR);
	check(kdbus_name_role_of(true, false, true) == R_ACTIVATOR);
	check(kdbus_name_role_of(true, true, false) == R_ACTIVATOR);
	check(kdbus_name_role_of(true, true, true) == R_ACTIVATOR);
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
	RUN(match_notification);
	RUN(item_is_string);
	RUN(item_fixed_sizes);
	RUN(item_payloads);
	RUN(item_bloom_filter);
	RUN(items_framing);
	RUN(items_parse);
	RUN(item_sizes);
	RUN(item_write);
	RUN(names_acquire_table);
	RUN(names_activator_same);
	RUN(names_acquire_invariants);
	RUN(names_release_table);
	RUN(names_role);
	RUN(names_flags);

	return test_done();
}
