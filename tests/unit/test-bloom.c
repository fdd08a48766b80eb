/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bloom.c - compat/siphash and compat/bloom: SipHash-2-4 test vectors,
 * the sd-bus bit-index algorithm (against an independent model written the
 * way bus-bloom.c is), the words of messages and rules, and the property
 * that every message matching a rule passes that rule's mask.
 */

#include "compat/bloom.h"
#include "compat/match-rule.h"
#include "compat/siphash.h"
#include "compat/wire.h"
#include "util/macro.h"
#include "tests/unit/test.h"


#define SIZE BLOOM_DEFAULT_SIZE
#define K BLOOM_DEFAULT_N_HASH
#define WORDS (SIZE / 8)

/* ------------------------------------------------------------------------ */

static void test_siphash(void) {
	/* the reference vectors: key 00..0f, message 00..(n-1) */
	static const uint64_t vectors[] = {
		0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
		0x85676696d7fb7e2dULL,
	};
	uint8_t key[16], msg[64];

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (size_t n = 0; n < ELEMENTSOF(vectors); n++)
		check(siphash24(msg, n, key) == vectors[n]);
	check(siphash24(msg, 15, key) == 0xa129ca6149be45e5ULL);

	/* streaming in any split equals one-shot */
	for (size_t n = 0; n <= 64; n++) {
		uint64_t one = siphash24(msg, n, key);
		for (size_t a = 0; a <= n; a++)
			for (size_t b = a; b <= n; b += 3) {
				SipHash s;
				siphash24_init(&s, key);
				siphash24_update(&s, msg, a);
				siphash24_update(&s, msg + a, b - a);
				siphash24_update(&s, msg + b, n - b);
				check(siphash24_final(&s) == one);
			}
	}
}

/* ------------------------------------------------------------------------ */
/* an independent model of sd-bus bus-bloom.c (little-endian hosts) */

static const uint8_t model_keys[8][16] = {
	{ 0xb9, 0x66, 0x0b, 0xf0, 0x46, 0x70, 0x47, 0xc1, 0x88, 0x75, 0xc4, 0x9c, 0x54, 0xb9, 0xbd, 0x15 },
	{ 0xaa, 0xa1, 0x54, 0xa2, 0xe0, 0x71, 0x4b, 0x39, 0xbf, 0xe1, 0xdd, 0x2e, 0x9f, 0xc5, 0x4a, 0x3b },
	{ 0x63, 0xfd, 0xae, 0xbe, 0xcd, 0x82, 0x48, 0x12, 0xa1, 0x6e, 0x41, 0x26, 0xcb, 0xfa, 0xa0, 0xc8 },
	{ 0x23, 0xbe, 0x45, 0x29, 0x32, 0xd2, 0x46, 0x2d, 0x82, 0x03, 0x52, 0x28, 0xfe, 0x37, 0x17, 0xf5 },
	{ 0x56, 0x3b, 0xbf, 0xee, 0x5a, 0x4f, 0x43, 0x39, 0xaf, 0xaa, 0x94, 0x08, 0xdf, 0xf0, 0xfc, 0x10 },
	{ 0x31, 0x80, 0xc8, 0x73, 0xc7, 0xea, 0x46, 0xd3, 0xaa, 0x25, 0x75, 0x0f, 0x9e, 0x4c, 0x09, 0x29 },
	{ 0x7d, 0xf7, 0x18, 0x4b, 0x7b, 0xa4, 0x44, 0xd5, 0x85, 0x3c, 0x06, 0xe0, 0x65, 0x53, 0x96, 0x6d },
	{ 0xf2, 0x77, 0xe9, 0x6f, 0x93, 0xb5, 0x4e, 0x71, 0x9a, 0x0c, 0x34, 0x88, 0x39, 0x25, 0xbf, 0x35 },
};

