/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * connection.c - userspace connections: HELLO, BYEBYE, UPDATE, RECV, FREE,
 * CONN_INFO, LIST, names and matches of a connection (see connection.h)
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/item.h"
#include "kdbus/match.h"
#include "kdbus/names.h"
#include "kdbus/notify.h"
#include "kdbus/policy.h"
#include "kdbus/queue.h"
#include "kdbus/reply.h"
#include "kdbus/user.h"
#include "util/macro.h"

KdbusConn *kdbus_conn_ref(KdbusConn *conn) {
	__atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
	return conn;
}

static void kdbus_conn_free(KdbusConn *conn) {
	KdbusBus *bus = conn->bus;

	kdbus_meta_deinit(&conn->meta);
	kdbus_hash_deinit(&conn->pool.slices);
	kdbus_conn_quota_flush(conn);
	free(conn);
	kdbus_bus_unref(bus);
}

KdbusConn *kdbus_conn_unref(KdbusConn *conn) {
	if (conn && __atomic_sub_fetch(&conn->refs, 1, __ATOMIC_ACQ_REL) == 0)
		kdbus_conn_free(conn);
	return NULL;
}

void kdbus_conn_update_match_links(KdbusConn *conn) {
	KdbusBus *bus = conn->bus;
	bool k = conn->connected && conn->match_db.n_kernel > 0;

	/* the user's count follows the connection's (shrinking never fails) */
	if (conn->match_db.n_matches <= conn->self_charge.amount[KDBUS_USER_MATCHES])
		(void)kdbus_user_charge_set(bus, conn->user, &conn->self_charge, KDBUS_USER_MATCHES,
					    conn->match_db.n_matches);

	if (k && !list_is_linked(&conn->kmatch_link))
		list_link_tail(&bus->conns_kmatch, &conn->kmatch_link);
	else if (!k)
		list_unlink(&conn->kmatch_link);
}

void kdbus_conn_enqueue(KdbusConn *conn, KdbusQueueEntry *e) {
	if (kdbus_queue_link(&conn->queue, e))
		kdbus_bus_wake(conn->bus, conn);
}

/* a request will never be answered by its callee */
static void kdbus_reply_dead(KdbusBus *bus, KdbusReply *r) {
	if (r->sync) {
		kdbus_reply_sync_done(r, -EPIPE);
		pthread_cond_broadcast(&bus->sync_cond);
		return;
	}
	kdbus_notify_reply(bus, KDBUS_ITEM_REPLY_DEAD, r->requester_id, r->cookie);
	kdbus_reply_free(bus, r);
}

/*
 * take @e off its queue for good: close its fds, let its requester know;
 * a slice the user still holds (PEEK) stays until FREE
 */
static void kdbus_conn_entry_drop(KdbusConn *conn, KdbusQueueEntry *e, bool dead) {
	KdbusBus *bus = conn->bus;

	if (list_is_linked(&e->link))
		kdbus_queue_unlink(&conn->queue, e);
	if (e->reply) {
		KdbusReply *r = e->reply;

		e->reply = NULL;
		r->entry = NULL;
		if (dead)
			kdbus_reply_dead(bus, r);
	}
	if (e->slice.user_ref) {
		for (uint32_t i = 0; i < e->n_fds; i++)
			safe_close(e->fds[i]);
		e->n_fds = 0;
		return;
	}
	kdbus_queue_entry_free(bus, e);
}

/* charge a moved entry to its new receiver: pool, the per-connection
 * share and the receiver's user (for its sender's); all or nothing */
static int kdbus_conn_entry_charge(KdbusConn *dst, KdbusQueueEntry *e) {
	int r;

	r = kdbus_pool_charge_msg(&dst->pool, e->charge);
	if (r < 0 || !e->has_actor)
		return r;
	r = kdbus_conn_quota_charge(dst, e->actor, e->charge);
	if (r < 0)
		goto fail_pool;
	r = kdbus_user_charge_msg(dst->bus, dst->user, e->actor, &e->ucharge, e->charge, e->n_fds);
	if (r < 0)
		goto fail_quota;
	e->ucharge_fds = e->n_fds;
	return 0;

fail_quota:
	kdbus_conn_quota_uncharge(dst, e->actor, e->charge);
fail_pool:
	kdbus_pool_uncharge(&dst->pool, e->charge);
	return r;
}

void kdbus_conn_move_messages(KdbusConn *dst, KdbusConn *src, uint64_t name_id) {
	KdbusBus *bus = dst->bus;
	KdbusQueueEntry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &src->queue.msgs, link) {
		if (name_id && e->dst_name_id != name_id)
			continue;

		kdbus_queue_unlink(&src->queue, e);
		/* the slice moves to another pool: what src PEEKed is gone */
		kdbus_pool_unpublish(&src->pool, &e->slice);
		kdbus_pool_uncharge(&src->pool, e->charge);
		kdbus_user_uncharge_msg(bus, &e->ucharge, e->charge, e->ucharge_fds);
		if (e->has_actor)
			kdbus_conn_quota_uncharge(src, e->actor, e->charge);
		e->conn = NULL;

		if ((e->n_fds && !(dst->flags & KDBUS_HELLO_ACCEPT_FD)) ||
		    !dst->connected ||
		    dst->queue.n_msgs >= bus->limits.max_msgs_per_conn ||
		    kdbus_conn_entry_charge(dst, e) < 0) {
			dst->lost_count++;
			if (e->reply) {
				KdbusReply *r = e->reply;

				e->reply = NULL;
				r->entry = NULL;
				kdbus_reply_dead(bus, r);
			}
			kdbus_queue_entry_free(bus, e);
			continue;
		}
		e->conn = dst;
		e->msg->flags |= KDBUS_MSG_HANDED_OVER;
		if (e->reply)
			kdbus_reply_set_callee(e->reply, dst);
		kdbus_conn_enqueue(dst, e);
	}
}

