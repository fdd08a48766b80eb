/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-match.c - a client's dbus1 match rules: the one owner of its rule
 * list, their count, cookies and the core's matches installed for them
 * (client_match_add(), client_match_remove(), client_matches_clear()), and
 * the rules checked against a message (exact matching after the core's
 * bloom filter), with the memo of the last broadcast a header-only rule
 * matched.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/bloom.h"
#include "compat/kdbus-client.h"
#include "compat/match-key.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "util/macro.h"

/* one dbus1 match rule of a client, installed in the core under @cookie */
typedef struct ClientMatch {
	List link;		/* Client.matches, in the order they were added */
	MatchRule *rule;
	uint64_t cookie;
	bool eavesdrop;		/* eavesdrop=true: also sees unicasts to others */
	bool noc;		/* may match NameOwnerChanged: notifications installed */
} ClientMatch;

/* ---- the rules a client holds ---------------------------------------------- */

/* install the kdbus side of a dbus1 rule: a bloom mask for broadcasts and,
 * when the rule can match NameOwnerChanged, the name and id notifications */
static int client_match_install(Client *c, ClientMatch *m) {
	uint64_t mask[BLOOM_DEFAULT_SIZE / sizeof(uint64_t)] = {};
	int r;

	bloom_add_rule_mask(mask, BLOOM_DEFAULT_SIZE, BLOOM_DEFAULT_N_HASH, m->rule);
	/* a rule on an interface or member is filed by its key in the core
	 * (match-key.h): broadcasts of other members never look at it */
	uint64_t key;
	bool keyed = kdbus_conn_is_userspace(c->conn) && match_key_of_rule(m->rule, &key);
	r = kclient_match_bloom(c->conn, m->cookie, mask, BLOOM_DEFAULT_SIZE, keyed ? &key : NULL, keyed ? 1 : 0);
	if (r < 0)
		return r;

	if (!match_rule_may_match_name_owner_changed(m->rule))
		return 0;
	m->noc = true;
	c->matches.n_noc_rules++;
	static const KclientNotifyType name_types[] = { KCLIENT_NAME_ADD, KCLIENT_NAME_REMOVE, KCLIENT_NAME_CHANGE };
	for (size_t i = 0; i < ELEMENTSOF(name_types); i++) {
		r = kclient_match_name_change(c->conn, m->cookie, name_types[i], KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY);
		if (r < 0)
			return r;
	}
	static const KclientNotifyType id_types[] = { KCLIENT_ID_ADD, KCLIENT_ID_REMOVE };
	for (size_t i = 0; i < ELEMENTSOF(id_types); i++) {
		r = kclient_match_id_change(c->conn, m->cookie, id_types[i], KDBUS_MATCH_ID_ANY);
		if (r < 0)
			return r;
	}
	return 0;
}

/* @m leaves @c's list (and is freed): its count is the caller's */
static void client_match_free(Client *c, ClientMatch *m) {
	if (!m)
		return;
	if (m->noc)
		c->matches.n_noc_rules--;
	list_unlink(&m->link);
	match_rule_free(m->rule);
	free(m);
	c->matches.memo.header_id = 0;	/* it may have been this rule */
}

/* the core's matches of @m go, and @m with them */
static void client_match_uninstall(Client *c, ClientMatch *m) {
	(void) kclient_match_remove(c->conn, m->cookie);
	client_match_free(c, m);
	c->matches.n--;
	bus_stats_match_rules(&c->bus->stats, -1);
}

int client_match_add(Client *c, MatchRule *rule) {
	Bus *bus = c->bus;
	ClientMatch *m;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m) {
		match_rule_free(rule);
		return -ENOMEM;
	}
	list_init(&m->link);
	m->rule = rule;
	m->cookie = ++c->matches.next_cookie;
	list_link_tail(&c->matches.list, &m->link);
	c->matches.n++;
	bus_stats_match_rules(&bus->stats, 1);
	r = client_match_install(c, m);
	if (r < 0) {
		client_match_uninstall(c, m);
		return r == -EMFILE ? -EXFULL : r;
	}
	m->eavesdrop = match_rule_is_eavesdrop(m->rule);
	stats_peak(&c->matches.peak, c->matches.n);
	bus_stats_match_rules_peak(&bus->stats, c->matches.n);
	return 0;
}

int client_match_remove(Client *c, const MatchRule *rule) {
	ClientMatch *m, *found = NULL;

	/* the most recently added equal rule goes first */
	list_for_each_entry(m, &c->matches.list, link)
		if (match_rule_equal(m->rule, rule))
			found = m;
	if (!found)
		return -ENOENT;
	client_match_uninstall(c, found);
	return 0;
}

void client_matches_init(Client *c) {
	c->matches = (ClientMatches) {};
	list_init(&c->matches.list);
}

void client_matches_clear(Client *c) {
	ClientMatch *m, *tmp;

	list_for_each_entry_safe(m, tmp, &c->matches.list, link) {
		list_unlink(&m->link);
		match_rule_free(m->rule);
		free(m);
	}
	bus_stats_match_rules(&c->bus->stats, -(int64_t) c->matches.n);
	c->matches.n = 0;
	c->matches.n_noc_rules = 0;
	c->matches.memo.header_id = 0;
}

