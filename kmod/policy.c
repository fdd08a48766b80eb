// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policy.c - the policy databases: which users and groups may SEE, TALK
 * to and OWN which names (OWN implies TALK implies SEE)
 *
 * A bus has one: its entries come from policy holders
 * (HELLO_POLICY_HOLDER, replaced with UPDATE) and from activators'
 * POLICY_ACCESS items; each belongs to the connection that installed it
 * and goes with it.  Privileged connections and the bus owner are not
 * bound by it (OWN), nor connections of the same user (TALK).
 *
 * A custom endpoint has one more, its owner's (ENDPOINT_MAKE, replaced
 * with ENDPOINT_UPDATE), that binds everybody who connects through it,
 * privileged or not, before the bus's: what it does not grant is
 * forbidden.  It alone has SEE entries: a connection of a custom
 * endpoint sees a name only when its policy lets it, and a peer only
 * when it sees one of the peer's names; what it cannot see does not
 * exist for it (LIST, CONN_INFO, name notifications, OWNED_NAME items,
 * destinations of SEND).
 *
 * An entry is a name or a wildcard "a.b.*" (policy holders and
 * endpoints) that covers every name below a.b, at any depth (as the
 * userspace core: our extension of kdbus's one level); an exact entry
 * wins over a wildcard, the nearest wildcard over a farther one.  Every
 * database of a bus is under bus->policy_lock.
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/stringhash.h>

#include "internal.h"
#include "kshared/policy.h"

/* one POLICY_ACCESS item, its id in the kernel's terms */
struct kdbus_policy_rule {
	u64 type;			/* KDBUS_POLICY_ACCESS_* */
	u64 access;			/* KDBUS_POLICY_* */
	kuid_t uid;			/* ACCESS_USER */
	kgid_t gid;			/* ACCESS_GROUP */
};

struct kdbus_policy_entry {
	struct hlist_node hentry;	/* in its database */
	struct list_head owner_link;	/* in its owner's list */
	const void *owner;		/* a connection, or an endpoint */
	bool wildcard;			/* "name.*", stored without ".*" */
	u32 hash;
	size_t n_access;
	struct kdbus_policy_rule *access;
	char name[];
};

/* the key's hash: the kernel's string hash, mixed as kshared/policy.h says */
static u32 kdbus_policy_hash(const char *name, size_t len, bool wildcard)
{
	return kdbus_policy_key_hash(full_name_hash(NULL, name, len), wildcard);
}

static struct kdbus_policy_entry *kdbus_policy_find(const struct kdbus_policy_db *db, const char *name,
						    size_t len, bool wildcard)
{
	struct kdbus_policy_entry *e;
	u32 hash = kdbus_policy_hash(name, len, wildcard);

	hash_for_each_possible(db->entries, e, hentry, hash)
		if (e->hash == hash && e->wildcard == wildcard && strlen(e->name) == len &&
		    memcmp(e->name, name, len) == 0)
			return e;
	return NULL;
}

static void kdbus_policy_entry_free(struct kdbus_policy_entry *e)
{
	list_del(&e->owner_link);
	kfree(e->access);
	kfree(e);
}

/* the entries of @list, out of any database or with nobody to see them */
void kdbus_policy_list_free(struct list_head *list)
{
	while (!list_empty(list))
		kdbus_policy_entry_free(list_first_entry(list, struct kdbus_policy_entry, owner_link));
}

/*
 * A POLICY_ACCESS item's id is a uid or gid of the namespace of the
 * connection that installs it; an id that does not map there is refused
 * (EINVAL), never truncated.
 */
static int kdbus_policy_rule_make(struct kdbus_policy_rule *rule, const struct kdbus_policy_access *a,
				  struct user_namespace *ns)
{
	*rule = (struct kdbus_policy_rule) { .type = a->type, .access = a->access };
	if (a->type == KDBUS_POLICY_ACCESS_WORLD)
		return 0;
	if (a->id >= (u64)(uid_t)-1)
		return -EINVAL;
	if (a->type == KDBUS_POLICY_ACCESS_USER) {
		rule->uid = make_kuid(ns, (uid_t)a->id);
		return uid_valid(rule->uid) ? 0 : -EINVAL;
	}
	rule->gid = make_kgid(ns, (gid_t)a->id);
	return gid_valid(rule->gid) ? 0 : -EINVAL;
}

void kdbus_policy_db_init(struct kdbus_policy_db *db)
{
	hash_init(db->entries);
}

/**
 * kdbus_policy_set() - replace @owner's entries in @db with those of @items
 * @bus:	the bus (its policy lock guards @db)
 * @db:		the bus's database, or a custom endpoint's
 * @owner:	a policy holder, an activator, or the endpoint
 * @owner_list:	@owner's list of its entries
 * @ns:		the user namespace the items' ids are in (@owner's)
 * @items:	NAME items, each followed by its POLICY_ACCESS items (other
 *		items are skipped)
 * @items_size:	their size
 * @max_names:	how many NAME items are allowed (0: any)
 * @wildcards:	whether "name.*" entries are allowed
 *
 * Reads no user memory.  All or nothing: on failure the old entries stay.
 *
 * Return: 0, -EINVAL (bad name or access), -EEXIST (a name twice, or
 * somebody else's), -ENOMEM.
 */
int kdbus_policy_set(struct kdbus_bus *bus, struct kdbus_policy_db *db, const void *owner,
		     struct list_head *owner_list, struct user_namespace *ns,
		     const struct kdbus_item *items, size_t items_size, size_t max_names, bool wildcards)
{
	struct kdbus_policy_entry *cur = NULL, *e, *o;
	const struct kdbus_item *it;
	size_t n_names = 0;
	LIST_HEAD(fresh);
	int r;

	KDBUS_ITEMS_FOREACH(it, items, items_size) {
		if (it->type == KDBUS_ITEM_NAME) {
			const char *name = kdbus_item_str(it);
			size_t len;
			bool wildcard;

			r = -EINVAL;
			if (max_names && ++n_names > max_names)
				goto fail;
			r = kdbus_policy_name_parse(name, wildcards, &len, &wildcard);
			if (r < 0)
				goto fail;
			r = -ENOMEM;
			cur = kzalloc(sizeof(*cur) + len + 1, GFP_KERNEL_ACCOUNT);
			if (!cur)
				goto fail;
			memcpy(cur->name, name, len);
			cur->wildcard = wildcard;
			cur->hash = kdbus_policy_hash(cur->name, len, wildcard);
			cur->owner = owner;
			list_add_tail(&cur->owner_link, &fresh);
		} else if (it->type == KDBUS_ITEM_POLICY_ACCESS) {
			const struct kdbus_policy_access *a = &it->policy_access;
			struct kdbus_policy_rule rule, *v;

			r = -EINVAL;
			if (!cur || !kdbus_policy_access_is_valid(a))
				goto fail;
			r = kdbus_policy_rule_make(&rule, a, ns);
			if (r < 0)
				goto fail;
			r = -ENOMEM;
			v = krealloc_array(cur->access, cur->n_access + 1, sizeof(*v), GFP_KERNEL_ACCOUNT);
			if (!v)
				goto fail;
			cur->access = v;
			cur->access[cur->n_access++] = rule;
		}
	}

	down_write(&bus->policy_lock);
	r = -EEXIST;
	list_for_each_entry(e, &fresh, owner_link) {
		list_for_each_entry(o, &fresh, owner_link) {
			if (o == e)
				break;
			if (o->wildcard == e->wildcard && strcmp(o->name, e->name) == 0)
				goto fail_unlock;
		}
		o = kdbus_policy_find(db, e->name, strlen(e->name), e->wildcard);
		if (o && o->owner != owner)
			goto fail_unlock;
	}
	list_for_each_entry(e, owner_list, owner_link)
		hash_del(&e->hentry);
	kdbus_policy_list_free(owner_list);
	list_for_each_entry(e, &fresh, owner_link)
		hash_add(db->entries, &e->hentry, e->hash);
	list_splice_init(&fresh, owner_list);
	up_write(&bus->policy_lock);
	return 0;

fail_unlock:
	up_write(&bus->policy_lock);
fail:
	kdbus_policy_list_free(&fresh);
	return r;
}

/* an owner goes: so do its entries (@owner_list) */
void kdbus_policy_remove(struct kdbus_bus *bus, struct list_head *owner_list)
{
	struct kdbus_policy_entry *e;

	down_write(&bus->policy_lock);
	list_for_each_entry(e, owner_list, owner_link)
		hash_del(&e->hentry);
	kdbus_policy_list_free(owner_list);
	up_write(&bus->policy_lock);
}

static bool kdbus_cred_in_group(const struct cred *cred, kgid_t gid)
{
	const struct group_info *gi = cred->group_info;
	int i;

	if (gid_eq(cred->egid, gid))
		return true;
	for (i = 0; gi && i < gi->ngroups; i++)
		if (gid_eq(gi->gid[i], gid))
			return true;
	return false;
}

static int kdbus_policy_entry_access(const struct kdbus_policy_entry *e, const struct cred *cred)
{
	int best = -EPERM;
	size_t i;

	for (i = 0; i < e->n_access; i++) {
		const struct kdbus_policy_rule *a = &e->access[i];
		bool match = false;

		switch (a->type) {
		case KDBUS_POLICY_ACCESS_USER:
			match = uid_eq(cred->euid, a->uid);
			break;
		case KDBUS_POLICY_ACCESS_GROUP:
			match = kdbus_cred_in_group(cred, a->gid);
			break;
		case KDBUS_POLICY_ACCESS_WORLD:
			match = true;
			break;
		}
		if (match && (int)a->access > best)
			best = a->access;
	}
	return best;
}

/* with the policy lock held: the access @cred has to @name in @db (a
 * KDBUS_POLICY_* level), -EPERM when an entry covers it without granting
 * anything, -ENOENT when none covers it */
int kdbus_policy_query_locked(const struct kdbus_policy_db *db, const struct cred *cred, const char *name)
{
	size_t len = strlen(name);
	struct kdbus_policy_entry *e;

	/* the exact entry, else the nearest enclosing wildcard, at any
	 * depth (kshared/policy.h) */
	e = kdbus_policy_find(db, name, len, false);
	while (!e && (len = kdbus_policy_next_wildcard(name, len)) > 0)
		e = kdbus_policy_find(db, name, len, true);
	if (!e)
		return -ENOENT;
	return kdbus_policy_entry_access(e, cred);
}

static bool kdbus_conn_is_custom(const struct kdbus_conn *conn)
{
	return conn->ep->custom;
}

/**
 * kdbus_conn_may_own() - may @conn own @name
 * @conn:	the connection that asks
 * @name:	a valid name
 *
 * Through a custom endpoint only what its policy grants (OWN); then
 * privileged connections and the bus owner always may, others by the
 * bus's policy.
 */
bool kdbus_conn_may_own(struct kdbus_conn *conn, const char *name)
{
	struct kdbus_bus *bus = conn->bus;
	bool ok = true;

	if (!kdbus_conn_is_custom(conn) && conn->owner)
		return true;
	down_read(&bus->policy_lock);
	if (kdbus_conn_is_custom(conn))
		ok = kdbus_policy_query_locked(&conn->ep->policy, conn->cred, name) >= KDBUS_POLICY_OWN;
	if (ok)
		ok = kdbus_policy_query_locked(&bus->policy, conn->cred, name) >= KDBUS_POLICY_OWN;
	up_read(&bus->policy_lock);
	return ok;
}

/**
 * kdbus_conn_may_talk_locked() - may @conn talk to @to
 * @conn:	the connection that talks (or, for a signal, receives)
 * @to:		the connection it talks to
 *
 * With the name lock and the policy lock held for reading.  Through a
 * custom endpoint, its policy must grant TALK to one of the names @to
 * owns or waits for.  Then privileged connections and those of @to's user
 * always may; others need TALK to one of @to's names in the bus's policy.
 */
bool kdbus_conn_may_talk_locked(struct kdbus_conn *conn, struct kdbus_conn *to)
{
	if (kdbus_conn_is_custom(conn) &&
	    !kdbus_names_policy_allows(&conn->ep->policy, to, conn->cred, KDBUS_POLICY_TALK))
		return false;
	if (conn->privileged || uid_eq(conn->cred->euid, to->cred->euid))
		return true;
	return kdbus_names_policy_allows(&conn->bus->policy, to, conn->cred, KDBUS_POLICY_TALK);
}

/**
 * kdbus_conn_may_see_name_locked() - does @name exist for @conn
 * @conn:	the connection that looks
 * @name:	a name
 *
 * With the policy lock held for reading when @conn is on a custom
 * endpoint: there, only the names its policy grants SEE; every name
 * elsewhere.
 */
bool kdbus_conn_may_see_name_locked(const struct kdbus_conn *conn, const char *name)
{
	if (!kdbus_conn_is_custom(conn))
		return true;
	return kdbus_policy_query_locked(&conn->ep->policy, conn->cred, name) >= KDBUS_POLICY_SEE;
}

/**
 * kdbus_conn_may_see_locked() - does @whom exist for @conn
 * @conn:	the connection that looks
 * @whom:	a peer
 *
 * With the name lock held for reading, and the policy lock when @conn is
 * on a custom endpoint: there, only itself and the peers one of whose
 * names it sees; every peer elsewhere.
 */
bool kdbus_conn_may_see_locked(struct kdbus_conn *conn, struct kdbus_conn *whom)
{
	if (!kdbus_conn_is_custom(conn) || whom == conn)
		return true;
	return kdbus_names_policy_allows(&conn->ep->policy, whom, conn->cred, KDBUS_POLICY_SEE);
}
