// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * endpoint.c - endpoints: the files of a bus that HELLO is said on
 *
 * Every bus has its own, `bus`.  The bus owner (a privileged caller or the
 * bus creator's user) may add custom endpoints beside it with
 * ENDPOINT_MAKE on a handle of `bus` that has no connection: a file
 * named "<uid>-<name>" (the caller's euid, as for buses), with its own
 * access mode (0600, 0660 with KDBUS_MAKE_ACCESS_GROUP, 0666 with
 * KDBUS_MAKE_ACCESS_WORLD) and owner (the caller), and its own policy
 * database (POLICY_ACCESS items after NAME items; ENDPOINT_UPDATE on the
 * same handle replaces it all or nothing).  That handle owns the
 * endpoint: when it is closed, the file goes and so does every
 * connection made through it.
 *
 * A connection of a custom endpoint is bound by its policy before the
 * bus's, privileged or not (policy.c): it sees, talks to and owns only
 * what the endpoint grants; it is never privileged nor the bus owner (no
 * monitors, activators, policy holders or faked credentials there), and
 * all of them are accounted to one user of their own, the endpoint's:
 * whoever connects through it shares one quota.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "internal.h"

#define EP_MAKE_FLAGS (KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD)

static const u64 ep_make_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_NAME, KDBUS_ITEM_POLICY_ACCESS,
};
static const u64 ep_update_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME, KDBUS_ITEM_POLICY_ACCESS,
};

static struct kdbus_ep *kdbus_ep_alloc(struct kdbus_bus *bus, const char *name)
{
	struct kdbus_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);

	if (!ep)
		return NULL;
	kref_init(&ep->kref);
	ep->bus = kdbus_bus_ref(bus);
	strscpy(ep->name, name, sizeof(ep->name));
	INIT_LIST_HEAD(&ep->bus_link);
	kdbus_policy_db_init(&ep->policy);
	INIT_LIST_HEAD(&ep->policy_entries);
	mutex_init(&ep->lock);
	ep->active = true;
	INIT_LIST_HEAD(&ep->conns);
	return ep;
}

/* the bus's own endpoint, `bus` */
struct kdbus_ep *kdbus_ep_new_default(struct kdbus_bus *bus)
{
	return kdbus_ep_alloc(bus, "bus");
}

struct kdbus_ep *kdbus_ep_ref(struct kdbus_ep *ep)
{
	if (ep)
		kref_get(&ep->kref);
	return ep;
}

static void __kdbus_ep_free(struct kref *kref)
{
	struct kdbus_ep *ep = container_of(kref, struct kdbus_ep, kref);

	/* every connection holds a reference: none is left */
	WARN_ON(!list_empty(&ep->conns));
	/* nobody can query the database any more */
	kdbus_policy_list_free(&ep->policy_entries);
	kdbus_user_unref(ep->user);
	kdbus_bus_unref(ep->bus);
	kfree(ep);
}

struct kdbus_ep *kdbus_ep_unref(struct kdbus_ep *ep)
{
	if (ep)
		kref_put(&ep->kref, __kdbus_ep_free);
	return NULL;
}

/* may the opener of @file make and own endpoints of @on's bus */
static bool kdbus_ep_may_make(struct kdbus_ep *on, struct file *file)
{
	if (on->custom)
		return false;
	return file_ns_capable(file, &init_user_ns, CAP_IPC_OWNER) ||
	       uid_eq(file->f_cred->euid, on->bus->creator_cred->euid);
}

/* the items of ENDPOINT_MAKE (@make_name: its MAKE_NAME) or ENDPOINT_UPDATE
 * (@make_name NULL), past kdbus_args_parse(): one MAKE_NAME, for MAKE */
