// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * names.c - the name registry: NAME_ACQUIRE, NAME_RELEASE, LIST
 *
 * Every well-known name has an entry with a queue of owners; the first is
 * the primary owner, the others wait (KDBUS_NAME_IN_QUEUE).  Everything
 * here runs under bus->name_lock: written by acquire, release and
 * disconnect, read by sends and lookups.  Every change of the primary
 * owner is a NAME_ADD, NAME_CHANGE or NAME_REMOVE notification, delivered
 * once the lock is dropped; queueing is silent.
 *
 * An activator holds a name apart from the queue: it is the owner while
 * nobody else is.  Messages to the name then queue on it; the first real
 * owner takes them over (with their reply trackers) in the same locked
 * step that makes it the owner, and when the name returns to the
 * activator, what is still queued for the name returns with it.
 */
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/stringhash.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "kshared/names.h"

#define LIST_FLAGS (KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS | KDBUS_LIST_QUEUED)

struct kdbus_name_entry {
	struct hlist_node hentry;	/* in bus->names */
	struct list_head queue;		/* struct kdbus_name_owner, primary first */
	struct kdbus_name_owner *activator;
	u64 name_id;			/* which messages were addressed to it */
	u32 hash;
	char name[];
};

struct kdbus_name_owner {
	struct list_head name_link;	/* in entry->queue */
	struct list_head conn_link;	/* in conn->names */
	struct kdbus_conn *conn;
	struct kdbus_name_entry *entry;
	u64 flags;
};

static const u64 name_items[] = { KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME };

static u32 kdbus_name_hash(const char *name)
{
	return full_name_hash(NULL, name, strlen(name));
}

static struct kdbus_name_entry *kdbus_name_find(struct kdbus_bus *bus, const char *name)
{
	struct kdbus_name_entry *e;
	u32 hash = kdbus_name_hash(name);

	hash_for_each_possible(bus->names, e, hentry, hash)
		if (e->hash == hash && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static struct kdbus_name_owner *kdbus_name_primary(struct kdbus_name_entry *e)
{
	return list_first_entry_or_null(&e->queue, struct kdbus_name_owner, name_link);
}

static void kdbus_name_owner_free(struct kdbus_name_owner *o)
{
	list_del(&o->name_link);
	list_del(&o->conn_link);
	o->conn->n_names--;
	kfree(o);
}

static void kdbus_name_entry_maybe_free(struct kdbus_name_entry *e)
{
	if (list_empty(&e->queue) && !e->activator) {
		hash_del(&e->hentry);
		kfree(e);
	}
}

/* with the name lock held: is @conn the primary owner of @name */
bool kdbus_name_owned_by(struct kdbus_bus *bus, const char *name, struct kdbus_conn *conn)
{
	struct kdbus_name_entry *e = kdbus_name_find(bus, name);
	struct kdbus_name_owner *o = e ? kdbus_name_primary(e) : NULL;

	return o && o->conn == conn;
}

/* with the name lock held for reading: a reference to the owner (the
 * activator when nobody else), and the name's id for the message */
struct kdbus_conn *kdbus_name_lookup_owner(struct kdbus_bus *bus, const char *name, u64 *ret_name_id)
{
	struct kdbus_name_entry *e = kdbus_name_find(bus, name);
	struct kdbus_name_owner *o;

	if (!e)
		return NULL;
	o = kdbus_name_primary(e);
	if (!o)
		o = e->activator;
	if (ret_name_id)
		*ret_name_id = e->name_id;
	return o ? kdbus_conn_ref(o->conn) : NULL;
}

static struct kdbus_name_entry *kdbus_name_entry_new(struct kdbus_bus *bus, const char *name)
{
	struct kdbus_name_entry *e;

	e = kzalloc(sizeof(*e) + strlen(name) + 1, GFP_KERNEL_ACCOUNT);
	if (!e)
		return NULL;
	strcpy(e->name, name);
	e->hash = kdbus_name_hash(name);
	e->name_id = ++bus->last_name_id;
	INIT_LIST_HEAD(&e->queue);
	hash_add(bus->names, &e->hentry, e->hash);
	return e;
}

static struct kdbus_name_owner *kdbus_name_owner_new(struct kdbus_conn *conn, struct kdbus_name_entry *e)
{
	struct kdbus_name_owner *o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);

	if (!o)
		return NULL;
	o->conn = conn;
	o->entry = e;
	INIT_LIST_HEAD(&o->name_link);
	list_add_tail(&o->conn_link, &conn->names);
	conn->n_names++;
	return o;
}

static struct kdbus_name_owner *kdbus_name_owner_find(struct kdbus_name_entry *e, struct kdbus_conn *conn)
{
	struct kdbus_name_owner *o;