bool kdbus_conn_policy_talk(KdbusConn *conn, KdbusConn *to) {
	KdbusBus *bus = conn->bus;
	KdbusNameOwner *o;
	bool covered = false, ok = false;

	if (conn->owner)
		return true;
	if (conn->meta.creds.euid == to->meta.creds.euid)
		return true;
	if (kdbus_policy_db_empty(&bus->policy))
		return bus->policy_fallback >= KDBUS_POLICY_TALK;

	/* names, policy and fallback unchanged since the last answer for @to? */
	if (conn->talk_cache_peer == to->id && conn->talk_cache_gen == bus->talk_gen)
		return conn->talk_cache_ok;

	list_for_each_entry(o, &to->names, conn_link) {
		int a;

		if (o->flags & KDBUS_NAME_IN_QUEUE)
			continue;
		a = kdbus_policy_query(&bus->policy, &conn->meta, o->entry->name);
		if (a >= KDBUS_POLICY_TALK) {
			ok = true;
			break;
		}
		if (a != -ENOENT)
			covered = true;
	}
	/* userspace extension: the fallback for destinations no entry covers */
	if (!ok)
		ok = !covered && bus->policy_fallback >= KDBUS_POLICY_TALK;

	conn->talk_cache_peer = to->id;
	conn->talk_cache_gen = bus->talk_gen;
	conn->talk_cache_ok = ok;
	return ok;
}

bool kdbus_conn_policy_own(KdbusConn *conn, const char *name) {
	int a;

	if (conn->owner)
		return true;
	a = kdbus_policy_query(&conn->bus->policy, &conn->meta, name);
	if (a == -ENOENT)
		return conn->bus->policy_fallback >= KDBUS_POLICY_OWN;
	return a >= KDBUS_POLICY_OWN;
}

void kdbus_conn_disconnect(KdbusConn *conn) {
	KdbusBus *bus = conn->bus;

	if (!conn->connected)
		return;
	/* a deferred handover that did not finish: the messages stay with
	 * the activator */
	conn->defer_handover = false;
	if (conn->handover_from)
		conn->handover_from = kdbus_conn_unref(conn->handover_from);
	conn->connected = false;

	kdbus_hash_remove(&bus->conns_by_id, &conn->id_node);
	list_unlink(&conn->bus_link);
	list_unlink(&conn->monitor_link);
	list_unlink(&conn->kmatch_link);

	/* names first: what was addressed to them goes back to activators */
	if (conn->id_first) {
		if (!kdbus_conn_is_monitor(conn))
			kdbus_notify_id_change(bus, KDBUS_ITEM_ID_REMOVE, conn->id, conn->flags);
		kdbus_name_release_all(bus, conn, true);
	} else {
		kdbus_name_release_all(bus, conn, false);
		if (!kdbus_conn_is_monitor(conn))
			kdbus_notify_id_change(bus, KDBUS_ITEM_ID_REMOVE, conn->id, conn->flags);
	}

	/* the calls we owe an answer to die newest first, those still
	 * queued before those received (dbus-daemon expires its pending
	 * replies in that order, and its NoReply errors reach a caller with
	 * several calls in that order) */
	while (!list_is_empty(&conn->queue.msgs))
		kdbus_conn_entry_drop(conn, list_last_entry(&conn->queue.msgs, KdbusQueueEntry, link), true);
	while (!list_is_empty(&conn->replies_in))
		kdbus_reply_dead(bus, list_last_entry(&conn->replies_in, KdbusReply, callee_link));

	/* calls we wait for */
	while (!list_is_empty(&conn->replies_out)) {
		KdbusReply *r = list_first_entry(&conn->replies_out, KdbusReply, requester_link);

		if (r->sync) {
			list_unlink(&r->requester_link);
			conn->n_replies_out--;
			(void)kdbus_user_charge_set(bus, conn->user, &conn->self_charge, KDBUS_USER_REPLIES,
						    conn->n_replies_out);
			r->requester = NULL;
			/* our own connection went away: even a reply that
			 * arrived is dropped (the waiter frees it) */
			kdbus_reply_sync_done(r, -ECONNRESET);
		} else {
			kdbus_reply_free(bus, r);
		}
	}
	pthread_cond_broadcast(&bus->sync_cond);

	kdbus_match_db_flush(bus, conn);
	if (!list_is_empty(&conn->policy_entries)) {
		kdbus_policy_remove_owner(&bus->policy, &conn->policy_entries);
		bus->talk_gen++;
	}
	kdbus_user_uncharge(bus, &conn->self_charge);
	kdbus_user_release(bus, conn->user);
	conn->user = NULL;
	/* what we sent and is still queued stays charged, to nobody */
	kdbus_inflight_detach(conn->inflight);
	conn->inflight = NULL;
}

/* ---- HELLO ---- */

