// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * connection.c - HELLO, BYEBYE, CONN_INFO, BUS_CREATOR_INFO, unicast SEND
 * by id with PAYLOAD_VEC, RECV, FREE, poll and the pool mapping.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/shmem_fs.h>
#include <net/sock.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "internal.h"

#define HELLO_FLAGS (KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_ACTIVATOR | \
		     KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)
#define HELLO_ROLES (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)
#define MSG_FLAGS (KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_NO_AUTO_START | KDBUS_MSG_SIGNAL)
#define RECV_FLAGS (KDBUS_RECV_PEEK | KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY)

static const u64 hello_items[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
	KDBUS_ITEM_AUXGROUPS, KDBUS_ITEM_SECLABEL, KDBUS_ITEM_PID_COMM, KDBUS_ITEM_NAME,
	KDBUS_ITEM_POLICY_ACCESS,
};
static const u64 info_items[] = { KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME };
static const u64 send_items[] = { KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_CANCEL_FD };
static const u64 no_items[] = { KDBUS_ITEM_NEGOTIATE };

struct kdbus_queue_entry {
	struct list_head entry;		/* in conn->queue */
	struct kdbus_reply *reply;	/* a call: its tracker */
	struct file **files;		/* fds and memfds to install at RECV */
	u64 *fd_pos;			/* where in the pool each one's number goes */
	unsigned int n_files;
	bool has_fds;			/* KDBUS_ITEM_FDS among them */
	u64 dst_name_id;		/* sent to a name: which */
	struct kdbus_slice *slice;
	u64 msg_size;			/* the kdbus_msg with its items */
	s64 priority;
};

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

	WARN_ON(conn->connected);
	WARN_ON(!list_empty(&conn->queue));
	WARN_ON(!list_empty(&conn->names));
	kdbus_match_flush(conn);
	kdbus_policy_remove_owner(conn);
	kdbus_pool_free(conn->pool);
	put_cred(conn->cred);
	put_pid(conn->pid);
	put_pid(conn->tid);
	kfree(conn->description);
	kdbus_bus_unref(conn->bus);
	kfree(conn);
}

struct kdbus_conn *kdbus_conn_unref(struct kdbus_conn *conn)
{
	if (conn)
		kref_put(&conn->kref, __kdbus_conn_free);
	return NULL;
}

static void kdbus_queue_entry_free(struct kdbus_queue_entry *e)
{
	unsigned int i;

	for (i = 0; i < e->n_files; i++)
		fput(e->files[i]);
	kfree(e->files);
	kdbus_reply_unref(e->reply);
	kfree(e);
}

/* with conn->lock held: drop every queued message */
static void kdbus_conn_flush_queue(struct kdbus_conn *conn)
{
	struct kdbus_queue_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &conn->queue, entry) {
		list_del(&e->entry);
		kdbus_pool_slice_release(conn->pool, e->slice);
		kdbus_queue_entry_free(e);
	}
	conn->n_msgs = 0;
}

/* the fd is closed or the bus goes away: no longer reachable, queue dropped */
void kdbus_conn_disconnect(struct kdbus_conn *conn)
{
	struct kdbus_bus *bus = conn->bus;
	bool was_connected;

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
	kdbus_names_release_all(conn);
	kdbus_policy_remove_owner(conn);
	mutex_lock(&conn->lock);
	kdbus_conn_flush_queue(conn);
	mutex_unlock(&conn->lock);
	kdbus_reply_conn_gone(conn);
	if (was_connected && !(conn->flags & KDBUS_HELLO_MONITOR))
		kdbus_notify_id_change(bus, KDBUS_ITEM_ID_REMOVE, conn->id, conn->flags);
	kdbus_notify_flush(bus);
	wake_up_interruptible_all(&conn->wait);
}

/* ---- items and metadata ------------------------------------------------- */

void *kdbus_item_put(void *p, u64 type, const void *data, size_t len)
{
	struct kdbus_item *it = p;

	it->size = KDBUS_ITEM_HEADER_SIZE + len;
	it->type = type;
	if (len)
		memcpy(kdbus_item_str(it), data, len);
	return (u8 *)p + KDBUS_ITEM_SIZE(len);
}

/* a NUL-terminated string filling the item exactly */
bool kdbus_item_is_string(const struct kdbus_item *it)
{
	size_t n = it->size - KDBUS_ITEM_HEADER_SIZE;

	return n >= 1 && kdbus_item_str(it)[n - 1] == '\0' && strlen(kdbus_item_str(it)) == n - 1;
}

size_t kdbus_meta_size(u64 mask, const struct cred *cred, struct pid *pid, const char *description)
{
	size_t size = 0;

	if ((mask & KDBUS_ATTACH_CREDS) && cred)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds));
	if ((mask & KDBUS_ATTACH_PIDS) && pid)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids));
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && description)
		size += KDBUS_ITEM_SIZE(strlen(description) + 1);
	return size;
}

/*
 * Write the metadata items of @mask into @p (zeroed, kdbus_meta_size()
 * bytes).  Identifiers are those of the initial namespaces; translation
 * into the reader's namespaces is not done yet.
 */
void *kdbus_meta_write(void *p, u64 mask, const struct cred *cred, struct pid *pid,
		       struct pid *tid, const char *description)
{
	if ((mask & KDBUS_ATTACH_CREDS) && cred) {
		struct kdbus_creds c = {
			.uid = from_kuid_munged(&init_user_ns, cred->uid),
			.euid = from_kuid_munged(&init_user_ns, cred->euid),
			.suid = from_kuid_munged(&init_user_ns, cred->suid),
			.fsuid = from_kuid_munged(&init_user_ns, cred->fsuid),
			.gid = from_kgid_munged(&init_user_ns, cred->gid),
			.egid = from_kgid_munged(&init_user_ns, cred->egid),
			.sgid = from_kgid_munged(&init_user_ns, cred->sgid),
			.fsgid = from_kgid_munged(&init_user_ns, cred->fsgid),
		};

		p = kdbus_item_put(p, KDBUS_ITEM_CREDS, &c, sizeof(c));
	}
	if ((mask & KDBUS_ATTACH_PIDS) && pid) {
		struct kdbus_pids ps = { .pid = pid_nr(pid), .tid = pid_nr(tid ? tid : pid) };
		struct task_struct *task;

		rcu_read_lock();
		task = pid_task(pid, PIDTYPE_PID);
		if (task)
			ps.ppid = task_tgid_nr(rcu_dereference(task->real_parent));
		rcu_read_unlock();
		p = kdbus_item_put(p, KDBUS_ITEM_PIDS, &ps, sizeof(ps));
	}
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && description)
		p = kdbus_item_put(p, KDBUS_ITEM_CONN_DESCRIPTION, description, strlen(description) + 1);
	return p;
}

/* with conn->lock held: a public slice holding @data */
int kdbus_pool_write_public(struct kdbus_conn *conn, const void *data, size_t size, u64 *ret_off)
{
	struct kdbus_slice *slice;
	int ret;

	slice = kdbus_pool_slice_alloc(conn->pool, size, false);
	if (IS_ERR(slice))
		return PTR_ERR(slice);
	ret = kdbus_pool_write(conn->pool, kdbus_slice_offset(slice), data, size);
	if (ret < 0) {
		kdbus_pool_slice_release(conn->pool, slice);
		return ret;
	}
	kdbus_slice_set_public(slice, true);
	*ret_off = kdbus_slice_offset(slice);
	return 0;
}

