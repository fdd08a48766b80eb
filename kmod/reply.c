// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reply.c - reply trackers: a method call with KDBUS_MSG_EXPECT_REPLY
 * leaves a tracker for its callee; the first message back with the call's
 * cookie in cookie_reply consumes it.  An asynchronous caller gets a
 * REPLY_TIMEOUT kernel message when the deadline passes and REPLY_DEAD
 * when the callee goes away or drops the call; a synchronous caller
 * (KDBUS_SEND_SYNC_REPLY) sleeps in SEND until one of these happens.
 *
 * A caller has at most KDBUS_CONN_MAX_REQUESTS_PENDING calls whose
 * outcome it does not know yet (EMLINK): a call's slot (n_requests) is
 * given back with the tracker when it is answered or when a synchronous
 * call ends, but a REPLY_TIMEOUT or REPLY_DEAD takes it over until the
 * caller has received (or dropped) it, or when it could not be queued.
 * (The final kdbus gave it back at the deadline, so that a caller faster
 * than its deadlines could have more: not a bound a slow machine keeps.)
 *
 * The trackers of a bus are in one list under bus->reply_lock (taken
 * after any connection lock).  A tracker holds references on both
 * connections; its callee changes when an activator hands its queue
 * over.  Timeouts of asynchronous calls run on the module's workqueue.
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "internal.h"

struct workqueue_struct *kdbus_wq;

static void kdbus_reply_timeout_work(struct work_struct *work);

struct kdbus_reply *kdbus_reply_new(struct kdbus_conn *src, struct kdbus_conn *dst, u64 cookie,
				    u64 deadline_ns, bool sync)
{
	struct kdbus_reply *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

	if (!r)
		return ERR_PTR(-ENOMEM);
	kref_init(&r->kref);
	INIT_LIST_HEAD(&r->entry);
	r->reply_src = kdbus_conn_ref(src);
	r->reply_dst = kdbus_conn_ref(dst);
	r->cookie = cookie;
	r->deadline_ns = deadline_ns;
	r->sync = sync;
	init_waitqueue_head(&r->wait);
	INIT_DELAYED_WORK(&r->timeout_work, kdbus_reply_timeout_work);
	INIT_LIST_HEAD(&r->parked_link);
	return r;
}

static void __kdbus_reply_free(struct kref *kref)
{
	struct kdbus_reply *r = container_of(kref, struct kdbus_reply, kref);

	WARN_ON(r->linked);
	if (r->answer_files)
		kdbus_queue_entry_free(r->answer_files);	/* never installed */
	kdbus_conn_unref(r->reply_src);
	kdbus_conn_unref(r->reply_dst);
	kfree(r);
}

struct kdbus_reply *kdbus_reply_ref(struct kdbus_reply *r)
{
	if (r)
		kref_get(&r->kref);
	return r;
}

struct kdbus_reply *kdbus_reply_unref(struct kdbus_reply *r)
{
	if (r)
		kref_put(&r->kref, __kdbus_reply_free);
	return NULL;
}

/* the call is queued: the tracker starts */
void kdbus_reply_link(struct kdbus_reply *r)
{
	struct kdbus_bus *bus = r->reply_dst->bus;
	u64 now = ktime_get_ns();

	mutex_lock(&bus->reply_lock);
	list_add_tail(&r->entry, &bus->replies);
	r->linked = true;
	if (!r->sync) {
		kdbus_reply_ref(r);	/* the timeout's */
		queue_delayed_work(kdbus_wq, &r->timeout_work,
				   r->deadline_ns > now ? nsecs_to_jiffies(r->deadline_ns - now) + 1 : 0);
	}
	mutex_unlock(&bus->reply_lock);
}

/* with bus->reply_lock held: the tracker is done */
static void kdbus_reply_unlink(struct kdbus_reply *r)
{
	list_del_init(&r->entry);
	r->linked = false;
	atomic_dec(&r->reply_src->n_requests);
	if (!r->sync && cancel_delayed_work(&r->timeout_work))
		kdbus_reply_unref(r);	/* the timeout's */
}

/**
 * kdbus_reply_take() - end the tracker, if nobody else did
 * @r:		the tracker
 *
 * Return: whether this call ended it (and must tell its caller).
 */
bool kdbus_reply_take(struct kdbus_reply *r)
{
	struct kdbus_bus *bus = r->reply_src->bus;
	bool mine;

	mutex_lock(&bus->reply_lock);
	mine = r->linked;
	if (mine)
		kdbus_reply_unlink(r);
	mutex_unlock(&bus->reply_lock);
	return mine;
}

/* the tracker @dst keeps for the call @cookie of @src_id, ended, with a
 * reference; NULL if there is none */
