/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compile.c - dbus-daemon XML policy -> kdbus policy entries + residual
 * rules (see compile.h and doc/policy.md).
 *
 * DOC: the proof, per class and decision
 *
 * The snapshot policy.c builds for an identity is the concatenation of
 * rule lists: default, one per group of the identity (in its group order),
 * the user's, at_console true or false, mandatory.  For a class and a
 * decision each list is summarised as the set of outcomes it can produce
 * over the messages in question (N = no rule matched, A, D, X = decided by
 * a log="true" rule): walking the list, a rule that matches every message
 * sets the summary to its outcome, one that matches some adds its outcome.
 * A rule that removes the preceding ones (policy.c's snapshot_optimize())
 * acts as a rule matching everything with outcome D (nothing left before
 * it matches), followed by the rule itself.  The identity's outcome set is
 * the fold of its lists over a starting {D} (no match = deny), where a
 * summary without N replaces the set and one with N adds to it.  This
 * over-approximates the outcomes (it forgets which message gives which),
 * so "the set is {A}" or "{D}" proves a message-independent decision.
 *
 * Identities are enumerated by what the lists can tell apart: root, the
 * bus uid, each uid with a <policy user>, one uid without (OTHER), a
 * connection without uid (if the configuration admits those); each with
 * every ordered selection of the groups whose lists matter for the class
 * (at most MAX_GROUPS), at a console or not.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/protocol.h"
#include "policy/compile.h"
#include "util/format.h"
#include "util/macro.h"

#define DBUS_MAXIMUM_MESSAGE_UNIX_FDS 33554432u
#define NAME_MAX_LEN 255
#define MAX_GROUPS 6

/* outcome sets */
#define V_N 1u
#define V_A 2u
#define V_D 4u
#define V_X 8u

enum { KIND_OWN, KIND_TALK, N_KINDS };

/* how one rule acts on one class (for one kind) */
typedef enum Act {
	ACT_IRR,            /* matches no message in question */
	ACT_FULL,           /* matches all of them */
	ACT_PARTIAL,        /* matches some */
	ACT_RESET,          /* matches none, but removes the preceding rules */
	ACT_RESET_FULL,     /* removes the preceding rules and matches all */
	ACT_RESET_PARTIAL,  /* removes the preceding rules and matches some */
} Act;

typedef struct CRule {
	const BusConfigRule *r;
	size_t policy_index, rule_index;
	bool ignored;                /* its <policy user/group> does not resolve */
} CRule;

typedef struct CList {
	size_t *rules;               /* indexes into PolicyCompiled.crules */
	size_t n;
} CList;

typedef struct IdList {
	uint32_t id;
	CList list;
} IdList;

typedef struct Grants {
	bool world;
	uid_t *users;
	size_t n_users;
	gid_t *groups;
	size_t n_groups;
} Grants;

typedef struct Class {
	PolicyCompiledName pub;
	char *name;
	int parent;                  /* nearest enclosing wildcard class, -1 none */
	bool exact[N_KINDS];
	char *reason[N_KINDS];
	Grants grants[N_KINDS];
	struct kdbus_policy_access *access;
	size_t n_access;
	char *talk_key_str;
} Class;

typedef struct Ident {
	const char *label;
	uid_t uid;
	bool has_uid;
	bool bypass;
	bool listed;
	const CList *user;           /* its <policy user> list, NULL if none */
} Ident;

struct PolicyCompiled {
	unsigned flags;
	uid_t bus_uid;
	bool nss_names;              /* name uids/gids in reasons (NSS lookups) */

	CRule *crules;
	size_t n_crules;
	char **strings;              /* everything allocated for the public structs */
	size_t n_strings;

	CList defaults, mandatory, console_true, console_false;
	IdList *by_uid;
	size_t n_by_uid;
	IdList *by_gid;
	size_t n_by_gid;

	Class *classes;              /* exact and wildcard, sorted; then the fallback */
	size_t n_classes;
	Class fallback;

	PolicyCompiledRule *rules;
	size_t n_rules;

	char **talk_keys;
	size_t n_talk_keys;
};

/* ---------------------------------------------------------------------- */
/* small helpers */

static char *pc_keep(PolicyCompiled *pc, char *s) {
	char **t;

	if (!s)
		return NULL;
	t = realloc(pc->strings, (pc->n_strings + 1) * sizeof(char *));
	if (!t) {
		free(s);
		return NULL;
	}
	pc->strings = t;
	t[pc->n_strings++] = s;
	return s;
}

_printf_(2, 3) static char *pc_printf(PolicyCompiled *pc, const char *fmt, ...) {
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = format_v(fmt, ap);
	va_end(ap);
	return pc_keep(pc, s);
}

/* append to a malloc()ed string; on OOM the string becomes NULL */
_printf_(2, 3) static void sappend(char **s, const char *fmt, ...) {
	va_list ap;
	char *add, *n;

	if (!*s)
		return;
	va_start(ap, fmt);
	add = format_v(fmt, ap);
	va_end(ap);
	if (!add) {
		free(*s);
		*s = NULL;
		return;
	}
	n = format("%s%s", *s, add);
	free(add);
	free(*s);
	*s = n;
}

/* "1001" or "1001 (alice)" */
static void append_uid(const PolicyCompiled *pc, char **s, const char *sep, uid_t u) {
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (pc->nss_names && getpwuid_r(u, &pw, buf, sizeof(buf), &res) == 0 && res)
		sappend(s, "%suid %u (%s)", sep, (unsigned) u, res->pw_name);
	else
		sappend(s, "%suid %u", sep, (unsigned) u);
}

static void append_gid(const PolicyCompiled *pc, char **s, const char *sep, gid_t g) {
	struct group gr, *res = NULL;
	char buf[4096];

	if (pc->nss_names && getgrgid_r(g, &gr, buf, sizeof(buf), &res) == 0 && res)
		sappend(s, "%sgroup %u (%s)", sep, (unsigned) g, res->gr_name);
	else
		sappend(s, "%sgroup %u", sep, (unsigned) g);
}

static int list_push(CList *l, size_t idx) {
	size_t *t = realloc(l->rules, (l->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	l->rules = t;
	t[l->n++] = idx;
	return 0;
}

static CList *id_list(IdList **lists, size_t *n, uint32_t id, bool create) {
	IdList *t;

	for (size_t i = 0; i < *n; i++)
		if ((*lists)[i].id == id)
			return &(*lists)[i].list;
	if (!create)
		return NULL;
	t = realloc(*lists, (*n + 1) * sizeof(*t));
	if (!t)
		return NULL;
	*lists = t;
	t[*n] = (IdList) { .id = id };
	return &t[(*n)++].list;
}

/* one element of a well-known name: [A-Za-z_-][A-Za-z0-9_-]* */
static bool element_valid(const char *s, size_t n) {
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '-' ||
			  (i > 0 && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

static bool elements_valid(const char *s, size_t *ret_n) {
	size_t n = 0;
	const char *p = s;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (!element_valid(p, len))
			return false;
		n++;
		if (!dot)
			break;
		p = dot + 1;
	}
	*ret_n = n;
	return true;
}

/* a well-known name the core and dbus-daemon accept */
static bool name_valid(const char *s) {
	size_t n;

	return s && strlen(s) <= NAME_MAX_LEN && elements_valid(s, &n) && n >= 2;
}

/* a prefix whose wildcard "P.*" is a valid entry and covers valid names */
static bool prefix_valid(const char *s) {
	size_t n;

	return s && strlen(s) + 2 <= NAME_MAX_LEN && elements_valid(s, &n);
}

static bool is_driver(const char *s) {
	return s && streq(s, DRIVER_NAME);
}

/* ---------------------------------------------------------------------- */
/* rule classification */

static bool send_removes_preceding(const BusConfigRule *r) {
	/* policy.c rule_removes_preceding() */
	return r->message_type == BUS_CONFIG_MESSAGE_ANY && !r->path && !r->interface &&
	       !r->member && !r->error && !r->destination;
}

static bool fds_condition(const BusConfigRule *r) {
	return r->min_fds > 0 || r->max_fds < DBUS_MAXIMUM_MESSAGE_UNIX_FDS;
}

/* does the destination part of a send rule match a receiver of class @c?
 * 0 no, 1 always, 2 for some receivers */
static int send_dest_match(const BusConfigRule *r, const Class *c) {
	if (!r->destination)
		return 1;
	if (r->destination[0] == ':')
		return 2;   /* a unique name (or prefix of one): some receivers */
	if (c->pub.type == POLICY_CLASS_FALLBACK)
		return 0;
	if (!r->destination_is_prefix)
		return c->pub.type == POLICY_CLASS_EXACT && streq(r->destination, c->name) ? 1 : 0;
	return policy_name_has_prefix(c->name, r->destination) ? 1 : 0;
}

/*
 * A send rule against the messages TALK decides: unicast method calls and
 * signals without REPLY_SERIAL, any path/interface/member/fds, no error
 * name (policy.c lets a send_error rule match messages without one).
 */
static Act classify_send(const BusConfigRule *r, const Class *c) {
	bool removes = send_removes_preceding(r);
	bool matches = true, partial = false;
	int d;

	if (r->message_type == BUS_CONFIG_MESSAGE_METHOD_RETURN ||
	    r->message_type == BUS_CONFIG_MESSAGE_ERROR)
		matches = false;
	if (r->broadcast == BUS_CONFIG_TRISTATE_TRUE)
		matches = false;
	d = send_dest_match(r, c);
	if (d == 0)
		matches = false;
	if (d == 2)
		partial = true;
	if (r->message_type == BUS_CONFIG_MESSAGE_METHOD_CALL ||
	    r->message_type == BUS_CONFIG_MESSAGE_SIGNAL || r->path || r->interface || r->member ||
	    fds_condition(r))
		partial = true;

	if (removes) {
		if (!matches)
			return ACT_RESET;
		return partial ? ACT_RESET_PARTIAL : ACT_RESET_FULL;
	}
	if (!matches)
		return ACT_IRR;
	return partial ? ACT_PARTIAL : ACT_FULL;
}

static Act classify_own(const BusConfigRule *r, const Class *c) {
	if (!r->own)
		return ACT_FULL;        /* own="*" (it also removes the preceding: same effect) */
	if (c->pub.type == POLICY_CLASS_FALLBACK)
		return ACT_IRR;
	if (r->own_is_prefix)
		return policy_name_has_prefix(c->name, r->own) ? ACT_FULL : ACT_IRR;
	return c->pub.type == POLICY_CLASS_EXACT && streq(r->own, c->name) ? ACT_FULL : ACT_IRR;
}

static Act classify(const BusConfigRule *r, const Class *c, int kind) {
	if (kind == KIND_OWN)
		return r->type == BUS_CONFIG_RULE_OWN ? classify_own(r, c) : ACT_IRR;
	return r->type == BUS_CONFIG_RULE_SEND ? classify_send(r, c) : ACT_IRR;
}

static unsigned rule_outcome(const BusConfigRule *r) {
	if (r->type == BUS_CONFIG_RULE_SEND && r->log)
		return V_X;
	return r->allow ? V_A : V_D;
}

static unsigned summarize(const PolicyCompiled *pc, const CList *l, const Class *c, int kind) {
	unsigned s = V_N;

	if (!l)
		return V_N;
	for (size_t i = 0; i < l->n; i++) {
		const BusConfigRule *r = pc->crules[l->rules[i]].r;
		unsigned v = rule_outcome(r);

		switch (classify(r, c, kind)) {
		case ACT_IRR:
			break;
		case ACT_FULL:
			s = v;
			break;
		case ACT_PARTIAL:
			s |= v;
			break;
		case ACT_RESET:
			s = V_D;
			break;
		case ACT_RESET_FULL:
			s = v;
			break;
		case ACT_RESET_PARTIAL:
			s = V_D | v;
			break;
		}
	}
	return s;
}

static unsigned fold(unsigned v, unsigned s) {
	if (s & V_N)
		return (s & ~V_N) | v;
	return s;
}

/* ---------------------------------------------------------------------- */
/* loading the lists (as policy_new()) */

static int load_lists(PolicyCompiled *pc, const BusConfig *c, const PolicyLookup *lookup) {
	size_t n = 0;
	int r;

	for (size_t i = 0; i < c->n_policies; i++)
		n += c->policies[i].n_rules;
	pc->crules = calloc(n ? n : 1, sizeof(CRule));
	if (!pc->crules)
		return -ENOMEM;

	for (size_t i = 0; i < c->n_policies; i++) {
		const BusConfigPolicy *pol = &c->policies[i];
		CList *list = NULL;
		bool ignored = false;
		uint32_t id = 0;

		r = policy_context_id(lookup, pol, &id);
		if (r == -ENOMEM)
			return r;
		switch (pol->context) {
		case BUS_CONFIG_CONTEXT_DEFAULT:
			list = &pc->defaults;
			break;
		case BUS_CONFIG_CONTEXT_MANDATORY:
			list = &pc->mandatory;
			break;
		case BUS_CONFIG_CONTEXT_AT_CONSOLE:
			list = pol->at_console ? &pc->console_true : &pc->console_false;
			break;
		case BUS_CONFIG_CONTEXT_USER:
		case BUS_CONFIG_CONTEXT_GROUP:
			if (r < 0)
				ignored = true;
			else if (!(list = pol->context == BUS_CONFIG_CONTEXT_USER ?
					  id_list(&pc->by_uid, &pc->n_by_uid, id, true) :
					  id_list(&pc->by_gid, &pc->n_by_gid, id, true)))
				return -ENOMEM;
			break;
		}

		for (size_t j = 0; j < pol->n_rules; j++) {
			const BusConfigRule *rule = &pol->rules[j];
			size_t idx = pc->n_crules++;

			pc->crules[idx] = (CRule) {
				.r = rule, .policy_index = i, .rule_index = j, .ignored = ignored,
			};
			if (ignored)
				continue;
			if (rule->type != BUS_CONFIG_RULE_OWN && rule->type != BUS_CONFIG_RULE_SEND &&
			    rule->type != BUS_CONFIG_RULE_RECEIVE)
				continue;
			if (list_push(list, idx) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* classes */

static int class_find(const PolicyCompiled *pc, const char *name, PolicyCompiledClassType type) {
	for (size_t i = 0; i < pc->n_classes; i++)
		if (pc->classes[i].pub.type == type && streq(pc->classes[i].name, name))
			return (int)i;
	return -1;
}

static int class_add(PolicyCompiled *pc, const char *name, PolicyCompiledClassType type) {
	Class *t;

	if (type == POLICY_CLASS_EXACT && (!name_valid(name) || is_driver(name)))
		return 0;
	if (type == POLICY_CLASS_WILDCARD && !prefix_valid(name))
		return 0;
	if (class_find(pc, name, type) >= 0)
		return 0;
	t = realloc(pc->classes, (pc->n_classes + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	pc->classes = t;
	t[pc->n_classes] = (Class) { .pub.type = type, .parent = -1 };
	t[pc->n_classes].name = strdup(name);
	if (!t[pc->n_classes].name)
		return -ENOMEM;
	pc->n_classes++;
	return 0;
}

static size_t n_elements(const char *s) {
	size_t n = 1;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

static int class_cmp(const void *a, const void *b) {
	const Class *x = a, *y = b;
	size_t ex = n_elements(x->name), ey = n_elements(y->name);
	int r;

	/* shallower first, then by name, exact before wildcard */
	if (ex != ey)
		return ex < ey ? -1 : 1;
	r = strcmp(x->name, y->name);
	if (r)
		return r;
	return (int)x->pub.type - (int)y->pub.type;
}

static int collect_classes(PolicyCompiled *pc) {
	int r;

	for (size_t i = 0; i < pc->n_crules; i++) {
		const BusConfigRule *rule = pc->crules[i].r;
		const char *n = NULL;
		bool prefix = false;

		if (rule->type == BUS_CONFIG_RULE_OWN && rule->own) {
			n = rule->own;
			prefix = rule->own_is_prefix;
		} else if (rule->type == BUS_CONFIG_RULE_SEND && rule->destination &&
			   rule->destination[0] != ':') {
			n = rule->destination;
			prefix = rule->destination_is_prefix;
		}
		if (!n)
			continue;
		r = class_add(pc, n, POLICY_CLASS_EXACT);
		if (r < 0)
			return r;
		if (prefix) {
			r = class_add(pc, n, POLICY_CLASS_WILDCARD);
			if (r < 0)
				return r;
		}
	}
	if (pc->n_classes > 1)
		qsort(pc->classes, pc->n_classes, sizeof(Class), class_cmp);

	for (size_t i = 0; i < pc->n_classes; i++) {
		Class *c = &pc->classes[i];
		size_t best = 0;

		for (size_t j = 0; j < pc->n_classes; j++) {
			const Class *w = &pc->classes[j];
			size_t l = strlen(w->name);

			if (w->pub.type != POLICY_CLASS_WILDCARD || l >= strlen(c->name))
				continue;
			if (!policy_name_has_prefix(c->name, w->name))
				continue;
			if (l > best) {
				best = l;
				c->parent = (int)j;
			}
		}
	}
	pc->fallback = (Class) { .pub.type = POLICY_CLASS_FALLBACK, .parent = -1 };
	return 0;
}

/* ---------------------------------------------------------------------- */
/* the analysis */

typedef struct Analysis {
	PolicyCompiled *pc;
	Class *c;
	const Ident *idents;
	size_t n_idents;
	size_t other;                /* index of OTHER */
	size_t anon;                 /* index of ANON or SIZE_MAX */
	size_t *rg;                  /* relevant by_gid indexes */
	size_t n_rg;
	size_t (*orders)[MAX_GROUPS + 1];  /* [0] = length, then positions into rg */
	size_t n_orders;
	/* summaries */
	unsigned s_default[N_KINDS], s_mandatory[N_KINDS], s_ct[N_KINDS], s_cf[N_KINDS];
	unsigned *s_user[N_KINDS];   /* per identity */
	unsigned *s_gid[N_KINDS];
	/* outcomes [kind][ident][order][console] */
	unsigned *v[N_KINDS];
} Analysis;

#define VAL(a, k, i, o, con) ((a)->v[k][(((i) * (a)->n_orders) + (o)) * 2 + (con)])

static void gen_orders(Analysis *a, size_t *cur, size_t len, bool *used) {
	size_t *o = a->orders[a->n_orders++];

	o[0] = len;
	for (size_t i = 0; i < len; i++)
		o[1 + i] = cur[i];
	for (size_t g = 0; g < a->n_rg; g++) {
		if (used[g])
			continue;
		used[g] = true;
		cur[len] = g;
		gen_orders(a, cur, len + 1, used);
		used[g] = false;
	}
}

static size_t count_orders(size_t n) {
	/* sum over k of n!/(n-k)! */
	size_t total = 0, p = 1;

	for (size_t k = 0; k <= n; k++) {
		total += p;
		p *= n - k;
	}
	return total;
}

static bool order_has(const Analysis *a, size_t o, size_t g) {
	const size_t *ord = a->orders[o];

	for (size_t i = 0; i < ord[0]; i++)
		if (ord[1 + i] == g)
			return true;
	return false;
}

static unsigned evaluate(const Analysis *a, int kind, size_t i, size_t o, int console) {
	const Ident *id = &a->idents[i];
	unsigned v = V_D;

	v = fold(v, a->s_default[kind]);
	if (id->has_uid) {
		const size_t *ord = a->orders[o];

		for (size_t k = 0; k < ord[0]; k++)
			v = fold(v, a->s_gid[kind][a->rg[ord[1 + k]]]);
		v = fold(v, a->s_user[kind][i]);
		v = fold(v, console ? a->s_ct[kind] : a->s_cf[kind]);
	}
	v = fold(v, a->s_mandatory[kind]);
	return v;
}

static char *describe_ident(const Analysis *a, size_t i, size_t o, int console, bool with_console) {
	const Ident *id = &a->idents[i];
	const size_t *ord = a->orders[o];
	char *s = format("%s", id->label);

	if (id->has_uid && ord[0] > 0) {
		sappend(&s, " in");
		for (size_t k = 0; k < ord[0]; k++)
			append_gid(a->pc, &s, k ? ", then " : " ", (gid_t) a->pc->by_gid[a->rg[ord[1 + k]]].id);
	}
	if (id->has_uid && with_console)
		sappend(&s, console ? " at a console" : " not at a console");
	return s;
}

static const char *kind_name(int kind) {
	return kind == KIND_OWN ? "OWN" : "TALK";
}

static bool val_allowed(unsigned v) {
	return v == V_A;
}

/* the verdict of one kind: sets c->exact[kind], c->reason[kind], c->grants[kind] */
static int derive(Analysis *a, int kind) {
	PolicyCompiled *pc = a->pc;
	Class *c = a->c;
	Grants *g = &c->grants[kind];
	bool world;
	bool *ggrant = NULL;
	char *why = NULL;

	c->exact[kind] = false;

	/* message-independent */
	for (size_t i = 0; i < a->n_idents && !why; i++)
		for (size_t o = 0; o < a->n_orders && !why; o++)
			for (int con = 0; con < 2 && !why; con++) {
				unsigned v = VAL(a, kind, i, o, con);

				if (v == V_A || v == V_D)
					continue;
				_cleanup_free_ char *d = describe_ident(a, i, o, con, true);

				if (v & V_X)
					why = format("decided by a log=\"true\" rule for %s (the daemon logs it)",
						      d ? d : "?");
				else
					why = format("depends on the message for %s (interface/member/path/type/fds "
						      "conditions, or no rule for some messages)", d ? d : "?");
			}
	if (why)
		goto residual;

	/* at_console */
	for (size_t i = 0; i < a->n_idents && !why; i++)
		for (size_t o = 0; o < a->n_orders && !why; o++)
			if (VAL(a, kind, i, o, 0) != VAL(a, kind, i, o, 1)) {
				_cleanup_free_ char *d = describe_ident(a, i, o, 0, false);

				why = format("depends on at_console for %s", d ? d : "?");
			}
	if (why)
		goto residual;

	/* privileged connections and the bus uid pass the core's checks */
	for (size_t i = 0; i < a->n_idents && !why; i++) {
		if (!a->idents[i].bypass)
			continue;
		for (size_t o = 0; o < a->n_orders && !why; o++)
			if (!val_allowed(VAL(a, kind, i, o, 0))) {
				_cleanup_free_ char *d = describe_ident(a, i, o, 0, false);

				why = format("denied to %s, whom the core lets do everything", d ? d : "?");
			}
	}
	if (why)
		goto residual;

	/* groups as the core sees them */
	if (!(pc->flags & POLICY_COMPILE_GROUPS_FROM_USERDB))
		for (size_t i = 0; i < a->n_idents && !why; i++)
			for (size_t o = 1; o < a->n_orders && !why; o++)
				if (VAL(a, kind, i, o, 0) != VAL(a, kind, i, 0, 0)) {
					_cleanup_free_ char *d = describe_ident(a, i, o, 0, false);

					why = format("depends on group membership (%s); the core sees the "
						      "socket's groups, dbus-daemon the user database's", d ? d : "?");
				}
	if (why)
		goto residual;

	world = val_allowed(VAL(a, kind, a->other, 0, 0));
	if (a->anon != SIZE_MAX && val_allowed(VAL(a, kind, a->anon, 0, 0)) != world) {
		why = format("%s to connections without uid but %s to other uids",
			      world ? "denied" : "allowed", world ? "allowed" : "denied");
		goto residual;
	}

	if (world) {
		for (size_t i = 0; i < a->n_idents && !why; i++)
			for (size_t o = 0; o < a->n_orders && !why; o++)
				if (!val_allowed(VAL(a, kind, i, o, 0))) {
					_cleanup_free_ char *d = describe_ident(a, i, o, 0, false);

					why = format("allowed to every uid without rules but denied to %s "
						      "(kdbus grants cannot deny)", d ? d : "?");
				}
		if (why)
			goto residual;
		g->world = true;
	} else {
		ggrant = calloc(a->n_rg ? a->n_rg : 1, sizeof(bool));
		if (!ggrant)
			return -ENOMEM;
		/* single-group orders come right after the empty one? find them */
		for (size_t o = 0; o < a->n_orders; o++)
			if (a->orders[o][0] == 1)
				ggrant[a->orders[o][1]] = val_allowed(VAL(a, kind, a->other, o, 0));

		for (size_t i = 0; i < a->n_idents && !why; i++) {
			const Ident *id = &a->idents[i];
			bool ugrant;

			if (id->bypass)
				continue;
			ugrant = val_allowed(VAL(a, kind, i, 0, 0));
			if (!id->listed && ugrant) {
				why = format("allowed to %s but not to other uids", id->label);
				break;
			}
			for (size_t o = 0; o < a->n_orders && !why; o++) {
				bool expect = ugrant;

				for (size_t k = 0; k < a->n_rg && !expect; k++)
					expect = ggrant[k] && order_has(a, o, k);
				if (!id->has_uid)
					expect = ugrant;
				if (val_allowed(VAL(a, kind, i, o, 0)) != expect) {
					_cleanup_free_ char *d = describe_ident(a, i, o, 0, false);

					why = format("%s to %s, which no combination of USER and GROUP grants gives "
						      "(group order or a group's deny)", expect ? "denied" : "allowed",
						      d ? d : "?");
				}
			}
			if (ugrant && !why) {
				uid_t *t = realloc(g->users, (g->n_users + 1) * sizeof(uid_t));

				if (!t) {
					free(ggrant);
					return -ENOMEM;
				}
				g->users = t;
				t[g->n_users++] = id->uid;
			}
		}
		if (why) {
			free(ggrant);
			goto residual;
		}
		for (size_t k = 0; k < a->n_rg; k++) {
			gid_t *t;

			if (!ggrant[k])
				continue;
			t = realloc(g->groups, (g->n_groups + 1) * sizeof(gid_t));
			if (!t) {
				free(ggrant);
				return -ENOMEM;
			}
			g->groups = t;
			t[g->n_groups++] = (gid_t) pc->by_gid[a->rg[k]].id;
		}
		free(ggrant);
	}

	/* TALK: connections of one uid talk freely in the core, and an
	 * OWN grant implies TALK */
	if (kind == KIND_TALK) {
		for (size_t i = 0; i < a->n_idents && !why; i++)
			for (size_t o = 0; o < a->n_orders * 2 && !why; o++)
				if (val_allowed(VAL(a, KIND_OWN, i, o / 2, o % 2)) &&
				    !val_allowed(VAL(a, KIND_TALK, i, o / 2, o % 2))) {
					_cleanup_free_ char *d = describe_ident(a, i, o / 2, o % 2, true);

					why = format("%s may own the name but not send to it; the core lets "
						      "connections of one uid talk, and OWN implies TALK", d ? d : "?");
				}
		if (!why && !c->exact[KIND_OWN] && !g->world)
			why = format("OWN is residual, so the entry grants WORLD OWN, which includes TALK");
		if (!why && !g->world && !(pc->flags & POLICY_COMPILE_TALK_ENTRIES))
			why = format("restricted TALK needs POLICY_COMPILE_TALK_ENTRIES: the core would also "
				      "filter broadcasts with it, ignore queued names, and deny names "
				      "without entry next to a covered one");
		if (why)
			goto residual;
	}

	if (c->pub.type == POLICY_CLASS_FALLBACK && !g->world) {
		why = format("names without an entry get the bus's fallback, which is WORLD or nothing");
		goto residual;
	}

	/* describe the grant */
	{
		char *s = format("exact: ");

		if (g->world)
			sappend(&s, "everyone");
		else {
			bool any = false;

			for (size_t i = 0; i < g->n_users; i++) {
				append_uid(pc, &s, any ? ", " : "", g->users[i]);
				any = true;
			}
			for (size_t i = 0; i < g->n_groups; i++) {
				append_gid(pc, &s, any ? ", " : "", g->groups[i]);
				any = true;
			}
			if (any)
				sappend(&s, " (and root%s)", pc->bus_uid != 0 ? ", the bus uid" : "");
			else
				sappend(&s, "root%s only", pc->bus_uid != 0 ? " and the bus uid" : "");
		}
		c->reason[kind] = s;
		if (!s)
			return -ENOMEM;
	}
	c->exact[kind] = true;
	return 0;

residual:
	if (!why)
		return -ENOMEM;
	c->reason[kind] = format("residual: %s", why);
	free(why);
	free(g->users);
	free(g->groups);
	*g = (Grants) {};
	return c->reason[kind] ? 0 : -ENOMEM;
}

static int analyze_class(PolicyCompiled *pc, Class *c, const Ident *idents, size_t n_idents,
			 size_t other, size_t anon) {
	Analysis a = {
		.pc = pc, .c = c, .idents = idents, .n_idents = n_idents, .other = other, .anon = anon,
	};
	int r = -ENOMEM;

	for (int k = 0; k < N_KINDS; k++) {
		a.s_default[k] = summarize(pc, &pc->defaults, c, k);
		a.s_mandatory[k] = summarize(pc, &pc->mandatory, c, k);
		a.s_ct[k] = summarize(pc, &pc->console_true, c, k);
		a.s_cf[k] = summarize(pc, &pc->console_false, c, k);
		a.s_gid[k] = calloc(pc->n_by_gid + 1, sizeof(unsigned));
		if (!a.s_gid[k])
			goto out;
		for (size_t g = 0; g < pc->n_by_gid; g++)
			a.s_gid[k][g] = summarize(pc, &pc->by_gid[g].list, c, k);
		a.s_user[k] = calloc(n_idents, sizeof(unsigned));
		if (!a.s_user[k])
			goto out;
		for (size_t i = 0; i < n_idents; i++)
			a.s_user[k][i] = summarize(pc, idents[i].user, c, k);
	}
	a.rg = calloc(pc->n_by_gid + 1, sizeof(size_t));
	if (!a.rg)
		goto out;
	for (size_t g = 0; g < pc->n_by_gid; g++)
		if (a.s_gid[KIND_OWN][g] != V_N || a.s_gid[KIND_TALK][g] != V_N)
			a.rg[a.n_rg++] = g;

	if (a.n_rg > MAX_GROUPS) {
		for (int k = 0; k < N_KINDS; k++) {
			c->exact[k] = false;
			c->reason[k] = format("residual: %zu groups have rules for this name (at most %d are "
					       "analysed)", a.n_rg, MAX_GROUPS);
			if (!c->reason[k])
				goto out;
		}
		r = 0;
		goto out;
	}

	{
		size_t cur[MAX_GROUPS + 1];
		bool used[MAX_GROUPS + 1] = {};

		a.orders = calloc(count_orders(a.n_rg), sizeof(*a.orders));
		if (!a.orders)
			goto out;
		gen_orders(&a, cur, 0, used);
	}

	for (int k = 0; k < N_KINDS; k++) {
		a.v[k] = calloc(n_idents * a.n_orders * 2, sizeof(unsigned));
		if (!a.v[k])
			goto out;
		for (size_t i = 0; i < n_idents; i++)
			for (size_t o = 0; o < a.n_orders; o++)
				for (int con = 0; con < 2; con++)
					VAL(&a, k, i, o, con) = evaluate(&a, k, i, o, con);
	}

	r = derive(&a, KIND_OWN);
	if (r < 0)
		goto out;
	r = derive(&a, KIND_TALK);

out:
	for (int k = 0; k < N_KINDS; k++) {
		free(a.s_gid[k]);
		free(a.s_user[k]);
		free(a.v[k]);
	}
	free(a.rg);
	free(a.orders);
	return r;
}

/* ---------------------------------------------------------------------- */
/* entries */

static int access_add(Class *c, uint64_t type, uint64_t id, uint64_t access) {
	struct kdbus_policy_access *t;

	for (size_t i = 0; i < c->n_access; i++)
		if (c->access[i].type == type && c->access[i].id == id) {
			if (c->access[i].access < access)
				c->access[i].access = access;
			return 0;
		}
	t = realloc(c->access, (c->n_access + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	c->access = t;
	t[c->n_access++] = (struct kdbus_policy_access) { .type = type, .access = access, .id = id };
	return 0;
}

static int grants_add(Class *c, const Grants *g, uint64_t access) {
	int r;

	if (g->world)
		return access_add(c, KDBUS_POLICY_ACCESS_WORLD, 0, access);
	for (size_t i = 0; i < g->n_users; i++) {
		r = access_add(c, KDBUS_POLICY_ACCESS_USER, g->users[i], access);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < g->n_groups; i++) {
		r = access_add(c, KDBUS_POLICY_ACCESS_GROUP, g->groups[i], access);
		if (r < 0)
			return r;
	}
	return 0;
}

static int build_entry(PolicyCompiled *pc, Class *c) {
	int r;

	if (!c->exact[KIND_OWN]) {
		r = access_add(c, KDBUS_POLICY_ACCESS_WORLD, 0,
			       (pc->flags & POLICY_COMPILE_NO_RESIDUAL_OWN) ? KDBUS_POLICY_TALK : KDBUS_POLICY_OWN);
		if (r < 0)
			return r;
	} else {
		bool world_own = c->grants[KIND_OWN].world;

		r = grants_add(c, &c->grants[KIND_OWN], KDBUS_POLICY_OWN);
		if (r < 0)
			return r;
		if (!world_own) {
			if (c->exact[KIND_TALK])
				r = grants_add(c, &c->grants[KIND_TALK], KDBUS_POLICY_TALK);
			else
				r = access_add(c, KDBUS_POLICY_ACCESS_WORLD, 0, KDBUS_POLICY_TALK);
			if (r < 0)
				return r;
		}
	}
	/* a WORLD grant makes the others redundant */
	for (size_t i = 0; i < c->n_access; i++)
		if (c->access[i].type == KDBUS_POLICY_ACCESS_WORLD) {
			uint64_t w = c->access[i].access;
			size_t out = 0;

			for (size_t j = 0; j < c->n_access; j++)
				if (c->access[j].type == KDBUS_POLICY_ACCESS_WORLD || c->access[j].access > w)
					c->access[out++] = c->access[j];
			c->n_access = out;
			break;
		}

	/* the key TALK decisions are compared by */
	if (c->exact[KIND_TALK]) {
		const Grants *g = &c->grants[KIND_TALK];

		c->talk_key_str = format("%s", g->world ? "W" : "");
		for (size_t i = 0; !g->world && i < g->n_users; i++)
			sappend(&c->talk_key_str, "u%u,", (unsigned) g->users[i]);
		for (size_t i = 0; !g->world && i < g->n_groups; i++)
			sappend(&c->talk_key_str, "g%u,", (unsigned) g->groups[i]);
		if (!c->talk_key_str)
			return -ENOMEM;
	}
	c->pub.talk_key = SIZE_MAX;
	if (c->talk_key_str) {
		for (size_t i = 0; i < pc->n_talk_keys; i++)
			if (streq(pc->talk_keys[i], c->talk_key_str))
				c->pub.talk_key = i;
		if (c->pub.talk_key == SIZE_MAX) {
			char **t = realloc(pc->talk_keys, (pc->n_talk_keys + 1) * sizeof(char *));

			if (!t)
				return -ENOMEM;
			pc->talk_keys = t;
			t[pc->n_talk_keys] = strdup(c->talk_key_str);
			if (!t[pc->n_talk_keys])
				return -ENOMEM;
			c->pub.talk_key = pc->n_talk_keys++;
		}
	}

	c->pub.name = c->name;
	c->pub.own_residual = !c->exact[KIND_OWN];
	c->pub.talk_residual = !c->exact[KIND_TALK];
	c->pub.residual = c->pub.own_residual || c->pub.talk_residual;
	c->pub.own_reason = c->reason[KIND_OWN];
	c->pub.talk_reason = c->reason[KIND_TALK];
	c->pub.access = c->access;
	c->pub.n_access = c->n_access;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* rules: rendering and placement */

static char *render_rule(const BusConfigRule *r) {
	char *s = format("<%s", r->allow ? "allow" : "deny");
	bool any = false;

#define ATTR(name, val) do { sappend(&s, " %s=\"%s\"", (name), (val)); any = true; } while (0)
	switch (r->type) {
	case BUS_CONFIG_RULE_SEND:
	case BUS_CONFIG_RULE_RECEIVE: {
		bool send = r->type == BUS_CONFIG_RULE_SEND;
		const char *p = send ? "send_" : "receive_";
		char buf[64];

		if (send && r->destination)
			ATTR(r->destination_is_prefix ? "send_destination_prefix" : "send_destination", r->destination);
		if (!send && r->sender)
			ATTR("receive_sender", r->sender);
		if (r->message_type != BUS_CONFIG_MESSAGE_ANY) {
			snprintf(buf, sizeof(buf), "%stype", p);
			ATTR(buf, bus_config_message_type_to_string(r->message_type));
		}
		if (r->path) {
			snprintf(buf, sizeof(buf), "%spath", p);
			ATTR(buf, r->path);
		}
		if (r->interface) {
			snprintf(buf, sizeof(buf), "%sinterface", p);
			ATTR(buf, r->interface);
		}
		if (r->member) {
			snprintf(buf, sizeof(buf), "%smember", p);
			ATTR(buf, r->member);
		}
		if (r->error) {
			snprintf(buf, sizeof(buf), "%serror", p);
			ATTR(buf, r->error);
		}
		if (send && r->broadcast != BUS_CONFIG_TRISTATE_ANY)
			ATTR("send_broadcast", r->broadcast == BUS_CONFIG_TRISTATE_TRUE ? "true" : "false");
		if (r->requested_reply != r->allow) {
			snprintf(buf, sizeof(buf), "%srequested_reply", p);
			ATTR(buf, r->requested_reply ? "true" : "false");
		}
		if (r->min_fds > 0) {
			snprintf(buf, sizeof(buf), "%u", r->min_fds);
			ATTR("min_fds", buf);
		}
		if (r->max_fds < DBUS_MAXIMUM_MESSAGE_UNIX_FDS) {
			snprintf(buf, sizeof(buf), "%u", r->max_fds);
			ATTR("max_fds", buf);
		}
		if (r->eavesdrop)
			ATTR("eavesdrop", "true");
		if (send && r->log)
			ATTR("log", "true");
		if (!any)
			ATTR(send ? "send_destination" : "receive_sender", "*");
		break;
	}
	case BUS_CONFIG_RULE_OWN:
		ATTR(r->own_is_prefix ? "own_prefix" : "own", r->own ? r->own : "*");
		break;
	case BUS_CONFIG_RULE_USER:
		ATTR("user", r->user ? r->user : "*");
		break;
	case BUS_CONFIG_RULE_GROUP:
		ATTR("group", r->group ? r->group : "*");
		break;
	}
#undef ATTR
	sappend(&s, "/>");
	return s;
}

static char *render_context(const BusConfigPolicy *p) {
	switch (p->context) {
	case BUS_CONFIG_CONTEXT_DEFAULT:
		return format("<policy context=\"default\">");
	case BUS_CONFIG_CONTEXT_MANDATORY:
		return format("<policy context=\"mandatory\">");
	case BUS_CONFIG_CONTEXT_USER:
		return format("<policy user=\"%s\">", strempty(p->user));
	case BUS_CONFIG_CONTEXT_GROUP:
		return format("<policy group=\"%s\">", strempty(p->group));
	case BUS_CONFIG_CONTEXT_AT_CONSOLE:
		return format("<policy at_console=\"%s\">", p->at_console ? "true" : "false");
	}
	return format("<policy>");
}

static char *class_label(const Class *c) {
	if (c->pub.type == POLICY_CLASS_FALLBACK)
		return format("(names without entry)");
	if (c->pub.type == POLICY_CLASS_WILDCARD)
		return format("%s.*", c->name);
	return format("%s", c->name);
}

/* the send attributes kdbus cannot carry */
static char *send_conditions(const BusConfigRule *r) {
	char *s = format("%s", "");

	if (r->message_type != BUS_CONFIG_MESSAGE_ANY)
		sappend(&s, " send_type");
	if (r->path)
		sappend(&s, " send_path");
	if (r->interface)
		sappend(&s, " send_interface");
	if (r->member)
		sappend(&s, " send_member");
	if (r->error)
		sappend(&s, " send_error");
	if (r->broadcast != BUS_CONFIG_TRISTATE_ANY)
		sappend(&s, " send_broadcast");
	if (fds_condition(r))
		sappend(&s, " min_fds/max_fds");
	if (r->requested_reply != r->allow)
		sappend(&s, " send_requested_reply");
	if (r->eavesdrop)
		sappend(&s, " eavesdrop");
	if (r->log)
		sappend(&s, " log");
	return s;
}

static Class *class_at(PolicyCompiled *pc, size_t i) {
	return i < pc->n_classes ? &pc->classes[i] : &pc->fallback;
}

static char *place_rule(PolicyCompiled *pc, const CRule *cr, PolicyCompiledRulePlace *place) {
	const BusConfigRule *r = cr->r;
	int kind;
	char *s;
	bool matched = false;

	*place = POLICY_RULE_RESIDUAL;
	if (cr->ignored)
		return format("its <policy> names an unknown user or group: dbus-daemon ignores it");

	switch (r->type) {
	case BUS_CONFIG_RULE_USER:
	case BUS_CONFIG_RULE_GROUP:
		return format("connection admission (policy_check_connect() at connect time)");
	case BUS_CONFIG_RULE_RECEIVE:
		return format("receive rule: the recipient side is checked per message");
	case BUS_CONFIG_RULE_OWN:
		kind = KIND_OWN;
		break;
	case BUS_CONFIG_RULE_SEND: {
		_cleanup_free_ char *cond = NULL;

		kind = KIND_TALK;
		if (!r->destination)
			return format("no send_destination: applies to messages to every receiver");
		if (is_driver(r->destination))
			return format("to the bus driver, which is not a kdbus connection");
		if (r->destination[0] == ':')
			return format("unique-name destination");
		cond = send_conditions(r);
		if (!cond)
			return NULL;
		if (cond[0])
			return format("conditions kdbus cannot express:%s", cond);
		break;
	}
	default:
		return format("unknown rule type");
	}

	/* every class the rule matches must be exact */
	for (size_t i = 0; i <= pc->n_classes; i++) {
		Class *c = class_at(pc, i);
		Act a = classify(r, c, kind);

		if (a == ACT_IRR)
			continue;
		matched = true;
		if (!c->exact[kind]) {
			_cleanup_free_ char *l = class_label(c);

			return format("%s of %s is %s", kind_name(kind), l ? l : "?", c->reason[kind]);
		}
	}
	if (!matched)
		return format("matches no valid well-known name");

	*place = POLICY_RULE_KDBUS;
	s = format("%s of", kind_name(kind));
	for (size_t i = 0; i <= pc->n_classes; i++) {
		Class *c = class_at(pc, i);

		if (classify(r, c, kind) == ACT_IRR)
			continue;
		_cleanup_free_ char *l = class_label(c);
		sappend(&s, " %s", l ? l : "?");
	}
	return s;
}

/* ---------------------------------------------------------------------- */

static bool listen_is_unix(const char *a) {
	return strncmp(a, "unix:", 5) == 0 || strncmp(a, "systemd:", 8) == 0;
}

int policy_compile(const BusConfig *c, const PolicyCompileOptions *opts, PolicyCompiled **ret) {
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;
	const PolicyLookup *lookup = opts ? opts->lookup : NULL;
	Ident *idents = NULL;
	size_t n_idents = 0, other, anon = SIZE_MAX;
	int r;

	assert_return(c, -EINVAL);
	assert_return(ret, -EINVAL);

	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	pc->flags = opts ? opts->flags : 0;
	pc->bus_uid = opts ? opts->bus_uid : 0;
	if (pc->bus_uid == POLICY_UID_INVALID)
		pc->bus_uid = 0;
	pc->nss_names = !lookup;
	if (c->allow_anonymous)
		pc->flags |= POLICY_COMPILE_ANONYMOUS;
	for (size_t i = 0; c->listen && c->listen[i]; i++)
		if (!listen_is_unix(c->listen[i]))
			pc->flags |= POLICY_COMPILE_ANONYMOUS;

	r = load_lists(pc, c, lookup);
	if (r < 0)
		return r;
	r = collect_classes(pc);
	if (r < 0)
		return r;

	/* identities */
	idents = calloc(pc->n_by_uid + 4, sizeof(Ident));
	if (!idents)
		return -ENOMEM;
	idents[n_idents++] = (Ident) {
		.label = "uid 0", .uid = 0, .has_uid = true, .bypass = true, .listed = true,
		.user = id_list(&pc->by_uid, &pc->n_by_uid, 0, false),
	};
	if (pc->bus_uid != 0)
		idents[n_idents++] = (Ident) {
			.label = "the bus uid", .uid = pc->bus_uid, .has_uid = true, .bypass = true, .listed = true,
			.user = id_list(&pc->by_uid, &pc->n_by_uid, pc->bus_uid, false),
		};
	for (size_t i = 0; i < pc->n_by_uid; i++) {
		uid_t u = pc->by_uid[i].id;
		char *l;

		if (u == 0 || u == pc->bus_uid)
			continue;
		l = format("%s", "");
		append_uid(pc, &l, "", u);
		l = pc_keep(pc, l);
		if (!l) {
			free(idents);
			return -ENOMEM;
		}
		idents[n_idents++] = (Ident) {
			.label = l, .uid = u, .has_uid = true, .listed = true, .user = &pc->by_uid[i].list,
		};
	}
	other = n_idents;
	idents[n_idents++] = (Ident) { .label = "a uid without <policy user>", .uid = POLICY_UID_INVALID - 1,
				       .has_uid = true };
	if (pc->flags & POLICY_COMPILE_ANONYMOUS) {
		anon = n_idents;
		idents[n_idents++] = (Ident) { .label = "a connection without uid", .uid = POLICY_UID_INVALID };
	}

	for (size_t i = 0; i <= pc->n_classes; i++) {
		Class *cl = class_at(pc, i);

		r = analyze_class(pc, cl, idents, n_idents, other, anon);
		if (r < 0)
			break;
		r = build_entry(pc, cl);
		if (r < 0)
			break;
	}
	free(idents);
	if (r < 0)
		return r;
	/* the fallback class has no entry */
	free(pc->fallback.access);
	pc->fallback.access = NULL;
	pc->fallback.n_access = 0;
	pc->fallback.pub.access = NULL;
	pc->fallback.pub.n_access = 0;

	/* rules */
	pc->rules = calloc(pc->n_crules ? pc->n_crules : 1, sizeof(PolicyCompiledRule));
	if (!pc->rules)
		return -ENOMEM;
	for (size_t i = 0; i < pc->n_crules; i++) {
		const CRule *cr = &pc->crules[i];
		const BusConfigPolicy *pol = &c->policies[cr->policy_index];
		PolicyCompiledRule *out = &pc->rules[pc->n_rules];

		out->file = pc_printf(pc, "%s", strempty(cr->r->file));
		out->line = cr->r->line;
		out->text = pc_keep(pc, render_rule(cr->r));
		out->context = pc_keep(pc, render_context(pol));
		out->reason = pc_keep(pc, place_rule(pc, cr, &out->place));
		out->policy_index = cr->policy_index;
		out->rule_index = cr->rule_index;
		if (!out->file || !out->text || !out->context || !out->reason)
			return -ENOMEM;
		pc->n_rules++;
	}

	*ret = TAKE_PTR(pc);
	return 0;
}

static void class_done(Class *c) {
	free(c->name);
	for (int k = 0; k < N_KINDS; k++) {
		free(c->reason[k]);
		free(c->grants[k].users);
		free(c->grants[k].groups);
	}
	free(c->access);
	free(c->talk_key_str);
}

PolicyCompiled *policy_compiled_free(PolicyCompiled *pc) {
	if (!pc)
		return NULL;
	for (size_t i = 0; i < pc->n_strings; i++)
		free(pc->strings[i]);
	free(pc->strings);
	free(pc->crules);
	free(pc->defaults.rules);
	free(pc->mandatory.rules);
	free(pc->console_true.rules);
	free(pc->console_false.rules);
	for (size_t i = 0; i < pc->n_by_uid; i++)
		free(pc->by_uid[i].list.rules);
	free(pc->by_uid);
	for (size_t i = 0; i < pc->n_by_gid; i++)
		free(pc->by_gid[i].list.rules);
	free(pc->by_gid);
	for (size_t i = 0; i < pc->n_classes; i++)
		class_done(&pc->classes[i]);
	free(pc->classes);
	class_done(&pc->fallback);
	free(pc->rules);
	for (size_t i = 0; i < pc->n_talk_keys; i++)
		free(pc->talk_keys[i]);
	free(pc->talk_keys);
	free(pc);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* queries */

size_t policy_compiled_n_names(const PolicyCompiled *pc) {
	return pc ? pc->n_classes : 0;
}

const PolicyCompiledName *policy_compiled_get_name(const PolicyCompiled *pc, size_t i) {
	if (!pc || i >= pc->n_classes)
		return NULL;
	return &pc->classes[i].pub;
}

const PolicyCompiledName *policy_compiled_get_fallback_class(const PolicyCompiled *pc) {
	return pc ? &pc->fallback.pub : NULL;
}

static const Class *lookup_class(const PolicyCompiled *pc, const char *name) {
	const Class *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < pc->n_classes; i++) {
		const Class *c = &pc->classes[i];

		if (c->pub.type == POLICY_CLASS_EXACT && streq(c->name, name))
			return c;
	}
	for (size_t i = 0; i < pc->n_classes; i++) {
		const Class *c = &pc->classes[i];
		size_t l = strlen(c->name);

		if (c->pub.type != POLICY_CLASS_WILDCARD || l >= strlen(name))
			continue;
		if (policy_name_has_prefix(name, c->name) && l > best_len) {
			best = c;
			best_len = l;
		}
	}
	return best ? best : &pc->fallback;
}

const PolicyCompiledName *policy_compiled_lookup(const PolicyCompiled *pc, const char *name) {
	if (!pc || !name)
		return NULL;
	return &lookup_class(pc, name)->pub;
}

int policy_compiled_get_fallback(const PolicyCompiled *pc) {
	(void) pc;
	/* residual classes rely on it: what no entry covers is the daemon's */
	return KDBUS_POLICY_OWN;
}

bool policy_compiled_own_is_exact(const PolicyCompiled *pc, const char *name) {
	if (!pc || !name || !name_valid(name))
		return false;
	return lookup_class(pc, name)->exact[KIND_OWN];
}

bool policy_compiled_talk_is_exact(const PolicyCompiled *pc, const char *const *owned,
				   const char *const *queued) {
	size_t key = SIZE_MAX;
	bool any = false;

	if (!pc)
		return false;
	for (int l = 0; l < 2; l++)
		for (const char *const *n = l ? queued : owned; n && *n; n++) {
			const Class *c;

			if ((*n)[0] == ':')
				continue;  /* unique names: covered by the classes' analysis */
			c = lookup_class(pc, *n);
			if (!c->exact[KIND_TALK])
				return false;
			if (any && c->pub.talk_key != key)
				return false;
			key = c->pub.talk_key;
			any = true;
		}
	if (!any)
		return pc->fallback.exact[KIND_TALK];
	return true;
}

const PolicyCompiledRule *policy_compiled_rules(const PolicyCompiled *pc, size_t *ret_n) {
	if (ret_n)
		*ret_n = pc ? pc->n_rules : 0;
	return pc ? pc->rules : NULL;
}

static size_t entry_size(const Class *c) {
	size_t s = KDBUS_ITEM_SIZE(strlen(c->name) + (c->pub.type == POLICY_CLASS_WILDCARD ? 2 : 0) + 1);

	return s + c->n_access * KDBUS_ITEM_SIZE(sizeof(struct kdbus_policy_access));
}

int policy_compiled_build_items(const PolicyCompiled *pc, size_t *cursor, size_t max_size,
				void **ret_items, size_t *ret_size) {
	return policy_compiled_build_items_except(pc, cursor, max_size, NULL, NULL, ret_items, ret_size);
}

/* an exact class whose name @skip names is left out */
static bool class_skipped(const Class *c, PolicyCompiledSkipFn skip, void *userdata) {
	return skip && c->pub.type == POLICY_CLASS_EXACT && skip(c->name, userdata);
}

int policy_compiled_build_items_except(const PolicyCompiled *pc, size_t *cursor, size_t max_size,
				       PolicyCompiledSkipFn skip, void *userdata, void **ret_items, size_t *ret_size) {
	size_t start, end, size = 0;
	uint8_t *buf, *p;

	assert_return(pc && cursor && ret_items && ret_size, -EINVAL);
	start = *cursor;
	assert_return(start <= pc->n_classes, -EINVAL);

	for (end = start; end < pc->n_classes; end++) {
		if (class_skipped(&pc->classes[end], skip, userdata))
			continue;
		size_t s = entry_size(&pc->classes[end]);

		if (size + s > max_size)
			break;
		size += s;
	}
	if (end == start && start < pc->n_classes)
		return -ENOBUFS;

	buf = calloc(1, size ? size : 8);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (size_t i = start; i < end; i++) {
		const Class *c = &pc->classes[i];
		struct kdbus_item *it = (struct kdbus_item *) p;
		size_t l = strlen(c->name);

		if (class_skipped(c, skip, userdata))
			continue;
		it->type = KDBUS_ITEM_NAME;
		it->size = KDBUS_ITEM_HEADER_SIZE + l + (c->pub.type == POLICY_CLASS_WILDCARD ? 2 : 0) + 1;
		memcpy(it->str, c->name, l);
		if (c->pub.type == POLICY_CLASS_WILDCARD)
			memcpy(it->str + l, ".*", 2);
		p += KDBUS_ALIGN8(it->size);
		for (size_t j = 0; j < c->n_access; j++) {
			it = (struct kdbus_item *) p;
			it->type = KDBUS_ITEM_POLICY_ACCESS;
			it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_policy_access);
			it->policy_access = c->access[j];
			p += KDBUS_ALIGN8(it->size);
		}
	}
	*cursor = end;
	*ret_items = buf;
	*ret_size = size;
	return 0;
}

int policy_compiled_kdbus_decide(const PolicyCompiled *pc, const char *name, unsigned access,
				 uid_t uid, const gid_t *gids, size_t n_gids) {
	const Class *c;
	int best = -1;

	assert_return(pc && name, -EINVAL);
	if (uid == 0 || (uid != POLICY_UID_INVALID && uid == pc->bus_uid))
		return 1;
	c = lookup_class(pc, name);
	if (c->pub.type == POLICY_CLASS_FALLBACK)
		return (unsigned) policy_compiled_get_fallback(pc) >= access;
	for (size_t i = 0; i < c->n_access; i++) {
		const struct kdbus_policy_access *a = &c->access[i];
		bool match = false;

		switch (a->type) {
		case KDBUS_POLICY_ACCESS_USER:
			match = uid != POLICY_UID_INVALID && a->id == uid;
			break;
		case KDBUS_POLICY_ACCESS_GROUP:
			for (size_t g = 0; g < n_gids && !match; g++)
				match = gids[g] == a->id;
			break;
		case KDBUS_POLICY_ACCESS_WORLD:
			match = true;
			break;
		}
		if (match && (int) a->access > best)
			best = (int) a->access;
	}
	return best >= (int) access;
}

unsigned policy_compiled_get_flags(const PolicyCompiled *pc) {
	return pc ? pc->flags : 0;
}

uid_t policy_compiled_get_bus_uid(const PolicyCompiled *pc) {
	return pc ? pc->bus_uid : 0;
}
