// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * match.c - MATCH_ADD, MATCH_REMOVE and the match test of broadcasts,
 * unicast signals and kernel notifications
 *
 * A match is one MATCH_ADD: all its rules must hold (AND), any match of a
 * connection lets a message in (OR).  A match whose rules are all about
 * user messages (bloom mask, sender id or name, destination id) is tested
 * against user messages, one whose rules are all notifications against
 * notifications; an empty match takes everything.  A connection's matches
 * are under its lock.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "kshared/bloom.h"
#include "kshared/match.h"

#define KDBUS_CONN_MAX_MATCHES 256

struct kdbus_match_rule {
	u64 type;
	u64 old_id, new_id;		/* ID, DST_ID: old_id */
	const char *name;		/* NAME, NAME_* (optional) */
	const u64 *mask;		/* BLOOM_MASK */
	u64 generations;
};

struct kdbus_match {
	struct list_head entry;		/* in conn->matches */
	u64 cookie;
	bool user, kernel;
	size_t n_rules;
	struct kdbus_match_rule rules[];
};

static const u64 match_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_BLOOM_MASK, KDBUS_ITEM_NAME, KDBUS_ITEM_ID,
	KDBUS_ITEM_DST_ID, KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE,
	KDBUS_ITEM_ID_ADD, KDBUS_ITEM_ID_REMOVE,
};

/* with conn->lock held */
static unsigned int kdbus_match_remove_cookie(struct kdbus_conn *conn, u64 cookie)
{
	struct kdbus_match *m, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(m, tmp, &conn->matches, entry) {
		if (m->cookie != cookie)
			continue;
		list_del(&m->entry);
		kfree(m);
		conn->n_matches--;
		n++;
	}
	return n;
}

/* with conn->lock held, or when nobody else can see @conn */
void kdbus_match_flush(struct kdbus_conn *conn)
{
	struct kdbus_match *m, *tmp;

	list_for_each_entry_safe(m, tmp, &conn->matches, entry) {
		list_del(&m->entry);
		kfree(m);
	}
	conn->n_matches = 0;
}

