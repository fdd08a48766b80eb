// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * connection.c - connections: HELLO, BYEBYE, UPDATE, CONN_INFO,
 * BUS_CREATOR_INFO, disconnection, poll and the pool mapping
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs_struct.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "internal.h"

#define HELLO_FLAGS (KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_ACTIVATOR | \
		     KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)

static const u64 hello_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
	KDBUS_ITEM_AUXGROUPS, KDBUS_ITEM_SECLABEL, KDBUS_ITEM_PID_COMM, KDBUS_ITEM_NAME,
	KDBUS_ITEM_POLICY_ACCESS,
};
static const u64 info_items[] = { KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME };
static const u64 creator_info_items[] = { KDBUS_ITEM_NEGOTIATE };

/* ---- objects ------------------------------------------------------------ */

struct kdbus_conn *kdbus_conn_ref(struct kdbus_conn *conn)
{
	if (conn)
		kref_get(&conn->kref);
	return conn;
}

static void __kdbus_conn_free(struct kref *kref)
{
	struct kdbus_conn *conn = container_of(kref, struct kdbus_conn, kref);

	/* disconnected before the last reference went: queue and names are gone */
	WARN_ON(conn->connected);
	WARN_ON(!list_empty(&conn->queue));
	WARN_ON(!list_empty(&conn->names));
	kdbus_match_flush(conn);
	kdbus_policy_remove(conn->bus, &conn->policy);
	kdbus_pool_free(conn->pool);
	xa_destroy(&conn->quota);
	if (conn->user) {
		atomic_dec(&conn->user->conns);
		kdbus_user_unref(conn->user);
	}
	kdbus_meta_recv_account(conn->bus, conn->attach_recv, 0);
	put_cred(conn->cred);
	kdbus_meta_fake_free(conn->fake);
	kdbus_meta_proc_release(&conn->meta);
	put_pid(conn->pid);
	if (conn->root.mnt)
		path_put(&conn->root);
	kfree(conn->cgroup_root);
	kfree(conn->description);
	kdbus_ep_unref(conn->ep);
	kdbus_bus_unref(conn->bus);
	kfree(conn);
}

struct kdbus_conn *kdbus_conn_unref(struct kdbus_conn *conn)
{
	if (conn)
		kref_put(&conn->kref, __kdbus_conn_free);
	return NULL;
}

/* the fd is closed or the bus goes away: no longer reachable, queue dropped */
void kdbus_conn_disconnect(struct kdbus_conn *conn)
{
	struct kdbus_bus *bus = conn->bus;
	bool was_connected;
	LIST_HEAD(gone);

	down_write(&bus->conn_lock);
	if (!hlist_unhashed(&conn->hentry))
		hash_del(&conn->hentry);
	up_write(&bus->conn_lock);

	mutex_lock(&conn->lock);
	was_connected = conn->connected;
	WRITE_ONCE(conn->connected, false);
	kdbus_match_flush(conn);
	mutex_unlock(&conn->lock);
	/* what was sent to its names returns to their activators first */
	kdbus_ep_remove_conn(conn);
	kdbus_names_release_all(conn);
	kdbus_policy_remove(bus, &conn->policy);
	mutex_lock(&conn->lock);
	kdbus_conn_flush_queue(conn, &gone);
	mutex_unlock(&conn->lock);
	kdbus_queue_entries_free(&gone);
	kdbus_reply_conn_gone(conn);
	if (was_connected && !(conn->flags & KDBUS_HELLO_MONITOR))
		kdbus_notify_id_change(bus, KDBUS_ITEM_ID_REMOVE, conn->id, conn->flags);
	kdbus_notify_flush(bus);
	wake_up_interruptible_all(&conn->wait);
}

/**
 * kdbus_conn_slice_public() - a public slice in @conn's pool holding @data
 * @conn:	the connection (its lock held)
 * @data:	the answer of a command
 * @size:	its size
 *
 * The slice comes with a kernel reference: the command tells userspace
 * its offset with no lock held, then gives the reference back with
 * kdbus_conn_slice_tell().
 *
 * Return: the slice, or an ERR_PTR.
 */
