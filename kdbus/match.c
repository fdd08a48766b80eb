/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match.c - match databases and the bloom test (see match.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/item.h"
#include "kdbus/match.h"
#include "kdbus/names.h"
#include "util/macro.h"

static bool kdbus_match_rule_is_kernel(uint64_t type) {
	return type >= _KDBUS_ITEM_KERNEL_BASE;
}

void kdbus_match_db_init(KdbusMatchDb *db) {
	kdbus_hash_init(&db->by_cookie);
	list_init(&db->user);
	list_init(&db->kernel);
	db->n_matches = db->n_user = db->n_kernel = 0;
}

static void kdbus_match_free(KdbusMatchDb *db, KdbusMatch *m) {
	kdbus_hash_remove(&db->by_cookie, &m->node);
	if (list_is_linked(&m->user_link)) {
		list_unlink(&m->user_link);
		db->n_user--;
	}
	if (list_is_linked(&m->kernel_link)) {
		list_unlink(&m->kernel_link);
		db->n_kernel--;
	}
	db->n_matches--;
	free(m);
}

static size_t kdbus_match_remove_cookie(KdbusMatchDb *db, uint64_t cookie) {
	uint64_t h = kdbus_hash_u64(cookie);
	size_t n = 0;

	for (;;) {
		KdbusHashNode *i;
		KdbusMatch *found = NULL;

		kdbus_hash_for_each_candidate(i, &db->by_cookie, h) {
			KdbusMatch *m = container_of(i, KdbusMatch, node);

			if (m->cookie == cookie) {
				found = m;
				break;
			}
		}
		if (!found)
			return n;
		kdbus_match_free(db, found);
		n++;
	}
}

void kdbus_match_db_flush(KdbusBus *bus, KdbusConn *conn) {
	KdbusMatchDb *db = &conn->match_db;
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&db->by_cookie))) {
		KdbusMatch *m = container_of(n, KdbusMatch, node);

		list_unlink(&m->user_link);
		list_unlink(&m->kernel_link);
		free(m);
	}
	kdbus_hash_deinit(&db->by_cookie);
	kdbus_match_db_init(db);
	kdbus_conn_update_match_links(conn);
}

int kdbus_match_add(KdbusBus *bus, KdbusConn *conn, struct kdbus_cmd_match *cmd) {
	KdbusMatchDb *db = &conn->match_db;
	const uint8_t *start = (const uint8_t *)cmd->items;
	size_t size = cmd->size - offsetof(struct kdbus_cmd_match, items);
	size_t n_rules = 0, data = 0, pos, existing = 0;
	bool user = true, kernel = true;
	KdbusMatch *m;
	uint8_t *d;

	/* pass 1: count and check */
	for (pos = 0; pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *item = (const void *)(start + pos);
		size_t psize = KDBUS_ITEM_PAYLOAD_SIZE(item);

		switch (item->type) {
		case KDBUS_ITEM_NEGOTIATE:
			continue;
		case KDBUS_ITEM_BLOOM_MASK:
			if (psize < bus->bloom.size || psize % bus->bloom.size)
				return -EDOM;
			data += KDBUS_ALIGN8(psize);
			break;
		case KDBUS_ITEM_NAME:
			if (!kdbus_name_is_valid(item->str, false))
				return -EINVAL;
			data += psize;
			break;
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE:
			if (psize > sizeof(struct kdbus_notify_name_change))
				data += psize - sizeof(struct kdbus_notify_name_change);
			break;
		default:
			break;
		}
		if (kdbus_match_rule_is_kernel(item->type))
			user = false;
		else
			kernel = false;
		n_rules++;
	}

	if (cmd->flags & KDBUS_MATCH_REPLACE) {
		uint64_t h = kdbus_hash_u64(cmd->cookie);
		KdbusHashNode *i;

		kdbus_hash_for_each_candidate(i, &db->by_cookie, h)
			if (container_of(i, KdbusMatch, node)->cookie == cmd->cookie)
				existing++;
	}
	if (db->n_matches - existing >= bus->limits.max_matches_per_conn)
		return -EMFILE;

	m = calloc(1, sizeof(*m) + n_rules * sizeof(KdbusMatchRule) + data + 8);
	if (!m)
		return -ENOMEM;
	m->cookie = cmd->cookie;
	m->n_rules = n_rules;
	list_init(&m->user_link);
	list_init(&m->kernel_link);
	d = (uint8_t *)&m->rules[n_rules];
	d = (uint8_t *)KDBUS_ALIGN8((uintptr_t)d);

	/* pass 2: build */
	n_rules = 0;
	for (pos = 0; pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *item = (const void *)(start + pos);
		size_t psize = KDBUS_ITEM_PAYLOAD_SIZE(item);
		KdbusMatchRule *rule;

		if (item->type == KDBUS_ITEM_NEGOTIATE)
			continue;
		rule = &m->rules[n_rules++];
		rule->type = item->type;
		switch (item->type) {
		case KDBUS_ITEM_BLOOM_MASK:
			memcpy(d, item->data, psize);
			rule->mask = (const uint64_t *)d;
			rule->generations = psize / bus->bloom.size;
			d += KDBUS_ALIGN8(psize);
			break;
		case KDBUS_ITEM_NAME:
			memcpy(d, item->str, psize);
			rule->name = (const char *)d;
			d += psize;
			break;
		case KDBUS_ITEM_ID:
		case KDBUS_ITEM_DST_ID:
			rule->old_id = item->id;
			break;
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE:
			rule->old_id = item->name_change.old_id.id;
			rule->new_id = item->name_change.new_id.id;
			if (psize > sizeof(struct kdbus_notify_name_change)) {
				size_t l = psize - sizeof(struct kdbus_notify_name_change);

				memcpy(d, item->name_change.name, l);
				rule->name = (const char *)d;
				d += l;
			}
			break;
		case KDBUS_ITEM_ID_ADD:
			rule->new_id = item->id_change.id;
			break;
		case KDBUS_ITEM_ID_REMOVE:
			rule->old_id = item->id_change.id;
			break;
		default:
			break;
		}
	}

	if (kdbus_hash_add(&db->by_cookie, &m->node, kdbus_hash_u64(m->cookie)) < 0) {
		free(m);
		return -ENOMEM;
	}
	if (cmd->flags & KDBUS_MATCH_REPLACE) {
		/* take the new one out while the old ones go */
		kdbus_hash_remove(&db->by_cookie, &m->node);
		kdbus_match_remove_cookie(db, cmd->cookie);
		kdbus_hash_add(&db->by_cookie, &m->node, kdbus_hash_u64(m->cookie));
	}
	db->n_matches++;
	if (user) {
		list_link_tail(&db->user, &m->user_link);
		db->n_user++;
	}
	if (kernel) {
		list_link_tail(&db->kernel, &m->kernel_link);
		db->n_kernel++;
	}
	kdbus_conn_update_match_links(conn);
	return 0;
}

