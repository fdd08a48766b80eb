// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bus.c - BUS_MAKE, the connection table, shutdown, BUS_CREATOR_INFO
 */
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/cred.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uuid.h>

#include "internal.h"

static const u64 bus_make_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_BLOOM_PARAMETER,
	KDBUS_ITEM_ATTACH_FLAGS_SEND, KDBUS_ITEM_ATTACH_FLAGS_RECV,
};
#define BUS_MAKE_FLAGS (KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD)

struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus)
{
	if (bus)
		kref_get(&bus->kref);
	return bus;
}

static void __kdbus_bus_free(struct kref *kref)
{
	struct kdbus_bus *bus = container_of(kref, struct kdbus_bus, kref);

	/* every connection, name, entry and tracker holds a reference */
	WARN_ON(!hash_empty(bus->conns));
	WARN_ON(!hash_empty(bus->names));
	WARN_ON(!list_empty(&bus->notify_list));
	WARN_ON(!list_empty(&bus->replies));
	WARN_ON(!hash_empty(bus->policy.entries));
	WARN_ON(!list_empty(&bus->eps));
	if (bus->creator) {
		atomic_dec(&bus->creator->buses);
		kdbus_user_unref(bus->creator);
	}
	put_cred(bus->creator_cred);
	kdbus_meta_proc_release(&bus->creator_meta);
	kdbus_domain_unref(bus->domain);
	kfree(bus);
}

struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus)
{
	if (bus)
		kref_put(&bus->kref, __kdbus_bus_free);
	return NULL;
}

/*
 * The name of a bus or a custom endpoint, "<uid>-<name>": the caller's
 * euid as the domain's user namespace sees it (that of the kdbusfs mount,
 * never the caller's own: a user mapped to root in a namespace of its own
 * is still its real uid here), then [A-Za-z0-9_.-], no '-' or '.' at the
 * end, 63 at most (-ENAMETOOLONG); -EINVAL otherwise.
 */
int kdbus_sysname_check(struct kdbus_domain *domain, const char *name, size_t len)
{
	char prefix[16];
	size_t i, plen;
	uid_t uid;

	if (len > KDBUS_SYSNAME_MAX_LEN)
		return -ENAMETOOLONG;
	uid = from_kuid(domain->user_ns, current_euid());
	if (uid == (uid_t)-1)
		return -EPERM;
	plen = snprintf(prefix, sizeof(prefix), "%u-", uid);
	if (len <= plen || strncmp(name, prefix, plen) != 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (isalnum(c) || c == '_')
			continue;
		if ((c == '-' || c == '.') && i > 0 && i < len - 1)
			continue;
		return -EINVAL;
	}
	return 0;
}

/**
 * kdbus_bus_make_args_parse() - copy BUS_MAKE's command, with no lock held
 * @argp:	struct kdbus_cmd with MAKE_NAME and BLOOM_PARAMETER items
 * @ret_items_size: the bytes of its items
 *
 * Its return_flags are written at once: once the bus exists, the call
 * must not fail.
 *
 * Return: the copy, NULL after a negotiation, or an ERR_PTR.
 */
struct kdbus_cmd *kdbus_bus_make_args_parse(void __user *argp, size_t *ret_items_size)
{
	struct kdbus_cmd *cmd;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), BUS_MAKE_FLAGS,
			       bus_make_items, ARRAY_SIZE(bus_make_items), ret_items_size);
	if (IS_ERR_OR_NULL(cmd))
		return cmd;
	if (put_user((u64)0, &((struct kdbus_cmd __user *)argp)->return_flags)) {
		kfree(cmd);
		return ERR_PTR(-EFAULT);
	}
	return cmd;
}

/* a bus with every list and lock initialised, before anything can fail */
static struct kdbus_bus *kdbus_bus_new(struct kdbus_domain *domain)
{
	struct kdbus_bus *bus = kzalloc(sizeof(*bus), GFP_KERNEL_ACCOUNT);

	if (!bus)
		return NULL;
	kref_init(&bus->kref);
	bus->domain = kdbus_domain_ref(domain);
	init_rwsem(&bus->conn_lock);
	hash_init(bus->conns);
	INIT_HLIST_HEAD(&bus->monitors);
	init_rwsem(&bus->name_lock);
	hash_init(bus->names);
	init_rwsem(&bus->policy_lock);
	kdbus_policy_db_init(&bus->policy);
	mutex_init(&bus->node_lock);
	INIT_LIST_HEAD(&bus->eps);
	mutex_init(&bus->reply_lock);
	INIT_LIST_HEAD(&bus->replies);
	spin_lock_init(&bus->notify_lock);
	INIT_LIST_HEAD(&bus->notify_list);
	mutex_init(&bus->notify_flush_lock);
	bus->creator_cred = get_current_cred();
	return bus;
}

/**
 * kdbus_bus_make() - KDBUS_CMD_BUS_MAKE on a control fd
 * @domain:	the mount's domain
 * @cmd:	the command, from kdbus_bus_make_args_parse()
 * @items_size:	the bytes of its items
 * @creator:	the caller's metadata, collected before any lock: the bus
 *		takes it over when it is made
 * @ret:	the new bus
 *
 * Every item is checked before anything is allocated.
 *
 * Return: 0 or a negative errno.
 */
