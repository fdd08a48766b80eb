/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-wire-reader.c - compat/wire's body reader (WireReader) against
 * libdbus: messages built and marshalled with libdbus are read with both
 * DBusMessageIter and WireReader, value by value, and must agree on every
 * type, value and signature; skipping, leaving containers early, big-endian
 * bodies and truncated bodies are tested on their own.
 */

#include <dbus/dbus.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "compat/wire.h"
#include "tests/unit/test.h"

static bool streq_(const char *a, const char *b) {
	return a && b && strcmp(a, b) == 0;
}

static char libdbus_code(int t) {
	switch (t) {
	case DBUS_TYPE_STRUCT:
		return '(';
	case DBUS_TYPE_DICT_ENTRY:
		return '{';
	case DBUS_TYPE_INVALID:
		return 0;
	default:
		return (char) t;
	}
}

/* walk @it and @r side by side; returns the number of values compared */
static unsigned compare(DBusMessageIter *it, WireReader *r) {
	unsigned n = 0;

	for (;;) {
		int t = dbus_message_iter_get_arg_type(it);
		char w = wire_reader_peek(r);

		check(libdbus_code(t) == w);
		if (t == DBUS_TYPE_INVALID || libdbus_code(t) != w)
			return n;
		char *dsig = dbus_message_iter_get_signature(it);
		size_t wlen;
		const char *wsig = wire_reader_signature(r, &wlen);
		check(wsig && strlen(dsig) == wlen && memcmp(dsig, wsig, wlen) == 0);
		dbus_free(dsig);
		n++;
		if (dbus_type_is_basic(t)) {
			DBusBasicValue dv;
			union {
				uint8_t y;
				bool b;
				int16_t n;
				uint16_t q;
				int32_t i;
				uint32_t u;
				int64_t x;
				uint64_t t;
				double d;
				const char *s;
			} wv;
			memset(&dv, 0, sizeof(dv));
			dbus_message_iter_get_basic(it, &dv);
			check(wire_reader_read_basic(r, w, &wv) == 0);
			switch (w) {
			case 'y': check(dv.byt == wv.y); break;
			case 'b': check(!!dv.bool_val == wv.b); break;
			case 'n': check(dv.i16 == wv.n); break;
			case 'q': check(dv.u16 == wv.q); break;
			case 'i': check(dv.i32 == wv.i); break;
			case 'u': check(dv.u32 == wv.u); break;
			case 'x': check(dv.i64 == wv.x); break;
			case 't': check(dv.u64 == wv.t); break;
			case 'd': check(memcmp(&dv.dbl, &wv.d, sizeof(double)) == 0); break;
			case 's': case 'o': case 'g': check(streq_(dv.str, wv.s)); break;
			}
		} else {
			DBusMessageIter sub;
			dbus_message_iter_recurse(it, &sub);
			check(wire_reader_enter(r, w) == 0);
			n += compare(&sub, r);
			check(wire_reader_exit(r) == 0);
		}
		dbus_message_iter_next(it);
	}
}

static void compare_message(DBusMessage *m) {
	char *buf = NULL;
	int len = 0;
	WireHeader h;
	WireReader r;
	DBusMessageIter it;

	assert(dbus_message_marshal(m, &buf, &len));
	assert(wire_header_parse((const uint8_t *) buf, (size_t) len, &h) == 0);
	assert(wire_body_validate(&h, (const uint8_t *) buf + h.header_len, h.body_len) == 0);
	wire_reader_init(&r, &h, (const uint8_t *) buf + h.header_len);
	dbus_message_iter_init(m, &it);
	compare(&it, &r);
	check(wire_reader_peek(&r) == 0);
	check(r.pos == h.body_len);

	/* skipping every top-level value ends exactly at the end */
	wire_reader_init(&r, &h, (const uint8_t *) buf + h.header_len);
	while (wire_reader_peek(&r))
		check(wire_reader_skip(&r) == 0);
	check(r.pos == h.body_len);

	/* every truncation reads without going out of bounds and fails */
	for (size_t cut = 0; cut < h.body_len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		assert(copy);
		memcpy(copy, buf + h.header_len, cut);
		wire_reader_init_raw(&r, h.signature.s, h.signature.len, false, copy, cut);
		int ret = 0;
		while (ret == 0 && wire_reader_peek(&r))
			ret = wire_reader_skip(&r);
		check(ret == -EBADMSG);
		free(copy);
	}
	dbus_free(buf);
}

static DBusMessage *new_message(void) {
	DBusMessage *m = dbus_message_new_method_call("org.example", "/", "org.example", "M");
	assert(m);
	dbus_message_set_serial(m, 1);
	return m;
}