/* undo kdbus_pool_write_public() when the caller cannot be told */
static void kdbus_conn_release_offset(struct kdbus_conn *conn, u64 off)
{
	mutex_lock(&conn->lock);
	kdbus_pool_slice_release(conn->pool, kdbus_pool_slice_find(conn->pool, off));
	mutex_unlock(&conn->lock);
}

/* ---- HELLO ---------------------------------------------------------------- */

/**
 * kdbus_cmd_hello() - KDBUS_CMD_HELLO on a `bus` file
 * @bus:	the bus
 * @argp:	struct kdbus_cmd_hello
 *
 * Return: the new connection, NULL after a negotiation, or an ERR_PTR.
 */
struct kdbus_conn *kdbus_cmd_hello(struct kdbus_bus *bus, void __user *argp)
{
	struct kdbus_cmd_hello __user *uhello = argp;
	const struct kdbus_item *it, *description = NULL;
	struct kdbus_cmd_hello *cmd;
	const struct kdbus_item *activator_name = NULL;
	struct kdbus_conn *conn = NULL;
	size_t items_size, n_names = 0, n_access = 0, out_size;
	u64 send, recv, off;
	void *out_items = NULL, *p;
	int r;

	cmd = kdbus_cmd_copy(argp, sizeof(*cmd), KDBUS_CMD_MAX_SIZE);
	if (IS_ERR(cmd))
		return ERR_CAST(cmd);
	items_size = cmd->size - offsetof(struct kdbus_cmd_hello, items);
	if (cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, offsetof(struct kdbus_cmd_hello, items), HELLO_FLAGS,
				    hello_items, ARRAY_SIZE(hello_items));
		kfree(cmd);
		return r < 0 ? ERR_PTR(r) : NULL;
	}
	r = -EINVAL;
	if (cmd->flags & ~(u64)HELLO_FLAGS)
		goto out;
	r = kdbus_items_validate(cmd->items, items_size);
	if (r < 0)
		goto out;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_CONN_DESCRIPTION:
			if (!kdbus_item_is_string(it))
				goto out;
			r = -EEXIST;
			if (description)
				goto out;
			description = it;
			break;
		case KDBUS_ITEM_NAME:
			if (!kdbus_item_is_string(it))
				goto out;
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
			/* faked metadata, for privileged proxies only */
			r = -EPERM;
			if (!capable(CAP_IPC_OWNER))
				goto out;
			r = -EOPNOTSUPP;	/* not implemented yet */
			goto out;
		default:
			goto out;
		}
	}
	r = -EINVAL;
	if (hweight64(cmd->flags & HELLO_ROLES) > 1)
		goto out;
	if ((cmd->flags & KDBUS_HELLO_ACTIVATOR) && n_names != 1)
		goto out;
	if ((cmd->flags & KDBUS_HELLO_POLICY_HOLDER) && n_names < 1)
		goto out;
	if (!(cmd->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER)) && (n_names || n_access))
		goto out;
	send = cmd->attach_flags_send;
	recv = cmd->attach_flags_recv;
	if (kdbus_attach_flags_check(&send) < 0 || kdbus_attach_flags_check(&recv) < 0)
		goto out;
	if ((cmd->flags & HELLO_ROLES) && !capable(CAP_IPC_OWNER)) {
		r = -EPERM;
		goto out;
	}
	if (cmd->flags & KDBUS_HELLO_ACTIVATOR) {
		KDBUS_ITEMS_FOREACH(it, cmd->items, items_size)
			if (it->type == KDBUS_ITEM_NAME)
				activator_name = it;
		r = -EINVAL;
		if (kdbus_name_is_valid(kdbus_item_str(activator_name),
					strlen(kdbus_item_str(activator_name))) < 0)
			goto out;
	}
	if (bus->attach_req & ~send) {
		r = -ECONNREFUSED;
		if (put_user(bus->attach_req, &uhello->attach_flags_send))
			r = -EFAULT;
		goto out;
	}
	r = -EFAULT;
	if (cmd->pool_size == 0 || !PAGE_ALIGNED(cmd->pool_size) || cmd->pool_size > SZ_1G)
		goto out;

	r = -ENOMEM;
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		goto out;
	kref_init(&conn->kref);
	conn->bus = kdbus_bus_ref(bus);
	conn->flags = cmd->flags;
	conn->attach_send = send;
	conn->attach_recv = recv;
	INIT_HLIST_NODE(&conn->hentry);
	INIT_LIST_HEAD(&conn->names);
	INIT_LIST_HEAD(&conn->matches);
	INIT_LIST_HEAD(&conn->policy);
	conn->privileged = capable(CAP_IPC_OWNER);
	atomic_set(&conn->n_requests, 0);
	mutex_init(&conn->lock);
	INIT_LIST_HEAD(&conn->queue);
	init_waitqueue_head(&conn->wait);
	conn->cred = get_current_cred();
	conn->pid = get_task_pid(current, PIDTYPE_TGID);
	conn->tid = get_task_pid(current, PIDTYPE_PID);
	if (description) {
		conn->description = kstrdup(kdbus_item_str(description), GFP_KERNEL);
		if (!conn->description)
			goto out;
	}
	conn->pool = kdbus_pool_new("kdbus-pool", cmd->pool_size);
	if (IS_ERR(conn->pool)) {
		r = PTR_ERR(conn->pool);
		conn->pool = NULL;
		goto out;
	}

	/* the items of the answer: the bus's bloom parameters */
	/* a policy holder's entries, an activator's if it brings any; they
	 * are in place before anybody can see the connection */
	if ((cmd->flags & KDBUS_HELLO_POLICY_HOLDER) || n_access) {
		r = kdbus_policy_set(conn, cmd->items, items_size,
				     (cmd->flags & KDBUS_HELLO_ACTIVATOR) ? 1 : 0,
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
	out_items = kzalloc(out_size, GFP_KERNEL);
	if (!out_items)
		goto out;
	p = kdbus_item_put(out_items, KDBUS_ITEM_BLOOM_PARAMETER, &bus->bloom, sizeof(bus->bloom));
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size)
		if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			p = kdbus_item_put(p, it->type, kdbus_item_str(it), it->size - KDBUS_ITEM_HEADER_SIZE);
	mutex_lock(&conn->lock);
	r = kdbus_pool_write_public(conn, out_items, out_size, &off);
	mutex_unlock(&conn->lock);
	if (r < 0)
		goto out;

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
	if (!bus->active) {
		up_write(&bus->conn_lock);
		if (activator_name)
			up_write(&bus->name_lock);
		r = -ESHUTDOWN;
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
	cmd->offset = off;
	cmd->items_size = out_size;
	memcpy(cmd->id128, bus->id128, sizeof(cmd->id128));
	if (copy_to_user(argp, cmd, sizeof(*cmd))) {
		kdbus_conn_disconnect(conn);
		r = -EFAULT;
		goto out;
	}
	kfree(out_items);
	kfree(cmd);
	return conn;

out:
	kdbus_conn_unref(conn);
	kfree(out_items);
	kfree(cmd);
	return ERR_PTR(r);
}

/* ---- simple commands ------------------------------------------------------- */

/*
 * Copy a fixed-size command without items of its own; answer a
 * negotiation (*negotiated) with @valid flags.
 */
static void *kdbus_cmd_simple(void __user *argp, size_t min, size_t items_off, u64 valid,
			      bool *negotiated)
{
	u64 *cmd = kdbus_cmd_copy(argp, min, KDBUS_CMD_MAX_SIZE);
	int r;

	*negotiated = false;
	if (IS_ERR(cmd))
		return cmd;
	if (cmd[1] & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, items_off, valid, no_items, ARRAY_SIZE(no_items));
		*negotiated = true;
	} else if (cmd[1] & ~valid) {
		r = -EINVAL;
	} else if (cmd[0] != items_off) {
		r = -EINVAL;		/* no item is expected */
	} else {
		return cmd;
	}
	kfree(cmd);
	return r < 0 ? ERR_PTR(r) : NULL;
}

