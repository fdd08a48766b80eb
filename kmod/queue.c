// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * queue.c - a connection's queue: RECV (PEEK, DROP, USE_PRIORITY, fds
 * installed), FREE, and the move of what was sent to a name from one
 * holder to another (activators)
 */
#include <linux/file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "internal.h"

#define RECV_FLAGS (KDBUS_RECV_PEEK | KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY)

void kdbus_queue_entry_free(struct kdbus_queue_entry *e)
{
	unsigned int i;

	for (i = 0; i < e->n_files; i++)
		fput(e->files[i]);
	kfree(e->files);
	kdbus_reply_unref(e->reply);
	kdbus_user_unref(e->user);
	kfree(e);
}

/*
 * With conn->lock held: @e leaves @conn's queue (already unlinked): its
 * charge goes back to its sender's quota, the slice loses its queue
 * owner (it stays while userspace or a command holds it), and the outcome
 * of a call (REPLY_TIMEOUT, REPLY_DEAD) gives the call's slot back.
 */
static void kdbus_queue_entry_unqueue(struct kdbus_conn *conn, struct kdbus_queue_entry *e)
{
	if (e->holds_request)
		atomic_dec(&conn->n_requests);
	e->holds_request = false;
	kdbus_conn_quota_uncharge(conn, e->user, e->charge, e->n_fds);
	kdbus_pool_slice_dequeue(conn->pool, e->slice);
	e->slice = NULL;
}

/*
 * With conn->lock held: drop every queued message; the entries go to
 * @gone, to be freed with kdbus_queue_entries_free() once the lock is
 * dropped (a call's tracker may hold the last reference of a connection,
 * whose end takes the bus's locks).
 */
void kdbus_conn_flush_queue(struct kdbus_conn *conn, struct list_head *gone)
{
	struct kdbus_queue_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &conn->queue, entry) {
		list_del(&e->entry);
		kdbus_queue_entry_unqueue(conn, e);
		list_add_tail(&e->entry, gone);
	}
	conn->n_msgs = 0;
}

/* with no lock held: free what kdbus_conn_flush_queue() took */
void kdbus_queue_entries_free(struct list_head *gone)
{
	struct kdbus_queue_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, gone, entry) {
		list_del(&e->entry);
		kdbus_queue_entry_free(e);
	}
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
 * offsets inside it move along) and queue it there, charged to its
 * sender in @to's quota.  On failure @e is untouched.
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

	if (e->n_fds && !(to->flags & KDBUS_HELLO_ACCEPT_FD))
		return -ECOMM;
	buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	r = kdbus_pool_read(from->pool, old_off, buf, size);
	if (r < 0)
		goto out;
	r = kdbus_conn_quota_charge(to, e->user, size, e->n_fds);
	if (r < 0)
		goto out;
	slice = kdbus_pool_slice_alloc(to->pool, size, true);
	if (IS_ERR(slice)) {
		kdbus_conn_quota_uncharge(to, e->user, size, e->n_fds);
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
		kdbus_pool_slice_put(to->pool, slice);
		kdbus_conn_quota_uncharge(to, e->user, size, e->n_fds);
		goto out;
	}
	for (i = 0; i < e->n_files; i++)
		e->fd_pos[i] += delta;
	kdbus_queue_entry_unqueue(from, e);
	kdbus_slice_set_queued(slice);
	kdbus_pool_slice_put(to->pool, slice);
	e->slice = slice;
	e->charge = size;
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
			kdbus_queue_entry_unqueue(from, e);
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
int kdbus_conn_install_fds(struct kdbus_conn *conn, struct kdbus_queue_entry *e)
{
	unsigned int i;
	int *fds, r = 0;

	fds = kmalloc_array(e->n_files, sizeof(*fds), GFP_KERNEL_ACCOUNT);
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
	struct kdbus_queue_entry *gone = NULL;
	struct kdbus_slice *slice = NULL;
	struct kdbus_cmd_recv *cmd;
	u64 off = 0, size = 0, dropped = 0, ret_flags = 0;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), sizeof(*cmd), RECV_FLAGS);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);

	/* an activator may look at what waits for the service, drop it or
	 * receive it; a policy holder receives nothing */
	if (conn->flags & KDBUS_HELLO_POLICY_HOLDER) {
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
			r = -EAGAIN;	/* nothing at that priority (yet) */
			goto out_unlock;
		}
	} else {
		e = list_first_entry(&conn->queue, struct kdbus_queue_entry, entry);
	}
	off = kdbus_slice_offset(e->slice);
	size = e->msg_size;
	if (cmd->flags & KDBUS_RECV_PEEK) {
		/* still queued: the queue keeps it, userspace may look */
		kdbus_slice_publish(e->slice);
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
		off = size = 0;
		/* a dropped call is never answered */
		if (e->reply && kdbus_reply_take(e->reply))
			dead = kdbus_reply_ref(e->reply);
	} else {
		if (e->n_files && kdbus_conn_install_fds(conn, e) < 0)
			ret_flags |= KDBUS_RECV_RETURN_INCOMPLETE_FDS;
		/* userspace's now, and the command's until it told userspace */
		slice = e->slice;
		kdbus_pool_slice_get(slice);
		kdbus_pool_slice_unaccount(conn->pool, slice);
		kdbus_slice_publish(slice);
	}
	kdbus_queue_entry_unqueue(conn, e);
	gone = e;
out_unlock:
	mutex_unlock(&conn->lock);
	/* with no lock held: its tracker may hold the last reference of a
	 * connection, whose end takes the bus's locks */
	if (gone)
		kdbus_queue_entry_free(gone);
	if (dead)
		kdbus_reply_notify(dead, false, -EPIPE);
	if (r == 0 && (put_user(ret_flags, &urecv->return_flags) ||
		       put_user(dropped, &urecv->dropped_msgs) ||
		       put_user(off, &urecv->msg.offset) ||
		       put_user(size, &urecv->msg.msg_size) ||
		       put_user((u64)0, &urecv->msg.return_flags)))
		r = -EFAULT;
	if (slice)
		r = kdbus_conn_slice_tell(conn, slice, r);
	kfree(cmd);
	return r;
}

int kdbus_cmd_free(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_free *cmd;
	struct kdbus_slice *slice;
	int r = 0;

	cmd = kdbus_cmd_simple(argp, sizeof(*cmd), sizeof(*cmd), 0);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	mutex_lock(&conn->lock);
	/* userspace names a slice by its offset: only one it owns */
	slice = kdbus_pool_slice_find(conn->pool, cmd->offset);
	if (!slice)
		r = -ENXIO;
	else if (!kdbus_slice_is_public(slice))
		r = -EINVAL;
	else
		kdbus_pool_slice_unpublish(conn->pool, slice);
	mutex_unlock(&conn->lock);
	kfree(cmd);
	return r;
}
