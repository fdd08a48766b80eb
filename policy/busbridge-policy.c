/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * busbridge-policy - show how busbridged compiles a dbus-daemon policy
 * and answer "would this be allowed" with dbus-daemon's decision
 * (doc/busbridge-policy.1).
 *
 *   busbridge-policy [OPTIONS] dump CONFIG
 *   busbridge-policy [OPTIONS] check CONFIG --uid U [--gid G]... [--at-console]
 *                    (--own NAME | --send DEST IFACE MEMBER [--path P] [--type T] ...)
 *
 * Exit status: 0 allowed (or dump done), 1 denied, 2 error.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/compile.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"

#define EXIT_DENY 1
#define EXIT_ERROR 2

static void usage(FILE *f) {
	fprintf(f,
		"Usage: busbridge-policy [OPTIONS] dump CONFIG\n"
		"       busbridge-policy [OPTIONS] check CONFIG --uid UID [--gid GID]... [--at-console]\n"
		"                        (--own NAME | --send DEST IFACE MEMBER [--path PATH] [--type TYPE]\n"
		"                         [--error NAME] [--fds N] [--requested-reply])\n"
		"\n"
		"Compile options (dump, and the kdbus line of check):\n"
		"  --bus-uid UID          the uid that created the bus (default 0)\n"
		"  --groups-from-userdb   the daemon gives the core user-database groups\n"
		"  --talk-entries         restricted TALK entries (needs core changes)\n"
		"  --anonymous            analyse connections without uid too\n"
		"\n"
		"IFACE may be \"\" or \"-\" for a message without interface; DEST may be\n"
		"org.freedesktop.DBus (the driver).  UID and GID are numbers or names.\n"
		"Exit status: 0 allowed, 1 denied, 2 error.\n");
}

static int parse_uid(const char *s, uid_t *ret) {
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s && !*end && errno == 0 && v < (unsigned long) POLICY_UID_INVALID) {
		*ret = (uid_t) v;
		return 0;
	}
	return bus_config_lookup_user(s, ret);
}

static int parse_gid(const char *s, gid_t *ret) {
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s && !*end && errno == 0 && v < (unsigned long) (gid_t) -1) {
		*ret = (gid_t) v;
		return 0;
	}
	return bus_config_lookup_group(s, ret);
}

static int load(const char *path, BusConfig **ret) {
	BusConfigLoadOptions o = { .flags = BUS_CONFIG_LOAD_NOT_TOPLEVEL | BUS_CONFIG_LOAD_NO_MKDIR };
	_cleanup_free_ char *err = NULL;
	int r;

	r = bus_config_load_full(path, &o, ret, &err);
	if (r < 0) {
		if (err)
			fprintf(stderr, "busbridge-policy: %s\n", err);
		else
			fprintf(stderr, "busbridge-policy: %s: %s\n", path, strerror(-r));
		return r;
	}
	for (char **w = (*ret)->warnings; w && *w; w++)
		fprintf(stderr, "busbridge-policy: warning: %s\n", *w);
	return 0;
}

static const char *access_type(uint64_t t) {
	switch (t) {
	case KDBUS_POLICY_ACCESS_USER:
		return "USER";
	case KDBUS_POLICY_ACCESS_GROUP:
		return "GROUP";
	case KDBUS_POLICY_ACCESS_WORLD:
		return "WORLD";
	}
	return "?";
}

static const char *access_level(uint64_t a) {
	switch (a) {
	case KDBUS_POLICY_SEE:
		return "SEE";
	case KDBUS_POLICY_TALK:
		return "TALK";
	case KDBUS_POLICY_OWN:
		return "OWN";
	}
	return "?";
}

static void print_items(const PolicyCompiledName *n) {
	printf("  items: NAME \"%s%s\"", n->name, n->type == POLICY_CLASS_WILDCARD ? ".*" : "");
	for (size_t i = 0; i < n->n_access; i++) {
		const struct kdbus_policy_access *a = &n->access[i];

		if (a->type == KDBUS_POLICY_ACCESS_WORLD)
			printf(" | POLICY_ACCESS WORLD %s", access_level(a->access));
		else
			printf(" | POLICY_ACCESS %s %llu %s", access_type(a->type),
			       (unsigned long long) a->id, access_level(a->access));
	}
	if (n->n_access == 0)
		printf(" (no POLICY_ACCESS: only root%s)", "");
	printf("\n");
}