int kdbus_cmd_byebye(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_bus *bus = conn->bus;
	bool negotiated;
	void *cmd;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(struct kdbus_cmd), sizeof(struct kdbus_cmd), 0, &negotiated);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	kfree(cmd);
	if (conn->flags & HELLO_ROLES)
		return -EOPNOTSUPP;

	down_write(&bus->conn_lock);
	mutex_lock(&conn->lock);
	if (!conn->connected)
		r = -EALREADY;
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

	cmd = kdbus_cmd_copy(argp, sizeof(*cmd), KDBUS_CMD_MAX_SIZE);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	items_size = cmd->size - offsetof(struct kdbus_cmd, items);
	if (cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, offsetof(struct kdbus_cmd, items), 0,
				    update_items, ARRAY_SIZE(update_items));
		goto out;
	}
	r = -EINVAL;
	if (cmd->flags)
		goto out;
	r = kdbus_items_validate(cmd->items, items_size);
	if (r < 0)
		goto out;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		const struct kdbus_item **slot;

		r = -EINVAL;
		if (it->type == KDBUS_ITEM_ATTACH_FLAGS_SEND)
			slot = &send;
		else if (it->type == KDBUS_ITEM_ATTACH_FLAGS_RECV)
			slot = &recv;
		else if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			slot = NULL;	/* a policy holder's new entries */
		else
			goto out;
		if (!slot) {
			r = -EOPNOTSUPP;
			if (!(conn->flags & KDBUS_HELLO_POLICY_HOLDER))
				goto out;
			r = -EINVAL;
			if (it->type == KDBUS_ITEM_NAME && !kdbus_item_is_string(it))
				goto out;
			policy = true;
			continue;
		}
		if (it->size != KDBUS_ITEM_HEADER_SIZE + sizeof(u64))
			goto out;
		r = -EEXIST;
		if (*slot)
			goto out;
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
		r = policy ? kdbus_policy_set(conn, cmd->items, items_size, 0, true) : 0;
		goto out;
	}
	r = -EOPNOTSUPP;
	if (conn->flags & KDBUS_HELLO_ACTIVATOR)
		goto out;
	if (send)
		WRITE_ONCE(conn->attach_send, send_flags);
	if (recv)
		WRITE_ONCE(conn->attach_recv, recv_flags);
	r = 0;
out:
	kfree(cmd);
	return r;
}

/* ---- CONN_INFO, BUS_CREATOR_INFO ------------------------------------------- */

static int kdbus_info_reply(struct kdbus_conn *conn, struct kdbus_cmd_info __user *uinfo,
			    const void *buf, size_t size)
{
	u64 off;
	int r;

	mutex_lock(&conn->lock);
	r = kdbus_pool_write_public(conn, buf, size, &off);
	mutex_unlock(&conn->lock);
	if (r < 0)
		return r;
	if (put_user(off, &uinfo->offset) || put_user((u64)size, &uinfo->info_size) ||
	    put_user((u64)0, &uinfo->return_flags)) {
		kdbus_conn_release_offset(conn, off);
		return -EFAULT;
	}
	return 0;
}

int kdbus_cmd_conn_info(struct kdbus_conn *conn, void __user *argp)
{
	const struct kdbus_item *it, *name = NULL;
	struct kdbus_conn *target = NULL;
	struct kdbus_cmd_info *cmd;
	struct kdbus_info *info = NULL;
	size_t items_size, size;
	u64 mask;
	int r;

	cmd = kdbus_cmd_copy(argp, sizeof(*cmd), KDBUS_CMD_MAX_SIZE);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	items_size = cmd->size - offsetof(struct kdbus_cmd_info, items);
	if (cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, offsetof(struct kdbus_cmd_info, items), 0,
				    info_items, ARRAY_SIZE(info_items));
		goto out;
	}
	r = -EINVAL;
	if (cmd->flags)
		goto out;
	mask = cmd->attach_flags;
	if (kdbus_attach_flags_check(&mask) < 0)
		goto out;
	r = kdbus_items_validate(cmd->items, items_size);
	if (r < 0)
		goto out;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		r = -EINVAL;
		if (it->type != KDBUS_ITEM_NAME || !kdbus_item_is_string(it))
			goto out;
		r = -EEXIST;
		if (name)
			goto out;
		name = it;
	}
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	if (name) {
		r = kdbus_name_is_valid(kdbus_item_str(name), strlen(kdbus_item_str(name)));
		if (r < 0)
			goto out;
	} else if (cmd->id == 0) {
		r = -EINVAL;
		goto out;
	}

	/* the names are read fresh: the registry stays still meanwhile */
	down_read(&conn->bus->name_lock);
	if (name) {
		r = -ESRCH;
		target = kdbus_name_lookup_owner(conn->bus, kdbus_item_str(name), NULL);
	} else {
		r = -ENXIO;
		target = kdbus_bus_find_conn(conn->bus, cmd->id);
	}
	if (!target) {
		up_read(&conn->bus->name_lock);
		goto out;
	}
	mask &= READ_ONCE(target->attach_send);
	size = sizeof(*info) + kdbus_meta_size(mask, target->cred, target->pid, target->description);
	if (mask & KDBUS_ATTACH_NAMES)
		size += kdbus_names_meta_size(target);
	info = kzalloc(size, GFP_KERNEL);
	if (info) {
		void *p;

		info->size = size;
		info->id = target->id;
		info->flags = target->flags;
		p = kdbus_meta_write(info->items, mask, target->cred, target->pid, target->tid,
				     target->description);
		if (mask & KDBUS_ATTACH_NAMES)
			kdbus_names_meta_write(p, target);
	}
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
	struct kdbus_cmd_info *cmd;
	struct kdbus_info *info = NULL;
	size_t size, name_len = strlen(bus->name) + 1;
	void *p;
	u64 mask;
	int r;

	cmd = kdbus_cmd_copy(argp, sizeof(*cmd), KDBUS_CMD_MAX_SIZE);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	if (cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, offsetof(struct kdbus_cmd_info, items), 0,
				    no_items, ARRAY_SIZE(no_items));
		goto out;
	}
	r = -EINVAL;
	mask = cmd->attach_flags;
	if (cmd->flags || cmd->size != sizeof(*cmd) || kdbus_attach_flags_check(&mask) < 0)
		goto out;
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	size = sizeof(*info) + KDBUS_ITEM_SIZE(name_len) +
	       kdbus_meta_size(mask, bus->creator_cred, bus->creator_pid, NULL);
	r = -ENOMEM;
	info = kzalloc(size, GFP_KERNEL);
	if (!info)
		goto out;
	info->size = size;
	info->id = 0;
	info->flags = bus->flags;
	p = kdbus_item_put(info->items, KDBUS_ITEM_MAKE_NAME, bus->name, name_len);
	kdbus_meta_write(p, mask, bus->creator_cred, bus->creator_pid, NULL, NULL);
	r = kdbus_info_reply(conn, argp, info, size);