	if (e->activator && e->activator->conn == conn)
		return e->activator;
	list_for_each_entry(o, &e->queue, name_link)
		if (o->conn == conn)
			return o;
	return NULL;
}

/* the state of @e as @o sees it (@o NULL: a connection not on it) */
static struct kdbus_name_state kdbus_name_state(struct kdbus_name_entry *e, struct kdbus_name_owner *o)
{
	struct kdbus_name_owner *primary = kdbus_name_primary(e);
	struct kdbus_name_state s = {
		.role = KDBUS_NAME_ROLE_NONE,
		.has_primary = primary,
		.has_waiter = primary && !list_is_last(&primary->name_link, &e->queue),
		.has_activator = e->activator,
		.primary_flags = primary ? primary->flags : 0,
	};

	if (o)
		s.role = kdbus_name_role_of(o == e->activator, o == primary, !list_empty(&o->name_link));
	return s;
}

/*
 * carry out the decision of kshared/names.h for @o: its place, the
 * previous holder's, the handover of the activator's messages (in the
 * same locked step that makes @o the owner), the notification
 */
static void kdbus_name_apply(struct kdbus_name_owner *o, const struct kdbus_name_decision *d)
{
	struct kdbus_name_entry *e = o->entry;
	struct kdbus_name_owner *primary = kdbus_name_primary(e);
	struct kdbus_name_owner *act = e->activator;
	struct kdbus_conn *conn = o->conn;

	if (d->action == KDBUS_NAME_DO_REFUSE)
		return;
	o->flags = d->flags;

	switch (d->action) {
	case KDBUS_NAME_DO_ACTIVATE:
	case KDBUS_NAME_DO_ACTIVATE_BEHIND:
		e->activator = o;
		if (d->action == KDBUS_NAME_DO_ACTIVATE)
			kdbus_notify_name_change(conn->bus, KDBUS_ITEM_NAME_ADD, 0, conn->id, 0, o->flags,
						 e->name);
		break;
	case KDBUS_NAME_DO_TAKE:
		list_add(&o->name_link, &e->queue);
		kdbus_notify_name_change(conn->bus, KDBUS_ITEM_NAME_ADD, 0, conn->id, 0, o->flags, e->name);
		break;
	case KDBUS_NAME_DO_HANDOVER:
		/* what waits on the activator moves, in order */
		list_add(&o->name_link, &e->queue);
		kdbus_conn_move_messages(conn, act->conn, e->name_id);
		kdbus_notify_name_change(conn->bus, KDBUS_ITEM_NAME_CHANGE, act->conn->id, conn->id,
					 act->flags, o->flags, e->name);
		act->flags = d->prev_flags;
		break;
	case KDBUS_NAME_DO_REPLACE:
		list_del_init(&o->name_link);
		list_add(&o->name_link, &e->queue);
		kdbus_notify_name_change(conn->bus, KDBUS_ITEM_NAME_CHANGE, primary->conn->id, conn->id,
					 primary->flags, o->flags, e->name);
		if (d->prev_leaves)
			kdbus_name_owner_free(primary);
		else
			primary->flags = d->prev_flags;
		break;
	case KDBUS_NAME_DO_QUEUE:
		list_add_tail(&o->name_link, &e->queue);
		break;
	case KDBUS_NAME_DO_QUEUE_NEXT:
		list_del_init(&o->name_link);
		list_add(&o->name_link, &primary->name_link);
		break;
	case KDBUS_NAME_DO_LEAVE:
		list_del_init(&o->name_link);
		break;
	case KDBUS_NAME_DO_UPDATE:
	case KDBUS_NAME_DO_STAY:
	case KDBUS_NAME_DO_REFUSE:
		break;
	}
}

/**
 * kdbus_name_activator_add() - an activator's HELLO: it holds @name
 * @conn:	the activator (in the connection table already)
 * @name:	a valid name
 *
 * With the name lock held for writing.  It owns the name when nobody
 * does; otherwise it waits behind the owners.
 *
 * Return: 0, -EEXIST when the name has an activator, -ENOMEM.
 */
int kdbus_name_activator_add(struct kdbus_conn *conn, const char *name)
{
	struct kdbus_name_entry *e = kdbus_name_find(conn->bus, name);
	struct kdbus_name_owner *o = NULL;
	struct kdbus_name_decision d;
	struct kdbus_name_state s;

	if (e) {
		o = kdbus_name_owner_find(e, conn);
	} else {
		e = kdbus_name_entry_new(conn->bus, name);
		if (!e)
			return -ENOMEM;
	}
	s = kdbus_name_state(e, o);
	d = kdbus_name_decide_activator(&s);
	if (d.error) {
		kdbus_name_entry_maybe_free(e);
		return d.error;
	}
	o = kdbus_name_owner_new(conn, e);
	if (!o) {
		kdbus_name_entry_maybe_free(e);
		return -ENOMEM;
	}
	kdbus_name_apply(o, &d);
	return 0;
}

/* with the name lock held: does @name have an activator */
bool kdbus_name_has_activator(struct kdbus_bus *bus, const char *name)
{
	struct kdbus_name_entry *e = kdbus_name_find(bus, name);

	return e && e->activator;
}

/* copy a name command: flags within @valid, exactly one NAME item, a
 * valid name when @must_be_valid (a name that is not valid is nobody's:
 * releasing it is ESRCH, as for any other unknown name) */
static struct kdbus_cmd *kdbus_name_cmd_copy(void __user *argp, u64 valid, bool must_be_valid,
					     const char **ret_name)
{
	const struct kdbus_item *it, *name = NULL;
	struct kdbus_cmd *cmd;
	size_t items_size;
	int r;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), valid,
			       name_items, ARRAY_SIZE(name_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return cmd;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		r = -EINVAL;
		if (it->type != KDBUS_ITEM_NAME || !kdbus_item_is_string(it))
			goto err;
		r = -EEXIST;
		if (name)
			goto err;
		name = it;
	}
	r = -EINVAL;
	if (!name)
		goto err;
	if (must_be_valid && !kdbus_name_is_valid(kdbus_item_str(name), false))
		goto err;
	*ret_name = kdbus_item_str(name);
	return cmd;
err:
	kfree(cmd);
	return ERR_PTR(r);
}

