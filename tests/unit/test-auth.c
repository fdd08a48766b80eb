/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-auth.c - the SASL server state machine (compat/auth.c) and the
 * cookie keyring (compat/keyring.c): every command in every state, the
 * error paths, byte-at-a-time and pipelined input, and real clients
 * (libdbus and sd-bus, in a forked child) authenticating against it over a
 * unix socket.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dbus/dbus.h>
#include <systemd/sd-bus.h>

#include "compat/auth.h"
#include "compat/keyring.h"
#include "util/macro.h"
#include "tests/unit/test.h"

#define GUID "0123456789abcdef0123456789abcdef"

static char tmp_root[] = "/tmp/test-auth-XXXXXX";


static AuthConfig default_cfg(void) {
	return (AuthConfig) {
		.peer_uid = 1000,
		.peer_uid_known = true,
		.unix_fd_possible = true,
		.allow_anonymous = false,
		.mechanisms = NULL,
		.guid_hex = GUID,
	};
}

static Auth *new_auth(const AuthConfig *cfg) {
	Auth *a = NULL;

	assert(auth_new(&a, cfg) == 0);
	return a;
}

static int feed_len(Auth *a, const char *s, size_t len, size_t *consumed) {
	size_t c = (size_t)-1;
	int r = auth_feed(a, (const uint8_t *)s, len, &c);

	if (r >= 0)
		assert(c <= len);
	if (r == AUTH_CONTINUE)
		assert(c == len);
	if (consumed)
		*consumed = c;
	return r;
}

static int feed(Auth *a, const char *s) {
	return feed_len(a, s, strlen(s), NULL);
}

/* the queued output must be exactly @want; consume it */
static void expect_out(Auth *a, const char *want) {
	size_t n;
	const char *p = auth_output(a, &n);

	if (n != strlen(want) || (n && memcmp(p, want, n) != 0)) {
		fprintf(stderr, "output mismatch:\n  got  '%.*s'\n  want '%s'\n", (int)n, p ? p : "", want);
		assert(false);
	}
	auth_output_consume(a, n);
	assert(auth_output(a, &n) == NULL && n == 0);
}

static void hexstr(const char *s, char *out) {
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; s[i]; i++) {
		out[2 * i] = d[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = d[(unsigned char)s[i] & 15];
	}
	out[2 * i] = 0;
}

static size_t unhex(const char *s, char *out) {
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert(sscanf(s + 2 * i, "%2x", &v) == 1);
		out[i] = (char)v;
	}
	out[n] = 0;
	return n;
}

TEST(new_rejects_bad_config) {
	AuthConfig cfg = default_cfg();
	Auth *a = NULL;

	cfg.guid_hex = "0123";
	assert(auth_new(&a, &cfg) == -EINVAL);
	cfg.guid_hex = "0123456789abcdef0123456789abcdeg";
	assert(auth_new(&a, &cfg) == -EINVAL);
	cfg.guid_hex = NULL;
	assert(auth_new(&a, &cfg) == -EINVAL);
	assert(auth_new(&a, NULL) == -EINVAL);
	assert(auth_new(NULL, &cfg) == -EINVAL);
	assert(auth_free(NULL) == NULL);
	assert(auth_feed(NULL, NULL, 0, NULL) == -EINVAL);
}

TEST(external_initial_response) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(auth_get_uid(a) == (uid_t)-1);
	assert(!auth_mechanism(a));
	assert(feed(a, "") == AUTH_CONTINUE);
	assert(feed(a, "\0") == AUTH_CONTINUE);		/* strlen 0: nothing fed */
	assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	assert(auth_get_uid(a) == 1000);
	assert(streq(auth_mechanism(a), "EXTERNAL"));
	assert(!auth_is_done(a));
	assert(feed(a, "BEGIN\r\n") == AUTH_DONE);
	expect_out(a, "");
	assert(auth_is_done(a));
	assert(auth_get_uid(a) == 1000);
	assert(!auth_is_anonymous(a));
	assert(!auth_unix_fd_negotiated(a));

	/* after BEGIN nothing more is consumed */
	size_t c = 99;
	assert(feed_len(a, "xyz", 3, &c) == AUTH_DONE && c == 0);
}

TEST(external_empty_response_then_data) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0AUTH EXTERNAL\r\n", 16, NULL) == AUTH_CONTINUE);
	expect_out(a, "DATA\r\n");
	assert(feed(a, "DATA\r\n") == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	assert(auth_get_uid(a) == 1000);

	/* the identity may also come with the DATA reply */
	_cleanup_(auth_freep) Auth *b = new_auth(&cfg);
	assert(feed_len(b, "\0AUTH  EXTERNAL\r\nDATA 31303030\r\n", 32, NULL) == AUTH_CONTINUE);
	expect_out(b, "DATA\r\nOK " GUID "\r\n");
	_cleanup_(auth_freep) Auth *c = new_auth(&cfg);
	assert(feed_len(c, "\0AUTH EXTERNAL\r\nDATA 31303031\r\n", 31, NULL) == AUTH_CONTINUE);
	expect_out(c, "DATA\r\nREJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
}

TEST(external_wrong_or_bad_identity) {
	AuthConfig cfg = default_cfg();
	static const char *bad[] = {
		"31303031",		/* 1001 */
		"3130303020",		/* "1000 " */
		"313030302e30",		/* 1000.0 */
		"3031303030",		/* 01000: octal, 512 */
		"30383838",		/* 0888: not octal */
		"2d31303030",		/* -1000 */
		"34323934393637323935",	/* 4294967295 == (uid_t)-1 */
		"3432393439363732393630", /* overflow */
		"726f6f74",		/* "root": EXTERNAL takes numbers only */
		"3130303000",		/* embedded NUL */
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		char line[128];

		snprintf(line, sizeof(line), "AUTH EXTERNAL %s\r\n", bad[i]);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(auth_get_uid(a) == (uid_t)-1);
	}

	/* as libdbus (_dbus_is_a_number(): strtoul() in base 0 over the
	 * whole string), all of these are 1000 */
	static const char *good[] = {
		"2b31303030",		/* +1000 */
		"2031303030",		/* " 1000" */
		"3078336538",		/* 0x3e8 */
		"3031373530",		/* 01750 */
	};

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		char line[128];

		snprintf(line, sizeof(line), "AUTH EXTERNAL %s\r\n", good[i]);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\n");
		check(auth_get_uid(a) == 1000);
	}

	/* uid 0 is a valid uid */
	cfg.peer_uid = 0;
	_cleanup_(auth_freep) Auth *r = new_auth(&cfg);
	assert(feed_len(r, "\0AUTH EXTERNAL 30\r\n", 19, NULL) == AUTH_CONTINUE);
	expect_out(r, "OK " GUID "\r\n");
	assert(auth_get_uid(r) == 0);
}