out:
	kfree(info);
	kfree(cmd);
	return r;
}

/* ---- SEND ------------------------------------------------------------------ */

/*
 * Build a message in @dst's pool and queue it.  Layout of the slice: the
 * kdbus_msg with its items (DST_NAME, PAYLOAD_OFF per vec with offsets
 * relative to the pool, the notification of a kernel message, metadata),
 * then the data of each vec at 8-byte aligned offsets.  A broadcast that
 * cannot be queued counts as lost for @dst (reported at its next RECV).
 */
int kdbus_conn_enqueue(struct kdbus_conn *dst, const struct kdbus_staging *s)
{
	const struct kdbus_msg *msg = s->msg;
	struct kdbus_conn *src = s->src;
	struct kdbus_queue_entry *e;
	struct kdbus_slice *slice;
	struct kdbus_msg *m;
	size_t hdr_size, total, data_off, i;
	u64 mask;
	void *p;
	int r;

	mask = READ_ONCE(dst->attach_recv) & (src ? READ_ONCE(src->attach_send) : KDBUS_ATTACH_TIMESTAMP);
	hdr_size = sizeof(*m) + s->n_vecs * KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec)) +
		   ((mask & KDBUS_ATTACH_TIMESTAMP) ? KDBUS_ITEM_SIZE(sizeof(struct kdbus_timestamp)) : 0);
	if (src)
		hdr_size += kdbus_meta_size(mask, s->cred, s->pid, src->description);
	if (s->dst_name)
		hdr_size += KDBUS_ITEM_SIZE(strlen(s->dst_name) + 1);
	if (s->notify)
		hdr_size += KDBUS_ALIGN8(s->notify->size);
	hdr_size += s->n_memfds * KDBUS_ITEM_SIZE(sizeof(struct kdbus_memfd));
	if (s->n_fds)
		hdr_size += KDBUS_ITEM_SIZE(s->n_fds * sizeof(int));
	if (src && (mask & KDBUS_ATTACH_NAMES))
		hdr_size += kdbus_names_meta_size(src);
	total = KDBUS_ALIGN8(hdr_size);
	for (i = 0; i < s->n_vecs; i++)
		if (s->vecs[i].address)
			total += KDBUS_ALIGN8(s->vecs[i].size);

	m = kzalloc(hdr_size, GFP_KERNEL);
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	r = -ENOMEM;
	if (!m || !e)
		goto out;
	if (s->n_fds + s->n_memfds) {
		e->files = kcalloc(s->n_fds + s->n_memfds, sizeof(*e->files) + sizeof(*e->fd_pos),
				   GFP_KERNEL);
		if (!e->files)
			goto out;
		e->fd_pos = (u64 *)(e->files + s->n_fds + s->n_memfds);
	}

	mutex_lock(&dst->lock);
	r = -ECONNRESET;
	if (!dst->connected)
		goto out_unlock;
	r = -ECOMM;
	if (s->n_fds && !(dst->flags & KDBUS_HELLO_ACCEPT_FD))
		goto out_unlock;
	r = -EOPNOTSUPP;	/* fds in the answer to a synchronous call: not yet */
	if (s->ret_offset && s->n_fds + s->n_memfds)
		goto out_unlock;
	r = -ENOBUFS;
	if (dst->n_msgs >= KDBUS_CONN_MAX_MSGS)
		goto out_unlock;
	slice = kdbus_pool_slice_alloc(dst->pool, total, dst != src);
	if (IS_ERR(slice)) {
		r = PTR_ERR(slice);
		goto out_unlock;
	}

	*m = *msg;
	m->size = hdr_size;
	m->src_id = src ? src->id : KDBUS_SRC_ID_KERNEL;
	p = m->items;
	if (s->dst_name)
		p = kdbus_item_put(p, KDBUS_ITEM_DST_NAME, s->dst_name, strlen(s->dst_name) + 1);
	data_off = kdbus_slice_offset(slice) + KDBUS_ALIGN8(hdr_size);
	for (i = 0; i < s->n_vecs; i++) {
		struct kdbus_vec v = { .size = s->vecs[i].size, .offset = ~0ULL };

		if (s->vecs[i].address) {
			v.offset = data_off;
			r = kdbus_pool_write_user(dst->pool, data_off, u64_to_user_ptr(s->vecs[i].address),
						  s->vecs[i].size);
			if (r < 0) {
				kdbus_pool_slice_release(dst->pool, slice);
				goto out_unlock;
			}
			data_off += KDBUS_ALIGN8(s->vecs[i].size);
		}
		p = kdbus_item_put(p, KDBUS_ITEM_PAYLOAD_OFF, &v, sizeof(v));
	}
	for (i = 0; i < s->n_memfds; i++) {
		struct kdbus_memfd mf = {
			.start = s->memfds[i].start,
			.size = s->memfds[i].size,
			.fd = -1,	/* installed at RECV */
		};

		e->fd_pos[e->n_files] = kdbus_slice_offset(slice) + ((u8 *)p - (u8 *)m) +
					KDBUS_ITEM_HEADER_SIZE + offsetof(struct kdbus_memfd, fd);
		e->files[e->n_files++] = get_file(s->memfds[i].f);
		p = kdbus_item_put(p, KDBUS_ITEM_PAYLOAD_MEMFD, &mf, sizeof(mf));
	}
	if (s->n_fds) {
		struct kdbus_item *it = p;
		int *fds = (int *)kdbus_item_str(it);

		it->size = KDBUS_ITEM_HEADER_SIZE + s->n_fds * sizeof(int);
		it->type = KDBUS_ITEM_FDS;
		for (i = 0; i < s->n_fds; i++) {
			fds[i] = -1;	/* installed at RECV */
			e->fd_pos[e->n_files] = kdbus_slice_offset(slice) + ((u8 *)p - (u8 *)m) +
						KDBUS_ITEM_HEADER_SIZE + i * sizeof(int);
			e->files[e->n_files++] = get_file(s->fds[i]);
		}
		p = (u8 *)p + KDBUS_ALIGN8(it->size);
	}
	if (s->notify) {
		memcpy(p, s->notify, s->notify->size);
		p = (u8 *)p + KDBUS_ALIGN8(s->notify->size);
	}
	if (mask & KDBUS_ATTACH_TIMESTAMP) {
		struct kdbus_timestamp ts = {
			.seqnum = s->seq,
			.monotonic_ns = s->monotonic_ns,
			.realtime_ns = s->realtime_ns,
		};

		p = kdbus_item_put(p, KDBUS_ITEM_TIMESTAMP, &ts, sizeof(ts));
	}
	if (src) {
		p = kdbus_meta_write(p, mask, s->cred, s->pid, s->tid, src->description);
		if (mask & KDBUS_ATTACH_NAMES)
			kdbus_names_meta_write(p, src);
	}
	r = kdbus_pool_write(dst->pool, kdbus_slice_offset(slice), m, hdr_size);
	if (r < 0) {
		kdbus_pool_slice_release(dst->pool, slice);
		goto out_unlock;
	}

	if (s->ret_offset) {
		/* the answer to a synchronous call: straight to the caller */
		kdbus_slice_set_public(slice, true);
		*s->ret_offset = kdbus_slice_offset(slice);
		*s->ret_size = hdr_size;
		r = 0;
		goto out_unlock;
	}
	kdbus_slice_set_queued(slice, true);
	e->slice = slice;
	e->msg_size = hdr_size;
	e->priority = msg->priority;
	e->has_fds = s->n_fds > 0;
	e->dst_name_id = s->dst_name_id;
	list_add_tail(&e->entry, &dst->queue);
	WRITE_ONCE(dst->n_msgs, dst->n_msgs + 1);
	if (s->reply) {
		kdbus_reply_link(s->reply);
		e->reply = kdbus_reply_ref(s->reply);
	}
	e = NULL;
	r = 0;
