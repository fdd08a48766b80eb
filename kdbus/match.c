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
#include "kshared/match.h"
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

/*
 * The broadcast index.  A user match that holds a one-generation bloom
 * mask can only match a filter that has every bit of that mask, so it is
 * filed under one of them: the one the fewest indexed masks have (then the
 * one with the fewest matches filed), so that rules which share an
 * interface but differ in a member go under a bit of their member, which
 * other signals of the interface set only by chance.  A broadcast then
 * tests only the matches filed under the bits its filter has, plus the
 * unindexed ones.  A match with MATCH_KEYS is filed under its first key
 * instead (KdbusBus.umatch_keyed): a broadcast looks up its own keys, and
 * the matches on other keys are never looked at.
 */
/* the mask a match is indexed by (the last one-generation mask) */
static const uint64_t *kdbus_match_index_mask(const KdbusMatch *m) {
	const uint64_t *mask = NULL;

	for (size_t i = 0; i < m->n_rules; i++)
		if (m->rules[i].type == KDBUS_ITEM_BLOOM_MASK && m->rules[i].generations == 1)
			mask = m->rules[i].mask;
	return mask;
}

/* the quick test of a match: the mask's word with the most bits */
static void kdbus_match_index_quick(KdbusBus *bus, KdbusMatchIndex *ix, const uint64_t *mask) {
	for (size_t w = 0; mask && w < bus->bloom.size / 8; w++)
		if (__builtin_popcountll(mask[w]) > __builtin_popcountll(ix->quick_bits)) {
			ix->quick_word = (uint32_t)w;
			ix->quick_bits = mask[w];
		}
}

static void kdbus_match_index_add(KdbusBus *bus, KdbusMatch *m) {
	KdbusMatchIndex *ix = m->ix;
	size_t words = bus->bloom.size / 8, bits = words * 64;
	const uint64_t *mask = kdbus_match_index_mask(m);
	int32_t best = -1;

	ix->key_bit = -1;
	ix->memo_ok = true;
	for (size_t i = 0; i < m->n_rules; i++) {
		if (m->rules[i].type == KDBUS_ITEM_NAME)
			ix->memo_ok = false;	/* the sender's names change */
		if (m->rules[i].type == KDBUS_ITEM_MATCH_KEYS && !ix->keyed) {
			ix->keyed = true;
			ix->key = m->rules[i].mask[0];
		}
	}
	if (ix->keyed) {
		kdbus_match_index_quick(bus, ix, mask);
		if (kdbus_hash_add(&bus->umatch_keyed, &ix->key_node, kdbus_hash_u64(ix->key)) == 0) {
			bus->umatch_n++;
			return;
		}
		ix->keyed = false;	/* no table: the bloom index serves it */
	}
	if (mask && !bus->umatch_index) {
		bus->umatch_index = malloc(bits * sizeof(List));
		bus->umatch_index_load = calloc(bits, sizeof(uint32_t));
		bus->umatch_index_used = calloc(words, sizeof(uint64_t));
		bus->umatch_index_freq = calloc(bits, sizeof(uint32_t));
		if (!bus->umatch_index || !bus->umatch_index_load || !bus->umatch_index_used ||
		    !bus->umatch_index_freq) {
			free(bus->umatch_index);
			free(bus->umatch_index_load);
			free(bus->umatch_index_used);
			free(bus->umatch_index_freq);
			bus->umatch_index = NULL;
			bus->umatch_index_load = NULL;
			bus->umatch_index_used = NULL;
			bus->umatch_index_freq = NULL;
		} else {
			for (size_t b = 0; b < bits; b++)
				list_init(&bus->umatch_index[b]);
		}
	}
	if (mask && bus->umatch_index)
		for (size_t w = 0; w < words; w++)
			for (uint64_t x = mask[w]; x; x &= x - 1) {
				int32_t b = (int32_t)(w * 64 + (size_t)__builtin_ctzll(x));
				const uint32_t *f = bus->umatch_index_freq, *l = bus->umatch_index_load;

				if (best < 0 || f[b] < f[best] || (f[b] == f[best] && l[b] < l[best]))
					best = b;
			}
	if (best >= 0) {
		for (size_t w = 0; w < words; w++)
			for (uint64_t x = mask[w]; x; x &= x - 1)
				bus->umatch_index_freq[w * 64 + (size_t)__builtin_ctzll(x)]++;
		kdbus_match_index_quick(bus, ix, mask);
		ix->key_bit = best;
		bus->umatch_index_load[best]++;
		bus->umatch_index_used[best / 64] |= 1ULL << (best % 64);
		list_link_tail(&bus->umatch_index[best], &ix->link);
	} else {
		list_link_tail(&bus->umatch_unindexed, &ix->link);
	}
	bus->umatch_n++;
}

static void kdbus_match_index_remove(KdbusMatch *m) {
	KdbusMatchIndex *ix = m->ix;

	if (ix && ix->keyed) {
		kdbus_hash_remove(&ix->conn->bus->umatch_keyed, &ix->key_node);
		ix->keyed = false;
		ix->conn->bus->umatch_n--;
		return;
	}
	if (!ix || !list_is_linked(&ix->link))
		return;
	KdbusBus *bus = ix->conn->bus;

	list_unlink(&ix->link);
	if (ix->key_bit >= 0) {
		if (--bus->umatch_index_load[ix->key_bit] == 0)
			bus->umatch_index_used[ix->key_bit / 64] &= ~(1ULL << (ix->key_bit % 64));
		const uint64_t *mask = kdbus_match_index_mask(m);

		for (size_t w = 0; w < bus->bloom.size / 8; w++)
			for (uint64_t x = mask[w]; x; x &= x - 1)
				bus->umatch_index_freq[w * 64 + (size_t)__builtin_ctzll(x)]--;
	}
	bus->umatch_n--;
}

