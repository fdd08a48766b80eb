/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.c - dbus-daemon 1.14's policy decisions (bus/policy.c):
 * bus_policy_create_client_policy(), bus_client_policy_optimize(),
 * bus_client_policy_check_can_send/_receive/_own() and
 * bus_policy_allow_unix_user(), over the rules of policy/config.c.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/config-model.h"
#include "policy/policy.h"
#include "util/macro.h"

#define DBUS_MAXIMUM_MESSAGE_UNIX_FDS 33554432u

typedef struct RuleList {
	const PolicyRule **rules;
	size_t n;
} RuleList;

typedef struct IdRules {
	uint32_t id;
	RuleList list;
} IdRules;

typedef struct ConnectRule {
	const PolicyRule *rule;
	bool is_group;
	bool any;            /* user="*" / group="*" */
	uint32_t id;
} ConnectRule;

struct Policy {
	unsigned n_ref;
	char **files;
	PolicyRule *rules;   /* deep copies, never reallocated once built */
	size_t n_rules;

	RuleList defaults;           /* own/send/receive of context="default" */
	RuleList mandatory;          /* ... of context="mandatory" */
	RuleList console_true;
	RuleList console_false;
	IdRules *by_uid;
	size_t n_by_uid;
	IdRules *by_gid;
	size_t n_by_gid;
	ConnectRule *connect;        /* user/group rules: default, then mandatory */
	size_t n_connect;
};

struct PolicySnapshot {
	Policy *policy;
	const PolicyRule **rules;
	size_t n_rules;
	bool receives_all;	/* policy_snapshot_receives_all() */
	bool sends_all;		/* policy_snapshot_sends_all() */
	bool logs_sends;	/* policy_snapshot_logs_sends() */
};

/* ---------------------------------------------------------------------- */

bool policy_name_has_prefix(const char *name, const char *prefix) {
	size_t n;

	/* _dbus_string_starts_with_words_c_str(name, prefix, '.') */
	if (!name || !prefix)
		return false;
	n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return false;
	return name[n] == '\0' || name[n] == '.';
}

static bool strv_contains(const char *const *l, const char *s) {
	for (; l && *l; l++)
		if (streq(*l, s))
			return true;
	return false;
}