TEST(external_without_credentials) {
	AuthConfig cfg = default_cfg();

	cfg.peer_uid_known = false;
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
	assert(feed_len(a, "\0AUTH EXTERNAL 31303030\r\nAUTH EXTERNAL\r\n", 40, NULL) == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\nREJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
}

TEST(mechanism_list) {
	AuthConfig cfg = default_cfg();
	char *only_external[] = { (char *)"EXTERNAL", NULL };
	char *with_unknown[] = { (char *)"KERBEROS_V4", (char *)"ANONYMOUS", (char *)"DBUS_COOKIE_SHA1", NULL };
	char *none[] = { NULL };

	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH\r\n", 7, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(feed(a, "AUTH KERBEROS_V4 00\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(feed(a, "AUTH external 31303030\r\n") == AUTH_CONTINUE);	/* case matters */
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
	{
		cfg.allow_anonymous = true;
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH\r\n", 7, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
	{
		cfg.mechanisms = only_external;
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH\r\nAUTH ANONYMOUS\r\n", 23, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL\r\nREJECTED EXTERNAL\r\n");
	}
	{
		cfg.mechanisms = with_unknown;
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH EXTERNAL 31303030\r\n", 25, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
	{
		cfg.mechanisms = with_unknown;
		cfg.allow_anonymous = false;	/* <auth>ANONYMOUS</auth> alone does not allow it */
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH\r\n", 7, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
	{
		cfg.mechanisms = none;
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH EXTERNAL 31303030\r\n", 25, NULL) == AUTH_CONTINUE);
		expect_out(a, "REJECTED\r\n");
	}
}

TEST(anonymous) {
	AuthConfig cfg = default_cfg();

	cfg.allow_anonymous = true;
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		/* sd-bus: "anonymous" as trace string */
		assert(feed_len(a, "\0AUTH ANONYMOUS 616e6f6e796d6f7573\r\nBEGIN\r\n", 43, NULL) == AUTH_DONE);
		expect_out(a, "OK " GUID "\r\n");
		assert(auth_is_anonymous(a));
		assert(auth_get_uid(a) == (uid_t)-1);
		assert(streq(auth_mechanism(a), "ANONYMOUS"));
	}
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		/* no trace string: OK at once, no challenge */
		assert(feed_len(a, "\0AUTH ANONYMOUS\r\n", 17, NULL) == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\n");
	}
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		/* UTF-8 trace (é) is fine, invalid UTF-8 and NUL are not */
		assert(feed_len(a, "\0AUTH ANONYMOUS c3a9\r\n", 22, NULL) == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\n");
		assert(feed(a, "CANCEL\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(!auth_is_anonymous(a));
		assert(feed(a, "AUTH ANONYMOUS c3\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(feed(a, "AUTH ANONYMOUS c0af\r\n") == AUTH_CONTINUE);	/* overlong '/' */
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(feed(a, "AUTH ANONYMOUS eda080\r\n") == AUTH_CONTINUE);	/* surrogate */
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
		assert(feed(a, "AUTH ANONYMOUS 6100\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
}

TEST(negotiate_unix_fd) {
	AuthConfig cfg = default_cfg();
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0NEGOTIATE_UNIX_FD\r\n", 20, NULL) == AUTH_CONTINUE);
		expect_out(a, "ERROR \"Need to authenticate first\"\r\n");
		assert(feed(a, "AUTH EXTERNAL\r\nNEGOTIATE_UNIX_FD\r\n") == AUTH_CONTINUE);
		expect_out(a, "DATA\r\nERROR \"Need to authenticate first\"\r\n");
		assert(feed(a, "DATA\r\nNEGOTIATE_UNIX_FD\r\n") == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\nAGREE_UNIX_FD\r\n");
		assert(auth_unix_fd_negotiated(a));
		assert(feed(a, "BEGIN\r\n") == AUTH_DONE);
		assert(auth_unix_fd_negotiated(a));
	}
	{
		cfg.unix_fd_possible = false;
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH EXTERNAL 31303030\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n", 51, NULL) == AUTH_DONE);
		expect_out(a, "OK " GUID "\r\nERROR \"Unix FD passing not supported, not authenticated or otherwise not possible\"\r\n");
		assert(!auth_unix_fd_negotiated(a));
	}
}

TEST(missing_nul) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == -EBADMSG);
	expect_out(a, "");
	assert(feed(a, "") == -EBADMSG);
	assert(feed_len(a, "\0", 1, NULL) == -EBADMSG);
}

TEST(begin_before_ok) {
	AuthConfig cfg = default_cfg();
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0BEGIN\r\n", 8, NULL) == -EBADMSG);
		assert(!auth_is_done(a));
	}
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0AUTH EXTERNAL\r\nBEGIN\r\n", 23, NULL) == -EBADMSG);
		expect_out(a, "DATA\r\n");
	}
}

TEST(unknown_and_malformed_commands) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0FOO\r\n", 6, NULL) == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	assert(feed(a, "\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	assert(feed(a, "auth EXTERNAL\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	/* server-side commands sent by the client */
	assert(feed(a, "OK 1234\r\nREJECTED EXTERNAL\r\nAGREE_UNIX_FD\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\nERROR \"Unknown command\"\r\nERROR \"Unknown command\"\r\n");
	/* a bare '\n' does not end a line */
	assert(feed(a, "AUTH\nX\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	/* a lone '\r' neither */
	assert(feed(a, "AUTH\r\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	assert(feed(a, "AUTH \xc3\xa9\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Command contained non-ASCII\"\r\n");
	assert(feed_len(a, "AUTH\0\r\n", 7, NULL) == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Command contained non-ASCII\"\r\n");
	/* tabs separate like spaces */
	assert(feed(a, "AUTH\tEXTERNAL\t31303030\r\n") == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	assert(feed(a, "BEGIN ignored\r\n") == AUTH_DONE);
}

TEST(commands_in_wait_auth) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0DATA 31\r\nCANCEL\r\n", 18, NULL) == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Not currently in an auth conversation\"\r\n"
		      "ERROR \"Not currently in an auth conversation\"\r\n");
	assert(feed(a, "ERROR \"whatever\"\r\n") == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
}

TEST(commands_in_wait_data) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0AUTH EXTERNAL\r\n", 16, NULL) == AUTH_CONTINUE);
	expect_out(a, "DATA\r\n");
	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Sent AUTH while another AUTH in progress\"\r\n");
	assert(feed(a, "FOO\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\n");
	assert(feed(a, "DATA xyz\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Invalid hex encoding\"\r\n");
	/* still waiting for data */
	assert(feed(a, "CANCEL\r\n") == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	/* back in WAIT_AUTH: the empty challenge is sent again */
	assert(feed(a, "AUTH EXTERNAL\r\n") == AUTH_CONTINUE);
	expect_out(a, "DATA\r\n");
	assert(feed(a, "ERROR \"no\"\r\n") == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
}

TEST(commands_in_wait_begin) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0AUTH EXTERNAL 31303030\r\n", 25, NULL) == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	assert(feed(a, "AUTH EXTERNAL 31303030\r\nDATA 31\r\nFOO\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Sent AUTH while expecting BEGIN\"\r\n"
		      "ERROR \"Sent DATA while expecting BEGIN\"\r\n"
		      "ERROR \"Unknown command\"\r\n");
	assert(feed(a, "NEGOTIATE_UNIX_FD\r\n") == AUTH_CONTINUE);
	expect_out(a, "AGREE_UNIX_FD\r\n");
	/* CANCEL after OK: rejected, authorization and fd agreement dropped */
	assert(feed(a, "CANCEL\r\n") == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	assert(auth_get_uid(a) == (uid_t)-1);
	assert(!auth_unix_fd_negotiated(a));
	assert(!auth_mechanism(a));
	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	assert(feed(a, "ERROR\r\n") == AUTH_CONTINUE);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	assert(feed(a, "AUTH EXTERNAL 31303030\r\nBEGIN\r\n") == AUTH_DONE);
	expect_out(a, "OK " GUID "\r\n");
	assert(!auth_unix_fd_negotiated(a));
}

/* as dbus-daemon: ANONYMOUS is offered and succeeds without
 * <allow_anonymous/>, and the connection fails at BEGIN */
TEST(anonymous_not_allowed) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(!cfg.allow_anonymous);
	assert(feed_len(a, "\0AUTH ANONYMOUS 74657374\r\n", 26, NULL) == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");
	check(feed(a, "BEGIN\r\n") == -EACCES);
	check(feed(a, "AUTH EXTERNAL 31303030\r\n") == -EACCES);	/* and stays failed */

	/* EXTERNAL after a CANCELled ANONYMOUS goes through */
	_cleanup_(auth_freep) Auth *b = new_auth(&cfg);
	assert(feed_len(b, "\0AUTH ANONYMOUS\r\n", 17, NULL) == AUTH_CONTINUE);
	expect_out(b, "OK " GUID "\r\n");
	assert(feed(b, "CANCEL\r\n") == AUTH_CONTINUE);
	expect_out(b, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	check(feed(b, "AUTH EXTERNAL 31303030\r\nBEGIN\r\n") == AUTH_DONE);
	expect_out(b, "OK " GUID "\r\n");
}

/* as libdbus's _dbus_string_hex_decode(): an odd last digit is the high
 * half of one more byte, so "3130303" is "1000" ('0' is 0x30) */
TEST(odd_hex) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0AUTH EXTERNAL 3130303\r\n", 24, NULL) == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");

	_cleanup_(auth_freep) Auth *b = new_auth(&cfg);
	assert(feed_len(b, "\0AUTH EXTERNAL\r\n", 16, NULL) == AUTH_CONTINUE);
	expect_out(b, "DATA\r\n");
	assert(feed(b, "DATA 31303\r\n") == AUTH_CONTINUE);	/* "100": another uid */
	expect_out(b, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	assert(feed(b, "AUTH EXTERNAL 3130303\r\nBEGIN\r\n") == AUTH_DONE);
	expect_out(b, "OK " GUID "\r\n");
}

TEST(invalid_hex) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0AUTH EXTERNAL 31303030 \r\n", 26, NULL) == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Invalid hex encoding\"\r\n");
	assert(feed(a, "AUTH EXTERNAL 3g\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Invalid hex encoding\"\r\n");
	/* no failure counted, still waiting for AUTH */
	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == AUTH_CONTINUE);
	expect_out(a, "OK " GUID "\r\n");

	/* upper- and lower-case hex digits both decode */
	cfg.allow_anonymous = true;
	_cleanup_(auth_freep) Auth *b = new_auth(&cfg);
	assert(feed_len(b, "\0AUTH ANONYMOUS 6A6b\r\n", 23, NULL) == AUTH_CONTINUE);
	expect_out(b, "OK " GUID "\r\n");
}

TEST(too_many_failures) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);

	assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
	for (int i = 1; i < AUTH_MAX_FAILURES; i++) {
		assert(feed(a, "AUTH EXTERNAL 31\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	}
	/* ERROR replies do not count */
	assert(feed(a, "FOO\r\nDATA\r\n") == AUTH_CONTINUE);
	expect_out(a, "ERROR \"Unknown command\"\r\nERROR \"Not currently in an auth conversation\"\r\n");
	/* the last REJECTED is still queued for sending */
	assert(feed(a, "AUTH\r\n") == -EPERM);
	expect_out(a, "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\n");
	assert(feed(a, "AUTH EXTERNAL 31303030\r\n") == -EPERM);
	expect_out(a, "");
}

TEST(line_length_limit) {
	AuthConfig cfg = default_cfg();
	size_t n = AUTH_LINE_MAX;
	_cleanup_free_ char *line = malloc(n + 3);

	/* exactly AUTH_LINE_MAX is fine */
	memset(line, 'A', n);
	memcpy(line + n, "\r\n", 3);
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "ERROR \"Unknown command\"\r\n");
	}
	/* one more byte is not, whole or in pieces */
	line = realloc(line, n + 4);
	memset(line, 'A', n + 1);
	memcpy(line + n + 1, "\r\n", 3);
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == -EBADMSG);
	}
	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		int r = AUTH_CONTINUE;
		size_t i;

		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		for (i = 0; i < n + 3 && r == AUTH_CONTINUE; i++)
			r = feed_len(a, line + i, 1, NULL);
		assert(r == -EBADMSG);
		/* detected before the terminator arrives */
		assert(i == n + 2);
	}
	{
		/* a never-ending line is cut off too */
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed_len(a, line, n, NULL) == AUTH_CONTINUE);
		assert(feed_len(a, "AA", 2, NULL) == -EBADMSG);
	}
}

TEST(output_limit) {
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
	int r = AUTH_CONTINUE;
	size_t lines = 0;

	assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
	/* a client that never reads the replies */
	while (r == AUTH_CONTINUE && lines < 10000) {
		r = feed(a, "FOO\r\n");
		lines++;
	}
	assert(r == -EBADMSG);
	assert(lines == AUTH_OUTPUT_MAX / strlen("ERROR \"Unknown command\"\r\n") + 1);
}

/* a conversation fed a byte at a time behaves exactly like one fed whole */
TEST(byte_at_a_time) {
	static const char input[] = "\0AUTH\r\nAUTH EXTERNAL\r\nDATA\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nl\1\0\1";
	static const char want[] = "REJECTED EXTERNAL DBUS_COOKIE_SHA1 ANONYMOUS\r\nDATA\r\nOK " GUID "\r\nAGREE_UNIX_FD\r\n";
	size_t len = sizeof(input) - 1, total = 0, i;
	AuthConfig cfg = default_cfg();
	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
	char out[512];
	size_t out_len = 0;
	int r = AUTH_CONTINUE;

	for (i = 0; i < len; i++) {
		const void *p;
		size_t c, n;

		r = feed_len(a, input + i, 1, &c);
		assert(r >= 0);
		total += c;
		p = auth_output(a, &n);
		if (p) {
			/* send in two halves to exercise partial consumption */
			memcpy(out + out_len, p, n / 2);
			auth_output_consume(a, n / 2);
			out_len += n / 2;
			p = auth_output(a, &n);
			memcpy(out + out_len, p, n);
			auth_output_consume(a, n + 100);
			out_len += n;
		}
		if (r == AUTH_DONE)
			break;
	}
	assert(r == AUTH_DONE);
	assert(total == len - 4);
	assert(i == len - 5);
	assert(out_len == strlen(want) && memcmp(out, want, out_len) == 0);
	assert(auth_unix_fd_negotiated(a));
}

/* sd-bus sends the whole handshake and the first message in one write */
TEST(pipelined) {
	static const char prefix[] = "\0AUTH EXTERNAL 30\r\nBEGIN\r\n";
	static const char message[] = "l\1\0\1\0\0\0\0\1\0\0\0m\0\0\0";
	char buf[sizeof(prefix) + sizeof(message)];
	size_t plen = sizeof(prefix) - 1, mlen = sizeof(message) - 1, c = 0;
	AuthConfig cfg = default_cfg();

	cfg.peer_uid = 0;
	memcpy(buf, prefix, plen);
	memcpy(buf + plen, message, mlen);

	_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
	assert(feed_len(a, buf, plen + mlen, &c) == AUTH_DONE);
	assert(c == plen);
	assert(memcmp(buf + c, "l\1\0\1", 4) == 0);
	expect_out(a, "OK " GUID "\r\n");
	assert(auth_get_uid(a) == 0);

	/* the same, arriving in two pieces split inside "BEGIN" */
	_cleanup_(auth_freep) Auth *b = new_auth(&cfg);
	assert(feed_len(b, buf, 21, &c) == AUTH_CONTINUE && c == 21);
	assert(feed_len(b, buf + 21, plen + mlen - 21, &c) == AUTH_DONE);
	assert(c == plen - 21);

	/* the whole sd-bus sequence */
	static const char sdbus[] = "\0AUTH EXTERNAL\r\nDATA\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nl";
	_cleanup_(auth_freep) Auth *s = new_auth(&cfg);
	assert(feed_len(s, sdbus, sizeof(sdbus) - 1, &c) == AUTH_DONE);
	assert(c == sizeof(sdbus) - 2);
	expect_out(s, "DATA\r\nOK " GUID "\r\nAGREE_UNIX_FD\r\n");
}

/* ---- keyring ---- */

static char *make_dir(const char *name, mode_t mode) {
	char *p;

	assert(asprintf(&p, "%s/%s", tmp_root, name) > 0);
	assert(mkdir(p, mode) == 0);
	assert(chmod(p, mode) == 0);
	return p;
}

static void write_file(const char *path, const char *contents) {
	FILE *f = fopen(path, "we");

	assert(f);
	assert(fputs(contents, f) >= 0);
	assert(fclose(f) == 0);
}

static size_t count_lines(const char *path) {
	FILE *f = fopen(path, "re");
	size_t n = 0;
	int c;

	assert(f);
	while ((c = fgetc(f)) != EOF)
		if (c == '\n')
			n++;
	fclose(f);
	return n;
}

TEST(keyring_validate_context) {
	assert(keyring_validate_context("foo"));
	assert(keyring_validate_context("org_freedesktop_general"));
	assert(keyring_validate_context("foo\x7f"));
	assert(!keyring_validate_context(""));
	assert(!keyring_validate_context(NULL));
	assert(!keyring_validate_context(".foo"));
	assert(!keyring_validate_context("bar.foo"));
	assert(!keyring_validate_context("bar/foo"));
	assert(!keyring_validate_context("bar\\foo"));
	assert(!keyring_validate_context("foo\xfa\xf0"));
	assert(!keyring_validate_context("foo\x80"));
	assert(!keyring_validate_context("foo bar"));
	assert(!keyring_validate_context("foo\tbar"));
	assert(!keyring_validate_context("foo\n"));
	assert(!keyring_validate_context("foo\r"));

	Keyring *k = NULL;
	assert(keyring_new(&k, tmp_root, "a/b") == -EINVAL);
}

TEST(keyring_sha1) {
	char h[41];

	keyring_sha1_hex("", 0, h);
	assert(streq(h, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
	keyring_sha1_hex("abc", 3, h);
	assert(streq(h, "a9993e364706816aba3e25717850c26c9cd0d89d"));
	keyring_sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
	assert(streq(h, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
	_cleanup_free_ char *m = malloc(1000000);
	memset(m, 'a', 1000000);
	keyring_sha1_hex(m, 1000000, h);
	assert(streq(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"));
}

TEST(keyring_create_and_reload) {
	_cleanup_free_ char *parent = make_dir("kr1", 0700), *dir = NULL;
	_cleanup_(keyring_freep) Keyring *k = NULL, *k2 = NULL;
	_cleanup_free_ char *hex = NULL, *hex2 = NULL;
	struct stat st;
	int32_t id, id2;

	assert(asprintf(&dir, "%s/.dbus-keyrings", parent) > 0);
	assert(keyring_new(&k, dir, NULL) == 0);
	/* the directory is created private */
	assert(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	assert(keyring_n_keys(k) == 0);
	assert(keyring_get_hex_key(k, 1, &hex) == -ENOENT);

	assert(keyring_get_best_key(k, &id) == 0);
	assert(id >= 0);
	assert(keyring_n_keys(k) == 1);
	assert(stat(keyring_get_filename(k), &st) == 0 && (st.st_mode & 0777) == 0600);
	assert(count_lines(keyring_get_filename(k)) == 1);
	assert(keyring_get_hex_key(k, id, &hex) == 0);
	assert(strlen(hex) == KEYRING_KEY_BYTES * 2);
	/* no lock file left behind */
	_cleanup_free_ char *lock = NULL;
	assert(asprintf(&lock, "%s.lock", keyring_get_filename(k)) > 0);
	assert(access(lock, F_OK) < 0 && errno == ENOENT);

	/* the same key is reused while it is recent */
	assert(keyring_get_best_key(k, &id2) == 0 && id2 == id);

	/* a second reader sees the same key */
	assert(keyring_new(&k2, dir, KEYRING_CONTEXT_DEFAULT) == 0);
	assert(keyring_n_keys(k2) == 1);
	assert(keyring_get_hex_key(k2, id, &hex2) == 0);
	assert(streq(hex, hex2));

	/* the file format libdbus writes */
	FILE *f = fopen(keyring_get_filename(k), "re");
	long long fid, ftime;
	char fhex[128];
	assert(f && fscanf(f, "%lld %lld %127s", &fid, &ftime, fhex) == 3);
	fclose(f);
	assert(fid == id && streq(fhex, hex));
	assert(llabs((long long)time(NULL) - ftime) < 5);
}

TEST(keyring_rotation_and_expiry) {
	_cleanup_free_ char *dir = make_dir("kr2", 0700), *path = NULL, *contents = NULL;
	_cleanup_(keyring_freep) Keyring *k = NULL;
	_cleanup_free_ char *hex = NULL;
	long long now = time(NULL);
	int32_t id;

	assert(asprintf(&path, "%s/%s", dir, KEYRING_CONTEXT_DEFAULT) > 0);
	assert(asprintf(&contents,
			"1 %lld 00112233445566778899aabbccddeeff0011223344556677\n"	/* 6 min old: usable, not recent */
			"2 %lld 00112233445566778899aabbccddeeff0011223344556677\n"	/* 8 min old: expired */
			"3 %lld 00112233445566778899aabbccddeeff0011223344556677\n"	/* too far in the future */
			"garbage line\n"
			"4 %lld\n"							/* no secret */
			"5 %lld 0011zz\n"						/* bad hex */
			"-6 %lld 0011\n"						/* negative id */
			"7 -1 0011\n"							/* negative time */
			"8\t%lld\t0a0b\r\n",						/* tabs, CRLF: fine */
			now - 360, now - 480, now + 400, now, now, now, now - 10) > 0);
	write_file(path, contents);

	assert(keyring_new(&k, dir, NULL) == 0);
	assert(keyring_n_keys(k) == 2);
	assert(keyring_get_hex_key(k, 1, &hex) == 0);
	free(TAKE_PTR(hex));
	assert(keyring_get_hex_key(k, 8, &hex) == 0 && streq(hex, "0a0b"));
	free(TAKE_PTR(hex));
	assert(keyring_get_hex_key(k, 2, &hex) == -ENOENT);

	/* key 8 is recent enough */
	assert(keyring_get_best_key(k, &id) == 0 && id == 8);

	/* only old keys: a new one is created, the old one kept, expired ones dropped */
	free(contents);
	assert(asprintf(&contents,
			"1 %lld 00112233445566778899aabbccddeeff0011223344556677\n"
			"2 %lld 00112233445566778899aabbccddeeff0011223344556677\n",
			now - 360, now - 480) > 0);
	write_file(path, contents);
	assert(keyring_reload(k, false) == 0);
	assert(keyring_n_keys(k) == 1);
	assert(count_lines(path) == 2);		/* reading never rewrites */
	assert(keyring_get_best_key(k, &id) == 0);
	assert(id != 1 && id != 2);
	assert(keyring_n_keys(k) == 2);
	assert(count_lines(path) == 2);		/* key 1 and the new one */
	assert(keyring_get_hex_key(k, 1, &hex) == 0);
	free(TAKE_PTR(hex));
	assert(keyring_get_hex_key(k, 2, &hex) == -ENOENT);

	/* non-ASCII contents are ignored entirely */
	write_file(path, "9 1 00\n\xff\n");
	assert(keyring_reload(k, false) == 0);
	assert(keyring_n_keys(k) == 0);
}

TEST(keyring_max_keys) {
	_cleanup_free_ char *dir = make_dir("kr3", 0700), *path = NULL;
	_cleanup_(keyring_freep) Keyring *k = NULL;
	long long now = time(NULL);
	FILE *f;
	int32_t id;

	assert(asprintf(&path, "%s/%s", dir, KEYRING_CONTEXT_DEFAULT) > 0);
	f = fopen(path, "we");
	assert(f);
	for (int i = 0; i < KEYRING_MAX_KEYS + 10; i++)
		fprintf(f, "%d %lld 0102\n", i, now - 400);
	fclose(f);
	assert(keyring_new(&k, dir, NULL) == 0);
	assert(keyring_n_keys(k) == KEYRING_MAX_KEYS);
	assert(keyring_get_best_key(k, &id) == 0);
	assert(keyring_n_keys(k) == KEYRING_MAX_KEYS);
	assert(count_lines(path) == KEYRING_MAX_KEYS);
}

TEST(keyring_private_dir_and_lock) {
	_cleanup_free_ char *open_dir = make_dir("kr4", 0755), *dir = make_dir("kr5", 0700);
	_cleanup_(keyring_freep) Keyring *k = NULL, *k2 = NULL;
	_cleanup_free_ char *lock = NULL;
	int32_t id;

	/* a directory others can read is refused */
	assert(keyring_new(&k, open_dir, NULL) == 0);
	assert(keyring_get_best_key(k, &id) == -EPERM);
	assert(keyring_reload(k, false) == -EPERM);

	/* a missing directory is created on open */
	_cleanup_free_ char *missing = NULL;
	assert(asprintf(&missing, "%s/kr6", tmp_root) > 0);
	_cleanup_(keyring_freep) Keyring *k3 = NULL;
	assert(keyring_new(&k3, missing, NULL) == 0);
	assert(keyring_get_best_key(k3, &id) == 0);

	/* a stale lock is broken after the timeout */
	assert(keyring_new(&k2, dir, NULL) == 0);
	assert(asprintf(&lock, "%s.lock", keyring_get_filename(k2)) > 0);
	write_file(lock, "");
	keyring_set_lock_timeout(k2, 3, 5);
	assert(keyring_get_best_key(k2, &id) == 0);
	assert(access(lock, F_OK) < 0);
}

/* ---- DBUS_COOKIE_SHA1 ---- */

/* compute the client's answer to a DATA challenge, as libdbus does */
static void cookie_answer(const char *keyring_dir, const char *data_line, const char *client_challenge,
			  bool corrupt, char *out_line, size_t out_size) {
	char decoded[512], context[128], server_challenge[128], to_hash[1024], reply[512], hex[1100], hash[41];
	_cleanup_(keyring_freep) Keyring *k = NULL;
	_cleanup_free_ char *cookie = NULL;
	int id;

	assert(strncmp(data_line, "DATA ", 5) == 0);
	assert(strlen(data_line + 5) < sizeof(decoded) * 2);
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(strlen(data_line + 5) - 2), data_line + 5);
	unhex(tmp, decoded);
	assert(sscanf(decoded, "%127s %d %127s", context, &id, server_challenge) == 3);
	assert(streq(context, KEYRING_CONTEXT_DEFAULT));
	assert(strlen(server_challenge) == 32);

	assert(keyring_new(&k, keyring_dir, context) == 0);
	assert(keyring_get_hex_key(k, id, &cookie) == 0);
	snprintf(to_hash, sizeof(to_hash), "%s:%s:%s", server_challenge, client_challenge, cookie);
	keyring_sha1_hex(to_hash, strlen(to_hash), hash);
	if (corrupt)
		hash[0] = hash[0] == '0' ? '1' : '0';
	snprintf(reply, sizeof(reply), "%s %s", client_challenge, hash);
	hexstr(reply, hex);
	snprintf(out_line, out_size, "DATA %s\r\n", hex);
}

static char *take_output(Auth *a) {
	size_t n;
	const char *p = auth_output(a, &n);
	char *s = strndup(p ? p : "", n);

	auth_output_consume(a, n);
	return s;
}

TEST(cookie_sha1) {
	_cleanup_free_ char *dir = make_dir("ck1", 0700);
	char *mechs[] = { (char *)"DBUS_COOKIE_SHA1", NULL };
	AuthConfig cfg = default_cfg();
	char uidhex[32], line[2048], uidstr[16];

	cfg.mechanisms = mechs;
	cfg.keyring_dir = dir;
	cfg.peer_uid_known = false;	/* does not need socket credentials */
	snprintf(uidstr, sizeof(uidstr), "%u", (unsigned)geteuid());
	hexstr(uidstr, uidhex);

	{
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		_cleanup_free_ char *out = NULL;

		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", uidhex);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		out = take_output(a);
		cookie_answer(dir, out, "c1c2c3", false, line, sizeof(line));
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\n");
		assert(auth_get_uid(a) == geteuid());
		assert(streq(auth_mechanism(a), "DBUS_COOKIE_SHA1"));
		assert(feed(a, "BEGIN\r\n") == AUTH_DONE);
	}
	{
		/* the user name works as well as the uid */
		struct passwd *pw = getpwuid(geteuid());
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		_cleanup_free_ char *out = NULL;
		char namehex[256];

		assert(pw);
		hexstr(pw->pw_name, namehex);
		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", namehex);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		out = take_output(a);
		assert(strncmp(out, "DATA ", 5) == 0);
		cookie_answer(dir, out, "xyz", false, line, sizeof(line));
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "OK " GUID "\r\n");
	}
	{
		/* a wrong hash, a malformed answer, another user, no user */
		_cleanup_(auth_freep) Auth *a = new_auth(&cfg);
		_cleanup_free_ char *out = NULL;

		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", uidhex);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		out = take_output(a);
		cookie_answer(dir, out, "c1c2c3", true, line, sizeof(line));
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");

		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", uidhex);
		assert(feed(a, line) == AUTH_CONTINUE);
		free(take_output(a));
		assert(feed(a, "DATA 6e6f7370616365\r\n") == AUTH_CONTINUE);	/* "nospace" */
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");

		assert(feed(a, line) == AUTH_CONTINUE);
		free(take_output(a));
		assert(feed(a, "DATA 6120\r\n") == AUTH_CONTINUE);		/* "a ": empty hash */
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");

		char other[16], otherhex[32];
		snprintf(other, sizeof(other), "%u", (unsigned)geteuid() + 1);
		hexstr(other, otherhex);
		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", otherhex);
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");

		assert(feed(a, "AUTH DBUS_COOKIE_SHA1\r\n") == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");
	}
	{
		/* a keyring directory others can read makes the mechanism fail */
		_cleanup_free_ char *bad = make_dir("ck2", 0777);
		AuthConfig c2 = cfg;
		c2.keyring_dir = bad;
		_cleanup_(auth_freep) Auth *a = new_auth(&c2);

		snprintf(line, sizeof(line), "AUTH DBUS_COOKIE_SHA1 %s\r\n", uidhex);
		assert(feed_len(a, "\0", 1, NULL) == AUTH_CONTINUE);
		assert(feed(a, line) == AUTH_CONTINUE);
		expect_out(a, "REJECTED DBUS_COOKIE_SHA1\r\n");
	}
}

/* ---- real clients ---- */

static int listen_unix(const char *path) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	assert(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(fd >= 0);
	assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	assert(listen(fd, 5) == 0);
	return fd;
}

static void write_all(int fd, const void *p, size_t n) {
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		assert(k > 0);
		p = (const char *)p + k;
		n -= (size_t)k;
	}
}

typedef struct {
	int result;
	char mechanism[32];
	uid_t uid;
	bool anonymous;
	bool unix_fd;
	uint8_t stream[65536];
	size_t stream_len;
} ServerResult;

/*
 * Accept one client on @lfd and run the handshake on it like the daemon
 * will: read, feed, send the output; then collect the dbus1 stream until
 * the client hangs up.
 */
static void serve_one(int lfd, AuthConfig cfg, ServerResult *res) {
	_cleanup_(auth_freep) Auth *a = NULL;
	_cleanup_close_ int fd = -1;
	struct ucred uc;
	socklen_t sl = sizeof(uc);
	uint8_t buf[4096];
	int r = AUTH_CONTINUE;

	memset(res, 0, sizeof(*res));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert(fd >= 0);
	assert(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &sl) == 0);
	cfg.peer_uid = uc.uid;
	cfg.peer_uid_known = true;
	a = new_auth(&cfg);

	while (r == AUTH_CONTINUE) {
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t c = 0, olen;
		const void *o;

		if (n <= 0)
			break;
		r = auth_feed(a, buf, (size_t)n, &c);
		o = auth_output(a, &olen);
		if (o) {
			write_all(fd, o, olen);
			auth_output_consume(a, olen);
		}
		if (r == AUTH_DONE) {
			memcpy(res->stream, buf + c, (size_t)n - c);
			res->stream_len = (size_t)n - c;
		}
	}
	res->result = r;
	if (r != AUTH_DONE)
		return;
	snprintf(res->mechanism, sizeof(res->mechanism), "%s", auth_mechanism(a));
	res->uid = auth_get_uid(a);
	res->anonymous = auth_is_anonymous(a);
	res->unix_fd = auth_unix_fd_negotiated(a);

	/* until one whole message has arrived, or the client hangs up */
	for (;;) {
		ssize_t n;
		int need;

		if (res->stream_len >= 16) {
			need = dbus_message_demarshal_bytes_needed((const char *)res->stream, (int)res->stream_len);
			if (need > 0 && (size_t)need <= res->stream_len)
				break;
		}
		n = read(fd, res->stream + res->stream_len, sizeof(res->stream) - res->stream_len);
		if (n <= 0)
			break;
		res->stream_len += (size_t)n;
	}
}

/* the stream must start with one complete message @type @interface.@member */
static void check_message(const ServerResult *res, int type, const char *interface, const char *member) {
	DBusError err = DBUS_ERROR_INIT;
	DBusMessage *m;
	int need;

	assert(res->stream_len >= 16);
	need = dbus_message_demarshal_bytes_needed((const char *)res->stream, (int)res->stream_len);
	assert(need > 0 && (size_t)need <= res->stream_len);
	m = dbus_message_demarshal((const char *)res->stream, need, &err);
	assert(m);
	assert(dbus_message_get_type(m) == type);
	assert(streq(dbus_message_get_interface(m), interface));
	assert(streq(dbus_message_get_member(m), member));
	dbus_message_unref(m);
}

/* ... the signal test.Auth.Ping our clients send */
static void check_stream(const ServerResult *res) {
	check_message(res, DBUS_MESSAGE_TYPE_SIGNAL, "test.Auth", "Ping");
}

static const char *sock_path(const char *name) {
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", tmp_root, name);
	return p;
}

/* child: a libdbus client sends one signal and hangs up */
static _noreturn_ void libdbus_client(const char *address) {
	DBusError err = DBUS_ERROR_INIT;
	DBusConnection *c;
	DBusMessage *m;

	alarm(20);
	c = dbus_connection_open_private(address, &err);
	if (!c)
		_exit(2);
	m = dbus_message_new_signal("/test", "test.Auth", "Ping");
	if (!m || !dbus_connection_send(c, m, NULL))
		_exit(3);
	dbus_message_unref(m);
	dbus_connection_flush(c);
	if (!dbus_connection_get_is_authenticated(c))
		_exit(4);
	dbus_connection_close(c);
	dbus_connection_unref(c);
	_exit(0);
}

/* child: an sd-bus client sends one signal and hangs up */
static _noreturn_ void sdbus_client(const char *address, bool anonymous) {
	sd_bus *bus = NULL;
	sd_bus_message *m = NULL;

	alarm(20);
	if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, address) < 0)
		_exit(2);
	if (anonymous && sd_bus_set_anonymous(bus, 1) < 0)
		_exit(2);
	if (sd_bus_set_bus_client(bus, 0) < 0 || sd_bus_start(bus) < 0)
		_exit(3);
	if (sd_bus_message_new_signal(bus, &m, "/test", "test.Auth", "Ping") < 0)
		_exit(4);
	if (sd_bus_send(bus, m, NULL) < 0 || sd_bus_flush(bus) < 0)
		_exit(5);
	if (!anonymous && sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) <= 0)
		_exit(6);
	sd_bus_message_unref(m);
	sd_bus_flush_close_unref(bus);
	_exit(0);
}

static void run_client(const char *name, AuthConfig cfg, int which, bool anonymous, ServerResult *res) {
	_cleanup_close_ int lfd = -1;
	char address[300];
	const char *path = sock_path(name);
	int status;
	pid_t pid;

	lfd = listen_unix(path);
	snprintf(address, sizeof(address), "unix:path=%s", path);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		if (which == 0)
			libdbus_client(address);
		sdbus_client(address, anonymous);
	}
	serve_one(lfd, cfg, res);
	assert(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "client for %s failed: status 0x%x\n", name, status);
		assert(false);
	}
	unlink(path);
}

TEST(interop_libdbus_external) {
	AuthConfig cfg = default_cfg();
	ServerResult res;

	run_client("libdbus-ext", cfg, 0, false, &res);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "EXTERNAL"));
	assert(res.uid == getuid());
	assert(res.unix_fd);
	check_stream(&res);
}

TEST(interop_libdbus_no_fds) {
	AuthConfig cfg = default_cfg();
	ServerResult res;

	cfg.unix_fd_possible = false;
	run_client("libdbus-nofd", cfg, 0, false, &res);
	assert(res.result == AUTH_DONE);
	assert(!res.unix_fd);
	check_stream(&res);
}

TEST(interop_libdbus_anonymous) {
	char *mechs[] = { (char *)"ANONYMOUS", NULL };
	AuthConfig cfg = default_cfg();
	ServerResult res;

	/* libdbus tries EXTERNAL, gets REJECTED ANONYMOUS, falls back */
	cfg.mechanisms = mechs;
	cfg.allow_anonymous = true;
	run_client("libdbus-anon", cfg, 0, false, &res);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "ANONYMOUS"));
	assert(res.anonymous && res.uid == (uid_t)-1);
	check_stream(&res);
}