static int kdbus_name_acquire(struct kdbus_conn *conn, const char *name, u64 flags, u64 *ret_flags)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_name_owner *o = NULL;
	struct kdbus_name_decision d;
	struct kdbus_name_entry *e;
	struct kdbus_name_state s;

	e = kdbus_name_find(bus, name);
	if (e) {
		o = kdbus_name_owner_find(e, conn);
	} else {
		e = kdbus_name_entry_new(bus, name);
		if (!e)
			return -ENOMEM;
	}
	if (!o) {
		if (conn->n_names >= KDBUS_CONN_MAX_NAMES) {
			kdbus_name_entry_maybe_free(e);
			return -E2BIG;
		}
		o = kdbus_name_owner_new(conn, e);
		if (!o) {
			kdbus_name_entry_maybe_free(e);
			return -ENOMEM;
		}
	}

	s = kdbus_name_state(e, o);
	d = kdbus_name_decide_acquire(&s, flags);
	kdbus_name_apply(o, &d);
	*ret_flags = d.return_flags;
	if (list_empty(&o->name_link) && e->activator != o)
		kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(e);
	return d.error;
}

/* @o leaves its name; @action: kdbus_name_decide_release()'s, not an error */
static void kdbus_name_release_owner(struct kdbus_name_owner *o, int action)
{
	struct kdbus_name_entry *e = o->entry;
	struct kdbus_name_owner *next = NULL;
	struct kdbus_bus *bus = o->conn->bus;

	if (action == KDBUS_NAME_RELEASE_TO_WAITER)
		next = list_next_entry(o, name_link);
	else if (action == KDBUS_NAME_RELEASE_TO_ACTIVATOR)
		next = e->activator;

	if (o == e->activator)
		e->activator = NULL;
	if (next) {
		next->flags = kdbus_name_flags_primary(next->flags);
		/* give-back: what is still queued for the name returns */
		if (action == KDBUS_NAME_RELEASE_TO_ACTIVATOR)
			kdbus_conn_move_messages(next->conn, o->conn, e->name_id);
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_CHANGE, o->conn->id, next->conn->id,
					 o->flags, next->flags, e->name);
	} else if (action == KDBUS_NAME_RELEASE_REMOVE) {
		kdbus_notify_name_change(bus, KDBUS_ITEM_NAME_REMOVE, o->conn->id, 0, o->flags, 0, e->name);
	}
	kdbus_name_owner_free(o);
	kdbus_name_entry_maybe_free(e);
}

