/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-wire.c - compat/wire: names, framing, header parsing, body
 * validation (both byte orders), the header rewrite, argument extraction,
 * the builder, and a differential check against libdbus's
 * dbus_message_demarshal() over generated and mutated messages.
 *
 * "test-wire --write-corpus DIR" writes a seed corpus for tests/fuzz.
 */
#include <dbus/dbus.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "compat/wire.h"
#include "util/macro.h"
#include "tests/unit/test.h"


/* ------------------------------------------------------------------------ */
/* a raw writer that can produce invalid messages too */

typedef struct W {
	uint8_t d[1 << 16];
	size_t n;
	bool be;
} W;

static void w_u8(W *w, uint8_t x) {
	assert(w->n < sizeof(w->d));
	w->d[w->n++] = x;
}

static void w_align(W *w, unsigned a) {
	while (w->n % a)
		w_u8(w, 0);
}

static void w_raw(W *w, const void *p, size_t n) {
	assert(w->n + n <= sizeof(w->d));
	memcpy(w->d + w->n, p, n);
	w->n += n;
}

static void w_u16(W *w, uint16_t x) {
	w_align(w, 2);
	if (w->be) {
		w_u8(w, x >> 8);
		w_u8(w, x);
	} else {
		w_u8(w, x);
		w_u8(w, x >> 8);
	}
}

static void put32(W *w, size_t at, uint32_t x) {
	for (int i = 0; i < 4; i++)
		w->d[at + i] = w->be ? (uint8_t)(x >> (24 - 8 * i)) : (uint8_t)(x >> (8 * i));
}

static void w_u32(W *w, uint32_t x) {
	w_align(w, 4);
	assert(w->n + 4 <= sizeof(w->d));
	put32(w, w->n, x);
	w->n += 4;
}

static void w_u64(W *w, uint64_t x) {
	w_align(w, 8);
	for (int i = 0; i < 8; i++)
		w_u8(w, w->be ? (uint8_t)(x >> (56 - 8 * i)) : (uint8_t)(x >> (8 * i)));
}

static void w_str(W *w, const char *s) {
	size_t l = strlen(s);

	w_u32(w, (uint32_t)l);
	w_raw(w, s, l + 1);
}

static void w_sig(W *w, const char *s) {
	size_t l = strlen(s);

	w_u8(w, (uint8_t)l);
	w_raw(w, s, l + 1);
}

/* header field helpers (fields_len patched by msg_end_header) */
static void f_str(W *w, uint8_t code, char type, const char *s) {
	char t[2] = { type, 0 };

	w_align(w, 8);
	w_u8(w, code);
	w_sig(w, t);
	if (type == 'g')
		w_sig(w, s);
	else
		w_str(w, s);
}

static void f_u32(W *w, uint8_t code, uint32_t x) {
	w_align(w, 8);
	w_u8(w, code);
	w_sig(w, "u");
	w_u32(w, x);
}

static void msg_begin(W *w, bool be, uint8_t type, uint8_t flags, uint32_t serial) {
	w->n = 0;
	w->be = be;
	w_u8(w, be ? 'B' : 'l');
	w_u8(w, type);
	w_u8(w, flags);
	w_u8(w, 1);
	w_u32(w, 0);		/* body length */
	w_u32(w, serial);
	w_u32(w, 0);		/* fields length */
}

static size_t msg_end_header(W *w) {
	put32(w, 12, (uint32_t)(w->n - 16));
	w_align(w, 8);
	return w->n;
}

static void msg_end(W *w, size_t body_start) {
	put32(w, 4, (uint32_t)(w->n - body_start));
}

/* a signal with the required fields and optional body signature */
static size_t msg_signal(W *w, bool be, const char *sig) {
	msg_begin(w, be, WIRE_TYPE_SIGNAL, 0, 7);
	f_str(w, WIRE_FIELD_PATH, 'o', "/a/b");
	f_str(w, WIRE_FIELD_INTERFACE, 's', "org.example.Iface");
	f_str(w, WIRE_FIELD_MEMBER, 's', "Sig");
	if (sig)
		f_str(w, WIRE_FIELD_SIGNATURE, 'g', sig);
	return msg_end_header(w);
}

/* ------------------------------------------------------------------------ */
/* both validators */

static int ours(const uint8_t *m, size_t n, WireHeader *ret) {
	WireHeader h;
	size_t total;
	int r;

	r = wire_frame_size(m, n, WIRE_MAX_MESSAGE_SIZE, &total);
	if (r < 0)
		return r;
	if (total == 0 || total > n)
		return -EAGAIN;
	r = wire_header_parse(m, total, &h);
	if (r < 0)
		return r;
	r = wire_body_validate(&h, m + h.header_len, h.body_len);
	if (r < 0)
		return r;
	if (ret)
		*ret = h;
	return 0;
}

static bool ours_ok(const uint8_t *m, size_t n) {
	return ours(m, n, NULL) == 0;
}

/* libdbus: only the first message; a shorter buffer is never valid */
static bool libdbus_ok(const uint8_t *m, size_t n) {
	DBusError e;
	DBusMessage *msg;
	size_t total = n;

	if (n >= 16) {
		int need = dbus_message_demarshal_bytes_needed((const char *)m, (int)n);
		if (need > 0 && (size_t)need < n)
			total = (size_t)need;
	}
	dbus_error_init(&e);
	msg = dbus_message_demarshal((const char *)m, (int)total, &e);
	if (msg) {
		dbus_message_unref(msg);
		return true;
	}
	dbus_error_free(&e);
	return false;
}

static bool valid(W *w) {
	return ours_ok(w->d, w->n);
}

static bool write_corpus_dir;
static char corpus_dir[4096];
static unsigned corpus_n;
static bool corpus_bodies;

static void corpus_write(const uint8_t *d, size_t n, const char *kind) {
	char path[4200];
	FILE *f;

	if (!write_corpus_dir)
		return;
	snprintf(path, sizeof(path), "%s/%s-%03u", corpus_dir, kind, corpus_n++);
	f = fopen(path, "we");
	assert(f);
	fwrite(d, 1, n, f);
	fclose(f);
}

/* ------------------------------------------------------------------------ */
/* names */

