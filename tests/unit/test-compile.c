/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-compile.c - unit tests of policy/compile.c: which rules become
 * kdbus entries and which stay residual, the item buffer, and - for every
 * name given kdbus entries - that the core's decision equals policy.c's
 * for a range of identities (root, the bus uid, users with and without
 * <policy user>, group members in every order, at a console or not,
 * connections without uid).  The core's answer is computed with the real
 * policy db (kdbus/policy.c) fed with policy_compiled_build_items(), and
 * once with a real bus and NAME_ACQUIRE.  A seeded generator of random
 * configurations stresses the proof.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus/bus.h"
#include "kdbus/item.h"
#include "kdbus/metadata.h"
#include "kdbus/policy.h"
#include "policy/compile.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "util/list.h"
#include "util/macro.h"
#include "tests/unit/test.h"

#define ROOT 0
#define MESSAGEBUS 100
#define ALICE 1001
#define BOB 1002
#define CAROL 1003
#define NOBODY 4242        /* a uid no rule names */
#define RECEIVER 5555      /* the uid of the receiving connection in TALK checks */
#define WHEEL 10
#define STAFF 50
#define NETDEV 60
#define AUDIO 63

static unsigned n_checks, n_exact_checks;

static int fake_user(const char *name, uid_t *ret, void *userdata) {
	static const struct {
		const char *name;
		uid_t uid;
	} users[] = {
		{ "root", ROOT }, { "messagebus", MESSAGEBUS }, { "alice", ALICE }, { "bob", BOB }, { "carol", CAROL },
	};

	(void) userdata;
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
	} groups[] = { { "root", 0 }, { "wheel", WHEEL }, { "staff", STAFF }, { "netdev", NETDEV }, { "audio", AUDIO } };

	(void) userdata;
	for (size_t i = 0; i < ELEMENTSOF(groups); i++)
		if (streq(groups[i].name, name)) {
			*ret = groups[i].gid;
			return 0;
		}
	return -ESRCH;
}

static const PolicyLookup lookup = { .lookup_user = fake_user, .lookup_group = fake_group };

static int load_xml(const char *policies, bool anonymous, BusConfig **ret, char **err) {
	static const BusConfigLoadOptions o = {
		.flags = BUS_CONFIG_LOAD_NO_INCLUDES | BUS_CONFIG_LOAD_NO_MKDIR,
		.selinux_enabled = -1,
		.lookup_user = fake_user,
		.lookup_group = fake_group,
	};
	_cleanup_free_ char *xml = NULL;

	assert(asprintf(&xml, "<busconfig>\n<listen>unix:tmpdir=/tmp</listen>\n%s%s\n</busconfig>\n",
			anonymous ? "<allow_anonymous/>\n" : "", policies) >= 0);
	return bus_config_load_string(xml, strlen(xml), "/test/compile.conf", &o, ret, err);
}

static BusConfig *load(const char *policies) {
	_cleanup_free_ char *err = NULL;
	BusConfig *c = NULL;

	if (load_xml(policies, false, &c, &err) < 0) {
		fprintf(stderr, "config: %s\n", err);
		abort();
	}
	return c;
}

static PolicyCompiled *comp(const BusConfig *c, unsigned flags, uid_t bus_uid) {
	PolicyCompileOptions o = { .flags = flags, .bus_uid = bus_uid, .lookup = &lookup };
	PolicyCompiled *pc = NULL;

	assert(policy_compile(c, &o, &pc) == 0);
	return pc;
}

static const PolicyCompiledName *entry(const PolicyCompiled *pc, const char *name, PolicyCompiledClassType t) {
	const PolicyCompiledName *n;

	POLICY_COMPILED_FOREACH_NAME(pc, i, n)
		if (n->type == t && streq(n->name, name))
			return n;
	return NULL;
}

static const PolicyCompiledRule *rule_by_text(const PolicyCompiled *pc, const char *text, unsigned nth) {
	const PolicyCompiledRule *r;
	size_t n;

	r = policy_compiled_rules(pc, &n);
	for (size_t i = 0; i < n; i++)
		if (streq(r[i].text, text) && nth-- == 0)
			return &r[i];
	fprintf(stderr, "no rule %s\n", text);
	abort();
}

static void expect_place(const PolicyCompiled *pc, const char *text, PolicyCompiledRulePlace place) {
	const PolicyCompiledRule *r = rule_by_text(pc, text, 0);

	if (r->place != place) {
		fprintf(stderr, "%s: expected %s, got %s (%s)\n", text, place == POLICY_RULE_KDBUS ? "kdbus" : "residual",
			r->place == POLICY_RULE_KDBUS ? "kdbus" : "residual", r->reason);
		abort();
	}
}

