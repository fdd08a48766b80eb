/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-match-rule.c - compat/match-rule: dbus-daemon's grammar and quirks,
 * equality, string form, matching semantics.
 *
 * libdbus has no public match-rule parser, so when a dbus-daemon binary is
 * available the same tables are also run against a private dbus-daemon
 * (AddMatch / RemoveMatch accept or reject, and which broadcast and
 * eavesdropped messages a rule delivers); without one those checks are
 * skipped.  Set BUSBRIDGE_TEST_NO_DAEMON=1 to skip them.
 */
#undef NDEBUG
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <assert.h>
#include <dbus/dbus.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "compat/match-key.h"
#include "compat/match-rule.h"
#include "compat/wire.h"
#include "util/macro.h"
#include "tests/unit/test.h"


static int parse(const char *s, MatchRule **ret) {
	return match_rule_parse(s, strlen(s), ret, NULL);
}

/* ------------------------------------------------------------------------ */
/* grammar: what dbus-daemon 1.14 accepts */

typedef struct GrammarCase {
	const char *rule;
	int result;		/* 0, -EINVAL, -E2BIG */
} GrammarCase;

static const GrammarCase grammar[] = {
	{ "", 0 },
	{ "   ", 0 },
	{ "type='signal'", 0 },
	{ "type='method_call'", 0 },
	{ "type='method_return'", 0 },
	{ "type='error'", 0 },
	{ "type='Signal'", -EINVAL },
	{ "type='foo'", -EINVAL },
	{ "type=signal", 0 },				/* quotes are optional */
	{ "type=sig'nal'", 0 },				/* and may be partial */
	{ "type='sig''nal'", 0 },
	{ "type= 'signal'", -EINVAL },			/* whitespace is in the value */
	{ "type='signal' ", -EINVAL },
	{ "type ='signal'", 0 },			/* but not around the key */
	{ "  type  =  'signal'", -EINVAL },
	{ "  type  ='signal'  ,  member='X'", -EINVAL },
	{ "  type  ='signal',  member='X'", 0 },
	{ "\ttype='signal',\nmember='X'", 0 },
	{ "type='signal',", 0 },			/* trailing comma */
	{ "type='signal',,member='X'", -EINVAL },	/* key ",member" */
	{ ",type='signal'", -EINVAL },
	{ "type", -EINVAL },
	{ "type=", -EINVAL },				/* empty type */
	{ "type='signal", -EINVAL },			/* unbalanced quote */
	{ "type='signal',type='signal'", -EINVAL },
	{ "=", 0 },					/* '=' ends the rule */
	{ "='foo'", 0 },
	{ "type='signal',='x',bogus='y'", 0 },
	{ "type='bogus',='x'", -EINVAL },
	{ "type='signal' ='x'", -EINVAL },
	{ "bogus='x'", -EINVAL },
	{ "Type='signal'", -EINVAL },
	{ "sender='org.example'", 0 },
	{ "sender=':1.5'", 0 },
	{ "sender=':1'", 0 },				/* libdbus: no dot needed */
	{ "sender=':'", 0 },
	{ "sender=':.1'", 0 },
	{ "sender=':1.'", -EINVAL },
	{ "sender='org'", -EINVAL },
	{ "sender='org.9x'", -EINVAL },
	{ "sender='-org.x'", 0 },
	{ "sender=''", -EINVAL },
	{ "sender='a.b',sender='a.b'", -EINVAL },
	{ "interface='org.example.I'", 0 },
	{ "interface='org'", -EINVAL },
	{ "interface='org.ex-ample'", -EINVAL },
	{ "interface=''", -EINVAL },
	{ "member='Foo'", 0 },
	{ "member='Foo.Bar'", -EINVAL },
	{ "member='9'", -EINVAL },
	{ "member=''", -EINVAL },
	{ "path='/'", 0 },
	{ "path='/a/b'", 0 },
	{ "path='/a/'", -EINVAL },
	{ "path='a'", -EINVAL },
	{ "path=''", -EINVAL },
	{ "path_namespace='/'", 0 },
	{ "path_namespace='/a'", 0 },
	{ "path_namespace='/a/'", -EINVAL },
	{ "path='/a',path_namespace='/a'", -EINVAL },
	{ "path_namespace='/a',path='/a'", -EINVAL },
	{ "path='/a',path='/a'", -EINVAL },
	{ "destination=':1.5'", 0 },
	{ "destination='org.x'", 0 },
	{ "destination='x'", -EINVAL },
	{ "destination=':9'", 0 },
	{ "eavesdrop='true'", 0 },
	{ "eavesdrop='false'", 0 },
	{ "eavesdrop='true',eavesdrop='false'", 0 },	/* repeatable */
	{ "eavesdrop='TRUE'", -EINVAL },
	{ "eavesdrop='1'", -EINVAL },
	{ "eavesdrop=''", -EINVAL },
	{ "arg0='foo'", 0 },
	{ "arg0=''", 0 },
	{ "arg63='foo'", 0 },
	{ "arg64='foo'", -EINVAL },
	{ "arg0='a',arg0='b'", -EINVAL },
	{ "arg0='a',arg0path='/b'", -EINVAL },
	{ "arg1='a',arg0='b'", 0 },
	{ "arg", -EINVAL },
	{ "arg='x'", -EINVAL },
	{ "argx='x'", -EINVAL },
	{ "arg0x='x'", -EINVAL },
	{ "arg0x1='x'", 0 },				/* strtoul base 0: arg1 */
	{ "arg0x3f='x'", 0 },				/* arg63 */
	{ "arg0x40='x'", -EINVAL },			/* arg64 */
	{ "arg077='x'", 0 },				/* octal: arg63 */
	{ "arg0100='x'", -EINVAL },			/* octal: arg64 */
	{ "arg08='x'", -EINVAL },
	{ "arg+1='x'", 0 },
	{ "arg-0='x'", 0 },
	{ "arg-1='x'", -EINVAL },
	{ "arg00='x'", 0 },
	{ "arg0x1path='/x'", 0 },
	{ "arg0x1gpath='/'", -EINVAL },			/* junk after arg1 */
	{ "arg010='x',arg8='y'", -EINVAL },		/* octal: arg8 twice */
	/* the whole rule is read before any key: a key without '=' or an
	 * unbalanced quote anywhere is the error */
	{ "type='bogus',x", -EINVAL },
	{ "sender='a..b',member='x", -EINVAL },
	{ "arg64='x',type", -EINVAL },
	{ "arg99999999999999999999999='x'", -EINVAL },
	{ "arg0path='/a/'", 0 },
	{ "arg0path='a'", 0 },				/* not validated */
	{ "arg0path=''", 0 },
	{ "arg63path='/'", 0 },
	{ "arg64path='/'", -EINVAL },
	{ "arg0pat='/'", -EINVAL },
	{ "arg0paths='/'", -EINVAL },
	{ "arg0Path='/'", -EINVAL },
	{ "arg0namespace='org.example'", 0 },
	{ "arg0namespace='org'", 0 },
	{ "arg0namespace=':1'", 0 },
	{ "arg0namespace='org.'", -EINVAL },
	{ "arg0namespace='org..x'", -EINVAL },
	{ "arg0namespace=''", -EINVAL },
	{ "arg0namespace='9'", -EINVAL },
	{ "arg1namespace='org'", -EINVAL },
	{ "arg00namespace='org'", -EINVAL },
	{ "arg0namespace='a',arg0='b'", -EINVAL },
	{ "arg0='it''s'", 0 },
	{ "arg0='it'\\''s'", 0 },
	{ "arg0=\\'", 0 },
	{ "arg0=a\\", 0 },
	{ "arg0='a,b'", 0 },
	{ "arg0=a\\,b", 0 },
	{ "arg0='\\'", 0 },
	{ "arg0='a\\'b'", -EINVAL },			/* no escapes inside quotes */
	{ "member='Foo',arg0='x',arg1path='/y',type='signal',interface='a.b',path='/',"
	  "sender=':1.1',destination=':1.2',eavesdrop='true',arg2='z',arg0namespace='q'", -EINVAL },
	/* only 16 pairs are read: the 17th is ignored, even if bogus */
	{ "arg0=a,arg1=a,arg2=a,arg3=a,arg4=a,arg5=a,arg6=a,arg7=a,arg8=a,arg9=a,"
	  "arg10=a,arg11=a,arg12=a,arg13=a,arg14=a,arg15=a,bogus=x", 0 },
	{ "arg0=a,arg1=a,arg2=a,arg3=a,arg4=a,arg5=a,arg6=a,arg7=a,arg8=a,arg9=a,"
	  "arg10=a,arg11=a,arg12=a,arg13=a,arg14=a,bogus=x", -EINVAL },
	{ "arg0=a,arg1=a,arg2=a,arg3=a,arg4=a,arg5=a,arg6=a,arg7=a,arg8=a,arg9=a,"
	  "arg10=a,arg11=a,arg12=a,arg13=a,arg14=a,arg15=a,arg0='dup'", 0 },
	{ "arg0=a,arg1=a,arg2=a,arg3=a,arg4=a,arg5=a,arg6=a,arg7=a,arg8=a,arg9=a,"
	  "arg10=a,arg11=a,arg12=a,arg13=a,arg14=a,arg15=a,type='", 0 },
	{ "\xc3\xa4='x'", -EINVAL },
	{ "arg0='\xc3\xa4'", 0 },
};