TEST(interop_libdbus_cookie_sha1) {
	_cleanup_free_ char *home = make_dir("home", 0700), *ringdir = NULL, *old_home = NULL;
	char *mechs[] = { (char *)"DBUS_COOKIE_SHA1", NULL };
	AuthConfig cfg = default_cfg();
	ServerResult res;

	/* client and server find the keyring through $HOME, as libdbus does */
	if (getenv("HOME"))
		old_home = strdup(getenv("HOME"));
	assert(setenv("HOME", home, 1) == 0);
	assert(keyring_default_directory(&ringdir) == 0);
	assert(strncmp(ringdir, home, strlen(home)) == 0);
	cfg.mechanisms = mechs;
	run_client("libdbus-cookie", cfg, 0, false, &res);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "DBUS_COOKIE_SHA1"));
	assert(res.uid == geteuid());
	check_stream(&res);

	/* the cookie file we created is the one libdbus used */
	_cleanup_free_ char *file = NULL;
	assert(asprintf(&file, "%s/%s", ringdir, KEYRING_CONTEXT_DEFAULT) > 0);
	assert(count_lines(file) == 1);
	if (old_home)
		setenv("HOME", old_home, 1);
	else
		unsetenv("HOME");
}

TEST(interop_libdbus_rejected) {
	char *mechs[] = { (char *)"ANONYMOUS", NULL };
	AuthConfig cfg = default_cfg();
	_cleanup_close_ int lfd = -1;
	ServerResult res;
	char address[300];
	const char *path = sock_path("libdbus-rej");
	int status;
	pid_t pid;

	/* ANONYMOUS alone, not allowed: the client gets OK, as from
	 * dbus-daemon, and the server refuses it at BEGIN */
	cfg.mechanisms = mechs;
	cfg.allow_anonymous = false;
	lfd = listen_unix(path);
	snprintf(address, sizeof(address), "unix:path=%s", path);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0)
		libdbus_client(address);
	serve_one(lfd, cfg, &res);
	check(res.result == -EACCES);
	assert(waitpid(pid, &status, 0) == pid);
	check(WIFEXITED(status));
}