static int kdbus_hello_items(KdbusConn *conn, struct kdbus_cmd_hello *cmd) {
	KdbusBus *bus = conn->bus;
	const uint8_t *start = (const uint8_t *)cmd->items;
	size_t size = cmd->size - offsetof(struct kdbus_cmd_hello, items), pos, total;
	struct kdbus_bloom_parameter bp = bus->bloom;
	bool echo = kdbus_conn_is_activator(conn) || kdbus_conn_is_policy_holder(conn);
	KdbusSlice *s;
	uint8_t *p;
	int r;

	total = KDBUS_ITEM_SIZE(sizeof(bp));
	for (pos = 0; echo && pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *it = (const void *)(start + pos);

		if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			total += KDBUS_ALIGN8(it->size);
	}
	r = kdbus_pool_data_new(&conn->pool, total, &s);
	if (r < 0)
		return r;
	p = kdbus_slice_data(s);
	p = kdbus_item_write(p, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	for (pos = 0; echo && pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *it = (const void *)(start + pos);

		if (it->type == KDBUS_ITEM_NAME || it->type == KDBUS_ITEM_POLICY_ACCESS)
			p = kdbus_item_write(p, it->type, it->data, KDBUS_ITEM_PAYLOAD_SIZE(it));
	}
	r = kdbus_pool_data_publish(&conn->pool, s);
	if (r < 0)
		return r;
	cmd->offset = s->offset;
	cmd->items_size = total;
	return 0;
}

int kdbus_us_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
		{ .type = KDBUS_ITEM_POLICY_ACCESS, .multiple = true },
		{ .type = KDBUS_ITEM_CONN_DESCRIPTION },
		{ .type = KDBUS_ITEM_CREDS },
		{ .type = KDBUS_ITEM_PIDS },
		{ .type = KDBUS_ITEM_AUXGROUPS },
		{ .type = KDBUS_ITEM_SECLABEL },
		{ .type = KDBUS_ITEM_PID_COMM },
	};
	const uint8_t *start;
	size_t items_size, n_names = 0;
	uint64_t send, recv, roles, page = (uint64_t)sysconf(_SC_PAGESIZE);
	const char *name = NULL;
	KdbusConn *conn = NULL;
	uint64_t f;
	int r;

	*ret = NULL;
	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_hello, items),
			     KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_ACTIVATOR |
			     KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR | KDBUS_HELLO_HIDDEN_ID,
			     argv, ELEMENTSOF(argv));
	if (r > 0)
		cmd->flags &= ~KDBUS_HELLO_HIDDEN_ID;	/* not part of the ABI */
	if (r != 0)
		return r < 0 ? r : 0;

	if (cmd->pool_size == 0 || cmd->pool_size % page)
		return -EINVAL;

	roles = cmd->flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR);
	if (roles & (roles - 1))
		return -EINVAL;

	start = (const uint8_t *)cmd->items;
	items_size = cmd->size - offsetof(struct kdbus_cmd_hello, items);
	for (size_t pos = 0; pos < items_size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *it = (const void *)(start + pos);

		if (it->type == KDBUS_ITEM_NAME) {
			n_names++;
			name = it->str;
		}
	}
	if (roles & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER)) {
		if (n_names == 0)
			return -EINVAL;
		if ((roles & KDBUS_HELLO_ACTIVATOR) &&
		    (n_names != 1 || !kdbus_name_is_valid(name, false)))
			return -EINVAL;
	} else if (n_names || argv[2].item) {
		return -EINVAL;
	}

	r = kdbus_sanitize_attach_flags(cmd->attach_flags_send, &send);
	if (r < 0)
		return r;
	r = kdbus_sanitize_attach_flags(cmd->attach_flags_recv, &recv);
	if (r < 0)
		return r;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	conn->backend = KDBUS_BACKEND_USERSPACE;
	conn->refs = 1;
	conn->bus = bus;
	conn->flags = cmd->flags;
	conn->attach_send = send;
	conn->attach_recv = recv;
	list_init(&conn->bus_link);
	list_init(&conn->monitor_link);
	list_init(&conn->kmatch_link);
	list_init(&conn->queue.msgs);
	list_init(&conn->names);
	list_init(&conn->replies_out);
	list_init(&conn->replies_in);
	list_init(&conn->policy_entries);
	kdbus_match_db_init(&conn->match_db);
	kdbus_pool_init(&conn->pool, cmd->pool_size);

	kdbus_bus_lock(bus);
	if (bus->closed) {
		r = -ESHUTDOWN;
		goto fail;
	}
	r = kdbus_meta_init_hello(&conn->meta, &bus->creator_meta, cmd->items, items_size);
	if (r < 0)
		goto fail;
	conn->privileged = conn->meta.creds.euid == 0;
	conn->owner = conn->privileged || conn->meta.creds.euid == bus->creator_euid;

	if (roles && !conn->owner) {
		r = -EPERM;
		goto fail;
	}
	if ((send & bus->attach_flags_req) != bus->attach_flags_req) {
		cmd->attach_flags_send = bus->attach_flags_req;
		r = -ECONNREFUSED;
		goto fail;
	}
	if (roles & KDBUS_HELLO_ACTIVATOR) {
		KdbusNameEntry *e = kdbus_name_lookup(&bus->names, name);

		if (e && e->activator) {
			r = -EEXIST;
			goto fail;
		}
	}

	r = kdbus_user_acquire(bus, conn->meta.creds.uid, &conn->user);
	if (r < 0)
		goto fail;

	/*
	 * An activator without POLICY_ACCESS items installs no entry, so that
	 * it neither overrides the fallback nor collides with a policy holder's
	 * entry for its name.
	 */
	if ((roles & KDBUS_HELLO_POLICY_HOLDER) || ((roles & KDBUS_HELLO_ACTIVATOR) && argv[2].item)) {
		r = kdbus_policy_set(&bus->policy, cmd->items, items_size,
				     (roles & KDBUS_HELLO_ACTIVATOR) ? 1 : 0,
				     roles & KDBUS_HELLO_POLICY_HOLDER,
				     conn, &conn->policy_entries);
		if (r < 0)
			goto fail;
		bus->talk_gen++;
	}

	r = kdbus_hello_items(conn, cmd);
	if (r < 0)
		goto fail;

	conn->id = (cmd->flags & KDBUS_HELLO_HIDDEN_ID) ? KDBUS_ID_HIDDEN_BASE + bus->last_hidden_id++
						       : ++bus->last_conn_id;
	r = kdbus_hash_add(&bus->conns_by_id, &conn->id_node, kdbus_hash_u64(conn->id));
	if (r < 0)
		goto fail;
	conn->connected = true;
	list_link_tail(&bus->conns, &conn->bus_link);
	if (roles & KDBUS_HELLO_MONITOR)
		list_link_tail(&bus->monitors, &conn->monitor_link);
	else
		kdbus_notify_id_change(bus, KDBUS_ITEM_ID_ADD, conn->id, conn->flags);

	if (roles & KDBUS_HELLO_ACTIVATOR)
		(void)kdbus_name_acquire(bus, conn, name, KDBUS_NAME_ACTIVATOR, &f);

	kdbus_bus_ref(bus);
	cmd->id = conn->id;
	cmd->bus_flags = bus->make_flags;
	cmd->attach_flags_send = send;
	cmd->attach_flags_recv = recv;
	memcpy(cmd->id128, bus->id128, sizeof(cmd->id128));
	kdbus_bus_unlock(bus);
	*ret = conn;
	return 0;