static void kdbus_match_free(KdbusMatchDb *db, KdbusMatch *m) {
	kdbus_match_index_remove(m);
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

		kdbus_match_index_remove(m);
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
			if (!kdbus_bloom_mask_is_valid(psize, bus->bloom.size))
				return -EDOM;
			data += KDBUS_ALIGN8(psize);
			break;
		case KDBUS_ITEM_NAME:
			if (!kdbus_name_is_valid(item->str, false))
				return -EINVAL;
			data += KDBUS_ALIGN8(psize);	/* masks and keys stay aligned */
			break;
		case KDBUS_ITEM_MATCH_KEYS:
			data += KDBUS_ALIGN8(psize);
			break;
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE:
			if (psize > sizeof(struct kdbus_notify_name_change))
				data += KDBUS_ALIGN8(psize - sizeof(struct kdbus_notify_name_change));
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
	/* the user's budget (user.h); kdbus_conn_update_match_links() syncs it
	 * with the connection's count afterwards */
	if (db->n_matches - existing + 1 > conn->self_charge.amount[KDBUS_USER_MATCHES] &&
	    kdbus_user_charge_set(bus, conn->user, &conn->self_charge, KDBUS_USER_MATCHES,
				  db->n_matches - existing + 1) < 0)
		return -EMFILE;

	size_t base = sizeof(*m) + n_rules * sizeof(KdbusMatchRule) + data + 8;

	m = calloc(1, base + (user ? sizeof(KdbusMatchIndex) + 8 : 0));
	if (!m)
		return -ENOMEM;
	m->cookie = cmd->cookie;
	m->n_rules = n_rules;
	list_init(&m->user_link);
	list_init(&m->kernel_link);
	if (user) {
		m->ix = (KdbusMatchIndex *)KDBUS_ALIGN8((uintptr_t)m + base);
		m->ix->match = m;
		m->ix->conn = conn;
		m->ix->key_bit = -1;
		list_init(&m->ix->link);
	}
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
			d += KDBUS_ALIGN8(psize);
			break;
		case KDBUS_ITEM_MATCH_KEYS:
			memcpy(d, item->data, psize);
			rule->mask = (const uint64_t *)d;
			rule->generations = psize / sizeof(uint64_t);
			d += KDBUS_ALIGN8(psize);
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
				d += KDBUS_ALIGN8(l);
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
		kdbus_match_index_add(bus, m);
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

/* MATCH_KEYS: does the message have each of the rule's keys */
static bool kdbus_match_keys(const KdbusMatchRule *r, const KdbusMatchMsg *msg) {
	for (uint64_t i = 0; i < r->generations; i++) {
		size_t k = 0;

		while (k < msg->n_keys && msg->keys[k] != r->mask[i])
			k++;
		if (k == msg->n_keys)
			return false;
	}
	return true;
}

static bool kdbus_match_rule_user(KdbusBus *bus, const KdbusMatchRule *r, const KdbusMatchMsg *msg) {
	switch (r->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		return kdbus_bloom_match(msg->bloom, bus->bloom.size / 8, r->mask, r->generations);
	case KDBUS_ITEM_ID:
		return r->old_id == msg->src->id || r->old_id == KDBUS_MATCH_ID_ANY;
	case KDBUS_ITEM_DST_ID:
		return r->old_id == msg->dst_id || r->old_id == KDBUS_MATCH_ID_ANY;
	case KDBUS_ITEM_NAME:
		return kdbus_conn_has_name(bus, msg->src, r->name);
	case KDBUS_ITEM_MATCH_KEYS:
		return kdbus_match_keys(r, msg);
	default:
		return false;
	}
}

bool kdbus_match_one_user(KdbusBus *bus, const KdbusMatch *m, const KdbusMatchMsg *msg) {
	size_t words = bus->bloom.size / 8;

	for (size_t i = 0; i < m->n_rules; i++) {
		const KdbusMatchRule *r = &m->rules[i];

		if (r->type == KDBUS_ITEM_BLOOM_MASK && r->generations == 1 && msg->bloom) {
			/* the common case, without the generation arithmetic */
			for (size_t w = 0; w < words; w++)
				if ((msg->bloom->data[w] & r->mask[w]) != r->mask[w])
					return false;
			continue;
		}
		if (!kdbus_match_rule_user(bus, r, msg))
			return false;
	}
	return true;
}

bool kdbus_match_db_match_user(KdbusBus *bus, KdbusConn *conn, const KdbusMatchMsg *msg) {
	KdbusMatch *m;

	list_for_each_entry(m, &conn->match_db.user, user_link) {
		size_t i;

		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_rule_user(bus, &m->rules[i], msg))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}

bool kdbus_match_db_match_kernel(KdbusConn *conn, const struct kdbus_item *n) {
	KdbusMatch *m;

	list_for_each_entry(m, &conn->match_db.kernel, kernel_link) {
		size_t i;

		for (i = 0; i < m->n_rules; i++)
			if (!kdbus_match_notification(m->rules[i].type, m->rules[i].old_id, m->rules[i].new_id,
						      m->rules[i].name, n))
				break;
		if (i == m->n_rules)
			return true;
	}
	return false;
}