static int kdbus_ep_items_check(const struct kdbus_item *items, size_t items_size,
				const struct kdbus_item **make_name)
{
	const struct kdbus_item *it;

	KDBUS_ITEMS_FOREACH(it, items, items_size) {
		switch (it->type) {
		case KDBUS_ITEM_MAKE_NAME:
			if (!make_name || *make_name)
				return -EINVAL;
			*make_name = it;
			break;
		default:
			break;	/* NAME, POLICY_ACCESS: kdbus_policy_set(); NEGOTIATE */
		}
	}
	if (make_name && !*make_name)
		return -EINVAL;
	return 0;
}

/**
 * kdbus_cmd_ep_make() - KDBUS_CMD_ENDPOINT_MAKE on a handle without a connection
 * @on:		the endpoint the handle was opened on: the bus's own
 * @file:	the handle; its opener must own the bus (privileged, or the
 *		bus creator's user), else -EPERM
 * @argp:	struct kdbus_cmd with a MAKE_NAME item, and the endpoint's
 *		policy (NAME and POLICY_ACCESS items)
 *
 * The command is read with no lock held; the file is made under the
 * bus's node lock.
 *
 * Return: the new endpoint, with a reference for the handle that owns it;
 * NULL after a negotiation; an ERR_PTR (-ENAMETOOLONG, -EINVAL for a name
 * not "<euid>-...", -EEXIST, -ESHUTDOWN when the bus is gone, those of
 * the policy).
 */
struct kdbus_ep *kdbus_cmd_ep_make(struct kdbus_ep *on, struct file *file, void __user *argp)
{
	struct kdbus_bus *bus = on->bus;
	const struct kdbus_item *name = NULL;
	struct kdbus_ep *ep = NULL;
	struct dentry *dentry;
	struct kdbus_cmd *cmd;
	size_t items_size;
	umode_t mode;
	int r;

	if (!kdbus_ep_may_make(on, file))
		return ERR_PTR(-EPERM);
	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), EP_MAKE_FLAGS,
			       ep_make_items, ARRAY_SIZE(ep_make_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return cmd ? ERR_CAST(cmd) : NULL;
	r = -EFAULT;
	if (put_user((u64)0, &((struct kdbus_cmd __user *)argp)->return_flags))
		goto out;
	r = kdbus_ep_items_check(cmd->items, items_size, &name);
	if (r < 0)
		goto out;
	r = kdbus_sysname_check(bus->domain, kdbus_item_str(name), strlen(kdbus_item_str(name)));
	if (r < 0)
		goto out;

	r = -ENOMEM;
	ep = kdbus_ep_alloc(bus, kdbus_item_str(name));
	if (!ep)
		goto out;
	ep->custom = true;
	ep->user = kdbus_user_new_anon(bus->domain);
	if (IS_ERR(ep->user)) {
		r = PTR_ERR(ep->user);
		ep->user = NULL;
		goto out;
	}
	r = kdbus_policy_set(bus, &ep->policy, ep, &ep->policy_entries, file->f_cred->user_ns,
			     cmd->items, items_size, 0, true);
	if (r < 0)
		goto out;

	mode = 0600;
	if (cmd->flags & (KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD))
		mode |= 0060;
	if (cmd->flags & KDBUS_MAKE_ACCESS_WORLD)
		mode |= 0006;
	mutex_lock(&bus->node_lock);
	if (!bus->dir) {
		dentry = ERR_PTR(-ESHUTDOWN);
	} else {
		dentry = kdbus_fs_make_ep_node(bus->dir, ep, mode, current_euid(), current_egid());
		if (!IS_ERR(dentry)) {
			ep->dentry = dentry;
			list_add_tail(&ep->bus_link, &bus->eps);
		}
	}
	mutex_unlock(&bus->node_lock);
	r = PTR_ERR_OR_ZERO(dentry);
out:
	kfree(cmd);
	if (r < 0) {
		kdbus_ep_unref(ep);
		return ERR_PTR(r);
	}
	return ep;
}