out_unlock:
	if (r < 0 && r != -ECONNRESET && s->count_lost)
		dst->lost_count++;
	mutex_unlock(&dst->lock);
	if (r == 0 && !s->ret_offset)
		wake_up_interruptible(&dst->wait);
out:
	if (e)
		kdbus_queue_entry_free(e);
	kfree(m);
	return r;
}

/* stamp @s with a sequence number and the clocks, as of now */
void kdbus_staging_stamp(struct kdbus_staging *s, struct kdbus_bus *bus)
{
	s->seq = atomic64_inc_return(&bus->domain->seqnum);
	s->monotonic_ns = ktime_get_ns();
	s->realtime_ns = ktime_get_real_ns();
}

/* a kernel message with @notify, to @dst if its matches want it (or
 * unconditionally for a unicast notification or a monitor); a lost one is
 * counted */
void kdbus_conn_enqueue_kernel(struct kdbus_conn *dst, const struct kdbus_item *notify,
			       u64 dst_id, u64 cookie_reply, const struct kdbus_staging *stamp)
{
	struct kdbus_msg msg = {
		.dst_id = dst_id,
		.payload_type = KDBUS_PAYLOAD_KERNEL,
		.cookie_reply = cookie_reply,
	};
	struct kdbus_staging s = *stamp;
	bool wanted = true;

	s.msg = &msg;
	s.notify = notify;
	s.count_lost = true;
	if (dst_id == KDBUS_DST_ID_BROADCAST && !(dst->flags & KDBUS_HELLO_MONITOR)) {
		mutex_lock(&dst->lock);
		wanted = kdbus_match_kernel(dst, notify);
		mutex_unlock(&dst->lock);
	}
	if (wanted)
		kdbus_conn_enqueue(dst, &s);
}

/* with the name lock held for reading: a copy of a message for every
 * monitor; one that does not take fds sees the message without them */
void kdbus_bus_eavesdrop(struct kdbus_bus *bus, const struct kdbus_staging *s)
{
	struct kdbus_staging copy = *s;
	struct kdbus_conn *mon;

	copy.reply = NULL;
	copy.ret_offset = copy.ret_size = NULL;
	copy.count_lost = true;
	down_read(&bus->conn_lock);
	hlist_for_each_entry(mon, &bus->monitors, hentry) {
		copy.n_fds = (mon->flags & KDBUS_HELLO_ACCEPT_FD) ? s->n_fds : 0;
		kdbus_conn_enqueue(mon, &copy);
	}
	up_read(&bus->conn_lock);
}

/* with the name lock held for reading: does @dst want this user message */
static bool kdbus_conn_wants(struct kdbus_conn *dst, const struct kdbus_match_msg *mm)
{
	bool wanted;

	mutex_lock(&dst->lock);
	wanted = kdbus_match_user(dst, mm);
	mutex_unlock(&dst->lock);
	return wanted;
}

/* with the name lock held for reading: a signal to every connection whose
 * matches want it, the sender included */
static void kdbus_bus_broadcast(struct kdbus_bus *bus, const struct kdbus_staging *s,
				const struct kdbus_match_msg *mm)
{
	struct kdbus_conn *dst;
	int i;

	down_read(&bus->conn_lock);
	hash_for_each(bus->conns, i, dst, hentry) {
		if (dst->flags & HELLO_ROLES)
			continue;
		/* the receiver needs TALK access to the sender */
		if (!kdbus_policy_may_talk(dst->privileged, dst->cred, s->src))
			continue;
		if (kdbus_conn_wants(dst, mm))
			kdbus_conn_enqueue(dst, s);
	}
	up_read(&bus->conn_lock);
}

/*
 * The files of a KDBUS_ITEM_FDS: no kdbus handles and no AF_UNIX sockets
 * (O_PATH ones excepted), which could make reference cycles (EOPNOTSUPP).
 */
static int kdbus_send_get_fds(const struct kdbus_item *it, struct file ***ret, size_t *ret_n)
{
	size_t n = (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int), i;
	const int *fds = (const int *)kdbus_item_str(it);
	struct file **files;
	int r;

	if (n > KDBUS_MSG_MAX_FDS)
		return -EMFILE;
	files = kcalloc(n ? n : 1, sizeof(*files), GFP_KERNEL);
	if (!files)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct socket *sock;

		r = -EBADF;
		files[i] = fget_raw(fds[i]);
		if (!files[i])
			goto err;
		r = -EOPNOTSUPP;
		if (kdbus_file_is_kdbus(files[i]))
			goto err_put;
		sock = (files[i]->f_mode & FMODE_PATH) ? NULL : sock_from_file(files[i]);
		if (sock && sock->sk && sock->sk->sk_family == AF_UNIX)
			goto err_put;
	}
	*ret = files;
	*ret_n = n;
	return 0;
err_put:
	i++;
err:
	while (i-- > 0)
		if (files[i])
			fput(files[i]);
	kfree(files);
	return r;
}

/*
 * A PAYLOAD_MEMFD: a shmem file sealed against writes, growing and
 * shrinking, and against changes of its seals; the range inside it.
 */
static int kdbus_send_get_memfd(const struct kdbus_item *it, struct kdbus_send_memfd *ret)
{
	const unsigned int seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	struct inode *inode;
	struct file *f;

	f = fget(it->memfd.fd);
	if (!f)
		return -EBADF;
	inode = file_inode(f);
	if (inode->i_sb->s_magic != TMPFS_MAGIC || !S_ISREG(inode->i_mode)) {
		fput(f);
		return -EMEDIUMTYPE;
	}
	if ((SHMEM_I(inode)->seals & seals) != seals) {
		fput(f);
		return -ETXTBSY;
	}
	if (it->memfd.start + it->memfd.size > i_size_read(inode)) {
		fput(f);
		return -EFAULT;
	}
	ret->f = f;
	ret->start = it->memfd.start;
	ret->size = it->memfd.size;
	return 0;
}

/*
 * An answer (cookie_reply set, no EXPECT_REPLY): it consumes the tracker
 * @conn keeps for @dst's call, or fails with EBADSLT.  The answer to a
 * synchronous call goes straight into the caller's pool; an answer that
 * cannot be delivered fails the call with EREMOTEIO.
 */
static int kdbus_send_reply(struct kdbus_conn *conn, struct kdbus_conn *dst,
			    struct kdbus_staging *stage)
{
	struct kdbus_reply *reply;
	u64 off = 0, size = 0;
	int r;

	reply = kdbus_reply_find_take(conn, dst->id, stage->msg->cookie_reply);
	if (!reply)
		return -EBADSLT;
	if (reply->sync) {
		stage->ret_offset = &off;
		stage->ret_size = &size;
		r = kdbus_conn_enqueue(dst, stage);
		kdbus_reply_complete(reply, r == 0 ? 0 : r == -ECOMM ? -EREMOTEIO : r, off, size);
	} else {
		r = kdbus_conn_enqueue(dst, stage);
	}
	kdbus_reply_unref(reply);
	return r;
}

