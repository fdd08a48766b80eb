/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * siphash.c - SipHash-2-4: 2 compression rounds per 8-byte block, 4
 * finalisation rounds, 64-bit output.
 */

#include <string.h>

#include "compat/siphash.h"

static inline uint64_t rotl(uint64_t x, unsigned b) {
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t le64(const uint8_t *p) {
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static inline void sipround(SipHash *s) {
	s->v0 += s->v1; s->v1 = rotl(s->v1, 13); s->v1 ^= s->v0; s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3; s->v3 = rotl(s->v3, 16); s->v3 ^= s->v2;
	s->v0 += s->v3; s->v3 = rotl(s->v3, 21); s->v3 ^= s->v0;
	s->v2 += s->v1; s->v1 = rotl(s->v1, 17); s->v1 ^= s->v2; s->v2 = rotl(s->v2, 32);
}

static inline void compress(SipHash *s, uint64_t m) {
	s->v3 ^= m;
	sipround(s);
	sipround(s);
	s->v0 ^= m;
}

void siphash24_init(SipHash *s, const uint8_t key[16]) {
	uint64_t k0 = le64(key), k1 = le64(key + 8);

	s->v0 = 0x736f6d6570736575ULL ^ k0;
	s->v1 = 0x646f72616e646f6dULL ^ k1;
	s->v2 = 0x6c7967656e657261ULL ^ k0;
	s->v3 = 0x7465646279746573ULL ^ k1;
	s->tail = 0;
	s->len = 0;
}

void siphash24_update(SipHash *s, const void *data, size_t len) {
	const uint8_t *in, *end;

	if (len == 0)
		return;
	in = data;
	end = in + len;

	/* fill a pending partial block */
	while ((s->len & 7) && in < end) {
		s->tail |= (uint64_t)*in++ << (8 * (s->len & 7));
		if ((++s->len & 7) == 0) {
			compress(s, s->tail);
			s->tail = 0;
		}
	}
	for (; end - in >= 8; in += 8) {
		compress(s, le64(in));
		s->len += 8;
	}
	for (; in < end; in++) {
		s->tail |= (uint64_t)*in << (8 * (s->len & 7));
		s->len++;
	}
}

uint64_t siphash24_final(SipHash *s) {
	uint64_t b = (uint64_t)s->len << 56 | s->tail;

	compress(s, b);
	s->v2 ^= 0xff;
	sipround(s);
	sipround(s);
	sipround(s);
	sipround(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t siphash24(const void *data, size_t len, const uint8_t key[16]) {
	SipHash s;

	siphash24_init(&s, key);
	siphash24_update(&s, data, len);
	return siphash24_final(&s);
}
