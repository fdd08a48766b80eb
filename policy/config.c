/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - the configuration model: BusConfig, its limits, rules and
 * policies, how an included file's part merges into its includer
 * (config_merge_included(), as dbus-daemon's bus/config-parser.c does),
 * user and group lookup, and rules formatted back as XML.  The busconfig
 * XML parser that fills it is config-parser.c.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/config.h"
#include "policy/config-model.h"
#include "util/macro.h"
#include "util/strutil.h"

#define DBUS_DEFAULT_MESSAGE_UNIX_FDS 16
#define ONE_MEGABYTE (1024 * 1024)

/* ---------------------------------------------------------------------- */
/* users and groups */

/* _dbus_is_a_number(): strtoul(base 0) consuming the whole string */
static bool parse_number(const char *s, unsigned long *ret) {
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (!end || end == s || errno != 0 || *end != '\0')
		return false;
	*ret = v;
	return true;
}

int bus_config_lookup_user(const char *name, uid_t *ret_uid) {
	struct passwd pw, *res = NULL;
	unsigned long n;
	char buf[4096];
	int r;

	assert_return(name, -EINVAL);
	if (parse_number(name, &n)) {
		if ((unsigned long)(uid_t)n != n)
			return -ESRCH;
		r = getpwuid_r((uid_t)n, &pw, buf, sizeof(buf), &res);
	} else {
		r = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	}
	if (r == ERANGE)
		return -ERANGE;
	if (!res)
		return -ESRCH;
	if (ret_uid)
		*ret_uid = res->pw_uid;
	return 0;
}

int bus_config_lookup_group(const char *name, gid_t *ret_gid) {
	struct group gr, *res = NULL;
	unsigned long n;
	char buf[16384];
	int r;

	assert_return(name, -EINVAL);
	if (parse_number(name, &n)) {
		if ((unsigned long)(gid_t)n != n)
			return -ESRCH;
		r = getgrgid_r((gid_t)n, &gr, buf, sizeof(buf), &res);
	} else {
		r = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	}
	if (r == ERANGE)
		return -ERANGE;
	if (!res)
		return -ESRCH;
	if (ret_gid)
		*ret_gid = res->gr_gid;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* BusConfig */

void bus_config_limits_init_default(BusConfigLimits *l) {
	*l = (BusConfigLimits) {
		.max_incoming_bytes = ONE_MEGABYTE * 127,
		.max_outgoing_bytes = ONE_MEGABYTE * 127,
		.max_message_size = ONE_MEGABYTE * 32,
		.max_incoming_unix_fds = DBUS_DEFAULT_MESSAGE_UNIX_FDS * 4,
		.max_outgoing_unix_fds = DBUS_DEFAULT_MESSAGE_UNIX_FDS * 4,
		.max_message_unix_fds = DBUS_DEFAULT_MESSAGE_UNIX_FDS,
		.service_start_timeout = 25000,
		.auth_timeout = 30000,
		.pending_fd_timeout = 150000,
		.max_incomplete_connections = 64,
		.max_connections_per_user = 256,
		.max_containers_per_user = 16,
		.max_completed_connections = 2048,
		.max_containers = 512,
		.max_connections_per_container = 8,
		.max_container_metadata_bytes = 4096,
		.max_pending_service_starts = 512,
		.max_names_per_connection = 512,
		.max_match_rules_per_connection = 512,
		.reply_timeout = -1,
		.max_replies_per_connection = 128,
	};
}

void config_rule_done(BusConfigRule *r) {
	free(r->path);
	free(r->interface);
	free(r->member);
	free(r->error);
	free(r->destination);
	free(r->sender);
	free(r->own);
	free(r->user);
	free(r->group);
}

void config_policy_done(BusConfigPolicy *p) {
	for (size_t i = 0; i < p->n_rules; i++)
		config_rule_done(&p->rules[i]);
	free(p->rules);
	free(p->user);
	free(p->group);
}

BusConfig *bus_config_free(BusConfig *c) {
	if (!c)
		return NULL;
	free(c->type);
	free(c->user);
	free(c->pidfile);
	free(c->servicehelper);
	strv_free(c->listen);
	strv_free(c->auth);
	strv_free(c->servicedirs);
	free(c->servicedir_flags);
	strv_free(c->includedirs);
	strv_free(c->files);
	for (size_t i = 0; i < c->n_associations; i++) {
		free(c->associations[i].own);
		free(c->associations[i].context);
	}
	free(c->associations);
	for (size_t i = 0; i < c->n_policies; i++)
		config_policy_done(&c->policies[i]);
	free(c->policies);
	strv_free(c->warnings);
	free(c);
	return NULL;
}

BusConfig *config_new(const BusConfigLimits *limits) {
	BusConfig *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (limits)
		c->limits = *limits;
	else
		bus_config_limits_init_default(&c->limits);
	return c;
}

/*
 * Add a service directory unless it is already listed; if it is, and the
 * dbus-daemon flags (service_dirs_append_link_unique_or_free()) and or the
 * origin flags.  Takes ownership of @path.
 */
int config_add_servicedir(BusConfig *c, char *path, unsigned flags) {
	const unsigned dbus_flags = BUS_CONFIG_SERVICE_DIR_NO_WATCH | BUS_CONFIG_SERVICE_DIR_STRICT_NAMING;
	unsigned *f;

	for (size_t i = 0; i < c->n_servicedirs; i++) {
		if (streq(c->servicedirs[i], path)) {
			unsigned old = c->servicedir_flags[i];

			c->servicedir_flags[i] = ((old & flags) & dbus_flags) | ((old | flags) & ~dbus_flags);
			free(path);
			return 0;
		}
	}
	f = realloc(c->servicedir_flags, (c->n_servicedirs + 1) * sizeof(unsigned));
	if (!f) {
		free(path);
		return -ENOMEM;
	}
	c->servicedir_flags = f;
	if (strv_push(&c->servicedirs, &c->n_servicedirs, path) < 0) {
		free(path);
		return -ENOMEM;
	}
	c->servicedir_flags[c->n_servicedirs - 1] = flags;
	return 0;
}

int config_set_association(BusConfig *c, const char *own, const char *context) {
	BusConfigAssociation *a;
	char *ctx;

	ctx = strdup(context);
	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_associations; i++) {
		if (streq(c->associations[i].own, own)) {
			free(c->associations[i].context);
			c->associations[i].context = ctx;
			return 0;
		}
	}
	a = realloc(c->associations, (c->n_associations + 1) * sizeof(*a));
	if (!a) {
		free(ctx);
		return -ENOMEM;
	}
	c->associations = a;
	a[c->n_associations].own = strdup(own);
	if (!a[c->n_associations].own) {
		free(ctx);
		return -ENOMEM;
	}
	a[c->n_associations].context = ctx;
	c->n_associations++;
	return 0;
}

static void take_string(char **dst, char **src) {
	if (*src) {
		free(*dst);
		*dst = TAKE_PTR(*src);
	}
}

static int strv_move_all(char ***dst, char ***src) {
	for (char **i = *src; i && *i; i++) {
		if (strv_push(dst, NULL, *i) < 0)
			return -ENOMEM;
		*i = NULL;
	}
	free(*src);
	*src = NULL;
	return 0;
}

/* config_merge_included() of bus/config-parser.c: @child was included by @parent */
int config_merge_included(BusConfig *parent, BusConfig *child) {
	BusConfigPolicy *p;
	int r;

	if (child->n_policies > 0) {
		p = realloc(parent->policies, (parent->n_policies + child->n_policies) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		parent->policies = p;
		memcpy(p + parent->n_policies, child->policies, child->n_policies * sizeof(*p));
		parent->n_policies += child->n_policies;
		free(child->policies);
		child->policies = NULL;
		child->n_policies = 0;
	}

	for (size_t i = 0; i < child->n_associations; i++) {
		r = config_set_association(parent, child->associations[i].own, child->associations[i].context);
		if (r < 0)
			return r;
	}

	take_string(&parent->user, &child->user);
	take_string(&parent->type, &child->type);
	take_string(&parent->pidfile, &child->pidfile);
	take_string(&parent->servicehelper, &child->servicehelper);
	parent->fork |= child->fork;
	parent->keep_umask |= child->keep_umask;
	parent->kdbus |= child->kdbus;
	parent->allow_anonymous |= child->allow_anonymous;
	/* as dbus-daemon: <syslog/> in an included file is not merged */

	r = strv_move_all(&parent->listen, &child->listen);
	if (r < 0)
		return r;
	r = strv_move_all(&parent->auth, &child->auth);
	if (r < 0)
		return r;
	for (size_t i = 0; i < child->n_servicedirs; i++) {
		r = config_add_servicedir(parent, TAKE_PTR(child->servicedirs[i]), child->servicedir_flags[i]);
		if (r < 0)
			return r;
	}
	r = strv_move_all(&parent->includedirs, &child->includedirs);
	if (r < 0)
		return r;

	parent->limits = child->limits;
	return 0;
}

BusConfigMessageType bus_config_message_type_from_string(const char *s) {
	if (streq(s, "method_call"))
		return BUS_CONFIG_MESSAGE_METHOD_CALL;
	if (streq(s, "method_return"))
		return BUS_CONFIG_MESSAGE_METHOD_RETURN;
	if (streq(s, "signal"))
		return BUS_CONFIG_MESSAGE_SIGNAL;
	if (streq(s, "error"))
		return BUS_CONFIG_MESSAGE_ERROR;
	return BUS_CONFIG_MESSAGE_ANY;
}

const char *bus_config_message_type_to_string(BusConfigMessageType t) {
	switch (t) {
	case BUS_CONFIG_MESSAGE_METHOD_CALL:
		return "method_call";
	case BUS_CONFIG_MESSAGE_METHOD_RETURN:
		return "method_return";
	case BUS_CONFIG_MESSAGE_ERROR:
		return "error";
	case BUS_CONFIG_MESSAGE_SIGNAL:
		return "signal";
	default:
		return "*";
	}
}

/* ---------------------------------------------------------------------- */
/* formatting */

static int append_attr(char **buf, size_t *len, const char *name, const char *value) {
	char *t;
	size_t need;

	if (!value)
		return 0;
	need = *len + strlen(name) + strlen(value) * 6 + 5;
	t = realloc(*buf, need);
	if (!t)
		return -ENOMEM;
	*buf = t;
	*len += sprintf(t + *len, " %s=\"", name);
	for (const char *s = value; *s; s++) {
		switch (*s) {
		case '"':
			*len += sprintf(t + *len, "&quot;");
			break;
		case '&':
			*len += sprintf(t + *len, "&amp;");
			break;
		case '<':
			*len += sprintf(t + *len, "&lt;");
			break;
		default:
			t[(*len)++] = *s;
			break;
		}
	}
	t[(*len)++] = '"';
	t[*len] = '\0';
	return 0;
}

int bus_config_rule_format(const BusConfigRule *r, char **ret) {
	_cleanup_free_ char *buf = NULL;
	char num[16];
	size_t len;
	bool snd = r->type == BUS_CONFIG_RULE_SEND, rcv = r->type == BUS_CONFIG_RULE_RECEIVE;
	int k = 0;

	assert_return(r && ret, -EINVAL);
	buf = strdup(r->allow ? "<allow" : "<deny");
	if (!buf)
		return -ENOMEM;
	len = strlen(buf);

	if (snd || rcv) {
		const char *pfx = snd ? "send_" : "receive_";
		char name[32];

#define ATTR(suffix, value) ({ snprintf(name, sizeof(name), "%s%s", pfx, suffix); \
			       append_attr(&buf, &len, name, (value)); })
		if (snd && r->destination)
			k |= append_attr(&buf, &len, r->destination_is_prefix ?
					 "send_destination_prefix" : "send_destination", r->destination);
		if (rcv)
			k |= append_attr(&buf, &len, "receive_sender", r->sender ? r->sender : "*");
		if (snd && !r->destination)
			k |= append_attr(&buf, &len, "send_destination", "*");
		k |= ATTR("type", r->message_type ? bus_config_message_type_to_string(r->message_type) : NULL);
		k |= ATTR("path", r->path);
		k |= ATTR("interface", r->interface);
		k |= ATTR("member", r->member);
		k |= ATTR("error", r->error);
		if (snd && r->broadcast != BUS_CONFIG_TRISTATE_ANY)
			k |= append_attr(&buf, &len, "send_broadcast",
					 r->broadcast == BUS_CONFIG_TRISTATE_TRUE ? "true" : "false");
		if (r->requested_reply != r->allow)
			k |= ATTR("requested_reply", r->requested_reply ? "true" : "false");
#undef ATTR
		if (r->eavesdrop)
			k |= append_attr(&buf, &len, "eavesdrop", "true");
		if (r->min_fds > 0) {
			snprintf(num, sizeof(num), "%u", r->min_fds);
			k |= append_attr(&buf, &len, "min_fds", num);
		}
		if (r->max_fds < DBUS_MAXIMUM_MESSAGE_UNIX_FDS) {
			snprintf(num, sizeof(num), "%u", r->max_fds);
			k |= append_attr(&buf, &len, "max_fds", num);
		}
		if (snd && r->log)
			k |= append_attr(&buf, &len, "log", "true");
	} else if (r->type == BUS_CONFIG_RULE_OWN) {
		k |= append_attr(&buf, &len, r->own_is_prefix ? "own_prefix" : "own", r->own ? r->own : "*");
	} else if (r->type == BUS_CONFIG_RULE_USER) {
		k |= append_attr(&buf, &len, "user", r->user ? r->user : "*");
	} else {
		k |= append_attr(&buf, &len, "group", r->group ? r->group : "*");
	}
	if (k < 0)
		return -ENOMEM;

	{
		char *t = realloc(buf, len + 3);

		if (!t)
			return -ENOMEM;
		buf = t;
		memcpy(buf + len, "/>", 3);
	}
	*ret = TAKE_PTR(buf);
	return 0;
}