static void model_add_data(uint64_t *filter, size_t size, unsigned k, const void *data, size_t n) {
	uint64_t m = size * 8, h = 0;
	unsigned w = 0, c = 0, hi = 0;

	for (uint64_t x = m; x > 1; x >>= 1)
		w++;
	w = (w + 7) / 8;
	for (unsigned i = 0; i < k; i++) {
		uint64_t p = 0;
		for (unsigned d = 0; d < w; d++) {
			if (c == 0) {
				h = siphash24(data, n, model_keys[hi++]);
				c = 8;
			}
			p = (p << 8) | ((uint8_t *)&h)[8 - c];
			c--;
		}
		p &= m - 1;
		filter[p >> 6] |= 1ULL << (p & 63);
	}
}

static void model_add_pair(uint64_t *f, size_t size, unsigned k, const char *a, const char *b) {
	char c[1024];
	snprintf(c, sizeof(c), "%s:%s", a, b);
	model_add_data(f, size, k, c, strlen(c));
}

static void model_add_prefixes(uint64_t *f, size_t size, unsigned k, const char *a,
			       const char *b, char sep) {
	char c[1024], *p;
	size_t n = strlen(a) + 1 + strlen(b);

	snprintf(c, sizeof(c), "%s:%s", a, b);
	p = c + strlen(a) + 1;
	model_add_data(f, size, k, c, n);
	for (;;) {
		char *e = strrchr(p, sep);
		if (!e)
			break;
		*(e + 1) = 0;
		model_add_data(f, size, k, c, (size_t)(e - c + 1));
		if (e == p)
			break;
		*e = 0;
		model_add_data(f, size, k, c, (size_t)(e - c));
	}
}

static bool host_is_le(void) {
	uint16_t x = 1;
	return *(uint8_t *)&x == 1;
}

static void test_model(void) {
	static const char *const values[] = {
		"", "/", "/a", "/a/", "/a/b/c", "a.b.c", "a..b", ".", "..", "org.freedesktop.DBus",
		"x", "a.b.", "//", "/org/freedesktop/DBus/Local/long/path/with/many/elements",
	};
	static const size_t sizes[] = { 8, 16, 64, 128, 256, 1024, 8192, 16384 };

	if (!host_is_le()) {
		test_skip("a big-endian host");
		return;
	}
	for (size_t s = 0; s < ELEMENTSOF(sizes); s++)
		for (unsigned k = 1; k <= 12; k += 3) {
			if (!bloom_parameters_valid(sizes[s], k))
				continue;
			for (size_t i = 0; i < ELEMENTSOF(values); i++) {
				uint64_t a[2048] = {}, b[2048] = {};
				size_t w = sizes[s] / 8;

				bloom_add_pair(a, sizes[s], k, "arg3", values[i], strlen(values[i]));
				model_add_pair(b, sizes[s], k, "arg3", values[i]);
				check(memcmp(a, b, w * 8) == 0);

				memset(a, 0, sizeof(a));
				memset(b, 0, sizeof(b));
				bloom_add_prefixes(a, sizes[s], k, "path-slash-prefix", values[i],
						   strlen(values[i]), '/');
				model_add_prefixes(b, sizes[s], k, "path-slash-prefix", values[i], '/');
				check(memcmp(a, b, w * 8) == 0);

				memset(a, 0, sizeof(a));
				memset(b, 0, sizeof(b));
				bloom_add_prefixes(a, sizes[s], k, "arg0-dot-prefix", values[i],
						   strlen(values[i]), '.');
				model_add_prefixes(b, sizes[s], k, "arg0-dot-prefix", values[i], '.');
				check(memcmp(a, b, w * 8) == 0);
			}
		}

	/* k bits at most per word, at least one */
	uint64_t f[WORDS] = {};
	bloom_add_data(f, SIZE, K, "x", 1);
	unsigned bits = 0;
	for (int i = 0; i < WORDS; i++)
		bits += (unsigned)__builtin_popcountll(f[i]);
	check(bits >= 1 && bits <= K);
}