static bool has_access(const PolicyCompiledName *n, uint64_t type, uint64_t id, uint64_t access) {
	for (size_t i = 0; i < n->n_access; i++)
		if (n->access[i].type == type && (type == KDBUS_POLICY_ACCESS_WORLD || n->access[i].id == id) &&
		    n->access[i].access == access)
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* the core's view, with the real policy db */

#define MAX_HOLDERS 64

typedef struct KView {
	KdbusPolicyDb db;
	List owners[MAX_HOLDERS];
	size_t n_owners;
	uid_t bus_uid;
	bool talk_entries;   /* the semantics POLICY_COMPILE_TALK_ENTRIES asks of the core */
} KView;

static void kview_init(KView *kv, const PolicyCompiled *pc, size_t max_size) {
	size_t cursor = 0;

	memset(kv, 0, sizeof(*kv));
	kdbus_policy_db_init(&kv->db);
	kv->bus_uid = policy_compiled_get_bus_uid(pc);
	kv->talk_entries = policy_compiled_get_flags(pc) & POLICY_COMPILE_TALK_ENTRIES;
	while (cursor < policy_compiled_n_names(pc)) {
		_cleanup_free_ void *items = NULL;
		size_t size;
		List *l;

		assert(policy_compiled_build_items(pc, &cursor, max_size, &items, &size) == 0);
		assert(kv->n_owners < MAX_HOLDERS);
		l = &kv->owners[kv->n_owners++];
		list_init(l);
		assert(size <= max_size);
		assert(kdbus_policy_set(&kv->db, items, size, 0, true, l, l) == 0);
	}
}

static void kview_done(KView *kv) {
	for (size_t i = 0; i < kv->n_owners; i++)
		kdbus_policy_remove_owner(&kv->db, &kv->owners[i]);
	assert(kdbus_policy_db_empty(&kv->db));
	kdbus_policy_db_deinit(&kv->db);
}

typedef struct KIdent {
	uid_t uid;
	gid_t egid;
	const gid_t *groups;
	size_t n_groups;
} KIdent;

static int kquery(KView *kv, const KIdent *k, const char *name) {
	uint64_t g[16];
	KdbusMeta m = { .creds = { .euid = k->uid, .egid = k->egid } };

	assert(k->n_groups <= 16);
	for (size_t i = 0; i < k->n_groups; i++)
		g[i] = k->groups[i];
	m.groups = g;
	m.n_groups = k->n_groups;
	return kdbus_policy_query(&kv->db, &m, name);
}

static bool kbypass(const KView *kv, uid_t uid) {
	return uid == 0 || uid == kv->bus_uid;
}

/* kdbus_conn_policy_own() with the fallback OWN */
static bool k_own(KView *kv, const KIdent *k, const char *name) {
	int a;

	if (kbypass(kv, k->uid))
		return true;
	a = kquery(kv, k, name);
	if (a == -ENOENT)
		return true;
	return a >= KDBUS_POLICY_OWN;
}

/* kdbus_conn_policy_talk() to a receiver of another uid owning @names */
static bool k_talk(KView *kv, const KIdent *k, const char *const *names) {
	bool covered = false;

	if (kbypass(kv, k->uid))
		return true;
	for (const char *const *n = names; n && *n; n++) {
		int a = kquery(kv, k, *n);

		if (a >= KDBUS_POLICY_TALK)
			return true;
		if (a == -ENOENT && kv->talk_entries)
			return true;  /* the changed core: the fallback per name */
		if (a != -ENOENT)
			covered = true;
	}
	return !covered;
}

/* ---------------------------------------------------------------------- */
/* identities and messages */

typedef struct Ident {
	uid_t uid;
	gid_t gids[4];
	size_t n_gids;
	int console;
} Ident;

static int console_cb(uid_t uid, void *userdata) {
	(void) uid;
	return *(int *) userdata;
}

static const gid_t all_groups[] = { WHEEL, STAFF, NETDEV, AUDIO };

static size_t make_idents(Ident *out, bool anonymous) {
	static const uid_t uids[] = { ROOT, MESSAGEBUS, ALICE, BOB, CAROL, NOBODY };
	size_t n = 0;

	for (size_t u = 0; u < ELEMENTSOF(uids); u++)
		for (int con = 0; con < 2; con++) {
			out[n++] = (Ident) { .uid = uids[u], .console = con };
			for (size_t a = 0; a < 4; a++) {
				out[n++] = (Ident) { .uid = uids[u], .gids = { all_groups[a] }, .n_gids = 1, .console = con };
				for (size_t b = 0; b < 4; b++)
					if (b != a)
						out[n++] = (Ident) { .uid = uids[u], .gids = { all_groups[a], all_groups[b] },
								     .n_gids = 2, .console = con };
			}
			out[n++] = (Ident) { .uid = uids[u], .gids = { WHEEL, STAFF, NETDEV, AUDIO }, .n_gids = 4,
					     .console = con };
			out[n++] = (Ident) { .uid = uids[u], .gids = { AUDIO, NETDEV, STAFF, WHEEL }, .n_gids = 4,
					     .console = con };
		}
	if (anonymous)
		out[n++] = (Ident) { .uid = POLICY_UID_INVALID };
	return n;
}

#define MAX_IDENTS 512

/* unicast method calls and signals without REPLY_SERIAL */
static size_t make_messages(PolicyMessage *out, const char *dest) {
	static const BusConfigMessageType types[] = { BUS_CONFIG_MESSAGE_METHOD_CALL, BUS_CONFIG_MESSAGE_SIGNAL };
	static const char *ifaces[] = { NULL, "i.one", "i.two", "org.freedesktop.DBus.Properties" };
	static const char *members[] = { "M1", "Get" };
	static const char *paths[] = { "/", "/p" };
	static const unsigned fds[] = { 0, 2 };
	size_t n = 0;

	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < 4; i++)
			for (size_t m = 0; m < 2; m++)
				for (size_t p = 0; p < 2; p++)
					for (size_t f = 0; f < 2; f++)
						out[n++] = (PolicyMessage) {
							.type = types[t], .destination = dest, .path = paths[p],
							.interface = ifaces[i], .member = members[m], .n_fds = fds[f],
						};
	return n;
}

/* the names to probe for a compiled policy: each entry, names below wildcards, others */
static size_t make_names(const PolicyCompiled *pc, char names[][300], size_t max) {
	const PolicyCompiledName *e;
	size_t n = 0;

	POLICY_COMPILED_FOREACH_NAME(pc, i, e) {
		if (n + 3 > max)
			break;
		if (e->type == POLICY_CLASS_EXACT)
			snprintf(names[n++], 300, "%s", e->name);
		else {
			snprintf(names[n++], 300, "%s.xx", e->name);
			snprintf(names[n++], 300, "%s.xx.yy", e->name);
		}
	}
	snprintf(names[n++], 300, "zz.unrelated");
	return n;
}

/*
 * The core's groups: with GROUPS_FROM_USERDB the user database's (as
 * policy.c sees them), otherwise anything - try none and all.
 */
static size_t kidents_for(const Ident *id, bool userdb, KIdent out[3]) {
	if (userdb) {
		out[0] = (KIdent) { .uid = id->uid, .egid = id->n_gids ? id->gids[0] : 4000,
				    .groups = id->gids, .n_groups = id->n_gids };
		return 1;
	}
	out[0] = (KIdent) { .uid = id->uid, .egid = 4000 };
	out[1] = (KIdent) { .uid = id->uid, .egid = WHEEL, .groups = all_groups, .n_groups = 4 };
	return 2;
}

/*
 * For every name whose OWN is exact, policy_check_own() equals the core's
 * answer for every identity; for every other name the core lets everybody
 * through.  TALK likewise for receivers with one name, two names and none;
 * where TALK is not exact, the core never denies what policy.c allows.
 */