struct kdbus_slice *kdbus_conn_slice_public(struct kdbus_conn *conn, const void *data, size_t size)
{
	struct kdbus_slice *slice;
	int ret;

	slice = kdbus_pool_slice_alloc(conn->pool, size, false);
	if (IS_ERR(slice))
		return slice;
	ret = kdbus_pool_write(conn->pool, kdbus_slice_offset(slice), data, size);
	if (ret < 0) {
		kdbus_pool_slice_put(conn->pool, slice);
		return ERR_PTR(ret);
	}
	kdbus_slice_publish(slice);
	return slice;
}

/**
 * kdbus_conn_slice_tell() - the end of a command that answered in a slice
 * @conn:	the connection (its lock not held)
 * @slice:	the answer's slice, with the command's kernel reference
 * @copy_result: 0 when userspace was told the offset, else its error
 *
 * A slice whose offset could not be written is no longer userspace's (it
 * could not know what to FREE).  The slice is reached by the reference
 * the command holds, never by its offset: meanwhile it may have been
 * freed by a guess, or the offset reused.
 *
 * Return: @copy_result.
 */
int kdbus_conn_slice_tell(struct kdbus_conn *conn, struct kdbus_slice *slice, int copy_result)
{
	mutex_lock(&conn->lock);
	if (copy_result < 0 && kdbus_slice_is_public(slice))
		kdbus_pool_slice_unpublish(conn->pool, slice);
	kdbus_pool_slice_put(conn->pool, slice);
	mutex_unlock(&conn->lock);
	return copy_result;
}

/* ---- HELLO ---------------------------------------------------------------- */

/**
 * kdbus_hello_args_parse() - copy HELLO's command, with no lock held
 * @argp:	struct kdbus_cmd_hello
 * @ret_items_size: the bytes of its items
 *
 * Return: the copy, NULL after a negotiation, or an ERR_PTR.
 */
struct kdbus_cmd_hello *kdbus_hello_args_parse(void __user *argp, size_t *ret_items_size)
{
	return kdbus_args_parse(argp, sizeof(struct kdbus_cmd_hello), offsetof(struct kdbus_cmd_hello, items),
				HELLO_FLAGS, hello_items, ARRAY_SIZE(hello_items), ret_items_size);
}

/**
 * kdbus_hello_connect() - make the connection HELLO asks for
 * @ep:		the endpoint HELLO was said on
 * @file:	the endpoint file: its opener's credentials are the connection's
 * @cmd:	the command, from kdbus_hello_args_parse()
 * @items_size:	the bytes of its items
 *
 * Reads and writes no user memory but the caller's own command line
 * (metadata, before any lock).  The connection is on the bus when this
 * returns; kdbus_hello_answer() tells the caller.  Through a custom
 * endpoint nobody is privileged or the bus owner.
 *
 * Return: the connection, or an ERR_PTR; -ECONNREFUSED when the bus
 * requires attach flags the command does not send; -EOPNOTSUPP for a
 * monitor on a custom endpoint; -ESHUTDOWN when the bus or the endpoint
 * is gone.
 */
struct kdbus_conn *kdbus_hello_connect(struct kdbus_ep *ep, struct file *file,
				       struct kdbus_cmd_hello *cmd, size_t items_size)
{
	struct kdbus_bus *bus = ep->bus;
	const struct kdbus_item *it, *description = NULL;
	const struct kdbus_item *activator_name = NULL;
	struct kdbus_meta_fake *fake = NULL;
	const struct cred *cred = NULL;
	bool has_fake = false, privileged, owner;
	struct kdbus_conn *conn = NULL;
	struct kdbus_slice *slice = NULL;
	size_t n_names = 0, n_access = 0, out_size;
	u64 send, recv, fake_seen = 0;
	void *out_items = NULL, *p;
	int r;

