// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policy.c - the bus's policy database: which users and groups may SEE,
 * TALK to and OWN which names (OWN implies TALK implies SEE)
 *
 * Entries come from policy holders (HELLO_POLICY_HOLDER, replaced with
 * UPDATE) and from activators' POLICY_ACCESS items; each belongs to the
 * connection that installed it and goes with it.  An entry is a name or,
 * for policy holders, a wildcard "a.b.*" that covers every name below
 * a.b, at any depth (as the userspace core: our extension of kdbus's one
 * level); an exact entry wins over a wildcard, the nearest wildcard over
 * a farther one.  Privileged connections and the bus owner are not
 * bound by it; a connection may always talk to one of its own user.
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/stringhash.h>

#include "internal.h"

/* one POLICY_ACCESS item, its id in the kernel's terms */
struct kdbus_policy_rule {
	u64 type;			/* KDBUS_POLICY_ACCESS_* */
	u64 access;			/* KDBUS_POLICY_* */
	kuid_t uid;			/* ACCESS_USER */
	kgid_t gid;			/* ACCESS_GROUP */
};

struct kdbus_policy_entry {
	struct hlist_node hentry;	/* in bus->policy */
	struct list_head owner_link;	/* in the owner's conn->policy */
	struct kdbus_conn *owner;
	bool wildcard;			/* "name.*", stored without ".*" */
	u32 hash;
	size_t n_access;
	struct kdbus_policy_rule *access;
	char name[];
};

static u32 kdbus_policy_hash(const char *name, size_t len, bool wildcard)
{
	return full_name_hash(NULL, name, len) ^ (wildcard ? 0x5bd1e995 : 0);
}

static struct kdbus_policy_entry *kdbus_policy_find(struct kdbus_bus *bus, const char *name, size_t len,
						    bool wildcard)
{
	struct kdbus_policy_entry *e;
	u32 hash = kdbus_policy_hash(name, len, wildcard);

	hash_for_each_possible(bus->policy, e, hentry, hash)
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

static void kdbus_policy_list_free(struct list_head *list)
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

/**
 * kdbus_policy_set() - replace @owner's entries with those of @items
 * @owner:	a policy holder or an activator
 * @items:	NAME items, each followed by its POLICY_ACCESS items (other
 *		items are skipped)
 * @items_size:	their size
 * @max_names:	how many NAME items are allowed (0: any)
 * @wildcards:	whether "name.*" entries are allowed
 *
 * All or nothing: on failure the old entries stay.
 *
 * Return: 0, -EINVAL (bad name or access), -EEXIST (a name twice, or
 * somebody else's), -ENOMEM.
 */
int kdbus_policy_set(struct kdbus_conn *owner, const struct kdbus_item *items, size_t items_size,
		     size_t max_names, bool wildcards)
{
	struct kdbus_bus *bus = owner->bus;
	struct user_namespace *ns = owner->cred->user_ns;
	struct kdbus_policy_entry *cur = NULL, *e, *o;
	const struct kdbus_item *it;
	size_t n_names = 0;
	LIST_HEAD(fresh);
	int r;

	KDBUS_ITEMS_FOREACH(it, items, items_size) {
		if (it->type == KDBUS_ITEM_NAME) {
			const char *name = kdbus_item_str(it);
			size_t len = strlen(name);
			bool wildcard = wildcards && len > 2 && strcmp(name + len - 2, ".*") == 0;

			r = -EINVAL;
			if (max_names && ++n_names > max_names)
				goto fail;
			if (wildcard)
				len -= 2;
			if (kdbus_name_is_valid(name, len) < 0)
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
			if (!cur || it->size != KDBUS_ITEM_HEADER_SIZE + sizeof(*a) ||
			    a->type < KDBUS_POLICY_ACCESS_USER || a->type > KDBUS_POLICY_ACCESS_WORLD ||
			    a->access > KDBUS_POLICY_OWN)
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
		o = kdbus_policy_find(bus, e->name, strlen(e->name), e->wildcard);
		if (o && o->owner != owner)
			goto fail_unlock;
	}
	list_for_each_entry(e, &owner->policy, owner_link)
		hash_del(&e->hentry);
	kdbus_policy_list_free(&owner->policy);
	list_for_each_entry(e, &fresh, owner_link)
		hash_add(bus->policy, &e->hentry, e->hash);
	list_splice_init(&fresh, &owner->policy);
	up_write(&bus->policy_lock);
	return 0;

fail_unlock:
	up_write(&bus->policy_lock);
fail:
	kdbus_policy_list_free(&fresh);
	return r;
}

/* @owner goes: so do its entries */
void kdbus_policy_remove_owner(struct kdbus_conn *owner)
{
	struct kdbus_bus *bus = owner->bus;
	struct kdbus_policy_entry *e;

	down_write(&bus->policy_lock);
	list_for_each_entry(e, &owner->policy, owner_link)
		hash_del(&e->hentry);
	kdbus_policy_list_free(&owner->policy);
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

/* with the policy lock held: the access @cred has to @name (a
 * KDBUS_POLICY_* level), -EPERM when an entry covers it without granting
 * anything, -ENOENT when none covers it */
int kdbus_policy_query_locked(struct kdbus_bus *bus, const struct cred *cred, const char *name)
{
	size_t len = strlen(name);
	struct kdbus_policy_entry *e;

	e = kdbus_policy_find(bus, name, len, false);
	if (e)
		return kdbus_policy_entry_access(e, cred);
	while (len > 0) {
		while (len > 0 && name[len - 1] != '.')
			len--;
		if (len == 0)
			break;
		len--;
		e = kdbus_policy_find(bus, name, len, true);
		if (e)
			return kdbus_policy_entry_access(e, cred);
	}
	return -ENOENT;
}

/* may @cred own @name (privileged callers and the bus owner always may) */
bool kdbus_policy_may_own(struct kdbus_bus *bus, bool privileged, const struct cred *cred, const char *name)
{
	int r;

	if (privileged || uid_eq(cred->euid, bus->creator_cred->euid))
		return true;
	down_read(&bus->policy_lock);
	r = kdbus_policy_query_locked(bus, cred, name);
	up_read(&bus->policy_lock);
	return r >= KDBUS_POLICY_OWN;
}

/**
 * kdbus_policy_may_talk_locked() - may a peer talk to @to
 * @privileged:	the peer is privileged
 * @cred:	its credentials
 * @to:		the connection it talks to
 *
 * With the name lock and the policy lock held for reading: the peer needs
 * TALK to one of the names @to owns or waits for, unless it is privileged
 * or of @to's user.
 */
bool kdbus_policy_may_talk_locked(bool privileged, const struct cred *cred, struct kdbus_conn *to)
{
	if (privileged || uid_eq(cred->euid, to->cred->euid))
		return true;
	return kdbus_names_policy_allows(to, cred, KDBUS_POLICY_TALK);
}

/* kdbus_policy_may_talk_locked(), with the name lock only */
bool kdbus_policy_may_talk(bool privileged, const struct cred *cred, struct kdbus_conn *to)
{
	struct kdbus_bus *bus = to->bus;
	bool ok;

	if (privileged || uid_eq(cred->euid, to->cred->euid))
		return true;
	down_read(&bus->policy_lock);
	ok = kdbus_names_policy_allows(to, cred, KDBUS_POLICY_TALK);
	up_read(&bus->policy_lock);
	return ok;
}