fail:
	{
		KdbusHashNode *n;

		while ((n = kdbus_hash_pop(&conn->pool.slices)))
			kdbus_pool_data_free(&conn->pool, (KdbusSlice *)n);
	}
	kdbus_policy_remove_owner(&bus->policy, &conn->policy_entries);
	kdbus_user_uncharge(bus, &conn->self_charge);
	kdbus_user_release(bus, conn->user);
	kdbus_bus_unlock(bus);
	kdbus_conn_quota_flush(conn);
	kdbus_meta_deinit(&conn->meta);
	kdbus_hash_deinit(&conn->pool.slices);
	free(conn);
	return r;
}

void kdbus_us_conn_close(KdbusConn *conn) {
	KdbusBus *bus = conn->bus;
	KdbusHashNode *n;

	kdbus_bus_lock(bus);
	kdbus_conn_disconnect(conn);
	conn->handle_closed = true;
	conn->wakeup_fn = NULL;
	while ((n = kdbus_hash_pop(&conn->pool.slices))) {
		KdbusSlice *s = (KdbusSlice *)n;

		s->published = false;
		if (s->kind == KDBUS_SLICE_DATA)
			kdbus_pool_data_free(&conn->pool, s);
		else
			kdbus_queue_entry_free(bus, container_of(s, KdbusQueueEntry, slice));
	}
	while (!list_is_empty(&conn->pool.held))
		kdbus_queue_entry_free(bus, list_first_entry(&conn->pool.held, KdbusQueueEntry, held_link));
	kdbus_bus_unlock(bus);
	kdbus_conn_unref(conn);
}

void kdbus_us_conn_close_id_first(KdbusConn *conn) {
	kdbus_bus_lock(conn->bus);
	conn->id_first = true;
	kdbus_bus_unlock(conn->bus);
	kdbus_us_conn_close(conn);
}

void kdbus_us_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata) {
	kdbus_bus_lock(conn->bus);
	conn->wakeup_fn = fn;
	conn->wakeup_userdata = userdata;
	kdbus_bus_unlock(conn->bus);
}

void kdbus_us_conn_defer_handover(KdbusConn *conn) {
	kdbus_bus_lock(conn->bus);
	conn->defer_handover = true;
	kdbus_bus_unlock(conn->bus);
}

void kdbus_us_conn_finish_handover(KdbusConn *conn) {
	KdbusConn *from;

	kdbus_bus_lock(conn->bus);
	conn->defer_handover = false;
	from = conn->handover_from;
	conn->handover_from = NULL;
	if (from) {
		if (conn->connected)
			kdbus_conn_move_messages(conn, from, conn->handover_name_id);
		kdbus_conn_unref(from);
	}
	kdbus_bus_unlock(conn->bus);
}

bool kdbus_us_conn_has_messages(KdbusConn *conn) {
	bool b;

	kdbus_bus_lock(conn->bus);
	b = !list_is_empty(&conn->queue.msgs);
	kdbus_bus_unlock(conn->bus);
	return b;
}

/* ---- BYEBYE, UPDATE ---- */

int kdbus_us_byebye(KdbusConn *conn, struct kdbus_cmd *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd, items), 0,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	kdbus_bus_lock(conn->bus);
	if (!kdbus_conn_is_ordinary(conn))
		r = -EOPNOTSUPP;
	else if (!conn->connected)
		r = -ECONNRESET;
	else if (!list_is_empty(&conn->queue.msgs))
		r = -EBUSY;
	else
		kdbus_conn_disconnect(conn);
	kdbus_bus_unlock(conn->bus);
	return r;
}