TEST(interop_sdbus_external) {
	AuthConfig cfg = default_cfg();
	ServerResult res;

	run_client("sdbus-ext", cfg, 1, false, &res);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "EXTERNAL"));
	assert(res.uid == getuid());
	assert(res.unix_fd);
	check_stream(&res);
}

TEST(interop_sdbus_anonymous) {
	AuthConfig cfg = default_cfg();
	ServerResult res;

	cfg.allow_anonymous = true;
	run_client("sdbus-anon", cfg, 1, true, &res);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "ANONYMOUS"));
	assert(res.anonymous);
	check_stream(&res);
}

/*
 * GDBus, through the gdbus tool: it authenticates (EXTERNAL with the uid as
 * initial response, NEGOTIATE_UNIX_FD) and then says Hello, whose reply it
 * waits for in vain; we stop it once the Hello arrived.
 */
TEST(interop_gdbus) {
	static const char gdbus[] = "/usr/bin/gdbus";
	AuthConfig cfg = default_cfg();
	_cleanup_close_ int lfd = -1;
	const char *path = sock_path("gdbus");
	char address[300];
	ServerResult res;
	int status;
	pid_t pid;

	if (access(gdbus, X_OK) < 0) {
		test_skip("no %s", gdbus);
		return;
	}
	lfd = listen_unix(path);
	snprintf(address, sizeof(address), "unix:path=%s", path);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		alarm(20);
		execl(gdbus, "gdbus", "call", "--address", address, "--dest", "org.freedesktop.DBus",
		      "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.GetId",
		      "--timeout", "10", (char *)NULL);
		_exit(127);
	}
	serve_one(lfd, cfg, &res);
	kill(pid, SIGTERM);
	assert(waitpid(pid, &status, 0) == pid);
	assert(res.result == AUTH_DONE);
	assert(streq(res.mechanism, "EXTERNAL"));
	assert(res.uid == getuid());
	assert(res.unix_fd);
	check_message(&res, DBUS_MESSAGE_TYPE_METHOD_CALL, "org.freedesktop.DBus", "Hello");
	unlink(path);
}