int kdbus_bus_make(struct kdbus_domain *domain, struct kdbus_cmd *cmd, size_t items_size,
		   struct kdbus_meta_proc *creator, struct kdbus_bus **ret)
{
	const struct kdbus_item *it, *name = NULL, *bloom = NULL, *req = NULL, *recv = NULL;
	struct kdbus_bus *bus = NULL;
	struct dentry *dir;
	struct kdbus_ep *ep;
	u64 attach_req = 0, attach_recv;
	umode_t mode;
	int r;

	*ret = NULL;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		const struct kdbus_item **slot;

		/* kdbus_args_parse() checked the types and their payloads */
		switch (it->type) {
		case KDBUS_ITEM_MAKE_NAME:
			slot = &name;
			break;
		case KDBUS_ITEM_BLOOM_PARAMETER:
			slot = &bloom;
			break;
		case KDBUS_ITEM_ATTACH_FLAGS_SEND:
			slot = &req;
			break;
		case KDBUS_ITEM_ATTACH_FLAGS_RECV:
			slot = &recv;
			break;
		default:
			continue;	/* NEGOTIATE */
		}
		if (*slot)
			return -EINVAL;	/* one of each */
		*slot = it;
	}
	if (!name)
		return -EINVAL;	/* mandatory */
	if (!bloom)
		return -EBADMSG;
	r = kdbus_sysname_check(domain, kdbus_item_str(name), strlen(kdbus_item_str(name)));
	if (r < 0)
		return r;
	if (bloom->bloom_parameter.size < 8 || bloom->bloom_parameter.size > KDBUS_BUS_BLOOM_MAX_SIZE ||
	    !IS_ALIGNED(bloom->bloom_parameter.size, 8) || bloom->bloom_parameter.n_hash < 1)
		return -EINVAL;
	if (req) {
		attach_req = req->data64[0];
		if (kdbus_attach_flags_check(&attach_req) < 0)
			return -EINVAL;
	}
	if (recv) {
		attach_recv = recv->data64[0];
		if (kdbus_attach_flags_check(&attach_recv) < 0)
			return -EINVAL;
	}

	bus = kdbus_bus_new(domain);
	if (!bus)
		return -ENOMEM;
	bus->creator_meta = *creator;
	memset(creator, 0, sizeof(*creator));
	strscpy(bus->name, kdbus_item_str(name), sizeof(bus->name));
	bus->flags = cmd->flags;
	bus->bloom = bloom->bloom_parameter;
	bus->attach_req = attach_req;
	generate_random_uuid(bus->id128);

	bus->creator = kdbus_user_get(domain, current_euid());
	if (IS_ERR(bus->creator)) {
		r = PTR_ERR(bus->creator);
		bus->creator = NULL;
		goto out;
	}
	if (atomic_inc_return(&bus->creator->buses) > KDBUS_USER_MAX_BUSES &&
	    !capable(CAP_IPC_OWNER)) {
		r = -EMFILE;
		goto out;
	}

	r = -ENOMEM;
	ep = kdbus_ep_new_default(bus);
	if (!ep)
		goto out;
	bus->active = true;
	mode = (cmd->flags & KDBUS_MAKE_ACCESS_WORLD) ? 0777 :
	       (cmd->flags & KDBUS_MAKE_ACCESS_GROUP) ? 0770 : 0700;
	mutex_lock(&bus->node_lock);
	dir = kdbus_fs_make_bus_dir(bus, mode & 0555, mode & 0666, ep);
	if (!IS_ERR(dir))
		bus->dir = dir;
	mutex_unlock(&bus->node_lock);
	if (IS_ERR(dir)) {
		r = PTR_ERR(dir);
		goto out;
	}
	*ret = bus;
	bus = NULL;
	r = 0;
out:
	kdbus_bus_unref(bus);
	return r;
}

/* a reference to any connection of @bus, or NULL */
static struct kdbus_conn *kdbus_bus_any_conn(struct kdbus_bus *bus)
{
	struct kdbus_conn *conn;
	int i;

	hash_for_each(bus->conns, i, conn, hentry)
		return kdbus_conn_ref(conn);
	hlist_for_each_entry(conn, &bus->monitors, hentry)
		return kdbus_conn_ref(conn);
	return NULL;
}

/* the control fd was closed: the bus goes away with every connection */
void kdbus_bus_shutdown(struct kdbus_bus *bus)
{
	struct kdbus_conn *conn;

	down_write(&bus->conn_lock);
	bus->active = false;
	up_write(&bus->conn_lock);

	for (;;) {
		down_read(&bus->conn_lock);
		conn = kdbus_bus_any_conn(bus);
		up_read(&bus->conn_lock);
		if (!conn)
			break;
		kdbus_conn_disconnect(conn);
		kdbus_conn_unref(conn);
	}
	/* its files, those of its custom endpoints too */
	kdbus_bus_remove_nodes(bus);
}

/* a reference to the connection @id on @bus, or NULL */
struct kdbus_conn *kdbus_bus_find_conn(struct kdbus_bus *bus, u64 id)
{
	struct kdbus_conn *conn, *found = NULL;

	down_read(&bus->conn_lock);
	hash_for_each_possible(bus->conns, conn, hentry, id)
		if (conn->id == id) {
			found = kdbus_conn_ref(conn);
			break;
		}
	up_read(&bus->conn_lock);
	return found;
}