static void test_grammar(void) {
	for (size_t i = 0; i < ELEMENTSOF(grammar); i++) {
		_cleanup_(match_rule_freep) MatchRule *r = NULL;
		int res = parse(grammar[i].rule, &r);

		check(res == grammar[i].result);
		if (res != grammar[i].result)
			fprintf(stderr, "  rule \"%s\": %d, expected %d\n", grammar[i].rule, res,
				grammar[i].result);
		check((res == 0) == (r != NULL));
	}

	/* length limit: 1024 accepted, 1025 LimitsExceeded */
	char big[1100];
	MatchRule *r = NULL;
	memset(big, ' ', sizeof(big));
	memcpy(big, "arg0='", 6);
	big[1022] = '\'';
	big[1023] = ',';
	check(match_rule_parse(big, 1024, &r, NULL) == 0);
	r = match_rule_free(r);
	check(match_rule_parse(big, 1025, &r, NULL) == -E2BIG);
	check(!r);

	/* the text ends at a NUL, and so does the length count */
	check(match_rule_parse("type='signal'\0garbage", 21, &r, NULL) == 0);
	check(match_rule_get_type(r) == WIRE_TYPE_SIGNAL);
	r = match_rule_free(r);
	memcpy(big + 1, "\0", 1);
	check(match_rule_parse(big, 1100, &r, NULL) == -EINVAL);	/* "a" is a key without = */
	check(match_rule_parse("", 0, &r, NULL) == 0 && match_rule_get_flags(r) == 0);
	r = match_rule_free(r);
	check(match_rule_parse(NULL, 0, &r, NULL) == 0);
	r = match_rule_free(r);
}