static void test_parameters(void) {
	check(bloom_parameters_valid(64, 8));
	check(bloom_parameters_valid(64, 32));		/* 2 bytes per index, 64 bytes of keys */
	check(!bloom_parameters_valid(64, 33));
	check(bloom_parameters_valid(8, 64));
	check(!bloom_parameters_valid(8, 65));
	check(bloom_parameters_valid(16384, 21));	/* 3 bytes per index */
	check(!bloom_parameters_valid(16384, 22));
	check(!bloom_parameters_valid(0, 8));
	check(!bloom_parameters_valid(12, 8));
	check(!bloom_parameters_valid(64, 0));
}

/* ------------------------------------------------------------------------ */

static bool has_word(const uint64_t *filter, const char *word) {
	uint64_t m[WORDS] = {};

	bloom_add_data(m, SIZE, K, word, strlen(word));
	return bloom_matches(filter, m, SIZE);
}

static void test_message_words(void) {
	WireBuilder b;
	WireHeader h;
	uint8_t *msg;
	size_t len;
	uint64_t f[WORDS] = {};

	check(wire_builder_init(&b, WIRE_TYPE_SIGNAL, 0, 1) == 0);
	wire_builder_set_path(&b, "/org/x");
	wire_builder_set_interface(&b, "org.x.I");
	wire_builder_set_member(&b, "Changed");
	wire_builder_append(&b, "suo", "a.b.c", 5u, "/p/q");
	wire_builder_open_container(&b, 'a', "s");
	wire_builder_append(&b, "ss", "e1", "e2");
	wire_builder_close_container(&b);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	check(wire_header_parse(msg, len, &h) == 0);
	bloom_add_message(f, SIZE, K, &h, msg + h.header_len);

	static const char *const words[] = {
		"message-type:signal", "interface:org.x.I", "member:Changed", "path:/org/x",
		"path-slash-prefix:/org/x", "path-slash-prefix:/org/", "path-slash-prefix:/org",
		"path-slash-prefix:/", "arg0:a.b.c", "arg0-dot-prefix:a.b.c",
		"arg0-dot-prefix:a.b.", "arg0-dot-prefix:a.b", "arg0-dot-prefix:a.",
		"arg0-dot-prefix:a", "arg0-slash-prefix:a.b.c", "arg2:/p/q",
		"arg2-slash-prefix:/p/", "arg2-slash-prefix:/p", "arg2-slash-prefix:/",
		"arg3-has:e1", "arg3-has:e2",
	};
	for (size_t i = 0; i < ELEMENTSOF(words); i++) {
		check(has_word(f, words[i]));
		if (!has_word(f, words[i]))
			fprintf(stderr, "  missing word %s\n", words[i]);
	}
	/* (probably) absent */
	unsigned absent = 0;
	static const char *const not_words[] = {
		"message-type:method_call", "member:Other", "arg1:5", "arg0:a.b", "path:/org",
		"arg3:e1", "interface:org.x.J", "arg2:/p",
	};
	for (size_t i = 0; i < ELEMENTSOF(not_words); i++)
		absent += !has_word(f, not_words[i]);
	check(absent >= ELEMENTSOF(not_words) - 1);
	free(msg);

	/* a rule that can't be expressed leaves the mask empty */
	static const char *const empty_rules[] = {
		"", "arg0path='/a'", "sender=':1.1'", "destination=':1.1'", "eavesdrop=true",
	};
	for (size_t i = 0; i < ELEMENTSOF(empty_rules); i++) {
		_cleanup_(match_rule_freep) MatchRule *r = NULL;
		uint64_t m[WORDS] = {}, zero[WORDS] = {};

		check(match_rule_parse(empty_rules[i], strlen(empty_rules[i]), &r, NULL) == 0);
		bloom_add_rule_mask(m, SIZE, K, r);
		check(memcmp(m, zero, sizeof(m)) == 0);
	}

	/* a rule's mask is exactly its words */
	_cleanup_(match_rule_freep) MatchRule *r = NULL;
	uint64_t m[WORDS] = {}, m2[WORDS] = {};
	static const char mrule[] = "type=signal,interface=a.b,member=M,path_namespace=/p,arg1=v,"
				    "arg0namespace=n.s,arg2path=/x";
	check(match_rule_parse(mrule, strlen(mrule), &r, NULL) == 0);
	bloom_add_rule_mask(m, SIZE, K, r);
	bloom_add_pair(m2, SIZE, K, "message-type", "signal", 6);
	bloom_add_pair(m2, SIZE, K, "interface", "a.b", 3);
	bloom_add_pair(m2, SIZE, K, "member", "M", 1);
	bloom_add_pair(m2, SIZE, K, "path-slash-prefix", "/p", 2);
	bloom_add_pair(m2, SIZE, K, "arg1", "v", 1);
	bloom_add_pair(m2, SIZE, K, "arg0-dot-prefix", "n.s", 3);
	check(memcmp(m, m2, sizeof(m)) == 0);

	uint64_t all[WORDS];
	memset(all, 0xff, sizeof(all));
	check(bloom_matches(all, m, SIZE));
	check(!bloom_matches(m2, all, SIZE));
	memset(all, 0, sizeof(all));
	check(bloom_matches(all, all, SIZE));
}