static void rm_rf(const char *path) {
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d) {
		unlink(path);
		return;
	}
	while ((de = readdir(d))) {
		char *p;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		assert(asprintf(&p, "%s/%s", path, de->d_name) > 0);
		rm_rf(p);
		free(p);
	}
	closedir(d);
	rmdir(path);
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	assert(mkdtemp(tmp_root));

	RUN(new_rejects_bad_config);
	RUN(external_initial_response);
	RUN(external_empty_response_then_data);
	RUN(external_wrong_or_bad_identity);
	RUN(external_without_credentials);
	RUN(mechanism_list);
	RUN(anonymous);
	RUN(negotiate_unix_fd);
	RUN(missing_nul);
	RUN(begin_before_ok);
	RUN(unknown_and_malformed_commands);
	RUN(commands_in_wait_auth);
	RUN(commands_in_wait_data);
	RUN(commands_in_wait_begin);
	RUN(invalid_hex);
	RUN(anonymous_not_allowed);
	RUN(odd_hex);
	RUN(too_many_failures);
	RUN(line_length_limit);
	RUN(output_limit);
	RUN(byte_at_a_time);
	RUN(pipelined);
	RUN(keyring_validate_context);
	RUN(keyring_sha1);
	RUN(keyring_create_and_reload);
	RUN(keyring_rotation_and_expiry);
	RUN(keyring_max_keys);
	RUN(keyring_private_dir_and_lock);
	RUN(cookie_sha1);
	RUN(interop_libdbus_external);
	RUN(interop_libdbus_no_fds);
	RUN(interop_libdbus_anonymous);
	RUN(interop_libdbus_cookie_sha1);
	RUN(interop_libdbus_rejected);
	RUN(interop_sdbus_external);
	RUN(interop_sdbus_anonymous);
	RUN(interop_gdbus);

	rm_rf(tmp_root);
	return test_done();
}
