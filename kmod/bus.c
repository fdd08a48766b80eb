// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bus.c - BUS_MAKE, the connection table, shutdown, BUS_CREATOR_INFO
 */
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

	WARN_ON(!hash_empty(bus->conns));
	WARN_ON(!hash_empty(bus->names));
	WARN_ON(!list_empty(&bus->notify_list));
	WARN_ON(!list_empty(&bus->replies));
	WARN_ON(!hash_empty(bus->policy));
	put_cred(bus->creator_cred);
	put_pid(bus->creator_pid);
	kdbus_domain_unref(bus->domain);
	kfree(bus);
}

struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus)
{
	if (bus)
		kref_put(&bus->kref, __kdbus_bus_free);
	return NULL;
}

/* "<euid>-<name>": [A-Za-z0-9_.-], no '-' or '.' at the end, 63 at most */
static int kdbus_bus_name_check(const char *name, size_t len)
{
	char prefix[16];
	size_t i, plen;

	if (len > KDBUS_SYSNAME_MAX_LEN)
		return -ENAMETOOLONG;
	plen = snprintf(prefix, sizeof(prefix), "%u-",
			from_kuid_munged(current_user_ns(), current_euid()));
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
 * kdbus_cmd_bus_make() - KDBUS_CMD_BUS_MAKE on a control fd
 * @domain:	the mount's domain
 * @ret:	the new bus (NULL after a negotiation)
 * @argp:	struct kdbus_cmd with MAKE_NAME and BLOOM_PARAMETER items
 *
 * Return: 0 or a negative errno.
 */
int kdbus_cmd_bus_make(struct kdbus_domain *domain, struct kdbus_bus **ret, void __user *argp)
{
	const struct kdbus_item *it, *name = NULL, *bloom = NULL, *req = NULL, *recv = NULL;
	struct kdbus_cmd *cmd;
	struct kdbus_bus *bus = NULL;
	size_t items_size;
	umode_t mode;
	int r;

	*ret = NULL;
	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), BUS_MAKE_FLAGS,
			       bus_make_items, ARRAY_SIZE(bus_make_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		const struct kdbus_item **slot;
		size_t payload = it->size - KDBUS_ITEM_HEADER_SIZE;

		switch (it->type) {
		case KDBUS_ITEM_MAKE_NAME:
			slot = &name;
			r = -EINVAL;
			if (payload < 2 || kdbus_item_str(it)[payload - 1] != '\0' || strlen(kdbus_item_str(it)) != payload - 1)
				goto out;
			break;
		case KDBUS_ITEM_BLOOM_PARAMETER:
			slot = &bloom;
			r = -EINVAL;
			if (payload != sizeof(struct kdbus_bloom_parameter))
				goto out;
			break;
		case KDBUS_ITEM_ATTACH_FLAGS_SEND:
			slot = &req;
			r = -EINVAL;
			if (payload != sizeof(u64))
				goto out;
			break;
		case KDBUS_ITEM_ATTACH_FLAGS_RECV:
			slot = &recv;
			r = -EINVAL;
			if (payload != sizeof(u64))
				goto out;
			break;
		default:
			r = -EINVAL;
			goto out;
		}
		r = -EEXIST;
		if (*slot)
			goto out;
		*slot = it;
	}
	r = -EBADMSG;
	if (!name || !bloom)
		goto out;
	r = kdbus_bus_name_check(kdbus_item_str(name), strlen(kdbus_item_str(name)));
	if (r < 0)
		goto out;
	r = -EINVAL;
	if (bloom->bloom_parameter.size < 8 || bloom->bloom_parameter.size > KDBUS_BUS_BLOOM_MAX_SIZE ||
	    !IS_ALIGNED(bloom->bloom_parameter.size, 8) || bloom->bloom_parameter.n_hash < 1)
		goto out;

	/* the answer first: once the bus exists, the call succeeds */
	r = -EFAULT;
	if (put_user((u64)0, &((struct kdbus_cmd __user *)argp)->return_flags))
		goto out;
	r = -ENOMEM;
	bus = kzalloc(sizeof(*bus), GFP_KERNEL);
	if (!bus)
		goto out;
	kref_init(&bus->kref);
	bus->domain = kdbus_domain_ref(domain);
	strscpy(bus->name, kdbus_item_str(name), sizeof(bus->name));
	bus->flags = cmd->flags;
	bus->bloom = bloom->bloom_parameter;
	if (req) {
		bus->attach_req = req->data64[0];
		r = kdbus_attach_flags_check(&bus->attach_req);
		if (r < 0)
			goto out;
	}
	generate_random_uuid(bus->id128);
	init_rwsem(&bus->conn_lock);
	hash_init(bus->conns);
	INIT_HLIST_HEAD(&bus->monitors);
	init_rwsem(&bus->name_lock);
	hash_init(bus->names);
	init_rwsem(&bus->policy_lock);
	hash_init(bus->policy);
	mutex_init(&bus->reply_lock);
	INIT_LIST_HEAD(&bus->replies);
	spin_lock_init(&bus->notify_lock);
	INIT_LIST_HEAD(&bus->notify_list);
	mutex_init(&bus->notify_flush_lock);
	bus->active = true;
	bus->creator_cred = get_current_cred();
	bus->creator_pid = get_task_pid(current, PIDTYPE_TGID);

	mode = (cmd->flags & KDBUS_MAKE_ACCESS_WORLD) ? 0777 :
	       (cmd->flags & KDBUS_MAKE_ACCESS_GROUP) ? 0770 : 0700;
	bus->dir = kdbus_fs_make_bus_dir(bus, mode & 0555, mode & 0666);
	if (IS_ERR(bus->dir)) {
		r = PTR_ERR(bus->dir);
		bus->dir = NULL;
		goto out;
	}
	*ret = bus;
	bus = NULL;
	r = 0;
out:
	kdbus_bus_unref(bus);
	kfree(cmd);
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
	kdbus_fs_remove(bus->dir);
	bus->dir = NULL;
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
