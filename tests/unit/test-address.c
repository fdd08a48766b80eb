/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-address.c - D-Bus address parsing, escaping and GUIDs
 * (daemon/address.c), checked against libdbus's wording and behaviour.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/address.h"
#include "util/macro.h"
#include "tests/unit/test.h"



static AddressEntry **parse_ok(const char *address, size_t want_n) {
	AddressEntry **l = NULL;
	char *err = NULL;
	size_t n = 999;

	if (address_parse(address, &l, &n, &err) != 0) {
		fprintf(stderr, "parse of '%s' failed: %s\n", address, strempty(err));
		assert(false);
	}
	assert(!err);
	assert(n == want_n);
	assert(l[n] == NULL);
	return l;
}

static void parse_fails(const char *address, const char *want_error) {
	AddressEntry **l = NULL;
	_cleanup_free_ char *err = NULL;

	assert(address_parse(address, &l, NULL, &err) == -EINVAL);
	assert(!l);
	if (!err || !streq(err, want_error)) {
		fprintf(stderr, "'%s': got error '%s', want '%s'\n", address, strempty(err), want_error);
		assert(false);
	}
	/* the message is optional */
	assert(address_parse(address, &l, NULL, NULL) == -EINVAL);
}

TEST(parse_simple) {
	_cleanup_(address_entries_freep) AddressEntry **l = parse_ok("unix:path=/tmp/dbus-test", 1);

	assert(streq(l[0]->transport, "unix"));
	assert(l[0]->n_pairs == 1);
	assert(streq(l[0]->keys[0], "path"));
	assert(streq(l[0]->values[0], "/tmp/dbus-test"));
	assert(!l[0]->keys[1] && !l[0]->values[1]);
	assert(streq(address_entry_get(l[0], "path"), "/tmp/dbus-test"));
	assert(!address_entry_get(l[0], "abstract"));
	assert(!address_entry_get(l[0], NULL));
	assert(!address_entry_get(NULL, "path"));
}

TEST(parse_list) {
	_cleanup_(address_entries_freep) AddressEntry **l =
		parse_ok("unix:path=/a;tcp:host=localhost,port=1234,family=ipv4;systemd:;unix:abstract=x", 4);

	assert(streq(l[0]->transport, "unix"));
	assert(streq(l[1]->transport, "tcp"));
	assert(l[1]->n_pairs == 3);
	assert(streq(address_entry_get(l[1], "host"), "localhost"));
	assert(streq(address_entry_get(l[1], "port"), "1234"));
	assert(streq(address_entry_get(l[1], "family"), "ipv4"));
	assert(streq(l[2]->transport, "systemd"));
	assert(l[2]->n_pairs == 0 && l[2]->keys[0] == NULL);
	assert(streq(address_entry_get(l[3], "abstract"), "x"));
}

TEST(parse_lenient_bits) {
	/* as libdbus: trailing separators, duplicate keys (first wins), odd transports */
	_cleanup_(address_entries_freep) AddressEntry **a = parse_ok("unix:path=/tmp/x6,", 1);
	assert(a[0]->n_pairs == 1);
	_cleanup_(address_entries_freep) AddressEntry **b = parse_ok("unix:path=/tmp/q;", 1);
	assert(streq(address_entry_get(b[0], "path"), "/tmp/q"));
	_cleanup_(address_entries_freep) AddressEntry **c = parse_ok("unix:path=a,path=b", 1);
	assert(c[0]->n_pairs == 2);
	assert(streq(address_entry_get(c[0], "path"), "a"));
	_cleanup_(address_entries_freep) AddressEntry **d = parse_ok(":path=x", 1);
	assert(streq(d[0]->transport, ""));
	_cleanup_(address_entries_freep) AddressEntry **e = parse_ok("UNIX:path=/x", 1);
	assert(streq(e[0]->transport, "UNIX"));
	_cleanup_(address_entries_freep) AddressEntry **f = parse_ok("nonexist:;unix:path=/tmp/q2", 2);
	assert(streq(f[0]->transport, "nonexist"));
	/* keys are taken as written */
	_cleanup_(address_entries_freep) AddressEntry **g = parse_ok("x:k%41y=v", 1);
	assert(streq(g[0]->keys[0], "k%41y"));
	/* unescaped characters that need no escape, in the value */
	_cleanup_(address_entries_freep) AddressEntry **h = parse_ok("x:k=aZ09-_/\\*.", 1);
	assert(streq(address_entry_get(h[0], "k"), "aZ09-_/\\*."));
}

TEST(parse_unescape) {
	_cleanup_(address_entries_freep) AddressEntry **l =
		parse_ok("unix:path=/tmp/a%20b,abstract=%41%2f%2F%3a%25,x=%e2%82%ac", 1);

	assert(streq(address_entry_get(l[0], "path"), "/tmp/a b"));
	assert(streq(address_entry_get(l[0], "abstract"), "A//:%"));
	assert(streq(address_entry_get(l[0], "x"), "\xe2\x82\xac"));
}