static int do_dump(const char *path, const PolicyCompileOptions *opts) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;
	const PolicyCompiledName *n, *fb;
	const PolicyCompiledRule *rules;
	size_t n_rules, n_kdbus = 0, n_own = 0, n_talk = 0, n_residual_names = 0;
	unsigned flags;
	int r;

	if (load(path, &c) < 0)
		return EXIT_ERROR;
	r = policy_compile(c, opts, &pc);
	if (r < 0) {
		fprintf(stderr, "busbridge-policy: %s: cannot compile: %s\n", path, strerror(-r));
		return EXIT_ERROR;
	}
	flags = policy_compiled_get_flags(pc);
	printf("# busbridge-policy dump %s\n", path);
	printf("# bus uid %u; groups: %s; TALK entries: %s; connections without uid: %s\n",
	       (unsigned) policy_compiled_get_bus_uid(pc),
	       flags & POLICY_COMPILE_GROUPS_FROM_USERDB ? "user database (GROUP entries)" : "socket (no GROUP entries)",
	       flags & POLICY_COMPILE_TALK_ENTRIES ? "restricted allowed" : "WORLD only",
	       flags & POLICY_COMPILE_ANONYMOUS ? "analysed" : "none");
	fb = policy_compiled_get_fallback_class(pc);
	printf("\nfallback (names without entry): kdbus_bus_set_policy_fallback(KDBUS_POLICY_%s)\n",
	       access_level((uint64_t) policy_compiled_get_fallback(pc)));
	printf("  OWN  %s\n  TALK %s\n", fb->own_reason, fb->talk_reason);

	POLICY_COMPILED_FOREACH_NAME(pc, i, n) {
		printf("\nentry %s%s%s\n", n->name, n->type == POLICY_CLASS_WILDCARD ? ".*" : "",
		       n->residual ? "  [residual]" : "");
		printf("  OWN  %s\n  TALK %s\n", n->own_reason, n->talk_reason);
		print_items(n);
		n_own += !n->own_residual;
		n_talk += !n->talk_residual;
		n_residual_names += n->residual;
	}

	rules = policy_compiled_rules(pc, &n_rules);
	printf("\nrules:\n");
	for (size_t i = 0; i < n_rules; i++) {
		const PolicyCompiledRule *ru = &rules[i];

		printf("  %-8s %s:%u: %s %s\n           -> %s\n", ru->place == POLICY_RULE_KDBUS ? "kdbus" : "residual",
		       ru->file, ru->line, ru->context, ru->text, ru->reason);
		n_kdbus += ru->place == POLICY_RULE_KDBUS;
	}
	printf("\nsummary: %zu entries (%zu OWN-exact, %zu TALK-exact, %zu residual); "
	       "%zu rules: %zu kdbus, %zu residual\n",
	       policy_compiled_n_names(pc), n_own, n_talk, n_residual_names, n_rules, n_kdbus, n_rules - n_kdbus);
	return 0;
}

static int at_console_yes(uid_t uid, void *userdata) {
	(void) uid;
	(void) userdata;
	return 1;
}

static bool rule_equal(const BusConfigRule *a, const PolicyRule *b) {
	return a->type == b->type && a->allow == b->allow && a->line == b->line &&
	       streq_ptr(a->file, b->file) && a->message_type == b->message_type &&
	       streq_ptr(a->path, b->path) && streq_ptr(a->interface, b->interface) &&
	       streq_ptr(a->member, b->member) && streq_ptr(a->error, b->error) &&
	       streq_ptr(a->destination, b->destination) && a->destination_is_prefix == b->destination_is_prefix &&
	       streq_ptr(a->sender, b->sender) && streq_ptr(a->own, b->own) &&
	       a->own_is_prefix == b->own_is_prefix && a->broadcast == b->broadcast &&
	       a->eavesdrop == b->eavesdrop && a->requested_reply == b->requested_reply &&
	       a->min_fds == b->min_fds && a->max_fds == b->max_fds && a->log == b->log;
}

static void print_rule(const BusConfig *c, const PolicyCompiled *pc, const PolicyRule *rule) {
	const PolicyCompiledRule *rules;
	size_t n;

	if (!rule) {
		printf("  no rule matched: denied by default\n");
		return;
	}
	rules = policy_compiled_rules(pc, &n);
	for (size_t i = 0; i < n; i++) {
		const BusConfigRule *cr = &c->policies[rules[i].policy_index].rules[rules[i].rule_index];

		if (rule_equal(cr, rule)) {
			printf("  decided by %s:%u: %s %s\n", rules[i].file, rules[i].line, rules[i].context,
			       rules[i].text);
			return;
		}
	}
	printf("  decided by %s:%u\n", strempty(rule->file), rule->line);
}

