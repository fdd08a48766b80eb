/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-wire.c - libFuzzer target for compat/wire: framing, header parsing,
 * body validation, the header rewrite (whose output must parse again),
 * argument extraction, and a differential check against libdbus's
 * dbus_message_demarshal(): with wire_set_libdbus_compat(true) both must
 * accept exactly the same messages (except messages carrying UNIX_FDS,
 * which demarshal cannot load, and the local path/interface, which we parse
 * and flag).  Any disagreement aborts.
 *
 * Built with -fsanitize=fuzzer (configure --enable-fuzzing) it is a fuzzer;
 * linked with fuzz-main.c it replays a corpus.
 */

#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int validate(const uint8_t *m, size_t n, WireHeader *h) {
	size_t total;
	int r;

	r = wire_frame_size(m, n, WIRE_MAX_MESSAGE_SIZE, &total);
	if (r < 0)
		return r;
	if (total == 0 || total > n)
		return -1;
	r = wire_header_parse(m, total, h);
	if (r < 0)
		return r;
	return wire_body_validate(h, m + h->header_len, h->body_len);
}

static bool libdbus_accepts(const uint8_t *m, size_t n) {
	DBusMessage *msg;
	DBusError e;
	size_t total = n;

	if (n >= 16) {
		int need = dbus_message_demarshal_bytes_needed((const char *)m, (int)n);
		if (need > 0 && (size_t)need < n)
			total = (size_t)need;
	}
	if (total > INT32_MAX)
		return false;
	dbus_error_init(&e);
	msg = dbus_message_demarshal((const char *)m, (int)total, &e);
	if (!msg) {
		dbus_error_free(&e);
		return false;
	}
	dbus_message_unref(msg);
	return true;
}

static void die(const char *what) {
	fprintf(stderr, "fuzz-wire: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	WireHeader h, hc;
	size_t total;
	bool strict, compat;

	if (size > (1u << 20))
		return 0;

	/* framing with every short prefix and a small limit */
	for (size_t n = 0; n < 17 && n <= size; n++)
		(void)wire_frame_size(data, n, WIRE_MAX_MESSAGE_SIZE, &total);
	(void)wire_frame_size(data, size, 64, &total);

	strict = validate(data, size, &h) == 0;
	wire_set_libdbus_compat(true);
	compat = validate(data, size, &hc) == 0;
	wire_set_libdbus_compat(false);
	if (strict && !compat)
		die("strict accepts what compat rejects");

	if (strict) {
		const uint8_t *body = data + h.header_len;
		uint8_t *out;
		size_t len, need;
		WireHeader h2;
		WireArg args[64];
		unsigned n;

		need = wire_header_rewrite_size(&h, 6);
		out = malloc(need + h.body_len);
		if (!out)
			return 0;
		if (wire_header_rewrite(&h, ":1.234", 6, out, need, &len) != 0 || len > need)
			die("rewrite failed");
		memcpy(out + len, body, h.body_len);
		if (validate(out, len + h.body_len, &h2) != 0)
			die("rewritten message invalid");
		if (!h2.sender.s || strcmp(h2.sender.s, ":1.234") != 0 || h2.serial != h.serial ||
		    h2.type != h.type || h2.big_endian != h.big_endian)
			die("rewritten header differs");
		/* the fields in their order, SENDER in its place or last */
		{
			uint8_t want[WIRE_FIELD_UNIX_FDS + 1];
			size_t n_want = 0;
			bool had_sender = false;

			for (size_t i = 0; i < h.n_order; i++) {
				want[n_want++] = h.order[i];
				had_sender |= h.order[i] == WIRE_FIELD_SENDER;
			}
			if (!had_sender)
				want[n_want++] = WIRE_FIELD_SENDER;
			if (h2.n_order != n_want || memcmp(h2.order, want, n_want) != 0)
				die("rewritten header has its fields in another order");
		}
		free(out);

		n = wire_body_args(&h, body, args, 64);
		for (unsigned i = 0; i < n; i++) {
			if (args[i].type == 'a') {
				uint32_t cur = 0;
				WireString e;
				unsigned guard = 0;
				while (wire_arg_array_next(&h, body, &args[i], &cur, &e))
					if (++guard > h.body_len + 1)
						die("array iteration does not end");
			} else if (args[i].type && (!args[i].str.s || args[i].str.s[args[i].str.len] != 0))
				die("bad string argument");
		}
		(void)wire_header_is_local(&h);
	}

	/* differential against libdbus */
	if (compat && (hc.unix_fds > 0 || wire_header_is_local(&hc)))
		return 0;
	if (libdbus_accepts(data, size) != compat) {
		fprintf(stderr, "ours (libdbus compat) %d, libdbus %d\n", compat, !compat);
		die("differential mismatch");
	}
	return 0;
}