/* ------------------------------------------------------------------------ */
/* property: match => passes the mask */

static uint64_t rng = 88172645463325252ULL;
static unsigned rn(unsigned n) {
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)((rng >> 16) % n);
}

#define PICK(a) (a)[rn(ELEMENTSOF(a))]

static const char *const paths[] = { "/", "/a", "/a/b", "/a/bc", "/ab", "/a/b/c" };
static const char *const ifaces[] = { "org.a.I", "org.a.J", "org.b.I" };
static const char *const members[] = { "A", "B", "C" };
static const char *const strs[] = { "x", "y", "/a", "/a/", "/a/b", "org.a", "org.a.b", "org.ab",
				    "", "org", "/" };
static const char *const objpaths[] = { "/", "/a", "/a/b", "/x" };
static const char *const namespaces[] = { "org", "org.a", "org.a.b", "x" };
static const char *const senders[] = { ":1.1", ":1.2", "org.s.One", "org.s.Two" };
static const char *const dests[] = { ":1.7", "org.d.Name" };

static int gen_message(uint8_t **ret, size_t *ret_len, const char **ret_dest) {
	WireBuilder b;
	bool signal = rn(4) != 0;
	unsigned nargs = rn(5);
	int r;

	r = wire_builder_init(&b, signal ? WIRE_TYPE_SIGNAL : WIRE_TYPE_METHOD_CALL, 0, 1);
	assert(r == 0);
	wire_builder_set_path(&b, PICK(paths));
	if (signal || rn(2))
		wire_builder_set_interface(&b, PICK(ifaces));
	wire_builder_set_member(&b, PICK(members));
	*ret_dest = NULL;
	if (!signal || rn(5) == 0)
		wire_builder_set_destination(&b, *ret_dest = PICK(dests));
	for (unsigned i = 0; i < nargs; i++) {
		switch (rn(9)) {
		case 0: case 1: case 2:
			wire_builder_append_basic(&b, 's', PICK(strs));
			break;
		case 3:
			wire_builder_append_basic(&b, 'o', PICK(objpaths));
			break;
		case 4:
			wire_builder_append_basic(&b, 'g', "s");
			break;
		case 5:
			wire_builder_append(&b, "u", 1u);
			break;
		case 6: {
			unsigned n = rn(3);
			wire_builder_open_container(&b, 'a', "s");
			for (unsigned j = 0; j < n; j++)
				wire_builder_append_basic(&b, 's', PICK(strs));
			wire_builder_close_container(&b);
			break;
		}
		case 7:
			wire_builder_open_container(&b, 'v', "s");
			wire_builder_append_basic(&b, 's', PICK(strs));
			wire_builder_close_container(&b);
			break;
		default:
			wire_builder_open_container(&b, 'a', "o");
			wire_builder_append_basic(&b, 'o', PICK(objpaths));
			wire_builder_close_container(&b);
			break;
		}
	}
	r = wire_builder_finish(&b, ret, ret_len);
	wire_builder_done(&b);
	return r;
}

