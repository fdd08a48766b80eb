/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match-rule.c - dbus-daemon match rules.
 *
 * DOC: how closely this follows dbus-daemon
 *
 * The tokenizer is a transcription of bus/signals.c (find_key(),
 * find_value(), tokenize_rule(), bus_match_rule_parse(),
 * bus_match_rule_parse_arg_match()) including its oddities, which are
 * observable by clients and tested against a real dbus-daemon in
 * tests/unit/test-match-rule.c:
 *
 *  - only the first 16 key=value pairs are read, the rest is ignored;
 *  - an '=' where a key should start ends the rule (what was parsed before
 *    stays valid), while ",," or a leading ',' make a key starting with ','
 *    (unknown key: invalid);
 *  - whitespace is part of a value ("type= 'signal'" is invalid);
 *  - the argument number is parsed with strtoul(..., 0): "arg0x10" is
 *    arg16, "arg010" is arg8, "arg+1" is arg1, "arg-0" is arg0;
 *  - eavesdrop may be repeated, the last value wins; eavesdrop='false' is
 *    the same as no eavesdrop key;
 *  - argN values are not validated (argNpath='' is allowed and only matches
 *    an empty string);
 *  - the whole rule is tokenized before any key is checked, so a key with
 *    no '=' or an unbalanced quote anywhere is the error, and the first
 *    refused key is the one named.  A refusal is worded as dbus-daemon
 *    words it (MatchRuleError), the driver's only source for the text.
 *
 * The rule is stored in one allocation; matching allocates nothing.
 */

#include <stdarg.h>
#include <stdio.h>

#include "compat/match-rule.h"
#include "compat/protocol.h"
#include "util/strbuf.h"

typedef struct MatchArg {
	const char *value;
	uint32_t len;
	uint8_t kind;		/* MatchArgKind */
} MatchArg;

struct MatchRule {
	unsigned flags;
	uint8_t type;
	uint8_t n_args;
	uint16_t sender_len, interface_len, member_len, path_len, destination_len;
	const char *sender, *interface, *member, *path, *destination;
	MatchArg *args;		/* n_args entries */
	char data[];
};

/* ------------------------------------------------------------------------ */
/* parsing */

typedef struct Str {
	const char *p;
	size_t len;
} Str;

typedef struct Spec {
	unsigned flags;
	uint8_t type;
	Str sender, interface, member, path, destination;
	unsigned n_args;
	struct {
		uint8_t kind;
		Str v;
	} args[MATCH_RULE_MAX_ARGS];
} Spec;

static inline bool is_white(char c) {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static inline bool key_is(Str k, const char *s) {
	size_t n = strlen(s);
	return k.len == n && memcmp(k.p, s, n) == 0;
}

/* -EINVAL, with dbus-daemon's words for why in @e (when given) */
static int refuse(MatchRuleError *e, const char *fmt, ...) _printf_(2, 3);
static int refuse(MatchRuleError *e, const char *fmt, ...) {
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->message, sizeof(e->message), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * strtoul(p, &end, 0) on the NUL-terminated @p, C locale: returns false if
 * no digits or on overflow (errno ERANGE), as _dbus_string_parse_uint().
 */
static bool parse_ulong(const char *p, unsigned long *ret, size_t *ret_end) {
	const char *s = p;
	unsigned long v = 0;
	unsigned base = 10;
	bool neg = false, any = false;

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    ((s[2] >= '0' && s[2] <= '9') || (s[2] >= 'a' && s[2] <= 'f') ||
	     (s[2] >= 'A' && s[2] <= 'F'))) {
		base = 16;
		s += 2;
	} else if (s[0] == '0')
		base = 8;

	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'z')
			d = (unsigned)(*s - 'a') + 10;
		else if (*s >= 'A' && *s <= 'Z')
			d = (unsigned)(*s - 'A') + 10;
		else
			break;
		if (d >= base)
			break;
		if (MUL_OVERFLOW(v, (unsigned long)base, &v) || ADD_OVERFLOW(v, (unsigned long)d, &v))
			return false;
		any = true;
	}
	if (!any)
		return false;
	*ret = neg ? -v : v;
	*ret_end = (size_t)(s - p);
	return true;
}

