/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-auth.c - libFuzzer target for the SASL server (compat/auth.c).
 *
 * The first input byte picks the configuration, the rest is what a client
 * sends.  The same bytes go to two conversations: one fed in a single call,
 * one fed a byte at a time.  Both must reach the same result, consume the
 * same bytes and produce the same output.  DBUS_COOKIE_SHA1 is left out: it
 * touches the keyring on disk and its challenges are random.
 */

#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *mechs_external[] = { (char *)"EXTERNAL", NULL };
static char *mechs_both[] = { (char *)"EXTERNAL", (char *)"ANONYMOUS", NULL };

typedef struct {
	char *buf;
	size_t len;
} Out;

static void drain(Auth *a, Out *o) {
	const void *p;
	size_t n;

	p = auth_output(a, &n);
	if (!p)
		return;
	o->buf = realloc(o->buf, o->len + n);
	assert(o->buf);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	auth_output_consume(a, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	_cleanup_(auth_freep) Auth *whole = NULL, *bytes = NULL;
	Out out_whole = {}, out_bytes = {};
	AuthConfig cfg = {
		.guid_hex = "0123456789abcdef0123456789abcdef",
	};
	size_t consumed_whole = 0, consumed_bytes = 0;
	int r_whole, r_bytes = AUTH_CONTINUE;
	uint8_t flags;

	if (size < 1)
		return 0;
	flags = data[0];
	data++, size--;

	cfg.peer_uid = (flags & 0x10) ? 0 : 1000;
	cfg.peer_uid_known = flags & 0x01;
	cfg.unix_fd_possible = flags & 0x02;
	cfg.allow_anonymous = flags & 0x04;
	cfg.mechanisms = (flags & 0x08) ? mechs_external : mechs_both;

	assert(auth_new(&whole, &cfg) == 0);
	assert(auth_new(&bytes, &cfg) == 0);

	r_whole = auth_feed(whole, data, size, &consumed_whole);
	drain(whole, &out_whole);
	assert(r_whole == AUTH_CONTINUE || r_whole == AUTH_DONE ||
	       r_whole == -EPERM || r_whole == -EBADMSG);
	if (r_whole >= 0)
		assert(consumed_whole <= size);
	if (r_whole == AUTH_CONTINUE)
		assert(consumed_whole == size);

	for (size_t i = 0; i < size; i++) {
		size_t c = 0;

		r_bytes = auth_feed(bytes, data + i, 1, &c);
		drain(bytes, &out_bytes);
		if (r_bytes < 0)
			break;
		consumed_bytes += c;
		if (r_bytes == AUTH_DONE)
			break;
	}

	if (r_whole == -EBADMSG && out_whole.len > AUTH_OUTPUT_MAX) {
		/*
		 * Fed whole, nothing was sent in between: the unsent-output limit
		 * ends that conversation, while the one sending as it goes may go
		 * on.  Up to there both said the same.
		 */
		assert(out_bytes.len >= out_whole.len);
		assert(memcmp(out_whole.buf, out_bytes.buf, out_whole.len) == 0);
	} else {
		assert(r_whole == r_bytes);
		if (r_whole >= 0)
			assert(consumed_whole == consumed_bytes);
		assert(out_whole.len == out_bytes.len);
		assert(out_whole.len == 0 || memcmp(out_whole.buf, out_bytes.buf, out_whole.len) == 0);
	}
	/* unsent output stays bounded */
	assert(out_whole.len <= AUTH_OUTPUT_MAX + 256);

	if (r_whole == AUTH_DONE) {
		assert(auth_is_done(whole));
		assert(auth_mechanism(whole));
		assert(auth_is_anonymous(whole) == (auth_get_uid(whole) == (uid_t)-1));
		if (!auth_is_anonymous(whole))
			assert(auth_get_uid(whole) == cfg.peer_uid);
		if (auth_unix_fd_negotiated(whole))
			assert(cfg.unix_fd_possible);
	}

	free(out_whole.buf);
	free(out_bytes.buf);
	return 0;
}