static void crosscheck(const BusConfig *c, const PolicyCompiled *pc, const char *what) {
	_cleanup_(policy_unrefp) Policy *p = NULL;
	static Ident idents[MAX_IDENTS];
	static PolicySnapshot *snaps[MAX_IDENTS];
	static char names[200][300];
	bool userdb = policy_compiled_get_flags(pc) & POLICY_COMPILE_GROUPS_FROM_USERDB;
	bool anonymous = policy_compiled_get_flags(pc) & POLICY_COMPILE_ANONYMOUS;
	size_t n_idents, n_names;
	KView kv;

	assert(policy_new(&p, c, &lookup) == 0);
	kview_init(&kv, pc, 512);
	n_idents = make_idents(idents, anonymous);
	assert(n_idents <= MAX_IDENTS);
	n_names = make_names(pc, names, ELEMENTSOF(names));

	for (size_t i = 0; i < n_idents; i++) {
		PolicyIdentity pid = {
			.uid = idents[i].uid, .gids = idents[i].gids, .n_gids = idents[i].n_gids,
			.is_at_console = console_cb, .userdata = &idents[i].console,
		};

		assert(policy_snapshot_new(&snaps[i], p, &pid) == 0);
	}

#define FAIL(...) do { fprintf(stderr, "%s: ", what); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); \
		       for (size_t _r = 0, _n; _r < (policy_compiled_rules(pc, &_n), _n); _r++) \
			       fprintf(stderr, "  %s %s %s\n", policy_compiled_rules(pc, &_n)[_r].context, \
				       policy_compiled_rules(pc, &_n)[_r].text, policy_compiled_rules(pc, &_n)[_r].reason); \
		       abort(); } while (0)

	/* OWN */
	for (size_t nn = 0; nn < n_names; nn++) {
		const char *name = names[nn];
		bool exact = policy_compiled_own_is_exact(pc, name);

		for (size_t i = 0; i < n_idents; i++) {
			KIdent k[3];
			size_t nk = kidents_for(&idents[i], userdb, k);
			int want = policy_snapshot_check_own(snaps[i], name, NULL);

			for (size_t j = 0; j < nk; j++) {
				bool got = k_own(&kv, &k[j], name);

				n_checks++;
				if (exact) {
					n_exact_checks++;
					if (got != (bool) want)
						FAIL("OWN %s uid %d (%zu groups, console %d): policy %d, kdbus %d", name,
						     (int) idents[i].uid, idents[i].n_gids, idents[i].console, want, got);
				} else if (!got)
					FAIL("OWN %s residual but the core denies uid %d", name, (int) idents[i].uid);
			}
		}
	}

	/* TALK: receivers with one name, every pair of names, no name */
	for (size_t a = 0; a <= n_names; a++)
		for (size_t b = a; b <= n_names; b++) {
			/* pairs: neighbours only (entries of one subtree are adjacent) */
			if (b < n_names && b > a + 2)
				continue;
			const char *owned[3] = {}, *rnames[4] = { ":1.7" };
			PolicyMessage msgs[64];
			size_t n_msgs, k = 0;
			bool exact;

			/* (n, n): no name; (a, n): name a; (a, b): both */
			if (a == b && a < n_names)
				continue;
			if (a < n_names)
				owned[k++] = names[a];
			if (b < n_names)
				owned[k++] = names[b];
			for (size_t i = 0; i < k; i++)
				rnames[1 + i] = owned[i];
			exact = policy_compiled_talk_is_exact(pc, owned, NULL);
			n_msgs = make_messages(msgs, k ? owned[0] : ":1.7");

			for (size_t i = 0; i < n_idents; i++) {
				KIdent kid[3];
				size_t nk = kidents_for(&idents[i], userdb, kid);
				bool any_allowed = false, all_same = true;
				int first = -1;

				for (size_t m = 0; m < n_msgs; m++) {
					int v = policy_snapshot_check_send(snaps[i], &msgs[m], rnames, false, NULL);

					assert(v >= 0);
					any_allowed |= v;
					if (first < 0)
						first = v;
					else if (v != first)
						all_same = false;
				}
				for (size_t j = 0; j < nk; j++) {
					bool got = k_talk(&kv, &kid[j], owned);

					n_checks++;
					if (exact) {
						n_exact_checks++;
						if (!all_same || got != (bool) first)
							FAIL("TALK to %s%s%s uid %d (%zu groups, console %d): policy %s, kdbus %d",
							     k ? owned[0] : "(no name)", k > 1 ? " + " : "", k > 1 ? owned[1] : "",
							     (int) idents[i].uid, idents[i].n_gids, idents[i].console,
							     all_same ? (first ? "allow" : "deny") : "mixed", got);
					} else if (!got && any_allowed)
						FAIL("TALK to %s: the core denies uid %d what policy.c allows for some message",
						     k ? owned[0] : "(no name)", (int) idents[i].uid);
				}
			}

			/* connections of one uid talk freely in the core: whoever may
			 * own a TALK-exact name may also send to it */
			if (exact && k == 1)
				for (size_t i = 0; i < n_idents; i++) {
					if (!policy_snapshot_check_own(snaps[i], owned[0], NULL))
						continue;
					for (size_t m = 0; m < n_msgs; m++)
						if (!policy_snapshot_check_send(snaps[i], &msgs[m], rnames, false, NULL))
							FAIL("uid %d may own %s but not send to it, yet TALK is exact",
							     (int) idents[i].uid, owned[0]);
				}
		}
#undef FAIL

	for (size_t i = 0; i < n_idents; i++)
		policy_snapshot_free(snaps[i]);
	kview_done(&kv);
}

static void crosscheck_modes(const BusConfig *c, const char *what, int bus_uids) {
	static const unsigned flag_sets[] = {
		0,
		POLICY_COMPILE_GROUPS_FROM_USERDB,
		POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_GROUPS_FROM_USERDB,
		POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_ANONYMOUS,
	};

	for (size_t f = 0; f < ELEMENTSOF(flag_sets); f++)
		for (int b = 0; b <= bus_uids; b++) {
			_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, flag_sets[f], b ? MESSAGEBUS : ROOT);

			crosscheck(c, pc, what);
		}
}

static void crosscheck_all_modes(const BusConfig *c, const char *what) {
	crosscheck_modes(c, what, 1);
}

/* ---------------------------------------------------------------------- */
/* targeted tests */

static void test_own_basic(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <deny own=\"*\"/>\n"
		"  <allow own=\"com.world\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"com.rootonly\"/>\n"
		"  <allow own=\"com.alice\"/>\n"
		"</policy>\n"
		"<policy user=\"alice\">\n"
		"  <allow own=\"com.alice\"/>\n"
		"  <allow own=\"com.aliceonly\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);
	const PolicyCompiledName *n;

	n = entry(pc, "com.world", POLICY_CLASS_EXACT);
	assert(n && !n->own_residual);
	assert(has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN) && n->n_access == 1);

	n = entry(pc, "com.rootonly", POLICY_CLASS_EXACT);
	assert(n && !n->own_residual);
	/* no send rule at all: every message denied, root's too - but the
	 * core lets root talk, so TALK is residual (WORLD TALK) */
	assert(n->talk_residual && strstr(n->talk_reason, "uid 0"));
	assert(!has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN));
	assert(has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_TALK));

	n = entry(pc, "com.alice", POLICY_CLASS_EXACT);
	assert(n && !n->own_residual);
	assert(has_access(n, KDBUS_POLICY_ACCESS_USER, ALICE, KDBUS_POLICY_OWN));

	/* root may not own it: the core would let root */
	n = entry(pc, "com.aliceonly", POLICY_CLASS_EXACT);
	assert(n && n->own_residual && n->residual);
	assert(has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN));
	assert(strstr(n->own_reason, "uid 0"));

	expect_place(pc, "<allow own=\"com.world\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow own=\"com.rootonly\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow own=\"com.aliceonly\"/>", POLICY_RULE_RESIDUAL);
	/* own="*" matches the fallback, which is residual (root is denied) */
	expect_place(pc, "<deny own=\"*\"/>", POLICY_RULE_RESIDUAL);
	assert(policy_compiled_get_fallback_class(pc)->own_residual);
	assert(policy_compiled_get_fallback(pc) == KDBUS_POLICY_OWN);

	assert(policy_compiled_own_is_exact(pc, "com.world"));
	assert(!policy_compiled_own_is_exact(pc, "com.aliceonly"));
	assert(!policy_compiled_own_is_exact(pc, "org.unknown"));
	assert(!policy_compiled_own_is_exact(pc, "notaname"));

	crosscheck_all_modes(c, "own_basic");

	/* with the bus uid 1001 (alice created the bus) com.aliceonly is
	 * still residual, root still denied */
	{
		_cleanup_(policy_compiled_freep) PolicyCompiled *pc2 = comp(c, 0, ALICE);

		assert(entry(pc2, "com.aliceonly", POLICY_CLASS_EXACT)->own_residual);
		/* alice now passes the core for com.rootonly: residual */
		assert(entry(pc2, "com.rootonly", POLICY_CLASS_EXACT)->own_residual);
	}
}