static int do_check(int argc, char **argv, const PolicyCompileOptions *copts) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_(policy_unrefp) Policy *p = NULL;
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;
	_cleanup_free_ gid_t *gids = NULL;
	size_t n_gids = 0;
	bool have_uid = false, gids_given = false, at_console = false, requested_reply = false;
	const char *config, *own = NULL, *dest = NULL, *iface = NULL, *member = NULL, *path = "/";
	const char *error_name = NULL;
	BusConfigMessageType type = BUS_CONFIG_MESSAGE_METHOD_CALL;
	unsigned n_fds = 0;
	uid_t uid = 0;
	int r, allowed;

	if (argc < 1) {
		fprintf(stderr, "busbridge-policy: check: missing CONFIG\n");
		return EXIT_ERROR;
	}
	config = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

#define NEED(k) do { if (i + (k) >= argc) { fprintf(stderr, "busbridge-policy: %s needs %d argument%s\n", a, (k), (k) > 1 ? "s" : ""); return EXIT_ERROR; } } while (0)
		if (streq(a, "--uid")) {
			NEED(1);
			if (parse_uid(argv[++i], &uid) < 0) {
				fprintf(stderr, "busbridge-policy: unknown user \"%s\"\n", argv[i]);
				return EXIT_ERROR;
			}
			have_uid = true;
		} else if (streq(a, "--gid")) {
			gid_t g, *t;

			NEED(1);
			if (parse_gid(argv[++i], &g) < 0) {
				fprintf(stderr, "busbridge-policy: unknown group \"%s\"\n", argv[i]);
				return EXIT_ERROR;
			}
			t = realloc(gids, (n_gids + 1) * sizeof(gid_t));
			if (!t)
				return EXIT_ERROR;
			gids = t;
			gids[n_gids++] = g;
			gids_given = true;
		} else if (streq(a, "--at-console")) {
			at_console = true;
		} else if (streq(a, "--own")) {
			NEED(1);
			own = argv[++i];
		} else if (streq(a, "--send")) {
			NEED(3);
			dest = argv[++i];
			iface = argv[++i];
			member = argv[++i];
		} else if (streq(a, "--path")) {
			NEED(1);
			path = argv[++i];
		} else if (streq(a, "--type")) {
			NEED(1);
			type = bus_config_message_type_from_string(argv[++i]);
			if (type == BUS_CONFIG_MESSAGE_ANY) {
				fprintf(stderr, "busbridge-policy: bad --type \"%s\" (method_call, method_return, "
					"error, signal)\n", argv[i]);
				return EXIT_ERROR;
			}
		} else if (streq(a, "--error")) {
			NEED(1);
			error_name = argv[++i];
		} else if (streq(a, "--fds")) {
			NEED(1);
			n_fds = (unsigned) strtoul(argv[++i], NULL, 10);
		} else if (streq(a, "--requested-reply")) {
			requested_reply = true;
		} else {
			fprintf(stderr, "busbridge-policy: check: unknown argument \"%s\"\n", a);
			return EXIT_ERROR;
		}