TEST(parse_errors) {
	parse_fails("", "Empty address ''");
	parse_fails("nocolon", "Address does not contain a colon");
	parse_fails(";", "Address does not contain a colon");
	parse_fails("unix:path=/a;;", "Address does not contain a colon");
	parse_fails("unix:path=/a;nocolon", "Address does not contain a colon");
	parse_fails("unix:path", "'=' character not found or has no value following it");
	parse_fails("unix:path=", "'=' character not found or has no value following it");
	parse_fails("unix:=x", "'=' character not found or has no value following it");
	parse_fails("unix:,path=/tmp/x5", "'=' character not found or has no value following it");
	parse_fails("unix:path=/x,,y=z", "'=' character not found or has no value following it");
	parse_fails("unix:abstract=", "'=' character not found or has no value following it");
	parse_fails("unix:path=%zz", "In D-Bus address, percent character was followed by characters other than hex digits");
	parse_fails("unix:path=%4g", "In D-Bus address, percent character was followed by characters other than hex digits");
	parse_fails("unix:path=%4", "In D-Bus address, percent character was not followed by two hex digits");
	parse_fails("unix:path=/x%", "In D-Bus address, percent character was not followed by two hex digits");
	parse_fails("unix:path=/tmp/a b", "In D-Bus address, character ' ' should have been escaped");
	parse_fails("tcp:host=::1", "In D-Bus address, character ':' should have been escaped");
	parse_fails("unix:path=a=b", "In D-Bus address, character '=' should have been escaped");
	parse_fails("unix:path=/tmp/\xc3\xa9", "In D-Bus address, character '\xc3' should have been escaped");
	/* our addition: a NUL would silently cut the value short */
	parse_fails("unix:path=/tmp/a%00b", "In D-Bus address, value contains an escaped NUL byte");

	AddressEntry **l = NULL;
	assert(address_parse(NULL, &l, NULL, NULL) == -EINVAL);
	assert(address_parse("unix:path=/x", NULL, NULL, NULL) == -EINVAL);
}

TEST(escape) {
	_cleanup_free_ char *e = NULL, *u = NULL, *err = NULL;
	char all[256];

	assert(address_escape("/tmp/dbus-AbC_0.9*\\", &e) == 0);
	assert(streq(e, "/tmp/dbus-AbC_0.9*\\"));
	free(TAKE_PTR(e));
	assert(address_escape("a b:c,d;e=f%g\xff", &e) == 0);
	assert(streq(e, "a%20b%3ac%2cd%3be%3df%25g%ff"));
	free(TAKE_PTR(e));
	assert(address_escape("", &e) == 0 && streq(e, ""));
	free(TAKE_PTR(e));

	/* every byte but NUL round-trips */
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = 0;
	assert(address_escape(all, &e) == 0);
	assert(address_unescape(e, &u, &err) == 0);
	assert(streq(u, all));
	free(TAKE_PTR(u));

	assert(address_unescape("a b", &u, &err) == -EINVAL);
	assert(streq(err, "In D-Bus address, character ' ' should have been escaped"));
	assert(address_unescape("%", &u, NULL) == -EINVAL);
	assert(address_unescape("x", &u, NULL) == 0 && streq(u, "x"));
}

TEST(guid) {
	char a[ADDRESS_GUID_HEX_LEN + 1], b[ADDRESS_GUID_HEX_LEN + 1];
	unsigned long ts;
	long long now = time(NULL);

	assert(address_guid_generate(a) == 0);
	assert(address_guid_generate(b) == 0);
	assert(strlen(a) == 32);
	assert(address_guid_valid(a) && address_guid_valid(b));
	assert(!streq(a, b));
	for (size_t i = 0; i < 32; i++)
		assert((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f'));
	/* the last 32 bits are the time, as libdbus makes them */
	assert(sscanf(a + 24, "%8lx", &ts) == 1);
	assert(llabs((long long)ts - (now & 0xffffffffLL)) < 5);

	assert(!address_guid_valid(NULL));
	assert(!address_guid_valid(""));
	assert(!address_guid_valid("0123456789abcdef0123456789abcde"));
	assert(!address_guid_valid("0123456789abcdef0123456789abcdefa"));
	assert(!address_guid_valid("0123456789abcdef0123456789abcdeg"));
	assert(address_guid_valid("0123456789ABCDEF0123456789abcdef"));
}

TEST(append_guid) {
	static const char g[] = "61052009ee3080060649d19f6b111bec";
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

	assert(address_append_guid("unix:path=/tmp/dbus-RUDHl8gNxs", g, &a) == 0);
	assert(streq(a, "unix:path=/tmp/dbus-RUDHl8gNxs,guid=61052009ee3080060649d19f6b111bec"));
	assert(address_append_guid("unix:path=/a;tcp:host=localhost,port=1", g, &b) == 0);
	assert(streq(b, "unix:path=/a,guid=61052009ee3080060649d19f6b111bec;"
			"tcp:host=localhost,port=1,guid=61052009ee3080060649d19f6b111bec"));
	assert(address_append_guid("unix:path=/a;", g, &c) == 0);
	assert(streq(c, "unix:path=/a,guid=61052009ee3080060649d19f6b111bec"));
	assert(address_append_guid("unix:path=/a", "xyz", &c) == -EINVAL);

	/* what we print parses back */
	_cleanup_(address_entries_freep) AddressEntry **l = parse_ok(b, 2);
	assert(streq(address_entry_get(l[1], "guid"), g));
}

int main(void) {
	RUN(parse_simple);
	RUN(parse_list);
	RUN(parse_lenient_bits);
	RUN(parse_unescape);
	RUN(parse_errors);
	RUN(escape);
	RUN(guid);
	RUN(append_guid);

	return test_done();
}
