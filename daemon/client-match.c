/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-match.c - a client's dbus1 match rules checked against a message
 * (exact matching after the core's bloom filter), with the memo of the last
 * broadcast a header-only rule matched.
 */

#include "compat/bloom.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"

/* the id owning @name, 0 if none */
uint64_t client_name_owner(Client *c, const char *name) {
	uint64_t id = 0;

	return bus_name_owner(c->conn, name, &id) < 0 ? 0 : id;
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
	list_for_each_entry(m, &c->matches, link)
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
 * bus_header_parse_shared_id()) from the same sender, until a rule is
 * removed (an added one cannot undo a match), so that is remembered.
 */
bool client_match_broadcast(Client *c, const WireHeader *h, const uint8_t *body, uint64_t header_id,
			    uint64_t sender_id) {
	const MatchRule *r = NULL;

	if (header_id && c->match_memo.header_id == header_id && c->match_memo.sender_id == sender_id)
		return true;
	if (!client_match_any_of(c, h, body, sender_id, KDBUS_DST_ID_BROADCAST, false, false, &r))
		return false;
	if (header_id && client_match_header_only(r)) {
		c->match_memo.header_id = header_id;
		c->match_memo.sender_id = sender_id;
	}
	return true;
}

bool client_match_any(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
		      uint64_t dst_id, bool monitor) {
	return client_match_any_of(c, h, body, sender_id, dst_id, monitor, false, NULL);
}

bool client_eavesdrop_matches(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			      uint64_t dst_id) {
	return client_match_any_of(c, h, body, sender_id, dst_id, false, true, NULL);
}