static void test_accessors(void) {
	_cleanup_(match_rule_freep) MatchRule *r = NULL;
	const char *v;
	size_t len;

	check(parse("type='signal',sender='org.s',interface='a.b',member='M',path='/p',"
		    "destination=':1.2',arg2='x',arg4path='/y/',eavesdrop=true", &r) == 0);
	check(match_rule_get_type(r) == WIRE_TYPE_SIGNAL);
	check(streq(match_rule_get_sender(r), "org.s"));
	check(streq(match_rule_get_interface(r), "a.b"));
	check(streq(match_rule_get_member(r), "M"));
	check(streq(match_rule_get_path(r), "/p"));
	check(!match_rule_get_path_namespace(r));
	check(streq(match_rule_get_destination(r), ":1.2"));
	check(match_rule_is_eavesdrop(r));
	check(match_rule_get_n_args(r) == 5);
	check(match_rule_get_arg(r, 0, &v, &len) == MATCH_ARG_NONE && !v);
	check(match_rule_get_arg(r, 2, &v, &len) == MATCH_ARG_STRING && streq(v, "x") && len == 1);
	check(match_rule_get_arg(r, 4, &v, &len) == MATCH_ARG_PATH && streq(v, "/y/"));
	check(match_rule_get_arg(r, 5, &v, &len) == MATCH_ARG_NONE);
	check(match_rule_get_flags(r) == (MATCH_RULE_TYPE | MATCH_RULE_SENDER |
					  MATCH_RULE_INTERFACE | MATCH_RULE_MEMBER |
					  MATCH_RULE_PATH | MATCH_RULE_DESTINATION |
					  MATCH_RULE_ARGS | MATCH_RULE_EAVESDROP));
	r = match_rule_free(r);

	check(parse("path_namespace='/a',arg0namespace='x.y',eavesdrop='false'", &r) == 0);
	check(!match_rule_get_path(r) && streq(match_rule_get_path_namespace(r), "/a"));
	check(match_rule_get_arg(r, 0, &v, &len) == MATCH_ARG_NAMESPACE && streq(v, "x.y"));
	check(!match_rule_is_eavesdrop(r));
	check(match_rule_get_type(r) == WIRE_TYPE_INVALID);
	check(!match_rule_get_sender(r) && !match_rule_get_interface(r));

	/* values as unquoted by the tokenizer */
	static const struct {
		const char *rule, *arg0;
	} values[] = {
		{ "arg0='it'\\''s'", "it's" },
		{ "arg0=\\'", "'" },
		{ "arg0=a\\", "a\\" },
		{ "arg0='\\'", "\\" },
		{ "arg0=a\\,b", "a\\,b" },
		{ "arg0='a,b'", "a,b" },
		{ "arg0='it''s'", "its" },
		{ "arg0=a b ", "a b " },
		{ "arg0=''", "" },
		{ "arg0=", "" },
		{ "arg0x1=q", NULL },
	};
	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		MatchRule *x = NULL;
		check(parse(values[i].rule, &x) == 0);
		if (!x)
			continue;
		match_rule_get_arg(x, 0, &v, &len);
		check(streq_ptr(v, values[i].arg0));
		if (!values[i].arg0)
			check(match_rule_get_arg(x, 1, &v, &len) == MATCH_ARG_STRING && streq(v, "q"));
		match_rule_free(x);
	}
}

static void test_to_string(void) {
	static const struct {
		const char *rule, *text;
	} t[] = {
		{ "", "" },
		{ "member='M',type='signal'", "type='signal',member='M'" },
		{ "eavesdrop=true,arg1path=/a/,arg0namespace=a.b,destination=:1.1,sender=org.s,"
		  "path_namespace=/p,member=M,interface=a.b,type=error",
		  "type='error',interface='a.b',member='M',path_namespace='/p',sender='org.s',"
		  "destination=':1.1',eavesdrop='true',arg0namespace='a.b',arg1path='/a/'" },
		{ "path=/x,eavesdrop=false", "path='/x'" },
		{ "arg0='it'\\''s'", "arg0='it'\\''s'" },
		{ "arg3=''", "arg3=''" },
		{ "arg0x10=z", "arg16='z'" },
	};
	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		_cleanup_(match_rule_freep) MatchRule *r = NULL, *r2 = NULL;
		_cleanup_free_ char *s = NULL;

		check(parse(t[i].rule, &r) == 0);
		s = match_rule_to_string(r);
		check(s && streq(s, t[i].text));
		if (s && !streq(s, t[i].text))
			fprintf(stderr, "  to_string: %s\n", s);
		/* round trip */
		check(parse(s, &r2) == 0 && match_rule_equal(r, r2));
	}

	/* every accepted grammar case round-trips */
	for (size_t i = 0; i < ELEMENTSOF(grammar); i++) {
		_cleanup_(match_rule_freep) MatchRule *r = NULL, *r2 = NULL;
		_cleanup_free_ char *s = NULL;

		if (parse(grammar[i].rule, &r) < 0)
			continue;
		s = match_rule_to_string(r);
		check(s && parse(s, &r2) == 0 && match_rule_equal(r, r2));
	}
}