static void test_names(void) {
	check(wire_object_path_is_valid("/", 1));
	check(wire_object_path_is_valid("/a/b_c/D9", 9));
	check(!wire_object_path_is_valid("", 0));
	check(!wire_object_path_is_valid("a", 1));
	check(!wire_object_path_is_valid("/a/", 3));
	check(!wire_object_path_is_valid("//", 2));
	check(!wire_object_path_is_valid("/a//b", 5));
	check(!wire_object_path_is_valid("/a-b", 4));
	check(!wire_object_path_is_valid("/a.b", 4));

	check(wire_interface_is_valid("a.b", 3));
	check(wire_interface_is_valid("org.freedesktop.DBus", 20));
	check(wire_interface_is_valid("_a._9", 5));
	check(!wire_interface_is_valid("a", 1));
	check(!wire_interface_is_valid("a.9", 3));
	check(!wire_interface_is_valid(".a.b", 4));
	check(!wire_interface_is_valid("a..b", 4));
	check(!wire_interface_is_valid("a.b.", 4));
	check(!wire_interface_is_valid("a-b.c", 5));
	check(!wire_interface_is_valid("9a.b", 4));

	char big[300];
	memset(big, 'a', sizeof(big));
	big[1] = '.';
	check(wire_interface_is_valid(big, 255));
	check(!wire_interface_is_valid(big, 256));
	check(wire_member_is_valid(big + 2, 255));
	check(!wire_member_is_valid(big + 2, 256));
	check(wire_well_known_name_is_valid(big, 255));
	check(!wire_well_known_name_is_valid(big, 256));

	check(wire_member_is_valid("Hello", 5));
	check(wire_member_is_valid("_9", 2));
	check(!wire_member_is_valid("9a", 2));
	check(!wire_member_is_valid("a.b", 3));
	check(!wire_member_is_valid("", 0));
	check(!wire_member_is_valid("a-b", 3));

	check(wire_error_name_is_valid("org.x.Error.Failed", 18));
	check(!wire_error_name_is_valid("Failed", 6));

	check(wire_unique_name_is_valid(":1.0", 4));
	check(wire_unique_name_is_valid(":1.2.3-x_y", 10));
	check(wire_unique_name_is_valid(":a.b", 4));
	check(!wire_unique_name_is_valid(":1", 2));
	check(!wire_unique_name_is_valid(":", 1));
	check(!wire_unique_name_is_valid(":.1", 3));
	check(!wire_unique_name_is_valid(":1.", 3));
	check(!wire_unique_name_is_valid(":1..2", 5));
	check(!wire_unique_name_is_valid("1.2", 3));

	check(wire_well_known_name_is_valid("org.foo", 7));
	check(wire_well_known_name_is_valid("org.foo-bar._x", 14));
	check(wire_well_known_name_is_valid("-a.b", 4));
	check(!wire_well_known_name_is_valid("org", 3));
	check(!wire_well_known_name_is_valid("org.9x", 6));
	check(!wire_well_known_name_is_valid(".org.x", 6));
	check(!wire_well_known_name_is_valid(":org.x", 6));

	check(wire_bus_name_is_valid(":1.5", 4));
	check(wire_bus_name_is_valid("a.b", 3));
	check(!wire_bus_name_is_valid(":1", 2));
	check(!wire_bus_name_is_valid("", 0));

	/* libdbus's laxer unique names */
	check(wire_bus_name_is_valid_libdbus(":", 1, false));
	check(wire_bus_name_is_valid_libdbus(":1", 2, false));
	check(wire_bus_name_is_valid_libdbus(":.1", 3, false));
	check(!wire_bus_name_is_valid_libdbus(":1.", 3, false));
	check(!wire_bus_name_is_valid_libdbus("a", 1, false));
	check(wire_bus_name_is_valid_libdbus("a", 1, true));
	check(!wire_bus_name_is_valid_libdbus("a.", 2, true));
	check(!wire_bus_name_is_valid_libdbus("", 0, true));

	/* signatures, as libdbus */
	static const char *const good_sigs[] = {
		"", "y", "bnqiuxtdsogvh", "as", "a{sv}", "a{oa{sa{sv}}}", "(i)", "((i))",
		"a(ii)", "aai", "a{yv}", "v", "(ya{sv}as)", "a{s(ii)}",
	};
	static const char *const bad_sigs[] = {
		"a", "aa", "()", "(", ")", "(i", "i)", "{sv}", "a{}", "a{s}", "a{sss}",
		"a{vs}", "a{(i)s}", "a{ass}", "(a)", "a{sa}", "z", "r", "e", "a{s(i)",
		"m", "{", "}", "a)", "(}", "a{s}}",
	};
	for (size_t i = 0; i < ELEMENTSOF(good_sigs); i++) {
		bool ok = wire_signature_is_valid(good_sigs[i], strlen(good_sigs[i]));
		check(ok);
		check(dbus_signature_validate(good_sigs[i], NULL));
		if (!ok)
			fprintf(stderr, "  good sig: %s\n", good_sigs[i]);
	}
	for (size_t i = 0; i < ELEMENTSOF(bad_sigs); i++) {
		bool ok = wire_signature_is_valid(bad_sigs[i], strlen(bad_sigs[i]));
		check(!ok);
		check(!dbus_signature_validate(bad_sigs[i], NULL));
		if (ok)
			fprintf(stderr, "  bad sig: %s\n", bad_sigs[i]);
	}

	/* nesting limits: 32 consecutive arrays, 32 structs, 32 dict entries */
	char s[300];
	size_t n;

	n = 0;
	for (int i = 0; i < 32; i++)
		s[n++] = 'a';
	s[n++] = 'y';
	check(wire_signature_is_valid(s, n));
	memmove(s + 1, s, n);
	check(!wire_signature_is_valid(s, n + 1));

	n = 0;
	for (int i = 0; i < 32; i++)
		s[n++] = '(';
	s[n++] = 'y';
	for (int i = 0; i < 32; i++)
		s[n++] = ')';
	check(wire_signature_is_valid(s, n));
	memmove(s + 1, s, n);
	s[0] = '(';
	s[n + 1] = ')';
	check(!wire_signature_is_valid(s, n + 2));

	/* arrays nest without limit through structs (libdbus resets the count) */
	n = 0;
	for (int i = 0; i < 20; i++) {
		s[n++] = 'a';
		s[n++] = '(';
	}
	s[n++] = 'y';
	for (int i = 0; i < 20; i++)
		s[n++] = ')';
	check(wire_signature_is_valid(s, n));
	s[n] = 0;
	check(dbus_signature_validate(s, NULL));

	/* a 255-byte signature, and 256 */
	memset(s, 'y', 256);
	check(wire_signature_is_valid(s, 255));
	check(!wire_signature_is_valid(s, 256));

	/* UTF-8 */
	check(wire_utf8_is_valid("", 0));
	check(wire_utf8_is_valid("hello world, long ascii string", 30));
	check(wire_utf8_is_valid("\xc3\xa4", 2));
	check(wire_utf8_is_valid("\xe2\x82\xac", 3));
	check(wire_utf8_is_valid("\xf0\x9f\x98\x80", 4));
	check(wire_utf8_is_valid("\xef\xbf\xbf", 3));		/* noncharacters are fine */
	check(wire_utf8_is_valid("\xf4\x8f\xbf\xbf", 4));	/* U+10FFFF */
	check(!wire_utf8_is_valid("a\0b", 3));
	check(!wire_utf8_is_valid("abcdefgh\0", 9));
	check(!wire_utf8_is_valid("\x80", 1));
	check(!wire_utf8_is_valid("\xc0\x80", 2));		/* overlong NUL */
	check(!wire_utf8_is_valid("\xc1\xbf", 2));
	check(!wire_utf8_is_valid("\xe0\x80\x80", 3));
	check(!wire_utf8_is_valid("\xed\xa0\x80", 3));		/* surrogate */
	check(!wire_utf8_is_valid("\xf0\x80\x80\x80", 4));
	check(!wire_utf8_is_valid("\xf4\x90\x80\x80", 4));	/* > U+10FFFF */
	check(!wire_utf8_is_valid("\xf5\x80\x80\x80", 4));
	check(!wire_utf8_is_valid("\xf8\x88\x80\x80\x80", 5));
	check(!wire_utf8_is_valid("\xc3", 1));
	check(!wire_utf8_is_valid("\xe2\x82", 2));
	check(!wire_utf8_is_valid("\xe2\x28\xa1", 3));

	check(wire_type_from_string("signal") == WIRE_TYPE_SIGNAL);
	check(wire_type_from_string("method_call") == WIRE_TYPE_METHOD_CALL);
	check(wire_type_from_string("Signal") == WIRE_TYPE_INVALID);
	check(streq(wire_type_to_string(WIRE_TYPE_ERROR), "error"));
	check(wire_type_to_string(7) == NULL);
}

/* ------------------------------------------------------------------------ */
/* framing */

static void test_frame(void) {
	W w;
	size_t total, hl;
	uint8_t buf[16] = { 'l', 1, 0, 1 };

	check(wire_frame_size(buf, 0, 1 << 20, &total) == 0 && total == 0);
	check(wire_frame_size(buf, 15, 1 << 20, &total) == 0 && total == 0);
	buf[0] = 'x';
	check(wire_frame_size(buf, 1, 1 << 20, &total) == -EBADMSG);
	buf[0] = 'B';
	buf[3] = 2;
	check(wire_frame_size(buf, 4, 1 << 20, &total) == -EBADMSG);

	for (int be = 0; be <= 1; be++) {
		hl = msg_signal(&w, be, "s");
		w_str(&w, "x");
		msg_end(&w, hl);
		check(wire_frame_size(w.d, w.n, 1 << 20, &total) == 0 && total == w.n);
		check(wire_frame_size(w.d, 16, 1 << 20, &total) == 0 && total == w.n);
		check(wire_frame_size(w.d, w.n, w.n - 1, &total) == -EMSGSIZE);
		check(wire_frame_size(w.d, w.n, w.n, &total) == 0);

		/* body length at the maximum */
		W big = w;
		put32(&big, 4, WIRE_MAX_MESSAGE_SIZE - (uint32_t)hl);
		check(wire_frame_size(big.d, 16, SIZE_MAX, &total) == 0 &&
		      total == WIRE_MAX_MESSAGE_SIZE);
		put32(&big, 4, WIRE_MAX_MESSAGE_SIZE - (uint32_t)hl + 1);
		check(wire_frame_size(big.d, 16, SIZE_MAX, &total) == -EMSGSIZE);
		put32(&big, 4, UINT32_MAX);
		check(wire_frame_size(big.d, 16, SIZE_MAX, &total) == -EMSGSIZE);
		put32(&big, 4, 0);
		put32(&big, 12, WIRE_MAX_ARRAY_SIZE + 1);
		check(wire_frame_size(big.d, 16, SIZE_MAX, &total) == -EBADMSG);
		put32(&big, 12, UINT32_MAX);
		check(wire_frame_size(big.d, 16, SIZE_MAX, &total) == -EBADMSG);

		/* parse wants exactly one message */
		WireHeader h;
		check(wire_header_parse(w.d, w.n, &h) == 0);
		check(wire_header_parse(w.d, w.n - 1, &h) == -EBADMSG);
		w_u8(&w, 0);
		check(wire_header_parse(w.d, w.n, &h) == -EBADMSG);
	}
}

/* ------------------------------------------------------------------------ */
/* headers */