#undef NEED
	}
	if (!have_uid) {
		fprintf(stderr, "busbridge-policy: check: --uid is required\n");
		return EXIT_ERROR;
	}
	if (!!own == !!dest) {
		fprintf(stderr, "busbridge-policy: check: give exactly one of --own and --send\n");
		return EXIT_ERROR;
	}
	if (!gids_given) {
		r = policy_groups_from_uid(uid, &gids, &n_gids);
		if (r < 0) {
			fprintf(stderr, "busbridge-policy: warning: uid %u has no user database entry: no groups "
				"(dbus-daemon would refuse the connection)\n", (unsigned) uid);
			gids = NULL;
			n_gids = 0;
		}
	}

	if (load(config, &c) < 0)
		return EXIT_ERROR;
	r = policy_new(&p, c, NULL);
	if (r < 0) {
		fprintf(stderr, "busbridge-policy: %s: %s\n", config, strerror(-r));
		return EXIT_ERROR;
	}
	r = policy_compile(c, copts, &pc);
	if (r < 0) {
		fprintf(stderr, "busbridge-policy: %s: cannot compile: %s\n", config, strerror(-r));
		return EXIT_ERROR;
	}

	PolicyIdentity id = {
		.uid = uid, .gids = gids, .n_gids = n_gids,
		.is_at_console = at_console ? at_console_yes : NULL,
	};

	if (own) {
		const PolicyRule *rule = NULL;
		const PolicyCompiledName *n = policy_compiled_lookup(pc, own);

		allowed = policy_check_own(p, &id, own, &rule);
		if (allowed < 0) {
			fprintf(stderr, "busbridge-policy: check failed: %s\n", strerror(-allowed));
			return EXIT_ERROR;
		}
		printf("%s\n", allowed ? "allow" : "deny");
		print_rule(c, pc, rule);
		if (n->type == POLICY_CLASS_FALLBACK)
			printf("  kdbus: no entry (fallback); OWN %s\n", n->own_reason);
		else
			printf("  kdbus: entry %s%s; OWN %s\n", n->name, n->type == POLICY_CLASS_WILDCARD ? ".*" : "",
			       n->own_reason);
		if (!n->own_residual) {
			int k = policy_compiled_kdbus_decide(pc, own, KDBUS_POLICY_OWN, uid, gids, n_gids);

			printf("  kdbus decides: %s%s\n", k ? "allow" : "deny",
			       k != allowed ? " (DIFFERS: please report)" : "");
		}
	} else {
		const char *names[3] = { dest, NULL, NULL };
		PolicyDecision d = {};
		bool driver = streq(dest, "org.freedesktop.DBus");
		PolicyMessage m = {
			.type = type,
			.destination = dest,
			.path = path,
			.interface = (iface[0] && !streq(iface, "-")) ? iface : NULL,
			.member = member,
			.error_name = error_name,
			.has_reply_serial = type == BUS_CONFIG_MESSAGE_METHOD_RETURN || type == BUS_CONFIG_MESSAGE_ERROR,
			.n_fds = n_fds,
		};

		allowed = policy_check_send(p, &id, &m, driver ? NULL : names, requested_reply, &d);
		if (allowed < 0) {
			fprintf(stderr, "busbridge-policy: check failed: %s\n", strerror(-allowed));
			return EXIT_ERROR;
		}
		printf("%s\n", allowed ? "allow" : "deny");
		print_rule(c, pc, d.rule);
		printf("  %u rule%s matched%s\n", d.n_matched, d.n_matched == 1 ? "" : "s",
		       d.log ? "; the deciding rule has log=\"true\"" : "");
		if (!driver) {
			const PolicyCompiledName *n = policy_compiled_lookup(pc, dest);
			const char *owned[2] = { dest, NULL };

			if (n->type == POLICY_CLASS_FALLBACK)
				printf("  kdbus: no entry (fallback); TALK %s\n", n->talk_reason);
			else
				printf("  kdbus: entry %s%s; TALK %s\n", n->name,
				       n->type == POLICY_CLASS_WILDCARD ? ".*" : "", n->talk_reason);
			if (policy_compiled_talk_is_exact(pc, owned, NULL) && !m.has_reply_serial) {
				int k = policy_compiled_kdbus_decide(pc, dest, KDBUS_POLICY_TALK, uid, gids, n_gids);

				printf("  kdbus decides: %s%s\n", k ? "allow" : "deny",
				       k != allowed ? " (DIFFERS: please report)" : "");
			}
		}
	}
	return allowed ? 0 : EXIT_DENY;
}

int main(int argc, char **argv) {
	PolicyCompileOptions opts = { .bus_uid = 0 };
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (streq(a, "-h") || streq(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (streq(a, "--version")) {
			printf("busbridge-policy %s\n", PACKAGE_VERSION);
			return 0;
		} else if (streq(a, "--bus-uid")) {
			if (i + 1 >= argc || parse_uid(argv[i + 1], &opts.bus_uid) < 0) {
				fprintf(stderr, "busbridge-policy: --bus-uid needs a uid\n");
				return EXIT_ERROR;
			}
			i++;
		} else if (streq(a, "--groups-from-userdb")) {
			opts.flags |= POLICY_COMPILE_GROUPS_FROM_USERDB;
		} else if (streq(a, "--talk-entries")) {
			opts.flags |= POLICY_COMPILE_TALK_ENTRIES;
		} else if (streq(a, "--anonymous")) {
			opts.flags |= POLICY_COMPILE_ANONYMOUS;
		} else
			break;
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	if (streq(argv[i], "dump")) {
		if (argc - i != 2) {
			fprintf(stderr, "busbridge-policy: dump takes one CONFIG\n");
			return EXIT_ERROR;
		}
		return do_dump(argv[i + 1], &opts);
	}
	if (streq(argv[i], "check"))
		return do_check(argc - i - 1, argv + i + 1, &opts);
	fprintf(stderr, "busbridge-policy: unknown command \"%s\"\n", argv[i]);
	usage(stderr);
	return EXIT_ERROR;
}
