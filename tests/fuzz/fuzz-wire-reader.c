/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-wire-reader.c - libFuzzer target for compat/wire's body reader
 * (WireReader).  The input is read twice:
 *  - as a whole message: if its header parses, its body is walked value by
 *    value (every basic value read, every container entered and left); if
 *    the body also passed wire_body_validate(), the walk must succeed and
 *    end exactly at the end of the body, and skipping the top-level values
 *    must end there too;
 *  - as raw input: byte 0 is the length N of a signature (not validated),
 *    bytes 1..N the signature, the rest a body of byte order (N & 0x80),
 *    walked the same way, which must stay in bounds whatever it reads.
 *
 * Built with -fsanitize=fuzzer (configure --enable-fuzzing) it is a fuzzer;
 * linked with fuzz-main.c it replays a corpus.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* read every value of the current container; 0 or the first error */
static int walk(WireReader *r, unsigned *budget) {
	char t;
	int ret;

	while ((t = wire_reader_peek(r))) {
		size_t sig_len;
		const char *sig = wire_reader_signature(r, &sig_len);

		if (!sig || sig[0] != t)
			return -EBADMSG;
		if (*budget == 0)
			return 0;
		(*budget)--;
		switch (t) {
		case 'a': case 'v': case '(': case '{':
			ret = wire_reader_enter(r, t);
			if (ret < 0)
				return ret;
			ret = walk(r, budget);
			if (ret < 0)
				return ret;
			ret = wire_reader_exit(r);
			break;
		default: {
			union { uint64_t t; double d; const char *s; bool b; } v;
			ret = wire_reader_read_basic(r, t, &v);
			if (ret == 0 && (t == 's' || t == 'o' || t == 'g'))
				(void) strlen(v.s);	/* must be terminated in bounds */
			break;
		}
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	WireHeader h;
	WireReader r;
	size_t total;
	unsigned budget;
	int ret;

	/* the body must be 8-aligned, as in a message buffer */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	if (wire_frame_size(copy, size, WIRE_MAX_MESSAGE_SIZE, &total) == 0 && total && total <= size &&
	    wire_header_parse(copy, total, &h) == 0) {
		const uint8_t *body = copy + h.header_len;
		bool valid = wire_body_validate(&h, body, h.body_len) == 0;

		budget = 1u << 20;
		wire_reader_init(&r, &h, body);
		ret = walk(&r, &budget);
		if (valid && (ret < 0 || (budget && r.pos != h.body_len))) {
			fprintf(stderr, "valid body, reader walk %d ended at %zu of %u\n", ret, r.pos, h.body_len);
			abort();
		}
		wire_reader_init(&r, &h, body);
		ret = 0;
		while (ret == 0 && wire_reader_peek(&r))
			ret = wire_reader_skip(&r);
		if (valid && (ret < 0 || r.pos != h.body_len)) {
			fprintf(stderr, "valid body, skipping ended at %zu of %u (%d)\n", r.pos, h.body_len, ret);
			abort();
		}
	}

	if (size > 0 && (size_t) (data[0] & 0x7f) < size) {
		size_t n = data[0] & 0x7f;
		size_t body_len = size - 1 - n;
		uint8_t *body = malloc(body_len ? body_len : 1);
		char *sig = malloc(n ? n : 1);

		if (body && sig) {
			memcpy(sig, data + 1, n);
			memcpy(body, data + 1 + n, body_len);
			budget = 1u << 20;
			wire_reader_init_raw(&r, sig, n, data[0] & 0x80, body, body_len);
			(void) walk(&r, &budget);
			wire_reader_init_raw(&r, sig, n, data[0] & 0x80, body, body_len);
			while (wire_reader_peek(&r) && wire_reader_skip(&r) == 0)
				;
		}
		free(body);
		free(sig);
	}
	free(copy);
	return 0;
}
