// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * user.c - the users of a domain and their quotas
 *
 * Each user (by uid, as the connection's credentials say) that makes a
 * bus or a connection on a domain has one struct kdbus_user there: it
 * counts the buses and connections the user owns (KDBUS_USER_MAX_BUSES,
 * KDBUS_USER_MAX_CONN for the unprivileged) and gives the user a small
 * id, its slot in every connection's quota.
 *
 * The quota: what a connection receives from others is charged to the
 * sending user (the kernel's notifications to slot 0) until it is
 * received.  Half of the receiver's pool is always left to its owner; of
 * the other half, a user may take a third of what nobody else uses
 * (counting its own use as unused), at most KDBUS_CONN_MAX_MSGS messages
 * and KDBUS_CONN_MAX_FDS_PER_USER fds.  One user cannot fill a service's
 * queue for everyone else, and the more users talk to a connection, the
 * smaller each one's share.
 */
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "internal.h"

struct kdbus_user *kdbus_user_get(struct kdbus_domain *domain, kuid_t uid)
{
	struct kdbus_user *u;
	int id;

	mutex_lock(&domain->user_lock);
	hash_for_each_possible(domain->users, u, hentry, __kuid_val(uid))
		if (uid_eq(u->uid, uid)) {
			kref_get(&u->kref);
			goto out;
		}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	id = ida_alloc_range(&domain->user_ida, 1, U16_MAX, GFP_KERNEL);
	if (id < 0) {
		kfree(u);
		u = ERR_PTR(id == -ENOSPC ? -EMFILE : id);
		goto out;
	}
	kref_init(&u->kref);
	u->domain = kdbus_domain_ref(domain);
	u->uid = uid;
	u->id = id;
	atomic_set(&u->buses, 0);
	atomic_set(&u->conns, 0);
	hash_add(domain->users, &u->hentry, __kuid_val(uid));
out:
	mutex_unlock(&domain->user_lock);
	return u;
}

/**
 * kdbus_user_new_anon() - a user of @domain that no uid names
 * @domain:	the domain
 *
 * A custom endpoint's: every connection made through it is accounted to
 * it, whoever made it.  It is in no table: nobody else finds it.
 *
 * Return: the user, or an ERR_PTR (-ENOMEM, -EMFILE when the domain has
 * no quota id left).
 */
struct kdbus_user *kdbus_user_new_anon(struct kdbus_domain *domain)
{
	struct kdbus_user *u;
	int id;

	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_range(&domain->user_ida, 1, U16_MAX, GFP_KERNEL);
	if (id < 0) {
		kfree(u);
		return ERR_PTR(id == -ENOSPC ? -EMFILE : id);
	}
	kref_init(&u->kref);
	u->domain = kdbus_domain_ref(domain);
	u->uid = INVALID_UID;
	u->id = id;
	INIT_HLIST_NODE(&u->hentry);
	atomic_set(&u->buses, 0);
	atomic_set(&u->conns, 0);
	return u;
}

struct kdbus_user *kdbus_user_ref(struct kdbus_user *u)
{
	if (u)
		kref_get(&u->kref);
	return u;
}

static void __kdbus_user_free(struct kref *kref)
{
	struct kdbus_user *u = container_of(kref, struct kdbus_user, kref);
	struct kdbus_domain *domain = u->domain;

	/* called with domain->user_lock held (kref_put_mutex) */
	hash_del(&u->hentry);
	ida_free(&domain->user_ida, u->id);
	mutex_unlock(&domain->user_lock);
	kfree(u);
	kdbus_domain_unref(domain);
}

struct kdbus_user *kdbus_user_unref(struct kdbus_user *u)
{
	if (u)
		kref_put_mutex(&u->kref, __kdbus_user_free, &u->domain->user_lock);
	return NULL;
}

/* a quota slot, packed into an xarray value: bytes, messages, fds */
#define Q_MSGS_SHIFT	32
#define Q_FDS_SHIFT	48

struct kdbus_quota {
	u32 bytes;
	u16 msgs;
	u8 fds;
};

static struct kdbus_quota kdbus_quota_load(struct kdbus_conn *conn, unsigned long id)
{
	void *v = xa_load(&conn->quota, id);
	unsigned long q = v ? xa_to_value(v) : 0;

	return (struct kdbus_quota) {
		.bytes = (u32)q,
		.msgs = (u16)(q >> Q_MSGS_SHIFT),
		.fds = (u8)(q >> Q_FDS_SHIFT),
	};
}

static int kdbus_quota_store(struct kdbus_conn *conn, unsigned long id, const struct kdbus_quota *q)
{
	unsigned long v = q->bytes | ((unsigned long)q->msgs << Q_MSGS_SHIFT) |
			  ((unsigned long)q->fds << Q_FDS_SHIFT);

	if (v == 0) {
		xa_erase(&conn->quota, id);
		return 0;
	}
	return xa_err(xa_store(&conn->quota, id, xa_mk_value(v), GFP_KERNEL_ACCOUNT));
}

/**
 * kdbus_conn_quota_charge() - charge a message to its sender in @conn
 * @conn:	the receiver (its lock held)
 * @u:		the sending user, NULL for the kernel
 * @size:	the bytes of its slice (8-aligned)
 * @fds:	the fds it carries (KDBUS_ITEM_FDS)
 *
 * Return: 0; -ENOBUFS when the user's share of the pool or its message
 * count is used up; -EMFILE for its fds; -ENOMEM.
 */
int kdbus_conn_quota_charge(struct kdbus_conn *conn, struct kdbus_user *u, size_t size, unsigned int fds)
{
	unsigned long id = u ? u->id : 0;
	struct kdbus_quota q = kdbus_quota_load(conn, id);
	size_t half = kdbus_pool_size(conn->pool) / 2;
	size_t used = kdbus_pool_accounted(conn->pool);
	size_t share;

	if (used > half)
		return -ENOBUFS;
	share = (half - used + q.bytes) / 3;
	if (q.bytes > share || size > share - q.bytes)
		return -ENOBUFS;
	if (q.msgs >= KDBUS_CONN_MAX_MSGS)
		return -ENOBUFS;
	if (fds > KDBUS_CONN_MAX_FDS_PER_USER - q.fds)
		return -EMFILE;
	q.bytes += size;
	q.msgs++;
	q.fds += fds;
	return kdbus_quota_store(conn, id, &q);
}

/* with @conn's lock held: undo kdbus_conn_quota_charge() */
void kdbus_conn_quota_uncharge(struct kdbus_conn *conn, struct kdbus_user *u, size_t size, unsigned int fds)
{
	unsigned long id = u ? u->id : 0;
	struct kdbus_quota q = kdbus_quota_load(conn, id);

	q.bytes -= min_t(size_t, q.bytes, size);
	q.msgs -= min_t(u16, q.msgs, 1);
	q.fds -= min_t(unsigned int, q.fds, fds);
	/* replacing or erasing a present entry allocates nothing: it cannot fail */
	kdbus_quota_store(conn, id, &q);
}