TEST(basic_types) {
	DBusMessage *m = new_message();
	uint8_t y = 0xfe;
	dbus_bool_t b = TRUE;
	int16_t n = -2;
	uint16_t q = 0xfffe;
	int32_t i = -70000;
	uint32_t u = 0xdeadbeef;
	int64_t x = -(INT64_C(1) << 40);
	uint64_t t = UINT64_C(0xfedcba9876543210);
	double d = -1.5e300;
	const char *s = "héllo", *o = "/a/b", *g = "a{sv}(ii)", *empty = "";

	assert(dbus_message_append_args(m, DBUS_TYPE_BYTE, &y, DBUS_TYPE_BOOLEAN, &b, DBUS_TYPE_INT16, &n,
					DBUS_TYPE_UINT16, &q, DBUS_TYPE_INT32, &i, DBUS_TYPE_UINT32, &u,
					DBUS_TYPE_INT64, &x, DBUS_TYPE_UINT64, &t, DBUS_TYPE_DOUBLE, &d,
					DBUS_TYPE_STRING, &s, DBUS_TYPE_OBJECT_PATH, &o, DBUS_TYPE_SIGNATURE, &g,
					DBUS_TYPE_STRING, &empty, DBUS_TYPE_BYTE, &y, DBUS_TYPE_UINT64, &t,
					DBUS_TYPE_INVALID));
	compare_message(m);
	dbus_message_unref(m);
}

/* a{sv} with variants of basic, array and nested variant values, a{ss},
 * as, ay, au, a struct with an array inside, empty arrays of 8-aligned
 * elements */
TEST(containers) {
	DBusMessage *m = new_message();
	DBusMessageIter it, arr, entry, var, sub, sub2;
	const char *k1 = "ProcessID", *k2 = "Groups", *k3 = "Nested", *k4 = "Label";
	uint32_t pid = 1234, gids[] = { 0, 4, 27, 1000 };
	const char *label = "unconfined";
	uint8_t bytes[] = { 'a', 'b', 0 };
	const uint8_t *bp = bytes;
	const uint32_t *gp = gids;

	dbus_message_iter_init_append(m, &it);
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &arr));
	assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
	assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &k1));
	assert(dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "u", &var));
	assert(dbus_message_iter_append_basic(&var, DBUS_TYPE_UINT32, &pid));
	assert(dbus_message_iter_close_container(&entry, &var));
	assert(dbus_message_iter_close_container(&arr, &entry));
	assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
	assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &k2));
	assert(dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "au", &var));
	assert(dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "u", &sub));
	assert(dbus_message_iter_append_fixed_array(&sub, DBUS_TYPE_UINT32, &gp, 4));
	assert(dbus_message_iter_close_container(&var, &sub));
	assert(dbus_message_iter_close_container(&entry, &var));
	assert(dbus_message_iter_close_container(&arr, &entry));
	assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
	assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &k3));
	assert(dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "v", &var));
	assert(dbus_message_iter_open_container(&var, DBUS_TYPE_VARIANT, "s", &sub));
	assert(dbus_message_iter_append_basic(&sub, DBUS_TYPE_STRING, &label));
	assert(dbus_message_iter_close_container(&var, &sub));
	assert(dbus_message_iter_close_container(&entry, &var));
	assert(dbus_message_iter_close_container(&arr, &entry));
	assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
	assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &k4));
	assert(dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &var));
	assert(dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "y", &sub));
	assert(dbus_message_iter_append_fixed_array(&sub, DBUS_TYPE_BYTE, &bp, 3));
	assert(dbus_message_iter_close_container(&var, &sub));
	assert(dbus_message_iter_close_container(&entry, &var));
	assert(dbus_message_iter_close_container(&arr, &entry));
	assert(dbus_message_iter_close_container(&it, &arr));

	/* a{ss} */
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{ss}", &arr));
	for (int n = 0; n < 3; n++) {
		const char *key = n == 0 ? "PATH" : n == 1 ? "LANG" : "EMPTY", *value = n == 2 ? "" : "x=y";
		assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry));
		assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key));
		assert(dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &value));
		assert(dbus_message_iter_close_container(&arr, &entry));
	}
	assert(dbus_message_iter_close_container(&it, &arr));

	/* (say(t)) and an empty at, an empty a(y) */
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_STRUCT, NULL, &sub));
	assert(dbus_message_iter_append_basic(&sub, DBUS_TYPE_STRING, &label));
	assert(dbus_message_iter_open_container(&sub, DBUS_TYPE_ARRAY, "(t)", &sub2));
	for (uint64_t v = 1; v < 4; v++) {
		DBusMessageIter st;
		assert(dbus_message_iter_open_container(&sub2, DBUS_TYPE_STRUCT, NULL, &st));
		assert(dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &v));
		assert(dbus_message_iter_close_container(&sub2, &st));
	}
	assert(dbus_message_iter_close_container(&sub, &sub2));
	assert(dbus_message_iter_close_container(&it, &sub));
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "t", &sub));
	assert(dbus_message_iter_close_container(&it, &sub));
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(y)", &sub));
	assert(dbus_message_iter_close_container(&it, &sub));
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "s", &sub));
	for (int n = 0; n < 3; n++)
		assert(dbus_message_iter_append_basic(&sub, DBUS_TYPE_STRING, &k1));
	assert(dbus_message_iter_close_container(&it, &sub));
	compare_message(m);
	dbus_message_unref(m);
}