static const struct {
	const char *a, *b;
	bool equal;
} equal_cases[] = {
	{ "type='signal',member='M'", "member=M,type=signal", true },
	{ "type='signal'", "type='signal',eavesdrop='false'", true },
	{ "type='signal'", "type='signal',eavesdrop='true'", false },
	{ "type='signal'", "type='error'", false },
	{ "arg0='a'", "arg0='a'", true },
	{ "arg0='a'", "arg0path='a'", false },
	{ "arg0='a'", "arg1='a'", false },
	{ "arg0='a'", "arg0='ab'", false },
	{ "arg0='a',arg2='b'", "arg2='b',arg0='a'", true },
	{ "arg0=''", "", false },
	{ "path='/a'", "path_namespace='/a'", false },
	{ "path='/a'", "path='/b'", false },
	{ "path_namespace='/a'", "path_namespace='/b'", false },	/* dbus-daemon: true */
	{ "sender=':1.1'", "sender=':1.2'", false },
	{ "destination=':1.1'", "destination=':1.1'", true },
	{ "interface='a.b'", "interface='a.c'", false },
	{ "", "", true },
};

static void test_equal(void) {
	for (size_t i = 0; i < ELEMENTSOF(equal_cases); i++) {
		_cleanup_(match_rule_freep) MatchRule *a = NULL, *b = NULL;

		check(parse(equal_cases[i].a, &a) == 0 && parse(equal_cases[i].b, &b) == 0);
		check(match_rule_equal(a, b) == equal_cases[i].equal);
		check(match_rule_equal(b, a) == equal_cases[i].equal);
		check(match_rule_equal(a, a));
	}
}

/* ------------------------------------------------------------------------ */
/* matching */

#define SENDER ":1.100"
#define SENDER_NAME "org.example.Sender"
#define OTHER ":1.200"
#define OTHER_NAME "org.example.Other"

typedef struct TestMsg {
	uint8_t type;
	const char *path, *interface, *member, *destination;
	const char *sig;	/* body, built by build_body */
	const char *args[4];
} TestMsg;

