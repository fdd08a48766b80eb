/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bloom.c - kdbus bloom filters, systemd's conventions (see bloom.h).
 */

#include "compat/bloom.h"
#include "compat/siphash.h"
#include "util/macro.h"

/* sd-bus bus-bloom.c hash_keys[]: 8 x 128 bits */
static const uint8_t hash_keys[8][16] = {
	{ 0xb9, 0x66, 0x0b, 0xf0, 0x46, 0x70, 0x47, 0xc1, 0x88, 0x75, 0xc4, 0x9c, 0x54, 0xb9, 0xbd, 0x15 },
	{ 0xaa, 0xa1, 0x54, 0xa2, 0xe0, 0x71, 0x4b, 0x39, 0xbf, 0xe1, 0xdd, 0x2e, 0x9f, 0xc5, 0x4a, 0x3b },
	{ 0x63, 0xfd, 0xae, 0xbe, 0xcd, 0x82, 0x48, 0x12, 0xa1, 0x6e, 0x41, 0x26, 0xcb, 0xfa, 0xa0, 0xc8 },
	{ 0x23, 0xbe, 0x45, 0x29, 0x32, 0xd2, 0x46, 0x2d, 0x82, 0x03, 0x52, 0x28, 0xfe, 0x37, 0x17, 0xf5 },
	{ 0x56, 0x3b, 0xbf, 0xee, 0x5a, 0x4f, 0x43, 0x39, 0xaf, 0xaa, 0x94, 0x08, 0xdf, 0xf0, 0xfc, 0x10 },
	{ 0x31, 0x80, 0xc8, 0x73, 0xc7, 0xea, 0x46, 0xd3, 0xaa, 0x25, 0x75, 0x0f, 0x9e, 0x4c, 0x09, 0x29 },
	{ 0x7d, 0xf7, 0x18, 0x4b, 0x7b, 0xa4, 0x44, 0xd5, 0x85, 0x3c, 0x06, 0xe0, 0x65, 0x53, 0x96, 0x6d },
	{ 0xf2, 0x77, 0xe9, 0x6f, 0x93, 0xb5, 0x4e, 0x71, 0x9a, 0x0c, 0x34, 0x88, 0x39, 0x25, 0xbf, 0x35 },
};

static unsigned u64log2(uint64_t n) {
	return n > 1 ? (unsigned)__builtin_clzll(n) ^ 63U : 0;
}

/* bytes of hash output per bit index */
static unsigned bytes_per_index(size_t size) {
	return (u64log2((uint64_t)size * 8) + 7) / 8;
}

bool bloom_parameters_valid(size_t size, unsigned n_hash) {
	unsigned w;

	if (size == 0 || size % 8 != 0 || n_hash == 0)
		return false;
	w = bytes_per_index(size);
	return w <= sizeof(uint64_t) && (uint64_t)n_hash * w <= ELEMENTSOF(hash_keys) * 8;
}

/* hash the word a (alen bytes) + b (blen bytes) into the filter */
static void add_parts(uint64_t *filter, size_t size, unsigned k, const void *a, size_t alen,
		      const void *b, size_t blen) {
	uint64_t m = (uint64_t)size * 8, h = 0;
	unsigned w = bytes_per_index(size), c = 0, key = 0;

	assert(bloom_parameters_valid(size, k));

	for (unsigned i = 0; i < k; i++) {
		uint64_t p = 0;

		for (unsigned d = 0; d < w; d++) {
			if (c == 0) {
				SipHash s;

				siphash24_init(&s, hash_keys[key++]);
				siphash24_update(&s, a, alen);
				siphash24_update(&s, b, blen);
				h = siphash24_final(&s);
				c = 8;
			}
			/* the hash's bytes in little-endian order */
			p = (p << 8) | ((h >> (8 * (8 - c))) & 0xff);
			c--;
		}
		p &= m - 1;
		filter[p >> 6] |= 1ULL << (p & 63);
	}
}

void bloom_add_data(uint64_t *filter, size_t size, unsigned n_hash, const void *data, size_t len) {
	add_parts(filter, size, n_hash, data, len, NULL, 0);
}

/* "a:" in a small buffer */
static size_t key_prefix(char *buf, size_t bufsize, const char *a) {
	size_t n = strlen(a);

	assert(n + 2 <= bufsize);
	memcpy(buf, a, n);
	buf[n] = ':';
	return n + 1;
}

void bloom_add_pair(uint64_t *filter, size_t size, unsigned n_hash, const char *a,
		    const char *b, size_t blen) {
	char k[64];
	size_t kl = key_prefix(k, sizeof(k), a);

	add_parts(filter, size, n_hash, k, kl, b, blen);
}