static void test_header_fields(void) {
	for (int be = 0; be <= 1; be++) {
		WireHeader h;
		W w;
		size_t hl;

		/* everything present */
		msg_begin(&w, be, WIRE_TYPE_METHOD_CALL, 0x7, 0x12345678);
		f_str(&w, WIRE_FIELD_PATH, 'o', "/org/x");
		f_str(&w, WIRE_FIELD_INTERFACE, 's', "org.x.Y");
		f_str(&w, WIRE_FIELD_MEMBER, 's', "Do");
		f_str(&w, WIRE_FIELD_DESTINATION, 's', "org.x");
		f_str(&w, WIRE_FIELD_SENDER, 's', ":1.99");
		f_str(&w, WIRE_FIELD_SIGNATURE, 'g', "su");
		f_u32(&w, WIRE_FIELD_UNIX_FDS, 2);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 5);
		hl = msg_end_header(&w);
		w_str(&w, "hi");
		w_u32(&w, 3);
		msg_end(&w, hl);
		check(wire_header_parse(w.d, w.n, &h) == 0);
		check(h.big_endian == be);
		check(h.type == WIRE_TYPE_METHOD_CALL && h.flags == 7 && h.version == 1);
		check(h.serial == 0x12345678);
		check(h.header_len == hl && h.total_len == w.n && h.body_len == w.n - hl);
		check(h.path.len == 6 && streq(h.path.s, "/org/x"));
		check(streq(h.interface.s, "org.x.Y") && streq(h.member.s, "Do"));
		check(streq(h.destination.s, "org.x") && streq(h.sender.s, ":1.99"));
		check(streq(h.signature.s, "su") && h.signature.len == 2);
		check(h.unix_fds == 2 && h.has_reply_serial && h.reply_serial == 5);
		check(!h.error_name.s);
		check(wire_body_validate(&h, w.d + hl, h.body_len) == 0);
		check(!wire_header_is_local(&h));

		/* required fields */
		struct {
			uint8_t type;
			unsigned fields;	/* bit per field code */
			bool ok;
		} req[] = {
			{ WIRE_TYPE_METHOD_CALL, 1 << 1 | 1 << 3, true },
			{ WIRE_TYPE_METHOD_CALL, 1 << 1, false },
			{ WIRE_TYPE_METHOD_CALL, 1 << 3, false },
			{ WIRE_TYPE_SIGNAL, 1 << 1 | 1 << 2 | 1 << 3, true },
			{ WIRE_TYPE_SIGNAL, 1 << 1 | 1 << 3, false },
			{ WIRE_TYPE_SIGNAL, 1 << 2 | 1 << 3, false },
			{ WIRE_TYPE_SIGNAL, 1 << 1 | 1 << 2, false },
			{ WIRE_TYPE_ERROR, 1 << 4 | 1 << 5, true },
			{ WIRE_TYPE_ERROR, 1 << 4, false },
			{ WIRE_TYPE_ERROR, 1 << 5, false },
			{ WIRE_TYPE_METHOD_RETURN, 1 << 5, true },
			{ WIRE_TYPE_METHOD_RETURN, 0, false },
			{ 5, 0, true },		/* unknown types: no requirements */
			{ 255, 0, true },
			{ 0, 1 << 1 | 1 << 3, false },
		};
		for (size_t i = 0; i < ELEMENTSOF(req); i++) {
			msg_begin(&w, be, req[i].type, 0, 1);
			if (req[i].fields & 1 << 1)
				f_str(&w, WIRE_FIELD_PATH, 'o', "/");
			if (req[i].fields & 1 << 2)
				f_str(&w, WIRE_FIELD_INTERFACE, 's', "a.b");
			if (req[i].fields & 1 << 3)
				f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
			if (req[i].fields & 1 << 4)
				f_str(&w, WIRE_FIELD_ERROR_NAME, 's', "a.E");
			if (req[i].fields & 1 << 5)
				f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 9);
			msg_end(&w, msg_end_header(&w));
			check(valid(&w) == req[i].ok);
			check(libdbus_ok(w.d, w.n) == req[i].ok);
		}

		/* serial 0, reply serial 0, version */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 0);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		msg_end(&w, msg_end_header(&w));
		check(!valid(&w));
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 0);
		msg_end(&w, msg_end_header(&w));
		check(!valid(&w));
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0xff, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		msg_end(&w, msg_end_header(&w));
		check(valid(&w));	/* unknown flags are ignored */
		w.d[3] = 2;
		check(!valid(&w));

		/* field values: (code, type, value, ok) */
		struct {
			uint8_t code;
			char type;
			const char *value;
			bool ok;
		} fv[] = {
			{ WIRE_FIELD_PATH, 's', "/a", false },
			{ WIRE_FIELD_PATH, 'o', "/a/", false },
			{ WIRE_FIELD_INTERFACE, 's', "a", false },
			{ WIRE_FIELD_INTERFACE, 'o', "/a", false },
			{ WIRE_FIELD_INTERFACE, 's', "a.b-c", false },
			{ WIRE_FIELD_ERROR_NAME, 's', "x.Y", true },
			{ WIRE_FIELD_ERROR_NAME, 's', "Y", false },
			{ WIRE_FIELD_DESTINATION, 's', "org.x", true },
			{ WIRE_FIELD_DESTINATION, 's', ":1.1", true },
			{ WIRE_FIELD_DESTINATION, 's', "org", false },
			{ WIRE_FIELD_DESTINATION, 's', "org.9", false },
			{ WIRE_FIELD_SENDER, 's', ":1.1", true },
			{ WIRE_FIELD_SENDER, 's', "a.b.c", true },
			{ WIRE_FIELD_SENDER, 's', "a..c", false },
			{ WIRE_FIELD_SIGNATURE, 'g', "", true },
			{ WIRE_FIELD_SIGNATURE, 's', "", false },
			{ WIRE_FIELD_SIGNATURE, 'g', "a", false },
			{ WIRE_FIELD_CONTAINER_INSTANCE, 'o', "/x", true },
			{ WIRE_FIELD_CONTAINER_INSTANCE, 's', "x", false },
			{ 11, 's', "anything", true },
			{ 200, 'g', "a{sv}", true },
			{ 255, 'o', "/x", true },
			{ 0, 's', "x", false },
		};
		for (size_t i = 0; i < ELEMENTSOF(fv); i++) {
			msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
			f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
			f_str(&w, fv[i].code, fv[i].type, fv[i].value);
			msg_end(&w, msg_end_header(&w));
			check(valid(&w) == fv[i].ok);
			check(libdbus_ok(w.d, w.n) == fv[i].ok);
			if (valid(&w) != fv[i].ok)
				fprintf(stderr, "  field %u '%c' '%s'\n", fv[i].code, fv[i].type,
					fv[i].value);
		}

		/* a field twice; an unknown field twice is fine */
		for (uint8_t code = 1; code <= 11; code++) {
			msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
			if (code != WIRE_FIELD_REPLY_SERIAL)
				f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
			for (int k = 0; k < 2; k++) {
				switch (code) {
				case 1: case 10: f_str(&w, code, 'o', "/a"); break;
				case 2: case 4: f_str(&w, code, 's', "a.b"); break;
				case 3: f_str(&w, code, 's', "m"); break;
				case 6: case 7: f_str(&w, code, 's', ":1.2"); break;
				case 8: f_str(&w, code, 'g', ""); break;
				case 11: f_str(&w, code, 's', "x"); break;
				default: f_u32(&w, code, 1); break;
				}
			}
			msg_end(&w, msg_end_header(&w));
			check(valid(&w) == (code == 11));
			check(libdbus_ok(w.d, w.n) == (code == 11));
		}

		/* unknown field with a complex variant */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		w_align(&w, 8);
		w_u8(&w, 42);
		w_sig(&w, "a{sv}");
		w_u32(&w, 0);
		w_align(&w, 8);
		{
			size_t lp = w.n - 8, start = w.n;
			w_align(&w, 8);
			w_str(&w, "k");
			w_sig(&w, "u");
			w_u32(&w, 1);
			put32(&w, lp, (uint32_t)(w.n - start));
		}
		msg_end(&w, msg_end_header(&w));
		check(valid(&w));
		check(libdbus_ok(w.d, w.n));

		/* UNIX_FD values in unknown header fields are not checked */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		w_align(&w, 8);
		w_u8(&w, 42);
		w_sig(&w, "h");
		w_u32(&w, 5);
		msg_end(&w, msg_end_header(&w));
		check(valid(&w));
		check(libdbus_ok(w.d, w.n));

		/* variant with two types, and empty variant, in an unknown field */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		w_align(&w, 8);
		w_u8(&w, 42);
		w_sig(&w, "yy");
		w_u8(&w, 1);
		w_u8(&w, 2);
		msg_end(&w, msg_end_header(&w));
		check(!valid(&w));
		check(!libdbus_ok(w.d, w.n));

		/* non-zero padding between fields and after the fields */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		f_str(&w, WIRE_FIELD_SENDER, 's', ":1.2");	/* ends unaligned */
		size_t pad_at = w.n;
		f_u32(&w, WIRE_FIELD_UNIX_FDS, 0);
		hl = msg_end_header(&w);
		msg_end(&w, hl);
		check(valid(&w));
		w.d[pad_at] = 1;
		check(!valid(&w));
		check(!libdbus_ok(w.d, w.n));

		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		f_str(&w, WIRE_FIELD_SENDER, 's', ":1.2");
		pad_at = w.n;
		hl = msg_end_header(&w);
		msg_end(&w, hl);
		check(pad_at < hl && valid(&w));
		w.d[pad_at] = 1;
		check(!valid(&w));
		check(!libdbus_ok(w.d, w.n));

		/* fields length that cuts a field */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 1);
		f_str(&w, WIRE_FIELD_SENDER, 's', ":1.2");
		hl = msg_end_header(&w);
		put32(&w, 12, 8 + 7);
		msg_end(&w, 16 + 16);
		w.n = 32;
		put32(&w, 4, 0);
		check(!valid(&w));
		check(!libdbus_ok(w.d, w.n));

		/* local path and interface: parsed, flagged */
		msg_begin(&w, be, WIRE_TYPE_SIGNAL, 0, 1);
		f_str(&w, WIRE_FIELD_PATH, 'o', WIRE_PATH_LOCAL);
		f_str(&w, WIRE_FIELD_INTERFACE, 's', "a.b");
		f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
		msg_end(&w, msg_end_header(&w));
		check(ours(w.d, w.n, &h) == 0 && wire_header_is_local(&h));
		check(!libdbus_ok(w.d, w.n));
		if (be)
			corpus_write(w.d, w.n, "local");
		msg_begin(&w, be, WIRE_TYPE_SIGNAL, 0, 1);
		f_str(&w, WIRE_FIELD_PATH, 'o', "/a");
		f_str(&w, WIRE_FIELD_INTERFACE, 's', WIRE_INTERFACE_LOCAL);
		f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
		msg_end(&w, msg_end_header(&w));
		check(ours(w.d, w.n, &h) == 0 && wire_header_is_local(&h));
		check(!libdbus_ok(w.d, w.n));
		msg_begin(&w, be, WIRE_TYPE_SIGNAL, 0, 1);
		f_str(&w, WIRE_FIELD_PATH, 'o', "/org/freedesktop/DBus/Local/x");
		f_str(&w, WIRE_FIELD_INTERFACE, 's', "org.freedesktop.DBus.Localx");
		f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
		msg_end(&w, msg_end_header(&w));
		check(ours(w.d, w.n, &h) == 0 && !wire_header_is_local(&h));
	}
}

