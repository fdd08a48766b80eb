/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy.c - unit tests for policy/policy.c, dbus-daemon 1.14's
 * policy decisions.  The semantics follow bus/policy.c; the optimizer
 * behaviour (test_optimizer) was confirmed against dbus-daemon 1.14.10.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"
#include "tests/unit/test.h"

#define ROOT 0
#define ALICE 1000
#define BOB 1001
#define WHEEL 10
#define STAFF 50
#define AUDIO 63

static int fake_user(const char *name, uid_t *ret, void *userdata) {
	static const struct {
		const char *name;
		uid_t uid;
	} users[] = { { "root", ROOT }, { "0", ROOT }, { "alice", ALICE }, { "1000", ALICE }, { "bob", BOB } };

	for (size_t i = 0; i < ELEMENTSOF(users); i++)
		if (streq(users[i].name, name)) {
			*ret = users[i].uid;
			return 0;
		}
	return -ESRCH;
}

static int fake_group(const char *name, gid_t *ret, void *userdata) {
	static const struct {
		const char *name;
		gid_t gid;
	} groups[] = { { "root", 0 }, { "wheel", WHEEL }, { "staff", STAFF }, { "audio", AUDIO } };

	for (size_t i = 0; i < ELEMENTSOF(groups); i++)
		if (streq(groups[i].name, name)) {
			*ret = groups[i].gid;
			return 0;
		}
	return -ESRCH;
}

static const PolicyLookup lookup = { .lookup_user = fake_user, .lookup_group = fake_group };

/* compile a policy from <policy> elements */
static Policy *compile(const char *policies) {
	static const BusConfigLoadOptions o = {
		.flags = BUS_CONFIG_LOAD_NO_INCLUDES | BUS_CONFIG_LOAD_NO_MKDIR,
		.selinux_enabled = -1,
		.lookup_user = fake_user,
		.lookup_group = fake_group,
	};
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *xml = NULL, *err = NULL;
	Policy *p = NULL;

	assert(asprintf(&xml, "<busconfig><listen>unix:tmpdir=/tmp</listen>%s</busconfig>", policies) >= 0);
	if (bus_config_load_string(xml, strlen(xml), "/test/policy.conf", &o, &c, &err) < 0) {
		fprintf(stderr, "config: %s\n", err);
		abort();
	}
	assert(policy_new(&p, c, &lookup) == 0);
	return p;   /* the policy outlives the configuration */
}

static int console_yes(uid_t uid, void *userdata) {
	(*(unsigned *)userdata)++;
	return 1;
}

static int console_no(uid_t uid, void *userdata) {
	(*(unsigned *)userdata)++;
	return 0;
}

static int console_fail(uid_t uid, void *userdata) {
	return -EIO;
}

static PolicyIdentity ident(uid_t uid) {
	return (PolicyIdentity) { .uid = uid };
}

static PolicySnapshot *snap(Policy *p, uid_t uid, const gid_t *gids, size_t n_gids) {
	PolicyIdentity id = { .uid = uid, .gids = gids, .n_gids = n_gids };
	PolicySnapshot *s = NULL;

	assert(policy_snapshot_new(&s, p, &id) == 0);
	return s;
}

static PolicyMessage call(const char *dest, const char *path, const char *iface, const char *member) {
	return (PolicyMessage) {
		.type = BUS_CONFIG_MESSAGE_METHOD_CALL,
		.destination = dest, .path = path, .interface = iface, .member = member,
		.sender = ":1.1",
	};
}

static PolicyMessage reply(const char *dest) {
	return (PolicyMessage) {
		.type = BUS_CONFIG_MESSAGE_METHOD_RETURN, .destination = dest, .has_reply_serial = true,
		.sender = ":1.2",
	};
}

static PolicyMessage error_reply(const char *dest, const char *name) {
	return (PolicyMessage) {
		.type = BUS_CONFIG_MESSAGE_ERROR, .destination = dest, .error_name = name,
		.has_reply_serial = true, .sender = ":1.2",
	};
}

static PolicyMessage signal_msg(const char *dest, const char *path, const char *iface, const char *member) {
	return (PolicyMessage) {
		.type = BUS_CONFIG_MESSAGE_SIGNAL, .destination = dest,
		.path = path, .interface = iface, .member = member, .sender = ":1.3",
	};
}

#define NAMES(...) ((const char *const[]) { __VA_ARGS__, NULL })

static int can_send(const PolicySnapshot *s, PolicyMessage m, const char *const *names) {
	return policy_snapshot_check_send(s, &m, names, false, NULL);
}

static int can_send_reply(const PolicySnapshot *s, PolicyMessage m, bool requested) {
	return policy_snapshot_check_send(s, &m, NAMES(":1.9"), requested, NULL);
}

static int can_recv(const PolicySnapshot *s, PolicyMessage m, const char *const *senders) {
	return policy_snapshot_check_receive(s, &m, senders, false, false, NULL);
}

/* ---------------------------------------------------------------------- */