struct kdbus_reply *kdbus_reply_find_take(struct kdbus_conn *dst, u64 src_id, u64 cookie)
{
	struct kdbus_bus *bus = dst->bus;
	struct kdbus_reply *r, *found = NULL;

	mutex_lock(&bus->reply_lock);
	list_for_each_entry(r, &bus->replies, entry)
		if (r->reply_dst == dst && r->cookie == cookie && r->reply_src->id == src_id) {
			found = kdbus_reply_ref(r);
			kdbus_reply_unlink(r);
			break;
		}
	mutex_unlock(&bus->reply_lock);
	return found;
}

/* an activator hands a queued call over: the new owner owes the answer */
void kdbus_reply_move(struct kdbus_reply *r, struct kdbus_conn *to)
{
	struct kdbus_bus *bus = to->bus;
	struct kdbus_conn *old;

	mutex_lock(&bus->reply_lock);
	old = r->reply_dst;
	r->reply_dst = kdbus_conn_ref(to);
	mutex_unlock(&bus->reply_lock);
	kdbus_conn_unref(old);
}

/**
 * kdbus_reply_complete() - a synchronous caller learns the outcome
 * @r:		the tracker
 * @err:	0, or why the call failed
 * @slice:	the answer in the caller's pool, with a kernel reference the
 *		caller takes over (or NULL)
 * @msg_size:	its size
 * @files:	the fds and memfds of the answer, to install in the caller's
 *		context (kdbus_conn_install_fds()), or NULL
 *
 * Return: whether this was the outcome; if another came first, @slice
 * and @files stay the caller's of this function.
 */
bool kdbus_reply_complete(struct kdbus_reply *r, int err, struct kdbus_slice *slice, u64 msg_size,
			  struct kdbus_queue_entry *files)
{
	bool first;

	spin_lock(&r->wait.lock);
	first = !r->done;
	if (first) {
		r->err = err;
		r->slice = slice;
		r->answer_files = files;
		r->msg_size = msg_size;
		smp_store_release(&r->done, true);
		wake_up_locked(&r->wait);
	}
	spin_unlock(&r->wait.lock);
	return first;
}

/*
 * An ended tracker whose call will never be answered: REPLY_DEAD for an
 * asynchronous caller (or REPLY_TIMEOUT with @timeout), @sync_err for a
 * synchronous one.  The notification holds the call's slot until it is
 * received: a timed-out call still has it (kdbus_reply_timeout_work()),
 * a dead one takes it again.  Drops a reference.
 */
void kdbus_reply_notify(struct kdbus_reply *r, bool timeout, int sync_err)
{
	u64 item[KDBUS_ITEM_HEADER_SIZE / 8] = {};
	struct kdbus_item *n = (struct kdbus_item *)item;
	struct kdbus_staging stamp = {};
	struct kdbus_conn *src = r->reply_src;

	if (r->sync) {
		kdbus_reply_complete(r, sync_err, NULL, 0, NULL);
		if (timeout)
			atomic_dec(&src->n_requests);
	} else {
		kdbus_item_init(n, timeout ? KDBUS_ITEM_REPLY_TIMEOUT : KDBUS_ITEM_REPLY_DEAD, 0);
		kdbus_staging_stamp(&stamp, src->bus);
		stamp.holds_request = true;
		if (!timeout)
			atomic_inc(&src->n_requests);
		if (kdbus_conn_enqueue_kernel(src, n, src->id, r->cookie, &stamp) < 0)
			atomic_dec(&src->n_requests);
	}
	kdbus_reply_unref(r);
}

/*
 * With the caller's lock held: a parked tracker leaves its caller's list
 * (the list's reference is the caller's of this function now); an answer
 * that came while it was parked and that nobody collected goes back to
 * the pool.
 */
static void kdbus_reply_unpark_locked(struct kdbus_reply *r)
{
	struct kdbus_conn *src = r->reply_src;

	list_del_init(&r->parked_link);
	r->parked = false;
	if (r->slice) {
		kdbus_pool_slice_unpublish(src->pool, r->slice);
		kdbus_pool_slice_put(src->pool, r->slice);
		r->slice = NULL;
	}
}