static void test_own_prefix(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow own_prefix=\"org.world\"/>\n"
		"  <deny own=\"org.world.special\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"org.world.special\"/>\n"
		"  <allow own_prefix=\"org.rooty\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);
	const PolicyCompiledName *n, *w, *s;

	/* own_prefix: an exact entry and the any-depth wildcard */
	n = entry(pc, "org.world", POLICY_CLASS_EXACT);
	w = entry(pc, "org.world", POLICY_CLASS_WILDCARD);
	s = entry(pc, "org.world.special", POLICY_CLASS_EXACT);
	assert(n && w && s);
	assert(!n->own_residual && has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN));
	assert(!w->own_residual && has_access(w, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN));
	assert(!s->own_residual && !has_access(s, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_OWN));
	assert(policy_compiled_lookup(pc, "org.world.a.b.c") == w);
	assert(policy_compiled_lookup(pc, "org.world") == n);
	assert(policy_compiled_lookup(pc, "org.world.special") == s);
	assert(policy_compiled_lookup(pc, "org.worldly")->type == POLICY_CLASS_FALLBACK);
	/* the exact entry is installed before the wildcard of the same name */
	assert(policy_compiled_get_name(pc, 0)->type == POLICY_CLASS_EXACT);
	expect_place(pc, "<allow own_prefix=\"org.world\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<deny own=\"org.world.special\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow own_prefix=\"org.rooty\"/>", POLICY_RULE_KDBUS);
	crosscheck_all_modes(c, "own_prefix");
}

static void test_talk(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <deny send_type=\"method_call\"/>\n"
		"  <allow send_type=\"signal\"/>\n"
		"  <allow send_requested_reply=\"true\" send_type=\"method_return\"/>\n"
		"  <allow send_destination=\"com.open\"/>\n"
		"  <allow send_destination=\"com.iface\" send_interface=\"i.one\"/>\n"
		"  <deny send_destination=\"com.closed\"/>\n"
		"  <allow send_destination=\"com.later\"/>\n"
		"  <deny send_destination=\"com.later\" send_path=\"/p\" send_member=\"M1\"/>\n"
		"  <allow own=\"com.open\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow send_destination=\"com.closed\"/>\n"
		"  <allow own=\"com.closed\"/>\n"
		"</policy>\n"
		"<policy user=\"alice\">\n"
		"  <allow send_destination=\"com.closed\"/>\n"
		"</policy>\n"
		"<policy group=\"staff\">\n"
		"  <allow send_destination=\"com.closed\"/>\n"
		"</policy>\n");
	const PolicyCompiledName *n;

	{
		_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);

		n = entry(pc, "com.open", POLICY_CLASS_EXACT);
		assert(n && !n->talk_residual && !n->own_residual);
		expect_place(pc, "<allow send_destination=\"com.open\"/>", POLICY_RULE_KDBUS);

		/* an interface condition: residual */
		n = entry(pc, "com.iface", POLICY_CLASS_EXACT);
		assert(n && n->talk_residual);
		expect_place(pc, "<allow send_destination=\"com.iface\" send_interface=\"i.one\"/>", POLICY_RULE_RESIDUAL);

		/* deny after allow for some members: residual */
		n = entry(pc, "com.later", POLICY_CLASS_EXACT);
		assert(n && n->talk_residual);
		expect_place(pc, "<allow send_destination=\"com.later\"/>", POLICY_RULE_RESIDUAL);

		/* restricted (root, alice, staff): without TALK entries residual,
		 * and without userdb groups too */
		n = entry(pc, "com.closed", POLICY_CLASS_EXACT);
		assert(n && n->talk_residual && has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_TALK));
		assert(!n->own_residual);

		/* generic rules are always residual */
		expect_place(pc, "<deny send_type=\"method_call\"/>", POLICY_RULE_RESIDUAL);
		expect_place(pc, "<allow send_type=\"signal\"/>", POLICY_RULE_RESIDUAL);

		assert(policy_compiled_talk_is_exact(pc, (const char *[]) { "com.open", NULL }, NULL));
		assert(!policy_compiled_talk_is_exact(pc, (const char *[]) { "com.open", "com.iface", NULL }, NULL));
		assert(!policy_compiled_talk_is_exact(pc, (const char *[]) { "com.open", NULL },
						      (const char *[]) { "com.closed", NULL }));
		assert(!policy_compiled_talk_is_exact(pc, NULL, NULL));
		crosscheck(c, pc, "talk/default");
	}
	{
		_cleanup_(policy_compiled_freep) PolicyCompiled *pc =
			comp(c, POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_GROUPS_FROM_USERDB, ROOT);

		n = entry(pc, "com.closed", POLICY_CLASS_EXACT);
		assert(n && !n->talk_residual && !n->own_residual);
		assert(has_access(n, KDBUS_POLICY_ACCESS_USER, ALICE, KDBUS_POLICY_TALK));
		assert(has_access(n, KDBUS_POLICY_ACCESS_GROUP, STAFF, KDBUS_POLICY_TALK));
		assert(!has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_TALK));
		expect_place(pc, "<allow send_destination=\"com.closed\"/>", POLICY_RULE_KDBUS);
		expect_place(pc, "<deny send_destination=\"com.closed\"/>", POLICY_RULE_KDBUS);
		/* different grants: not exact together */
		assert(!policy_compiled_talk_is_exact(pc, (const char *[]) { "com.open", "com.closed", NULL }, NULL));
		assert(policy_compiled_talk_is_exact(pc, (const char *[]) { "com.closed", NULL }, NULL));
		crosscheck(c, pc, "talk/entries");
	}
	{
		/* TALK entries, but groups from the socket: the staff rule makes it residual */
		_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, POLICY_COMPILE_TALK_ENTRIES, ROOT);

		n = entry(pc, "com.closed", POLICY_CLASS_EXACT);
		assert(n && n->talk_residual && strstr(n->talk_reason, "group"));
	}
	crosscheck_all_modes(c, "talk");
}

static void test_owner_may_talk(void) {
	/* alice may own com.x but not call it: the core lets connections of
	 * one uid talk, so TALK cannot be exact */
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <deny send_destination=\"com.x\"/>\n"
		"</policy>\n"
		"<policy user=\"alice\">\n"
		"  <allow own=\"com.x\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"com.x\"/>\n"
		"  <allow send_destination=\"com.x\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc =
		comp(c, POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_GROUPS_FROM_USERDB, ROOT);
	const PolicyCompiledName *n = entry(pc, "com.x", POLICY_CLASS_EXACT);

	assert(n && !n->own_residual && n->talk_residual);
	assert(strstr(n->talk_reason, "may own"));
	crosscheck_all_modes(c, "owner_may_talk");
}