/*
 * A synchronous call waits for its outcome: the answer (its slice in
 * @ret_off, @ret_size), ETIMEDOUT at the deadline, EPIPE when the callee
 * goes away or drops the call, ECONNRESET when the caller does, ECANCELED
 * when the cancel fd becomes readable, EINTR on a signal.
 */
static int kdbus_reply_wait(struct kdbus_reply *reply, struct file *cancel, u64 *ret_off, u64 *ret_size)
{
	int r;

	for (;;) {
		u64 now = ktime_get_ns();
		long t, w;

		if (now >= reply->deadline_ns) {
			r = -ETIMEDOUT;
			break;
		}
		t = nsecs_to_jiffies(reply->deadline_ns - now) + 1;
		if (cancel)
			t = min_t(long, t, msecs_to_jiffies(10));	/* the cancel fd is polled */
		w = wait_event_interruptible_timeout(reply->wait, smp_load_acquire(&reply->done), t);
		if (w == -ERESTARTSYS) {
			r = -EINTR;
			break;
		}
		if (smp_load_acquire(&reply->done))
			break;
		if (cancel && (vfs_poll(cancel, NULL) & EPOLLIN)) {
			r = -ECANCELED;
			break;
		}
	}
	if (!smp_load_acquire(&reply->done)) {
		bool mine;

		/* given up: the tracker goes; if somebody else took it first,
		 * the outcome is theirs and comes at once */
		mine = kdbus_reply_take(reply);
		if (mine)
			kdbus_reply_complete(reply, r, 0, 0);
		else
			wait_event(reply->wait, smp_load_acquire(&reply->done));
	}
	*ret_off = reply->offset;
	*ret_size = reply->msg_size;
	return reply->err;
}

int kdbus_cmd_send(struct kdbus_conn *conn, struct file *file, void __user *argp)
{
	const struct kdbus_item *it, *dst_name = NULL, *bloom = NULL;
	struct kdbus_send_vec *vecs = NULL;
	struct kdbus_staging stage = {};
	struct kdbus_match_msg mm = {};
	struct kdbus_conn *dst = NULL;
	struct kdbus_reply *reply = NULL;
	struct file *cancel = NULL, **fds = NULL;
	struct kdbus_send_memfd memfds[KDBUS_MSG_MAX_MEMFD_ITEMS] = {};
	size_t n_fds = 0, n_memfds = 0, i;
	struct kdbus_cmd_send *cmd;
	struct kdbus_msg *msg = NULL;
	size_t items_size, n_vecs = 0, n_items = 0;
	u64 payload = 0;
	int r;

	cmd = kdbus_cmd_copy(argp, sizeof(*cmd), KDBUS_CMD_MAX_SIZE);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	items_size = cmd->size - offsetof(struct kdbus_cmd_send, items);
	if (cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		r = kdbus_negotiate(argp, cmd, offsetof(struct kdbus_cmd_send, items),
				    KDBUS_SEND_SYNC_REPLY, send_items, ARRAY_SIZE(send_items));
		goto out;
	}
	r = -EINVAL;
	if (cmd->flags & ~(u64)KDBUS_SEND_SYNC_REPLY)
		goto out;
	r = kdbus_items_validate(cmd->items, items_size);
	if (r < 0)
		goto out;
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		r = -EINVAL;
		if (it->type != KDBUS_ITEM_CANCEL_FD || it->size != KDBUS_ITEM_HEADER_SIZE + sizeof(int))
			goto out;
		r = -EEXIST;
		if (cancel)
			goto out;
		r = -EBADF;
		cancel = fget(it->fds[0]);
		if (!cancel)
			goto out;
	}
	if (conn->flags & HELLO_ROLES) {
		r = -EOPNOTSUPP;
		goto out;
	}

	msg = kdbus_cmd_copy(u64_to_user_ptr(cmd->msg_address), sizeof(*msg), KDBUS_MSG_MAX_SIZE);
	if (IS_ERR(msg)) {
		r = PTR_ERR(msg);
		msg = NULL;
		goto out;
	}
	items_size = msg->size - offsetof(struct kdbus_msg, items);
	r = -EINVAL;
	if (msg->flags & ~(u64)MSG_FLAGS)
		goto out;
	if (msg->payload_type == KDBUS_PAYLOAD_KERNEL)
		goto out;
	if (msg->src_id != 0 && msg->src_id != conn->id)
		goto out;
	r = kdbus_items_validate(msg->items, items_size);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	vecs = kcalloc(KDBUS_MSG_MAX_ITEMS, sizeof(*vecs), GFP_KERNEL);
	if (!vecs)
		goto out;
	KDBUS_ITEMS_FOREACH(it, msg->items, items_size) {
		size_t len = it->size - KDBUS_ITEM_HEADER_SIZE;

		r = -E2BIG;
		if (++n_items > KDBUS_MSG_MAX_ITEMS)
			goto out;
		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_PAYLOAD_VEC:
			if (len != sizeof(struct kdbus_vec))
				goto out;
			r = -EMSGSIZE;
			payload += it->vec.size;
			if (it->vec.size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE ||
			    payload > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE)
				goto out;
			if (it->vec.size == 0)
				break;
			vecs[n_vecs].size = it->vec.size;
			vecs[n_vecs].address = it->vec.address;
			n_vecs++;
			break;
		case KDBUS_ITEM_DST_NAME:
			if (!kdbus_item_is_string(it))
				goto out;
			r = -EEXIST;
			if (dst_name)
				goto out;
			dst_name = it;
			break;
		case KDBUS_ITEM_BLOOM_FILTER:
			if (len < sizeof(struct kdbus_bloom_filter))
				goto out;
			r = -EEXIST;
			if (bloom)
				goto out;
			bloom = it;
			break;
		case KDBUS_ITEM_FDS:
			r = -EEXIST;
			if (fds)
				goto out;
			r = kdbus_send_get_fds(it, &fds, &n_fds);
			if (r < 0)
				goto out;
			break;
		case KDBUS_ITEM_PAYLOAD_MEMFD:
			if (len != sizeof(struct kdbus_memfd))
				goto out;
			r = -E2BIG;
			if (n_memfds >= KDBUS_MSG_MAX_MEMFD_ITEMS)
				goto out;
			r = -EMSGSIZE;
			payload += it->memfd.size;
			if (it->memfd.start + it->memfd.size < it->memfd.start ||
			    payload > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE)
				goto out;
			r = kdbus_send_get_memfd(it, &memfds[n_memfds]);
			if (r < 0)
				goto out;
			n_memfds++;
			break;
		default:
			goto out;
		}
	}

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		r = -EBADMSG;
		if (!(msg->flags & KDBUS_MSG_SIGNAL) || !bloom || dst_name)
			goto out;
		r = -ENOTUNIQ;
		if ((msg->flags & KDBUS_MSG_EXPECT_REPLY) || n_fds)
			goto out;
		r = -EDOM;
		if (bloom->size - KDBUS_ITEM_HEADER_SIZE - sizeof(struct kdbus_bloom_filter) !=
		    conn->bus->bloom.size)
			goto out;
	}
	r = -EBADMSG;
	if (bloom && !(msg->flags & KDBUS_MSG_SIGNAL))
		goto out;
	r = -EDESTADDRREQ;
	if (msg->dst_id == KDBUS_DST_ID_NAME && !dst_name)
		goto out;
	r = -EINVAL;
	if ((msg->flags & KDBUS_MSG_EXPECT_REPLY) && msg->timeout_ns == 0)
		goto out;
	if ((cmd->flags & KDBUS_SEND_SYNC_REPLY) && !(msg->flags & KDBUS_MSG_EXPECT_REPLY))
		goto out;
	if ((msg->flags & KDBUS_MSG_SIGNAL) && !(msg->flags & KDBUS_MSG_EXPECT_REPLY) &&
	    msg->cookie_reply)
		goto out;
	if (dst_name) {
		r = kdbus_name_is_valid(kdbus_item_str(dst_name), strlen(kdbus_item_str(dst_name)));
		if (r < 0)
			goto out;
	}
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;

	stage.msg = msg;
	stage.src = conn;
	stage.dst_name = dst_name ? kdbus_item_str(dst_name) : NULL;
	stage.vecs = vecs;
	stage.n_vecs = n_vecs;
	stage.fds = fds;
	stage.n_fds = n_fds;
	stage.memfds = memfds;
	stage.n_memfds = n_memfds;
	stage.cred = current_cred();
	stage.pid = task_tgid(current);
	stage.tid = task_pid(current);
	kdbus_staging_stamp(&stage, conn->bus);
	mm.src = conn;
	mm.dst_id = msg->dst_id;
	mm.bloom = bloom ? &bloom->bloom_filter : NULL;

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		/* the sender does not learn who got it or who lost it */
		stage.count_lost = true;
		down_read(&conn->bus->name_lock);
		kdbus_bus_broadcast(conn->bus, &stage, &mm);
		kdbus_bus_eavesdrop(conn->bus, &stage);
		up_read(&conn->bus->name_lock);
		r = 0;
		goto out;
	}

	/* the registry stays still until the message is queued: a name
	 * cannot change hands between the lookup and the delivery */
	down_read(&conn->bus->name_lock);
	if (dst_name) {
		r = -ESRCH;
		dst = kdbus_name_lookup_owner(conn->bus, kdbus_item_str(dst_name), &stage.dst_name_id);
		if (dst && msg->dst_id != KDBUS_DST_ID_NAME && msg->dst_id != dst->id)
			r = -EREMCHG;
		else if (dst && (dst->flags & KDBUS_HELLO_ACTIVATOR) && (msg->flags & KDBUS_MSG_NO_AUTO_START))
			r = -EADDRNOTAVAIL;
		else if (dst)
			r = 0;
	} else {
		r = -ENXIO;
		dst = kdbus_bus_find_conn(conn->bus, msg->dst_id);
		if (dst && !(dst->flags & HELLO_ROLES))
			r = 0;
	}
	if (r < 0) {
		/* nothing to send to */
	} else if (msg->flags & KDBUS_MSG_SIGNAL) {
		/* a unicast signal is dropped silently unless the receiver matches
		 * it and may talk to the sender, as for broadcasts */
		if (kdbus_policy_may_talk(dst->privileged, dst->cred, conn) && kdbus_conn_wants(dst, &mm))
			r = kdbus_conn_enqueue(dst, &stage);
	} else if (!(msg->flags & KDBUS_MSG_EXPECT_REPLY) && msg->cookie_reply) {
		/* an answer to a call needs no policy: the tracker is the permission */
		r = kdbus_send_reply(conn, dst, &stage);
	} else if (!kdbus_policy_may_talk(conn->privileged, current_cred(), dst)) {
		r = -EPERM;
	} else if (msg->flags & KDBUS_MSG_EXPECT_REPLY) {
		if (atomic_inc_return(&conn->n_requests) > KDBUS_CONN_MAX_REQUESTS_PENDING) {
			r = -EMLINK;
		} else {
			reply = kdbus_reply_new(conn, dst, msg->cookie, msg->timeout_ns,
						cmd->flags & KDBUS_SEND_SYNC_REPLY);
			if (IS_ERR(reply)) {
				r = PTR_ERR(reply);
				reply = NULL;
			} else {
				stage.reply = reply;
				r = kdbus_conn_enqueue(dst, &stage);
			}
		}
		if (r < 0)
			atomic_dec(&conn->n_requests);	/* never linked */
	} else {
		r = kdbus_conn_enqueue(dst, &stage);
	}
	if (r == 0)
		kdbus_bus_eavesdrop(conn->bus, &stage);
	up_read(&conn->bus->name_lock);

	if (r == 0 && reply && reply->sync) {
		/* the registry is not held while waiting */
		struct kdbus_cmd_send __user *usend = argp;
		u64 off = 0, size = 0;

		r = kdbus_reply_wait(reply, cancel, &off, &size);
		if (r == 0 && (put_user(off, &usend->reply.offset) ||
			       put_user(size, &usend->reply.msg_size) ||
			       put_user((u64)0, &usend->reply.return_flags)))
			r = -EFAULT;
	}
	if (r == 0 && put_user((u64)0, &((struct kdbus_cmd_send __user *)argp)->return_flags))
		r = -EFAULT;