/* messages used by both the local and the live matching tests */
static const TestMsg messages[] = {
	{ WIRE_TYPE_SIGNAL, "/", "org.example.I", "A", NULL, NULL, {} },
	{ WIRE_TYPE_SIGNAL, "/a", "org.example.I", "A", NULL, "s", { "x" } },
	{ WIRE_TYPE_SIGNAL, "/a/b", "org.example.I", "B", NULL, "ss", { "x", "y" } },
	{ WIRE_TYPE_SIGNAL, "/ab", "org.example.J", "A", NULL, "o", { "/a/b" } },
	{ WIRE_TYPE_SIGNAL, "/a/b/c", "org.example.J", "C", NULL, "us", { "5", "/a/" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "org.example" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "org.example.Foo" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "org.examples" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "org" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "/" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "/a" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "/a/" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "s", { "/a/b" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "o", { "/a" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "g", { "s" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "as", { "x" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "is", { "1", "x" } },
	{ WIRE_TYPE_SIGNAL, "/x", "org.example.I", "A", NULL, "ss", { "it's", "a,b" } },
	/* unicast: only eavesdroppers see these */
	{ WIRE_TYPE_SIGNAL, "/a", "org.example.I", "A", OTHER, "s", { "x" } },
	{ WIRE_TYPE_METHOD_CALL, "/a", "org.example.I", "A", OTHER, "s", { "x" } },
	{ WIRE_TYPE_METHOD_CALL, "/a", "org.example.I", "A", OTHER_NAME, "s", { "x" } },
	{ WIRE_TYPE_METHOD_CALL, "/a", NULL, "A", OTHER, NULL, {} },
};

static const char *const match_rules[] = {
	"",
	"type='signal'",
	"type='method_call'",
	"type='error'",
	"interface='org.example.I'",
	"member='A'",
	"member='A',interface='org.example.J'",
	"path='/a'",
	"path='/'",
	"path_namespace='/'",
	"path_namespace='/a'",
	"path_namespace='/a/b'",
	"sender='" SENDER "'",
	"sender='" SENDER_NAME "'",
	"sender='" OTHER "'",
	"sender='org.example.Nobody'",
	"sender='org.freedesktop.DBus'",
	"arg0='x'",
	"arg0=''",
	"arg1='y'",
	"arg1='x'",
	"arg0='/a'",
	"arg2='x'",
	"arg0='it'\\''s',arg1='a,b'",
	"arg0path='/a'",
	"arg0path='/a/'",
	"arg0path='/'",
	"arg0path='/a/b'",
	"arg0path='/a/b/c/'",
	"arg0path=''",
	"arg1path='/a/b/c'",
	"arg0namespace='org.example'",
	"arg0namespace='org'",
	"arg0namespace='org.example.Foo'",
	"arg0namespace='org.ex'",
	"eavesdrop='true'",
	"eavesdrop='true',type='method_call'",
	"eavesdrop='true',destination='" OTHER "'",
	"eavesdrop='true',destination='" OTHER_NAME "'",
	"eavesdrop='true',destination=':1.999'",
	"destination='" OTHER "'",
	"eavesdrop='true',sender='" SENDER "',arg0='x'",
	"eavesdrop='false',destination='" OTHER "'",
};

static int build(const TestMsg *t, uint32_t serial, const char *sender, uint8_t **ret,
		 size_t *ret_len) {
	WireBuilder b;
	int r;

	r = wire_builder_init(&b, t->type,
			      t->type == WIRE_TYPE_METHOD_CALL ? WIRE_FLAG_NO_REPLY_EXPECTED : 0,
			      serial);
	assert(r == 0);
	wire_builder_set_path(&b, t->path);
	wire_builder_set_interface(&b, t->interface);
	wire_builder_set_member(&b, t->member);
	wire_builder_set_destination(&b, t->destination);
	wire_builder_set_sender(&b, sender);
	for (size_t i = 0; t->sig && t->sig[i]; i++) {
		const char *a = t->args[i];
		switch (t->sig[i]) {
		case 's': case 'o': case 'g':
			wire_builder_append_basic(&b, t->sig[i], a);
			break;
		case 'u': case 'i':
			wire_builder_append(&b, "u", (unsigned)atoi(a));
			break;
		case 'a':
			wire_builder_open_container(&b, 'a', "s");
			wire_builder_append_basic(&b, 's', a);
			wire_builder_close_container(&b);
			i++;
			break;
		}
	}
	r = wire_builder_finish(&b, ret, ret_len);
	wire_builder_done(&b);
	return r;
}

static bool has_name_cb(void *userdata, const char *name) {
	const char *owned = userdata;
	return owned && streq(owned, name);
}

typedef struct Names {
	const char *sender_owns, *receiver_owns;
} Names;

static bool sender_has(void *u, const char *name) {
	return has_name_cb((void *)((Names *)u)->sender_owns, name);
}

static bool receiver_has(void *u, const char *name) {
	return has_name_cb((void *)((Names *)u)->receiver_owns, name);
}

/* what our implementation says for rule x message */
static bool ours_matches(const char *rule, const TestMsg *t) {
	_cleanup_(match_rule_freep) MatchRule *r = NULL;
	_cleanup_free_ uint8_t *m = NULL;
	Names names = { SENDER_NAME, OTHER_NAME };
	MatchContext ctx = {
		.sender = SENDER,
		.sender_has_name = sender_has,
		.userdata = &names,
		.receiver = t->destination ? OTHER : NULL,
		.receiver_has_name = receiver_has,
	};
	WireHeader h;
	size_t len;

	assert(parse(rule, &r) == 0);
	assert(build(t, 1, SENDER, &m, &len) == 0);
	assert(wire_header_parse(m, len, &h) == 0);
	assert(wire_body_validate(&h, m + h.header_len, h.body_len) == 0);
	return match_rule_matches(r, &h, m + h.header_len, &ctx);
}

/* expected results, row per rule, column per message ('1' matches) */
static const char *const expected_matches[] = {
	/* ""                          */ "1111111111111111111" "0000",
	/* type='signal'               */ "1111111111111111111" "0000",
	/* type='method_call'          */ "0000000000000000000" "0000",
	/* type='error'                */ "0000000000000000000" "0000",
	/* interface I                 */ "1110011111111111111" "0000",
	/* member A                    */ "1101011111111111111" "0000",
	/* member A, interface J       */ "0001000000000000000" "0000",
	/* path /a                     */ "0100000000000000000" "0000",
	/* path /                      */ "1000000000000000000" "0000",
	/* path_namespace /            */ "1111111111111111111" "0000",
	/* path_namespace /a           */ "0110100000000000000" "0000",
	/* path_namespace /a/b         */ "0010100000000000000" "0000",
	/* sender unique               */ "1111111111111111111" "0000",
	/* sender well-known           */ "1111111111111111111" "0000",
	/* sender other                */ "0000000000000000000" "0000",
	/* sender nobody               */ "0000000000000000000" "0000",
	/* sender driver               */ "0000000000000000000" "0000",
	/* arg0 x                      */ "0110000000000000000" "0000",
	/* arg0 ''                     */ "0000000001000000000" "0000",
	/* arg1 y                      */ "0010000000000000000" "0000",
	/* arg1 x                      */ "0000000000000000010" "0000",
	/* arg0 /a (o is not a string) */ "0000000000010000000" "0000",
	/* arg2 x                      */ "0000000000000000000" "0000",
	/* arg0 it's arg1 a,b          */ "0000000000000000001" "0000",
	/* arg0path /a                 */ "0000000000110010000" "0000",
	/* arg0path /a/                */ "0001000000101100000" "0000",
	/* arg0path /                  */ "0001000000111110000" "0000",
	/* arg0path /a/b               */ "0001000000101100000" "0000",
	/* arg0path /a/b/c/            */ "0000000000101000000" "0000",
	/* arg0path ''                 */ "0000000001000000000" "0000",
	/* arg1path /a/b/c             */ "0000100000000000000" "0000",
	/* arg0namespace org.example   */ "0000011000000000000" "0000",
	/* arg0namespace org           */ "0000011110000000000" "0000",
	/* arg0namespace o.e.Foo       */ "0000001000000000000" "0000",
	/* arg0namespace org.ex        */ "0000000000000000000" "0000",
	/* eavesdrop                   */ "1111111111111111111" "1111",
	/* eavesdrop method_call       */ "0000000000000000000" "0111",
	/* eavesdrop dest other        */ "0000000000000000000" "1111",
	/* eavesdrop dest other name   */ "0000000000000000000" "1111",
	/* eavesdrop dest nobody       */ "0000000000000000000" "0000",
	/* dest other, no eavesdrop    */ "0000000000000000000" "0000",
	/* eavesdrop sender arg0 x     */ "0110000000000000000" "1110",
	/* eavesdrop=false, dest       */ "0000000000000000000" "0000",
};

static void test_matching(void) {
	assert(ELEMENTSOF(expected_matches) == ELEMENTSOF(match_rules));
	for (size_t i = 0; i < ELEMENTSOF(match_rules); i++) {
		assert(strlen(expected_matches[i]) == ELEMENTSOF(messages));
		for (size_t j = 0; j < ELEMENTSOF(messages); j++) {
			bool want = expected_matches[i][j] == '1';
			bool got = ours_matches(match_rules[i], &messages[j]);

			check(got == want);
			if (got != want)
				fprintf(stderr, "  rule \"%s\" message %zu: %d\n", match_rules[i], j, got);
		}
	}

	/* the driver as sender; no context at all */
	_cleanup_(match_rule_freep) MatchRule *r = NULL;
	_cleanup_free_ uint8_t *m = NULL;
	WireHeader h;
	size_t len;
	MatchContext drv = { .sender = "org.freedesktop.DBus" };

	check(parse("sender='org.freedesktop.DBus'", &r) == 0);
	check(build(&messages[0], 1, "org.freedesktop.DBus", &m, &len) == 0);
	check(wire_header_parse(m, len, &h) == 0);
	check(match_rule_matches(r, &h, NULL, &drv));
	check(match_rule_matches(r, &h, NULL, NULL));		/* SENDER field */
	r = match_rule_free(r);
	check(parse("sender='org.example.Sender'", &r) == 0);
	check(!match_rule_matches(r, &h, NULL, &drv));
	r = match_rule_free(r);
	check(parse("arg0='x'", &r) == 0);
	check(!match_rule_matches(r, &h, NULL, NULL));		/* no body, no args */
}

/* ------------------------------------------------------------------------ */
/* the same tables against a real dbus-daemon */

typedef struct Daemon {
	pid_t pid;
	char dir[64];
	char address[512];
} Daemon;

static bool daemon_start(Daemon *d) {
	char conf[128], path[256];
	int pipefd[2];
	FILE *f;

	if (getenv("BUSBRIDGE_TEST_NO_DAEMON") || access("/usr/bin/dbus-daemon", X_OK) < 0)
		return false;
	snprintf(d->dir, sizeof(d->dir), "/tmp/test-match-rule-XXXXXX");
	if (!mkdtemp(d->dir))
		return false;
	snprintf(conf, sizeof(conf), "%s/bus.conf", d->dir);
	f = fopen(conf, "we");
	if (!f)
		return false;
	fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		   " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		   "<busconfig><type>session</type><listen>unix:dir=%s</listen>\n"
		   "<auth>EXTERNAL</auth>\n"
		   "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>"
		   "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n", d->dir);
	fclose(f);

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return false;
	d->pid = fork();
	if (d->pid < 0)
		return false;
	if (d->pid == 0) {
		char fdarg[32];
		int devnull = open("/dev/null", O_RDWR);

		dup2(pipefd[1], 3);
		snprintf(fdarg, sizeof(fdarg), "--print-address=3");
		snprintf(path, sizeof(path), "--config-file=%s", conf);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		execl("/usr/bin/dbus-daemon", "dbus-daemon", "--nofork", "--nosyslog", path, fdarg,
		      (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], d->address, sizeof(d->address) - 1);
	close(pipefd[0]);
	if (n <= 0)
		return false;
	d->address[n] = 0;
	d->address[strcspn(d->address, "\n")] = 0;
	return true;
}

static void daemon_stop(Daemon *d) {
	char cmd[128];

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "%s/bus.conf", d->dir);
	unlink(cmd);
	/* the daemon removes its socket */
	rmdir(d->dir);
}

static DBusConnection *bus_connect(const Daemon *d, const char *name) {
	DBusError e;
	DBusConnection *c;

	dbus_error_init(&e);
	c = dbus_connection_open_private(d->address, &e);
	if (!c || !dbus_bus_register(c, &e)) {
		fprintf(stderr, "  connect: %s\n", e.message);
		dbus_error_free(&e);
		return NULL;
	}
	if (name && dbus_bus_request_name(c, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &e) !=
			    DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
		dbus_error_free(&e);
		return NULL;
	}
	return c;
}

/* AddMatch on dbus-daemon: 0 or the error as match_rule_parse() gives it,
 * its message in @message (when given) */
static int live_add_match_why(DBusConnection *c, const char *rule, char *message, size_t size) {
	DBusError e;
	int r = 0;

	dbus_error_init(&e);
	dbus_bus_add_match(c, rule, &e);
	if (dbus_error_is_set(&e)) {
		r = dbus_error_has_name(&e, DBUS_ERROR_LIMITS_EXCEEDED) ? -E2BIG :
		    dbus_error_has_name(&e, DBUS_ERROR_MATCH_RULE_INVALID) ? -EINVAL : -EIO;
		if (message)
			snprintf(message, size, "%s", e.message);
		dbus_error_free(&e);
	}
	return r;
}

static int live_add_match(DBusConnection *c, const char *rule) {
	return live_add_match_why(c, rule, NULL, 0);
}

static int live_remove_match(DBusConnection *c, const char *rule) {
	DBusError e;
	int r = 0;

	dbus_error_init(&e);
	dbus_bus_remove_match(c, rule, &e);
	if (dbus_error_is_set(&e)) {
		r = dbus_error_has_name(&e, DBUS_ERROR_MATCH_RULE_NOT_FOUND) ? -ENOENT : -EINVAL;
		dbus_error_free(&e);
	}
	return r;
}

static void live_grammar(DBusConnection *c) {
	unsigned n = 0;

	for (size_t i = 0; i < ELEMENTSOF(grammar); i++) {
		const char *rule = grammar[i].rule;
		int want, live;

		if (!dbus_validate_utf8(rule, NULL))
			continue;
		_cleanup_(match_rule_freep) MatchRule *r = NULL;
		MatchRuleError ours;
		char theirs[sizeof(ours.message)];
		want = match_rule_parse(rule, strlen(rule), &r, &ours);
		live = live_add_match_why(c, rule, theirs, sizeof(theirs));
		check(live == want);
		if (live != want)
			fprintf(stderr, "  dbus-daemon: \"%s\": %d, ours %d\n", rule, live, want);
		/* and refused in the same words */
		if (live < 0 && live == want) {
			check(streq(ours.message, theirs));
			if (!streq(ours.message, theirs))
				fprintf(stderr, "  dbus-daemon: \"%s\": \"%s\", ours \"%s\"\n", rule, theirs,
					ours.message);
		}
		if (live == 0)
			check(live_remove_match(c, rule) == 0);
		n++;
	}

	/* the length limit */
	char big[1100];
	memset(big, ' ', sizeof(big));
	memcpy(big, "arg0='", 6);
	big[1022] = '\'';
	big[1023] = ',';
	big[1024] = 0;
	check(live_add_match(c, big) == 0);
	check(live_remove_match(c, big) == 0);
	big[1024] = ' ';
	big[1025] = 0;
	{
		MatchRule *none = NULL;
		MatchRuleError ours;
		char theirs[sizeof(ours.message)];

		check(live_add_match_why(c, big, theirs, sizeof(theirs)) == -E2BIG);
		check(match_rule_parse(big, strlen(big), &none, &ours) == -E2BIG && !none);
		check(streq(ours.message, theirs));
	}

	/* RemoveMatch equality */
	for (size_t i = 0; i < ELEMENTSOF(equal_cases); i++) {
		bool daemon_bug = strstr(equal_cases[i].a, "path_namespace") &&
				  strstr(equal_cases[i].b, "path_namespace");

		check(live_add_match(c, equal_cases[i].a) == 0);
		int r = live_remove_match(c, equal_cases[i].b);
		check((r == 0) == (daemon_bug ? true : equal_cases[i].equal));
		if (r != 0)
			check(live_remove_match(c, equal_cases[i].a) == 0);
	}
	fprintf(stderr, "dbus-daemon: %u grammar cases compared\n", n);
}

static DBusMessage *to_dbus(const TestMsg *t, uint32_t serial) {
	_cleanup_free_ uint8_t *m = NULL;
	DBusError e;
	DBusMessage *msg;
	size_t len;

	assert(build(t, serial, NULL, &m, &len) == 0);
	dbus_error_init(&e);
	msg = dbus_message_demarshal((const char *)m, (int)len, &e);
	assert(msg);
	return msg;
}

static void live_matching(const Daemon *d) {
	DBusConnection *recv = bus_connect(d, NULL);
	DBusConnection *send = bus_connect(d, SENDER_NAME);
	DBusConnection *other = bus_connect(d, OTHER_NAME);
	unsigned compared = 0;

	if (!recv || !send || !other) {
		fprintf(stderr, "dbus-daemon: could not connect, live matching skipped\n");
		return;
	}
	const char *sender_unique = dbus_bus_get_unique_name(send);
	const char *other_unique = dbus_bus_get_unique_name(other);
	const char *recv_unique = dbus_bus_get_unique_name(recv);

	for (size_t i = 0; i < ELEMENTSOF(match_rules); i++) {
		char rule[512], *p;
		bool got[ELEMENTSOF(messages)] = {};

		/* substitute the real unique names */
		snprintf(rule, sizeof(rule), "%s", match_rules[i]);
		while ((p = strstr(rule, SENDER)) || (p = strstr(rule, OTHER))) {
			char tmp[512];
			const char *with = strncmp(p, SENDER, strlen(SENDER)) == 0 ? sender_unique
										  : other_unique;
			size_t skip = strlen(SENDER);
			snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(p - rule), rule, with, p + skip);
			snprintf(rule, sizeof(rule), "%s", tmp);
		}
		if (live_add_match(recv, rule) != 0) {
			check(!"AddMatch failed");
			continue;
		}

		for (size_t j = 0; j < ELEMENTSOF(messages); j++) {
			TestMsg t = messages[j];
			if (t.destination && streq(t.destination, OTHER))
				t.destination = other_unique;
			DBusMessage *m = to_dbus(&t, 1);
			check(dbus_connection_send(send, m, NULL));
			dbus_message_unref(m);
		}
		/* sentinel, addressed to recv */
		DBusMessage *s = dbus_message_new_signal("/sentinel", "org.example.Sentinel", "Done");
		dbus_message_set_destination(s, recv_unique);
		dbus_connection_send(send, s, NULL);
		dbus_message_unref(s);
		dbus_connection_flush(send);

		for (;;) {
			DBusMessage *m;

			dbus_connection_read_write(recv, 1000);
			while ((m = dbus_connection_pop_message(recv))) {
				const char *path = dbus_message_get_path(m);
				bool done = dbus_message_is_signal(m, "org.example.Sentinel", "Done");

				if (!done && path && streq_ptr(dbus_message_get_sender(m), sender_unique)) {
					/* identify the message by its content */
					uint8_t *raw;
					int rl;
					if (dbus_message_marshal(m, (char **)&raw, &rl)) {
						for (size_t j = 0; j < ELEMENTSOF(messages); j++) {
							TestMsg t = messages[j];
							if (t.destination && streq(t.destination, OTHER))
								t.destination = other_unique;
							DBusMessage *x = to_dbus(&t, 1);
							bool same = dbus_message_get_type(x) == dbus_message_get_type(m) &&
								    streq_ptr(dbus_message_get_path(x), path) &&
								    streq_ptr(dbus_message_get_interface(x), dbus_message_get_interface(m)) &&
								    streq_ptr(dbus_message_get_member(x), dbus_message_get_member(m)) &&
								    streq_ptr(dbus_message_get_destination(x), dbus_message_get_destination(m)) &&
								    streq_ptr(dbus_message_get_signature(x), dbus_message_get_signature(m));
							if (same) {
								/* compare bodies */
								char *xb;
								int xl;
								dbus_message_set_serial(x, dbus_message_get_serial(m));
								dbus_message_set_sender(x, dbus_message_get_sender(m));
								if (dbus_message_marshal(x, &xb, &xl)) {
									WireHeader h1, h2;
									if (wire_header_parse(raw, (size_t)rl, &h1) == 0 &&
									    wire_header_parse((uint8_t *)xb, (size_t)xl, &h2) == 0 &&
									    h1.body_len == h2.body_len &&
									    memcmp(raw + h1.header_len, xb + h2.header_len, h1.body_len) == 0)
										got[j] = true;
									free(xb);
								}
							}
							dbus_message_unref(x);
						}
						free(raw);
					}
				}
				dbus_message_unref(m);
				if (done)
					goto next_rule;
			}
			if (!dbus_connection_get_is_connected(recv))
				break;
		}
	next_rule:
		for (size_t j = 0; j < ELEMENTSOF(messages); j++) {
			bool want = expected_matches[i][j] == '1';

			check(got[j] == want);
			if (got[j] != want)
				fprintf(stderr, "  dbus-daemon: rule \"%s\" message %zu: %d\n", rule, j,
					got[j]);
			compared++;
		}
		check(live_remove_match(recv, rule) == 0);
	}
	fprintf(stderr, "dbus-daemon: %u rule x message deliveries compared\n", compared);

	/* drain other's queue */
	dbus_connection_close(recv);
	dbus_connection_close(send);
	dbus_connection_close(other);
	dbus_connection_unref(recv);
	dbus_connection_unref(send);
	dbus_connection_unref(other);
}

static void test_live(void) {
	Daemon d = {};
	DBusConnection *c;

	if (!daemon_start(&d)) {
		fprintf(stderr, "dbus-daemon: not available, live comparison skipped\n");
		if (d.pid > 0)
			daemon_stop(&d);
		return;
	}
	c = bus_connect(&d, NULL);
	if (c) {
		live_grammar(c);
		dbus_connection_close(c);
		dbus_connection_unref(c);
		live_matching(&d);
	} else
		fprintf(stderr, "dbus-daemon: could not connect, live comparison skipped\n");
	daemon_stop(&d);
}

/*
 * match-key.h: whenever a rule matches a signal, the rule's key (if it has
 * one) is among the signal's keys; over the same grid, plus rules and
 * signals that differ only in interface or member.
 */
static void test_match_keys(void) {
	static const char *const more_rules[] = {
		"member='A',interface='org.example.I'", "member='B'", "interface='org.example.J'",
		"type='signal',member='A',path='/a'", "interface='org.example.I',arg0='x'",
		"member='AA'", "interface='org.example.II'",
	};
	size_t n_rules = ELEMENTSOF(match_rules) + ELEMENTSOF(more_rules);

	for (size_t i = 0; i < n_rules; i++) {
		const char *text = i < ELEMENTSOF(match_rules) ? match_rules[i] : more_rules[i - ELEMENTSOF(match_rules)];
		_cleanup_(match_rule_freep) MatchRule *r = NULL;
		uint64_t key;
		bool has_key;

		check(parse(text, &r) == 0);
		has_key = match_key_of_rule(r, &key);
		/* the rules with a key are those naming an interface or a member */
		check(has_key == (match_rule_get_interface(r) || match_rule_get_member(r)));
		for (size_t j = 0; j < ELEMENTSOF(messages); j++) {
			uint64_t keys[MATCH_KEYS_MAX];
			size_t n = match_keys_of_signal(messages[j].interface, messages[j].member, keys), k = 0;

			if (messages[j].type != WIRE_TYPE_SIGNAL)
				continue;
			while (k < n && (!has_key || keys[k] != key))
				k++;
			/* a key found means a rule on that interface/member */
			if (has_key && k < n) {
				const char *ri = match_rule_get_interface(r), *rm = match_rule_get_member(r);

				check(!ri || streq(ri, messages[j].interface));
				check(!rm || streq(rm, messages[j].member));
			}
			if (has_key && ours_matches(text, &messages[j]) && k == n)
				fprintf(stderr, "  rule \"%s\" matches message %zu without its key\n", text, j);
			check(!has_key || !ours_matches(text, &messages[j]) || k < n);
		}
	}
	/* a signal has its pair, member and interface keys, all different */
	uint64_t a[MATCH_KEYS_MAX], b[MATCH_KEYS_MAX];
	check(match_keys_of_signal("org.example.I", "A", a) == 3);
	check(a[0] != a[1] && a[1] != a[2] && a[0] != a[2]);
	check(match_keys_of_signal("org.example.I", "B", b) == 3);
	check(a[0] != b[0] && a[1] != b[1] && a[2] == b[2]);
	/* interface "A" is not member "A" */
	check(match_keys_of_signal("A", NULL, b) == 1 && b[0] != a[1]);
	check(match_keys_of_signal(NULL, NULL, b) == 0);
}

int main(void) {
	RUN(grammar);
	RUN(accessors);
	RUN(to_string);
	RUN(equal);
	RUN(matching);
	RUN(match_keys);
	RUN(live);

	return test_done();
}