static void test_contexts(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow own=\"com.console\"/>\n"
		"  <allow own=\"com.mand\"/>\n"
		"  <allow own=\"com.mandallow\"/>\n"
		"  <allow own=\"com.group\"/>\n"
		"  <allow own=\"com.bothconsole\"/>\n"
		"</policy>\n"
		"<policy at_console=\"true\">\n"
		"  <deny own=\"com.console\"/>\n"
		"  <allow own=\"com.bothconsole\"/>\n"
		"</policy>\n"
		"<policy at_console=\"false\">\n"
		"  <allow own=\"com.bothconsole\"/>\n"
		"</policy>\n"
		"<policy group=\"netdev\">\n"
		"  <deny own=\"com.group\"/>\n"
		"</policy>\n"
		"<policy context=\"mandatory\">\n"
		"  <deny own=\"com.mand\"/>\n"
		"  <allow own=\"com.mandallow\"/>\n"
		"</policy>\n"
		"<policy user=\"nosuchuser\">\n"
		"  <deny own=\"com.console\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, POLICY_COMPILE_GROUPS_FROM_USERDB, ROOT);

	assert(strstr(entry(pc, "com.console", POLICY_CLASS_EXACT)->own_reason, "at_console"));
	assert(!entry(pc, "com.bothconsole", POLICY_CLASS_EXACT)->own_residual);
	/* mandatory deny: root denied too -> residual; mandatory allow -> everyone */
	assert(entry(pc, "com.mand", POLICY_CLASS_EXACT)->own_residual);
	assert(!entry(pc, "com.mandallow", POLICY_CLASS_EXACT)->own_residual);
	/* a group's deny cannot be expressed by grants */
	assert(entry(pc, "com.group", POLICY_CLASS_EXACT)->own_residual);
	expect_place(pc, "<deny own=\"com.console\"/>", POLICY_RULE_RESIDUAL);
	{
		/* the rule of the unknown user lands in the residual table */
		const PolicyCompiledRule *r = rule_by_text(pc, "<deny own=\"com.console\"/>", 1);

		assert(r->place == POLICY_RULE_RESIDUAL && strstr(r->reason, "unknown user"));
	}
	crosscheck_all_modes(c, "contexts");
}

static void test_optimizer_reset(void) {
	/* <deny send_broadcast="true"/> removes every earlier send rule of
	 * the snapshot (policy.c's optimizer, as dbus-daemon) */
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow send_destination=\"com.a\"/>\n"
		"  <allow send_destination=\"com.b\"/>\n"
		"</policy>\n"
		"<policy user=\"alice\">\n"
		"  <deny send_broadcast=\"true\"/>\n"
		"  <allow send_destination=\"com.b\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);

	/* alice cannot send to com.a (the reset), everyone else can */
	assert(entry(pc, "com.a", POLICY_CLASS_EXACT)->talk_residual);
	assert(!entry(pc, "com.b", POLICY_CLASS_EXACT)->talk_residual);
	crosscheck_all_modes(c, "optimizer_reset");
}

static void test_attributes_residual(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow send_destination=\"com.a\"/>\n"
		"  <allow send_destination=\"com.a\" send_path=\"/p\"/>\n"
		"  <allow send_destination=\"com.a\" send_interface=\"i.one\" send_member=\"M1\"/>\n"
		"  <allow send_destination=\"com.a\" send_type=\"signal\"/>\n"
		"  <allow send_destination=\"com.a\" send_error=\"e.x\"/>\n"
		"  <allow send_destination=\"com.a\" send_broadcast=\"false\"/>\n"
		"  <allow send_destination=\"com.a\" max_fds=\"1\"/>\n"
		"  <allow send_destination=\"com.a\" send_requested_reply=\"false\"/>\n"
		"  <allow send_destination=\"com.a\" eavesdrop=\"true\"/>\n"
		"  <allow send_destination_prefix=\"com.p\"/>\n"
		"  <allow send_destination=\":1.5\"/>\n"
		"  <allow send_destination=\"org.freedesktop.DBus\"/>\n"
		"  <allow receive_sender=\"com.a\"/>\n"
		"  <allow user=\"*\"/>\n"
		"  <allow own=\"notaname\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"com.a\"/>\n"
		"</policy>\n"
		"<policy user=\"bob\">\n"
		"  <allow send_destination=\"com.log\" log=\"true\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);
	size_t n;

	/* every condition that only narrows allow rules after a full allow
	 * keeps com.a exact, but the conditioned rules themselves are residual */
	assert(!entry(pc, "com.a", POLICY_CLASS_EXACT)->talk_residual);
	expect_place(pc, "<allow send_destination=\"com.a\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow send_destination=\"com.a\" send_path=\"/p\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" send_interface=\"i.one\" send_member=\"M1\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" send_type=\"signal\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" send_error=\"e.x\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" send_broadcast=\"false\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" max_fds=\"1\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" send_requested_reply=\"false\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"com.a\" eavesdrop=\"true\"/>", POLICY_RULE_RESIDUAL);
	/* the prefix: an exact and a wildcard entry, TALK for everyone */
	assert(!entry(pc, "com.p", POLICY_CLASS_WILDCARD)->talk_residual);
	expect_place(pc, "<allow send_destination_prefix=\"com.p\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow send_destination=\":1.5\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow send_destination=\"org.freedesktop.DBus\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow receive_sender=\"com.a\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow user=\"*\"/>", POLICY_RULE_RESIDUAL);
	expect_place(pc, "<allow own=\"notaname\"/>", POLICY_RULE_RESIDUAL);
	/* the driver gets no entry; log="true" decides for bob: residual */
	assert(!entry(pc, "org.freedesktop.DBus", POLICY_CLASS_EXACT));
	assert(entry(pc, "com.log", POLICY_CLASS_EXACT)->talk_residual);

	/* every rule lands in exactly one place */
	policy_compiled_rules(pc, &n);
	assert(n == 17);
	crosscheck_all_modes(c, "attributes");
}