static int list_add(RuleList *l, const PolicyRule *r) {
	const PolicyRule **t = realloc(l->rules, (l->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	l->rules = t;
	t[l->n++] = r;
	return 0;
}

static RuleList *id_list(IdRules **lists, size_t *n, uint32_t id, bool create) {
	IdRules *t;

	for (size_t i = 0; i < *n; i++)
		if ((*lists)[i].id == id)
			return &(*lists)[i].list;
	if (!create)
		return NULL;
	t = realloc(*lists, (*n + 1) * sizeof(*t));
	if (!t)
		return NULL;
	*lists = t;
	t[*n] = (IdRules) { .id = id };
	return &t[(*n)++].list;
}

static int copy_str(const char *s, char **ret) {
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int copy_rule(Policy *p, const BusConfig *c, const BusConfigRule *src, PolicyRule *dst) {
	*dst = *src;
	dst->path = dst->interface = dst->member = dst->error = NULL;
	dst->destination = dst->sender = dst->own = dst->user = dst->group = NULL;
	dst->file = NULL;
	for (size_t i = 0; c->files && c->files[i]; i++)
		if (c->files[i] == src->file || (src->file && streq(c->files[i], src->file))) {
			dst->file = p->files[i];
			break;
		}
	if (copy_str(src->path, &dst->path) < 0 ||
	    copy_str(src->interface, &dst->interface) < 0 ||
	    copy_str(src->member, &dst->member) < 0 ||
	    copy_str(src->error, &dst->error) < 0 ||
	    copy_str(src->destination, &dst->destination) < 0 ||
	    copy_str(src->sender, &dst->sender) < 0 ||
	    copy_str(src->own, &dst->own) < 0 ||
	    copy_str(src->user, &dst->user) < 0 ||
	    copy_str(src->group, &dst->group) < 0)
		return -ENOMEM;
	return 0;
}

static void policy_free(Policy *p) {
	for (size_t i = 0; i < p->n_rules; i++)
		config_rule_done(&p->rules[i]);
	free(p->rules);
	strv_free(p->files);
	free(p->defaults.rules);
	free(p->mandatory.rules);
	free(p->console_true.rules);
	free(p->console_false.rules);
	for (size_t i = 0; i < p->n_by_uid; i++)
		free(p->by_uid[i].list.rules);
	free(p->by_uid);
	for (size_t i = 0; i < p->n_by_gid; i++)
		free(p->by_gid[i].list.rules);
	free(p->by_gid);
	free(p->connect);
	free(p);
}

Policy *policy_ref(Policy *p) {
	if (p)
		p->n_ref++;
	return p;
}

Policy *policy_unref(Policy *p) {
	if (p && --p->n_ref == 0)
		policy_free(p);
	return NULL;
}

int policy_lookup_user(const PolicyLookup *l, const char *name, uid_t *ret) {
	if (!name)
		return -ESRCH;
	if (l && l->lookup_user)
		return l->lookup_user(name, ret, l->userdata);
	return bus_config_lookup_user(name, ret);
}

int policy_lookup_group(const PolicyLookup *l, const char *name, gid_t *ret) {
	if (!name)
		return -ESRCH;
	if (l && l->lookup_group)
		return l->lookup_group(name, ret, l->userdata);
	return bus_config_lookup_group(name, ret);
}

int policy_context_id(const PolicyLookup *l, const BusConfigPolicy *pol, uint32_t *ret_id) {
	uid_t uid;
	gid_t gid;
	int r;

	switch (pol->context) {
	case BUS_CONFIG_CONTEXT_USER:
		r = policy_lookup_user(l, pol->user, &uid);
		if (r >= 0)
			*ret_id = uid;
		return r;
	case BUS_CONFIG_CONTEXT_GROUP:
		r = policy_lookup_group(l, pol->group, &gid);
		if (r >= 0)
			*ret_id = gid;
		return r;
	default:
		return 0;
	}
}

static bool is_per_client(const PolicyRule *r) {
	return r->type == BUS_CONFIG_RULE_OWN || r->type == BUS_CONFIG_RULE_SEND ||
	       r->type == BUS_CONFIG_RULE_RECEIVE;
}

int policy_new(Policy **ret, const BusConfig *c, const PolicyLookup *lookup) {
	ConnectRule *connect_mandatory = NULL;
	size_t n_connect_mandatory = 0;
	Policy *p;
	size_t n = 0, k = 0, n_files = 0;
	int r;

	assert_return(ret, -EINVAL);
	assert_return(c, -EINVAL);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->n_ref = 1;

	for (size_t i = 0; c->files && c->files[i]; i++)
		n_files++;
	p->files = calloc(n_files + 1, sizeof(char *));
	if (!p->files)
		goto oom;
	for (size_t i = 0; i < n_files; i++) {
		p->files[i] = strdup(c->files[i]);
		if (!p->files[i])
			goto oom;
	}

	for (size_t i = 0; i < c->n_policies; i++)
		n += c->policies[i].n_rules;
	if (n > 0) {
		p->rules = calloc(n, sizeof(PolicyRule));
		if (!p->rules)
			goto oom;
	}

	for (size_t i = 0; i < c->n_policies; i++) {
		const BusConfigPolicy *pol = &c->policies[i];
		RuleList *list = NULL;
		bool ignored = false;
		uint32_t id = 0;

		r = policy_context_id(lookup, pol, &id);
		if (r == -ENOMEM)
			goto oom;
		switch (pol->context) {
		case BUS_CONFIG_CONTEXT_DEFAULT:
			list = &p->defaults;
			break;
		case BUS_CONFIG_CONTEXT_MANDATORY:
			list = &p->mandatory;
			break;
		case BUS_CONFIG_CONTEXT_AT_CONSOLE:
			list = pol->at_console ? &p->console_true : &p->console_false;
			break;
		case BUS_CONFIG_CONTEXT_USER:
		case BUS_CONFIG_CONTEXT_GROUP:
			if (r < 0)
				ignored = true;   /* POLICY_IGNORED */
			else if (!(list = pol->context == BUS_CONFIG_CONTEXT_USER ?
					  id_list(&p->by_uid, &p->n_by_uid, id, true) :
					  id_list(&p->by_gid, &p->n_by_gid, id, true)))
				goto oom;
			break;
		}
		if (ignored)
			continue;

		for (size_t j = 0; j < pol->n_rules; j++) {
			const BusConfigRule *src = &pol->rules[j];
			PolicyRule *dst = &p->rules[k];

			if (copy_rule(p, c, src, dst) < 0) {
				config_rule_done(dst);
				goto oom;
			}
			k++;
			p->n_rules = k;

			if (is_per_client(dst)) {
				if (list_add(list, dst) < 0)
					goto oom;
				continue;
			}

			/* user= / group=: admission, only in default and mandatory
			 * (elsewhere they are errors or dropped, as in dbus-daemon) */
			if (pol->context != BUS_CONFIG_CONTEXT_DEFAULT &&
			    pol->context != BUS_CONFIG_CONTEXT_MANDATORY)
				continue;
			{
				ConnectRule cr = { .rule = dst, .is_group = dst->type == BUS_CONFIG_RULE_GROUP };
				const char *who = cr.is_group ? dst->group : dst->user;
				ConnectRule *t;

				if (!who) {
					cr.any = true;
				} else if (cr.is_group) {
					gid_t gid;

					r = policy_lookup_group(lookup, who, &gid);
					if (r == -ENOMEM)
						goto oom;
					if (r < 0)
						continue;   /* "Unknown group": rule dropped */
					cr.id = gid;
				} else {
					uid_t uid;

					r = policy_lookup_user(lookup, who, &uid);
					if (r == -ENOMEM)
						goto oom;
					if (r < 0)
						continue;
					cr.id = uid;
				}
				if (pol->context == BUS_CONFIG_CONTEXT_DEFAULT) {
					t = realloc(p->connect, (p->n_connect + 1) * sizeof(*t));
					if (!t)
						goto oom;
					p->connect = t;
					t[p->n_connect++] = cr;
				} else {
					t = realloc(connect_mandatory, (n_connect_mandatory + 1) * sizeof(*t));
					if (!t)
						goto oom;
					connect_mandatory = t;
					t[n_connect_mandatory++] = cr;
				}
			}
		}
	}

	/* dbus-daemon checks the default list, then the mandatory one */
	if (n_connect_mandatory > 0) {
		ConnectRule *t = realloc(p->connect, (p->n_connect + n_connect_mandatory) * sizeof(*t));

		if (!t)
			goto oom;
		p->connect = t;
		memcpy(t + p->n_connect, connect_mandatory, n_connect_mandatory * sizeof(*t));
		p->n_connect += n_connect_mandatory;
	}
	free(connect_mandatory);

	*ret = p;
	return 0;

oom:
	free(connect_mandatory);
	policy_free(p);
	return -ENOMEM;
}

bool policy_has_at_console_rules(const Policy *p) {
	return p && (p->console_true.n > 0 || p->console_false.n > 0);
}

/* ---------------------------------------------------------------------- */
/* snapshots */

static int snap_add_list(PolicySnapshot *s, const RuleList *l) {
	const PolicyRule **t;

	if (!l || l->n == 0)
		return 0;
	t = realloc(s->rules, (s->n_rules + l->n) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	s->rules = t;
	memcpy(t + s->n_rules, l->rules, l->n * sizeof(*t));
	s->n_rules += l->n;
	return 0;
}

/* bus_client_policy_optimize(): which rules remove all earlier ones of their type */
static bool rule_removes_preceding(const PolicyRule *r) {
	switch (r->type) {
	case BUS_CONFIG_RULE_SEND:
		return r->message_type == BUS_CONFIG_MESSAGE_ANY && !r->path && !r->interface &&
		       !r->member && !r->error && !r->destination;
	case BUS_CONFIG_RULE_RECEIVE:
		return r->message_type == BUS_CONFIG_MESSAGE_ANY && !r->path && !r->interface &&
		       !r->member && !r->error && !r->sender;
	case BUS_CONFIG_RULE_OWN:
		return !r->own;
	default:
		return false;
	}
}

static void snapshot_optimize(PolicySnapshot *s) {
	size_t last[3] = { 0, 0, 0 }, out = 0;

	/* a removing rule at position i removes every earlier rule of its
	 * type, so what survives of each type starts at its last such rule */
	for (size_t i = 0; i < s->n_rules; i++)
		if (rule_removes_preceding(s->rules[i]))
			last[s->rules[i]->type] = i;
	for (size_t i = 0; i < s->n_rules; i++) {
		const PolicyRule *r = s->rules[i];

		if (r->type <= BUS_CONFIG_RULE_OWN && i < last[r->type])
			continue;
		s->rules[out++] = r;
	}
	s->n_rules = out;
}

/*
 * Does policy_snapshot_check_receive() (with @type RECEIVE; _send() with
 * SEND) allow every message that is not eavesdropped and not an
 * unrequested reply?  It does if, for each of the four message types, an
 * allow rule without conditions (but the type: every sender or
 * destination, path, interface, member, error, number of fds, broadcast or
 * not) matches every such message of the type and no deny rule for the
 * type that applies without eavesdropping comes after it.  requested_reply
 * and eavesdrop on such an allow rule do not matter: the first only
 * excludes unrequested replies, the second only adds eavesdropping.
 * (system.conf allows receiving with one rule per type.)
 */
static bool snapshot_allows_all(const PolicySnapshot *s, BusConfigRuleType type) {
	bool all[5] = {};	/* by BusConfigMessageType; [0] unused */

	for (size_t i = 0; i < s->n_rules; i++) {
		const PolicyRule *r = s->rules[i];
		bool set;

		if (r->type != type)
			continue;
		if (!r->allow) {
			/* deny eavesdrop="true" applies to eavesdropping only */
			if (type == BUS_CONFIG_RULE_RECEIVE && r->eavesdrop)
				continue;
			set = false;
		} else if (!r->sender && !r->destination && !r->path && !r->interface && !r->member && !r->error &&
			   r->min_fds == 0 && r->max_fds >= DBUS_MAXIMUM_MESSAGE_UNIX_FDS &&
			   r->broadcast == BUS_CONFIG_TRISTATE_ANY) {
			set = true;
		} else {
			continue;
		}
		for (int t = BUS_CONFIG_MESSAGE_METHOD_CALL; t <= BUS_CONFIG_MESSAGE_SIGNAL; t++)
			if (r->message_type == BUS_CONFIG_MESSAGE_ANY || (int)r->message_type == t)
				all[t] = set;
	}
	return all[BUS_CONFIG_MESSAGE_METHOD_CALL] && all[BUS_CONFIG_MESSAGE_METHOD_RETURN] &&
	       all[BUS_CONFIG_MESSAGE_ERROR] && all[BUS_CONFIG_MESSAGE_SIGNAL];
}

int policy_snapshot_new(PolicySnapshot **ret, Policy *p, const PolicyIdentity *id) {
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	bool has_uid;
	int r;

	assert_return(ret, -EINVAL);
	assert_return(p, -EINVAL);
	assert_return(id, -EINVAL);
	assert_return(id->gids || id->n_gids == 0, -EINVAL);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->policy = policy_ref(p);
	has_uid = id->uid != POLICY_UID_INVALID;

	r = snap_add_list(s, &p->defaults);
	if (r < 0)
		return r;
	/* groups of a connection without uid: none (bus_connection_get_unix_groups()) */
	for (size_t i = 0; has_uid && p->n_by_gid > 0 && i < id->n_gids; i++) {
		r = snap_add_list(s, id_list(&p->by_gid, &p->n_by_gid, id->gids[i], false));
		if (r < 0)
			return r;
	}
	if (has_uid) {
		int at_console = 0;

		r = snap_add_list(s, id_list(&p->by_uid, &p->n_by_uid, id->uid, false));
		if (r < 0)
			return r;
		if (policy_has_at_console_rules(p) && id->is_at_console) {
			at_console = id->is_at_console(id->uid, id->userdata);
			if (at_console < 0)
				return at_console;
		}
		r = snap_add_list(s, at_console > 0 ? &p->console_true : &p->console_false);
		if (r < 0)
			return r;
	}
	r = snap_add_list(s, &p->mandatory);
	if (r < 0)
		return r;

	snapshot_optimize(s);
	s->receives_all = snapshot_allows_all(s, BUS_CONFIG_RULE_RECEIVE);
	for (size_t i = 0; i < s->n_rules; i++)
		if (s->rules[i]->type == BUS_CONFIG_RULE_SEND && s->rules[i]->allow && s->rules[i]->log)
			s->logs_sends = true;
	/* a message that an allow rule with log="true" lets through is
	 * logged: it has to be looked at */
	s->sends_all = !s->logs_sends && snapshot_allows_all(s, BUS_CONFIG_RULE_SEND);
	*ret = TAKE_PTR(s);
	return 0;
}

PolicySnapshot *policy_snapshot_free(PolicySnapshot *s) {
	if (!s)
		return NULL;
	policy_unref(s->policy);
	free(s->rules);
	free(s);
	return NULL;
}

bool policy_snapshot_receives_all(const PolicySnapshot *s) {
	return s && s->receives_all;
}

bool policy_snapshot_sends_all(const PolicySnapshot *s) {
	return s && s->sends_all;
}

bool policy_snapshot_logs_sends(const PolicySnapshot *s) {
	return s && s->logs_sends;
}

Policy *policy_snapshot_get_policy(const PolicySnapshot *s) {
	return s ? s->policy : NULL;
}

const PolicyRule *const *policy_snapshot_get_rules(const PolicySnapshot *s, size_t *ret_n) {
	if (ret_n)
		*ret_n = s ? s->n_rules : 0;
	return s ? s->rules : NULL;
}

/* ---------------------------------------------------------------------- */
/* checks */

int policy_snapshot_check_own(const PolicySnapshot *s, const char *name, const PolicyRule **ret_rule) {
	const PolicyRule *matched = NULL;
	bool allowed = false;

	assert_return(s, -EINVAL);
	assert_return(name, -EINVAL);

	for (size_t i = 0; i < s->n_rules; i++) {
		const PolicyRule *r = s->rules[i];

		if (r->type != BUS_CONFIG_RULE_OWN)
			continue;
		if (!r->own_is_prefix && r->own && !streq(name, r->own))
			continue;
		if (r->own_is_prefix && !policy_name_has_prefix(name, r->own))
			continue;
		allowed = r->allow;
		matched = r;
	}
	if (ret_rule)
		*ret_rule = matched;
	return allowed;
}

/* the checks common to send and receive rules, in dbus-daemon's order
 * after the type and eavesdrop checks */
static bool match_reply_and_fields(const PolicyRule *r, const PolicyMessage *m, bool requested_reply) {
	if (m->has_reply_serial) {
		/* allow: requested_reply=true (the default) applies to requested
		 * replies only, unless eavesdrop="true"; deny:
		 * requested_reply=false (the default) applies to unrequested
		 * replies only */
		if (!requested_reply && r->allow && r->requested_reply && !r->eavesdrop)
			return false;
		if (requested_reply && !r->allow && !r->requested_reply)
			return false;
	}
	/* a message without the field matches: only path/member/error
	 * fields that are present and different exclude the rule */
	if (r->path && m->path && !streq(m->path, r->path))
		return false;
	if (r->interface) {
		/* a missing interface skips allow rules and hits deny rules */
		if (!m->interface ? r->allow : !streq(m->interface, r->interface))
			return false;
	}
	if (r->member && m->member && !streq(m->member, r->member))
		return false;
	if (r->error && m->error_name && !streq(m->error_name, r->error))
		return false;
	return true;
}

static bool match_fds(const PolicyRule *r, const PolicyMessage *m) {
	if (r->min_fds > 0 || r->max_fds < DBUS_MAXIMUM_MESSAGE_UNIX_FDS)
		return m->n_fds >= r->min_fds && m->n_fds <= r->max_fds;
	return true;
}

int policy_snapshot_check_send(const PolicySnapshot *s, const PolicyMessage *m,
			       const char *const *receiver_names, bool requested_reply,
			       PolicyDecision *ret) {
	PolicyDecision d = {};
	bool allowed = false;

	assert_return(s, -EINVAL);
	assert_return(m, -EINVAL);

	for (size_t i = 0; i < s->n_rules; i++) {
		const PolicyRule *r = s->rules[i];

		if (r->type != BUS_CONFIG_RULE_SEND)
			continue;
		if (r->message_type != BUS_CONFIG_MESSAGE_ANY && (int)m->type != (int)r->message_type)
			continue;
		if (!match_reply_and_fields(r, m, requested_reply))
			continue;

		if (r->broadcast != BUS_CONFIG_TRISTATE_ANY) {
			bool broadcast = !m->destination && m->type == BUS_CONFIG_MESSAGE_SIGNAL;

			if (broadcast && r->broadcast == BUS_CONFIG_TRISTATE_FALSE)
				continue;
			if (!broadcast && r->broadcast == BUS_CONFIG_TRISTATE_TRUE)
				continue;
		}

		if (r->destination && !r->destination_is_prefix) {
			if (!receiver_names) {
				/* the bus driver, or activation: the header field */
				if (!m->destination || !streq(m->destination, r->destination))
					continue;
			} else if (!strv_contains(receiver_names, r->destination))
				continue;   /* not the primary or a queued owner of the name */
		}

		if (r->destination && r->destination_is_prefix) {
			if (!receiver_names) {
				if (!m->destination || !policy_name_has_prefix(m->destination, r->destination))
					continue;
			} else {
				bool found = false;

				for (const char *const *n = receiver_names; *n && !found; n++)
					found = policy_name_has_prefix(*n, r->destination);
				if (!found)
					continue;
			}
		}

		if (!match_fds(r, m))
			continue;

		allowed = r->allow;
		d.rule = r;
		d.log = r->log;
		d.n_matched++;
	}
	if (ret)
		*ret = d;
	return allowed;
}

int policy_snapshot_check_receive(const PolicySnapshot *s, const PolicyMessage *m,
				  const char *const *sender_names, bool requested_reply,
				  bool eavesdropping, PolicyDecision *ret) {
	PolicyDecision d = {};
	bool allowed = false;

	assert_return(s, -EINVAL);
	assert_return(m, -EINVAL);

	/* broadcasts are never eavesdropped */
	eavesdropping = eavesdropping && m->destination;

	for (size_t i = 0; i < s->n_rules; i++) {
		const PolicyRule *r = s->rules[i];

		if (r->type != BUS_CONFIG_RULE_RECEIVE)
			continue;
		if (r->message_type != BUS_CONFIG_MESSAGE_ANY && (int)m->type != (int)r->message_type)
			continue;
		/* allow + eavesdrop="false" does not apply to eavesdropping,
		 * deny + eavesdrop="true" applies only to eavesdropping */
		if (eavesdropping && r->allow && !r->eavesdrop)
			continue;
		if (!eavesdropping && !r->allow && r->eavesdrop)
			continue;
		if (!match_reply_and_fields(r, m, requested_reply))
			continue;

		if (r->sender) {
			if (!sender_names) {
				/* from the bus driver: the header field */
				if (!m->sender || !streq(m->sender, r->sender))
					continue;
			} else if (!strv_contains(sender_names, r->sender))
				continue;
		}

		if (!match_fds(r, m))
			continue;

		allowed = r->allow;
		d.rule = r;
		d.n_matched++;
	}
	if (ret)
		*ret = d;
	return allowed;
}

int policy_check_connect(const Policy *p, uid_t uid, const gid_t *gids, size_t n_gids,
			 uid_t bus_uid, const PolicyRule **ret_rule) {
	const PolicyRule *matched = NULL;
	bool allowed;

	assert_return(p, -EINVAL);
	assert_return(gids || n_gids == 0, -EINVAL);

	/* "user owning bus" can connect */
	allowed = uid == bus_uid;
	for (size_t i = 0; i < p->n_connect; i++) {
		const ConnectRule *c = &p->connect[i];

		if (!c->any) {
			if (!c->is_group) {
				if (c->id != uid)
					continue;
			} else {
				bool found = false;

				for (size_t g = 0; g < n_gids && !found; g++)
					found = gids[g] == c->id;
				if (!found)
					continue;
			}
		}
		allowed = c->rule->allow;
		matched = c->rule;
	}
	if (ret_rule)
		*ret_rule = matched;
	return allowed;
}

int policy_check_own(Policy *p, const PolicyIdentity *id, const char *name, const PolicyRule **ret_rule) {
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	int r;

	r = policy_snapshot_new(&s, p, id);
	if (r < 0)
		return r;
	return policy_snapshot_check_own(s, name, ret_rule);
}

int policy_check_send(Policy *p, const PolicyIdentity *id, const PolicyMessage *m,
		      const char *const *receiver_names, bool requested_reply, PolicyDecision *ret) {
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	int r;

	r = policy_snapshot_new(&s, p, id);
	if (r < 0)
		return r;
	return policy_snapshot_check_send(s, m, receiver_names, requested_reply, ret);
}

int policy_check_receive(Policy *p, const PolicyIdentity *id, const PolicyMessage *m,
			 const char *const *sender_names, bool requested_reply, bool eavesdropping,
			 PolicyDecision *ret) {
	_cleanup_(policy_snapshot_freep) PolicySnapshot *s = NULL;
	int r;

	r = policy_snapshot_new(&s, p, id);
	if (r < 0)
		return r;
	return policy_snapshot_check_receive(s, m, sender_names, requested_reply, eavesdropping, ret);
}

int policy_groups_from_uid(uid_t uid, gid_t **ret, size_t *ret_n) {
	struct passwd pw, *res = NULL;
	char buf[4096];
	gid_t *groups = NULL;
	int n = 17;

	assert_return(ret && ret_n, -EINVAL);
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return -ESRCH;
	for (;;) {
		gid_t *t = realloc(groups, (size_t)n * sizeof(gid_t));
		int m = n;

		if (!t) {
			free(groups);
			return -ENOMEM;
		}
		groups = t;
		if (getgrouplist(res->pw_name, res->pw_gid, groups, &m) >= 0) {
			n = m;
			break;
		}
		if (m <= n)
			m = n * 2;
		n = m;
	}
	*ret = groups;
	*ret_n = (size_t)n;
	return 0;
}