void bloom_add_prefixes(uint64_t *filter, size_t size, unsigned n_hash, const char *a,
			const char *b, size_t blen, char sep) {
	char k[64];
	size_t kl = key_prefix(k, sizeof(k), a);
	size_t end = blen;

	add_parts(filter, size, n_hash, k, kl, b, blen);
	for (;;) {
		size_t e;

		/* last separator before end */
		for (e = end; e > 0 && b[e - 1] != sep; e--)
			;
		if (e == 0)
			break;
		e--;
		add_parts(filter, size, n_hash, k, kl, b, e + 1);	/* with the separator */
		if (e == 0)
			break;
		add_parts(filter, size, n_hash, k, kl, b, e);		/* without */
		end = e;
	}
}

/* "argN<suffix>", N < 64 */
static void arg_key(char *buf, size_t bufsize, unsigned i, const char *suffix) {
	size_t n = 0, l = strlen(suffix);

	assert(i < 100 && l + 6 <= bufsize);
	memcpy(buf, "arg", 3);
	n = 3;
	if (i >= 10)
		buf[n++] = (char)('0' + i / 10);
	buf[n++] = (char)('0' + i % 10);
	memcpy(buf + n, suffix, l + 1);
}

void bloom_add_message(uint64_t *filter, size_t size, unsigned n_hash, const WireHeader *h,
		       const uint8_t *body) {
	const char *t = wire_type_to_string(h->type);
	WireArg args[64];
	unsigned n;

	if (t)
		bloom_add_pair(filter, size, n_hash, "message-type", t, strlen(t));
	if (h->interface.s)
		bloom_add_pair(filter, size, n_hash, "interface", h->interface.s, h->interface.len);
	if (h->member.s)
		bloom_add_pair(filter, size, n_hash, "member", h->member.s, h->member.len);
	if (h->path.s) {
		bloom_add_pair(filter, size, n_hash, "path", h->path.s, h->path.len);
		bloom_add_prefixes(filter, size, n_hash, "path-slash-prefix", h->path.s,
				   h->path.len, '/');
	}

	if (!body)
		return;
	n = wire_body_args(h, body, args, ELEMENTSOF(args));
	for (unsigned i = 0; i < n; i++) {
		char key[32];

		if (args[i].type == 's' || args[i].type == 'o' || args[i].type == 'g') {
			const WireString *v = &args[i].str;

			arg_key(key, sizeof(key), i, "");
			bloom_add_pair(filter, size, n_hash, key, v->s, v->len);
			arg_key(key, sizeof(key), i, "-dot-prefix");
			bloom_add_prefixes(filter, size, n_hash, key, v->s, v->len, '.');
			arg_key(key, sizeof(key), i, "-slash-prefix");
			bloom_add_prefixes(filter, size, n_hash, key, v->s, v->len, '/');
		} else if (args[i].type == 'a') {
			uint32_t cursor = 0;
			WireString e;

			arg_key(key, sizeof(key), i, "-has");
			while (wire_arg_array_next(h, body, &args[i], &cursor, &e))
				bloom_add_pair(filter, size, n_hash, key, e.s, e.len);
		}
	}
}

void bloom_add_rule_mask(uint64_t *mask, size_t size, unsigned n_hash, const MatchRule *r) {
	const char *s;
	uint8_t type;

	type = match_rule_get_type(r);
	if (type != WIRE_TYPE_INVALID) {
		s = wire_type_to_string(type);
		bloom_add_pair(mask, size, n_hash, "message-type", s, strlen(s));
	}
	if ((s = match_rule_get_interface(r)))
		bloom_add_pair(mask, size, n_hash, "interface", s, strlen(s));
	if ((s = match_rule_get_member(r)))
		bloom_add_pair(mask, size, n_hash, "member", s, strlen(s));
	if ((s = match_rule_get_path(r)))
		bloom_add_pair(mask, size, n_hash, "path", s, strlen(s));
	if ((s = match_rule_get_path_namespace(r)))
		bloom_add_pair(mask, size, n_hash, "path-slash-prefix", s, strlen(s));

	for (unsigned i = 0; i < match_rule_get_n_args(r); i++) {
		char key[32];
		size_t len;

		switch (match_rule_get_arg(r, i, &s, &len)) {
		case MATCH_ARG_STRING:
			arg_key(key, sizeof(key), i, "");
			bloom_add_pair(mask, size, n_hash, key, s, len);
			break;
		case MATCH_ARG_NAMESPACE:
			arg_key(key, sizeof(key), i, "-dot-prefix");
			bloom_add_pair(mask, size, n_hash, key, s, len);
			break;
		default:
			/* argNpath: a prefix of the argument or the argument a
			 * prefix of the rule: not expressible */
			break;
		}
	}
}

bool bloom_matches(const uint64_t *filter, const uint64_t *mask, size_t size) {
	for (size_t i = 0; i < size / 8; i++)
		if ((filter[i] & mask[i]) != mask[i])
			return false;
	return true;
}