	/* who opened the fd, as for any other file: not who uses it now */
	privileged = !ep->custom && file_ns_capable(file, &init_user_ns, CAP_IPC_OWNER);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_CONN_DESCRIPTION:
			if (description)
				goto out;	/* one at most */
			description = it;
			break;
		case KDBUS_ITEM_NAME:
			n_names++;
			break;
		case KDBUS_ITEM_POLICY_ACCESS:
			n_access++;
			break;
		case KDBUS_ITEM_CREDS:
		case KDBUS_ITEM_PIDS:
		case KDBUS_ITEM_AUXGROUPS:
		case KDBUS_ITEM_SECLABEL:
		case KDBUS_ITEM_PID_COMM:
			/* one of each (metadata types: their attach bit) */
			if (fake_seen & BIT_ULL(it->type - _KDBUS_ITEM_ATTACH_BASE))
				goto out;
			fake_seen |= BIT_ULL(it->type - _KDBUS_ITEM_ATTACH_BASE);
			/* who a proxy stands for: privileged proxies only */
			r = -EPERM;
			if (!privileged)
				goto out;
			has_fake = true;
			break;
		default:
			break;	/* NEGOTIATE */
		}
	}
	r = -EINVAL;
	if (hweight64(cmd->flags & KDBUS_HELLO_ROLES) > 1)
		goto out;
	if ((cmd->flags & KDBUS_HELLO_ACTIVATOR) && n_names != 1)
		goto out;
	if ((cmd->flags & KDBUS_HELLO_POLICY_HOLDER) && n_names < 1)
		goto out;
	if (!(cmd->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER)) && (n_names || n_access))
		goto out;
	r = -EOPNOTSUPP;
	if ((cmd->flags & KDBUS_HELLO_MONITOR) && ep->custom)
		goto out;
	r = -EINVAL;
	send = cmd->attach_flags_send;
	recv = cmd->attach_flags_recv;
	if (kdbus_attach_flags_check(&send) < 0 || kdbus_attach_flags_check(&recv) < 0)
		goto out;
	if (has_fake) {
		fake = kdbus_meta_fake_new(cmd->items, items_size, file->f_cred, &cred);
		if (IS_ERR(fake)) {
			r = PTR_ERR(fake);
			fake = NULL;
			goto out;
		}
	}
	if (!cred)
		cred = get_cred(file->f_cred);
	/* a proxy that stands for somebody else keeps its own privilege (its
	 * fd's): the identity it gives is for metadata and accounting, and it
	 * enforces its own policy, as the final kdbus; the special roles are
	 * for privileged callers and the bus owner */
	owner = !ep->custom && (privileged || uid_eq(cred->euid, bus->creator_cred->euid));
	if ((cmd->flags & KDBUS_HELLO_ROLES) && !owner) {
		r = -EPERM;
		goto out;
	}
	if (cmd->flags & KDBUS_HELLO_ACTIVATOR) {
		KDBUS_ITEMS_FOREACH(it, cmd->items, items_size)
			if (it->type == KDBUS_ITEM_NAME)
				activator_name = it;
		r = -EINVAL;
		if (!kdbus_name_is_valid(kdbus_item_str(activator_name), false))
			goto out;
	}
	if (bus->attach_req & ~send) {
		r = -ECONNREFUSED;
		goto out;
	}
	r = -EINVAL;
	if (cmd->pool_size == 0 || !PAGE_ALIGNED(cmd->pool_size) || cmd->pool_size > SZ_1G)
		goto out;

	r = -ENOMEM;
	conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	if (!conn)
		goto out;
	kref_init(&conn->kref);
	conn->bus = kdbus_bus_ref(bus);
	conn->ep = kdbus_ep_ref(ep);
	INIT_LIST_HEAD(&conn->ep_link);
	conn->flags = cmd->flags;
	conn->attach_send = send;
	conn->attach_recv = recv;
	kdbus_meta_recv_account(bus, 0, recv);
	INIT_HLIST_NODE(&conn->hentry);
	INIT_LIST_HEAD(&conn->names);
	INIT_LIST_HEAD(&conn->matches);
	INIT_LIST_HEAD(&conn->policy);
	conn->privileged = privileged;
	conn->owner = owner;
	atomic_set(&conn->n_requests, 0);
	mutex_init(&conn->lock);
	INIT_LIST_HEAD(&conn->queue);
	INIT_LIST_HEAD(&conn->parked_replies);
	xa_init(&conn->quota);
	init_waitqueue_head(&conn->wait);
	conn->cred = cred;
	cred = NULL;
	conn->fake = fake;
	fake = NULL;
	/* who it is for CONN_INFO, and how it reads others' metadata: its
	 * process as of now, collected before any lock */
	if (!conn->fake) {
		kdbus_meta_proc_collect(&conn->meta, _KDBUS_ATTACH_ALL);
		/* its credentials are its fd's, whoever says HELLO */
		put_cred(conn->meta.cred);
		conn->meta.cred = get_cred(conn->cred);
	}
	conn->pid = get_task_pid(current, PIDTYPE_TGID);
	get_fs_root(current->fs, &conn->root);
	conn->cgroup_root = kdbus_meta_cgroup_root();

	/* the user it belongs to (through a custom endpoint: the
	 * endpoint's), and that user's connection count */
	if (ep->custom)
		conn->user = kdbus_user_ref(ep->user);
	else
		conn->user = kdbus_user_get(bus->domain, conn->cred->euid);
	if (IS_ERR(conn->user)) {
		r = PTR_ERR(conn->user);
		conn->user = NULL;
		goto out;
	}
	r = -EMFILE;
	if (atomic_inc_return(&conn->user->conns) > KDBUS_USER_MAX_CONN && !conn->privileged)
		goto out;

	r = -ENOMEM;
	if (description) {
		conn->description = kstrdup(kdbus_item_str(description), GFP_KERNEL_ACCOUNT);
		if (!conn->description)
			goto out;
	}
	conn->pool = kdbus_pool_new("kdbus-pool", cmd->pool_size);
	if (IS_ERR(conn->pool)) {
		r = PTR_ERR(conn->pool);
		conn->pool = NULL;
		goto out;
	}

	/* a policy holder's entries, an activator's (its name's, with the
	 * access it brings, maybe none: a name somebody else's policy covers
	 * is refused, EEXIST); in place before anybody can see the connection */
	if (cmd->flags & (KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_ACTIVATOR)) {
		r = kdbus_policy_set(bus, &bus->policy, conn, &conn->policy, conn->cred->user_ns,
				     cmd->items, items_size, (cmd->flags & KDBUS_HELLO_ACTIVATOR) ? 1 : 0,
				     cmd->flags & KDBUS_HELLO_POLICY_HOLDER);
		if (r < 0)
			goto out;
	}

	/* the answer's items: the bloom parameters; for an activator, its
	 * NAME and POLICY_ACCESS items back */
	out_size = KDBUS_ITEM_SIZE(sizeof(struct kdbus_bloom_parameter));
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size)
		if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			out_size += KDBUS_ALIGN8(it->size);
	r = -ENOMEM;
	out_items = kzalloc(out_size, GFP_KERNEL_ACCOUNT);
	if (!out_items)
		goto out;
	p = kdbus_item_write(out_items, KDBUS_ITEM_BLOOM_PARAMETER, &bus->bloom, sizeof(bus->bloom));
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size)
		if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			p = kdbus_item_write(p, it->type, kdbus_item_str(it), it->size - KDBUS_ITEM_HEADER_SIZE);
	mutex_lock(&conn->lock);
	slice = kdbus_conn_slice_public(conn, out_items, out_size);
	if (!IS_ERR(slice)) {
		cmd->offset = kdbus_slice_offset(slice);
		kdbus_pool_slice_put(conn->pool, slice);	/* public: the caller FREEs it */
	}
	mutex_unlock(&conn->lock);
	if (IS_ERR(slice)) {
		r = PTR_ERR(slice);
		goto out;
	}

	/* an activator's name is taken in the same step that makes it known */
	if (activator_name) {
		down_write(&bus->name_lock);
		if (kdbus_name_has_activator(bus, kdbus_item_str(activator_name))) {
			up_write(&bus->name_lock);
			r = -EEXIST;
			goto out;
		}
	}
	down_write(&bus->conn_lock);
	r = bus->active ? kdbus_ep_add_conn(ep, conn) : -ESHUTDOWN;
	if (r < 0) {
		up_write(&bus->conn_lock);
		if (activator_name)
			up_write(&bus->name_lock);
		goto out;
	}
	conn->id = ++bus->last_id;
	conn->connected = true;
	if (conn->flags & KDBUS_HELLO_MONITOR) {
		/* invisible: no notification, no id to reach it by */
		hlist_add_head(&conn->hentry, &bus->monitors);
	} else {
		hash_add(bus->conns, &conn->hentry, conn->id);
		kdbus_notify_id_change(bus, KDBUS_ITEM_ID_ADD, conn->id, conn->flags);
	}
	up_write(&bus->conn_lock);
	if (activator_name) {
		r = kdbus_name_activator_add(conn, kdbus_item_str(activator_name));
		up_write(&bus->name_lock);
		if (r < 0) {
			kdbus_conn_disconnect(conn);	/* never seen: nothing to undo */
			kdbus_notify_flush(bus);
			goto out;
		}
	}
	kdbus_notify_flush(bus);

	cmd->return_flags = 0;
	cmd->attach_flags_send = bus->attach_req;
	cmd->bus_flags = bus->flags;
	cmd->id = conn->id;
	cmd->items_size = out_size;
	memcpy(cmd->id128, bus->id128, sizeof(cmd->id128));
	kfree(out_items);
	return conn;