/* ------------------------------------------------------------------------ */
/* bodies */

typedef void (*BodyFn)(W *w);

static bool body_ok(bool be, const char *sig, BodyFn fn, uint32_t unix_fds, bool *lib) {
	W w;
	size_t hl;

	msg_begin(&w, be, WIRE_TYPE_SIGNAL, 0, 7);
	f_str(&w, WIRE_FIELD_PATH, 'o', "/a/b");
	f_str(&w, WIRE_FIELD_INTERFACE, 's', "org.example.Iface");
	f_str(&w, WIRE_FIELD_MEMBER, 's', "Sig");
	if (sig)
		f_str(&w, WIRE_FIELD_SIGNATURE, 'g', sig);
	if (unix_fds)
		f_u32(&w, WIRE_FIELD_UNIX_FDS, unix_fds);
	hl = msg_end_header(&w);
	fn(&w);
	msg_end(&w, hl);
	if (corpus_bodies)
		corpus_write(w.d, w.n, "body");
	if (lib)
		*lib = libdbus_ok(w.d, w.n);
	return valid(&w);
}

static void b_empty(W *w) { (void)w; }
static void b_byte(W *w) { w_u8(w, 7); }
static void b_bool0(W *w) { w_u32(w, 0); }
static void b_bool1(W *w) { w_u32(w, 1); }
static void b_bool2(W *w) { w_u32(w, 2); }
static void b_u32_short(W *w) { w_u8(w, 1); w_u8(w, 2); }
static void b_yu_ok(W *w) { w_u8(w, 1); w_u32(w, 5); }
static void b_yu_badpad(W *w) { w_u8(w, 1); w_u8(w, 1); w_u8(w, 0); w_u8(w, 0); w_u32(w, 5); }
static void b_yt_ok(W *w) { w_u8(w, 1); w_u64(w, 5); }
static void b_yn(W *w) { w_u8(w, 1); w_u16(w, 5); }
static void b_s_ok(W *w) { w_str(w, "hello"); }
static void b_s_nonul(W *w) { w_u32(w, 2); w_u8(w, 'a'); w_u8(w, 'b'); w_u8(w, 'c'); }
static void b_s_embnul(W *w) { w_u32(w, 3); w_raw(w, "a\0b", 4); }
static void b_s_badutf8(W *w) { w_u32(w, 1); w_raw(w, "\xff", 2); }
static void b_s_long(W *w) { w_u32(w, 1000); w_raw(w, "ab", 3); }
static void b_o_ok(W *w) { w_str(w, "/x/y"); }
static void b_o_bad(W *w) { w_str(w, "x/y"); }
static void b_g_ok(W *w) { w_sig(w, "a{sv}"); }
static void b_g_bad(W *w) { w_sig(w, "a{vs}"); }
static void b_g_nonul(W *w) { w_u8(w, 1); w_u8(w, 'i'); w_u8(w, 'x'); }
static void b_trailing(W *w) { w_str(w, "x"); w_u8(w, 0); }
static void b_v_u(W *w) { w_sig(w, "u"); w_u32(w, 1); }
static void b_v_empty(W *w) { w_sig(w, ""); }
static void b_v_two(W *w) { w_sig(w, "uu"); w_u32(w, 1); w_u32(w, 1); }
static void b_v_badpad(W *w) { w_sig(w, "u"); w_u8(w, 1); w_u32(w, 1); }
static void b_ai_ok(W *w) { w_u32(w, 8); w_u32(w, 1); w_u32(w, 2); }
static void b_ai_empty(W *w) { w_u32(w, 0); }
static void b_ai_partial(W *w) { w_u32(w, 6); w_u32(w, 1); w_u8(w, 0); w_u8(w, 0); }
static void b_ab_partial(W *w) { w_u32(w, 6); w_u32(w, 1); w_u8(w, 0); w_u8(w, 0); }
static void b_ab_two(W *w) { w_u32(w, 4); w_u32(w, 2); }
static void b_at_empty_nopad(W *w) { w_u32(w, 0); }
static void b_at_empty_pad(W *w) { w_u32(w, 0); w_u32(w, 0); }
static void b_at_empty_badpad(W *w) { w_u32(w, 0); w_u32(w, 1); }
static void b_as_ok(W *w) {
	size_t lp;
	w_u32(w, 0);
	lp = w->n - 4;
	w_str(w, "a");
	w_str(w, "bc");
	put32(w, lp, (uint32_t)(w->n - lp - 4));
}
static void b_as_len_short(W *w) {
	size_t lp;
	w_u32(w, 0);
	lp = w->n - 4;
	w_str(w, "a");
	w_str(w, "bc");
	put32(w, lp, (uint32_t)(w->n - lp - 4 - 1));
}
static void b_as_len_long(W *w) {
	size_t lp;
	w_u32(w, 0);
	lp = w->n - 4;
	w_str(w, "a");
	w_u8(w, 0);
	put32(w, lp, (uint32_t)(w->n - lp - 4));
}
static void b_array_huge(W *w) { w_u32(w, WIRE_MAX_ARRAY_SIZE + 1); }
static void b_a_sv(W *w) {
	size_t lp, start;
	w_u32(w, 0);
	lp = w->n - 4;
	w_align(w, 8);
	start = w->n;
	w_str(w, "k");
	w_sig(w, "s");
	w_str(w, "v");
	w_align(w, 8);
	w_str(w, "k2");
	w_sig(w, "ai");
	w_u32(w, 4);
	w_u32(w, 9);
	put32(w, lp, (uint32_t)(w->n - start));
}
static void b_struct(W *w) { w_u8(w, 1); w_align(w, 8); w_u32(w, 1); w_str(w, "x"); }
static void b_struct_badpad(W *w) { w_u8(w, 1); w_u8(w, 1); w_align(w, 8); w_u32(w, 1); w_str(w, "x"); }
static void b_h0(W *w) { w_u32(w, 0); }
static void b_h1(W *w) { w_u32(w, 1); }
static void b_ah1(W *w) { w_u32(w, 8); w_u32(w, 0); w_u32(w, 1); }

static void test_body(void) {
	struct {
		const char *sig;
		BodyFn fn;
		uint32_t fds;
		bool ok;
		bool lib_ok;	/* what libdbus says (if different: libdbus's fault) */
	} t[] = {
		{ NULL, b_empty, 0, true, true },
		{ NULL, b_byte, 0, false, false },
		{ "", b_empty, 0, true, true },
		{ "y", b_empty, 0, false, false },
		{ "y", b_byte, 0, true, true },
		{ "b", b_bool0, 0, true, true },
		{ "b", b_bool1, 0, true, true },
		{ "b", b_bool2, 0, false, false },
		{ "u", b_u32_short, 0, false, false },
		{ "yu", b_yu_ok, 0, true, true },
		{ "yu", b_yu_badpad, 0, false, false },
		{ "yt", b_yt_ok, 0, true, true },
		{ "yn", b_yn, 0, true, true },
		{ "s", b_s_ok, 0, true, true },
		{ "s", b_s_nonul, 0, false, false },
		{ "s", b_s_embnul, 0, false, false },
		{ "s", b_s_badutf8, 0, false, false },
		{ "s", b_s_long, 0, false, false },
		{ "o", b_o_ok, 0, true, true },
		{ "o", b_o_bad, 0, false, false },
		{ "g", b_g_ok, 0, true, true },
		{ "g", b_g_bad, 0, false, false },
		{ "g", b_g_nonul, 0, false, false },
		{ "s", b_trailing, 0, false, false },
		{ "v", b_v_u, 0, true, true },
		{ "v", b_v_empty, 0, false, false },
		{ "v", b_v_two, 0, false, false },
		{ "v", b_v_badpad, 0, false, false },
		{ "ai", b_ai_ok, 0, true, true },
		{ "ai", b_ai_empty, 0, true, true },
		{ "ai", b_ai_partial, 0, false, false },
		{ "ab", b_ab_partial, 0, false, false },
		{ "ab", b_ab_two, 0, false, false },
		{ "at", b_at_empty_nopad, 0, false, false },
		{ "at", b_at_empty_pad, 0, true, true },
		{ "at", b_at_empty_badpad, 0, false, false },
		{ "as", b_as_ok, 0, true, true },
		{ "as", b_as_len_short, 0, false, false },
		{ "as", b_as_len_long, 0, false, false },
		{ "ay", b_array_huge, 0, false, false },
		{ "a{sv}", b_a_sv, 0, true, true },
		{ "y(us)", b_struct, 0, true, true },
		{ "y(us)", b_struct_badpad, 0, false, false },
		/* as libdbus: no check of the index against UNIX_FDS */
		{ "h", b_h0, 0, true, true },
		{ "ah", b_ah1, 0, true, true },
		/* with fds, libdbus's demarshal always refuses: not compared */
		{ "h", b_h0, 1, true, false },
		{ "h", b_h1, 1, true, false },
		{ "h", b_h1, 2, true, false },
		{ "ah", b_ah1, 1, true, false },
		{ "ah", b_ah1, 2, true, false },
	};

	for (int be = 0; be <= 1; be++)
		for (size_t i = 0; i < ELEMENTSOF(t); i++) {
			corpus_bodies = be == 1;
			bool lib, ok = body_ok(be, t[i].sig, t[i].fn, t[i].fds, &lib);
			corpus_bodies = false;

			check(ok == t[i].ok);
			check(lib == t[i].lib_ok);
			if (ok != t[i].ok || lib != t[i].lib_ok)
				fprintf(stderr, "  body %zu sig %s be %d: ours %d libdbus %d\n", i,
					t[i].sig, be, ok, lib);

			/* in libdbus compat mode we agree exactly (fds aside) */
			if (t[i].fds == 0) {
				wire_set_libdbus_compat(true);
				ok = body_ok(be, t[i].sig, t[i].fn, 0, NULL);
				wire_set_libdbus_compat(false);
				check(ok == t[i].lib_ok);
			}
		}
}