static int parse_arg_key(Spec *spec, Str key, Str value, MatchRuleError *e) {
	char buf[MATCH_RULE_MAX_LENGTH + 1];
	unsigned long arg;
	size_t end;
	uint8_t kind = MATCH_ARG_STRING;

	memcpy(buf, key.p, key.len);
	buf[key.len] = 0;
	if (key.len < 4)
		return refuse(e, "Key '%s' in match rule starts with 'arg' but lacks an arg number. "
			      "Should be 'arg0' or 'arg7' for example.\n", buf);
	if (!parse_ulong(buf + 3, &arg, &end))
		return refuse(e, "Key '%s' in match rule starts with 'arg' but could not parse arg number. "
			      "Should be 'arg0' or 'arg7' for example.\n", buf);
	end += 3;

	if (end != key.len) {
		if (end + 4 == key.len && memcmp(buf + end, "path", 4) == 0)
			kind = MATCH_ARG_PATH;
		else if (key_is(key, "arg0namespace")) {
			kind = MATCH_ARG_NAMESPACE;
			if (!wire_bus_name_is_valid_libdbus(value.p, value.len, true))
				return refuse(e, "arg0namespace='%s' is not a valid prefix of a bus name", value.p);
		} else
			return refuse(e, "Key '%s' in match rule contains junk after argument number (%lu). "
				      "Only 'arg%lupath' (for example) or 'arg0namespace' are valid", buf, arg, arg);
	}

	if (arg >= MATCH_RULE_MAX_ARGS)
		return refuse(e, "Key '%s' in match rule has arg number %lu but the maximum is %d.\n", buf, arg,
			      MATCH_RULE_MAX_ARGS - 1);
	if (arg < spec->n_args && spec->args[arg].kind != MATCH_ARG_NONE)
		return refuse(e, "Argument %s matched more than once in match rule\n", buf);

	for (unsigned i = spec->n_args; i < arg; i++)
		spec->args[i].kind = MATCH_ARG_NONE;
	if (arg >= spec->n_args)
		spec->n_args = (unsigned)arg + 1;
	spec->args[arg].kind = kind;
	spec->args[arg].v = value;
	spec->flags |= MATCH_RULE_ARGS;
	return 0;
}

/* a key given at most once, and its value checked; path and path_namespace
 * count as one key */
typedef struct SingleKey {
	const char *key;
	unsigned flag;		/* MATCH_RULE_* */
	unsigned given;		/* the flags that make it a second time */
	const char *what;	/* its value, in dbus-daemon's message */
} SingleKey;

static const SingleKey single_keys[] = {
	{ "type", MATCH_RULE_TYPE, MATCH_RULE_TYPE, NULL },
	{ "sender", MATCH_RULE_SENDER, MATCH_RULE_SENDER, "Sender name" },
	{ "interface", MATCH_RULE_INTERFACE, MATCH_RULE_INTERFACE, "Interface name" },
	{ "member", MATCH_RULE_MEMBER, MATCH_RULE_MEMBER, "Member name" },
	{ "path", MATCH_RULE_PATH, MATCH_RULE_PATH | MATCH_RULE_PATH_NAMESPACE, "Path" },
	{ "path_namespace", MATCH_RULE_PATH_NAMESPACE, MATCH_RULE_PATH | MATCH_RULE_PATH_NAMESPACE, "Path" },
	{ "destination", MATCH_RULE_DESTINATION, MATCH_RULE_DESTINATION, "Destination name" },
};

static int refuse_twice(MatchRuleError *e, const SingleKey *k) {
	if (k->given & MATCH_RULE_PATH_NAMESPACE)
		return refuse(e, "path or path_namespace specified twice in match rule\n");
	return refuse(e, "Key %s specified twice in match rule\n", k->key);
}

static int refuse_value(MatchRuleError *e, const SingleKey *k, const char *value) {
	if (k->flag == MATCH_RULE_TYPE)
		return refuse(e, "Invalid message type (%s) in match rule\n", value);
	return refuse(e, "%s '%s' is invalid\n", k->what, value);
}

static bool single_key_value_is_valid(unsigned flag, Str value, uint8_t *ret_type) {
	switch (flag) {
	case MATCH_RULE_TYPE:
		*ret_type = wire_type_from_string(value.p);
		return *ret_type != WIRE_TYPE_INVALID;
	case MATCH_RULE_SENDER:
	case MATCH_RULE_DESTINATION:
		return wire_bus_name_is_valid_libdbus(value.p, value.len, false);
	case MATCH_RULE_INTERFACE:
		return wire_interface_is_valid(value.p, value.len);
	case MATCH_RULE_MEMBER:
		return wire_member_is_valid(value.p, value.len);
	default:
		return wire_object_path_is_valid(value.p, value.len);
	}
}