static void test_stock_like(void) {
	/* the shape of system.conf + a system.d file */
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow user=\"*\"/>\n"
		"  <deny own=\"*\"/>\n"
		"  <deny send_type=\"method_call\"/>\n"
		"  <allow send_type=\"signal\"/>\n"
		"  <allow send_requested_reply=\"true\" send_type=\"method_return\"/>\n"
		"  <allow send_requested_reply=\"true\" send_type=\"error\"/>\n"
		"  <allow receive_type=\"method_call\"/>\n"
		"  <allow receive_type=\"method_return\"/>\n"
		"  <allow receive_type=\"error\"/>\n"
		"  <allow receive_type=\"signal\"/>\n"
		"  <allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"org.bluez\"/>\n"
		"  <allow send_destination=\"org.bluez\"/>\n"
		"  <allow send_interface=\"org.bluez.Agent1\"/>\n"
		"</policy>\n"
		"<policy group=\"netdev\">\n"
		"  <allow send_destination=\"org.bluez\"/>\n"
		"</policy>\n"
		"<policy context=\"default\">\n"
		"  <allow send_destination=\"org.bluez\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"org.freedesktop.login1\"/>\n"
		"  <allow send_destination=\"org.freedesktop.login1\"/>\n"
		"</policy>\n"
		"<policy context=\"default\">\n"
		"  <deny send_destination=\"org.freedesktop.login1\"/>\n"
		"  <allow send_destination=\"org.freedesktop.login1\" send_interface=\"org.freedesktop.DBus.Properties\" send_member=\"Get\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);
	const PolicyCompiledName *n;

	n = entry(pc, "org.bluez", POLICY_CLASS_EXACT);
	assert(n && !n->residual);
	assert(n->n_access == 1 && has_access(n, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_TALK));
	n = entry(pc, "org.freedesktop.login1", POLICY_CLASS_EXACT);
	assert(n && !n->own_residual && n->talk_residual);
	assert(policy_compiled_get_fallback_class(pc)->own_residual);
	assert(policy_compiled_get_fallback_class(pc)->talk_residual);
	expect_place(pc, "<allow own=\"org.bluez\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow send_destination=\"org.bluez\"/>", POLICY_RULE_KDBUS);
	expect_place(pc, "<allow send_interface=\"org.bluez.Agent1\"/>", POLICY_RULE_RESIDUAL);
	crosscheck_all_modes(c, "stock_like");
}

static void test_session_like(void) {
	/* session.conf: everything allowed; the fallback is exact */
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
		"  <allow eavesdrop=\"true\"/>\n"
		"  <allow own=\"*\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ALICE);

	assert(!policy_compiled_get_fallback_class(pc)->own_residual);
	assert(!policy_compiled_get_fallback_class(pc)->talk_residual);
	assert(policy_compiled_own_is_exact(pc, "org.anything"));
	assert(policy_compiled_talk_is_exact(pc, NULL, NULL));
	assert(policy_compiled_talk_is_exact(pc, (const char *[]) { "a.b", "c.d", NULL }, NULL));
	expect_place(pc, "<allow own=\"*\"/>", POLICY_RULE_KDBUS);
	crosscheck_all_modes(c, "session_like");
}

static void test_anonymous(void) {
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;

	assert(load_xml("<policy context=\"default\">\n"
			"  <allow own=\"com.world\"/>\n"
			"</policy>\n"
			"<policy user=\"alice\">\n"
			"  <deny own=\"com.world\"/>\n"
			"</policy>\n"
			"<policy user=\"bob\">\n"
			"  <allow own=\"com.bob\"/>\n"
			"</policy>\n"
			"<policy user=\"root\">\n"
			"  <allow own=\"com.bob\"/>\n"
			"</policy>\n", true, &c, &err) == 0);
	pc = comp(c, 0, ROOT);
	assert(policy_compiled_get_flags(pc) & POLICY_COMPILE_ANONYMOUS);
	assert(entry(pc, "com.world", POLICY_CLASS_EXACT)->own_residual);
	assert(!entry(pc, "com.bob", POLICY_CLASS_EXACT)->own_residual);
	crosscheck_all_modes(c, "anonymous");
}

static void test_items(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow own=\"a.b\"/>\n"
		"  <allow own_prefix=\"a.c\"/>\n"
		"  <allow own=\"a.dd\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, 0, ROOT);
	_cleanup_free_ void *items = NULL;
	size_t cursor = 0, size;
	const struct kdbus_item *it;
	unsigned names = 0, access = 0;

	assert(policy_compiled_n_names(pc) == 4);   /* a.b, a.c, a.c.*, a.dd */
	assert(policy_compiled_build_items(pc, &cursor, KDBUS_CMD_MAX_SIZE, &items, &size) == 0);
	assert(cursor == 4 && size % 8 == 0);
	assert(kdbus_items_validate(items, size) == 0);
	for (size_t pos = 0; pos < size; pos += KDBUS_ALIGN8(it->size)) {
		it = (const struct kdbus_item *)((const uint8_t *) items + pos);
		if (it->type == KDBUS_ITEM_NAME) {
			assert(kdbus_name_is_valid(it->str, true));
			names++;
		} else {
			assert(it->type == KDBUS_ITEM_POLICY_ACCESS);
			access++;
		}
	}
	assert(names == 4 && access == 4);
	free(items);
	items = NULL;

	/* chunks: each entry in one buffer; too small is -ENOBUFS */
	cursor = 0;
	assert(policy_compiled_build_items(pc, &cursor, 16, &items, &size) == -ENOBUFS && cursor == 0);
	assert(policy_compiled_build_items(pc, &cursor, 64, &items, &size) == 0 && cursor == 1 && size == 64);
	free(items);
	items = NULL;
	assert(policy_compiled_build_items(pc, &cursor, 200, &items, &size) == 0 && cursor == 4);
}

static bool skip_a_dd(const char *name, void *userdata) {
	(*(unsigned *) userdata)++;
	return streq(name, "a.dd");
}

/* kdbus.ko also serves native peers: a residual OWN grants nobody, and an
 * activatable name's entry is left to its activator */
static void test_kernel_entries(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <allow own=\"a.b\"/>\n"
		"  <allow own=\"a.dd\"/>\n"
		"</policy>\n"
		"<policy at_console=\"true\"><allow own=\"a.r\"/></policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *plain = comp(c, 0, ROOT);
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = comp(c, POLICY_COMPILE_NO_RESIDUAL_OWN, ROOT);
	_cleanup_free_ void *items = NULL;
	const PolicyCompiledName *n;
	size_t cursor = 0, size;
	unsigned asked = 0;

	/* a.r: at_console is residual; the entry grants OWN without the flag,
	 * TALK only with it */
	n = entry(plain, "a.r", POLICY_CLASS_EXACT);
	assert(n && n->own_residual && n->n_access == 1 && n->access[0].access == KDBUS_POLICY_OWN);
	n = entry(pc, "a.r", POLICY_CLASS_EXACT);
	assert(n && n->own_residual && n->n_access == 1 && n->access[0].type == KDBUS_POLICY_ACCESS_WORLD &&
	       n->access[0].access == KDBUS_POLICY_TALK);
	/* an exact OWN stays as it was */
	n = entry(pc, "a.dd", POLICY_CLASS_EXACT);
	assert(n && !n->own_residual && n->access[0].access == KDBUS_POLICY_OWN);

	assert(policy_compiled_build_items_except(pc, &cursor, KDBUS_CMD_MAX_SIZE, skip_a_dd, &asked, &items,
						  &size) == 0);
	assert(cursor == policy_compiled_n_names(pc) && asked > 0);
	assert(kdbus_items_validate(items, size) == 0);
	unsigned names = 0;
	const struct kdbus_item *it;
	for (size_t pos = 0; pos < size; pos += KDBUS_ALIGN8(it->size)) {
		it = (const struct kdbus_item *)((const uint8_t *) items + pos);
		if (it->type == KDBUS_ITEM_NAME) {
			assert(!streq(it->str, "a.dd"));
			names++;
		}
	}
	assert(names == policy_compiled_n_names(pc) - 1);
}