int kdbus_cmd_name_acquire(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_cmd *cmd;
	const char *name;
	u64 ret_flags = 0;
	int r;

	cmd = kdbus_name_cmd_copy(argp, KDBUS_NAME_ACQUIRE_FLAGS, true, &name);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	r = -EOPNOTSUPP;
	if (conn->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR))
		goto out;
	r = -EPERM;
	if (!kdbus_conn_may_own(conn, name))
		goto out;
	down_write(&bus->name_lock);
	if (!READ_ONCE(conn->connected))
		r = -ECONNRESET;	/* its names are (being) released */
	else
		r = kdbus_name_acquire(conn, name, cmd->flags, &ret_flags);
	up_write(&bus->name_lock);
	kdbus_notify_flush(bus);
	if (put_user(ret_flags, &((struct kdbus_cmd __user *)argp)->return_flags))
		r = -EFAULT;
out:
	kfree(cmd);
	return r;
}

int kdbus_cmd_name_release(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_name_owner *o;
	struct kdbus_name_entry *e;
	struct kdbus_name_state s;
	struct kdbus_cmd *cmd;
	const char *name;
	int r;

	cmd = kdbus_name_cmd_copy(argp, 0, false, &name);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	/* as NAME_ACQUIRE: an activator's name goes with its connection */
	r = -EOPNOTSUPP;
	if (conn->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR))
		goto out_free;
	down_write(&bus->name_lock);
	if (!READ_ONCE(conn->connected)) {
		r = -ECONNRESET;
		goto out;
	}
	e = kdbus_name_find(bus, name);
	if (!e) {
		r = -ESRCH;
		goto out;
	}
	o = kdbus_name_owner_find(e, conn);
	s = kdbus_name_state(e, o);
	r = kdbus_name_decide_release(&s);
	if (r >= 0) {
		kdbus_name_release_owner(o, r);
		r = 0;
	}
out:
	up_write(&bus->name_lock);
	kdbus_notify_flush(bus);
out_free:
	kfree(cmd);
	return r;
}

/*
 * the connection is going away: every name passes on or disappears, the
 * one it asked for last first (the ABI leaves the order open; this is
 * dbus-daemon's, so that busbridged's classic clients see the
 * NameOwnerChanged signals of a departing connection in its order)
 */
void kdbus_names_release_all(struct kdbus_conn *conn)
{
	struct kdbus_bus *bus = conn->bus;

	down_write(&bus->name_lock);
	while (!list_empty(&conn->names)) {
		struct kdbus_name_owner *o = list_last_entry(&conn->names, struct kdbus_name_owner,
							     conn_link);
		struct kdbus_name_state s = kdbus_name_state(o->entry, o);

		kdbus_name_release_owner(o, kdbus_name_decide_release(&s));
	}
	up_write(&bus->name_lock);
}

/* with the name and policy locks held: does @cred have @level in @db to
 * one of the names @conn owns or waits for */
bool kdbus_names_policy_allows(const struct kdbus_policy_db *db, struct kdbus_conn *conn,
			       const struct cred *cred, int level)
{
	struct kdbus_name_owner *o;

	list_for_each_entry(o, &conn->names, conn_link)
		if (kdbus_policy_query_locked(db, cred, o->entry->name) >= level)
			return true;
	return false;
}

/* does @reader get @o in an OWNED_NAME item: a name @conn owns, that
 * @reader may see */
static bool kdbus_names_meta_shows(const struct kdbus_name_owner *o, const struct kdbus_conn *reader)
{
	return (o->flags & KDBUS_NAME_PRIMARY) && kdbus_conn_may_see_name_locked(reader, o->entry->name);
}

/*
 * KDBUS_ATTACH_NAMES, with the name lock held (and the policy lock when
 * @reader is on a custom endpoint): the names @conn owns, those @reader
 * may see.
 */
size_t kdbus_names_meta_size(struct kdbus_conn *conn, const struct kdbus_conn *reader)
{
	struct kdbus_name_owner *o;
	size_t size = 0;

	list_for_each_entry(o, &conn->names, conn_link)
		if (kdbus_names_meta_shows(o, reader))
			size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_name) + strlen(o->entry->name) + 1);
	return size;
}

void *kdbus_names_meta_write(void *p, struct kdbus_conn *conn, const struct kdbus_conn *reader)
{
	struct kdbus_name_owner *o;

	list_for_each_entry(o, &conn->names, conn_link) {
		struct kdbus_item *it = p;
		size_t len = strlen(o->entry->name) + 1;

		if (!kdbus_names_meta_shows(o, reader))
			continue;
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_name) + len;
		it->type = KDBUS_ITEM_OWNED_NAME;
		it->name.flags = o->flags;
		memcpy(kdbus_item_name_str(it), o->entry->name, len);
		p = (u8 *)p + KDBUS_ALIGN8(it->size);
	}
	return p;
}