/**
 * kdbus_cmd_ep_update() - KDBUS_CMD_ENDPOINT_UPDATE on the handle that owns @ep
 * @ep:		the custom endpoint
 * @file:	the handle: the ids of the items are in its opener's namespace
 * @argp:	struct kdbus_cmd with the new policy (NAME and POLICY_ACCESS
 *		items): it replaces the old one, all or nothing
 *
 * Return: 0 or a negative errno (those of the policy).
 */
int kdbus_cmd_ep_update(struct kdbus_ep *ep, struct file *file, void __user *argp)
{
	struct kdbus_cmd *cmd;
	size_t items_size;
	int r;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), 0,
			       ep_update_items, ARRAY_SIZE(ep_update_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	r = kdbus_ep_items_check(cmd->items, items_size, NULL);
	if (r == 0)
		r = kdbus_policy_set(ep->bus, &ep->policy, ep, &ep->policy_entries, file->f_cred->user_ns,
				     cmd->items, items_size, 0, true);
	if (r == 0 && put_user((u64)0, &((struct kdbus_cmd __user *)argp)->return_flags))
		r = -EFAULT;
	kfree(cmd);
	return r;
}

/**
 * kdbus_ep_deactivate() - the handle that owns @ep is closed
 * @ep:		a custom endpoint
 *
 * Its file goes, no connection can be made through it any more, and
 * those that were are disconnected.
 */
void kdbus_ep_deactivate(struct kdbus_ep *ep)
{
	struct kdbus_bus *bus = ep->bus;
	struct kdbus_conn *conn;

	mutex_lock(&bus->node_lock);
	kdbus_fs_remove(ep->dentry);
	ep->dentry = NULL;
	list_del_init(&ep->bus_link);
	mutex_unlock(&bus->node_lock);

	mutex_lock(&ep->lock);
	ep->active = false;
	mutex_unlock(&ep->lock);
	for (;;) {
		mutex_lock(&ep->lock);
		conn = kdbus_conn_ref(list_first_entry_or_null(&ep->conns, struct kdbus_conn, ep_link));
		mutex_unlock(&ep->lock);
		if (!conn)
			break;
		kdbus_conn_disconnect(conn);	/* takes it off the list */
		kdbus_conn_unref(conn);
	}
}

/**
 * kdbus_ep_add_conn() - a HELLO on @ep makes @conn known
 * @ep:		the endpoint
 * @conn:	the new connection
 *
 * With bus->conn_lock held for writing, as @conn goes into the bus's
 * table: a custom endpoint that is being closed takes no more.
 *
 * Return: 0, or -ESHUTDOWN.
 */
int kdbus_ep_add_conn(struct kdbus_ep *ep, struct kdbus_conn *conn)
{
	int r = 0;

	if (!ep->custom)
		return 0;
	mutex_lock(&ep->lock);
	if (ep->active)
		list_add_tail(&conn->ep_link, &ep->conns);
	else
		r = -ESHUTDOWN;
	mutex_unlock(&ep->lock);
	return r;
}

/* @conn is disconnected: its endpoint forgets it */
void kdbus_ep_remove_conn(struct kdbus_conn *conn)
{
	struct kdbus_ep *ep = conn->ep;

	if (!ep->custom)
		return;
	mutex_lock(&ep->lock);
	list_del_init(&conn->ep_link);
	mutex_unlock(&ep->lock);
}

/* the bus is shut down: its directory goes, with every endpoint's file */
void kdbus_bus_remove_nodes(struct kdbus_bus *bus)
{
	struct kdbus_ep *ep, *tmp;

	mutex_lock(&bus->node_lock);
	list_for_each_entry_safe(ep, tmp, &bus->eps, bus_link) {
		kdbus_fs_remove(ep->dentry);
		ep->dentry = NULL;
		list_del_init(&ep->bus_link);
	}
	kdbus_fs_remove(bus->dir);
	bus->dir = NULL;
	mutex_unlock(&bus->node_lock);
}
