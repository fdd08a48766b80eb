// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * message.c - SEND: unicast by id or name, broadcasts, unicast signals,
 * calls and their answers (synchronous ones too), fds and memfds, and the
 * copies for monitors; building a message in a receiver's pool
 */
#include <linux/file.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <net/sock.h>

#include "internal.h"

#define MSG_FLAGS (KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_NO_AUTO_START | KDBUS_MSG_SIGNAL)

static const u64 send_items[] = { KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_CANCEL_FD };

/* ---- SEND ------------------------------------------------------------------ */

/* write @len bytes of kernel memory into @pool and NUL bytes up to the
 * next 8-byte boundary: nothing a slice held before shows through */
static int kdbus_pool_write_padded(struct kdbus_pool *pool, size_t off, const void *data, size_t len)
{
	static const u8 zeros[8];
	int r;

	r = kdbus_pool_write(pool, off, data, len);
	if (r == 0 && KDBUS_ALIGN8(len) != len)
		r = kdbus_pool_write(pool, off + len, zeros, KDBUS_ALIGN8(len) - len);
	return r;
}

/*
 * Build a message in @dst's pool and queue it.  Layout of the slice: the
 * kdbus_msg with its items (DST_NAME, PAYLOAD_OFF per vec with offsets
 * relative to the pool, the notification of a kernel message, metadata),
 * then the data of each vec at 8-byte aligned offsets.  Everything comes
 * from kernel memory: the sender's payload was copied once, before any
 * lock was taken.  The message is charged to its sender's user in @dst's
 * quota until it is received.  A broadcast that cannot be queued counts
 * as lost for @dst (reported at its next RECV).  Called with the name
 * lock held for reading, and the policy lock too when @dst is on a custom
 * endpoint (the OWNED_NAME items it gets are those it may see).
 */