static Str *single_key_slot(Spec *spec, unsigned flag) {
	switch (flag) {
	case MATCH_RULE_SENDER:
		return &spec->sender;
	case MATCH_RULE_DESTINATION:
		return &spec->destination;
	case MATCH_RULE_INTERFACE:
		return &spec->interface;
	case MATCH_RULE_MEMBER:
		return &spec->member;
	case MATCH_RULE_PATH:
	case MATCH_RULE_PATH_NAMESPACE:
		return &spec->path;
	default:
		return NULL;	/* type: kept as spec->type */
	}
}

/* one key=value, as bus_match_rule_parse() reads it */
static int parse_token(Spec *spec, Str key, Str value, MatchRuleError *e) {
	for (size_t i = 0; i < ELEMENTSOF(single_keys); i++) {
		const SingleKey *k = &single_keys[i];
		Str *slot;

		if (!key_is(key, k->key))
			continue;
		if (spec->flags & k->given)
			return refuse_twice(e, k);
		if (!single_key_value_is_valid(k->flag, value, &spec->type))
			return refuse_value(e, k, value.p);
		slot = single_key_slot(spec, k->flag);
		if (slot)
			*slot = value;
		spec->flags |= k->flag;
		return 0;
	}
	if (key_is(key, "eavesdrop")) {
		if (streq(value.p, "true"))
			spec->flags |= MATCH_RULE_EAVESDROP;
		else if (streq(value.p, "false"))
			spec->flags &= ~MATCH_RULE_EAVESDROP;
		else
			return refuse(e, "eavesdrop='%s' is invalid, it should be 'true' or 'false'\n", value.p);
		return 0;
	}
	if (key.len >= 3 && memcmp(key.p, "arg", 3) == 0)
		return parse_arg_key(spec, key, value, e);
	return refuse(e, "Unknown key \"%.*s\" in match rule", (int)key.len, key.p);
}

static size_t str_size(Str s) {
	return s.p ? s.len + 1 : 0;
}

static const char *str_copy(char **data, Str s, uint16_t *ret_len) {
	char *p = *data;

	if (!s.p)
		return NULL;
	memcpy(p, s.p, s.len);
	p[s.len] = 0;
	*data += s.len + 1;
	if (ret_len)
		*ret_len = (uint16_t)s.len;
	return p;
}