/* nesting depth: values nest at most 64 levels (arrays, structs, variants) */
static int depth_n;
static void b_nested_variants(W *w) {
	for (int i = 0; i < depth_n; i++)
		w_sig(w, "v");
	w_sig(w, "y");
	w_u8(w, 1);
}
static void b_nested_arrays(W *w) {
	/* depth_n nested "av" arrays each with one variant holding the next */
	size_t lens[200];
	for (int i = 0; i < depth_n; i++) {
		w_u32(w, 0);
		lens[i] = w->n;
		w_sig(w, i + 1 < depth_n ? "av" : "y");
	}
	w_u8(w, 1);
	for (int i = depth_n - 1; i >= 0; i--)
		put32(w, lens[i] - 4, (uint32_t)(w->n - lens[i]));
}

static void test_depth(void) {
	for (int be = 0; be <= 1; be++) {
		bool lib;

		/* body "v": variant contents at level 1, each nested variant +1 */
		for (depth_n = 60; depth_n <= 66; depth_n++) {
			corpus_bodies = be == 0 && (depth_n == 63 || depth_n == 64);
			bool ok = body_ok(be, "v", b_nested_variants, 0, &lib);
			corpus_bodies = false;
			check(ok == lib);
			check(ok == (depth_n <= 63));
		}
		for (depth_n = 25; depth_n <= 40; depth_n++) {
			bool ok = body_ok(be, "av", b_nested_arrays, 0, &lib);
			check(ok == lib);
			check(ok == (2 * depth_n <= 64));
		}
	}

	/* 32 nested structs in the signature: fine; 33: invalid signature */
	char sig[80];
	size_t n = 0;
	for (int i = 0; i < 32; i++)
		sig[n++] = '(';
	sig[n++] = 'y';
	for (int i = 0; i < 32; i++)
		sig[n++] = ')';
	sig[n] = 0;
	W w;
	size_t hl = msg_signal(&w, false, sig);
	w_u8(&w, 5);
	msg_end(&w, hl);
	check(valid(&w) && libdbus_ok(w.d, w.n));
}

/* ------------------------------------------------------------------------ */
/* rewrite */

static void test_rewrite(void) {
	for (int be = 0; be <= 1; be++) {
		WireHeader h, h2;
		uint8_t out[4096];
		size_t hl, len;
		W w;

		msg_begin(&w, be, WIRE_TYPE_METHOD_CALL, 3, 77);
		f_str(&w, 200, 's', "unknown, dropped");
		f_str(&w, WIRE_FIELD_SENDER, 's', ":9.9");	/* forged */
		f_str(&w, WIRE_FIELD_MEMBER, 's', "Do");
		f_str(&w, WIRE_FIELD_CONTAINER_INSTANCE, 'o', "/c");
		f_str(&w, WIRE_FIELD_SIGNATURE, 'g', "su");
		f_str(&w, WIRE_FIELD_PATH, 'o', "/p");
		f_str(&w, WIRE_FIELD_DESTINATION, 's', "org.d");
		f_u32(&w, WIRE_FIELD_UNIX_FDS, 1);
		f_str(&w, WIRE_FIELD_INTERFACE, 's', "org.i");
		hl = msg_end_header(&w);
		w_str(&w, "body");
		w_u32(&w, 0xdeadbeef);
		msg_end(&w, hl);
		check(wire_header_parse(w.d, w.n, &h) == 0);

		size_t need = wire_header_rewrite_size(&h, 6);
		check(wire_header_rewrite(&h, ":1.234", 6, out, need - 1, &len) == -ENOBUFS);
		check(wire_header_rewrite(&h, ":1.234", 6, out, sizeof(out), &len) == 0);
		check(len % 8 == 0 && len <= need);
		memcpy(out + len, w.d + hl, h.body_len);
		check(wire_header_parse(out, len + h.body_len, &h2) == 0);
		check(wire_body_validate(&h2, out + len, h2.body_len) == 0);
		check(h2.big_endian == be && h2.type == h.type && h2.flags == 3 && h2.serial == 77);
		check(streq(h2.sender.s, ":1.234"));
		check(streq(h2.path.s, "/p") && streq(h2.interface.s, "org.i"));
		check(streq(h2.member.s, "Do") && streq(h2.destination.s, "org.d"));
		check(streq(h2.signature.s, "su") && h2.unix_fds == 1);
		check(memcmp(out + len, w.d + hl, h.body_len) == 0);

		/* idempotent */
		uint8_t out2[4096];
		size_t len2;
		check(wire_header_rewrite(&h2, ":1.234", 6, out2, sizeof(out2), &len2) == 0);
		check(len2 == len && memcmp(out, out2, len) == 0);

		/* no sender at all; and a driver sender */
		check(wire_header_rewrite(&h, NULL, 0, out2, sizeof(out2), &len2) == 0);
		memcpy(out2 + len2, w.d + hl, h.body_len);
		check(wire_header_parse(out2, len2 + h.body_len, &h2) == 0 && !h2.sender.s);
		check(wire_header_rewrite(&h, "org.freedesktop.DBus", 20, out2, sizeof(out2), &len2) == 0);
		memcpy(out2 + len2, w.d + hl, h.body_len);
		check(wire_header_parse(out2, len2 + h.body_len, &h2) == 0 &&
		      streq(h2.sender.s, "org.freedesktop.DBus"));

		/* libdbus reads it (after dropping UNIX_FDS, which demarshal can't do) */
		WireHeader h3 = h;
		h3.unix_fds = 0;
		check(wire_header_rewrite(&h3, ":1.234", 6, out2, sizeof(out2), &len2) == 0);
		memcpy(out2 + len2, w.d + hl, h.body_len);
		DBusError e;
		dbus_error_init(&e);
		DBusMessage *m = dbus_message_demarshal((const char *)out2, (int)(len2 + h.body_len), &e);
		check(m);
		if (m) {
			const char *s = NULL;
			dbus_uint32_t u = 0;
			check(streq(dbus_message_get_sender(m), ":1.234"));
			check(streq(dbus_message_get_path(m), "/p"));
			check(dbus_message_get_serial(m) == 77);
			check(dbus_message_get_args(m, &e, DBUS_TYPE_STRING, &s, DBUS_TYPE_UINT32, &u,
						    DBUS_TYPE_INVALID));
			check(s && streq(s, "body") && u == 0xdeadbeef);
			dbus_message_unref(m);
		}
		dbus_error_free(&e);

		/* minimal: method return */
		msg_begin(&w, be, WIRE_TYPE_METHOD_RETURN, 0, 1);
		f_u32(&w, WIRE_FIELD_REPLY_SERIAL, 12);
		hl = msg_end_header(&w);
		msg_end(&w, hl);
		check(wire_header_parse(w.d, w.n, &h) == 0);
		check(wire_header_rewrite(&h, ":1.1", 4, out, sizeof(out), &len) == 0);
		check(wire_header_parse(out, len, &h2) == 0 && h2.reply_serial == 12 &&
		      streq(h2.sender.s, ":1.1"));
		check(len <= wire_header_rewrite_size(&h, 4));
	}
}

/* the codes of the header fields of @msg, in order, as a string of digits */
static void field_codes(const uint8_t *msg, size_t len, char *out) {
	WireHeader h;

	*out = 0;
	if (wire_header_parse(msg, len, &h) < 0)
		return;
	for (size_t i = 0; i < h.n_order; i++)
		*out++ = (char) ('0' + h.order[i]);
	*out = 0;
}

/* as dbus-daemon forwards a message: the fields keep their order, the
 * SENDER goes where the forged one was or last, unknown fields and
 * CONTAINER_INSTANCE go, an empty SIGNATURE and UNIX_FDS 0 stay */
TEST(rewrite_keeps_order) {
	static W w;
	WireHeader h;
	uint8_t out[4096];
	size_t hl, len = 0;
	char codes[16];

	for (int be = 0; be <= 1; be++) {
		msg_begin(&w, be, WIRE_TYPE_SIGNAL, 0, 5);
		f_u32(&w, WIRE_FIELD_UNIX_FDS, 0);
		f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
		f_str(&w, WIRE_FIELD_CONTAINER_INSTANCE, 'o', "/c");
		f_str(&w, 0x80, 's', "unknown");
		f_str(&w, WIRE_FIELD_SIGNATURE, 'g', "");
		f_str(&w, WIRE_FIELD_SENDER, 's', ":9.9");
		f_str(&w, WIRE_FIELD_INTERFACE, 's', "org.i");
		f_str(&w, WIRE_FIELD_PATH, 'o', "/p");
		hl = msg_end_header(&w);
		msg_end(&w, hl);
		check(wire_header_parse(w.d, w.n, &h) == 0);
		check(wire_header_rewrite(&h, ":1.42", 5, out, sizeof(out), &len) == 0);
		check(len <= wire_header_rewrite_size(&h, 5));
		field_codes(out, len, codes);
		check(streq(codes, "938721"));

		/* no SENDER: it goes last */
		msg_begin(&w, be, WIRE_TYPE_METHOD_CALL, 0, 6);
		f_str(&w, WIRE_FIELD_SIGNATURE, 'g', "");
		f_str(&w, WIRE_FIELD_DESTINATION, 's', "org.d");
		f_str(&w, WIRE_FIELD_MEMBER, 's', "M");
		f_str(&w, WIRE_FIELD_PATH, 'o', "/p");
		hl = msg_end_header(&w);
		msg_end(&w, hl);
		check(wire_header_parse(w.d, w.n, &h) == 0);
		check(wire_header_rewrite(&h, ":1.42", 5, out, sizeof(out), &len) == 0);
		check(len <= wire_header_rewrite_size(&h, 5));
		field_codes(out, len, codes);
		check(streq(codes, "86317"));
	}
}