/* ---- LIST ------------------------------------------------------------------ */

/* one record: the connection, and one of its names or none */
static size_t kdbus_list_record(u8 *p, struct kdbus_conn *c, struct kdbus_name_owner *o)
{
	size_t len = o ? strlen(o->entry->name) + 1 : 0;
	size_t size = sizeof(struct kdbus_info);

	if (o)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_name) + len);
	if (p) {
		struct kdbus_info *info = (struct kdbus_info *)p;

		info->size = size;
		info->id = c->id;
		info->flags = c->flags;
		if (o) {
			struct kdbus_item *it = info->items;

			it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_name) + len;
			it->type = KDBUS_ITEM_OWNED_NAME;
			it->name.flags = o->flags;
			memcpy(kdbus_item_name_str(it), o->entry->name, len);
		}
	}
	return size;
}

/* whether LIST with @flags shows owner @o */
static bool kdbus_list_wants(u64 flags, const struct kdbus_name_owner *o)
{
	if (o->flags & KDBUS_NAME_ACTIVATOR)
		return flags & KDBUS_LIST_ACTIVATORS;
	if (o->flags & KDBUS_NAME_IN_QUEUE)
		return flags & KDBUS_LIST_QUEUED;
	return flags & KDBUS_LIST_NAMES;
}

/*
 * With the name, policy and connection locks held; @p NULL: only the
 * size.  The names go one by one, each with its holders in queue order
 * (the owner, its waiters, then the activator: the ABI leaves the order
 * open, and in this one a reader sees each queue as it stands); then,
 * with KDBUS_LIST_UNIQUE, the connections none of whose names were
 * listed.  Through a custom endpoint, @conn lists only the names it may
 * see, and only the peers it may see.
 */
static size_t kdbus_list_all(struct kdbus_conn *conn, u64 flags, u8 *p)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_name_entry *e;
	struct kdbus_name_owner *o;
	struct kdbus_conn *c;
	size_t pos = 0;
	int i;

	if (flags & (KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED | KDBUS_LIST_ACTIVATORS)) {
		hash_for_each(bus->names, i, e, hentry) {
			if (!kdbus_conn_may_see_name_locked(conn, e->name))
				continue;
			list_for_each_entry(o, &e->queue, name_link)
				if (kdbus_list_wants(flags, o))
					pos += kdbus_list_record(p ? p + pos : NULL, o->conn, o);
			if (e->activator && kdbus_list_wants(flags, e->activator))
				pos += kdbus_list_record(p ? p + pos : NULL, e->activator->conn, e->activator);
		}
	}
	if (!(flags & KDBUS_LIST_UNIQUE))
		return pos;
	hash_for_each(bus->conns, i, c, hentry) {
		bool listed = false;

		list_for_each_entry(o, &c->names, conn_link)
			if (kdbus_list_wants(flags, o) && kdbus_conn_may_see_name_locked(conn, o->entry->name)) {
				listed = true;
				break;
			}
		if (!listed && kdbus_conn_may_see_locked(conn, c))
			pos += kdbus_list_record(p ? p + pos : NULL, c, NULL);
	}
	return pos;
}

int kdbus_cmd_list(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_list __user *ulist = argp;
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_cmd_list *cmd;
	struct kdbus_slice *slice;
	size_t size;
	u8 *buf = NULL;
	int r;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_list, items), LIST_FLAGS);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;

	down_read(&bus->name_lock);
	down_read(&bus->policy_lock);
	down_read(&bus->conn_lock);
	size = kdbus_list_all(conn, cmd->flags, NULL);
	buf = kvzalloc(size ? size : 8, GFP_KERNEL_ACCOUNT);
	if (buf)
		kdbus_list_all(conn, cmd->flags, buf);
	up_read(&bus->conn_lock);
	up_read(&bus->policy_lock);
	up_read(&bus->name_lock);
	r = -ENOMEM;
	if (!buf)
		goto out;
	/* an empty list still gets a slice: the caller FREEs what it got */
	mutex_lock(&conn->lock);
	slice = kdbus_conn_slice_public(conn, buf, size ? size : 8);
	mutex_unlock(&conn->lock);
	if (IS_ERR(slice)) {
		r = PTR_ERR(slice);
		goto out;
	}
	r = 0;
	if (put_user((u64)kdbus_slice_offset(slice), &ulist->offset) ||
	    put_user((u64)size, &ulist->list_size) || put_user((u64)0, &ulist->return_flags))
		r = -EFAULT;
	r = kdbus_conn_slice_tell(conn, slice, r);
out:
	kvfree(buf);
	kfree(cmd);
	return r;
}