int kdbus_us_update(KdbusConn *conn, struct kdbus_cmd *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_SEND },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_RECV },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
		{ .type = KDBUS_ITEM_POLICY_ACCESS, .multiple = true },
	};
	KdbusBus *bus = conn->bus;
	uint64_t send = conn->attach_send, recv = conn->attach_recv;
	bool policy;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd, items), 0,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;
	policy = argv[3].item || argv[4].item;

	r = kdbus_conn_lock(conn);
	if (r < 0)
		goto out;
	if (kdbus_conn_is_activator(conn) ||
	    (policy && !kdbus_conn_is_policy_holder(conn)) ||
	    ((argv[1].item || argv[2].item) && kdbus_conn_is_policy_holder(conn))) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (argv[1].item) {
		r = kdbus_sanitize_attach_flags(argv[1].item->data64[0], &send);
		if (r < 0)
			goto out;
		if ((send & bus->attach_flags_req) != bus->attach_flags_req) {
			r = -EINVAL;
			goto out;
		}
	}
	if (argv[2].item) {
		r = kdbus_sanitize_attach_flags(argv[2].item->data64[0], &recv);
		if (r < 0)
			goto out;
	}
	if (policy) {
		r = kdbus_policy_set(&bus->policy, cmd->items,
				     cmd->size - offsetof(struct kdbus_cmd, items),
				     0, true, conn, &conn->policy_entries);
		if (r < 0)
			goto out;
		bus->talk_gen++;
	}
	conn->attach_send = send;
	conn->attach_recv = recv;
out:
	kdbus_bus_unlock(bus);
	return r;
}

/* ---- RECV, FREE ---- */

/* RECV of queue entry @e: its slice goes to the receiver, with its fds, and
 * a reply tracker now waits for the answer instead of the delivery; @hold:
 * for kdbus_recv_batch(), held rather than published */
static int kdbus_conn_receive_entry(KdbusConn *conn, KdbusQueueEntry *e, bool hold) {
	if (hold) {
		list_link_tail(&conn->pool.held, &e->held_link);
		e->slice.held = true;
		e->slice.user_ref = true;
	} else {
		int r = kdbus_pool_publish(&conn->pool, &e->slice);

		if (r < 0)
			return r;
	}
	kdbus_queue_unlink(&conn->queue, e);
	if (e->n_fds) {
		struct kdbus_item *it = (struct kdbus_item *)((uint8_t *)e->msg + e->fds_item_off);

		memcpy(it->fds, e->fds, e->n_fds * sizeof(int));
		e->n_fds = 0;	/* the receiver owns them now */
	}
	if (e->reply) {
		e->reply->entry = NULL;
		e->reply = NULL;
	}
	return 0;
}

int kdbus_us_recv(KdbusConn *conn, struct kdbus_cmd_recv *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	KdbusBus *bus = conn->bus;
	KdbusQueueEntry *e = NULL;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_recv, items),
			     KDBUS_RECV_PEEK | KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	kdbus_bus_lock(bus);
	if (!conn->connected) {
		r = -ECONNRESET;
		goto out;
	}
	/* an activator may receive what waits for its name (the final ABI) */
	if (kdbus_conn_is_policy_holder(conn)) {
		r = -EOPNOTSUPP;
		goto out;
	}

	cmd->dropped_msgs = 0;
	r = kdbus_queue_peek(&conn->queue, cmd->priority, cmd->flags & KDBUS_RECV_USE_PRIORITY, &e);
	if (conn->lost_count) {
		cmd->dropped_msgs = conn->lost_count;
		cmd->return_flags |= KDBUS_RECV_RETURN_DROPPED_MSGS;
		conn->lost_count = 0;
	}
	if (r < 0)
		goto out;

	if (cmd->flags & KDBUS_RECV_DROP) {
		kdbus_conn_entry_drop(conn, e, true);
	} else if (cmd->flags & KDBUS_RECV_PEEK) {
		r = kdbus_pool_publish(&conn->pool, &e->slice);
		if (r < 0)
			goto out;
		cmd->msg.offset = e->slice.offset;
		cmd->msg.msg_size = e->msg->size;
		cmd->msg.return_flags = 0;
	} else {
		r = kdbus_conn_receive_entry(conn, e, false);
		if (r < 0)
			goto out;
		cmd->msg.offset = e->slice.offset;
		cmd->msg.msg_size = e->msg->size;
		cmd->msg.return_flags = 0;
	}
out:
	kdbus_bus_unlock(bus);
	return r;
}

/* KDBUS_CMD_FREE of a message kdbus_recv_batch() took: looked up on the
 * pool's held list (a short list: what the caller has in flight) */
static KdbusSlice *kdbus_pool_find_held(KdbusPool *p, uint64_t offset) {
	KdbusQueueEntry *e;

	list_for_each_entry(e, &p->held, held_link)
		if (e->slice.offset == offset)
			return &e->slice;
	return NULL;
}

int kdbus_us_free(KdbusConn *conn, struct kdbus_cmd_free *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	KdbusBus *bus = conn->bus;
	KdbusSlice *s;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_free, items), 0,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	kdbus_bus_lock(bus);
	s = kdbus_pool_find(&conn->pool, cmd->offset);
	if (!s)
		s = kdbus_pool_find_held(&conn->pool, cmd->offset);
	if (!s) {
		r = -ENXIO;
	} else if (!s->user_ref) {
		r = -EINVAL;
	} else if (s->kind == KDBUS_SLICE_DATA) {
		kdbus_pool_data_free(&conn->pool, s);
	} else if (s->kernel_ref) {
		s->user_ref = false;	/* PEEKed and still queued */
	} else {
		kdbus_queue_entry_free(bus, container_of(s, KdbusQueueEntry, slice));
	}
	kdbus_bus_unlock(bus);
	return r;
}

/*
 * kdbus_us_recv_batch(), kdbus_us_free_batch(): KDBUS_CMD_RECV without
 * flags and KDBUS_CMD_FREE of received messages, @max or @n at a time under
 * one lock (see kdbus_recv_batch() in bus.h).
 */