/* the real core: a policy holder, NAME_ACQUIRE with faked credentials */
static KdbusConn *hello(KdbusBus *bus, uint64_t flags, const void *extra, size_t extra_size, uid_t uid,
			const gid_t *gids, size_t n_gids) {
	static uint8_t buf[KDBUS_CMD_MAX_SIZE + 1024] __attribute__((aligned(8)));
	struct kdbus_cmd_hello *h = (struct kdbus_cmd_hello *) buf;
	struct kdbus_item *it;
	KdbusConn *conn = NULL;

	memset(buf, 0, sizeof(buf));
	h->flags = flags;
	h->attach_flags_send = _KDBUS_ATTACH_ALL;
	h->pool_size = 1024 * 1024;
	it = h->items;
	if (uid != POLICY_UID_INVALID) {
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_creds);
		it->type = KDBUS_ITEM_CREDS;
		it->creds = (struct kdbus_creds) { .uid = uid, .euid = uid, .suid = uid, .fsuid = uid,
						   .gid = 4000, .egid = 4000, .sgid = 4000, .fsgid = 4000 };
		it = KDBUS_ITEM_NEXT(it);
		if (n_gids) {
			it->size = KDBUS_ITEM_HEADER_SIZE + n_gids * sizeof(uint64_t);
			it->type = KDBUS_ITEM_AUXGROUPS;
			for (size_t i = 0; i < n_gids; i++)
				it->data64[i] = gids[i];
			it = KDBUS_ITEM_NEXT(it);
		}
	}
	if (extra) {
		memcpy(it, extra, extra_size);
		it = (struct kdbus_item *)((uint8_t *) it + extra_size);
	}
	h->size = (uint8_t *) it - buf;
	assert(kdbus_cmd_hello(bus, h, &conn) == 0);
	if (h->offset) {
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = h->offset };

		assert(kdbus_cmd_free(conn, &f) == 0);
	}
	return conn;
}

static int acquire(KdbusConn *conn, const char *name) {
	uint64_t buf[64] = {};
	struct kdbus_cmd *cmd = (struct kdbus_cmd *) buf;
	struct kdbus_item *it = cmd->items;

	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
	it->type = KDBUS_ITEM_NAME;
	strcpy(it->str, name);
	it = KDBUS_ITEM_NEXT(it);
	cmd->size = (uint8_t *) it - (uint8_t *) cmd;
	return kdbus_cmd_name_acquire(conn, cmd);
}

static void test_real_core(void) {
	_cleanup_(bus_config_freep) BusConfig *c = load(
		"<policy context=\"default\">\n"
		"  <deny own=\"*\"/>\n"
		"  <allow own=\"com.world\"/>\n"
		"  <allow own_prefix=\"com.tree\"/>\n"
		"</policy>\n"
		"<policy user=\"root\">\n"
		"  <allow own=\"com.alice\"/>\n"
		"  <allow own=\"com.staff\"/>\n"
		"  <allow own=\"com.tree.rootonly\"/>\n"
		"</policy>\n"
		"<policy user=\"alice\">\n"
		"  <allow own=\"com.alice\"/>\n"
		"</policy>\n"
		"<policy group=\"staff\">\n"
		"  <allow own=\"com.staff\"/>\n"
		"</policy>\n"
		"<policy context=\"default\">\n"
		"  <deny own=\"com.tree.rootonly\"/>\n"
		"</policy>\n");
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc =
		comp(c, POLICY_COMPILE_GROUPS_FROM_USERDB, geteuid());
	_cleanup_(policy_unrefp) Policy *p = NULL;
	static const char *names[] = { "com.world", "com.alice", "com.staff", "com.tree", "com.tree.a.b",
				       "com.tree.rootonly", "com.other" };
	static const uid_t uids[] = { ROOT, ALICE, BOB, NOBODY };
	struct {
		struct kdbus_cmd cmd;
		uint8_t items[256];
	} mk = {};
	struct kdbus_item *it = mk.cmd.items;
	KdbusBus *bus = NULL;
	KdbusConn *holder;
	_cleanup_free_ void *items = NULL;
	size_t cursor = 0, size;
	unsigned n = 0;

	assert(policy_new(&p, c, &lookup) == 0);
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter);
	it->type = KDBUS_ITEM_BLOOM_PARAMETER;
	it->bloom_parameter.size = 64;
	it->bloom_parameter.n_hash = 8;
	it = KDBUS_ITEM_NEXT(it);
	snprintf(it->str, 64, "%u-test-compile-%d", (unsigned) geteuid(), (int) getpid());
	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(it->str) + 1;
	it->type = KDBUS_ITEM_MAKE_NAME;
	it = KDBUS_ITEM_NEXT(it);
	mk.cmd.size = (uint8_t *) it - (uint8_t *) &mk.cmd;
	mk.cmd.flags = KDBUS_MAKE_ACCESS_WORLD;
	assert(kdbus_cmd_bus_make(KDBUS_BACKEND_USERSPACE, &mk.cmd, &bus) == 0);
	assert(kdbus_bus_set_policy_fallback(bus, policy_compiled_get_fallback(pc)) == 0);

	assert(policy_compiled_build_items(pc, &cursor, KDBUS_CMD_MAX_SIZE - 1024, &items, &size) == 0);
	assert(cursor == policy_compiled_n_names(pc));
	holder = hello(bus, KDBUS_HELLO_POLICY_HOLDER, items, size, POLICY_UID_INVALID, NULL, 0);

	for (size_t u = 0; u < ELEMENTSOF(uids); u++)
		for (int g = 0; g < 2; g++) {
			const gid_t staff[] = { STAFF };
			PolicyIdentity id = { .uid = uids[u], .gids = g ? staff : NULL, .n_gids = g };
			KdbusConn *conn;

			if (uids[u] == ROOT && geteuid() != 0)
				continue;   /* cannot fake root unprivileged: still owner */
			conn = hello(bus, 0, NULL, 0, uids[u], g ? staff : NULL, g);
			for (size_t i = 0; i < ELEMENTSOF(names); i++) {
				int want = policy_check_own(p, &id, names[i], NULL);
				int r = acquire(conn, names[i]);

				if (!policy_compiled_own_is_exact(pc, names[i])) {
					assert(r != -EPERM);  /* residual: the daemon decides */
				} else if ((r == 0) != (bool) want) {
					fprintf(stderr, "NAME_ACQUIRE %s uid %u groups %d: policy %d, core %d\n", names[i],
						(unsigned) uids[u], g, want, r);
					abort();
				}
				if (r == 0) {
					uint64_t b[64] = {};
					struct kdbus_cmd *cmd = (struct kdbus_cmd *) b;

					cmd->items[0].size = KDBUS_ITEM_HEADER_SIZE + strlen(names[i]) + 1;
					cmd->items[0].type = KDBUS_ITEM_NAME;
					memcpy(cmd->items[0].str, names[i], strlen(names[i]) + 1);
					cmd->size = sizeof(*cmd) + KDBUS_ALIGN8(cmd->items[0].size);
					assert(kdbus_cmd_name_release(conn, cmd) == 0);
				}
				n++;
			}
			kdbus_conn_close(conn);
		}
	assert(n > 0);
	kdbus_conn_close(holder);
	kdbus_bus_close(bus);
}