/* the builder writes the fields in the order they were first set, and the
 * SIGNATURE where the body began, as libdbus builds a message */
TEST(builder_field_order) {
	WireBuilder b;
	uint8_t *msg;
	size_t len;
	char codes[16];

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_RETURN, 0, 9) == 0);
	wire_builder_set_destination(&b, ":1.5");
	wire_builder_set_reply_serial(&b, 3);
	wire_builder_append(&b, "s", "x");
	wire_builder_set_sender(&b, "org.freedesktop.DBus");
	check(wire_builder_finish(&b, &msg, &len) == 0);
	field_codes(msg, len, codes);
	check(streq(codes, "6587"));
	free(msg);

	check(wire_builder_init(&b, WIRE_TYPE_SIGNAL, 0, 9) == 0);
	wire_builder_set_path(&b, "/org/freedesktop/DBus");
	wire_builder_set_interface(&b, "org.freedesktop.DBus");
	wire_builder_set_member(&b, "NameOwnerChanged");
	wire_builder_set_sender(&b, "org.freedesktop.DBus");
	wire_builder_set_destination(&b, ":1.1");
	wire_builder_set_destination(&b, NULL);	/* removed */
	wire_builder_append(&b, "sss", "a.b", "", ":1.1");
	wire_builder_set_path(&b, "/org/freedesktop/DBus");	/* set again: stays */
	check(wire_builder_finish(&b, &msg, &len) == 0);
	field_codes(msg, len, codes);
	check(streq(codes, "12378"));
	free(msg);
}

/* ------------------------------------------------------------------------ */
/* argument extraction */

static void test_args(void) {
	for (int be = 0; be <= 1; be++) {
		WireHeader h;
		WireArg a[8];
		WireString s[8];
		char types[8];
		size_t hl, lp;
		W w;

		hl = msg_signal(&w, be, "sa{sv}oiasgvay");
		w_str(&w, "zero");
		w_u32(&w, 0);		/* empty a{sv} */
		w_align(&w, 8);
		w_str(&w, "/two");
		w_u32(&w, 3);
		w_u32(&w, 0);
		lp = w.n - 4;
		w_str(&w, "x");
		w_str(&w, "yy");
		w_str(&w, "");
		put32(&w, lp, (uint32_t)(w.n - lp - 4));
		w_sig(&w, "ii");
		w_sig(&w, "s");
		w_str(&w, "var");
		w_u32(&w, 2);
		w_u8(&w, 1);
		w_u8(&w, 2);
		msg_end(&w, hl);
		check(ours(w.d, w.n, &h) == 0);

		const uint8_t *body = w.d + hl;
		unsigned n = wire_body_args(&h, body, a, 8);
		check(n == 8);
		check(a[0].type == 's' && a[0].str.len == 4 && streq(a[0].str.s, "zero"));
		check(a[1].type == 0);
		check(a[2].type == 'o' && streq(a[2].str.s, "/two"));
		check(a[3].type == 0);
		check(a[4].type == 'a' && a[4].elem == 's');
		check(a[5].type == 'g' && streq(a[5].str.s, "ii"));
		check(a[6].type == 0 && a[7].type == 0);

		uint32_t cur = 0;
		WireString e;
		check(wire_arg_array_next(&h, body, &a[4], &cur, &e) && streq(e.s, "x"));
		check(wire_arg_array_next(&h, body, &a[4], &cur, &e) && streq(e.s, "yy"));
		check(wire_arg_array_next(&h, body, &a[4], &cur, &e) && e.len == 0);
		check(!wire_arg_array_next(&h, body, &a[4], &cur, &e));

		check(wire_body_args(&h, body, a, 2) == 2);
		n = wire_body_string_args(&h, body, s, types, 8);
		check(n == 8 && types[0] == 's' && types[4] == 'a' && !s[4].s && types[1] == 0);
		check(streq(s[5].s, "ii"));

		/* ag */
		hl = msg_signal(&w, be, "yag");
		w_u8(&w, 1);
		w_u32(&w, 0);
		lp = w.n - 4;
		w_sig(&w, "s");
		w_sig(&w, "a{sv}");
		put32(&w, lp, (uint32_t)(w.n - lp - 4));
		msg_end(&w, hl);
		check(ours(w.d, w.n, &h) == 0);
		body = w.d + hl;
		check(wire_body_args(&h, body, a, 8) == 2);
		check(a[0].type == 0 && a[1].type == 'a' && a[1].elem == 'g');
		cur = 0;
		check(wire_arg_array_next(&h, body, &a[1], &cur, &e) && streq(e.s, "s"));
		check(wire_arg_array_next(&h, body, &a[1], &cur, &e) && streq(e.s, "a{sv}"));
		check(!wire_arg_array_next(&h, body, &a[1], &cur, &e));

		/* no body */
		hl = msg_signal(&w, be, NULL);
		msg_end(&w, hl);
		check(ours(w.d, w.n, &h) == 0);
		check(wire_body_args(&h, w.d + hl, a, 8) == 0);
	}
}

/* ------------------------------------------------------------------------ */
/* builder */

static DBusMessage *demarshal(const uint8_t *m, size_t n) {
	DBusError e;
	DBusMessage *msg;

	dbus_error_init(&e);
	msg = dbus_message_demarshal((const char *)m, (int)n, &e);
	if (!msg) {
		fprintf(stderr, "  demarshal: %s\n", e.message);
		dbus_error_free(&e);
	}
	return msg;
}