int kdbus_us_recv_batch(KdbusConn *conn, uint64_t *offsets, size_t max) {
	KdbusBus *bus = conn->bus;
	size_t n = 0;
	int r = 0;

	kdbus_bus_lock(bus);
	if (!conn->connected) {
		r = -ECONNRESET;
		goto out;
	}
	if (kdbus_conn_is_policy_holder(conn) || kdbus_conn_is_activator(conn)) {
		r = -EOPNOTSUPP;
		goto out;
	}
	while (n < max) {
		KdbusQueueEntry *e = NULL;

		r = kdbus_queue_peek(&conn->queue, 0, false, &e);
		if (r < 0)
			break;
		r = kdbus_conn_receive_entry(conn, e, true);
		if (r < 0)
			break;
		offsets[n++] = e->slice.offset;
	}
out:
	kdbus_bus_unlock(bus);
	return n > 0 ? (int)n : r < 0 ? r : -EAGAIN;
}

/* the offsets are kdbus_recv_batch()'s (bus.h): the entry is found from
 * its address, and its marks are checked */
int kdbus_us_free_batch(KdbusConn *conn, const uint64_t *offsets, size_t n) {
	KdbusBus *bus = conn->bus;
	int r = 0;

	kdbus_bus_lock(bus);
	for (size_t i = 0; i < n; i++) {
		KdbusQueueEntry *e = offsets[i] ? kdbus_queue_entry_of_msg((void *)(uintptr_t)offsets[i]) : NULL;

		if (!e || e->slice.offset != offsets[i] || e->slice.kind != KDBUS_SLICE_ENTRY || !e->slice.held ||
		    e->conn != conn)
			r = -ENXIO;
		else
			kdbus_queue_entry_free(bus, e);
	}
	kdbus_bus_unlock(bus);
	return r;
}

int kdbus_us_conn_set_inflight_limit(KdbusConn *conn, uint64_t max_bytes, uint64_t max_fds) {
	KdbusBus *bus = conn->bus;
	int r = 0;

	kdbus_bus_lock(bus);
	if (!conn->connected) {
		r = -ECONNRESET;
	} else if (!conn->inflight) {
		conn->inflight = calloc(1, sizeof(*conn->inflight));
		if (!conn->inflight)
			r = -ENOMEM;
		else
			conn->inflight->conn = conn;
	}
	if (r == 0) {
		conn->inflight->max_bytes = max_bytes;
		conn->inflight->max_fds = max_fds;
		/* a lower limit takes effect with the next SEND, a higher
		 * one with the next release */
	}
	kdbus_bus_unlock(bus);
	return r;
}

bool kdbus_us_conn_inflight_full(KdbusConn *conn) {
	bool full;

	kdbus_bus_lock(conn->bus);
	full = conn->inflight && kdbus_inflight_is_full(conn->inflight);
	if (conn->inflight)
		conn->inflight->full = full;
	kdbus_bus_unlock(conn->bus);
	return full;
}

int kdbus_us_payload_new(KdbusBus *bus, size_t size, void **ret_handle, uint8_t **ret_data) {
	KdbusPayload *p;

	if (size > bus->limits.max_payload_size + 4096)
		return -EMSGSIZE;
	kdbus_bus_lock(bus);
	p = kdbus_cache_alloc(&bus->cache, sizeof(*p) + KDBUS_ALIGN8(size));
	if (p) {
		*p = (KdbusPayload) { .refs = 1, .cap = KDBUS_ALIGN8(size), .offered = true };
	}
	kdbus_bus_unlock(bus);
	if (!p)
		return -ENOMEM;
	*ret_handle = p;
	*ret_data = (uint8_t *)p->data;
	return 0;
}

bool kdbus_us_payload_offer(KdbusConn *conn, void *handle, const void *ptr) {
	bool taken;

	kdbus_bus_lock(conn->bus);
	taken = conn->offer_taken;
	conn->offer = handle;
	conn->offer_ptr = handle ? ptr : NULL;
	conn->offer_taken = false;
	kdbus_bus_unlock(conn->bus);
	return taken;
}

bool kdbus_us_payload_unshared(KdbusBus *bus, void *handle) {
	bool r;

	kdbus_bus_lock(bus);
	r = ((KdbusPayload *)handle)->refs == 1;
	kdbus_bus_unlock(bus);
	return r;
}

void kdbus_us_payload_release(KdbusBus *bus, void *handle) {
	kdbus_bus_lock(bus);
	kdbus_payload_unref(bus, handle);
	kdbus_bus_unlock(bus);
}

int kdbus_us_reply_pending(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, bool drop) {
	KdbusBus *bus = conn->bus;
	KdbusReply *r;
	int ret;

	kdbus_bus_lock(bus);
	if (!conn->connected) {
		ret = -ECONNRESET;
	} else {
		r = kdbus_reply_find(bus, conn, dst_id, cookie);
		ret = !!r;
		/* a synchronous sender waits for its tracker: it stays */
		if (r && drop && !r->sync)
			kdbus_reply_free(bus, r);
	}
	kdbus_bus_unlock(bus);
	return ret;
}

/* ---- CONN_INFO, LIST ---- */