int kdbus_cmd_match_add(struct kdbus_conn *conn, void __user *argp)
{
	size_t bloom_size = conn->bus->bloom.size;
	const struct kdbus_item *it;
	struct kdbus_cmd_match *cmd;
	struct kdbus_match *m = NULL;
	size_t items_size, n_rules = 0, data = 0, existing = 0;
	u8 *d;
	int r;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_match, items),
			       KDBUS_MATCH_REPLACE, match_items, ARRAY_SIZE(match_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		size_t len = it->size - KDBUS_ITEM_HEADER_SIZE;

		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_BLOOM_MASK:
			r = -EDOM;
			if (!kdbus_bloom_mask_is_valid(len, bloom_size))
				goto out;
			data += KDBUS_ALIGN8(len);
			break;
		case KDBUS_ITEM_NAME:
			if (!kdbus_name_is_valid(kdbus_item_str(it), false))
				goto out;
			data += KDBUS_ALIGN8(len);
			break;
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE:
			if (len > sizeof(struct kdbus_notify_name_change))
				data += KDBUS_ALIGN8(len - sizeof(struct kdbus_notify_name_change));
			break;
		case KDBUS_ITEM_NEGOTIATE:
			continue;
		default:
			break;	/* ID, DST_ID, ID_ADD, ID_REMOVE: of their size */
		}
		n_rules++;
	}

	r = -ENOMEM;
	m = kzalloc(KDBUS_ALIGN8(sizeof(*m) + n_rules * sizeof(m->rules[0])) + data, GFP_KERNEL_ACCOUNT);
	if (!m)
		goto out;
	m->cookie = cmd->cookie;
	m->n_rules = n_rules;
	m->user = m->kernel = true;
	d = (u8 *)m + KDBUS_ALIGN8(sizeof(*m) + n_rules * sizeof(m->rules[0]));
	n_rules = 0;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		size_t len = it->size - KDBUS_ITEM_HEADER_SIZE;
		struct kdbus_match_rule *rule;

		if (it->type == KDBUS_ITEM_NEGOTIATE)
			continue;
		rule = &m->rules[n_rules++];
		rule->type = it->type;
		if (it->type >= _KDBUS_ITEM_KERNEL_BASE)
			m->user = false;
		else
			m->kernel = false;
		switch (it->type) {
		case KDBUS_ITEM_BLOOM_MASK:
			memcpy(d, kdbus_item_str(it), len);
			rule->mask = (const u64 *)d;
			rule->generations = len / bloom_size;
			d += KDBUS_ALIGN8(len);
			break;
		case KDBUS_ITEM_NAME:
			memcpy(d, kdbus_item_str(it), len);
			rule->name = (const char *)d;
			d += KDBUS_ALIGN8(len);
			break;
		case KDBUS_ITEM_ID:
		case KDBUS_ITEM_DST_ID:
			rule->old_id = it->id;
			break;
		case KDBUS_ITEM_ID_ADD:
			rule->new_id = it->id_change.id;
			break;
		case KDBUS_ITEM_ID_REMOVE:
			rule->old_id = it->id_change.id;
			break;
		default:	/* NAME_ADD, NAME_REMOVE, NAME_CHANGE */
			rule->old_id = it->name_change.old_id.id;
			rule->new_id = it->name_change.new_id.id;
			if (len > sizeof(struct kdbus_notify_name_change)) {
				size_t l = len - sizeof(struct kdbus_notify_name_change);

				memcpy(d, kdbus_item_name_change_str(it), l);
				rule->name = (const char *)d;
				d += KDBUS_ALIGN8(l);
			}
			break;
		}
	}

	mutex_lock(&conn->lock);
	if (!conn->connected) {
		r = -ECONNRESET;
	} else if (conn->flags & KDBUS_HELLO_MONITOR) {
		r = -EOPNOTSUPP;	/* a monitor sees everything anyway */
	} else {
		struct kdbus_match *pos;

		if (cmd->flags & KDBUS_MATCH_REPLACE)
			list_for_each_entry(pos, &conn->matches, entry)
				existing += pos->cookie == cmd->cookie;
		if (conn->n_matches - existing >= KDBUS_CONN_MAX_MATCHES) {
			r = -EMFILE;
		} else {
			if (cmd->flags & KDBUS_MATCH_REPLACE)
				kdbus_match_remove_cookie(conn, cmd->cookie);
			list_add_tail(&m->entry, &conn->matches);
			conn->n_matches++;
			m = NULL;
			r = 0;
		}
	}
	mutex_unlock(&conn->lock);
out:
	kfree(m);
	kfree(cmd);
	return r;
}

int kdbus_cmd_match_remove(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_match *cmd;
	int r;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_match, items), 0);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	mutex_lock(&conn->lock);
	if (!conn->connected)
		r = -ECONNRESET;
	else
		r = kdbus_match_remove_cookie(conn, cmd->cookie) ? 0 : -EBADSLT;
	mutex_unlock(&conn->lock);
	kfree(cmd);
	return r;
}

static bool kdbus_match_rule_user(struct kdbus_bus *bus, const struct kdbus_match_rule *r,
				  const struct kdbus_match_msg *msg)
{
	switch (r->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		return kdbus_bloom_match(msg->bloom, bus->bloom.size / 8, r->mask, r->generations);
	case KDBUS_ITEM_ID:
		return r->old_id == KDBUS_MATCH_ID_ANY || r->old_id == msg->src->id;
	case KDBUS_ITEM_DST_ID:
		return r->old_id == KDBUS_MATCH_ID_ANY || r->old_id == msg->dst_id;
	case KDBUS_ITEM_NAME:
		return kdbus_name_owned_by(bus, r->name, msg->src);
	default:
		return false;
	}
}

/* with conn->lock and the name lock (for reading) held */
bool kdbus_match_user(struct kdbus_conn *conn, const struct kdbus_match_msg *msg)
{
	struct kdbus_match *m;
	size_t i;

	list_for_each_entry(m, &conn->matches, entry) {
		if (!m->user)
			continue;
		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_rule_user(conn->bus, &m->rules[i], msg))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}

/* with conn->lock held */
bool kdbus_match_kernel(struct kdbus_conn *conn, const struct kdbus_item *notify)
{
	struct kdbus_match *m;
	size_t i;

	list_for_each_entry(m, &conn->matches, entry) {
		if (!m->kernel)
			continue;
		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_notification(m->rules[i].type, m->rules[i].old_id, m->rules[i].new_id,
						      m->rules[i].name, notify))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}