int client_match_foreach(Client *c, int (*fn)(const MatchRule *rule, void *userdata), void *userdata) {
	ClientMatch *m;
	int r;

	list_for_each_entry(m, &c->matches.list, link) {
		r = fn(m->rule, userdata);
		if (r != 0)
			return r;
	}
	return 0;
}

/* ---- the rules checked against a message ------------------------------------ */

/* the id owning @name, 0 if none */
/* (out of line: the address of its id would cost its callers on the
 * broadcast path a stack canary) */
_noinline_ uint64_t client_name_owner(Client *c, const char *name) {
	uint64_t id = 0;

	return kclient_name_owner(c->conn, name, &id) < 0 ? 0 : id;
}

static bool client_id_owns_name(Client *c, uint64_t id, const char *name) {
	return id && client_name_owner(c, name) == id;
}

typedef struct MatchIds {
	Client *c;
	uint64_t sender_id;
	uint64_t receiver_id;
} MatchIds;

static bool client_sender_has_name(void *userdata, const char *name) {
	MatchIds *ids = userdata;
	return client_id_owns_name(ids->c, ids->sender_id, name);
}

static bool client_receiver_has_name(void *userdata, const char *name) {
	MatchIds *ids = userdata;
	return client_id_owns_name(ids->c, ids->receiver_id, name);
}

/* do @c's rules (or, for a monitor, its BecomeMonitor rules) match a
 * message from @sender_id addressed to @dst_id (KDBUS_DST_ID_BROADCAST for
 * broadcasts)?  With @eavesdrop_only, only eavesdrop='true' rules count. */
bool client_match_any_of(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			 uint64_t dst_id, bool monitor, bool eavesdrop_only, const MatchRule **ret_rule) {
	MatchIds ids = { c, sender_id, dst_id };
	char receiver[24] = "";
	MatchContext ctx = {
		.sender = h->sender.s,
		.sender_has_name = client_sender_has_name,
		.receiver_has_name = client_receiver_has_name,
		.userdata = &ids,
		.eavesdropping = monitor,	/* monitors always eavesdrop */
	};

	if (dst_id != KDBUS_DST_ID_BROADCAST && dst_id != 0) {
		message_unique_name_format(receiver, dst_id);
		ctx.receiver = receiver;
	}

	if (monitor) {
		if (c->n_monitor_rules == 0)
			return true;
		for (size_t i = 0; i < c->n_monitor_rules; i++)
			if (match_rule_matches(c->monitor_rules[i], h, body, &ctx))
				return true;
		return false;
	}

	ClientMatch *m;
	list_for_each_entry(m, &c->matches.list, link)
		if ((!eavesdrop_only || m->eavesdrop) && match_rule_matches(m->rule, h, body, &ctx)) {
			if (ret_rule)
				*ret_rule = m->rule;
			return true;
		}
	return false;
}

/* does a rule's answer depend only on the header (but the serial)?  No
 * argN keys (the body), no well-known sender or any destination (name
 * ownership) */
static bool client_match_header_only(const MatchRule *r) {
	unsigned f = match_rule_get_flags(r);
	const char *s;

	if (f & (MATCH_RULE_ARGS | MATCH_RULE_DESTINATION))
		return false;
	s = (f & MATCH_RULE_SENDER) ? match_rule_get_sender(r) : NULL;
	return !s || s[0] == ':' || streq(s, DRIVER_NAME);
}

/*
 * client_match_any() of a broadcast to a client that is not a monitor,
 * for a stream of like broadcasts: a header-only rule that matched one
 * matches every broadcast with the same header (@header_id, from
 * client_header_parse_shared_id()) from the same sender, until a rule is
 * removed (an added one cannot undo a match), so that is remembered.
 */
/* client_match_broadcast() when the memo does not answer (out of line:
 * the address of the rule that matched would cost every broadcast
 * received a stack canary) */
static _noinline_ bool client_match_broadcast_rules(Client *c, const WireHeader *h, const uint8_t *body,
						    uint64_t header_id, uint64_t sender_id) {
	const MatchRule *r = NULL;

	if (!client_match_any_of(c, h, body, sender_id, KDBUS_DST_ID_BROADCAST, false, false, &r))
		return false;
	if (header_id && client_match_header_only(r)) {
		c->matches.memo.header_id = header_id;
		c->matches.memo.sender_id = sender_id;
	}
	return true;
}

bool client_match_broadcast(Client *c, const WireHeader *h, const uint8_t *body, uint64_t header_id,
			    uint64_t sender_id) {
	if (header_id && c->matches.memo.header_id == header_id && c->matches.memo.sender_id == sender_id)
		return true;
	return client_match_broadcast_rules(c, h, body, header_id, sender_id);
}

bool client_match_any(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
		      uint64_t dst_id, bool monitor) {
	return client_match_any_of(c, h, body, sender_id, dst_id, monitor, false, NULL);
}

bool client_eavesdrop_matches(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			      uint64_t dst_id) {
	return client_match_any_of(c, h, body, sender_id, dst_id, false, true, NULL);
}