out:
	for (i = 0; i < n_fds; i++)
		fput(fds[i]);
	kfree(fds);
	for (i = 0; i < n_memfds; i++)
		fput(memfds[i].f);
	if (cancel)
		fput(cancel);
	kdbus_reply_unref(reply);
	kdbus_conn_unref(dst);
	kfree(vecs);
	kfree(msg);
	kfree(cmd);
	return r;
}

/* ---- moving messages (activators) ------------------------------------------ */

/* both connection locks, the lower address first */
static void kdbus_conn_lock2(struct kdbus_conn *a, struct kdbus_conn *b)
{
	if (a > b)
		swap(a, b);
	mutex_lock(&a->lock);
	mutex_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
}

static void kdbus_conn_unlock2(struct kdbus_conn *a, struct kdbus_conn *b)
{
	mutex_unlock(&a->lock);
	mutex_unlock(&b->lock);
}

/*
 * With both locks held: copy @e's message into @to's pool (the pool
 * offsets inside it move along) and queue it there.
 */
static int kdbus_queue_entry_move(struct kdbus_conn *to, struct kdbus_conn *from,
				  struct kdbus_queue_entry *e)
{
	size_t old_off = kdbus_slice_offset(e->slice), size = kdbus_slice_size(e->slice);
	struct kdbus_slice *slice;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	unsigned int i;
	void *buf;
	s64 delta;
	int r;

	if (e->has_fds && !(to->flags & KDBUS_HELLO_ACCEPT_FD))
		return -ECOMM;
	if (to->n_msgs >= KDBUS_CONN_MAX_MSGS)
		return -ENOBUFS;
	buf = kvmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	r = kdbus_pool_read(from->pool, old_off, buf, size);
	if (r < 0)
		goto out;
	slice = kdbus_pool_slice_alloc(to->pool, size, true);
	if (IS_ERR(slice)) {
		r = PTR_ERR(slice);
		goto out;
	}
	delta = (s64)kdbus_slice_offset(slice) - (s64)old_off;
	m = buf;
	KDBUS_ITEMS_FOREACH(it, m->items, m->size - offsetof(struct kdbus_msg, items))
		if (it->type == KDBUS_ITEM_PAYLOAD_OFF && it->vec.offset != ~0ULL)
			it->vec.offset += delta;
	r = kdbus_pool_write(to->pool, kdbus_slice_offset(slice), buf, size);
	if (r < 0) {
		kdbus_pool_slice_release(to->pool, slice);
		goto out;
	}
	for (i = 0; i < e->n_files; i++)
		e->fd_pos[i] += delta;
	kdbus_pool_slice_release(from->pool, e->slice);
	kdbus_slice_set_queued(slice, true);
	e->slice = slice;
	list_add_tail(&e->entry, &to->queue);
	WRITE_ONCE(to->n_msgs, to->n_msgs + 1);
	if (e->reply)
		kdbus_reply_move(e->reply, to);
out:
	kvfree(buf);
	return r;
}