int kdbus_match_remove(KdbusBus *bus, KdbusConn *conn, uint64_t cookie) {
	if (kdbus_match_remove_cookie(&conn->match_db, cookie) == 0)
		return -EBADSLT;
	kdbus_conn_update_match_links(conn);
	return 0;
}

bool kdbus_bloom_match(const struct kdbus_bloom_filter *filter, size_t words,
		       const uint64_t *mask, uint64_t generations) {
	const uint64_t *m;
	uint64_t g;

	if (!filter)
		return false;
	g = filter->generation < generations - 1 ? filter->generation : generations - 1;
	m = mask + g * words;
	for (size_t i = 0; i < words; i++)
		if ((filter->data[i] & m[i]) != m[i])
			return false;
	return true;
}

static bool kdbus_match_rule_user(KdbusBus *bus, const KdbusMatchRule *r, KdbusConn *src,
				  uint64_t dst_id, const struct kdbus_bloom_filter *bloom) {
	switch (r->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		return kdbus_bloom_match(bloom, bus->bloom.size / 8, r->mask, r->generations);
	case KDBUS_ITEM_ID:
		return r->old_id == src->id || r->old_id == KDBUS_MATCH_ID_ANY;
	case KDBUS_ITEM_DST_ID:
		return r->old_id == dst_id || r->old_id == KDBUS_MATCH_ID_ANY;
	case KDBUS_ITEM_NAME:
		return kdbus_conn_has_name(bus, src, r->name);
	default:
		return false;
	}
}

bool kdbus_match_db_match_user(KdbusBus *bus, KdbusConn *conn, KdbusConn *src,
			       uint64_t dst_id, const struct kdbus_bloom_filter *bloom) {
	KdbusMatch *m;

	list_for_each_entry(m, &conn->match_db.user, user_link) {
		size_t i;

		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_rule_user(bus, &m->rules[i], src, dst_id, bloom))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}

static bool kdbus_match_rule_kernel(const KdbusMatchRule *r, const struct kdbus_item *n) {
	if (n->type != r->type)
		return false;

	switch (r->type) {
	case KDBUS_ITEM_ID_ADD:
		return r->new_id == KDBUS_MATCH_ID_ANY || r->new_id == n->id_change.id;
	case KDBUS_ITEM_ID_REMOVE:
		return r->old_id == KDBUS_MATCH_ID_ANY || r->old_id == n->id_change.id;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_CHANGE:
	case KDBUS_ITEM_NAME_REMOVE:
		return (r->old_id == KDBUS_MATCH_ID_ANY || r->old_id == n->name_change.old_id.id) &&
		       (r->new_id == KDBUS_MATCH_ID_ANY || r->new_id == n->name_change.new_id.id) &&
		       (!r->name || strcmp(r->name, n->name_change.name) == 0);
	default:
		return false;
	}
}

bool kdbus_match_db_match_kernel(KdbusConn *conn, const struct kdbus_item *n) {
	KdbusMatch *m;

	list_for_each_entry(m, &conn->match_db.kernel, kernel_link) {
		size_t i;

		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_rule_kernel(&m->rules[i], n))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}