out:
	kdbus_conn_unref(conn);
	if (cred)
		put_cred(cred);
	kdbus_meta_fake_free(fake);
	kfree(out_items);
	return ERR_PTR(r);
}

/**
 * kdbus_hello_answer() - tell HELLO's caller, with no lock held
 * @conn:	the new connection
 * @argp:	struct kdbus_cmd_hello of the caller
 * @cmd:	the answer, filled by kdbus_hello_connect()
 *
 * A caller that cannot be told loses the connection.
 *
 * Return: 0 or -EFAULT.
 */
int kdbus_hello_answer(struct kdbus_conn *conn, void __user *argp, struct kdbus_cmd_hello *cmd)
{
	if (copy_to_user(argp, cmd, sizeof(*cmd)) == 0)
		return 0;
	kdbus_conn_disconnect(conn);
	return -EFAULT;
}

int kdbus_cmd_byebye(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_bus *bus = conn->bus;
	void *cmd;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(struct kdbus_cmd), sizeof(struct kdbus_cmd), 0);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	kfree(cmd);
	if (conn->flags & KDBUS_HELLO_ROLES)
		return -EOPNOTSUPP;

	down_write(&bus->conn_lock);
	mutex_lock(&conn->lock);
	if (!conn->connected)
		r = -ECONNRESET;
	else if (conn->n_msgs > 0)
		r = -EBUSY;
	else
		WRITE_ONCE(conn->connected, false);
	mutex_unlock(&conn->lock);
	if (r == 0 && !hlist_unhashed(&conn->hentry))
		hash_del(&conn->hentry);
	up_write(&bus->conn_lock);
	if (r == 0) {
		kdbus_names_release_all(conn);
		kdbus_reply_conn_gone(conn);
		kdbus_notify_id_change(bus, KDBUS_ITEM_ID_REMOVE, conn->id, conn->flags);
		kdbus_notify_flush(bus);
		wake_up_interruptible_all(&conn->wait);
	}
	return r;
}