int kdbus_conn_enqueue(struct kdbus_conn *dst, const struct kdbus_staging *s)
{
	const struct kdbus_msg *msg = s->msg;
	struct kdbus_conn *src = s->src;
	struct kdbus_user *user = src ? src->user : NULL;
	struct kdbus_queue_entry *e;
	struct kdbus_slice *slice;
	struct kdbus_msg *m;
	size_t hdr_size, total, data_off, i;
	bool charged = false;
	u64 mask;
	void *p;
	int r;

	if (src)
		mask = kdbus_meta_msg_mask(src, &s->meta, dst);
	else
		mask = READ_ONCE(dst->attach_recv) & KDBUS_ATTACH_TIMESTAMP;
	hdr_size = sizeof(*m) + s->n_vecs * KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec)) +
		   ((mask & KDBUS_ATTACH_TIMESTAMP) ? KDBUS_ITEM_SIZE(sizeof(struct kdbus_timestamp)) : 0);
	if (src)
		hdr_size += kdbus_meta_size(mask, &s->meta, dst);
	if (s->dst_name)
		hdr_size += kdbus_string_item_size(strlen(s->dst_name));
	if (s->notify)
		hdr_size += KDBUS_ALIGN8(s->notify->size);
	hdr_size += s->n_memfds * KDBUS_ITEM_SIZE(sizeof(struct kdbus_memfd));
	if (s->n_fds)
		hdr_size += KDBUS_ITEM_SIZE(s->n_fds * sizeof(int));
	if (src && (mask & KDBUS_ATTACH_NAMES))
		hdr_size += kdbus_names_meta_size(src, dst);
	total = KDBUS_ALIGN8(hdr_size);
	for (i = 0; i < s->n_vecs; i++)
		if (s->vecs[i].data)
			total += KDBUS_ALIGN8(s->vecs[i].size);

	m = kvzalloc(KDBUS_ALIGN8(hdr_size), GFP_KERNEL_ACCOUNT);
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	r = -ENOMEM;
	if (!m || !e)
		goto out;
	if (s->n_fds + s->n_memfds) {
		e->files = kcalloc(s->n_fds + s->n_memfds, sizeof(*e->files) + sizeof(*e->fd_pos),
				   GFP_KERNEL_ACCOUNT);
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
	if (!s->sync_reply) {
		r = kdbus_conn_quota_charge(dst, user, KDBUS_ALIGN8(total), s->n_fds);
		if (r < 0)
			goto out_unlock;
		charged = true;
	}
	slice = kdbus_pool_slice_alloc(dst->pool, total, charged);
	if (IS_ERR(slice)) {
		r = PTR_ERR(slice);
		goto out_unlock;
	}

	*m = *msg;
	m->size = hdr_size;
	m->src_id = src ? src->id : KDBUS_SRC_ID_KERNEL;
	p = m->items;
	if (s->dst_name)
		p = kdbus_item_write(p, KDBUS_ITEM_DST_NAME, s->dst_name, strlen(s->dst_name) + 1);
	data_off = kdbus_slice_offset(slice) + KDBUS_ALIGN8(hdr_size);
	for (i = 0; i < s->n_vecs; i++) {
		struct kdbus_vec v = { .size = s->vecs[i].size, .offset = ~0ULL };

		if (s->vecs[i].data) {
			v.offset = data_off;
			r = kdbus_pool_write_padded(dst->pool, data_off, s->vecs[i].data, s->vecs[i].size);
			if (r < 0)
				goto out_slice;
			data_off += KDBUS_ALIGN8(s->vecs[i].size);
		}
		p = kdbus_item_write(p, KDBUS_ITEM_PAYLOAD_OFF, &v, sizeof(v));
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
		p = kdbus_item_write(p, KDBUS_ITEM_PAYLOAD_MEMFD, &mf, sizeof(mf));
	}
	if (s->n_fds) {
		int *fds = (int *)kdbus_item_payload(p);

		for (i = 0; i < s->n_fds; i++) {
			fds[i] = -1;	/* installed at RECV */
			e->fd_pos[e->n_files] = kdbus_slice_offset(slice) + ((u8 *)p - (u8 *)m) +
						KDBUS_ITEM_HEADER_SIZE + i * sizeof(int);
			e->files[e->n_files++] = get_file(s->fds[i]);
		}
		e->n_fds = s->n_fds;
		p = kdbus_item_init(p, KDBUS_ITEM_FDS, s->n_fds * sizeof(int));
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

		p = kdbus_item_write(p, KDBUS_ITEM_TIMESTAMP, &ts, sizeof(ts));
	}
	if (src) {
		p = kdbus_meta_write(p, mask, &s->meta, dst);
		if (mask & KDBUS_ATTACH_NAMES)
			kdbus_names_meta_write(p, src, dst);
	}
	r = kdbus_pool_write(dst->pool, kdbus_slice_offset(slice), m, KDBUS_ALIGN8(hdr_size));
	if (r < 0)
		goto out_slice;

	if (s->sync_reply) {
		/* the answer to a synchronous call: straight to the caller,
		 * who gets the slice with its kernel reference */
		kdbus_slice_publish(slice);
		if (!kdbus_reply_complete(s->sync_reply, 0, slice, hdr_size, e->n_files ? e : NULL)) {
			kdbus_pool_slice_unpublish(dst->pool, slice);
			kdbus_pool_slice_put(dst->pool, slice);
		} else if (e->n_files) {
			e = NULL;	/* its fds go with the answer, installed by the caller */
		}
		r = 0;
		goto out_unlock;
	}
	kdbus_slice_set_queued(slice);
	kdbus_pool_slice_put(dst->pool, slice);	/* the queue entry owns it */
	e->slice = slice;
	e->msg_size = hdr_size;
	e->charge = KDBUS_ALIGN8(total);
	e->user = kdbus_user_ref(user);
	e->priority = msg->priority;
	e->dst_name_id = s->dst_name_id;
	e->holds_request = s->holds_request;
	list_add_tail(&e->entry, &dst->queue);
	WRITE_ONCE(dst->n_msgs, dst->n_msgs + 1);
	if (s->reply) {
		kdbus_reply_link(s->reply);
		e->reply = kdbus_reply_ref(s->reply);
	}
	e = NULL;
	r = 0;
	goto out_unlock;

out_slice:
	kdbus_pool_slice_put(dst->pool, slice);
out_unlock:
	if (r < 0 && charged)
		kdbus_conn_quota_uncharge(dst, user, KDBUS_ALIGN8(total), s->n_fds);
	if (r < 0 && r != -ECONNRESET && s->count_lost)
		dst->lost_count++;
	mutex_unlock(&dst->lock);
	if (r == 0 && !s->sync_reply)
		wake_up_interruptible(&dst->wait);
out:
	if (e)
		kdbus_queue_entry_free(e);
	kvfree(m);
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
 * counted.  Return: 0 when it was queued. */
int kdbus_conn_enqueue_kernel(struct kdbus_conn *dst, const struct kdbus_item *notify,
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
	return wanted ? kdbus_conn_enqueue(dst, &s) : -ENOMSG;
}

/* with the name lock held for reading: a copy of a message for every
 * monitor; one that does not take fds sees the message without them */
void kdbus_bus_eavesdrop(struct kdbus_bus *bus, const struct kdbus_staging *s)
{
	struct kdbus_staging copy = *s;
	struct kdbus_conn *mon;

	copy.reply = NULL;
	copy.sync_reply = NULL;
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

/* with the name and policy locks held for reading: @s to @dst, if @dst
 * may talk to the sender and its matches want it */
static void kdbus_bus_broadcast_one(struct kdbus_conn *dst, const struct kdbus_staging *s,
				    const struct kdbus_match_msg *mm)
{
	if (dst->flags & KDBUS_HELLO_ROLES)
		return;
	/* the receiver needs TALK access to the sender */
	if (!kdbus_conn_may_talk_locked(dst, s->src))
		return;
	if (kdbus_conn_wants(dst, mm))
		kdbus_conn_enqueue(dst, s);
}

/*
 * With the name lock held for reading: a signal to every connection whose
 * matches want it, the sender first (it sees its own signal before any
 * reaction to it can be queued; monitors have theirs already).
 */
static void kdbus_bus_broadcast(struct kdbus_bus *bus, const struct kdbus_staging *s,
				const struct kdbus_match_msg *mm)
{
	struct kdbus_conn *dst;
	int i;

	/* the documented order: the policy before the connection table */
	down_read(&bus->policy_lock);
	down_read(&bus->conn_lock);
	if (!hlist_unhashed(&s->src->hentry))
		kdbus_bus_broadcast_one(s->src, s, mm);
	hash_for_each(bus->conns, i, dst, hentry)
		if (dst != s->src)
			kdbus_bus_broadcast_one(dst, s, mm);
	up_read(&bus->conn_lock);
	up_read(&bus->policy_lock);
}

/*
 * io_uring's files are anonymous inodes named "[io_uring]" (its fops are
 * not exported): a ring holds references to the files registered in it
 * and to those of its requests in flight.
 */
static bool kdbus_file_is_io_uring(const struct file *f)
{
	return file_inode(f)->i_sb->s_magic == ANON_INODE_FS_MAGIC &&
	       strcmp(f->f_path.dentry->d_name.name, "[io_uring]") == 0;
}

/*
 * What may be passed in KDBUS_ITEM_FDS: anything but a file that can
 * hold references to other files, which could make a reference cycle
 * through a queue (a connection kept alive by a message queued to
 * itself): kdbus handles, AF_UNIX sockets (their own queues carry fds;
 * O_PATH ones are only names) and io_uring instances.  EOPNOTSUPP
 * otherwise, as the final ABI.
 */
static bool kdbus_file_is_passable(struct file *f)
{
	struct socket *sock;

	if (kdbus_file_is_kdbus(f) || kdbus_file_is_io_uring(f))
		return false;
	sock = (f->f_mode & FMODE_PATH) ? NULL : sock_from_file(f);
	return !(sock && sock->sk && sock->sk->sk_family == AF_UNIX);
}

/* the files of a KDBUS_ITEM_FDS; at most KDBUS_CONN_MAX_FDS_PER_USER (EMFILE) */
static int kdbus_send_get_fds(const struct kdbus_item *it, struct file ***ret, size_t *ret_n)
{
	size_t n = (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int), i;
	const int *fds = (const int *)kdbus_item_str(it);
	struct file **files;
	int r;

	if (n > KDBUS_CONN_MAX_FDS_PER_USER)
		return -EMFILE;
	files = kcalloc(n ? n : 1, sizeof(*files), GFP_KERNEL_ACCOUNT);
	if (!files)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r = -EBADF;
		files[i] = fget_raw(fds[i]);
		if (!files[i])
			goto err;
		r = -EOPNOTSUPP;
		if (!kdbus_file_is_passable(files[i]))
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
	int r;

	reply = kdbus_reply_find_take(conn, dst->id, stage->msg->cookie_reply);
	if (!reply)
		return -EBADSLT;
	if (reply->sync) {
		stage->sync_reply = reply;
		r = kdbus_conn_enqueue(dst, stage);
		stage->sync_reply = NULL;
		if (r < 0)
			kdbus_reply_complete(reply, r == -ECOMM ? -EREMOTEIO : r, NULL, 0, NULL);
	} else {
		r = kdbus_conn_enqueue(dst, stage);
	}
	kdbus_reply_unref(reply);
	return r;
}

/*
 * The cancel fd of a synchronous call, waited on as poll(2) waits on a
 * file: an entry on every wait queue its poll registers wakes this task
 * (poll_initwait()).  Sets *@ret_cancelled when it is readable already.
 */
static struct poll_wqueues *kdbus_cancel_wait_new(struct file *cancel, bool *ret_cancelled)
{
	struct poll_wqueues *pwq;

	pwq = kmalloc(sizeof(*pwq), GFP_KERNEL_ACCOUNT);
	if (!pwq) {
		*ret_cancelled = vfs_poll(cancel, NULL) & EPOLLIN;
		return NULL;
	}
	poll_initwait(pwq);
	/* this poll registers the entries, the later ones only look */
	*ret_cancelled = vfs_poll(cancel, &pwq->pt) & EPOLLIN;
	return pwq;
}

static void kdbus_cancel_wait_free(struct poll_wqueues *pwq)
{
	if (pwq) {
		poll_freewait(pwq);
		kfree(pwq);
	}
}

/*
 * A synchronous call waits for its outcome: the answer (its slice, with
 * a kernel reference, in *@ret_slice, and its fds to install in
 * *@ret_files), ETIMEDOUT at the deadline, EPIPE when the callee goes away
 * or drops the call, ECONNRESET when the caller does, ECANCELED when the
 * cancel fd becomes readable.  The cancel fd is waited on as poll(2) waits
 * on a file (poll_initwait(): an entry on every wait queue its poll
 * registers wakes this task); if those entries cannot be allocated, it is
 * polled every 10 ms instead.  A signal parks the call
 * (kdbus_reply_park()) and gives -ERESTARTSYS: SEND is restarted with the
 * same arguments (SA_RESTART) or returns EINTR, and a SEND of the same
 * cookie resumes the wait.
 */
static int kdbus_reply_wait(struct kdbus_reply *reply, struct file *cancel,
			    struct kdbus_slice **ret_slice, u64 *ret_size, struct kdbus_queue_entry **ret_files)
{
	struct poll_wqueues *pwq = NULL;
	bool cancelled = false, waited;
	int r;

	if (cancel)
		pwq = kdbus_cancel_wait_new(cancel, &cancelled);
	/* without every entry (no memory), the cancel fd is polled */
	waited = pwq && pwq->error == 0;
	for (;;) {
		DEFINE_WAIT(wait);
		u64 now = ktime_get_ns();
		long t;

		if (cancelled) {
			r = -ECANCELED;
			break;
		}
		if (now >= reply->deadline_ns) {
			r = -ETIMEDOUT;
			break;
		}
		t = nsecs_to_jiffies(reply->deadline_ns - now) + 1;
		if (cancel && !waited)
			t = min_t(long, t, msecs_to_jiffies(10));
		prepare_to_wait(&reply->wait, &wait, TASK_INTERRUPTIBLE);
		if (!smp_load_acquire(&reply->done) && !(pwq && READ_ONCE(pwq->triggered)) &&
		    !signal_pending(current))
			schedule_timeout(t);
		finish_wait(&reply->wait, &wait);
		if (pwq)
			smp_store_mb(pwq->triggered, 0);	/* a wakeup from now on is seen again */
		if (smp_load_acquire(&reply->done))
			break;
		if (signal_pending(current)) {
			/* a signal: the call stays, the SEND is restarted (or
			 * returns EINTR) and resumes the wait */
			kdbus_cancel_wait_free(pwq);
			kdbus_reply_park(reply);
			return -ERESTARTSYS;
		}
		if (cancel)
			cancelled = vfs_poll(cancel, NULL) & EPOLLIN;
	}
	kdbus_cancel_wait_free(pwq);
	if (!smp_load_acquire(&reply->done)) {
		bool mine;

		/* given up: the tracker goes; if somebody else took it first,
		 * the outcome is theirs and comes at once */
		mine = kdbus_reply_take(reply);
		if (mine)
			kdbus_reply_complete(reply, r, NULL, 0, NULL);
		else
			wait_event(reply->wait, smp_load_acquire(&reply->done));
	}
	*ret_slice = reply->slice;
	reply->slice = NULL;
	*ret_size = reply->msg_size;
	*ret_files = reply->answer_files;
	reply->answer_files = NULL;
	return reply->err;
}

/*
 * The payload of a message's PAYLOAD_VECs, copied from the sender's
 * memory once, with no lock held: every receiver (monitors included) gets
 * these bytes, and the sender's memory is not read again.
 */
static int kdbus_send_stage_payload(struct kdbus_send_vec *vecs, size_t n_vecs, u8 **ret_data)
{
	size_t size = 0, i;
	u8 *data, *p;

	for (i = 0; i < n_vecs; i++)
		if (vecs[i].data)
			size += vecs[i].size;
	*ret_data = NULL;
	if (size == 0)
		return 0;
	data = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!data)
		return -ENOMEM;
	for (i = 0, p = data; i < n_vecs; i++) {
		const void __user *uaddr = (const void __user *)vecs[i].data;

		if (!uaddr)
			continue;
		if (copy_from_user(p, uaddr, vecs[i].size)) {
			kvfree(data);
			return -EFAULT;
		}
		vecs[i].data = p;
		p += vecs[i].size;
	}
	*ret_data = data;
	return 0;
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
	struct kdbus_meta_proc meta = {};
	size_t n_fds = 0, n_memfds = 0, i;
	struct kdbus_cmd_send *cmd;
	struct kdbus_msg *msg = NULL;
	size_t items_size, n_vecs = 0, n_items = 0;
	u8 *payload_data = NULL;
	u64 payload = 0;
	bool is_answer;
	int r;

	cmd = kdbus_args_parse(argp, sizeof(*cmd), offsetof(struct kdbus_cmd_send, items),
			       KDBUS_SEND_SYNC_REPLY, send_items, ARRAY_SIZE(send_items), &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	KDBUS_ITEMS_FOREACH(it, cmd->items, items_size) {
		if (it->type != KDBUS_ITEM_CANCEL_FD)
			continue;	/* NEGOTIATE */
		r = -EINVAL;
		if (cancel)
			goto out;
		r = -EBADF;
		cancel = fget(it->fds[0]);
		if (!cancel)
			goto out;
	}
	if (conn->flags & KDBUS_HELLO_ROLES) {
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
	vecs = kcalloc(KDBUS_MSG_MAX_ITEMS, sizeof(*vecs), GFP_KERNEL_ACCOUNT);
	if (!vecs)
		goto out;
	KDBUS_ITEMS_FOREACH(it, msg->items, items_size) {
		r = -E2BIG;
		if (++n_items > KDBUS_MSG_MAX_ITEMS)
			goto out;
		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_PAYLOAD_VEC:
			r = -EMSGSIZE;
			if (it->vec.size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE ||
			    payload + it->vec.size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE)
				goto out;
			payload += it->vec.size;
			vecs[n_vecs].size = it->vec.size;
			/* a user address until kdbus_send_stage_payload() */
			vecs[n_vecs].data = (const u8 *)u64_to_user_ptr(it->vec.address);
			n_vecs++;
			break;
		case KDBUS_ITEM_DST_NAME:
			r = -EEXIST;
			if (dst_name)
				goto out;
			dst_name = it;
			break;
		case KDBUS_ITEM_BLOOM_FILTER:
			/* of the bus's size, whatever the message (the match
			 * tests read that much of every filter) */
			r = -EEXIST;
			if (bloom)
				goto out;
			r = kdbus_bloom_filter_check(it, conn->bus->bloom.size);
			if (r < 0)
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
			r = -E2BIG;
			if (n_memfds >= KDBUS_MSG_MAX_MEMFD_ITEMS)
				goto out;
			r = -EMSGSIZE;
			if (it->memfd.size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE ||
			    payload + it->memfd.size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE ||
			    it->memfd.start + it->memfd.size < it->memfd.start)
				goto out;
			payload += it->memfd.size;
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
	/* a signal is never answered: no tracker, so no (synchronous) reply */
	r = -ENOTUNIQ;
	if ((msg->flags & KDBUS_MSG_EXPECT_REPLY) && (msg->flags & KDBUS_MSG_SIGNAL))
		goto out;
	r = -EINVAL;
	if ((cmd->flags & KDBUS_SEND_SYNC_REPLY) && !(msg->flags & KDBUS_MSG_EXPECT_REPLY))
		goto out;
	if ((msg->flags & KDBUS_MSG_SIGNAL) && !(msg->flags & KDBUS_MSG_EXPECT_REPLY) &&
	    msg->cookie_reply)
		goto out;
	if (dst_name) {
		r = -EINVAL;
		if (!kdbus_name_is_valid(kdbus_item_str(dst_name), false))
			goto out;
	}
	is_answer = !(msg->flags & KDBUS_MSG_EXPECT_REPLY) && msg->cookie_reply;
	r = -ECONNRESET;
	if (!READ_ONCE(conn->connected))
		goto out;
	if (cmd->flags & KDBUS_SEND_SYNC_REPLY) {
		/* restarted after a signal: the call was sent, wait again */
		reply = kdbus_reply_resume(conn, msg->cookie);
		if (reply) {
			r = 0;
			goto wait;
		}
	}
	/* the last reads of the sender's memory, before any lock: the
	 * payload, and its metadata that some receiver of the bus may get */
	r = kdbus_send_stage_payload(vecs, n_vecs, &payload_data);
	if (r < 0)
		goto out;
	if (!conn->fake)
		kdbus_meta_proc_collect(&meta, kdbus_meta_collect_mask(conn->bus));

	stage.msg = msg;
	stage.src = conn;
	stage.dst_name = dst_name ? kdbus_item_str(dst_name) : NULL;
	stage.vecs = vecs;
	stage.n_vecs = n_vecs;
	stage.fds = fds;
	stage.n_fds = n_fds;
	stage.memfds = memfds;
	stage.n_memfds = n_memfds;
	kdbus_meta_src_send(&stage.meta, conn, &meta);
	kdbus_staging_stamp(&stage, conn->bus);
	mm.src = conn;
	mm.dst_id = msg->dst_id;
	mm.bloom = bloom ? &bloom->bloom_filter : NULL;

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		/* the sender does not learn who got it or who lost it */
		stage.count_lost = true;
		down_read(&conn->bus->name_lock);
		/* monitors first: none sees a reaction before its cause */
		kdbus_bus_eavesdrop(conn->bus, &stage);
		kdbus_bus_broadcast(conn->bus, &stage, &mm);
		up_read(&conn->bus->name_lock);
		r = 0;
		goto out;
	}

	/* the registry and the policy stay still until the message is
	 * queued: a name cannot change hands between the lookup and the
	 * delivery.  What a custom endpoint does not let the sender see does
	 * not exist for it (the answer to a call goes by its tracker). */
	down_read(&conn->bus->name_lock);
	down_read(&conn->bus->policy_lock);
	if (dst_name) {
		r = -ESRCH;
		if (kdbus_conn_may_see_name_locked(conn, kdbus_item_str(dst_name)))
			dst = kdbus_name_lookup_owner(conn->bus, kdbus_item_str(dst_name),
						      &stage.dst_name_id);
		if (dst && msg->dst_id != KDBUS_DST_ID_NAME && msg->dst_id != dst->id)
			r = -EREMCHG;
		else if (dst && (dst->flags & KDBUS_HELLO_ACTIVATOR) && (msg->flags & KDBUS_MSG_NO_AUTO_START))
			r = -EADDRNOTAVAIL;
		else if (dst)
			r = 0;
	} else {
		r = -ENXIO;
		dst = kdbus_bus_find_conn(conn->bus, msg->dst_id);
		if (dst && !(dst->flags & KDBUS_HELLO_ROLES) &&
		    (is_answer || kdbus_conn_may_see_locked(conn, dst)))
			r = 0;
	}
	if (r < 0) {
		/* nothing to send to */
	} else if (msg->flags & KDBUS_MSG_SIGNAL) {
		/* a unicast signal is dropped silently unless the receiver matches
		 * it and may talk to the sender, as for broadcasts */
		if (kdbus_conn_may_talk_locked(dst, conn) && kdbus_conn_wants(dst, &mm))
			r = kdbus_conn_enqueue(dst, &stage);
	} else if (is_answer) {
		/* an answer to a call needs no policy: the tracker is the permission */
		r = kdbus_send_reply(conn, dst, &stage);
	} else if (!kdbus_conn_may_talk_locked(conn, dst)) {
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
	up_read(&conn->bus->policy_lock);
	up_read(&conn->bus->name_lock);

wait:
	if (r == 0 && reply && reply->sync) {
		/* the registry is not held while waiting, nor while telling */
		struct kdbus_cmd_send __user *usend = argp;
		struct kdbus_queue_entry *files = NULL;
		struct kdbus_slice *slice = NULL;
		u64 size = 0, ret_flags = 0;

		r = kdbus_reply_wait(reply, cancel, &slice, &size, &files);
		if (r == 0 && files) {
			/* the answer's fds, in this (the caller's) fd table */
			mutex_lock(&conn->lock);
			if (kdbus_conn_install_fds(conn, files) < 0)
				ret_flags |= KDBUS_RECV_RETURN_INCOMPLETE_FDS;
			mutex_unlock(&conn->lock);
		}
		if (files)
			kdbus_queue_entry_free(files);
		if (r == 0 && (put_user((u64)kdbus_slice_offset(slice), &usend->reply.offset) ||
			       put_user(size, &usend->reply.msg_size) ||
			       put_user(ret_flags, &usend->reply.return_flags)))
			r = -EFAULT;
		if (slice)
			r = kdbus_conn_slice_tell(conn, slice, r);
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
	kdbus_meta_proc_release(&meta);
	kvfree(payload_data);
	kfree(vecs);
	kfree(msg);
	kfree(cmd);
	return r;
}