int match_rule_parse(const char *text, size_t len, MatchRule **ret, MatchRuleError *error) {
	char scratch[MATCH_RULE_MAX_LENGTH + 16];
	struct {
		Str key, value;
	} tokens[16];
	unsigned n_tokens = 0;
	size_t n, pos = 0, used = 0;
	Spec spec;
	int r;

	assert_return(text || len == 0, -EINVAL);
	assert_return(ret, -EINVAL);

	n = text ? strnlen(text, len) : 0;
	if (n > MATCH_RULE_MAX_LENGTH) {
		if (error)
			snprintf(error->message, sizeof(error->message), "Match rule text is %zu bytes, maximum is %d",
				 n, MATCH_RULE_MAX_LENGTH);
		return -E2BIG;
	}

	/* tokenize_rule() */
	while (n_tokens < ELEMENTSOF(tokens) && pos < n) {
		size_t p = pos, ks, ke;
		char quote = 0;
		Str value;

		/* find_key() */
		while (p < n && is_white(text[p]))
			p++;
		ks = p;
		while (p < n && text[p] != '=' && !is_white(text[p]))
			p++;
		ke = p;
		while (p < n && is_white(text[p]))
			p++;
		if (ks == ke)
			break;	/* end of text, or '=': the rest is ignored */
		if (p >= n || text[p] != '=')
			return refuse(error, "Match rule has a key with no subsequent '=' character");
		p++;

		/* find_value() */
		value.p = scratch + used;
		for (; p < n; p++) {
			char c = text[p];

			if (quote == 0) {
				if (c == '\'')
					quote = '\'';
				else if (c == ',') {
					p++;
					break;
				} else if (c == '\\')
					quote = '\\';
				else
					scratch[used++] = c;
			} else if (quote == '\\') {
				if (c != '\'')
					scratch[used++] = '\\';
				scratch[used++] = c;
				quote = 0;
			} else {
				if (c == '\'')
					quote = 0;
				else
					scratch[used++] = c;
			}
		}
		if (quote == '\\')
			scratch[used++] = '\\';
		else if (quote == '\'')
			return refuse(error, "Unbalanced quotation marks in match rule");
		value.len = (size_t)(scratch + used - value.p);
		scratch[used++] = 0;
		pos = p;

		tokens[n_tokens].key = (Str) { text + ks, ke - ks };
		tokens[n_tokens].value = value;
		n_tokens++;
	}

	spec = (Spec) {};
	for (unsigned i = 0; i < n_tokens; i++) {
		r = parse_token(&spec, tokens[i].key, tokens[i].value, error);
		if (r < 0)
			return r;
	}

	/* one allocation: rule, args, strings */
	size_t size = sizeof(MatchRule) + spec.n_args * sizeof(MatchArg);
	size += str_size(spec.sender) + str_size(spec.interface) + str_size(spec.member) +
		str_size(spec.path) + str_size(spec.destination);
	for (unsigned i = 0; i < spec.n_args; i++)
		if (spec.args[i].kind != MATCH_ARG_NONE)
			size += spec.args[i].v.len + 1;

	MatchRule *rule = calloc(1, size);
	if (!rule)
		return -ENOMEM;
	char *data = rule->data;

	rule->flags = spec.flags;
	rule->type = spec.type;
	rule->n_args = (uint8_t)spec.n_args;
	rule->args = (MatchArg *)data;
	data += spec.n_args * sizeof(MatchArg);
	rule->sender = str_copy(&data, spec.sender, &rule->sender_len);
	rule->interface = str_copy(&data, spec.interface, &rule->interface_len);
	rule->member = str_copy(&data, spec.member, &rule->member_len);
	rule->path = str_copy(&data, spec.path, &rule->path_len);
	rule->destination = str_copy(&data, spec.destination, &rule->destination_len);
	for (unsigned i = 0; i < spec.n_args; i++) {
		rule->args[i].kind = spec.args[i].kind;
		if (spec.args[i].kind == MATCH_ARG_NONE)
			continue;
		rule->args[i].len = (uint32_t)spec.args[i].v.len;
		rule->args[i].value = str_copy(&data, spec.args[i].v, NULL);
	}
	if (spec.n_args == 0)
		rule->args = NULL;

	*ret = rule;
	return 0;
}