/**
 * kdbus_conn_move_messages() - hand over what was sent to a name
 * @to:		the name's new holder
 * @from:	its old one
 * @name_id:	the name's id
 *
 * With the name lock held for writing, so that nothing is sent to the
 * name meanwhile.  The messages keep their order, after what @to has;
 * their reply trackers move with them.  One that @to cannot take is
 * dropped and counted as lost for @to; a call among them is dead for its
 * caller.
 */
void kdbus_conn_move_messages(struct kdbus_conn *to, struct kdbus_conn *from, u64 name_id)
{
	struct kdbus_queue_entry *e, *tmp;
	LIST_HEAD(failed);
	bool moved = false;

	if (to == from)
		return;
	kdbus_conn_lock2(to, from);
	if (to->connected) {
		list_for_each_entry_safe(e, tmp, &from->queue, entry) {
			if (e->dst_name_id != name_id)
				continue;
			list_del(&e->entry);
			WRITE_ONCE(from->n_msgs, from->n_msgs - 1);
			if (kdbus_queue_entry_move(to, from, e) == 0) {
				moved = true;
				continue;
			}
			to->lost_count++;
			kdbus_pool_slice_release(from->pool, e->slice);
			list_add_tail(&e->entry, &failed);
		}
	}
	kdbus_conn_unlock2(to, from);
	if (moved)
		wake_up_interruptible(&to->wait);
	list_for_each_entry_safe(e, tmp, &failed, entry) {
		list_del(&e->entry);
		if (e->reply && kdbus_reply_take(e->reply))
			kdbus_reply_notify(kdbus_reply_ref(e->reply), false, -EPIPE);
		kdbus_queue_entry_free(e);
	}
}

/* ---- RECV, FREE ------------------------------------------------------------ */

/*
 * With conn->lock held: give the receiver the message's fds and memfds
 * (close-on-exec) and write their numbers into the message.  One that
 * cannot be given (no free fd) shows as -1.
 *
 * Return: 0, or -EMFILE when some could not be installed.
 */
static int kdbus_conn_install_fds(struct kdbus_conn *conn, struct kdbus_queue_entry *e)
{
	unsigned int i;
	int *fds, r = 0;

	fds = kmalloc_array(e->n_files, sizeof(*fds), GFP_KERNEL);
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < e->n_files; i++) {
		fds[i] = get_unused_fd_flags(O_CLOEXEC);
		if (fds[i] < 0)
			r = -EMFILE;
	}
	for (i = 0; i < e->n_files; i++) {
		int v = fds[i] < 0 ? -1 : fds[i];

		if (kdbus_pool_write(conn->pool, e->fd_pos[i], &v, sizeof(v)) < 0) {
			/* the message cannot tell: nothing is installed */
			for (i = 0; i < e->n_files; i++)
				if (fds[i] >= 0)
					put_unused_fd(fds[i]);
			kfree(fds);
			return -EFAULT;
		}
	}
	for (i = 0; i < e->n_files; i++)
		if (fds[i] >= 0)
			fd_install(fds[i], get_file(e->files[i]));
	kfree(fds);
	return r;
}

int kdbus_cmd_recv(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_recv __user *urecv = argp;
	struct kdbus_queue_entry *e = NULL, *pos;
	struct kdbus_reply *dead = NULL;
	struct kdbus_cmd_recv *cmd;
	bool negotiated;
	u64 off = 0, size = 0, dropped = 0, ret_flags = 0;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), sizeof(*cmd), RECV_FLAGS, &negotiated);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);

	/* an activator may look at what waits for the service, and drop it;
	 * a policy holder receives nothing */
	if (((conn->flags & KDBUS_HELLO_ACTIVATOR) && !(cmd->flags & (KDBUS_RECV_PEEK | KDBUS_RECV_DROP))) ||
	    (conn->flags & KDBUS_HELLO_POLICY_HOLDER)) {
		kfree(cmd);
		return -EOPNOTSUPP;
	}
	mutex_lock(&conn->lock);
	if (!conn->connected) {
		r = -ECONNRESET;
		goto out_unlock;
	}
	if (list_empty(&conn->queue)) {
		r = -EAGAIN;
		goto out_unlock;
	}
	if (cmd->flags & KDBUS_RECV_USE_PRIORITY) {
		list_for_each_entry(pos, &conn->queue, entry)
			if (!e || pos->priority < e->priority)
				e = pos;
		if (e->priority > cmd->priority) {
			r = -ENOMSG;
			goto out_unlock;
		}
	} else {
		e = list_first_entry(&conn->queue, struct kdbus_queue_entry, entry);
	}
	off = kdbus_slice_offset(e->slice);
	size = e->msg_size;
	if (cmd->flags & KDBUS_RECV_PEEK) {
		kdbus_slice_set_public(e->slice, true);
		goto out_unlock;
	}
	list_del(&e->entry);
	WRITE_ONCE(conn->n_msgs, conn->n_msgs - 1);
	if (conn->lost_count) {
		dropped = conn->lost_count;
		conn->lost_count = 0;
		ret_flags |= KDBUS_RECV_RETURN_DROPPED_MSGS;
	}
	if (cmd->flags & KDBUS_RECV_DROP) {
		kdbus_pool_slice_release(conn->pool, e->slice);
		off = size = 0;
		/* a dropped call is never answered */
		if (e->reply && kdbus_reply_take(e->reply))
			dead = kdbus_reply_ref(e->reply);
	} else {
		if (e->n_files && kdbus_conn_install_fds(conn, e) < 0)
			ret_flags |= KDBUS_RECV_RETURN_INCOMPLETE_FDS;
		kdbus_slice_set_queued(e->slice, false);
		kdbus_slice_set_public(e->slice, true);
	}
	kdbus_queue_entry_free(e);
out_unlock:
	mutex_unlock(&conn->lock);
	if (dead)
		kdbus_reply_notify(dead, false, -EPIPE);
	if (r == 0 && (put_user(ret_flags, &urecv->return_flags) ||
		       put_user(dropped, &urecv->dropped_msgs) ||
		       put_user(off, &urecv->msg.offset) ||
		       put_user(size, &urecv->msg.msg_size) ||
		       put_user((u64)0, &urecv->msg.return_flags)))
		r = -EFAULT;
	kfree(cmd);
	return r;
}

int kdbus_cmd_free(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_free *cmd;
	struct kdbus_slice *slice;
	bool negotiated;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), sizeof(*cmd), 0, &negotiated);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	mutex_lock(&conn->lock);
	slice = cmd->offset <= SIZE_MAX ? kdbus_pool_slice_find(conn->pool, cmd->offset) : NULL;
	if (!slice) {
		r = -ENXIO;
	} else if (!kdbus_slice_is_public(slice)) {
		r = -EINVAL;
	} else {
		kdbus_slice_set_public(slice, false);
		if (!kdbus_slice_is_queued(slice))
			kdbus_pool_slice_release(conn->pool, slice);
	}
	mutex_unlock(&conn->lock);
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