int kdbus_us_name_owner(KdbusConn *conn, const char *name, uint64_t *ret_id, uint64_t *ret_flags) {
	KdbusBus *bus = conn->bus;
	KdbusNameEntry *e;
	KdbusConn *c;
	int r = 0;

	if (!kdbus_name_is_valid(name, false))
		return -EINVAL;
	kdbus_bus_lock(bus);
	if (!conn->connected) {
		r = -ECONNRESET;
	} else if (!(e = kdbus_name_lookup(&bus->names, name))) {
		r = -ESRCH;
	} else {
		c = kdbus_name_entry_holder(e);
		*ret_id = c->id;
		*ret_flags = c->flags;
	}
	kdbus_bus_unlock(bus);
	return r;
}

int kdbus_us_conn_info(KdbusConn *conn, struct kdbus_cmd_info *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME },
	};
	KdbusBus *bus = conn->bus;
	KdbusConn *c = NULL;
	struct kdbus_info *info;
	KdbusSlice *s;
	uint64_t mask;
	size_t size;
	int r;

	r = kdbus_info_args_parse(cmd, argv, ELEMENTSOF(argv), &mask);
	if (r != 0)
		return r < 0 ? r : 0;

	r = kdbus_conn_lock(conn);
	if (r < 0)
		goto out;
	if (cmd->id == 0) {
		KdbusNameEntry *e;

		if (!argv[1].item || !kdbus_name_is_valid(argv[1].item->str, false)) {
			r = -EINVAL;
			goto out;
		}
		e = kdbus_name_lookup(&bus->names, argv[1].item->str);
		if (!e) {
			r = -ESRCH;
			goto out;
		}
		c = kdbus_name_entry_holder(e);
	} else {
		c = kdbus_bus_find_conn(bus, cmd->id);
		if (!c || kdbus_conn_is_monitor(c)) {
			r = -ENXIO;
			goto out;
		}
	}

	mask &= c->attach_send;
	mask &= ~(uint64_t)KDBUS_ATTACH_TIMESTAMP;
	size = sizeof(*info) + kdbus_meta_size(&c->meta, c, mask);

	/* userspace extension: CONN_INFO's NAMES also lists the names the
	 * connection waits for, flagged KDBUS_NAME_IN_QUEUE (dbus1 policy
	 * checks consider them); message metadata does not */
	KdbusNameOwner *o;
	if (mask & KDBUS_ATTACH_NAMES)
		list_for_each_entry(o, &c->names, conn_link)
			if (o->flags & KDBUS_NAME_IN_QUEUE)
				size += kdbus_owned_name_item_size(o->entry->len);

	r = kdbus_pool_data_new(&conn->pool, size, &s);
	if (r < 0)
		goto out;
	info = kdbus_slice_data(s);
	info->size = size;
	info->id = c->id;
	info->flags = c->flags;
	struct kdbus_item *it = kdbus_meta_write(info->items, &c->meta, c, mask, NULL);
	if (mask & KDBUS_ATTACH_NAMES)
		list_for_each_entry(o, &c->names, conn_link) {
			if (!(o->flags & KDBUS_NAME_IN_QUEUE))
				continue;
			it->name.flags = o->flags;
			memcpy(it->name.name, o->entry->name, o->entry->len + 1);
			it = kdbus_item_init(it, KDBUS_ITEM_OWNED_NAME,
					     sizeof(struct kdbus_name) + o->entry->len + 1);
		}
	r = kdbus_pool_data_publish(&conn->pool, s);
	if (r < 0)
		goto out;
	cmd->offset = s->offset;
	cmd->info_size = size;
out:
	kdbus_bus_unlock(bus);
	return r;
}

static size_t kdbus_list_write(uint8_t *p, const KdbusConn *c, const KdbusNameOwner *o) {
	size_t size = sizeof(struct kdbus_info);

	if (o)
		size += kdbus_owned_name_item_size(o->entry->len);
	if (p) {
		struct kdbus_info *info = (struct kdbus_info *)p;

		info->size = size;
		info->id = c->id;
		info->flags = c->flags;
		if (o) {
			struct kdbus_item *it = info->items;

			it->name.flags = o->flags;
			memcpy(it->name.name, o->entry->name, o->entry->len + 1);
			kdbus_item_init(it, KDBUS_ITEM_OWNED_NAME, sizeof(struct kdbus_name) + o->entry->len + 1);
		}
	}
	return size;
}

static bool kdbus_list_wants(uint64_t flags, const KdbusNameOwner *o) {
	if (o->flags & KDBUS_NAME_ACTIVATOR)
		return flags & KDBUS_LIST_ACTIVATORS;
	if (o->flags & KDBUS_NAME_IN_QUEUE)
		return flags & KDBUS_LIST_QUEUED;
	return flags & KDBUS_LIST_NAMES;
}

/* userspace extension: LIST with a KDBUS_ITEM_NAME lists that name's owner
 * and waiters only, in queue order (dbus1's ListQueuedOwners) */
static size_t kdbus_list_name(KdbusBus *bus, uint64_t flags, const char *name, uint8_t *p) {
	KdbusNameEntry *e = kdbus_name_lookup(&bus->names, name);
	KdbusNameOwner *o;
	size_t pos = 0;

	if (!e)
		return 0;
	list_for_each_entry(o, &e->queue, name_link)
		if (kdbus_list_wants(flags, o))
			pos += kdbus_list_write(p ? p + pos : NULL, o->conn, o);
	if (e->activator && !list_is_linked(&e->activator->name_link) && kdbus_list_wants(flags, e->activator))
		pos += kdbus_list_write(p ? p + pos : NULL, e->activator->conn, e->activator);
	return pos;
}