/* ---------------------------------------------------------------------- */
/* random configurations */

static unsigned rnd_state = 12345;

static unsigned rnd(unsigned n) {
	rnd_state = rnd_state * 1103515245u + 12345u;
	return ((rnd_state >> 16) & 0x7fff) % n;
}

static const char *pick(const char *const *l, size_t n) {
	return l[rnd((unsigned) n)];
}

_printf_(2, 3) static void append(char **s, const char *fmt, ...) {
	va_list ap;
	char *add = NULL, *n = NULL;

	va_start(ap, fmt);
	assert(vasprintf(&add, fmt, ap) >= 0);
	va_end(ap);
	assert(asprintf(&n, "%s%s", *s ? *s : "", add) >= 0);
	free(add);
	free(*s);
	*s = n;
}

static void gen_rule(char **s, bool connect_ok) {
	static const char *const names[] = { "a.b", "a.b.c", "a.b.c.d", "x.y", "x.y.z", "q.r" };
	static const char *const ifaces[] = { "i.one", "i.two" };
	const char *verb = rnd(3) ? "allow" : "deny";
	unsigned k = rnd(connect_ok ? 13 : 12);

	append(s, "  <%s", verb);
	switch (k) {
	case 0: case 1: case 2:
		append(s, " own=\"%s\"", pick(names, ELEMENTSOF(names)));
		break;
	case 3:
		append(s, " own_prefix=\"%s\"", pick(names, ELEMENTSOF(names)));
		break;
	case 4:
		append(s, " own=\"*\"");
		break;
	case 5: case 6: case 7: case 8: case 9: case 10: {
		unsigned d = rnd(8), extras = rnd(4) ? 0 : 1 + rnd(2);
		bool any = false;

		if (d <= 4) {
			append(s, " send_destination=\"%s\"", pick(names, ELEMENTSOF(names)));
			any = true;
		} else if (d == 5) {
			append(s, " send_destination_prefix=\"%s\"", pick(names, ELEMENTSOF(names)));
			any = true;
		} else if (d == 6) {
			append(s, " send_destination=\"*\"");
			any = true;
		}
		unsigned used = 0;

		for (unsigned e = 0; e < extras; e++) {
			unsigned x = rnd(11);

			if (used & (1u << x) || (x == 10 && any))
				continue;
			used |= 1u << x;
			if (x == 1 || x == 3)
				used |= (1u << 1) | (1u << 3);   /* both set send_path */
			switch (x) {
			case 0:
				append(s, " send_interface=\"%s\"", pick(ifaces, 2));
				break;
			case 1:
				append(s, " send_path=\"/p\" send_member=\"M1\"");
				break;
			case 2:
				append(s, " send_type=\"%s\"", rnd(2) ? "method_call" : rnd(2) ? "signal" : "method_return");
				break;
			case 3:
				append(s, " send_path=\"/p\"");
				break;
			case 4:
				append(s, " send_broadcast=\"%s\"", !any && rnd(2) ? "true" : "false");
				break;
			case 5:
				append(s, " %s=\"1\"", rnd(2) ? "min_fds" : "max_fds");
				break;
			case 6:
				append(s, " log=\"true\"");
				break;
			case 7:
				append(s, " send_requested_reply=\"%s\"", rnd(2) ? "true" : "false");
				break;
			case 8:
				append(s, " send_error=\"e.x\"");
				break;
			case 9:
				append(s, " eavesdrop=\"true\"");
				break;
			default:
				append(s, " send_destination=\":1.7\"");
				break;
			}
		}
		if (!any && extras == 0)
			append(s, " send_type=\"%s\"", rnd(2) ? "method_call" : "signal");
		break;
	}
	case 11:
		append(s, " receive_sender=\"%s\"", pick(names, ELEMENTSOF(names)));
		break;
	default:
		append(s, " user=\"*\"");
		break;
	}
	append(s, "/>\n");
}

static char *gen_config(void) {
	static const char *const contexts[] = {
		"context=\"default\"", "context=\"default\"", "context=\"default\"", "context=\"mandatory\"",
		"user=\"root\"", "user=\"alice\"", "user=\"bob\"", "user=\"messagebus\"", "user=\"nosuchuser\"",
		"group=\"staff\"", "group=\"netdev\"", "group=\"wheel\"", "at_console=\"true\"", "at_console=\"false\"",
	};
	unsigned n_pol = 1 + rnd(5);
	char *s = NULL;

	append(&s, "%s", "");
	for (unsigned i = 0; i < n_pol; i++) {
		const char *ctx = pick(contexts, ELEMENTSOF(contexts));
		unsigned n_rules = 1 + rnd(5);

		append(&s, "<policy %s>\n", ctx);
		for (unsigned j = 0; j < n_rules; j++)
			gen_rule(&s, strstr(ctx, "context="));
		append(&s, "</policy>\n");
	}
	return s;
}

/* rounds of test_random(): the first argument, else 40 */
static unsigned n_random_rounds = 40;

static void test_random(void) {
	unsigned n = n_random_rounds;

	unsigned loaded = 0, exact_names = 0, own_exact = 0, talk_exact = 0, rejected = 0;

	for (unsigned i = 0; i < n; i++) {
		_cleanup_free_ char *xml = gen_config(), *err = NULL;
		_cleanup_(bus_config_freep) BusConfig *c = NULL;
		char what[32];

		if (load_xml(xml, rnd(4) == 0, &c, &err) < 0) {
			/* the generator may combine attributes dbus-daemon refuses */
			if (++rejected > n / 10) {
				fprintf(stderr, "random config %u rejected: %s\n%s", i, err, xml);
				abort();
			}
			continue;
		}
		loaded++;
		snprintf(what, sizeof(what), "random %u", i);
		crosscheck_modes(c, what, i % 2);
		{
			_cleanup_(policy_compiled_freep) PolicyCompiled *pc =
				comp(c, POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_GROUPS_FROM_USERDB, ROOT);
			const PolicyCompiledName *e;

			POLICY_COMPILED_FOREACH_NAME(pc, j, e) {
				exact_names += !e->residual;
				own_exact += !e->own_residual;
				talk_exact += !e->talk_residual;
			}
		}
	}
	printf("test-compile: %u random configurations (%u rejected by the loader); entries exact for "
	       "OWN %u, TALK %u, both %u\n", loaded, rejected, own_exact, talk_exact, exact_names);
	assert(exact_names >= n / 8);
}

int main(int argc, char **argv) {
	if (argc > 1)
		n_random_rounds = (unsigned) atoi(argv[1]);

	RUN(own_basic);
	RUN(own_prefix);
	RUN(talk);
	RUN(owner_may_talk);
	RUN(contexts);
	RUN(optimizer_reset);
	RUN(attributes_residual);
	RUN(stock_like);
	RUN(session_like);
	RUN(anonymous);
	RUN(items);
	RUN(kernel_entries);
	RUN(real_core);
	RUN(random);

	printf("# %u checks, %u against exact entries\n", n_checks, n_exact_checks);
	return test_done();
}