/* leaving a container early skips the rest of it */
TEST(exit_early) {
	DBusMessage *m = new_message();
	DBusMessageIter it, arr, st;
	const char *s = "a", *tail = "tail";
	int32_t v = 7;
	char *buf = NULL;
	int len = 0;
	WireHeader h;
	WireReader r;
	const char *got = NULL;
	int32_t gi = 0;

	dbus_message_iter_init_append(m, &it);
	assert(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(si)", &arr));
	for (int n = 0; n < 2; n++) {
		assert(dbus_message_iter_open_container(&arr, DBUS_TYPE_STRUCT, NULL, &st));
		assert(dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &s));
		assert(dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &v));
		assert(dbus_message_iter_close_container(&arr, &st));
	}
	assert(dbus_message_iter_close_container(&it, &arr));
	assert(dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &tail));
	assert(dbus_message_marshal(m, &buf, &len));
	assert(wire_header_parse((const uint8_t *) buf, (size_t) len, &h) == 0);

	wire_reader_init(&r, &h, (const uint8_t *) buf + h.header_len);
	check(wire_reader_peek(&r) == 'a');
	check(wire_reader_read_basic(&r, 's', &got) == -EBADMSG);	/* wrong type */
	check(wire_reader_enter(&r, '(') == -EBADMSG);
	check(wire_reader_enter(&r, 'a') == 0);
	check(wire_reader_enter(&r, '(') == 0);
	check(wire_reader_read_basic(&r, 's', &got) == 0 && streq_(got, "a"));
	check(wire_reader_exit(&r) == 0);	/* the struct, its i unread */
	check(wire_reader_peek(&r) == '(');
	check(wire_reader_enter(&r, '(') == 0);
	check(wire_reader_skip(&r) == 0);
	check(wire_reader_read_basic(&r, 'i', &gi) == 0 && gi == 7);
	check(wire_reader_peek(&r) == 0);
	check(wire_reader_exit(&r) == 0);
	check(wire_reader_peek(&r) == 0);	/* the array's end */
	check(wire_reader_exit(&r) == 0);
	check(wire_reader_read_basic(&r, 's', &got) == 0 && streq_(got, "tail"));
	check(wire_reader_peek(&r) == 0);
	check(wire_reader_exit(&r) == -EBADMSG);	/* nothing open */
	check(wire_reader_skip(&r) == -EBADMSG);	/* nothing left */

	/* leaving the array after its first element */
	wire_reader_init(&r, &h, (const uint8_t *) buf + h.header_len);
	check(wire_reader_enter(&r, 'a') == 0 && wire_reader_exit(&r) == 0);
	check(wire_reader_read_basic(&r, 's', &got) == 0 && streq_(got, "tail"));
	dbus_free(buf);
	dbus_message_unref(m);
}

/* a big-endian body: u 0x01020304, s "ab", ax { -2 }, y 9 */
TEST(big_endian) {
	static const uint8_t body[] = {
		1, 2, 3, 4,			/* u */
		0, 0, 0, 2, 'a', 'b', 0, 0,	/* s + pad */
		0, 0, 0, 8,			/* ax: length 8, elements at 16 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
		9,
	};
	WireReader r;
	uint32_t u = 0;
	const char *s = NULL;
	int64_t x = 0;
	uint8_t y = 0;

	wire_reader_init_raw(&r, "usaxy", 5, true, body, sizeof(body));
	check(wire_reader_read_basic(&r, 'u', &u) == 0 && u == 0x01020304);
	check(wire_reader_read_basic(&r, 's', &s) == 0 && streq_(s, "ab"));
	check(wire_reader_enter(&r, 'a') == 0);
	check(wire_reader_read_basic(&r, 'x', &x) == 0 && x == -2);
	check(wire_reader_peek(&r) == 0);
	check(wire_reader_exit(&r) == 0);
	check(wire_reader_read_basic(&r, 'y', &y) == 0 && y == 9);
	check(wire_reader_peek(&r) == 0 && r.pos == sizeof(body));
}

TEST(signature_next_len) {
	check(wire_signature_next_len("a{sv}u", 6) == 5);
	check(wire_signature_next_len("su", 2) == 1);
	check(wire_signature_next_len("(a(ii)s)x", 9) == 8);
	check(wire_signature_next_len("aav", 3) == 3);
	check(wire_signature_next_len("", 0) == 0);
	check(wire_signature_next_len("a", 1) == 0);
	check(wire_signature_next_len("()", 2) == 0);
	check(wire_signature_next_len("(s", 2) == 0);
	check(wire_signature_next_len("(s}", 3) == 0);
	check(wire_signature_next_len("z", 1) == 0);
	check(wire_signature_next_len("a{sv}", 3) == 0);	/* cut short */
}

int main(void) {
	RUN(basic_types);
	RUN(containers);
	RUN(exit_early);
	RUN(big_endian);
	RUN(signature_next_len);
	return test_done();
}