static const u64 update_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_ATTACH_FLAGS_SEND, KDBUS_ITEM_ATTACH_FLAGS_RECV,
	KDBUS_ITEM_NAME, KDBUS_ITEM_POLICY_ACCESS,
};

/* KDBUS_CMD_UPDATE: the attach masks (policy holders' policy: not yet) */
int kdbus_cmd_update(struct kdbus_conn *conn, void __user *argp)
{
	const struct kdbus_item *it, *send = NULL, *recv = NULL;
	struct kdbus_cmd *cmd;
	size_t items_size;
	u64 send_flags = 0, recv_flags = 0;
	bool policy = false;
	int r;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd, items), 0,
			       update_items, ARRAY_SIZE(update_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		const struct kdbus_item **slot;

		if (it->type == KDBUS_ITEM_ATTACH_FLAGS_SEND)
			slot = &send;
		else if (it->type == KDBUS_ITEM_ATTACH_FLAGS_RECV)
			slot = &recv;
		else if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			slot = NULL;	/* a policy holder's new entries */
		else
			continue;	/* NEGOTIATE */
		if (!slot) {
			r = -EOPNOTSUPP;
			if (!(conn->flags & KDBUS_HELLO_POLICY_HOLDER))
				goto out;
			policy = true;
			continue;
		}
		r = -EINVAL;
		if (*slot)
			goto out;	/* one of each */
		*slot = it;
	}
	r = -EINVAL;
	if (send) {
		send_flags = send->data64[0];
		if (kdbus_attach_flags_check(&send_flags) < 0 || (conn->bus->attach_req & ~send_flags))
			goto out;
	}
	if (recv) {
		recv_flags = recv->data64[0];
		if (kdbus_attach_flags_check(&recv_flags) < 0)
			goto out;
	}
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	if (conn->flags & KDBUS_HELLO_POLICY_HOLDER) {
		/* a policy holder replaces its entries, all or nothing */
		r = -EOPNOTSUPP;
		if (send || recv)
			goto out;
		r = policy ? kdbus_policy_set(conn->bus, &conn->bus->policy, conn, &conn->policy,
					      conn->cred->user_ns, cmd->items, items_size, 0, true) : 0;
		goto out;
	}
	r = -EOPNOTSUPP;
	if (conn->flags & KDBUS_HELLO_ACTIVATOR)
		goto out;
	if (send)
		WRITE_ONCE(conn->attach_send, send_flags);
	if (recv)
		kdbus_meta_recv_account(conn->bus, xchg(&conn->attach_recv, recv_flags), recv_flags);
	r = 0;