static void test_builder(void) {
	WireBuilder b;
	WireHeader h;
	uint8_t *msg;
	size_t len;

	/* NameOwnerChanged */
	check(wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, 3) == 0);
	check(wire_builder_set_path(&b, "/org/freedesktop/DBus") == 0);
	check(wire_builder_set_interface(&b, "org.freedesktop.DBus") == 0);
	check(wire_builder_set_member(&b, "NameOwnerChanged") == 0);
	check(wire_builder_set_sender(&b, "org.freedesktop.DBus") == 0);
	check(wire_builder_append(&b, "sss", "org.x", "", ":1.5") == 0);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	check(ours(msg, len, &h) == 0);
	check(h.type == WIRE_TYPE_SIGNAL && h.serial == 3 && streq(h.signature.s, "sss"));
	check(streq(h.sender.s, "org.freedesktop.DBus") && streq(h.member.s, "NameOwnerChanged"));
	DBusMessage *m = demarshal(msg, len);
	check(m);
	if (m) {
		const char *a, *bb, *c;
		DBusError e;
		dbus_error_init(&e);
		check(dbus_message_get_args(m, &e, DBUS_TYPE_STRING, &a, DBUS_TYPE_STRING, &bb,
					    DBUS_TYPE_STRING, &c, DBUS_TYPE_INVALID));
		check(streq(a, "org.x") && streq(bb, "") && streq(c, ":1.5"));
		check(dbus_message_get_no_reply(m));
		check(dbus_message_is_signal(m, "org.freedesktop.DBus", "NameOwnerChanged"));
		dbus_message_unref(m);
	}
	free(msg);

	/* error reply */
	check(wire_builder_init(&b, WIRE_TYPE_ERROR, 0, 9) == 0);
	check(wire_builder_set_error_name(&b, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0);
	check(wire_builder_set_reply_serial(&b, 44) == 0);
	check(wire_builder_set_destination(&b, ":1.7") == 0);
	check(wire_builder_append(&b, "s", "Name \"x.y\" does not exist") == 0);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	m = demarshal(msg, len);
	check(m && dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_ERROR);
	if (m) {
		check(dbus_message_get_reply_serial(m) == 44);
		check(streq(dbus_message_get_error_name(m), "org.freedesktop.DBus.Error.NameHasNoOwner"));
		check(streq(dbus_message_get_destination(m), ":1.7"));
		dbus_message_unref(m);
	}
	free(msg);

	/* every type, containers, in a caller buffer (GetConnectionCredentials-like) */
	static uint64_t storage[512];
	check(wire_builder_init_buffer(&b, storage, sizeof(storage), WIRE_TYPE_METHOD_RETURN, 0, 10) == 0);
	check(wire_builder_set_reply_serial(&b, 1) == 0);
	check(wire_builder_open_container(&b, 'a', "{sv}") == 0);
	check(wire_builder_open_container(&b, 'e', "sv") == 0);
	check(wire_builder_append_basic(&b, 's', "UnixUserID") == 0);
	check(wire_builder_open_container(&b, 'v', "u") == 0);
	check(wire_builder_append(&b, "u", 1000u) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_open_container(&b, '{', "sv") == 0);
	check(wire_builder_append_basic(&b, 's', "UnixGroupIDs") == 0);
	check(wire_builder_open_container(&b, 'v', "au") == 0);
	check(wire_builder_open_container(&b, 'a', "u") == 0);
	check(wire_builder_append(&b, "uu", 1u, 2u) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_close_container(&b) == 0);
	/* then: y b n q i u x t d s o g h, an empty array of structs, a struct */
	check(wire_builder_append(&b, "ybnqiuxtdsog", 0xab, 1, -2, 3, -4, 5u, (int64_t)-6,
				  (uint64_t)7, 8.5, "str", "/obj/path", "a(iv)") == 0);
	uint32_t fd = 0;
	check(wire_builder_append_basic(&b, 'h', &fd) == 0);
	check(wire_builder_open_container(&b, 'a', "(ti)") == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_open_container(&b, 'r', "ya{ss}") == 0);
	check(wire_builder_append(&b, "y", 1) == 0);
	check(wire_builder_open_container(&b, 'a', "{ss}") == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_set_unix_fds(&b, 1) == 0);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	check(msg == (uint8_t *)storage);
	check(ours(msg, len, &h) == 0);
	check(streq(h.signature.s, "a{sv}ybnqiuxtdsogha(ti)(ya{ss})"));
	/* libdbus, without the fds */
	{
		WireHeader h2 = h;
		uint8_t out[8192];
		size_t ol;
		h2.unix_fds = 0;
		check(wire_header_rewrite(&h2, NULL, 0, out, sizeof(out), &ol) == 0);
		memcpy(out + ol, msg + h.header_len, h.body_len);
		m = demarshal(out, ol + h.body_len);
		check(m);
		if (m) {
			DBusMessageIter it, sub, e, v;
			const char *k;
			dbus_uint32_t u;
			dbus_message_iter_init(m, &it);
			check(dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_ARRAY);
			dbus_message_iter_recurse(&it, &sub);
			dbus_message_iter_recurse(&sub, &e);
			dbus_message_iter_get_basic(&e, &k);
			check(streq(k, "UnixUserID"));
			dbus_message_iter_next(&e);
			dbus_message_iter_recurse(&e, &v);
			dbus_message_iter_get_basic(&v, &u);
			check(u == 1000);
			dbus_message_iter_next(&it);
			unsigned char y;
			dbus_message_iter_get_basic(&it, &y);
			check(y == 0xab);
			dbus_message_iter_next(&it);
			dbus_bool_t bo;
			dbus_message_iter_get_basic(&it, &bo);
			check(bo == TRUE);
			dbus_message_iter_next(&it);
			dbus_int16_t n16;
			dbus_message_iter_get_basic(&it, &n16);
			check(n16 == -2);
			for (int i = 0; i < 6; i++)
				dbus_message_iter_next(&it);
			double d;
			dbus_message_iter_get_basic(&it, &d);
			check(d == 8.5);
			dbus_message_iter_next(&it);
			dbus_message_iter_get_basic(&it, &k);
			check(streq(k, "str"));
			dbus_message_unref(m);
		}
	}

	/* type errors are sticky */
	check(wire_builder_init(&b, WIRE_TYPE_METHOD_RETURN, 0, 10) == 0);
	check(wire_builder_set_reply_serial(&b, 1) == 0);
	check(wire_builder_open_container(&b, 'a', "s") == 0);
	check(wire_builder_append(&b, "u", 1u) == -EINVAL);
	check(wire_builder_append(&b, "s", "x") == -EINVAL);
	check(wire_builder_finish(&b, &msg, &len) == -EINVAL);
	wire_builder_done(&b);

	/* more misuse */
	check(wire_builder_init(&b, WIRE_TYPE_METHOD_RETURN, 0, 0) == -EINVAL);
	check(wire_builder_init(&b, WIRE_TYPE_INVALID, 0, 1) == -EINVAL);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_RETURN, 0, 1) == 0);
	check(wire_builder_finish(&b, &msg, &len) == -EINVAL);	/* no reply serial */
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_SIGNAL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a/") == -EINVAL);
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_open_container(&b, '{', "sv") == -EINVAL);	/* not in an array */
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_open_container(&b, '(', "is") == 0);
	check(wire_builder_append(&b, "i", 1) == 0);
	check(wire_builder_close_container(&b) == -EINVAL);	/* incomplete */
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_open_container(&b, 'v', "ii") == -EINVAL);
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_open_container(&b, 'v', "i") == 0);
	check(wire_builder_close_container(&b) == -EINVAL);	/* empty variant */
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_append_basic(&b, 'o', "not/a/path") == -EINVAL);
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_append_string(&b, 's', "a\0b", 3) == -EINVAL);
	wire_builder_done(&b);

	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_open_container(&b, 'a', "s") == 0);
	check(wire_builder_finish(&b, &msg, &len) == -EINVAL);	/* still open */
	wire_builder_done(&b);

	/* caller buffer too small */
	uint64_t small[4];
	check(wire_builder_init_buffer(&b, small, sizeof(small), WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_append(&b, "s", "a string longer than 32 bytes....") == -ENOBUFS);
	check(wire_builder_finish(&b, &msg, &len) == -ENOBUFS);
	check(wire_builder_init_buffer(&b, small, sizeof(small), WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	check(wire_builder_finish(&b, &msg, &len) == -ENOBUFS);	/* header does not fit */

	/* deep nesting: 64 variants fine, 65 -E2BIG */
	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	check(wire_builder_set_path(&b, "/a") == 0);
	check(wire_builder_set_member(&b, "M") == 0);
	for (int i = 0; i < 63; i++)
		check(wire_builder_open_container(&b, 'v', "v") == 0);
	check(wire_builder_open_container(&b, 'v', "y") == 0);
	check(wire_builder_append(&b, "y", 1) == 0);
	for (int i = 0; i < 64; i++)
		check(wire_builder_close_container(&b) == 0);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	check(ours_ok(msg, len) && libdbus_ok(msg, len));
	free(msg);
	check(wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, 1) == 0);
	for (int i = 0; i < 64; i++)
		check(wire_builder_open_container(&b, 'v', "v") == 0);
	check(wire_builder_open_container(&b, 'v', "y") == -E2BIG);
	wire_builder_done(&b);

	/* ListNames-like: as with many entries */
	check(wire_builder_init(&b, WIRE_TYPE_METHOD_RETURN, 0, 1) == 0);
	check(wire_builder_set_reply_serial(&b, 1) == 0);
	check(wire_builder_open_container(&b, 'a', "s") == 0);
	for (int i = 0; i < 1000; i++) {
		char name[32];
		snprintf(name, sizeof(name), ":1.%d", i);
		check(wire_builder_append_basic(&b, 's', name) == 0);
	}
	check(wire_builder_close_container(&b) == 0);
	check(wire_builder_finish(&b, &msg, &len) == 0);
	check(ours_ok(msg, len) && libdbus_ok(msg, len));
	free(msg);
}

/* ------------------------------------------------------------------------ */
/* differential: random messages, random mutations, vs libdbus */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void) {
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static unsigned rn(unsigned n) {
	return n ? rnd() % n : 0;
}

static const char basic_types[] = "ybnqiuxtdsogh";

/* random complete type into s; returns length; depth-limited */
static size_t gen_type(char *s, size_t room, int depth) {
	unsigned k = rn(depth > 3 ? 2 : 10);

	if (room < 8)
		k = 0;
	switch (k) {
	case 0: case 1: case 2: case 3: case 4:
		s[0] = basic_types[rn(sizeof(basic_types) - 1)];
		if (s[0] == 'h' && rn(4))
			s[0] = 'u';
		return 1;
	case 5:
		s[0] = 'v';
		return 1;
	case 6: case 7: {
		s[0] = 'a';
		return 1 + gen_type(s + 1, room - 1, depth + 1);
	}
	case 8: {
		size_t n = 0;
		s[n++] = 'a';
		s[n++] = '{';
		s[n++] = basic_types[rn(sizeof(basic_types) - 2)];
		n += gen_type(s + n, room - n - 1, depth + 1);
		s[n++] = '}';
		return n;
	}
	default: {
		size_t n = 0;
		unsigned m = 1 + rn(3);
		s[n++] = '(';
		for (unsigned i = 0; i < m && room - n > 8; i++)
			n += gen_type(s + n, room - n - 1, depth + 1);
		s[n++] = ')';
		return n;
	}
	}
}

static const char *const rstrings[] = {
	"", "a", "hello", "with space", "\xc3\xa4\xe2\x82\xac", "org.example.Name", ":1.42",
	"/org/x", "a.b.c", "\xf0\x9f\x98\x80",
};
static const char *const rpaths[] = { "/", "/a", "/org/freedesktop/DBus", "/a/b_9/C" };
static const char *const rsigs[] = { "", "s", "a{sv}", "(ii)", "aas", "v" };

/* length of the complete type at s */
static size_t type_len(const char *s) {
	size_t i = 0;
	int d = 0;

	while (s[i] == 'a')
		i++;
	if (s[i] != '(' && s[i] != '{')
		return i + 1;
	do {
		if (s[i] == '(' || s[i] == '{')
			d++;
		else if (s[i] == ')' || s[i] == '}')
			d--;
		i++;
	} while (d > 0);
	return i;
}

static void gen_value(W *w, const char **sig, int depth) {
	char t = **sig;

	(*sig)++;
	switch (t) {
	case 'y': w_u8(w, (uint8_t)rnd()); break;
	case 'b': w_u32(w, rn(2)); break;
	case 'n': case 'q': w_u16(w, (uint16_t)rnd()); break;
	case 'i': case 'u': w_u32(w, rnd()); break;
	case 'h': w_u32(w, rn(2)); break;
	case 'x': case 't': case 'd': w_u64(w, (uint64_t)rnd() << 32 | rnd()); break;
	case 's': w_str(w, rstrings[rn(ELEMENTSOF(rstrings))]); break;
	case 'o': w_str(w, rpaths[rn(ELEMENTSOF(rpaths))]); break;
	case 'g': w_sig(w, rsigs[rn(ELEMENTSOF(rsigs))]); break;
	case 'v': {
		char vs[64];
		size_t n = gen_type(vs, depth > 4 ? 2 : 40, depth + 1);
		const char *p = vs;
		vs[n] = 0;
		w_sig(w, vs);
		gen_value(w, &p, depth + 1);
		break;
	}
	case 'a': {
		const char *elem = *sig;
		unsigned count = depth > 4 ? 0 : rn(4);
		size_t lp, start;
		char a = *elem == '{' || *elem == '(' ? 8 : (*elem == 'x' || *elem == 't' || *elem == 'd') ? 8 : (*elem == 'n' || *elem == 'q') ? 2 : (*elem == 'y' || *elem == 'g' || *elem == 'v') ? 1 : 4;
		w_u32(w, 0);
		lp = w->n - 4;
		w_align(w, (unsigned)a);
		start = w->n;
		if (count == 0)
			*sig = elem + type_len(elem);
		for (unsigned i = 0; i < count; i++) {
			const char *p = elem;
			gen_value(w, &p, depth + 1);
			*sig = p;
		}
		put32(w, lp, (uint32_t)(w->n - start));
		break;
	}
	case '(': case '{': {
		char close = t == '(' ? ')' : '}';
		w_align(w, 8);
		while (**sig != close)
			gen_value(w, sig, depth + 1);
		(*sig)++;
		break;
	}
	default:
		assert(!"bad type");
	}
}

static const char *const rnames[] = { "org.a", "org.example.Foo", ":1.1", ":1.23.4", "a.b-c" };

static void gen_message(W *w) {
	static const uint8_t types[] = { 1, 2, 3, 4, 1, 4, 5 };
	uint8_t type = types[rn(ELEMENTSOF(types))];
	char sig[256];
	size_t sl = 0, hl;
	unsigned nargs = rn(5);

	for (unsigned i = 0; i < nargs && sl < 100; i++)
		sl += gen_type(sig + sl, 120 - sl, 0);
	sig[sl] = 0;

	msg_begin(w, rn(2), type, (uint8_t)rn(8), 1 + rn(1000));
	/* fields in random order, required ones always, others sometimes */
	unsigned order[12];
	for (unsigned i = 0; i < 12; i++)
		order[i] = i;
	for (unsigned i = 11; i > 0; i--) {
		unsigned j = rn(i + 1), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (unsigned i = 0; i < 12; i++) {
		unsigned f = order[i];
		bool req = (f == 1 && (type == 1 || type == 4)) || (f == 3 && (type == 1 || type == 4)) ||
			   (f == 2 && type == 4) || (f == 4 && type == 3) ||
			   (f == 5 && (type == 2 || type == 3));
		if (!req && rn(3) != 0)
			continue;
		switch (f) {
		case 1: f_str(w, 1, 'o', rpaths[rn(ELEMENTSOF(rpaths))]); break;
		case 2: f_str(w, 2, 's', "org.example.Iface"); break;
		case 3: f_str(w, 3, 's', "Member"); break;
		case 4: f_str(w, 4, 's', "org.example.Error"); break;
		case 5: f_u32(w, 5, 1 + rn(100)); break;
		case 6: f_str(w, 6, 's', rnames[rn(ELEMENTSOF(rnames))]); break;
		case 7: f_str(w, 7, 's', rnames[rn(ELEMENTSOF(rnames))]); break;
		case 8: if (sl) f_str(w, 8, 'g', sig); break;
		case 9: if (rn(4) == 0) f_u32(w, 9, rn(2)); break;
		case 10: f_str(w, 10, 'o', "/c"); break;
		default: {
			/* unknown field with a random value */
			char vs[64];
			size_t n = gen_type(vs, 40, 1);
			const char *p = vs;
			vs[n] = 0;
			w_align(w, 8);
			w_u8(w, (uint8_t)(11 + rn(245)));
			w_sig(w, vs);
			gen_value(w, &p, 3);
			break;
		}
		}
	}
	/* the signature field must be there if there is a body */
	bool has_sig = false;
	for (size_t p = 16; p + 3 < w->n; p++)
		if (w->d[p] == 8 && w->d[p + 1] == 1 && w->d[p + 2] == 'g' && p % 8 == 0)
			has_sig = true;
	if (sl && !has_sig)
		f_str(w, 8, 'g', sig);
	hl = msg_end_header(w);
	const char *p = sig;
	while (*p)
		gen_value(w, &p, 0);
	msg_end(w, hl);
}

static void mutate(W *w) {
	unsigned k = 1 + rn(3);

	for (unsigned i = 0; i < k; i++) {
		size_t at = rn((unsigned)w->n);
		switch (rn(8)) {
		case 0: w->d[at] ^= (uint8_t)(1u << rn(8)); break;
		case 1: w->d[at] = 0; break;
		case 2: w->d[at] = (uint8_t)rnd(); break;
		case 3: w->d[at] = "\x00\x01\xff/.:a{}()vsgo"[rn(15)]; break;
		case 4: if (w->n > 16) w->n -= 1 + rn((unsigned)(w->n - 16) / 4 + 1); break;
		case 5: w->d[at] += 1; break;
		case 6: w->d[at] -= 1; break;
		default: {
			/* adjust one of the length words */
			size_t lw = rn(2) ? 4 : 12;
			uint32_t x;
			memcpy(&x, w->d + lw, 4);
			w->d[lw + (w->be ? 3 : 0)] += (uint8_t)(rn(2) ? 1 : -1);
			break;
		}
		}
	}
}

static bool has_unix_fds_field(const uint8_t *m, size_t n) {
	/* crude: any aligned (9, "u") struct in the header area */
	for (size_t p = 16; p + 8 <= n && p < 16 + 4096; p += 8)
		if (m[p] == 9 && m[p + 1] == 1 && m[p + 2] == 'u' && m[p + 3] == 0 &&
		    (m[p + 4] | m[p + 5] | m[p + 6] | m[p + 7]) != 0)
			return true;
	return false;
}


static void test_differential(void) {
	unsigned n_valid = 0, n_invalid = 0, n_fds = 0, n_local = 0, n_lax = 0, n_bad = 0;
	unsigned iterations = 60000;
	unsigned corpus_valid = 0, corpus_invalid = 0;

	for (unsigned it = 0; it < iterations; it++) {
		static W w;
		WireHeader h;
		bool lib, strict, compat;
		int r;

		gen_message(&w);
		bool pristine = it % 4 == 0;
		if (!pristine)
			mutate(&w);

		lib = libdbus_ok(w.d, w.n);
		r = ours(w.d, w.n, &h);
		strict = r == 0;
		wire_set_libdbus_compat(true);
		r = ours(w.d, w.n, &h);
		wire_set_libdbus_compat(false);
		compat = r == 0;

		/* rewrite round trip of every accepted message */
		if (strict) {
			uint8_t out[1 << 16];
			size_t len;
			WireHeader h2;
			r = wire_header_rewrite(&h, ":1.77", 5, out, sizeof(out), &len);
			check(r == 0);
			if (r == 0 && len + h.body_len <= sizeof(out)) {
				memcpy(out + len, w.d + h.header_len, h.body_len);
				check(ours(out, len + h.body_len, &h2) == 0);
			}
		}
		if (strict && !compat)
			n_bad++, fprintf(stderr, "  strict accepts what compat rejects\n");

		if (compat && h.unix_fds > 0) {
			n_fds++;	/* demarshal cannot load messages with fds */
			continue;
		}
		if (compat && wire_header_is_local(&h)) {
			n_local++;
			check(!lib);
			continue;
		}
		if (compat != lib) {
			if (!has_unix_fds_field(w.d, w.n) || compat) {
				n_bad++;
				if (n_bad < 10) {
					fprintf(stderr, "  differential: ours %d libdbus %d (it %u):", compat,
						lib, it);
					for (size_t i = 0; i < w.n && i < 256; i++)
						fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", w.d[i]);
					fprintf(stderr, "\n");
				}
			} else
				n_fds++;
			continue;
		}
		if (compat && !strict)
			n_lax++;
		if (lib) {
			n_valid++;
			if (corpus_valid < 30 && it % 97 == 0 && w.n < 2048) {
				corpus_write(w.d, w.n, "valid");
				corpus_valid++;
			}
		} else {
			n_invalid++;
			if (corpus_invalid < 30 && it % 89 == 0 && w.n < 2048) {
				corpus_write(w.d, w.n, "invalid");
				corpus_invalid++;
			}
		}
	}
	fprintf(stderr, "differential: %u valid, %u invalid, %u with fds, %u local, "
		"%u libdbus-lax, %u disagreements\n",
		n_valid, n_invalid, n_fds, n_local, n_lax, n_bad);
	check(n_bad == 0);
	check(n_valid > iterations / 10);
	check(n_invalid > iterations / 10);
}

int main(int argc, char **argv) {
	if (argc == 3 && streq(argv[1], "--write-corpus")) {
		write_corpus_dir = true;
		snprintf(corpus_dir, sizeof(corpus_dir), "%s", argv[2]);
		mkdir(corpus_dir, 0755);
	}

	RUN(names);
	RUN(frame);
	RUN(header_fields);
	RUN(body);
	RUN(depth);
	RUN(rewrite);
	RUN(rewrite_keeps_order);
	RUN(builder_field_order);
	RUN(args);
	RUN(builder);
	RUN(differential);

	return test_done();
}