MatchRule *match_rule_free(MatchRule *r) {
	free(r);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* equality */

static bool opt_eq(const char *a, const char *b) {
	return streq(a, b);
}

bool match_rule_equal(const MatchRule *a, const MatchRule *b) {
	if (a == b)
		return true;
	if (!a || !b || a->flags != b->flags)
		return false;
	if ((a->flags & MATCH_RULE_TYPE) && a->type != b->type)
		return false;
	if ((a->flags & MATCH_RULE_MEMBER) && !opt_eq(a->member, b->member))
		return false;
	if ((a->flags & (MATCH_RULE_PATH | MATCH_RULE_PATH_NAMESPACE)) && !opt_eq(a->path, b->path))
		return false;
	if ((a->flags & MATCH_RULE_INTERFACE) && !opt_eq(a->interface, b->interface))
		return false;
	if ((a->flags & MATCH_RULE_SENDER) && !opt_eq(a->sender, b->sender))
		return false;
	if ((a->flags & MATCH_RULE_DESTINATION) && !opt_eq(a->destination, b->destination))
		return false;
	if (a->flags & MATCH_RULE_ARGS) {
		if (a->n_args != b->n_args)
			return false;
		for (unsigned i = 0; i < a->n_args; i++) {
			const MatchArg *x = &a->args[i], *y = &b->args[i];

			if (x->kind != y->kind || x->len != y->len)
				return false;
			if (x->kind != MATCH_ARG_NONE && memcmp(x->value, y->value, x->len) != 0)
				return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* matching */

static inline bool ws_eq(const WireString *w, const char *s, size_t len) {
	return w->s && w->len == len && memcmp(w->s, s, len) == 0;
}

static bool sender_matches(const MatchRule *r, const WireHeader *h, const MatchContext *ctx) {
	const char *snd = ctx && ctx->sender ? ctx->sender : h->sender.s;

	/* no sender at all: the bus driver, as in dbus-daemon */
	if (!snd)
		snd = DRIVER_NAME;
	if (r->sender[0] == ':' || streq(r->sender, DRIVER_NAME))
		return streq(snd, r->sender);
	if (streq(snd, DRIVER_NAME))
		return false;	/* the driver owns no other name */
	return ctx && ctx->sender_has_name && ctx->sender_has_name(ctx->userdata, r->sender);
}

static bool destination_matches(const MatchRule *r, const WireHeader *h, const MatchContext *ctx) {
	if (!h->destination.s)
		return false;		/* a broadcast */
	if (!(r->flags & MATCH_RULE_EAVESDROP) && !(ctx && ctx->eavesdropping))
		return false;		/* the addressed recipient gets it anyway */
	if (!ctx || !ctx->receiver)
		return ws_eq(&h->destination, r->destination, r->destination_len);
	if (r->destination[0] == ':')
		return streq(ctx->receiver, r->destination);
	if (ctx->receiver_has_name)
		return ctx->receiver_has_name(ctx->userdata, r->destination);
	return ws_eq(&h->destination, r->destination, r->destination_len);
}

static bool arg_matches(const MatchArg *m, const WireArg *a) {
	const char *actual = a->str.s, *expected = m->value;
	size_t al = a->str.len, el = m->len;

	switch (m->kind) {
	case MATCH_ARG_STRING:
		return a->type == 's' && al == el && memcmp(actual, expected, el) == 0;

	case MATCH_ARG_PATH:
		if (a->type != 's' && a->type != 'o')
			return false;
		/* one is a prefix of the other ending in '/', or they are equal;
		 * dbus-daemon looks at the byte before an empty string, which is
		 * never a '/' */
		if (al < el && (al == 0 || actual[al - 1] != '/'))
			return false;
		if (el < al && (el == 0 || expected[el - 1] != '/'))
			return false;
		return memcmp(actual, expected, MIN(al, el)) == 0;

	case MATCH_ARG_NAMESPACE:
		if (a->type != 's' || el > al || memcmp(expected, actual, el) != 0)
			return false;
		return el == al || actual[el] == '.';

	default:
		return true;
	}
}

bool match_rule_matches(const MatchRule *r, const WireHeader *h, const uint8_t *body,
			const MatchContext *ctx) {
	unsigned f;

	assert_return(r && h, false);
	f = r->flags;

	if ((f & MATCH_RULE_TYPE) && r->type != h->type)
		return false;
	if ((f & MATCH_RULE_INTERFACE) && !ws_eq(&h->interface, r->interface, r->interface_len))
		return false;
	if ((f & MATCH_RULE_MEMBER) && !ws_eq(&h->member, r->member, r->member_len))
		return false;
	if ((f & MATCH_RULE_SENDER) && !sender_matches(r, h, ctx))
		return false;

	if (f & MATCH_RULE_DESTINATION) {
		if (!destination_matches(r, h, ctx))
			return false;
	} else if (!(f & MATCH_RULE_EAVESDROP) && !(ctx && ctx->eavesdropping) && h->destination.s)
		return false;	/* not a broadcast, and not eavesdropping */

	if ((f & MATCH_RULE_PATH) && !ws_eq(&h->path, r->path, r->path_len))
		return false;

	if (f & MATCH_RULE_PATH_NAMESPACE) {
		size_t len = r->path_len;

		if (!h->path.s || h->path.len < len || memcmp(h->path.s, r->path, len) != 0)
			return false;
		/* "/" matches every path */
		if (len > 1 && h->path.len > len && h->path.s[len] != '/')
			return false;
	}

	if (f & MATCH_RULE_ARGS) {
		WireArg args[MATCH_RULE_MAX_ARGS];
		unsigned n = body ? wire_body_args(h, body, args, r->n_args) : 0;

		for (unsigned i = 0; i < r->n_args; i++) {
			if (r->args[i].kind == MATCH_ARG_NONE)
				continue;
			if (i >= n || !arg_matches(&r->args[i], &args[i]))
				return false;
		}
	}

	return true;
}

bool match_rule_is_eavesdrop(const MatchRule *r) {
	return r && (r->flags & MATCH_RULE_EAVESDROP);
}

bool match_rule_may_match_name_owner_changed(const MatchRule *r) {
	const char *s;
	uint8_t type = match_rule_get_type(r);

	if (type != WIRE_TYPE_INVALID && type != WIRE_TYPE_SIGNAL)
		return false;
	if ((s = match_rule_get_sender(r)) && strcmp(s, DRIVER_NAME) != 0)
		return false;
	if ((s = match_rule_get_interface(r)) && strcmp(s, DRIVER_INTERFACE) != 0)
		return false;
	if ((s = match_rule_get_member(r)) && strcmp(s, "NameOwnerChanged") != 0)
		return false;
	if ((s = match_rule_get_path(r)) && strcmp(s, DRIVER_PATH) != 0)
		return false;
	return true;
}

/* ------------------------------------------------------------------------ */
/* text form */

/* append_key_and_escaped_value(), with the separating comma */
static void buf_key_value(StrBuf *b, const char *key, const char *value, size_t len) {
	if (b->len > 0)
		strbuf_puts(b, ",");
	strbuf_puts(b, key);
	strbuf_puts(b, "='");
	for (size_t i = 0; i < len; i++) {
		if (value[i] == '\'')
			strbuf_puts(b, "'\\''");	/* close, escaped apostrophe, reopen */
		else
			strbuf_add(b, value + i, 1);
	}
	strbuf_puts(b, "'");
}

char *match_rule_to_string(const MatchRule *r) {
	StrBuf b = {};

	assert_return(r, NULL);

	strbuf_add(&b, "", 0);
	if (r->flags & MATCH_RULE_TYPE) {
		const char *t = wire_type_to_string(r->type);
		buf_key_value(&b, "type", t, strlen(t));
	}
	if (r->flags & MATCH_RULE_INTERFACE)
		buf_key_value(&b, "interface", r->interface, r->interface_len);
	if (r->flags & MATCH_RULE_MEMBER)
		buf_key_value(&b, "member", r->member, r->member_len);
	if (r->flags & MATCH_RULE_PATH)
		buf_key_value(&b, "path", r->path, r->path_len);
	if (r->flags & MATCH_RULE_PATH_NAMESPACE)
		buf_key_value(&b, "path_namespace", r->path, r->path_len);
	if (r->flags & MATCH_RULE_SENDER)
		buf_key_value(&b, "sender", r->sender, r->sender_len);
	if (r->flags & MATCH_RULE_DESTINATION)
		buf_key_value(&b, "destination", r->destination, r->destination_len);
	if (r->flags & MATCH_RULE_EAVESDROP)
		buf_key_value(&b, "eavesdrop", "true", 4);
	for (unsigned i = 0; i < r->n_args; i++) {
		char key[32];

		if (r->args[i].kind == MATCH_ARG_NONE)
			continue;
		snprintf(key, sizeof(key), "arg%u%s", i,
			 r->args[i].kind == MATCH_ARG_PATH ? "path" :
			 r->args[i].kind == MATCH_ARG_NAMESPACE ? "namespace" : "");
		buf_key_value(&b, key, r->args[i].value, r->args[i].len);
	}

	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* ------------------------------------------------------------------------ */
/* accessors */

unsigned match_rule_get_flags(const MatchRule *r) {
	return r->flags;
}

uint8_t match_rule_get_type(const MatchRule *r) {
	return (r->flags & MATCH_RULE_TYPE) ? r->type : WIRE_TYPE_INVALID;
}

const char *match_rule_get_sender(const MatchRule *r) {
	return r->sender;
}

const char *match_rule_get_interface(const MatchRule *r) {
	return r->interface;
}

const char *match_rule_get_member(const MatchRule *r) {
	return r->member;
}

const char *match_rule_get_path(const MatchRule *r) {
	return (r->flags & MATCH_RULE_PATH) ? r->path : NULL;
}

const char *match_rule_get_path_namespace(const MatchRule *r) {
	return (r->flags & MATCH_RULE_PATH_NAMESPACE) ? r->path : NULL;
}

const char *match_rule_get_destination(const MatchRule *r) {
	return r->destination;
}

unsigned match_rule_get_n_args(const MatchRule *r) {
	return r->n_args;
}

MatchArgKind match_rule_get_arg(const MatchRule *r, unsigned n, const char **ret_value,
				size_t *ret_len) {
	if (n >= r->n_args || r->args[n].kind == MATCH_ARG_NONE) {
		if (ret_value)
			*ret_value = NULL;
		if (ret_len)
			*ret_len = 0;
		return MATCH_ARG_NONE;
	}
	if (ret_value)
		*ret_value = r->args[n].value;
	if (ret_len)
		*ret_len = r->args[n].len;
	return (MatchArgKind)r->args[n].kind;
}