out:
	kfree(cmd);
	return r;
}

/* ---- CONN_INFO, BUS_CREATOR_INFO ------------------------------------------- */

static int kdbus_info_reply(struct kdbus_conn *conn, struct kdbus_cmd_info __user *uinfo,
			    const void *buf, size_t size)
{
	struct kdbus_slice *slice;
	u64 off;
	int r = 0;

	mutex_lock(&conn->lock);
	slice = kdbus_conn_slice_public(conn, buf, size);
	mutex_unlock(&conn->lock);
	if (IS_ERR(slice))
		return PTR_ERR(slice);
	off = kdbus_slice_offset(slice);
	if (put_user(off, &uinfo->offset) || put_user((u64)size, &uinfo->info_size) ||
	    put_user((u64)0, &uinfo->return_flags))
		r = -EFAULT;
	return kdbus_conn_slice_tell(conn, slice, r);
}

/*
 * kdbus_args_parse() for CONN_INFO (@ret_items_size set, NAME items) and
 * BUS_CREATOR_INFO (@ret_items_size NULL, no items); then the attach mask
 * the caller asks for goes to *ret_mask, -EINVAL when it has unknown bits.
 */
static struct kdbus_cmd_info *kdbus_info_args_parse(void __user *argp, size_t *ret_items_size,
						    u64 *ret_mask)
{
	struct kdbus_cmd_info *cmd;

	if (ret_items_size)
		cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_info, items), 0,
				       info_items, ARRAY_SIZE(info_items), ret_items_size);
	else
		cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_info, items), 0,
				       creator_info_items, ARRAY_SIZE(creator_info_items), NULL);
	if (IS_ERR_OR_NULL(cmd))
		return cmd;
	*ret_mask = cmd->attach_flags;
	if (kdbus_attach_flags_check(ret_mask) < 0) {
		kfree(cmd);
		return ERR_PTR(-EINVAL);
	}
	return cmd;
}

