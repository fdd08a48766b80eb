/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.c - the bus policy database (see policy.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus/item.h"
#include "kdbus/metadata.h"
#include "kdbus/policy.h"
#include "kshared/policy.h"
#include "util/macro.h"

void kdbus_policy_db_init(KdbusPolicyDb *db) {
	kdbus_hash_init(&db->entries);
}

void kdbus_policy_db_deinit(KdbusPolicyDb *db) {
	KdbusHashNode *n;

	while ((n = kdbus_hash_pop(&db->entries))) {
		KdbusPolicyEntry *e = container_of(n, KdbusPolicyEntry, node);

		list_unlink(&e->owner_link);
		free(e->access);
		free(e);
	}
	kdbus_hash_deinit(&db->entries);
}

/* the key's hash: our seeded string hash, mixed as kshared/policy.h says */
static uint64_t kdbus_policy_hash(const char *name, size_t len, bool wildcard) {
	return kdbus_policy_key_hash(kdbus_hash_str(name, len), wildcard);
}

static KdbusPolicyEntry *kdbus_policy_lookup(KdbusPolicyDb *db, const char *name, size_t len,
					     bool wildcard) {
	uint64_t h = kdbus_policy_hash(name, len, wildcard);
	KdbusHashNode *n;

	kdbus_hash_for_each_candidate(n, &db->entries, h) {
		KdbusPolicyEntry *e = container_of(n, KdbusPolicyEntry, node);

		if (e->wildcard == wildcard && e->len == len && memcmp(e->name, name, len) == 0)
			return e;
	}
	return NULL;
}

static void kdbus_policy_entry_free(KdbusPolicyEntry *e) {
	if (!e)
		return;
	list_unlink(&e->owner_link);
	free(e->access);
	free(e);
}

static void kdbus_policy_list_free(List *l) {
	while (!list_is_empty(l))
		kdbus_policy_entry_free(list_first_entry(l, KdbusPolicyEntry, owner_link));
}

int kdbus_policy_set(KdbusPolicyDb *db, const struct kdbus_item *items, size_t items_size,
		     size_t max_policies, bool allow_wildcards, const void *owner,
		     List *owner_list) {
	List fresh = LIST_INIT(fresh);
	KdbusPolicyEntry *cur = NULL, *e, *tmp;
	size_t n_policies = 0, pos;
	int r = 0;

	for (pos = 0; pos < items_size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)((const uint8_t *)items + pos))->size)) {
		const struct kdbus_item *item = (const void *)((const uint8_t *)items + pos);

		if (item->type == KDBUS_ITEM_NAME) {
			const char *name = item->str;
			size_t len;
			bool wildcard;

			if (max_policies && ++n_policies > max_policies) {
				r = -EINVAL;
				goto fail;
			}
			r = kdbus_policy_name_parse(name, allow_wildcards, &len, &wildcard);
			if (r < 0)
				goto fail;
			cur = calloc(1, sizeof(*cur) + len + 1);
			if (!cur) {
				r = -ENOMEM;
				goto fail;
			}
			memcpy(cur->name, name, len);
			cur->len = len;
			cur->wildcard = wildcard;
			cur->owner = owner;
			list_link_tail(&fresh, &cur->owner_link);
		} else if (item->type == KDBUS_ITEM_POLICY_ACCESS) {
			const struct kdbus_policy_access *a = &item->policy_access;
			struct kdbus_policy_access *v;

			if (!cur) {
				r = -EINVAL;
				goto fail;
			}
			if (!kdbus_policy_access_is_valid(a)) {
				r = -EINVAL;
				goto fail;
			}
			v = realloc(cur->access, (cur->n_access + 1) * sizeof(*v));
			if (!v) {
				r = -ENOMEM;
				goto fail;
			}
			cur->access = v;
			cur->access[cur->n_access++] = *a;
		}
	}

	/* duplicates within the set (temporary hash), or owned by somebody else */
	{
		KdbusHash seen = KDBUS_HASH_INIT;

		list_for_each_entry(e, &fresh, owner_link) {
			uint64_t h = kdbus_policy_hash(e->name, e->len, e->wildcard);
			KdbusPolicyEntry *o;
			KdbusHashNode *n;
			bool dup = false;

			kdbus_hash_for_each_candidate(n, &seen, h) {
				o = container_of(n, KdbusPolicyEntry, node);
				if (o->wildcard == e->wildcard && o->len == e->len &&
				    memcmp(o->name, e->name, e->len) == 0)
					dup = true;
			}
			o = kdbus_policy_lookup(db, e->name, e->len, e->wildcard);
			if (dup || (o && o->owner != owner)) {
				kdbus_hash_deinit(&seen);
				r = -EEXIST;
				goto fail;
			}
			if (kdbus_hash_add(&seen, &e->node, h) < 0) {
				kdbus_hash_deinit(&seen);
				r = -ENOMEM;
				goto fail;
			}
		}
		kdbus_hash_deinit(&seen);
	}

	/* replace */
	list_for_each_entry(e, owner_list, owner_link)
		kdbus_hash_remove(&db->entries, &e->node);
	kdbus_policy_list_free(owner_list);
	list_for_each_entry_safe(e, tmp, &fresh, owner_link) {
		list_unlink(&e->owner_link);
		if (kdbus_hash_add(&db->entries, &e->node,
				   kdbus_policy_hash(e->name, e->len, e->wildcard)) < 0) {
			kdbus_policy_entry_free(e);
			r = -ENOMEM;
			continue;
		}
		list_link_tail(owner_list, &e->owner_link);
	}
	return r;

fail:
	kdbus_policy_list_free(&fresh);
	return r;
}

void kdbus_policy_remove_owner(KdbusPolicyDb *db, List *owner_list) {
	KdbusPolicyEntry *e;

	list_for_each_entry(e, owner_list, owner_link)
		kdbus_hash_remove(&db->entries, &e->node);
	kdbus_policy_list_free(owner_list);
}

static int kdbus_policy_check_access(const KdbusPolicyEntry *e, const KdbusMeta *who) {
	int best = -EPERM;

	for (size_t i = 0; i < e->n_access; i++) {
		const struct kdbus_policy_access *a = &e->access[i];
		bool match;

		switch (a->type) {
		case KDBUS_POLICY_ACCESS_USER:
			match = a->id == who->creds.euid;
			break;
		case KDBUS_POLICY_ACCESS_GROUP:
			match = kdbus_meta_in_group(who, a->id);
			break;
		case KDBUS_POLICY_ACCESS_WORLD:
			match = true;
			break;
		default:
			match = false;
			break;
		}
		if (match && (int)a->access > best)
			best = (int)a->access;
	}
	return best;
}

int kdbus_policy_query(KdbusPolicyDb *db, const KdbusMeta *who, const char *name) {
	size_t len = strlen(name);
	KdbusPolicyEntry *e;

	if (db->entries.n_entries == 0)
		return -ENOENT;

	/* the exact entry, else the nearest enclosing wildcard, at any
	 * depth (kshared/policy.h) */
	e = kdbus_policy_lookup(db, name, len, false);
	while (!e && (len = kdbus_policy_next_wildcard(name, len)) > 0)
		e = kdbus_policy_lookup(db, name, len, true);
	if (!e)
		return -ENOENT;	/* no entry covers the name */
	return kdbus_policy_check_access(e, who);
}