static size_t kdbus_list_all(KdbusBus *bus, uint64_t flags, uint8_t *p) {
	size_t pos = 0;
	KdbusConn *c;

	list_for_each_entry(c, &bus->conns, bus_link) {
		bool added = false;
		KdbusNameOwner *o;

		if (kdbus_conn_is_monitor(c))
			continue;
		if (flags & (KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS | KDBUS_LIST_QUEUED)) {
			list_for_each_entry(o, &c->names, conn_link) {
				if (o->flags & KDBUS_NAME_ACTIVATOR) {
					if (!(flags & KDBUS_LIST_ACTIVATORS))
						continue;
				} else if (o->flags & KDBUS_NAME_IN_QUEUE) {
					if (!(flags & KDBUS_LIST_QUEUED))
						continue;
				} else if (!(flags & KDBUS_LIST_NAMES)) {
					continue;
				}
				pos += kdbus_list_write(p ? p + pos : NULL, c, o);
				added = true;
			}
		}
		if (!added && (flags & KDBUS_LIST_UNIQUE))
			pos += kdbus_list_write(p ? p + pos : NULL, c, NULL);
	}
	return pos;
}

int kdbus_us_list(KdbusConn *conn, struct kdbus_cmd_list *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME },
	};
	KdbusBus *bus = conn->bus;
	KdbusSlice *s;
	size_t size;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_list, items),
			     KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS |
			     KDBUS_LIST_QUEUED, argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	r = kdbus_conn_lock(conn);
	if (r < 0)
		goto out;
	const char *name = argv[1].item ? argv[1].item->str : NULL;
	size = name ? kdbus_list_name(bus, cmd->flags, name, NULL) : kdbus_list_all(bus, cmd->flags, NULL);
	r = kdbus_pool_data_new(&conn->pool, size, &s);
	if (r < 0)
		goto out;
	if (name)
		kdbus_list_name(bus, cmd->flags, name, kdbus_slice_data(s));
	else
		kdbus_list_all(bus, cmd->flags, kdbus_slice_data(s));
	r = kdbus_pool_data_publish(&conn->pool, s);
	if (r < 0)
		goto out;
	cmd->offset = s->offset;
	cmd->list_size = size;
out:
	kdbus_bus_unlock(bus);
	return r;
}

/* ---- names, matches ---- */

static int kdbus_name_cmd(KdbusConn *conn, struct kdbus_cmd *cmd, bool acquire) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME, .mandatory = true },
	};
	KdbusBus *bus = conn->bus;
	const char *name;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd, items),
			     acquire ? KDBUS_NAME_REPLACE_EXISTING | KDBUS_NAME_ALLOW_REPLACEMENT |
				       KDBUS_NAME_QUEUE : 0,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;
	name = argv[1].item->str;

	kdbus_bus_lock(bus);
	if (!conn->connected)
		r = -ECONNRESET;
	else if (!kdbus_conn_is_ordinary(conn))
		r = -EOPNOTSUPP;
	else if (!kdbus_name_is_valid(name, false))
		r = acquire ? -EINVAL : -ESRCH;	/* an invalid name is nobody's */
	else if (acquire) {
		uint64_t rf = 0;

		r = kdbus_name_acquire(bus, conn, name, cmd->flags, &rf);
		cmd->return_flags = rf;
	} else
		r = kdbus_name_release(bus, conn, name);
	kdbus_bus_unlock(bus);
	return r;
}

int kdbus_us_name_acquire(KdbusConn *conn, struct kdbus_cmd *cmd) {
	return kdbus_name_cmd(conn, cmd, true);
}

int kdbus_us_name_release(KdbusConn *conn, struct kdbus_cmd *cmd) {
	return kdbus_name_cmd(conn, cmd, false);
}

int kdbus_us_match_add(KdbusConn *conn, struct kdbus_cmd_match *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_BLOOM_MASK, .multiple = true },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
		{ .type = KDBUS_ITEM_ID, .multiple = true },
		{ .type = KDBUS_ITEM_DST_ID, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_ADD, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_REMOVE, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_CHANGE, .multiple = true },
		{ .type = KDBUS_ITEM_ID_ADD, .multiple = true },
		{ .type = KDBUS_ITEM_ID_REMOVE, .multiple = true },
		{ .type = KDBUS_ITEM_MATCH_KEYS, .multiple = true },
	};
	KdbusBus *bus = conn->bus;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_match, items),
			     KDBUS_MATCH_REPLACE, argv, ELEMENTSOF(argv));
	if (r >= 0 && argv[10].item) {
		/* the userspace core's extension, unknown to the shared rules */
		const struct kdbus_item *item;

		KDBUS_ITEM_FOREACH(item, cmd, items)
			if (item->type == KDBUS_ITEM_MATCH_KEYS && kdbus_match_keys_validate(item) < 0)
				return -EINVAL;
	}
	if (r != 0)
		return r < 0 ? r : 0;

	kdbus_bus_lock(bus);
	if (!conn->connected)
		r = -ECONNRESET;
	else if (!kdbus_conn_is_ordinary(conn))
		r = -EOPNOTSUPP;
	else
		r = kdbus_match_add(bus, conn, cmd);
	kdbus_bus_unlock(bus);
	return r;
}

int kdbus_us_match_remove(KdbusConn *conn, struct kdbus_cmd_match *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	KdbusBus *bus = conn->bus;
	int r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_match, items), 0,
			     argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;

	kdbus_bus_lock(bus);
	if (!conn->connected)
		r = -ECONNRESET;
	else if (!kdbus_conn_is_ordinary(conn))
		r = -EOPNOTSUPP;
	else
		r = kdbus_match_remove(bus, conn, cmd->cookie);
	kdbus_bus_unlock(bus);
	return r;
}