int kdbus_cmd_conn_info(struct kdbus_conn *conn, void __user *argp)
{
	const struct kdbus_item *it, *name = NULL;
	struct kdbus_conn *target = NULL, *hidden = NULL;
	struct kdbus_meta_src ms;
	struct kdbus_cmd_info *cmd;
	struct kdbus_info *info = NULL;
	size_t items_size, size;
	u64 mask;
	int r;

	cmd = kdbus_info_args_parse(argp, &items_size, &mask);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		if (it->type != KDBUS_ITEM_NAME)
			continue;	/* NEGOTIATE */
		r = -EINVAL;
		if (name)
			goto out;	/* one at most */
		name = it;
	}
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	if (name) {
		r = -EINVAL;
		if (!kdbus_name_is_valid(kdbus_item_str(name), false))
			goto out;
	} else if (cmd->id == 0) {
		r = -EINVAL;
		goto out;
	}

	/* the names are read fresh: the registry stays still meanwhile; what
	 * a custom endpoint does not let the caller see does not exist */
	down_read(&conn->bus->name_lock);
	down_read(&conn->bus->policy_lock);
	if (name) {
		r = -ESRCH;
		if (kdbus_conn_may_see_name_locked(conn, kdbus_item_str(name)))
			target = kdbus_name_lookup_owner(conn->bus, kdbus_item_str(name), NULL);
	} else {
		r = -ENXIO;
		target = kdbus_bus_find_conn(conn->bus, cmd->id);
		if (target && !kdbus_conn_may_see_locked(conn, target)) {
			/* dropped once the locks are: it may be the last
			 * reference, and a connection's end takes them */
			hidden = target;
			target = NULL;
		}
	}
	if (!target) {
		up_read(&conn->bus->policy_lock);
		up_read(&conn->bus->name_lock);
		kdbus_conn_unref(hidden);
		goto out;
	}
	/* what the caller asks for of what the target shows, as of its
	 * HELLO, translated into the caller's namespaces */
	mask &= READ_ONCE(target->attach_send);
	kdbus_meta_src_conn(&ms, target);
	size = sizeof(*info) + kdbus_meta_size(mask, &ms, conn);
	if (mask & KDBUS_ATTACH_NAMES)
		size += kdbus_names_meta_size(target, conn);
	info = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (info) {
		void *p;

		info->size = size;
		info->id = target->id;
		info->flags = target->flags;
		p = kdbus_meta_write(info->items, mask, &ms, conn);
		if (mask & KDBUS_ATTACH_NAMES)
			kdbus_names_meta_write(p, target, conn);
	}
	up_read(&conn->bus->policy_lock);
	up_read(&conn->bus->name_lock);
	r = -ENOMEM;
	if (!info)
		goto out;
	r = kdbus_info_reply(conn, argp, info, size);
out:
	kdbus_conn_unref(target);
	kfree(info);
	kfree(cmd);
	return r;
}

int kdbus_cmd_bus_creator_info(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_meta_src ms = { .proc = &bus->creator_meta };
	struct kdbus_cmd_info *cmd;
	struct kdbus_info *info = NULL;
	size_t size, name_len = strlen(bus->name) + 1;
	void *p;
	u64 mask;
	int r;

	cmd = kdbus_info_args_parse(argp, NULL, &mask);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	size = sizeof(*info) + KDBUS_ITEM_SIZE(name_len) + kdbus_meta_size(mask, &ms, conn);
	r = -ENOMEM;
	info = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!info)
		goto out;
	info->size = size;
	info->id = 0;
	info->flags = bus->flags;
	p = kdbus_item_write(info->items, KDBUS_ITEM_MAKE_NAME, bus->name, name_len);
	kdbus_meta_write(p, mask, &ms, conn);
	r = kdbus_info_reply(conn, argp, info, size);
out:
	kfree(info);
	kfree(cmd);
	return r;
}

/* ---- poll, mmap ------------------------------------------------------------ */

__poll_t kdbus_conn_poll(struct kdbus_conn *conn, struct file *file, poll_table *wait)
{
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &conn->wait, wait);
	if (!READ_ONCE(conn->connected))
		return EPOLLERR | EPOLLHUP;
	if (READ_ONCE(conn->n_msgs) > 0)
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* called with mmap_lock held: no connection lock may be taken here (the
 * pool itself never changes after HELLO) */
int kdbus_conn_mmap(struct kdbus_conn *conn, struct vm_area_struct *vma)
{
	return kdbus_pool_mmap(conn->pool, vma);
}