static void test_own(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	const PolicyRule *rule = NULL;
	static const struct {
		const char *name;
		bool allowed;
	} checks[] = {
		/* bus/config-parser.c do_check_own_rules() */
		{ "org.freedesktop", false },
		{ "org.freedesktop.ManySystem", false },
		{ "org.freedesktop.ManySystems", true },
		{ "org.freedesktop.ManySystems.foo", true },
		{ "org.freedesktop.ManySystems.foo.bar", true },
		{ "org.freedesktop.ManySystems2", false },
		{ "org.freedesktop.ManySystems2.foo", false },
		{ "org.freedesktop.ManySystems2.foo.bar", false },
	};

	p = compile("<policy context=\"default\"><allow user=\"*\"/><deny own=\"*\"/>"
		    "<allow own_prefix=\"org.freedesktop.ManySystems\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	for (size_t i = 0; i < ELEMENTSOF(checks); i++)
		assert(policy_snapshot_check_own(s, checks[i].name, NULL) == checks[i].allowed);
	assert(policy_snapshot_check_own(s, "org.freedesktop.ManySystems.x", &rule) == 1);
	assert(rule && rule->own_is_prefix && rule->line == 1);
	assert(policy_snapshot_check_own(s, "org.other", &rule) == 0);
	assert(rule && !rule->own && !rule->allow);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* no rule: denied, NULL rule */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(policy_snapshot_check_own(s, "org.a", &rule) == 0 && !rule);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* exact names, last match wins, user and mandatory contexts */
	p = compile("<policy context=\"default\"><allow own=\"org.a\"/><deny own=\"org.a\"/>"
		    "<allow own=\"org.b\"/><allow own=\"org.c\"/></policy>"
		    "<policy user=\"alice\"><allow own=\"org.a\"/><deny own=\"org.b\"/></policy>"
		    "<policy context=\"mandatory\"><deny own=\"org.c\"/></policy>");
	s = snap(p, BOB, NULL, 0);
	assert(policy_snapshot_check_own(s, "org.a", NULL) == 0);
	assert(policy_snapshot_check_own(s, "org.b", NULL) == 1);
	assert(policy_snapshot_check_own(s, "org.c", NULL) == 0);
	assert(policy_snapshot_check_own(s, "org.a.b", NULL) == 0);   /* own= is exact */
	s = policy_snapshot_free(s);
	s = snap(p, ALICE, NULL, 0);
	assert(policy_snapshot_check_own(s, "org.a", NULL) == 1);
	assert(policy_snapshot_check_own(s, "org.b", NULL) == 0);
	assert(policy_snapshot_check_own(s, "org.c", NULL) == 0);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* own_prefix="*" is literal; own_prefix="" matches only "" */
	p = compile("<policy context=\"default\"><allow own_prefix=\"*\"/><allow own_prefix=\"\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(policy_snapshot_check_own(s, "org.a", NULL) == 0);
	assert(policy_snapshot_check_own(s, "*", NULL) == 1);
	assert(policy_snapshot_check_own(s, "*.x", NULL) == 1);
	s = policy_snapshot_free(s);

	/* the wrappers */
	{
		PolicyIdentity id = ident(ALICE);

		assert(policy_check_own(p, &id, "*.y", NULL) == 1);
		assert(policy_check_own(p, &id, "a", &rule) == 0 && !rule);
	}
}

static void test_name_prefix(void) {
	assert(policy_name_has_prefix("a.b", "a"));
	assert(policy_name_has_prefix("a.b", "a.b"));
	assert(policy_name_has_prefix("a.b.c", "a.b"));
	assert(!policy_name_has_prefix("a.bc", "a.b"));
	assert(!policy_name_has_prefix("a", "a.b"));
	assert(!policy_name_has_prefix("ab", "a"));
	assert(policy_name_has_prefix("", ""));
	assert(!policy_name_has_prefix("a", ""));
	assert(policy_name_has_prefix(".a", ""));
	assert(!policy_name_has_prefix(NULL, "a"));
}

static void test_send_destination(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	PolicyDecision d;
	PolicyMessage m;

	p = compile("<policy context=\"default\">"
		    "<allow send_destination=\"org.a\"/>"
		    "<allow send_destination=\":1.7\"/>"
		    "<deny send_destination=\"org.denied\"/>"
		    "</policy>");
	s = snap(p, ALICE, NULL, 0);

	/* the receiver owns (or is queued for) the name: any of its names counts */
	assert(can_send(s, call("org.a", "/", "i.f", "M"), NAMES(":1.5", "org.a")) == 1);
	assert(can_send(s, call("org.other", "/", "i.f", "M"), NAMES(":1.5", "org.other", "org.a")) == 1);
	assert(can_send(s, call("org.other", "/", "i.f", "M"), NAMES(":1.5", "org.other")) == 0);
	/* unique names are names too */
	assert(can_send(s, call(":1.7", "/", "i.f", "M"), NAMES(":1.7")) == 1);
	/* a receiver owning an allowed and a denied name: the deny comes later */
	assert(can_send(s, call("org.a", "/", "i.f", "M"), NAMES(":1.5", "org.a", "org.denied")) == 0);
	/* no receiver connection (bus driver, activation): the header field */
	assert(can_send(s, call("org.a", "/", "i.f", "M"), NULL) == 1);
	assert(can_send(s, call("org.b", "/", "i.f", "M"), NULL) == 0);
	m = signal_msg(NULL, "/", "i.f", "S");
	assert(can_send(s, m, NULL) == 0);

	/* the decision */
	m = call("org.a", "/", "i.f", "M");
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.5", "org.a"), false, &d) == 1);
	assert(d.rule && streq(d.rule->destination, "org.a") && d.n_matched == 1 && !d.log);
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.5"), false, &d) == 0);
	assert(!d.rule && d.n_matched == 0);

	/* send_destination="*" */
	s = policy_snapshot_free(s);
	p = policy_unref(p);
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(can_send(s, signal_msg(NULL, "/", "i.f", "S"), NULL) == 1);
	assert(can_send(s, call("x.y", "/", "i.f", "M"), NAMES(":1.1")) == 1);
}

static void test_send_destination_prefix(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;

	/* systemd-activation.conf */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/><allow receive_sender=\"*\"/>"
		    "<allow own=\"*\"/></policy>"
		    "<policy context=\"mandatory\"><deny send_destination=\"com.example.SendDenied\"/>"
		    "<deny send_destination_prefix=\"com.example.SendPrefixDenied\"/>"
		    "<deny receive_interface=\"com.example.ReceiveDenied\" receive_member=\"Call\"/>"
		    "<allow send_destination_prefix=\"com.example.SendPrefixDenied.SendPrefixAllowed\"/>"
		    "</policy>");
	s = snap(p, ALICE, NULL, 0);
	/* activation: receiver unknown, the destination decides */
	assert(can_send(s, call("com.example.SendDenied", "/", "i.f", "M"), NULL) == 0);
	assert(can_send(s, call("com.example.SendPrefixDenied", "/", "i.f", "M"), NULL) == 0);
	assert(can_send(s, call("com.example.SendPrefixDenied.internal", "/", "i.f", "M"), NULL) == 0);
	assert(can_send(s, call("com.example.SendPrefixDenied.SendPrefixAllowed.internal", "/", "i.f", "M"), NULL) == 1);
	assert(can_send(s, call("com.example.SendPrefixDeniedX", "/", "i.f", "M"), NULL) == 1);
	assert(can_send(s, call("com.example.Other", "/", "i.f", "M"), NULL) == 1);
	/* a running receiver: any of its names below the prefix */
	assert(can_send(s, call(":1.4", "/", "i.f", "M"), NAMES(":1.4", "com.example.SendPrefixDenied.x")) == 0);
	assert(can_send(s, call(":1.4", "/", "i.f", "M"),
			NAMES(":1.4", "com.example.SendPrefixDenied.x", "com.example.SendPrefixDenied.SendPrefixAllowed")) == 1);
	assert(can_send(s, call(":1.4", "/", "i.f", "M"), NAMES(":1.4")) == 1);
	/* receive rule of the same file */
	{
		PolicyMessage m = call("x", "/", "com.example.ReceiveDenied", "Call");

		assert(can_recv(s, m, NAMES(":1.1")) == 0);
		m.member = "Other";
		assert(can_recv(s, m, NAMES(":1.1")) == 1);
		m.interface = NULL;
		m.member = "Call";
		assert(can_recv(s, m, NAMES(":1.1")) == 0);   /* deny + no interface: applies */
	}
}

static void test_interface_path_member_error(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;

	/* allow rules with an interface do not match interface-less messages */
	p = compile("<policy context=\"default\"><allow send_interface=\"i.a\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(can_send(s, call("d", "/", "i.a", "M"), NAMES(":1.2")) == 1);
	assert(can_send(s, call("d", "/", NULL, "M"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/", "i.b", "M"), NAMES(":1.2")) == 0);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* deny rules with an interface hit interface-less messages */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/><deny send_interface=\"i.a\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(can_send(s, call("d", "/", "i.a", "M"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/", NULL, "M"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/", "i.b", "M"), NAMES(":1.2")) == 1);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* path, member, error: a message without the field matches the rule */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/>"
		    "<deny send_path=\"/x\"/>"
		    "<deny send_interface=\"i.a\" send_member=\"Bad\"/>"
		    "<deny send_path=\"/y\" send_member=\"M2\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(can_send(s, call("d", "/x", "i.b", "M"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/z", "i.b", "M"), NAMES(":1.2")) == 1);
	assert(can_send(s, call("d", "/z", "i.a", "Bad"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/z", "i.a", "Good"), NAMES(":1.2")) == 1);
	assert(can_send(s, call("d", "/y", "i.b", "M2"), NAMES(":1.2")) == 0);
	assert(can_send(s, call("d", "/y", "i.b", "M3"), NAMES(":1.2")) == 1);
	/* unrequested replies have no path: <deny send_path="/x"/> applies */
	assert(can_send_reply(s, reply(":1.9"), false) == 0);
	/* requested replies skip deny rules (requested_reply defaults to false) */
	assert(can_send_reply(s, reply(":1.9"), true) == 1);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* <deny send_error="e.Bad"/> also hits every message without an error
	 * name, method calls included (checked with dbus-daemon 1.14.10:
	 * "Rejected send message, 2 matched rules" for GetId) */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/><deny send_error=\"e.Bad\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	{
		PolicyMessage m = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId");
		PolicyDecision d;

		assert(policy_snapshot_check_send(s, &m, NULL, false, &d) == 0 && d.n_matched == 2);
	}
	assert(can_send(s, signal_msg(NULL, "/", "i", "S"), NAMES(":1.2")) == 0);
	/* an error with another name passes; requested replies skip the deny */
	assert(can_send_reply(s, error_reply(":1.9", "e.Other"), false) == 0);   /* allow needs requested */
	assert(can_send_reply(s, error_reply(":1.9", "e.Other"), true) == 1);
	assert(can_send_reply(s, error_reply(":1.9", "e.Bad"), true) == 1);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	p = compile("<policy context=\"default\"><allow send_destination=\"*\" send_requested_reply=\"false\"/>"
		    "<deny send_error=\"e.Bad\" send_requested_reply=\"true\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(can_send_reply(s, error_reply(":1.9", "e.Bad"), true) == 0);
	assert(can_send_reply(s, error_reply(":1.9", "e.Good"), true) == 1);
	/* a method return has no error name: the error rule matches it */
	assert(can_send_reply(s, reply(":1.9"), true) == 0);
	/* and a method call? also no error name, but not a reply: still matches */
	assert(can_send(s, call("d", "/", "i", "M"), NAMES(":1.2")) == 0);
}

/* requested_reply semantics for every combination (bus/policy.c) */
static void test_requested_reply(void) {
	static const struct {
		const char *rule;
		bool requested;
		bool is_reply;
		int expect;      /* with a preceding allow-all/deny-all baseline */
	} cases[] = {
		/* allow rules over a "deny everything" baseline */
		{ "<allow send_type=\"method_return\"/>", true, true, 1 },
		{ "<allow send_type=\"method_return\"/>", false, true, 0 },
		{ "<allow send_type=\"method_return\" send_requested_reply=\"true\"/>", false, true, 0 },
		{ "<allow send_type=\"method_return\" send_requested_reply=\"false\"/>", false, true, 1 },
		{ "<allow send_type=\"method_return\" send_requested_reply=\"false\"/>", true, true, 1 },
		{ "<allow send_type=\"method_return\" eavesdrop=\"true\"/>", false, true, 1 },
		/* not replies: requested_reply does not matter */
		{ "<allow send_type=\"method_call\"/>", false, false, 1 },
		{ "<allow send_type=\"method_call\" send_requested_reply=\"true\"/>", false, false, 1 },
	};
	static const struct {
		const char *rule;
		bool requested;
		int expect;      /* over an "allow everything" baseline */
	} deny_cases[] = {
		{ "<deny send_type=\"method_return\"/>", true, 1 },
		{ "<deny send_type=\"method_return\"/>", false, 0 },
		{ "<deny send_type=\"method_return\" send_requested_reply=\"false\"/>", true, 1 },
		{ "<deny send_type=\"method_return\" send_requested_reply=\"true\"/>", true, 0 },
		{ "<deny send_type=\"method_return\" send_requested_reply=\"true\"/>", false, 0 },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(policy_unrefp) Policy *p = NULL;
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
		_cleanup_free_ char *xml = NULL;
		PolicyMessage m = cases[i].is_reply ? reply(":1.9") : call("d", "/", "i", "M");

		assert(asprintf(&xml, "<policy context=\"default\"><deny send_destination=\"org.nothing\"/>%s</policy>",
				cases[i].rule) >= 0);
		p = compile(xml);
		s = snap(p, ALICE, NULL, 0);
		if (policy_snapshot_check_send(s, &m, NAMES(":1.9"), cases[i].requested, NULL) != cases[i].expect) {
			fprintf(stderr, "requested_reply case %zu failed\n", i);
			abort();
		}
	}
	for (size_t i = 0; i < ELEMENTSOF(deny_cases); i++) {
		_cleanup_(policy_unrefp) Policy *p = NULL;
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
		_cleanup_free_ char *xml = NULL;
		PolicyMessage m = reply(":1.9");

		assert(asprintf(&xml, "<policy context=\"default\"><allow send_destination=\"*\" "
				"send_requested_reply=\"false\"/>%s</policy>", deny_cases[i].rule) >= 0);
		p = compile(xml);
		s = snap(p, ALICE, NULL, 0);
		if (policy_snapshot_check_send(s, &m, NAMES(":1.9"), deny_cases[i].requested, NULL) !=
		    deny_cases[i].expect) {
			fprintf(stderr, "requested_reply deny case %zu failed\n", i);
			abort();
		}
	}

	/* the same on the receive side */
	{
		_cleanup_(policy_unrefp) Policy *p = NULL;
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
		PolicyMessage m = reply(":1.9");

		p = compile("<policy context=\"default\"><allow receive_type=\"method_return\"/></policy>");
		s = snap(p, ALICE, NULL, 0);
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), true, false, NULL) == 1);
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, false, NULL) == 0);
		s = policy_snapshot_free(s);
		p = policy_unref(p);

		p = compile("<policy context=\"default\"><allow receive_type=\"method_return\" "
			    "receive_requested_reply=\"false\"/></policy>");
		s = snap(p, ALICE, NULL, 0);
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, false, NULL) == 1);
		s = policy_snapshot_free(s);
		p = policy_unref(p);

		/* system.conf: replies may only be sent when requested */
		p = compile("<policy context=\"default\"><deny send_type=\"method_call\"/><allow send_type=\"signal\"/>"
			    "<allow send_requested_reply=\"true\" send_type=\"method_return\"/>"
			    "<allow send_requested_reply=\"true\" send_type=\"error\"/></policy>");
		s = snap(p, ALICE, NULL, 0);
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.9"), true, NULL) == 1);
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.9"), false, NULL) == 0);
		m = error_reply(":1.9", "e.E");
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.9"), true, NULL) == 1);
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.9"), false, NULL) == 0);
	}
}