static void gen_rule(char *buf, size_t size) {
	size_t n = 0;

	buf[0] = 0;
#define ADD(...) n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__)
	if (rn(2) == 0) {
		/* argument keys only */
		unsigned i = rn(3);
		switch (rn(3)) {
		case 0:
			ADD("arg%u='%s'", i, PICK(strs));
			break;
		case 1:
			ADD("arg%upath='%s'", i, PICK(strs));
			break;
		default:
			ADD("arg0namespace='%s'", PICK(namespaces));
			break;
		}
		return;
	}
	if (rn(3) == 0)
		ADD("type='%s',", rn(4) ? "signal" : "method_call");
	if (rn(3) == 0)
		ADD("interface='%s',", PICK(ifaces));
	if (rn(3) == 0)
		ADD("member='%s',", PICK(members));
	switch (rn(4)) {
	case 0:
		ADD("path='%s',", PICK(paths));
		break;
	case 1:
		ADD("path_namespace='%s',", PICK(paths));
		break;
	}
	if (rn(6) == 0)
		ADD("sender='%s',", PICK(senders));
	if (rn(6) == 0)
		ADD("eavesdrop='true',");
	if (rn(8) == 0)
		ADD("destination='%s',", PICK(dests));
	for (unsigned i = 0; i < 4; i++) {
		if (rn(4) != 0)
			continue;
		switch (rn(3)) {
		case 0:
			ADD("arg%u='%s',", i, PICK(strs));
			break;
		case 1:
			ADD("arg%upath='%s',", i, PICK(strs));
			break;
		default:
			if (i == 0)
				ADD("arg0namespace='%s',", PICK(namespaces));
			break;
		}
	}
#undef ADD
}

static bool owns(void *u, const char *name) {
	const char *const *pair = u;
	return streq(name, pair[0]) || streq(name, pair[1]);
}

static void test_property(void) {
	unsigned n_match = 0, n_nomatch = 0, n_filtered = 0, n_arg = 0;

	for (unsigned it = 0; it < 50000; it++) {
		_cleanup_(match_rule_freep) MatchRule *r = NULL;
		_cleanup_free_ uint8_t *msg = NULL;
		uint64_t filter[WORDS] = {}, mask[WORDS] = {};
		const char *dest;
		char rule[512];
		WireHeader h;
		size_t len;

		gen_rule(rule, sizeof(rule));
		assert(match_rule_parse(rule, strlen(rule), &r, NULL) == 0);
		assert(gen_message(&msg, &len, &dest) == 0);
		assert(wire_header_parse(msg, len, &h) == 0);
		assert(wire_body_validate(&h, msg + h.header_len, h.body_len) == 0);

		/* sender :1.1 owns org.s.One; receiver :1.7 owns org.d.Name */
		const char *sender_names[2] = { "org.s.One", "-" };
		const char *receiver_names[2] = { "org.d.Name", "-" };
		MatchContext ctx = {
			.sender = ":1.1",
			.sender_has_name = owns,
			.userdata = sender_names,
			.receiver = dest ? ":1.7" : NULL,
		};
		(void)receiver_names;

		bloom_add_message(filter, SIZE, K, &h, msg + h.header_len);
		bloom_add_rule_mask(mask, SIZE, K, r);

		if (match_rule_matches(r, &h, msg + h.header_len, &ctx)) {
			n_match++;
			n_arg += match_rule_get_n_args(r) > 0;
			check(bloom_matches(filter, mask, SIZE));
			if (!bloom_matches(filter, mask, SIZE))
				fprintf(stderr, "  rule %s: mask fails a matching message\n", rule);
		} else {
			n_nomatch++;
			n_filtered += !bloom_matches(filter, mask, SIZE);
		}
	}
	fprintf(stderr, "property: %u matching pairs (%u with args) all pass; "
		"%u of %u non-matching pairs filtered by bloom\n",
		n_match, n_arg, n_filtered, n_nomatch);
	check(n_match > 1000);
	check(n_arg > 100);
	check(n_filtered > n_nomatch / 2);
}

int main(void) {
	RUN(siphash);
	RUN(parameters);
	RUN(model);
	RUN(message_words);
	RUN(property);

	return test_done();
}