static void kdbus_reply_timeout_work(struct work_struct *work)
{
	struct kdbus_reply *r = container_of(to_delayed_work(work), struct kdbus_reply, timeout_work);
	struct kdbus_conn *src = r->reply_src;
	struct kdbus_bus *bus = src->bus;
	bool fire, parked = false;

	mutex_lock(&bus->reply_lock);
	fire = r->linked;
	if (fire) {
		/* the call's slot stays: the REPLY_TIMEOUT takes it over */
		list_del_init(&r->entry);
		r->linked = false;
	}
	mutex_unlock(&bus->reply_lock);
	if (r->sync) {
		/* a parked synchronous call whose caller never came back */
		if (fire) {
			atomic_dec(&src->n_requests);
			kdbus_reply_complete(r, -ETIMEDOUT, NULL, 0, NULL);
		}
		mutex_lock(&src->lock);
		if (r->parked) {
			kdbus_reply_unpark_locked(r);
			parked = true;
		}
		mutex_unlock(&src->lock);
		if (parked)
			kdbus_reply_unref(r);	/* the list's */
	} else if (fire) {
		kdbus_reply_notify(kdbus_reply_ref(r), true, -ETIMEDOUT);
	}
	kdbus_reply_unref(r);	/* the timeout's */
}

/**
 * kdbus_reply_park() - a synchronous wait interrupted by a signal
 * @r:		its tracker (still linked, or already answered)
 *
 * The tracker waits on its caller's list until the SEND is restarted
 * (kdbus_reply_resume(), for the same cookie: the call is not sent
 * again) or its deadline passes (then it goes silently).  Takes a
 * reference for the list.
 */
void kdbus_reply_park(struct kdbus_reply *r)
{
	struct kdbus_conn *src = r->reply_src;
	u64 now = ktime_get_ns();

	mutex_lock(&src->lock);
	r->parked = true;
	list_add_tail(&r->parked_link, &src->parked_replies);
	kdbus_reply_ref(r);	/* the list's */
	if (queue_delayed_work(kdbus_wq, &r->timeout_work,
			       r->deadline_ns > now ? nsecs_to_jiffies(r->deadline_ns - now) + 1 : 0))
		kdbus_reply_ref(r);	/* the timeout's */
	mutex_unlock(&src->lock);
}

/* the parked synchronous call of @src with @cookie, with a reference, or NULL */
struct kdbus_reply *kdbus_reply_resume(struct kdbus_conn *src, u64 cookie)
{
	struct kdbus_reply *r, *found = NULL;

	mutex_lock(&src->lock);
	list_for_each_entry(r, &src->parked_replies, parked_link)
		if (r->cookie == cookie) {
			found = r;
			list_del_init(&r->parked_link);
			r->parked = false;
			break;
		}
	mutex_unlock(&src->lock);
	if (found && cancel_delayed_work(&found->timeout_work))
		kdbus_reply_unref(found);	/* the timeout's */
	return found;	/* with the list's reference */
}

/*
 * @conn goes away: the calls it owes are dead (REPLY_DEAD, or EPIPE for
 * synchronous callers), and the calls it made are forgotten (ECONNRESET
 * for its own synchronous waits).  Called without connection locks.
 */
void kdbus_reply_conn_gone(struct kdbus_conn *conn)
{
	struct kdbus_bus *bus = conn->bus;
	struct kdbus_reply *r, *tmp;
	LIST_HEAD(dead);
	LIST_HEAD(mine);

	mutex_lock(&bus->reply_lock);
	list_for_each_entry_safe(r, tmp, &bus->replies, entry) {
		if (r->reply_dst != conn && r->reply_src != conn)
			continue;
		kdbus_reply_ref(r);
		kdbus_reply_unlink(r);
		/* the calls it owes die newest first: those still queued,
		 * then those it had received (the ABI leaves the order
		 * open; a caller with several calls then gets its NoReply
		 * errors in dbus-daemon's order) */
		if (r->reply_src == conn)
			list_add_tail(&r->entry, &mine);
		else
			list_add(&r->entry, &dead);
	}
	mutex_unlock(&bus->reply_lock);

	list_for_each_entry_safe(r, tmp, &dead, entry) {
		list_del_init(&r->entry);
		kdbus_reply_notify(r, false, -EPIPE);
	}
	list_for_each_entry_safe(r, tmp, &mine, entry) {
		list_del_init(&r->entry);
		kdbus_reply_complete(r, -ECONNRESET, NULL, 0, NULL);
		kdbus_reply_unref(r);
	}

	/* its parked synchronous calls will never be resumed */
	for (;;) {
		mutex_lock(&conn->lock);
		r = list_first_entry_or_null(&conn->parked_replies, struct kdbus_reply, parked_link);
		if (r)
			kdbus_reply_unpark_locked(r);
		mutex_unlock(&conn->lock);
		if (!r)
			break;
		if (cancel_delayed_work(&r->timeout_work))
			kdbus_reply_unref(r);	/* the timeout's */
		kdbus_reply_unref(r);	/* the list's */
	}
}

int kdbus_reply_init(void)
{
	kdbus_wq = alloc_workqueue("kdbus", WQ_UNBOUND, 0);
	return kdbus_wq ? 0 : -ENOMEM;
}

void kdbus_reply_exit(void)
{
	destroy_workqueue(kdbus_wq);
}
