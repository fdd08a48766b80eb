/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-config.c - unit tests for policy/config.c, the busconfig loader.
 *
 * Expected accept/reject results were taken from dbus-daemon 1.14.10
 * (dbus-daemon --config-file=X --print-address --nofork).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/config.h"
#include "util/macro.h"
#include "tests/unit/test.h"

#define INSTALLED_DATA "/usr/lib/dbus-1.0/installed-tests/dbus/data"

static char tmpdir[] = "/tmp/test-config-XXXXXX";
static unsigned n_checks;

static void write_file(const char *name, const char *content) {
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	assert(f);
	fputs(content, f);
	fclose(f);
}

static void make_dir(const char *name) {
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static char *tmp_path(const char *name) {
	char *p;

	assert(asprintf(&p, "%s/%s", tmpdir, name) >= 0);
	return p;
}

static const BusConfigLoadOptions test_opts = {
	.flags = BUS_CONFIG_LOAD_NO_MKDIR,
	.selinux_enabled = -1,
};

/* load a file written into tmpdir */
static int load(const char *name, BusConfig **ret, char **ret_error) {
	_cleanup_free_ char *p = tmp_path(name);

	return bus_config_load_full(p, &test_opts, ret, ret_error);
}

/* load a snippet wrapped in <busconfig><listen>…</listen>…</busconfig> */
static int load_snippet(const char *body, BusConfig **ret, char **ret_error) {
	_cleanup_free_ char *xml = NULL;
	_cleanup_free_ char *name = tmp_path("snippet.conf");

	assert(asprintf(&xml, "<busconfig><listen>unix:tmpdir=/tmp</listen>%s</busconfig>", body) >= 0);
	return bus_config_load_string(xml, strlen(xml), name, &test_opts, ret, ret_error);
}

static void expect_snippet(const char *body, bool ok) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	r = load_snippet(body, &c, &err);
	if ((r >= 0) != ok) {
		fprintf(stderr, "snippet %s: expected %s, got r=%d err=%s\n", body,
			ok ? "accept" : "reject", r, strempty(err));
		abort();
	}
	if (!ok) {
		assert(err);
		assert(r == -EINVAL || r == -ENOENT || r == -ELOOP);
	}
	n_checks++;
}

/* strv length with a name that does not clash with the library */
static size_t strv_length_check(char **l) {
	size_t n = 0;

	for (char **i = l; i && *i; i++)
		n++;
	return n;
}