static void test_broadcast(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;

	p = compile("<policy context=\"default\"><allow send_destination=\"org.x\"/>"
		    "<allow send_type=\"signal\" send_broadcast=\"true\"/>"
		    "<deny send_interface=\"i.bad\" send_broadcast=\"false\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	/* a broadcast: a signal without destination */
	assert(can_send(s, signal_msg(NULL, "/", "i.a", "S"), NAMES(":1.2")) == 1);
	/* a unicast signal is not a broadcast */
	assert(can_send(s, signal_msg("org.y", "/", "i.a", "S"), NAMES(":1.2", "org.y")) == 0);
	assert(can_send(s, signal_msg("org.x", "/", "i.a", "S"), NAMES(":1.2", "org.x")) == 1);
	/* send_broadcast="false" does not apply to broadcasts */
	assert(can_send(s, signal_msg(NULL, "/", "i.bad", "S"), NAMES(":1.2")) == 1);
	assert(can_send(s, signal_msg("org.x", "/", "i.bad", "S"), NAMES(":1.2", "org.x")) == 0);
	/* a method call without destination is not a broadcast either */
	assert(can_send(s, call(NULL, "/", "i.a", "M"), NULL) == 0);
}

static void test_fds(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	PolicyMessage m;

	/* count-fds.conf */
	p = compile("<policy context=\"default\">"
		    "<allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/>"
		    "<deny send_path=\"/test/DenySendMax2\" max_fds=\"2\"/>"
		    "<deny receive_path=\"/test/DenyReceiveMax3\" max_fds=\"3\"/>"
		    "<deny send_path=\"/test/DenySendMin4\" min_fds=\"4\"/>"
		    "<deny receive_path=\"/test/DenyReceiveMin5\" min_fds=\"5\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	m = call("d", "/test/DenySendMax2", "i", "M");
	for (unsigned n = 0; n <= 6; n++) {
		m.n_fds = n;
		m.path = "/test/DenySendMax2";
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, NULL) == (n > 2));
		m.path = "/test/DenySendMin4";
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, NULL) == (n < 4));
		m.path = "/test/DenyReceiveMax3";
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, false, NULL) == (n > 3));
		m.path = "/test/DenyReceiveMin5";
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, false, NULL) == (n < 5));
		m.path = "/other";
		assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, NULL) == 1);
		assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, false, NULL) == 1);
	}
}