static bool has_warning(const BusConfig *c, const char *needle) {
	for (char **w = c->warnings; w && *w; w++)
		if (strstr(*w, needle))
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */

static void test_defaults(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	BusConfigLimits d;

	assert(load_snippet("", &c, NULL) == 0);
	bus_config_limits_init_default(&d);
	assert(memcmp(&c->limits, &d, sizeof(d)) == 0);
	assert(c->limits.max_incoming_bytes == 133169152);
	assert(c->limits.max_outgoing_bytes == 133169152);
	assert(c->limits.max_message_size == 33554432);
	assert(c->limits.max_incoming_unix_fds == 64);
	assert(c->limits.max_outgoing_unix_fds == 64);
	assert(c->limits.max_message_unix_fds == 16);
	assert(c->limits.service_start_timeout == 25000);
	assert(c->limits.auth_timeout == 30000);
	assert(c->limits.pending_fd_timeout == 150000);
	assert(c->limits.max_completed_connections == 2048);
	assert(c->limits.max_incomplete_connections == 64);
	assert(c->limits.max_connections_per_user == 256);
	assert(c->limits.max_pending_service_starts == 512);
	assert(c->limits.max_names_per_connection == 512);
	assert(c->limits.max_match_rules_per_connection == 512);
	assert(c->limits.max_replies_per_connection == 128);
	assert(c->limits.reply_timeout == -1);
	assert(c->limits.max_containers == 512);
	assert(c->limits.max_containers_per_user == 16);
	assert(c->limits.max_container_metadata_bytes == 4096);
	assert(c->limits.max_connections_per_container == 8);

	assert(!c->type && !c->user && !c->pidfile && !c->servicehelper);
	assert(!c->fork && !c->keep_umask && !c->syslog && !c->allow_anonymous && !c->kdbus);
	assert(c->apparmor_mode == BUS_CONFIG_APPARMOR_ENABLED);
	assert(c->listen && streq(c->listen[0], "unix:tmpdir=/tmp") && !c->listen[1]);
	assert(!c->auth && c->n_servicedirs == 0 && c->n_policies == 0);
	assert(c->files && c->files[0] && !c->files[1]);
}

static void test_limits(void) {
	static const char *const names[] = {
		"max_incoming_bytes", "max_incoming_unix_fds", "max_outgoing_bytes",
		"max_outgoing_unix_fds", "max_message_size", "max_message_unix_fds",
		"service_start_timeout", "auth_timeout", "pending_fd_timeout",
		"max_completed_connections", "max_incomplete_connections",
		"max_connections_per_user", "max_pending_service_starts",
		"max_names_per_connection", "max_match_rules_per_connection",
		"max_replies_per_connection", "reply_timeout", "max_containers",
		"max_containers_per_user", "max_container_metadata_bytes",
		"max_connections_per_container",
	};
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *body = NULL;
	size_t len = 0;
	FILE *f;

	/* every name, value = index + 1000 */
	f = open_memstream(&body, &len);
	assert(f);
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		fprintf(f, "<limit name=\"%s\">%zu</limit>", names[i], i + 1000);
	fclose(f);
	assert(load_snippet(body, &c, NULL) == 0);
	assert(c->limits.max_incoming_bytes == 1000);
	assert(c->limits.max_incoming_unix_fds == 1001);
	assert(c->limits.max_outgoing_bytes == 1002);
	assert(c->limits.max_outgoing_unix_fds == 1003);
	assert(c->limits.max_message_size == 1004);
	assert(c->limits.max_message_unix_fds == 1005);
	assert(c->limits.service_start_timeout == 1006);
	assert(c->limits.auth_timeout == 1007);
	assert(c->limits.pending_fd_timeout == 1008);
	assert(c->limits.max_completed_connections == 1009);
	assert(c->limits.max_incomplete_connections == 1010);
	assert(c->limits.max_connections_per_user == 1011);
	assert(c->limits.max_pending_service_starts == 1012);
	assert(c->limits.max_names_per_connection == 1013);
	assert(c->limits.max_match_rules_per_connection == 1014);
	assert(c->limits.max_replies_per_connection == 1015);
	assert(c->limits.reply_timeout == 1016);
	assert(c->limits.max_containers == 1017);
	assert(c->limits.max_containers_per_user == 1018);
	assert(c->limits.max_container_metadata_bytes == 1019);
	assert(c->limits.max_connections_per_container == 1020);
	c = bus_config_free(c);

	/* strtol(base 0): hex, octal, leading space and trailing junk */
	assert(load_snippet("<limit name=\"max_message_size\"> 0x100junk</limit>"
			    "<limit name=\"auth_timeout\">010</limit>"
			    "<limit name=\"reply_timeout\">\n 0 \n</limit>", &c, NULL) == 0);
	assert(c->limits.max_message_size == 256);
	assert(c->limits.auth_timeout == 8);
	assert(c->limits.reply_timeout == 0);
	c = bus_config_free(c);

	/* byte and fd limits are longs, the others ints */
	assert(load_snippet("<limit name=\"max_message_size\">9223372036854775807</limit>"
			    "<limit name=\"max_message_unix_fds\">2147483648</limit>", &c, NULL) == 0);
	assert(c->limits.max_message_size == INT64_MAX);
	assert(c->limits.max_message_unix_fds == 2147483648LL);

	expect_snippet("<limit name=\"max_names_per_connection\">2147483647</limit>", true);
	expect_snippet("<limit name=\"max_names_per_connection\">2147483648</limit>", false);
	expect_snippet("<limit name=\"max_names_per_connection\">3123123123</limit>", false);
	expect_snippet("<limit name=\"max_message_size\">9223372036854775808</limit>", false);
	expect_snippet("<limit name=\"max_names_per_connection\">-1</limit>", false);
	expect_snippet("<limit name=\"reply_timeout\">-5</limit>", false);
	expect_snippet("<limit name=\"max_names_per_connection\">bees</limit>", false);
	expect_snippet("<limit name=\"max_names_per_connection\"></limit>", false);
	expect_snippet("<limit name=\"max_bees\">5000</limit>", false);
	expect_snippet("<limit name=\"\">1</limit>", false);
	expect_snippet("<limit>1</limit>", false);
	expect_snippet("<limit wildebeest=\"gnu\">5000</limit>", false);
	expect_snippet("<limit name=\"max_message_size\" foo=\"x\">1</limit>", false);
	/* last one wins */
	c = bus_config_free(c);
	assert(load_snippet("<limit name=\"auth_timeout\">1</limit><limit name=\"auth_timeout\">2</limit>",
			    &c, NULL) == 0);
	assert(c->limits.auth_timeout == 2);
}

static void test_elements(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;

	assert(load_snippet("<type>session</type><user>nobody</user><fork/><keep_umask/><syslog/><kdbus/>"
			    "<allow_anonymous/><pidfile>/run/x.pid</pidfile><auth>EXTERNAL</auth>"
			    "<auth>ANONYMOUS</auth><listen>tcp:host=localhost</listen>"
			    "<servicehelper>helper</servicehelper><apparmor mode=\"required\"/>"
			    "<selinux><associate own=\"a.b\" context=\"x_t\"/>"
			    "<associate own=\"a.c\" context=\"y_t\"/><associate own=\"a.b\" context=\"z_t\"/>"
			    "</selinux>", &c, NULL) == 0);
	assert(streq(c->type, "session"));
	assert(streq(c->user, "nobody"));
	assert(c->fork && c->keep_umask && c->syslog && c->allow_anonymous && c->kdbus);
	assert(streq(c->pidfile, "/run/x.pid"));
	assert(streq(c->auth[0], "EXTERNAL") && streq(c->auth[1], "ANONYMOUS") && !c->auth[2]);
	assert(streq(c->listen[0], "unix:tmpdir=/tmp") && streq(c->listen[1], "tcp:host=localhost"));
	/* relative servicehelper resolves against the file's directory */
	assert(strncmp(c->servicehelper, tmpdir, strlen(tmpdir)) == 0);
	assert(streq(c->servicehelper + strlen(tmpdir), "/helper"));
	assert(c->apparmor_mode == BUS_CONFIG_APPARMOR_REQUIRED);
	assert(c->n_associations == 2);
	assert(streq(c->associations[0].own, "a.b") && streq(c->associations[0].context, "z_t"));
	assert(streq(c->associations[1].own, "a.c") && streq(c->associations[1].context, "y_t"));
	c = bus_config_free(c);

	/* last <user>/<type>/<pidfile> wins */
	assert(load_snippet("<user>a</user><user>b</user><type>x</type><type>y</type>", &c, NULL) == 0);
	assert(streq(c->user, "b") && streq(c->type, "y"));
	c = bus_config_free(c);

	/* text is kept verbatim, entities and CDATA decoded, comments and
	 * processing instructions split nothing */
	assert(load_snippet("<user>  nobody </user><type>a<!-- c -->b<?pi x?>c</type>"
			    "<pidfile><![CDATA[/x<y>]]></pidfile><auth>&#69;XTERNAL&amp;</auth>",
			    &c, NULL) == 0);
	assert(streq(c->user, "  nobody "));
	assert(streq(c->type, "abc"));
	assert(streq(c->pidfile, "/x<y>"));
	assert(streq(c->auth[0], "EXTERNAL&"));

	expect_snippet("<apparmor/>", true);
	expect_snippet("<apparmor mode=\"enabled\"/>", true);
	expect_snippet("<apparmor mode=\"disabled\"/>", true);
	expect_snippet("<apparmor mode=\"plaintive\"/>", false);
	expect_snippet("<apparmor enforcement_style=\"Judge Dredd\"/>", false);
	expect_snippet("<bees/>", false);
	expect_snippet("<allow own=\"*\"/>", false);          /* not a busconfig child */
	expect_snippet("<associate own=\"a\" context=\"b\"/>", false);
	expect_snippet("<busconfig/>", false);
	expect_snippet("<user></user>", false);
	expect_snippet("<pidfile/>", false);
	expect_snippet("<type/>", false);
	expect_snippet("<auth/>", false);
	expect_snippet("<servicedir/>", false);
	expect_snippet("<servicehelper/>", false);
	expect_snippet("<include/>", false);
	expect_snippet("<includedir/>", false);
	expect_snippet("<listen/>", false);
	expect_snippet("<user> </user>", true);
	expect_snippet("<fork>x</fork>", false);
	expect_snippet("<fork> \n\t</fork>", true);
	expect_snippet("<fork a=\"b\"/>", false);
	expect_snippet("<keep_umask>x</keep_umask>", false);
	expect_snippet("<kdbus>x</kdbus>", false);
	expect_snippet("<kdbus a=\"b\"/>", false);
	expect_snippet("<syslog>x</syslog>", false);
	expect_snippet("<allow_anonymous>x</allow_anonymous>", false);
	expect_snippet("<standard_session_servicedirs>x</standard_session_servicedirs>", false);
	expect_snippet("<standard_system_servicedirs a=\"b\"/>", false);
	expect_snippet("<listen carefully=\"yes\">tcp:port=1234</listen>", false);
	expect_snippet("<user>x<foo/></user>", false);
	expect_snippet("junk", false);
	expect_snippet("<selinux>text</selinux>", false);
	expect_snippet("<selinux a=\"b\"/>", false);
	expect_snippet("<selinux><foo/></selinux>", false);
	expect_snippet("<selinux><associate own=\"a\"/></selinux>", false);
	expect_snippet("<selinux><associate context=\"a\"/></selinux>", false);
	expect_snippet("<selinux><associate own=\"a\" context=\"b\" x=\"y\"/></selinux>", false);
	expect_snippet("<selinux><associate own=\"a\" context=\"b\"><x/></associate></selinux>", false);
	expect_snippet("<selinux><associate own=\"a\" context=\"b\">t</associate></selinux>", false);
	expect_snippet("<policy context=\"default\"><allow own=\"*\">text</allow></policy>", false);
	expect_snippet("<policy context=\"default\"><allow own=\"*\"><x/></allow></policy>", false);
	expect_snippet("<policy context=\"default\">text</policy>", false);
	expect_snippet("<policy context=\"default\"><limit name=\"a\">1</limit></policy>", false);
}

static void test_document(void) {
	static const struct {
		const char *xml;
		bool ok;
	} cases[] = {
		{ "<busconfig><listen>unix:tmpdir=/tmp</listen></busconfig>", true },
		{ "<?xml version=\"1.0\"?>\n<busconfig><listen>x</listen></busconfig>", true },
		{ "\xef\xbb\xbf<busconfig><listen>x</listen></busconfig>", true },
		/* no doctype check in dbus-daemon 1.14 */
		{ "<!DOCTYPE foo><busconfig><listen>x</listen></busconfig>", true },
		{ "<!DOCTYPE busconfig [<!ENTITY a \"unix:tmpdir=/tmp\">]><busconfig><listen>&a;</listen></busconfig>", true },
		{ "<foo><listen>x</listen></foo>", false },
		{ "<busconfig foo=\"bar\"><listen>x</listen></busconfig>", false },
		{ "<busconfig xmlns=\"http://x\"><listen>x</listen></busconfig>", false },
		{ "<busconfig><listen>x</listen></busconfig>trailing", false },
		{ "<busconfig><listen>x</listen>", false },
		{ "<busconfig><user>a</foo></busconfig>", false },
		{ "", false },
		{ "<busconfig></busconfig>", false },             /* needs <listen> */
		{ "<busconfig><listen>x</listen><type>\xe9</type></busconfig>", false },
		{ "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><busconfig><listen>x</listen><type>\xe9</type></busconfig>", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(bus_config_freep) BusConfig *c = NULL;
		_cleanup_free_ char *err = NULL;
		int r;

		r = bus_config_load_string(cases[i].xml, strlen(cases[i].xml), "/tmp/doc.conf",
					   &test_opts, &c, &err);
		if ((r >= 0) != cases[i].ok) {
			fprintf(stderr, "document %zu: r=%d err=%s\n", i, r, strempty(err));
			abort();
		}
		n_checks++;
	}

	/* a NUL byte is not well-formed */
	{
		_cleanup_(bus_config_freep) BusConfig *c = NULL;
		_cleanup_free_ char *err = NULL;
		const char xml[] = "<busconfig><listen>x</listen>\0</busconfig>";

		assert(bus_config_load_string(xml, sizeof(xml) - 1, "/tmp/nul.conf", &test_opts, &c, &err) == -EINVAL);
		/* dbus-daemon's words: the file, line and column, a newline */
		assert(strstr(err, "Error in file /tmp/nul.conf, line 1, column "));
		assert(err[strlen(err) - 1] == '\n');
	}
}

static void test_error_location(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL, *p = NULL, *expect = NULL;

	/* dbus-daemon's words: no file or line, but for XML syntax errors */
	write_file("loc.conf", "<busconfig>\n  <listen>x</listen>\n\n  <bees/>\n</busconfig>\n");
	assert(load("loc.conf", &c, &err) == -EINVAL);
	assert(streq(err, "Element <bees> not allowed inside <busconfig> in configuration file"));
	free(err);
	err = NULL;

	/* XML errors: "Error in file F, line L, column C: ...\n" */
	write_file("loc2.conf", "<busconfig>\n<listen>x</listen>\n<user>a</foo>\n</busconfig>\n");
	assert(load("loc2.conf", &c, &err) == -EINVAL);
	p = tmp_path("loc2.conf");
	assert(asprintf(&expect, "Error in file %s, line 3, column ", p) >= 0);
	assert(strncmp(err, expect, strlen(expect)) == 0);
	assert(strstr(err, ": mismatched tag\n"));
	free(err);
	err = NULL;

	/* missing top-level file */
	assert(load("does-not-exist.conf", &c, &err) == -ENOENT);
	assert(strncmp(err, "Failed to open \"", 16) == 0 && strstr(err, "does-not-exist.conf\": No such file"));
	free(err);
	err = NULL;

	/* a directory */
	assert(bus_config_load_full(tmpdir, &test_opts, &c, &err) == -EINVAL);
	assert(strstr(err, "is not a regular file"));
	free(err);
	err = NULL;

	/* NULL ret_error is fine */
	assert(load("loc.conf", &c, NULL) == -EINVAL);
	assert(!c);
}

static void test_big_file(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL, *p = tmp_path("big.conf");
	FILE *f = fopen(p, "we");

	assert(f);
	fputs("<busconfig><listen>x</listen>", f);
	for (int i = 0; i < 17000; i++)
		fputs("<!-- padding padding padding padding padding padding paddin -->", f);
	fputs("</busconfig>", f);
	fclose(f);
	assert(bus_config_load_full(p, &test_opts, &c, &err) == -EFBIG);
	assert(strstr(err, "is too large"));
}

static void test_rules(void) {
	static const struct {
		const char *rule;
		bool ok;
	} cases[] = {
		{ "<allow user=\"*\"/>", true },
		{ "<allow/>", false },
		{ "<allow species=\"stoat\"/>", false },
		{ "<allow log=\"true\"/>", false },
		{ "<allow max_fds=\"1\"/>", false },
		{ "<allow min_fds=\"1\"/>", false },
		{ "<allow eavesdrop=\"true\"/>", true },
		{ "<allow eavesdrop=\"false\"/>", true },
		{ "<allow eavesdrop=\"true\" max_fds=\"1\"/>", true },
		{ "<allow eavesdrop=\"TRUE\"/>", false },
		{ "<allow receive_sender=\"a\" eavesdrop=\"1\"/>", false },
		{ "<allow own=\"a\" log=\"true\"/>", true },
		{ "<allow own=\"a\" eavesdrop=\"true\"/>", false },
		{ "<allow own=\"a\" max_fds=\"2\"/>", false },
		{ "<allow own=\"a\" own_prefix=\"b\"/>", false },
		{ "<allow user=\"a\" group=\"b\"/>", false },
		{ "<allow user=\"*\" own=\"com.example.Bees\"/>", false },
		{ "<allow user=\"*\" send_type=\"signal\"/>", false },
		{ "<allow own=\"\"/>", true },
		{ "<allow own_prefix=\"*\"/>", true },
		{ "<deny send_member=\"Reboot\"/>", false },
		{ "<deny receive_member=\"Reboot\"/>", false },
		{ "<deny send_member=\"Reboot\" send_path=\"/\"/>", true },
		{ "<deny send_member=\"Reboot\" send_interface=\"a.b\"/>", true },
		{ "<deny send_member=\"*\"/>", false },
		{ "<allow receive_type=\"signal\" send_destination=\"com.example.Bees\"/>", false },
		{ "<allow send_broadcast=\"true\" send_destination=\"com.example.Bees\"/>", false },
		{ "<allow send_broadcast=\"true\" send_destination=\"*\"/>", true },
		{ "<allow send_broadcast=\"false\" send_destination=\"com.example.Bees\"/>", true },
		{ "<allow send_broadcast=\"true\" send_destination_prefix=\"a\"/>", true },
		{ "<allow send_broadcast=\"maybe\"/>", false },
		{ "<allow send_type=\"foo\"/>", false },
		{ "<allow send_type=\"*\"/>", true },
		{ "<allow send_type=\"method_call\"/>", true },
		{ "<allow send_type=\"method_return\"/>", true },
		{ "<allow send_type=\"signal\"/>", true },
		{ "<allow send_type=\"error\"/>", true },
		{ "<allow receive_type=\"Signal\"/>", false },
		{ "<allow receive_type=\"method_return\" receive_requested_reply=\"yes\"/>", false },
		{ "<allow send_requested_reply=\"false\"/>", true },
		{ "<allow send_interface=\"a\" send_error=\"b\"/>", false },
		{ "<allow send_member=\"a\" send_path=\"/\" send_error=\"b\"/>", false },
		{ "<allow send_path=\"/\" send_error=\"b\"/>", true },
		{ "<allow receive_member=\"a\" receive_error=\"b\" receive_path=\"/\"/>", false },
		{ "<allow receive_interface=\"a\" receive_error=\"b\"/>", false },
		{ "<allow send_destination=\"a\" send_destination_prefix=\"b\"/>", false },
		{ "<allow send_destination=\"a\" max_fds=\"65\"/>", true },
		{ "<allow send_destination=\"a\" max_fds=\"33554432\"/>", true },
		{ "<allow send_destination=\"a\" max_fds=\"33554433\"/>", false },
		{ "<allow send_destination=\"a\" max_fds=\"-0\"/>", true },
		{ "<allow send_destination=\"a\" max_fds=\"-1\"/>", false },
		{ "<allow send_destination=\"a\" max_fds=\"3x\"/>", true },
		{ "<allow send_destination=\"a\" max_fds=\"\"/>", false },
		{ "<allow send_destination=\"a\" min_fds=\"x\"/>", false },
		{ "<allow send_destination=\"\"/>", true },
		{ "<allow send_destination=\"a\" send_destination=\"a\"/>", false },
		{ "<allow send_destination=\"a\" eavesdrop=\"true\" log=\"yes\"/>", true },
		{ "<allow receive_sender=\"*\" receive_path=\"/x\" receive_type=\"error\" receive_error=\"e.f\"/>", true },
		{ "<allow send_destination=\"a\"><x/></allow>", false },
		{ "<mumble/>", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *body = NULL;

		assert(asprintf(&body, "<policy context=\"default\">%s</policy>", cases[i].rule) >= 0);
		expect_snippet(body, cases[i].ok);
	}
}

static void test_rule_fields(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	const BusConfigRule *r;
	const BusConfigPolicy *p;

	assert(load_snippet("<policy context=\"default\">\n"
			    "<allow send_destination=\"*\" eavesdrop=\"true\"/>\n"                    /* 0 */
			    "<deny send_destination_prefix=\"org.a\" send_interface=\"i.j\" send_member=\"M\""
			    " send_path=\"/p\" send_type=\"method_call\" send_broadcast=\"false\" log=\"true\""
			    " min_fds=\"1\" max_fds=\"3\"/>\n"                                        /* 1 */
			    "<allow receive_sender=\"org.b\" receive_error=\"e.E\" receive_type=\"error\""
			    " receive_requested_reply=\"false\" log=\"true\"/>\n"                     /* 2 */
			    "<allow eavesdrop=\"true\"/>\n"                                           /* 3 */
			    "<deny own=\"*\"/>\n"                                                     /* 4 */
			    "<allow own_prefix=\"org.c\"/>\n"                                         /* 5 */
			    "<allow user=\"*\"/>\n"                                                   /* 6 */
			    "<deny group=\"root\"/>\n"                                                /* 7 */
			    "<deny send_destination_prefix=\"*\"/>\n"                                 /* 8 */
			    "<allow send_interface=\"*\" send_member=\"*\" send_path=\"*\"/>\n" /* 9 */
			    "<deny receive_sender=\"*\"/>\n"                                          /* 10 */
			    "</policy>\n"
			    "<policy context=\"mandatory\"/>\n"
			    "<policy user=\"root\"><allow own=\"x\"/></policy>\n"
			    "<policy group=\"0\"/>\n"
			    "<policy at_console=\"true\"><allow user=\"*\"/></policy>\n"
			    "<policy at_console=\"false\"/>\n", &c, NULL) == 0);
	assert(c->n_policies == 6);
	p = &c->policies[0];
	assert(p->context == BUS_CONFIG_CONTEXT_DEFAULT && p->n_rules == 11 && p->line == 1);

	r = &p->rules[0];
	assert(r->type == BUS_CONFIG_RULE_SEND && r->allow && !r->destination && r->eavesdrop);
	assert(r->requested_reply && r->broadcast == BUS_CONFIG_TRISTATE_ANY && !r->log);
	assert(r->min_fds == 0 && r->max_fds == 33554432 && r->message_type == BUS_CONFIG_MESSAGE_ANY);
	assert(r->line == 2 && r->file == c->files[0]);

	r = &p->rules[1];
	assert(r->type == BUS_CONFIG_RULE_SEND && !r->allow && streq(r->destination, "org.a"));
	assert(r->destination_is_prefix && streq(r->interface, "i.j") && streq(r->member, "M"));
	assert(streq(r->path, "/p") && r->message_type == BUS_CONFIG_MESSAGE_METHOD_CALL);
	assert(r->broadcast == BUS_CONFIG_TRISTATE_FALSE && r->log && !r->requested_reply);
	assert(r->min_fds == 1 && r->max_fds == 3 && r->line == 3);

	r = &p->rules[2];
	assert(r->type == BUS_CONFIG_RULE_RECEIVE && r->allow && streq(r->sender, "org.b"));
	assert(streq(r->error, "e.E") && r->message_type == BUS_CONFIG_MESSAGE_ERROR);
	assert(!r->requested_reply && !r->log);   /* log only on send rules */

	r = &p->rules[3];
	assert(r->type == BUS_CONFIG_RULE_RECEIVE && r->eavesdrop && !r->sender);

	r = &p->rules[4];
	assert(r->type == BUS_CONFIG_RULE_OWN && !r->allow && !r->own && !r->own_is_prefix);
	r = &p->rules[5];
	assert(r->type == BUS_CONFIG_RULE_OWN && r->allow && streq(r->own, "org.c") && r->own_is_prefix);
	r = &p->rules[6];
	assert(r->type == BUS_CONFIG_RULE_USER && r->allow && !r->user);
	r = &p->rules[7];
	assert(r->type == BUS_CONFIG_RULE_GROUP && !r->allow && streq(r->group, "root"));
	r = &p->rules[8];
	assert(r->destination_is_prefix && streq(r->destination, "*"));
	r = &p->rules[9];
	assert(!r->interface && !r->member && !r->path);
	r = &p->rules[10];
	assert(r->type == BUS_CONFIG_RULE_RECEIVE && !r->allow && !r->sender && !r->requested_reply);

	assert(c->policies[1].context == BUS_CONFIG_CONTEXT_MANDATORY && c->policies[1].n_rules == 0);
	assert(c->policies[2].context == BUS_CONFIG_CONTEXT_USER && streq(c->policies[2].user, "root"));
	assert(c->policies[3].context == BUS_CONFIG_CONTEXT_GROUP && streq(c->policies[3].group, "0"));
	assert(c->policies[4].context == BUS_CONFIG_CONTEXT_AT_CONSOLE && c->policies[4].at_console);
	assert(c->policies[4].n_rules == 1);
	assert(c->policies[5].context == BUS_CONFIG_CONTEXT_AT_CONSOLE && !c->policies[5].at_console);
}

static void test_policy_contexts(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;

	expect_snippet("<policy/>", false);
	expect_snippet("<policy hat=\"top\"/>", false);
	expect_snippet("<policy context=\"apropos of nothing\"/>", false);
	expect_snippet("<policy context=\"Default\"/>", false);
	expect_snippet("<policy user=\"root\" at_console=\"true\"/>", false);
	expect_snippet("<policy context=\"default\" user=\"root\"/>", false);
	expect_snippet("<policy group=\"root\" user=\"root\"/>", false);
	expect_snippet("<policy at_console=\"somewhere in the vicinity\"/>", false);
	expect_snippet("<policy at_console=\"TRUE\"/>", false);

	/* bus-global rules in per-user/per-group policies: an error only if
	 * both the policy's and the rule's principal resolve */
	expect_snippet("<policy user=\"root\"><allow user=\"*\"/></policy>", false);
	expect_snippet("<policy user=\"0\"><allow user=\"*\"/></policy>", false);
	expect_snippet("<policy user=\"0x0\"><allow user=\"*\"/></policy>", false);
	expect_snippet("<policy user=\" 0\"><allow user=\"*\"/></policy>", false);
	expect_snippet("<policy user=\"root\"><allow user=\"65534\"/></policy>", false);
	expect_snippet("<policy user=\"root\"><allow group=\"root\"/></policy>", false);
	expect_snippet("<policy group=\"root\"><allow group=\"*\"/></policy>", false);
	expect_snippet("<policy user=\"root\"><allow user=\"nosuchuser-xyz\"/></policy>", true);
	expect_snippet("<policy user=\"nosuchuser-xyz\"><allow user=\"*\"/></policy>", true);
	expect_snippet("<policy user=\"4000000000\"><allow user=\"*\"/></policy>", true);
	expect_snippet("<policy at_console=\"true\"><allow group=\"*\"/></policy>", true);
	expect_snippet("<policy context=\"mandatory\"><allow group=\"*\"/></policy>", true);
	/* but even in an ignored <policy> the rules are validated */
	expect_snippet("<policy user=\"nosuchuser-xyz\"><allow/></policy>", false);

	/* unknown names are warnings and are kept as written */
	assert(load_snippet("<policy user=\"nosuchuser-xyz\"><allow own=\"a\"/></policy>"
			    "<policy group=\"nosuchgroup-xyz\"/>"
			    "<policy context=\"default\"><allow user=\"nosuchuser-abc\"/></policy>",
			    &c, NULL) == 0);
	assert(has_warning(c, "Unknown username \"nosuchuser-xyz\""));
	assert(has_warning(c, "Unknown group \"nosuchgroup-xyz\""));
	assert(has_warning(c, "Unknown username \"nosuchuser-abc\" on element <allow>"));
	assert(c->n_policies == 3 && c->policies[0].n_rules == 1);
	assert(streq(c->policies[2].rules[0].user, "nosuchuser-abc"));
}

static int fake_user(const char *name, uid_t *ret, void *userdata) {
	if (streq(name, "alice")) {
		*ret = 1000;
		return 0;
	}
	return -ESRCH;
}

static void test_lookup_callbacks(void) {
	BusConfigLoadOptions o = test_opts;
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	const char *ok = "<busconfig><listen>x</listen><policy user=\"root\"><allow user=\"*\"/></policy></busconfig>";
	const char *bad = "<busconfig><listen>x</listen><policy user=\"alice\"><allow user=\"*\"/></policy></busconfig>";

	o.lookup_user = fake_user;
	assert(bus_config_load_string(ok, strlen(ok), "/tmp/x.conf", &o, &c, NULL) == 0);
	assert(has_warning(c, "Unknown username \"root\""));
	c = bus_config_free(c);
	assert(bus_config_load_string(bad, strlen(bad), "/tmp/x.conf", &o, &c, NULL) == -EINVAL);

	{
		uid_t u;
		gid_t g;

		assert(bus_config_lookup_user("root", &u) == 0 && u == 0);
		assert(bus_config_lookup_user("0", &u) == 0 && u == 0);
		assert(bus_config_lookup_user("0x0", &u) == 0 && u == 0);
		assert(bus_config_lookup_user("nosuchuser-xyz", &u) == -ESRCH);
		assert(bus_config_lookup_user("4000000000", &u) == -ESRCH);
		assert(bus_config_lookup_group("root", &g) == 0 && g == 0);
		assert(bus_config_lookup_group("0", &g) == 0 && g == 0);
		assert(bus_config_lookup_group("nosuchgroup-xyz", &g) == -ESRCH);
	}
}

static void test_include(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;

	make_dir("inc");
	make_dir("inc/sub");
	write_file("inc/top.conf",
		   "<busconfig>\n"
		   "  <listen>top</listen>\n"
		   "  <user>topuser</user>\n"
		   "  <syslog/>\n"
		   "  <limit name=\"auth_timeout\">1</limit>\n"
		   "  <limit name=\"reply_timeout\">7</limit>\n"
		   "  <policy context=\"default\"><allow own=\"top.before\"/></policy>\n"
		   "  <include>sub/child.conf</include>\n"
		   "  <include ignore_missing=\"yes\">nonexistent.conf</include>\n"
		   "  <policy context=\"default\"><allow own=\"top.after\"/></policy>\n"
		   "  <servicedir>svc</servicedir>\n"
		   "</busconfig>\n");
	/* relative paths inside child.conf resolve against inc/sub/ */
	write_file("inc/sub/child.conf",
		   "<busconfig>\n"
		   "  <user>childuser</user>\n"
		   "  <fork/><keep_umask/><allow_anonymous/><syslog/>\n"
		   "  <type>childtype</type>\n"
		   "  <pidfile>/child.pid</pidfile>\n"
		   "  <listen>child</listen>\n"
		   "  <auth>EXTERNAL</auth>\n"
		   "  <servicedir>svc</servicedir>\n"
		   "  <servicedir>../svc</servicedir>\n"
		   "  <limit name=\"auth_timeout\">2</limit>\n"
		   "  <include>grandchild.conf</include>\n"
		   "  <policy context=\"default\"><allow own=\"child\"/></policy>\n"
		   "</busconfig>\n");
	write_file("inc/sub/grandchild.conf",
		   "<busconfig><limit name=\"max_names_per_connection\">3</limit>"
		   "<policy context=\"mandatory\"><deny own=\"grandchild\"/></policy></busconfig>");

	assert(load("inc/top.conf", &c, &err) == 0);
	assert(!err);
	assert(streq(c->user, "childuser"));
	assert(streq(c->type, "childtype"));
	assert(streq(c->pidfile, "/child.pid"));
	assert(c->fork && c->keep_umask && c->allow_anonymous);
	assert(c->syslog);   /* from top; the child's would not count */
	assert(streq(c->listen[0], "top") && streq(c->listen[1], "child") && !c->listen[2]);
	assert(streq(c->auth[0], "EXTERNAL"));
	/* the child saw the top's reply_timeout, the top sees the child's limits */
	assert(c->limits.auth_timeout == 2);
	assert(c->limits.reply_timeout == 7);
	assert(c->limits.max_names_per_connection == 3);
	/* policies in document order, includes expanded in place */
	assert(c->n_policies == 4);
	assert(streq(c->policies[0].rules[0].own, "top.before"));
	assert(c->policies[1].context == BUS_CONFIG_CONTEXT_MANDATORY);
	assert(streq(c->policies[1].rules[0].own, "grandchild"));
	assert(strstr(c->policies[1].file, "inc/sub/grandchild.conf"));
	assert(streq(c->policies[2].rules[0].own, "child"));
	assert(strstr(c->policies[2].rules[0].file, "inc/sub/child.conf") && c->policies[2].rules[0].line == 12);
	assert(streq(c->policies[3].rules[0].own, "top.after"));
	/* servicedirs: sub/svc, then inc/svc (from "../svc" is "inc/sub/../svc") */
	assert(c->n_servicedirs == 3);
	assert(strstr(c->servicedirs[0], "/inc/sub/svc"));
	assert(strstr(c->servicedirs[1], "/inc/sub/../svc"));
	assert(strstr(c->servicedirs[2], "/inc/svc"));
	assert(strv_length_check(c->files) == 3);
	c = bus_config_free(c);

	/* a missing include is an error unless ignore_missing */
	write_file("inc/missing.conf", "<busconfig><listen>x</listen>\n<include>nope.conf</include></busconfig>");
	assert(load("inc/missing.conf", &c, &err) == -ENOENT);
	/* as dbus-daemon: the message names the file it could not open, not
	 * where the <include> was */
	assert(strstr(err, "Failed to open \"") && strstr(err, "nope.conf\": No such file or directory"));
	free(err);
	err = NULL;

	/* the error of an included file is its own */
	write_file("inc/badchild.conf", "<busconfig>\n\n<bees/></busconfig>");
	write_file("inc/includes-bad.conf", "<busconfig><listen>x</listen><include>badchild.conf</include></busconfig>");
	assert(load("inc/includes-bad.conf", &c, &err) == -EINVAL);
	assert(streq(err, "Element <bees> not allowed inside <busconfig> in configuration file"));
	free(err);
	err = NULL;

	/* including a directory is an error even with ignore_missing */
	write_file("inc/incdir.conf", "<busconfig><listen>x</listen><include ignore_missing=\"yes\">sub</include></busconfig>");
	assert(load("inc/incdir.conf", &c, &err) == -EINVAL);
	assert(strstr(err, "is not a regular file"));
	free(err);
	err = NULL;

	/* ENOTDIR is not "missing" */
	write_file("inc/notdir.conf", "<busconfig><listen>x</listen><include ignore_missing=\"yes\">top.conf/x</include></busconfig>");
	assert(load("inc/notdir.conf", &c, &err) == -ENOTDIR);
	free(err);
	err = NULL;

	expect_snippet("<include ignore_missing=\"y\">x</include>", false);
	expect_snippet("<include ignore_missing=\"yes\" foo=\"bar\">x</include>", false);
	expect_snippet("<include if_selinux_enabled=\"moo\">x</include>", false);
	expect_snippet("<include selinux_root_relative=\"jomoma\">x</include>", false);
	/* SELinux disabled: skipped */
	expect_snippet("<include if_selinux_enabled=\"yes\">nonexistent</include>", true);
	expect_snippet("<include if_selinux_enabled=\"yes\" selinux_root_relative=\"yes\">contexts/dbus_contexts</include>", true);
	/* text is not trimmed: " x.conf" is not "x.conf" */
	write_file("inc/ws.conf", "<busconfig><listen>x</listen><include> sub/grandchild.conf</include></busconfig>");
	assert(load("inc/ws.conf", &c, &err) == -ENOENT);
	free(err);
	err = NULL;
}

static void test_include_selinux_root(void) {
	BusConfigLoadOptions o = test_opts;
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *root = tmp_path("seroot"), *err = NULL;
	const char *xml = "<busconfig><listen>x</listen>"
			  "<include if_selinux_enabled=\"yes\" selinux_root_relative=\"yes\">contexts/dbus_contexts</include>"
			  "</busconfig>";

	make_dir("seroot");
	make_dir("seroot/contexts");
	write_file("seroot/contexts/dbus_contexts",
		   "<busconfig><selinux><associate own=\"org.x\" context=\"x_t\"/></selinux></busconfig>");
	o.selinux_enabled = 1;
	o.selinux_policy_root = root;
	assert(bus_config_load_string(xml, strlen(xml), "/nonexistent/x.conf", &o, &c, &err) == 0);
	assert(c->n_associations == 1 && streq(c->associations[0].context, "x_t"));
}

static void test_circular(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;

	make_dir("circ");
	write_file("circ/self.conf", "<busconfig><listen>x</listen><include>self.conf</include></busconfig>");
	assert(load("circ/self.conf", &c, &err) == -ELOOP);
	assert(strstr(err, "Circular inclusion"));
	free(err);
	err = NULL;

	write_file("circ/a.conf", "<busconfig><listen>x</listen><include>b.conf</include></busconfig>");
	write_file("circ/b.conf", "<busconfig><include>a.conf</include></busconfig>");
	assert(load("circ/a.conf", &c, &err) == -ELOOP);
	free(err);
	err = NULL;

	/* a loop through "./": caught by file identity */
	write_file("circ/dot.conf", "<busconfig><listen>x</listen><include>./././dot.conf</include></busconfig>");
	assert(load("circ/dot.conf", &c, &err) == -ELOOP);
	free(err);
	err = NULL;

	/* including the same file twice in sequence is fine */
	write_file("circ/leaf.conf", "<busconfig><auth>A</auth></busconfig>");
	write_file("circ/twice.conf", "<busconfig><listen>x</listen><include>leaf.conf</include>"
		   "<include>leaf.conf</include></busconfig>");
	assert(load("circ/twice.conf", &c, &err) == 0);
	assert(streq(c->auth[0], "A") && streq(c->auth[1], "A") && !c->auth[2]);
	c = bus_config_free(c);

	/* an includedir that includes itself: the loop is a warning there */
	make_dir("circ/d");
	write_file("circ/d/loop.conf", "<busconfig><includedir>.</includedir><auth>L</auth></busconfig>");
	write_file("circ/d-top.conf", "<busconfig><listen>x</listen><includedir>d</includedir></busconfig>");
	assert(load("circ/d-top.conf", &c, &err) == 0);
	assert(has_warning(c, "Circular inclusion"));
	assert(c->auth && streq(c->auth[0], "L") && !c->auth[1]);
}

static void test_includedir(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;
	static const char *const order[] = { "m", "c", "x", "a", "q", "b", "z", "k" };

	make_dir("incd");
	make_dir("incd/d");
	make_dir("incd/d/sub.conf");   /* a directory named *.conf: warning */
	for (size_t i = 0; i < ELEMENTSOF(order); i++) {
		char name[64], xml[256];

		snprintf(name, sizeof(name), "incd/d/%s.conf", order[i]);
		snprintf(xml, sizeof(xml), "<busconfig><auth>%s</auth><pidfile>/%s</pidfile></busconfig>",
			 order[i], order[i]);
		write_file(name, xml);
	}
	write_file("incd/d/ignored.txt", "<busconfig><auth>txt</auth></busconfig>");
	write_file("incd/d/broken.conf", "<busconfig><bees/></busconfig>");
	write_file("incd/d/broken2.conf", "not xml");
	write_file("incd/d/.hidden.conf", "<busconfig><auth>.hidden</auth></busconfig>");
	{
		_cleanup_free_ char *link = tmp_path("incd/d/dangling.conf");

		(void) !symlink("/nonexistent/dangling", link);
	}
	write_file("incd/top.conf", "<busconfig><listen>x</listen><includedir>d</includedir>"
		   "<includedir>nonexistent</includedir></busconfig>");

	assert(load("incd/top.conf", &c, &err) == 0);
	/* in readdir() order, as dbus-daemon: the <auth>s of the files that
	 * load, and the <pidfile> of the last one */
	{
		_cleanup_free_ char *dir = tmp_path("incd/d");
		DIR *d = opendir(dir);
		struct dirent *de;
		size_t k = 0;
		char last[64] = "";

		assert(d);
		while ((de = readdir(d))) {
			char want[64];
			size_t l = strlen(de->d_name);

			if (l < 6 || !streq(de->d_name + l - 5, ".conf") || strstr(de->d_name, "broken") ||
			    streq(de->d_name, "sub.conf") || streq(de->d_name, "dangling.conf"))
				continue;
			snprintf(want, sizeof(want), "%.*s", (int)(l - 5), de->d_name);
			assert(c->auth[k] && streq(c->auth[k], want));
			k++;
			if (want[0] != '.')
				snprintf(last, sizeof(last), "/%s", want);
		}
		closedir(d);
		assert(k == 9 && !c->auth[k]);
		/* .hidden.conf has no <pidfile> */
		assert(streq(c->pidfile, last));
	}
	/* dbus-daemon's words for an <includedir> file it skips */
	assert(has_warning(c, "Encountered error 'Element <bees> not allowed inside <busconfig> in configuration file' while parsing '"));
	assert(has_warning(c, "broken.conf'"));
	assert(has_warning(c, "broken2.conf'"));
	assert(has_warning(c, "is not a regular file"));
	/* only existing includedirs are listed, for watching */
	assert(c->includedirs && strstr(c->includedirs[0], "incd/d") && !c->includedirs[1]);
	c = bus_config_free(c);

	/* includedir on a file is an error */
	write_file("incd/onfile.conf", "<busconfig><listen>x</listen><includedir>top.conf</includedir></busconfig>");
	assert(load("incd/onfile.conf", &c, &err) == -ENOTDIR);
	assert(strstr(err, "Failed to read directory"));
}

static void test_servicedirs(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *rt = tmp_path("rt"), *dh = tmp_path("dh"), *expect = NULL;
	BusConfigLoadOptions o = test_opts;

	make_dir("rt");
	setenv("XDG_RUNTIME_DIR", rt, 1);
	setenv("XDG_DATA_HOME", dh, 1);
	setenv("XDG_DATA_DIRS", "/dd1: /dd2/ ::/usr/share", 1);
	o.flags = 0;   /* let it create the transient dir */
	{
		const char *xml = "<busconfig><listen>x</listen>"
				  "<servicedir>/explicit</servicedir>"
				  "<standard_session_servicedirs/>"
				  "<servicedir>/dd1/dbus-1/services</servicedir>"
				  "<standard_system_servicedirs/>"
				  "</busconfig>";

		assert(bus_config_load_string(xml, strlen(xml), "/x/y.conf", &o, &c, NULL) == 0);
	}
	assert(c->n_servicedirs == 9);
	assert(streq(c->servicedirs[0], "/explicit"));
	assert(c->servicedir_flags[0] == BUS_CONFIG_SERVICE_DIR_ORIGIN_EXPLICIT);
	assert(asprintf(&expect, "%s/dbus-1/services", rt) >= 0);
	assert(streq(c->servicedirs[1], expect));
	assert(c->servicedir_flags[1] == (BUS_CONFIG_SERVICE_DIR_NO_WATCH | BUS_CONFIG_SERVICE_DIR_STRICT_NAMING |
					  BUS_CONFIG_SERVICE_DIR_ORIGIN_TRANSIENT | BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION));
	{
		struct stat st;

		assert(stat(expect, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	}
	free(expect);
	assert(asprintf(&expect, "%s/dbus-1/services", dh) >= 0);
	assert(streq(c->servicedirs[2], expect));
	assert(c->servicedir_flags[2] == BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION);
	/* the explicit duplicate of /dd1 later only or-s its origin in */
	assert(streq(c->servicedirs[3], "/dd1/dbus-1/services"));
	assert(c->servicedir_flags[3] == (BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION | BUS_CONFIG_SERVICE_DIR_ORIGIN_EXPLICIT));
	assert(streq(c->servicedirs[4], "/dd2/dbus-1/services"));
	assert(streq(c->servicedirs[5], "/usr/share/dbus-1/services"));   /* DBUS_DATADIR deduplicated */
	assert(streq(c->servicedirs[6], "/usr/local/share/dbus-1/system-services"));
	assert(c->servicedir_flags[6] == BUS_CONFIG_SERVICE_DIR_ORIGIN_SYSTEM);
	assert(streq(c->servicedirs[7], "/usr/share/dbus-1/system-services"));
	assert(streq(c->servicedirs[8], "/lib/dbus-1/system-services"));
	c = bus_config_free(c);

	/* the transient dir also given as <servicedir>: watched, not strict */
	{
		_cleanup_free_ char *xml = NULL;

		assert(asprintf(&xml, "<busconfig><listen>x</listen><standard_session_servicedirs/>"
				"<servicedir>%s/dbus-1/services</servicedir></busconfig>", rt) >= 0);
		assert(bus_config_load_string(xml, strlen(xml), "/x/y.conf", &test_opts, &c, NULL) == 0);
		assert(c->servicedir_flags[0] == (BUS_CONFIG_SERVICE_DIR_ORIGIN_TRANSIENT |
						  BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION |
						  BUS_CONFIG_SERVICE_DIR_ORIGIN_EXPLICIT));
		c = bus_config_free(c);
	}

	/* defaults: no XDG_RUNTIME_DIR, home from the user database */
	unsetenv("XDG_RUNTIME_DIR");
	unsetenv("XDG_DATA_HOME");
	unsetenv("XDG_DATA_DIRS");
	{
		const char *xml = "<busconfig><listen>x</listen><standard_session_servicedirs/></busconfig>";

		assert(bus_config_load_string(xml, strlen(xml), "/x/y.conf", &test_opts, &c, NULL) == 0);
		assert(c->n_servicedirs == 3);
		assert(strstr(c->servicedirs[0], "/.local/share/dbus-1/services"));
		assert(streq(c->servicedirs[1], "/usr/local/share/dbus-1/services"));
		assert(streq(c->servicedirs[2], "/usr/share/dbus-1/services"));
		c = bus_config_free(c);
	}
	/* XDG_DATA_HOME="" contributes nothing */
	setenv("XDG_DATA_HOME", "", 1);
	{
		const char *xml = "<busconfig><listen>x</listen><standard_session_servicedirs/></busconfig>";

		assert(bus_config_load_string(xml, strlen(xml), "/x/y.conf", &test_opts, &c, NULL) == 0);
		assert(c->n_servicedirs == 2);
		c = bus_config_free(c);
	}
	unsetenv("XDG_DATA_HOME");

	/* an unusable XDG_RUNTIME_DIR is a warning */
	setenv("XDG_RUNTIME_DIR", "/proc/nonexistent/x", 1);
	{
		const char *xml = "<busconfig><listen>x</listen><standard_session_servicedirs/></busconfig>";

		assert(bus_config_load_string(xml, strlen(xml), "/x/y.conf", &o, &c, NULL) == 0);
		assert(has_warning(c, "Unable to set up transient service directory"));
		assert(c->n_servicedirs == 3);
		c = bus_config_free(c);
	}
	unsetenv("XDG_RUNTIME_DIR");
}

static void test_no_includes_flag(void) {
	BusConfigLoadOptions o = test_opts;
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	const char *xml = "<busconfig><listen>x</listen><include ignore_missing=\"yes\">/etc/passwd</include>"
			  "<includedir>/etc</includedir></busconfig>";
	const char *xml2 = "<busconfig><listen>x</listen><include>/etc/passwd</include></busconfig>";

	o.flags |= BUS_CONFIG_LOAD_NO_INCLUDES;
	assert(bus_config_load_string(xml, strlen(xml), "/x.conf", &o, &c, NULL) == 0);
	assert(!c->includedirs);
	c = bus_config_free(c);
	assert(bus_config_load_string(xml2, strlen(xml2), "/x.conf", &o, &c, NULL) == -ENOENT);

	o.flags |= BUS_CONFIG_LOAD_NOT_TOPLEVEL;
	assert(bus_config_load_string("<busconfig/>", 12, "/x.conf", &o, &c, NULL) == 0);
}

static void test_format(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	static const char *const rules[] = {
		"<allow send_destination=\"org.a\" send_type=\"method_call\"/>",
		"<deny send_destination_prefix=\"org.b\" send_interface=\"x&quot;y\" send_broadcast=\"true\" log=\"true\"/>",
		"<allow receive_sender=\"*\" eavesdrop=\"true\"/>",
		"<allow receive_sender=\"org.c\" receive_path=\"/p\" receive_requested_reply=\"false\" min_fds=\"1\" max_fds=\"2\"/>",
		"<deny own_prefix=\"org.d\"/>",
		"<allow own=\"*\"/>",
		"<allow user=\"*\"/>",
		"<deny group=\"wheel\"/>",
		"<allow send_destination=\"*\" send_requested_reply=\"false\"/>",
	};
	_cleanup_free_ char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	fputs("<policy context=\"default\">", f);
	for (size_t i = 0; i < ELEMENTSOF(rules); i++)
		fputs(rules[i], f);
	fputs("</policy>", f);
	fclose(f);
	assert(load_snippet(body, &c, NULL) == 0);
	assert(c->policies[0].n_rules == ELEMENTSOF(rules));
	for (size_t i = 0; i < ELEMENTSOF(rules); i++) {
		_cleanup_free_ char *s = NULL;

		assert(bus_config_rule_format(&c->policies[0].rules[i], &s) == 0);
		if (!streq(s, rules[i])) {
			fprintf(stderr, "format: %s != %s\n", s, rules[i]);
			abort();
		}
	}
	assert(streq(bus_config_message_type_to_string(BUS_CONFIG_MESSAGE_SIGNAL), "signal"));
	assert(streq(bus_config_message_type_to_string(BUS_CONFIG_MESSAGE_ANY), "*"));
}

/* ---------------------------------------------------------------------- */
/* the stock configurations and dbus's own test data */

static void test_stock_session(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;

	if (access("/usr/share/dbus-1/session.conf", R_OK) < 0) {
		test_skip("stock session.conf not found");
		return;
	}
	assert(bus_config_load_full("/usr/share/dbus-1/session.conf", &test_opts, &c, &err) == 0);
	assert(streq(c->type, "session"));
	assert(c->keep_umask && !c->fork);
	assert(streq(c->listen[0], "unix:tmpdir=/tmp"));
	assert(streq(c->auth[0], "EXTERNAL"));
	assert(c->n_policies >= 1 && c->policies[0].context == BUS_CONFIG_CONTEXT_DEFAULT);
	assert(c->policies[0].n_rules == 3);
	assert(c->limits.max_incoming_bytes == 1000000000);
	assert(c->limits.max_incoming_unix_fds == 250000000);
	assert(c->limits.max_message_unix_fds == 16);
	assert(c->limits.service_start_timeout == 120000);
	assert(c->limits.auth_timeout == 240000);
	assert(c->limits.max_replies_per_connection == 50000);
	assert(c->limits.reply_timeout == -1);
	assert(c->n_servicedirs >= 2);
	assert(streq(c->servicedirs[c->n_servicedirs - 1], "/usr/share/dbus-1/services"));
}

static void test_stock_system(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;

	if (access("/usr/share/dbus-1/system.conf", R_OK) < 0) {
		test_skip("stock system.conf not found");
		return;
	}
	assert(bus_config_load_full("/usr/share/dbus-1/system.conf", &test_opts, &c, &err) == 0);
	assert(streq(c->type, "system"));
	assert(streq(c->user, "messagebus"));
	assert(c->fork && c->syslog);
	assert(streq(c->pidfile, "/run/dbus/pid"));
	assert(streq(c->servicehelper, "/usr/lib/dbus-1.0/dbus-daemon-launch-helper"));
	assert(streq(c->listen[0], "unix:path=/run/dbus/system_bus_socket"));
	assert(c->n_servicedirs == 3);
	assert(streq(c->servicedirs[0], "/usr/local/share/dbus-1/system-services"));
	assert(streq(c->servicedirs[1], "/usr/share/dbus-1/system-services"));
	assert(streq(c->servicedirs[2], "/lib/dbus-1/system-services"));
	assert(c->policies[0].context == BUS_CONFIG_CONTEXT_DEFAULT);
	assert(c->policies[0].rules[0].type == BUS_CONFIG_RULE_USER);
	assert(c->policies[1].context == BUS_CONFIG_CONTEXT_USER && streq(c->policies[1].user, "root"));
	assert(c->includedirs && streq(c->includedirs[0], "/usr/share/dbus-1/system.d"));
	assert(c->limits.auth_timeout == 30000);
}

static size_t for_each_conf(const char *dir, bool expect_ok) {
	_cleanup_strv_free_ char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *path;

		if (!strstr(de->d_name, ".conf") || strlen(de->d_name) < 5 ||
		    !streq(de->d_name + strlen(de->d_name) - 5, ".conf"))
			continue;
		assert(asprintf(&path, "%s/%s", dir, de->d_name) >= 0);
		names = realloc(names, (n + 2) * sizeof(char *));
		names[n++] = path;
		names[n] = NULL;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		_cleanup_(bus_config_freep) BusConfig *c = NULL;
		_cleanup_free_ char *err = NULL;
		int r;

		r = bus_config_load_full(names[i], &test_opts, &c, &err);
		if ((r >= 0) != expect_ok) {
			fprintf(stderr, "%s: expected %s: r=%d %s\n", names[i], expect_ok ? "valid" : "invalid",
				r, strempty(err));
			abort();
		}
		n_checks++;
	}
	return n;
}

static void test_installed_data(void) {
	static const char *const valid[] = {
		INSTALLED_DATA "/valid-config-files",
		INSTALLED_DATA "/valid-config-files-system",
		INSTALLED_DATA "/equiv-config-files/basic",
		INSTALLED_DATA "/equiv-config-files/entities",
	};
	static const char *const invalid[] = {
		INSTALLED_DATA "/invalid-config-files",
		INSTALLED_DATA "/invalid-config-files-system",
	};
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(valid); i++)
		n += for_each_conf(valid[i], true);
	for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
		n += for_each_conf(invalid[i], false);
	if (n == 0)
		test_skip("installed dbus test data not found");
	else
		printf("# %zu installed dbus test configurations checked\n", n);
}

static void test_installed_check_own_rules(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	const BusConfigRule *r;

	if (bus_config_load_full(INSTALLED_DATA "/valid-config-files/check-own-rules.conf", &test_opts, &c, NULL) < 0)
		return;
	assert(c->n_policies == 1 && c->policies[0].n_rules == 3);
	r = &c->policies[0].rules[2];
	assert(r->type == BUS_CONFIG_RULE_OWN && r->own_is_prefix && streq(r->own, "org.freedesktop.ManySystems"));
	c = bus_config_free(c);

	/* entities.conf: entities in text and attribute values */
	assert(bus_config_load_full(INSTALLED_DATA "/valid-config-files/entities.conf", &test_opts, &c, NULL) == 0);
	assert(streq(c->listen[0], "unix:path=/foo/<bar>"));
	assert(c->n_servicedirs == 2 && streq(c->servicedirs[0], "/usr/share/foo"));   /* from basic.d */
	assert(streq(c->servicedirs[1], "/usr/&share/foo"));
	assert(c->policies[0].context == BUS_CONFIG_CONTEXT_DEFAULT);
}

static void rm_rf(const char *path) {
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	(void) !system(cmd);
}

int main(void) {
	assert(mkdtemp(tmpdir));

	RUN(defaults);
	RUN(limits);
	RUN(elements);
	RUN(document);
	RUN(error_location);
	RUN(big_file);
	RUN(rules);
	RUN(rule_fields);
	RUN(policy_contexts);
	RUN(lookup_callbacks);
	RUN(include);
	RUN(include_selinux_root);
	RUN(circular);
	RUN(includedir);
	RUN(servicedirs);
	RUN(no_includes_flag);
	RUN(format);
	RUN(stock_session);
	RUN(stock_system);
	RUN(installed_data);
	RUN(installed_check_own_rules);

	rm_rf(tmpdir);
	printf("# %u table checks\n", n_checks);
	return test_done();
}