static void test_receive(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	PolicyMessage m;

	p = compile("<policy context=\"default\">"
		    "<allow receive_sender=\"org.a\"/>"
		    "<allow receive_sender=\"org.freedesktop.DBus\"/>"
		    "<deny receive_sender=\"org.a\" receive_interface=\"i.bad\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	m = signal_msg(NULL, "/", "i.x", "S");
	assert(can_recv(s, m, NAMES(":1.3", "org.a")) == 1);
	assert(can_recv(s, m, NAMES(":1.3", "org.b", "org.a")) == 1);
	assert(can_recv(s, m, NAMES(":1.3", "org.b")) == 0);
	m.interface = "i.bad";
	assert(can_recv(s, m, NAMES(":1.3", "org.a")) == 0);
	/* from the bus driver: the sender header field */
	m = signal_msg(":1.5", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameAcquired");
	m.sender = "org.freedesktop.DBus";
	assert(can_recv(s, m, NULL) == 1);
	m.sender = "org.a";
	assert(can_recv(s, m, NULL) == 1);
	m.sender = NULL;
	assert(can_recv(s, m, NULL) == 0);
}

static void test_eavesdrop(void) {
	static const struct {
		const char *rules;
		bool eavesdropping;
		bool has_destination;
		int expect;
	} cases[] = {
		/* allow without eavesdrop="true" does not cover eavesdropping */
		{ "<allow receive_sender=\"*\"/>", false, true, 1 },
		{ "<allow receive_sender=\"*\"/>", true, true, 0 },
		{ "<allow receive_sender=\"*\" eavesdrop=\"true\"/>", true, true, 1 },
		{ "<allow eavesdrop=\"true\"/>", true, true, 1 },
		{ "<allow eavesdrop=\"false\"/>", true, true, 0 },
		/* broadcasts are never eavesdropping */
		{ "<allow receive_sender=\"*\"/>", true, false, 1 },
		/* deny eavesdrop="true" only applies to eavesdropping */
		{ "<allow eavesdrop=\"true\"/><deny receive_sender=\"*\" eavesdrop=\"true\"/>", true, true, 0 },
		/* ... but a wildcard deny also removes the earlier allow (optimizer) */
		{ "<allow eavesdrop=\"true\"/><deny receive_sender=\"*\" eavesdrop=\"true\"/>", false, true, 0 },
		{ "<allow eavesdrop=\"true\"/><deny receive_interface=\"i\" eavesdrop=\"true\"/>", false, true, 1 },
		{ "<allow eavesdrop=\"true\"/><deny receive_interface=\"i\" eavesdrop=\"true\"/>", true, true, 0 },
		/* deny eavesdrop="false" applies always */
		{ "<allow eavesdrop=\"true\"/><deny receive_interface=\"i\" eavesdrop=\"false\"/>", true, true, 0 },
		{ "<allow eavesdrop=\"true\"/><deny receive_interface=\"i\"/>", false, true, 0 },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(policy_unrefp) Policy *p = NULL;
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
		_cleanup_free_ char *xml = NULL;
		PolicyMessage m = call(cases[i].has_destination ? "org.dest" : NULL, "/", "i", "M");

		if (!cases[i].has_destination)
			m.type = BUS_CONFIG_MESSAGE_SIGNAL;
		assert(asprintf(&xml, "<policy context=\"default\">%s</policy>", cases[i].rules) >= 0);
		p = compile(xml);
		s = snap(p, ALICE, NULL, 0);
		if (policy_snapshot_check_receive(s, &m, NAMES(":1.1"), false, cases[i].eavesdropping, NULL) !=
		    cases[i].expect) {
			fprintf(stderr, "eavesdrop case %zu failed\n", i);
			abort();
		}
	}

	/* send side: eavesdrop="true" on an allow rule also allows
	 * unrequested replies (the monitor sees them) */
	{
		_cleanup_(policy_unrefp) Policy *p = NULL;
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;

		p = compile("<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/></policy>");
		s = snap(p, ALICE, NULL, 0);
		assert(can_send_reply(s, reply(":1.9"), false) == 1);
		s = policy_snapshot_free(s);
		p = policy_unref(p);
		p = compile("<policy context=\"default\"><allow send_destination=\"*\"/></policy>");
		s = snap(p, ALICE, NULL, 0);
		assert(can_send_reply(s, reply(":1.9"), false) == 0);
		assert(can_send_reply(s, reply(":1.9"), true) == 1);
	}
}

static void test_context_order(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	const gid_t wheel_staff[] = { WHEEL, STAFF }, staff_wheel[] = { STAFF, WHEEL }, audio[] = { AUDIO };
	PolicySnapshot *s;

	p = compile("<policy context=\"mandatory\"><deny own=\"m.denied\"/></policy>"
		    "<policy group=\"staff\"><deny own=\"g.order\"/><allow own=\"g.staff\"/></policy>"
		    "<policy user=\"alice\"><allow own=\"u.alice\"/><allow own=\"m.denied\"/>"
		    "<deny own=\"g.wheel\"/></policy>"
		    "<policy group=\"wheel\"><allow own=\"g.order\"/><allow own=\"g.wheel\"/><deny own=\"d.x\"/></policy>"
		    "<policy at_console=\"true\"><allow own=\"c.true\"/><deny own=\"u.alice\"/></policy>"
		    "<policy at_console=\"false\"><allow own=\"c.false\"/></policy>"
		    "<policy context=\"default\"><allow own=\"d.x\"/><allow own=\"g.wheel\"/></policy>"
		    "<policy user=\"nobody-unknown\"><allow own=\"unknown.user\"/></policy>"
		    "<policy group=\"nogroup-unknown\"><allow own=\"unknown.group\"/></policy>");

	/* bob, no groups: default + console(false) + mandatory */
	s = snap(p, BOB, NULL, 0);
	assert(policy_snapshot_check_own(s, "d.x", NULL) == 1);
	assert(policy_snapshot_check_own(s, "g.wheel", NULL) == 1);
	assert(policy_snapshot_check_own(s, "c.false", NULL) == 1);
	assert(policy_snapshot_check_own(s, "c.true", NULL) == 0);
	assert(policy_snapshot_check_own(s, "u.alice", NULL) == 0);
	assert(policy_snapshot_check_own(s, "unknown.user", NULL) == 0);
	assert(policy_snapshot_check_own(s, "unknown.group", NULL) == 0);
	s = policy_snapshot_free(s);

	/* groups override default; group order is the connection's */
	s = snap(p, BOB, wheel_staff, 2);
	assert(policy_snapshot_check_own(s, "d.x", NULL) == 0);        /* wheel denies over default */
	assert(policy_snapshot_check_own(s, "g.order", NULL) == 0);    /* staff comes after wheel */
	assert(policy_snapshot_check_own(s, "g.staff", NULL) == 1);
	s = policy_snapshot_free(s);
	s = snap(p, BOB, staff_wheel, 2);
	assert(policy_snapshot_check_own(s, "g.order", NULL) == 1);    /* wheel comes after staff */
	s = policy_snapshot_free(s);
	s = snap(p, BOB, audio, 1);
	assert(policy_snapshot_check_own(s, "g.order", NULL) == 0);
	assert(policy_snapshot_check_own(s, "d.x", NULL) == 1);
	s = policy_snapshot_free(s);

	/* user overrides groups; mandatory overrides user */
	s = snap(p, ALICE, wheel_staff, 2);
	assert(policy_snapshot_check_own(s, "g.wheel", NULL) == 0);
	assert(policy_snapshot_check_own(s, "u.alice", NULL) == 1);
	assert(policy_snapshot_check_own(s, "m.denied", NULL) == 0);
	s = policy_snapshot_free(s);

	/* at_console overrides user */
	{
		unsigned calls = 0;
		PolicyIdentity id = { .uid = ALICE, .is_at_console = console_yes, .userdata = &calls };

		assert(policy_snapshot_new(&s, p, &id) == 0);
		assert(calls == 1);
		assert(policy_snapshot_check_own(s, "u.alice", NULL) == 0);
		assert(policy_snapshot_check_own(s, "c.true", NULL) == 1);
		assert(policy_snapshot_check_own(s, "c.false", NULL) == 0);
		s = policy_snapshot_free(s);

		id.is_at_console = console_no;
		assert(policy_snapshot_new(&s, p, &id) == 0);
		assert(calls == 2);
		assert(policy_snapshot_check_own(s, "u.alice", NULL) == 1);
		assert(policy_snapshot_check_own(s, "c.false", NULL) == 1);
		s = policy_snapshot_free(s);

		id.is_at_console = console_fail;
		assert(policy_snapshot_new(&s, p, &id) == -EIO);
	}

	/* a connection without uid (ANONYMOUS): default and mandatory only */
	s = snap(p, POLICY_UID_INVALID, wheel_staff, 2);
	assert(policy_snapshot_check_own(s, "d.x", NULL) == 1);
	assert(policy_snapshot_check_own(s, "c.false", NULL) == 0);
	assert(policy_snapshot_check_own(s, "g.staff", NULL) == 0);
	s = policy_snapshot_free(s);

	/* the same user through several names and numbers shares one list, in file order */
	{
		_cleanup_(policy_unrefp) Policy *q = compile(
			"<policy user=\"alice\"><allow own=\"a\"/></policy>"
			"<policy user=\"1000\"><deny own=\"a\"/></policy>");

		s = snap(q, ALICE, NULL, 0);
		assert(policy_snapshot_check_own(s, "a", NULL) == 0);
		s = policy_snapshot_free(s);
	}
}

static void test_at_console_callback(void) {
	_cleanup_(policy_unrefp) Policy *p = compile("<policy context=\"default\"><allow own=\"*\"/></policy>");
	PolicySnapshot *s = NULL;
	unsigned calls = 0;
	PolicyIdentity id = { .uid = ALICE, .is_at_console = console_yes, .userdata = &calls };

	/* no at_console rules: the callback is not needed */
	assert(!policy_has_at_console_rules(p));
	assert(policy_snapshot_new(&s, p, &id) == 0);
	assert(calls == 0);
	policy_snapshot_free(s);

	id.is_at_console = console_fail;
	assert(policy_snapshot_new(&s, p, &id) == 0);
	policy_snapshot_free(s);
}

static void test_optimizer(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	const PolicyRule *const *rules;
	PolicyDecision d;
	PolicyMessage m;
	size_t n;

	/* checked with dbus-daemon 1.14.10: the deny send_broadcast rule
	 * removes the earlier send rules, so even GetId to the driver is
	 * "Rejected send message, 0 matched rules" */
	p = compile("<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
		    "<allow receive_sender=\"*\"/><allow send_type=\"method_call\"/>"
		    "<allow send_type=\"method_return\"/><allow send_type=\"error\"/>"
		    "<deny send_broadcast=\"true\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	m = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId");
	assert(policy_snapshot_check_send(s, &m, NULL, false, &d) == 0);
	assert(d.n_matched == 0 && !d.rule);
	rules = policy_snapshot_get_rules(s, &n);
	assert(n == 3);   /* own, receive, the deny */
	assert(rules[0]->type == BUS_CONFIG_RULE_OWN && rules[1]->type == BUS_CONFIG_RULE_RECEIVE);
	assert(rules[2]->type == BUS_CONFIG_RULE_SEND && !rules[2]->allow);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* without it the same call is allowed */
	p = compile("<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
		    "<allow receive_sender=\"*\"/><allow send_type=\"method_call\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(policy_snapshot_check_send(s, &m, NULL, false, &d) == 1 && d.n_matched == 1);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* across contexts: a mandatory wildcard wipes user and default rules
	 * of its type, and only of its type */
	p = compile("<policy context=\"default\"><allow own=\"a\"/><allow send_destination=\"x\"/>"
		    "<allow receive_sender=\"y\"/></policy>"
		    "<policy user=\"alice\"><allow own=\"b\"/></policy>"
		    "<policy context=\"mandatory\"><deny own=\"*\"/><allow own=\"c\"/>"
		    "<deny send_destination=\"*\" min_fds=\"1\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	rules = policy_snapshot_get_rules(s, &n);
	assert(n == 4);
	assert(streq(rules[0]->sender, "y"));
	assert(rules[1]->type == BUS_CONFIG_RULE_OWN && !rules[1]->own);
	assert(streq(rules[2]->own, "c"));
	assert(rules[3]->type == BUS_CONFIG_RULE_SEND && rules[3]->min_fds == 1);
	assert(policy_snapshot_check_own(s, "a", NULL) == 0);
	assert(policy_snapshot_check_own(s, "c", NULL) == 1);
	/* the send rule to x is gone although the deny only covers fds >= 1 */
	assert(can_send(s, call("x", "/", "i", "M"), NAMES(":1.2", "x")) == 0);
	assert(can_recv(s, signal_msg(NULL, "/", "i", "S"), NAMES(":1.3", "y")) == 1);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* prefix and destination rules do not remove anything */
	p = compile("<policy context=\"default\"><allow own=\"a\"/><allow own_prefix=\"b\"/>"
		    "<allow send_destination=\"x\"/><deny send_destination_prefix=\"y\"/>"
		    "<deny receive_interface=\"i\"/><allow receive_type=\"signal\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	policy_snapshot_get_rules(s, &n);
	assert(n == 6);
	s = policy_snapshot_free(s);
	p = policy_unref(p);

	/* a removed rule still counts for n_matched? no: it is gone */
	p = compile("<policy context=\"default\"><allow send_destination=\"*\"/><allow send_destination=\"*\"/>"
		    "<allow send_interface=\"i\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	m = call("d", "/", "i", "M");
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, &d) == 1);
	assert(d.n_matched == 2 && streq(d.rule->interface, "i"));
}

static void test_log(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	PolicyDecision d;
	PolicyMessage m = call("org.x", "/", "i", "M");

	p = compile("<policy context=\"default\"><allow send_destination=\"*\" log=\"true\"/>"
		    "<deny send_destination=\"org.x\" log=\"true\"/>"
		    "<allow send_destination=\"org.y\"/></policy>");
	s = snap(p, ALICE, NULL, 0);
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2", "org.x"), false, &d) == 0);
	assert(d.log && d.n_matched == 2 && d.rule->line == 1);
	m.destination = "org.y";
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2", "org.y"), false, &d) == 1);
	assert(!d.log && d.n_matched == 2);
	m.destination = "org.z";
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2", "org.z"), false, &d) == 1);
	assert(d.log && d.n_matched == 1);
}

static void test_connect(void) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	const gid_t staff[] = { 100, STAFF }, wheel[] = { WHEEL };
	const PolicyRule *rule;

	/* no rules: only the bus's own uid */
	p = compile("<policy context=\"default\"><allow own=\"*\"/></policy>");
	assert(policy_check_connect(p, ALICE, NULL, 0, ALICE, &rule) == 1 && !rule);
	assert(policy_check_connect(p, BOB, NULL, 0, ALICE, &rule) == 0 && !rule);
	assert(policy_check_connect(p, ROOT, NULL, 0, ALICE, NULL) == 0);
	p = policy_unref(p);

	p = compile("<policy context=\"default\"><allow user=\"*\"/></policy>");
	assert(policy_check_connect(p, BOB, NULL, 0, ALICE, &rule) == 1 && rule && !rule->user);
	p = policy_unref(p);

	p = compile("<policy context=\"mandatory\"><deny user=\"bob\"/></policy>"
		    "<policy context=\"default\"><allow user=\"*\"/><deny group=\"staff\"/>"
		    "<allow user=\"alice\"/><allow group=\"wheel\"/><allow user=\"bob\"/>"
		    "<allow user=\"nosuchuser\"/></policy>"
		    "<policy user=\"root\"><allow own=\"x\"/></policy>"
		    "<policy at_console=\"true\"><deny user=\"*\"/></policy>");
	assert(policy_check_connect(p, ROOT, NULL, 0, 4242, NULL) == 1);
	assert(policy_check_connect(p, ROOT, staff, 2, 4242, &rule) == 0 && streq(rule->group, "staff"));
	assert(policy_check_connect(p, ALICE, staff, 2, 4242, NULL) == 1);   /* alice comes after */
	assert(policy_check_connect(p, 4000, staff, 2, 4242, NULL) == 0);
	assert(policy_check_connect(p, 4000, wheel, 1, 4242, NULL) == 1);
	/* mandatory after default, whatever the file order */
	assert(policy_check_connect(p, BOB, wheel, 1, 4242, &rule) == 0 && streq(rule->user, "bob"));
	/* the bus's uid is only the starting point */
	assert(policy_check_connect(p, BOB, NULL, 0, BOB, NULL) == 0);
	p = policy_unref(p);

	p = compile("<policy context=\"default\"><deny user=\"*\"/></policy>");
	assert(policy_check_connect(p, ALICE, NULL, 0, ALICE, NULL) == 0);
}

/*
 * policy_snapshot_receives_all() against policy_snapshot_check_receive():
 * where it says yes, every message of a grid (types, senders, fields,
 * fds, replies asked for) must be allowed; and it must say yes for the
 * configurations that let everything in.
 */
static bool receives_grid_all_allowed(const PolicySnapshot *s) {
	static const BusConfigMessageType types[] = { BUS_CONFIG_MESSAGE_METHOD_CALL, BUS_CONFIG_MESSAGE_METHOD_RETURN,
						      BUS_CONFIG_MESSAGE_ERROR, BUS_CONFIG_MESSAGE_SIGNAL };
	static const char *const strs[] = { NULL, "i.bad", "i.x" };
	static const char *const paths[] = { NULL, "/", "/bad" };
	const char *const *const senders[] = { NULL, NAMES(":1.3"), NAMES(":1.3", "org.a"), NAMES(":1.4", "org.b") };

	for (size_t t = 0; t < ELEMENTSOF(types); t++)
		for (size_t a = 0; a < ELEMENTSOF(strs); a++)
			for (size_t b = 0; b < ELEMENTSOF(paths); b++)
				for (size_t n = 0; n < ELEMENTSOF(senders); n++)
					for (unsigned fds = 0; fds < 3; fds += 2) {
						PolicyMessage m = {
							.type = types[t], .destination = ":1.9", .path = paths[b],
							.interface = strs[a], .member = strs[2 - a], .error_name = strs[a],
							.sender = "org.a", .n_fds = fds,
						};
						bool reply = types[t] == BUS_CONFIG_MESSAGE_METHOD_RETURN ||
							     types[t] == BUS_CONFIG_MESSAGE_ERROR;

						m.has_reply_serial = reply;
						/* not eavesdropped; a reply only as asked for */
						if (policy_snapshot_check_receive(s, &m, senders[n], reply, false, NULL) != 1)
							return false;
						if (!reply && policy_snapshot_check_receive(s, &m, senders[n], true, false, NULL) != 1)
							return false;
					}
	return true;
}

static void test_receives_all(void) {
	static const struct {
		const char *xml;
		bool all;
	} cases[] = {
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/></policy>", true },
		{ "<policy context=\"default\"><allow eavesdrop=\"true\"/></policy>", true },
		{ "<policy context=\"default\"><allow receive_type=\"method_call\"/><allow receive_type=\"method_return\"/>"
		  "<allow receive_type=\"error\"/><allow receive_type=\"signal\"/></policy>", true },
		{ "<policy context=\"default\"><allow receive_type=\"method_call\"/><allow receive_type=\"method_return\"/>"
		  "<allow receive_type=\"signal\"/></policy>", false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/><deny receive_interface=\"i.bad\"/></policy>",
		  false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/><deny receive_sender=\"org.a\"/></policy>",
		  false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/><deny receive_type=\"error\"/></policy>", false },
		/* a deny that applies to eavesdropping only */
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/>"
		  "<deny receive_interface=\"i.bad\" eavesdrop=\"true\"/></policy>", true },
		/* a later unconditional allow lifts an earlier deny */
		{ "<policy context=\"default\"><deny receive_interface=\"i.bad\"/></policy>"
		  "<policy context=\"mandatory\"><allow receive_sender=\"*\"/></policy>", true },
		{ "<policy context=\"default\"><allow receive_sender=\"org.a\"/></policy>", false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\" max_fds=\"1\"/></policy>", false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\" receive_path=\"/\"/></policy>", false },
		{ "<policy context=\"default\"><allow send_destination=\"*\"/></policy>", false },
		{ "<policy context=\"default\"><allow receive_sender=\"*\" receive_requested_reply=\"false\"/></policy>",
		  true },
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/></policy>"
		  "<policy user=\"alice\"><deny receive_type=\"signal\" receive_interface=\"i.x\"/></policy>", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(policy_unrefp) Policy *p = compile(cases[i].xml);
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = snap(p, ALICE, NULL, 0);
		bool all = policy_snapshot_receives_all(s);

		if (all != cases[i].all || (all && !receives_grid_all_allowed(s))) {
			fprintf(stderr, "receives_all case %zu: %d, expected %d\n", i, all, cases[i].all);
			abort();
		}
	}
	assert(!policy_snapshot_receives_all(NULL));
}

/* the same for policy_snapshot_sends_all() against _check_send() */
static bool sends_grid_all_allowed(const PolicySnapshot *s) {
	static const BusConfigMessageType types[] = { BUS_CONFIG_MESSAGE_METHOD_CALL, BUS_CONFIG_MESSAGE_METHOD_RETURN,
						      BUS_CONFIG_MESSAGE_ERROR, BUS_CONFIG_MESSAGE_SIGNAL };
	static const char *const strs[] = { NULL, "i.bad", "i.x" };
	static const char *const dests[] = { NULL, "org.a", ":1.9" };
	const char *const *const receivers[] = { NULL, NAMES(":1.9"), NAMES(":1.9", "org.a"), NAMES(":1.4", "org.b") };

	for (size_t t = 0; t < ELEMENTSOF(types); t++)
		for (size_t a = 0; a < ELEMENTSOF(strs); a++)
			for (size_t d = 0; d < ELEMENTSOF(dests); d++)
				for (size_t n = 0; n < ELEMENTSOF(receivers); n++)
					for (unsigned fds = 0; fds < 3; fds += 2) {
						PolicyMessage m = {
							.type = types[t], .destination = dests[d], .path = "/",
							.interface = strs[a], .member = strs[2 - a], .error_name = strs[a],
							.sender = ":1.1", .n_fds = fds,
						};
						bool reply = types[t] == BUS_CONFIG_MESSAGE_METHOD_RETURN ||
							     types[t] == BUS_CONFIG_MESSAGE_ERROR;

						m.has_reply_serial = reply;
						if (policy_snapshot_check_send(s, &m, receivers[n], reply, NULL) != 1)
							return false;
					}
	return true;
}

static void test_sends_all(void) {
	static const struct {
		const char *xml;
		bool all;
	} cases[] = {
		{ "<policy context=\"default\"><allow send_destination=\"*\"/></policy>", true },
		{ "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/></policy>", true },
		{ "<policy context=\"default\"><allow send_type=\"method_call\"/><allow send_type=\"method_return\"/>"
		  "<allow send_type=\"error\"/><allow send_type=\"signal\"/></policy>", true },
		{ "<policy context=\"default\"><allow send_destination=\"org.a\"/></policy>", false },
		{ "<policy context=\"default\"><allow send_destination=\"*\"/><deny send_interface=\"i.bad\"/></policy>",
		  false },
		{ "<policy context=\"default\"><allow send_destination=\"*\"/><deny send_destination=\"org.a\"/></policy>",
		  false },
		{ "<policy context=\"default\"><allow send_destination=\"*\" send_broadcast=\"true\"/></policy>", false },
		{ "<policy context=\"default\"><allow send_destination=\"*\" max_fds=\"0\"/></policy>", false },
		{ "<policy context=\"default\"><deny send_type=\"signal\" send_interface=\"i.x\"/></policy>"
		  "<policy context=\"mandatory\"><allow send_destination=\"*\"/></policy>", true },
		{ "<policy context=\"default\"><allow receive_sender=\"*\"/></policy>", false },
		{ "<policy context=\"default\"><allow send_destination=\"*\"/></policy>"
		  "<policy user=\"alice\"><deny send_destination=\"org.b\"/></policy>", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(policy_unrefp) Policy *p = compile(cases[i].xml);
		_cleanup_(policy_snapshot_freep) PolicySnapshot *s = snap(p, ALICE, NULL, 0);
		bool all = policy_snapshot_sends_all(s);

		if (all != cases[i].all || (all && !sends_grid_all_allowed(s))) {
			fprintf(stderr, "sends_all case %zu: %d, expected %d\n", i, all, cases[i].all);
			abort();
		}
	}
	assert(!policy_snapshot_sends_all(NULL));
}

static void test_stock_system_conf(void) {
	static const BusConfigLoadOptions o = { .flags = BUS_CONFIG_LOAD_NO_MKDIR, .selinux_enabled = -1 };
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *user = NULL, *root = NULL;
	PolicyMessage m;

	if (bus_config_load_full("/usr/share/dbus-1/system.conf", &o, &c, NULL) < 0) {
		test_skip("system.conf not found");
		return;
	}
	assert(policy_new(&p, c, NULL) == 0);
	c = bus_config_free(c);   /* the policy stands alone */
	user = snap(p, 65534, NULL, 0);
	root = snap(p, 0, NULL, 0);

	assert(policy_check_connect(p, 65534, NULL, 0, 100, NULL) == 1);

	m = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello");
	assert(policy_snapshot_check_send(user, &m, NULL, false, NULL) == 1);
	m.member = "UpdateActivationEnvironment";
	assert(policy_snapshot_check_send(user, &m, NULL, false, NULL) == 0);
	m.interface = "org.freedesktop.DBus.Monitoring";
	m.member = "BecomeMonitor";
	assert(policy_snapshot_check_send(user, &m, NULL, false, NULL) == 0);
	assert(policy_snapshot_check_send(root, &m, NULL, false, NULL) == 1);
	m.interface = "org.freedesktop.DBus.Introspectable";
	m.member = "Introspect";
	assert(policy_snapshot_check_send(user, &m, NULL, false, NULL) == 1);
	m.interface = NULL;   /* no interface: the allow rules need one */
	assert(policy_snapshot_check_send(user, &m, NULL, false, NULL) == 0);

	/* method calls elsewhere are denied unless system.d punches a hole */
	m = call("org.example.Nothing", "/", "org.example.Nothing", "M");
	assert(policy_snapshot_check_send(user, &m, NAMES(":1.5", "org.example.Nothing"), false, NULL) == 0);
	m = signal_msg(NULL, "/", "org.example.S", "Changed");
	assert(policy_snapshot_check_send(user, &m, NAMES(":1.5"), false, NULL) == 1);
	assert(policy_snapshot_check_receive(user, &m, NAMES(":1.3"), false, false, NULL) == 1);
	m = reply(":1.9");
	assert(policy_snapshot_check_send(user, &m, NAMES(":1.9"), true, NULL) == 1);
	assert(policy_snapshot_check_send(user, &m, NAMES(":1.9"), false, NULL) == 0);
	/* names cannot be owned by default */
	assert(policy_snapshot_check_own(user, "org.example.Nothing", NULL) == 0);
	/* system.conf lets everything be received (one rule per type), but a
	 * system.d file may add receive rules (wpa_supplicant.conf denies
	 * receive_sender): where the shortcut says yes, every message must
	 * pass; nothing may be sent without a check */
	assert(!policy_snapshot_receives_all(user) || receives_grid_all_allowed(user));
	assert(!policy_snapshot_sends_all(user));
}

static void test_stock_session_conf(void) {
	static const BusConfigLoadOptions o = { .flags = BUS_CONFIG_LOAD_NO_MKDIR, .selinux_enabled = -1 };
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	PolicyMessage m;

	if (bus_config_load_full("/usr/share/dbus-1/session.conf", &o, &c, NULL) < 0) {
		test_skip("session.conf not found");
		return;
	}
	assert(policy_new(&p, c, NULL) == 0);
	s = snap(p, getuid(), NULL, 0);
	m = call("org.example.X", "/", "i.f", "M");
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, NULL) == 1);
	assert(policy_snapshot_check_receive(s, &m, NAMES(":1.2"), false, true, NULL) == 1);
	m = reply(":1.2");
	assert(policy_snapshot_check_send(s, &m, NAMES(":1.2"), false, NULL) == 1);
	assert(policy_snapshot_check_own(s, "org.example.X", NULL) == 1);
	assert(policy_snapshot_receives_all(s) && receives_grid_all_allowed(s));
	assert(policy_snapshot_sends_all(s) && sends_grid_all_allowed(s));
	/* no user rules: only the bus owner connects */
	assert(policy_check_connect(p, getuid(), NULL, 0, getuid(), NULL) == 1);
	assert(policy_check_connect(p, getuid() + 1, NULL, 0, getuid(), NULL) == 0);
}

static void test_lifetime_and_args(void) {
	Policy *p = compile("<policy context=\"default\"><allow own=\"x\"/></policy>");
	PolicySnapshot *s = snap(p, ALICE, NULL, 0);
	const PolicyRule *rule;
	PolicyMessage m = call("d", "/", "i", "M");

	/* the snapshot keeps the policy alive */
	assert(policy_snapshot_get_policy(s) == p);
	policy_unref(p);
	assert(policy_snapshot_check_own(s, "x", &rule) == 1);
	assert(streq(rule->file, "/test/policy.conf"));

	assert(policy_snapshot_check_own(NULL, "x", NULL) == -EINVAL);
	assert(policy_snapshot_check_own(s, NULL, NULL) == -EINVAL);
	assert(policy_snapshot_check_send(NULL, &m, NULL, false, NULL) == -EINVAL);
	assert(policy_snapshot_check_receive(s, NULL, NULL, false, false, NULL) == -EINVAL);
	assert(policy_check_connect(NULL, 0, NULL, 0, 0, NULL) == -EINVAL);
	policy_snapshot_free(s);
	assert(!policy_unref(NULL) && !policy_snapshot_free(NULL));
}

static void test_groups_from_uid(void) {
	_cleanup_free_ gid_t *g = NULL;
	size_t n = 0;

	assert(policy_groups_from_uid(0, &g, &n) == 0);
	assert(n >= 1 && g[0] == 0);
	assert(policy_groups_from_uid(4000000000u, &g, &n) == -ESRCH);
}

int main(void) {
	RUN(name_prefix);
	RUN(own);
	RUN(send_destination);
	RUN(send_destination_prefix);
	RUN(interface_path_member_error);
	RUN(requested_reply);
	RUN(broadcast);
	RUN(fds);
	RUN(receive);
	RUN(eavesdrop);
	RUN(receives_all);
	RUN(sends_all);
	RUN(context_order);
	RUN(at_console_callback);
	RUN(optimizer);
	RUN(log);
	RUN(connect);
	RUN(stock_system_conf);
	RUN(stock_session_conf);
	RUN(lifetime_and_args);
	RUN(groups_from_uid);

	return test_done();
}
