/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * message.c - staging, SEND and the delivery paths (see message.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/item.h"
#include "kdbus/match.h"
#include "kdbus/message.h"
#include "kdbus/names.h"
#include "kdbus/notify.h"
#include "kdbus/queue.h"
#include "kdbus/reply.h"
#include "util/macro.h"

#define KDBUS_MSG_MAX_ITEMS		128
#define KDBUS_MSG_MAX_MEMFD_ITEMS	16

/* (out of line: its timespec would cost every entry built a stack canary) */
static _noinline_ void kdbus_staging_timestamp(KdbusStaging *s) {
	struct timespec ts;

	if (s->have_ts)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->ts.monotonic_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->ts.realtime_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	s->ts.seqnum = s->seqnum;
	s->have_ts = true;
}

/*
 * @dst's queue entry for @s, charged: or a negative errno in the pointer
 * (the kernel's ERR_PTR()): -ENOBUFS, -EXFULL, -ECOMM (fds to a receiver
 * without ACCEPT_FD), -ENOMEM, -errno of dup().  The callers on the
 * broadcast path then need no address of a local of theirs for it, which
 * would cost each receiver a stack canary.
 */
#define ENTRY_ERR(r) ((KdbusQueueEntry *)(intptr_t)(r))
#define ENTRY_IS_ERR(e) ((uintptr_t)(e) >= (uintptr_t)-4095)
#define ENTRY_ERRNO(e) ((int)(intptr_t)(e))

static KdbusQueueEntry *kdbus_entry_new(KdbusBus *bus, KdbusConn *dst, KdbusStaging *s, bool with_fds) {
	uint64_t payload_size = s->payload ? s->payload->size : 0;
	size_t n_fds = with_fds ? s->n_fds : 0;
	uint64_t mask, charge;
	KdbusQueueEntry *e;
	struct kdbus_msg *m;
	size_t size;
	uint8_t *p;
	int r;

	if (n_fds && !(dst->flags & KDBUS_HELLO_ACCEPT_FD))
		return ENTRY_ERR(-ECOMM);
	if (dst->queue.n_msgs >= bus->limits.max_msgs_per_conn)
		return ENTRY_ERR(-ENOBUFS);

	if (s->src)
		mask = kdbus_meta_msg_mask(s->src, dst);
	else
		mask = dst->attach_recv & KDBUS_ATTACH_TIMESTAMP;
	if (mask & KDBUS_ATTACH_TIMESTAMP)
		kdbus_staging_timestamp(s);

	size = sizeof(struct kdbus_msg);
	if (s->dst_name)
		size += KDBUS_ITEM_SIZE(s->dst_name_size);
	if (payload_size)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec));
	if (n_fds)
		size += KDBUS_ITEM_SIZE(n_fds * sizeof(int));
	if (s->notify)
		size += KDBUS_ALIGN8(s->notify->size);
	if (s->src) {
		if (mask)
			size += kdbus_meta_size(&s->src->meta, s->src, mask);
	} else if (mask & KDBUS_ATTACH_TIMESTAMP)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_timestamp));

	charge = KDBUS_ALIGN8(size) + KDBUS_ALIGN8(payload_size);
	r = kdbus_pool_charge_msg(&dst->pool, charge);
	if (r < 0)
		return ENTRY_ERR(r);

	if (s->src && s->src->user) {
		r = kdbus_conn_quota_charge(dst, s->src->user->uid, charge);
		if (r < 0) {
			kdbus_pool_uncharge(&dst->pool, charge);
			return ENTRY_ERR(r);
		}
	}
	e = kdbus_queue_entry_alloc(bus, size, n_fds);
	/* the receiver's user pays, on behalf of the sender's (user.h), into
	 * the entry (no address of ours escapes: no stack canary here) */
	r = !e ? -ENOMEM : s->src && s->src->user ?
		kdbus_user_charge_msg(bus, dst->user, s->src->user->uid, &e->ucharge, charge, n_fds) : 0;
	if (r < 0) {
		if (s->src && s->src->user)
			kdbus_conn_quota_uncharge(dst, s->src->user->uid, charge);
		kdbus_pool_uncharge(&dst->pool, charge);
		if (e)
			kdbus_cache_free(&bus->cache, e);
		return ENTRY_ERR(r);
	}
	e->conn = dst;
	e->charge = charge;
	e->ucharge_fds = n_fds;
	if (s->src && s->src->user) {
		e->actor = s->src->user->uid;
		e->has_actor = true;
	}
	e->slice.size = charge;

	for (size_t i = 0; i < n_fds; i++) {
		int fd = fcntl(s->fds[i], F_DUPFD_CLOEXEC, 3);

		if (fd < 0) {
			r = -errno;
			kdbus_queue_entry_free(bus, e);
			return ENTRY_ERR(r);
		}
		e->fds[i] = fd;
		e->n_fds = i + 1;
	}

	m = e->msg;
	m->size = size;
	m->flags = s->flags;
	m->priority = s->priority;
	m->dst_id = s->dst_id;
	m->src_id = s->src ? s->src->id : KDBUS_SRC_ID_KERNEL;
	m->payload_type = s->payload_type;
	m->cookie = s->cookie;
	m->cookie_reply = s->cookie_reply;
	p = (uint8_t *)m->items;

	if (s->dst_name)
		p = kdbus_item_write(p, KDBUS_ITEM_DST_NAME, s->dst_name, s->dst_name_size);
	if (payload_size) {
		struct kdbus_item *it = (struct kdbus_item *)p;

		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
		it->type = KDBUS_ITEM_PAYLOAD_OFF;
		it->vec = (struct kdbus_vec) { .size = payload_size, .offset = (uint64_t)(uintptr_t)s->payload->ptr };
		p += KDBUS_ALIGN8(it->size);
		e->payload = s->payload;
		s->payload->refs++;
		s->payload->users++;	/* kdbus_payload_put() */
	}
	if (n_fds) {
		struct kdbus_item *it = (struct kdbus_item *)p;

		e->fds_item_off = (uint32_t)(p - (uint8_t *)m);
		it->size = KDBUS_ITEM_HEADER_SIZE + n_fds * sizeof(int);
		it->type = KDBUS_ITEM_FDS;
		for (size_t i = 0; i < n_fds; i++)
			it->fds[i] = -1;	/* installed at RECV */
		memset(p + it->size, 0, KDBUS_ALIGN8(it->size) - it->size);
		p += KDBUS_ALIGN8(it->size);
	}
	if (s->notify) {
		memcpy(p, s->notify, s->notify->size);
		memset(p + s->notify->size, 0, KDBUS_ALIGN8(s->notify->size) - s->notify->size);
		p += KDBUS_ALIGN8(s->notify->size);
	}
	if (s->src) {
		if (mask)
			p = kdbus_meta_write(p, &s->src->meta, s->src, mask, s->have_ts ? &s->ts : NULL);
	} else if (mask & KDBUS_ATTACH_TIMESTAMP)
		p = kdbus_item_write(p, KDBUS_ITEM_TIMESTAMP, &s->ts, sizeof(s->ts));

	e->seqnum = s->seqnum;
	e->priority = s->priority;
	e->dst_name_id = s->dst_name_id;
	return e;
}

void kdbus_entry_deliver(KdbusBus *bus, KdbusConn *dst, KdbusStaging *s, bool with_fds) {
	KdbusQueueEntry *e = kdbus_entry_new(bus, dst, s, with_fds);

	if (ENTRY_IS_ERR(e))
		dst->lost_count++;
	else
		kdbus_conn_enqueue(dst, e);
}

static _noinline_ void kdbus_bus_eavesdrop_all(KdbusBus *bus, KdbusStaging *s) {
	KdbusConn *c;

	list_for_each_entry(c, &bus->monitors, monitor_link)
		kdbus_entry_deliver(bus, c, s, c->flags & KDBUS_HELLO_ACCEPT_FD);
}

void kdbus_bus_eavesdrop(KdbusBus *bus, KdbusStaging *s) {
	/* (most buses have no monitor: no call, no stack canary) */
	if (!list_is_empty(&bus->monitors))
		kdbus_bus_eavesdrop_all(bus, s);
}

static KdbusMatchMsg kdbus_staging_match_msg(const KdbusStaging *s) {
	return (KdbusMatchMsg) {
		.src = s->src, .dst_id = s->dst_id, .bloom = s->bloom, .keys = s->keys, .n_keys = s->n_keys,
	};
}

/* whether @ix's match takes @s, remembered for this memo round if it may
 * be (out of line: the memo answers most, and the message view it passes
 * would cost every candidate a stack canary) */
static _noinline_ bool kdbus_broadcast_match(KdbusBus *bus, KdbusStaging *s, KdbusMatchIndex *ix) {
	KdbusMatchMsg msg = kdbus_staging_match_msg(s);
	bool match = kdbus_match_one_user(bus, ix->match, &msg);

	if (bus->bcast_memo_on && ix->memo_ok) {
		ix->memo_stamp = bus->bcast_memo_stamp;
		ix->memo_match = match;
	}
	return match;
}

/* a broadcast to the receivers of one candidate match, once per receiver */
static void kdbus_broadcast_candidate(KdbusBus *bus, KdbusStaging *s, KdbusMatchIndex *ix) {
	KdbusConn *c = ix->conn;

	if (c->bcast_stamp == bus->bcast_stamp || !c->connected)
		return;
	/* most candidates that do not match fail here */
	if (ix->quick_bits && s->bloom && (s->bloom->data[ix->quick_word] & ix->quick_bits) != ix->quick_bits)
		return;
	if (bus->bcast_memo_on && ix->memo_stamp == bus->bcast_memo_stamp) {
		if (!ix->memo_match)
			return;
	} else if (!kdbus_broadcast_match(bus, s, ix)) {
		return;
	}
	c->bcast_stamp = bus->bcast_stamp;
	/* a receiver needs TALK access to the sender */
	if (!kdbus_conn_policy_talk(c, s->src))
		return;
	/* fds on a broadcast (kdbus_bus_set_broadcast_fds()): only for
	 * receivers that take them */
	if (s->n_fds && !(c->flags & KDBUS_HELLO_ACCEPT_FD))
		return;
	kdbus_entry_deliver(bus, c, s, s->n_fds != 0);
}

/*
 * kdbus_bus_broadcast() of a user message through the match index
 * (match.c): the matches without a usable mask, those filed under the
 * message's keys and those filed under a bit the filter has.  Every
 * receiver gets the message once (KdbusConn.bcast_stamp).
 */
static void kdbus_bus_broadcast_indexed(KdbusBus *bus, KdbusStaging *s) {
	size_t words = bus->bloom.size / 8;
	KdbusMatchIndex *m, *n;

	bus->bcast_stamp++;
	/* a match's answer depends on the sender, the destination and the
	 * filter (but for NAME rules): a new memo round when they change */
	bus->bcast_memo_on = s->bloom && words <= KDBUS_BCAST_MEMO_WORDS;
	if (bus->bcast_memo_on &&
	    (bus->bcast_memo_stamp == 0 || bus->bcast_memo_src != s->src->id ||
	     bus->bcast_memo_dst != s->dst_id || bus->bcast_memo_bloom[0] != s->bloom->generation ||
	     memcmp(&bus->bcast_memo_bloom[1], s->bloom->data, words * 8) != 0 ||
	     bus->bcast_memo_n_keys != s->n_keys ||
	     (s->n_keys && memcmp(bus->bcast_memo_keys, s->keys, s->n_keys * 8) != 0))) {
		bus->bcast_memo_stamp++;
		bus->bcast_memo_src = s->src->id;
		bus->bcast_memo_dst = s->dst_id;
		bus->bcast_memo_bloom[0] = s->bloom->generation;
		memcpy(&bus->bcast_memo_bloom[1], s->bloom->data, words * 8);
		bus->bcast_memo_n_keys = s->n_keys;
		if (s->n_keys)
			memcpy(bus->bcast_memo_keys, s->keys, s->n_keys * 8);
	}
	list_for_each_entry_safe(m, n, &bus->umatch_unindexed, link)
		kdbus_broadcast_candidate(bus, s, m);
	/* the matches filed under the message's keys */
	for (size_t k = 0; k < s->n_keys; k++) {
		uint64_t h = kdbus_hash_u64(s->keys[k]);
		KdbusHashNode *i, *next;

		for (i = kdbus_hash_bucket(&bus->umatch_keyed, h); i; i = next) {
			KdbusMatchIndex *ix = container_of(i, KdbusMatchIndex, key_node);

			next = i->next;
			if (i->hash == h && ix->key == s->keys[k])
				kdbus_broadcast_candidate(bus, s, ix);
		}
	}
	if (!s->bloom || !bus->umatch_index)
		return;
	for (size_t w = 0; w < words; w++)
		for (uint64_t x = s->bloom->data[w] & bus->umatch_index_used[w]; x; x &= x - 1) {
			List *head = &bus->umatch_index[w * 64 + (size_t)__builtin_ctzll(x)];

			list_for_each_entry_safe(m, n, head, link)
				kdbus_broadcast_candidate(bus, s, m);
		}
}

void kdbus_bus_broadcast(KdbusBus *bus, KdbusStaging *s) {
	KdbusConn *c;

	/* monitors first, so they never see a reaction before its cause */
	kdbus_bus_eavesdrop(bus, s);

	if (s->src) {
		/* every user match is in the index (match.c) */
		kdbus_bus_broadcast_indexed(bus, s);
	} else {
		list_for_each_entry(c, &bus->conns_kmatch, kmatch_link)
			if (kdbus_match_db_match_kernel(c, s->notify))
				kdbus_entry_deliver(bus, c, s, false);
	}
}

/* validate the message and fill the staging object (kernel: kdbus_msg_examine) */
static int kdbus_msg_examine(KdbusBus *bus, const struct kdbus_msg *msg,
			     const struct kdbus_cmd_send *cmd, KdbusStaging *s,
			     uint64_t *ret_payload_size) {
	const uint8_t *start = (const uint8_t *)msg->items;
	size_t size = msg->size - offsetof(struct kdbus_msg, items);
	const struct kdbus_item *fds = NULL;
	uint64_t vec_size = 0, n_memfds = 0, n_items = 0;
	int r;

	if (msg->size < sizeof(*msg))
		return -EINVAL;
	if (msg->size > bus->limits.max_msg_size)
		return -EMSGSIZE;
	r = kdbus_items_validate(msg->items, size);
	if (r < 0)
		return r;

	if (msg->payload_type == KDBUS_PAYLOAD_KERNEL)
		return -EINVAL;
	if (msg->flags & ~(uint64_t)(KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_NO_AUTO_START | KDBUS_MSG_SIGNAL))
		return -EINVAL;

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		if (!(msg->flags & KDBUS_MSG_SIGNAL))
			return -EBADMSG;
		if (msg->timeout_ns > 0)
			return -ENOTUNIQ;
	}
	if (msg->flags & KDBUS_MSG_EXPECT_REPLY) {
		if (msg->timeout_ns == 0)
			return -EINVAL;
		if (msg->flags & KDBUS_MSG_SIGNAL)
			return -ENOTUNIQ;
	} else {
		if (cmd->flags & KDBUS_SEND_SYNC_REPLY)
			return -EINVAL;
		if (msg->cookie_reply && (msg->flags & KDBUS_MSG_SIGNAL))
			return -EINVAL;
	}

	for (size_t pos = 0; pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *item = (const void *)(start + pos);

		if (++n_items > KDBUS_MSG_MAX_ITEMS)
			return -E2BIG;

		switch (item->type) {
		case KDBUS_ITEM_PAYLOAD_VEC:
			if (ADD_OVERFLOW(vec_size, item->vec.size, &vec_size))
				return -EMSGSIZE;
			if (vec_size > bus->limits.max_payload_size)
				return -EMSGSIZE;
			break;
		case KDBUS_ITEM_PAYLOAD_MEMFD:
			if (item->memfd.start + item->memfd.size < item->memfd.start)
				return -EMSGSIZE;
			if (++n_memfds > KDBUS_MSG_MAX_MEMFD_ITEMS)
				return -E2BIG;
			if (ADD_OVERFLOW(vec_size, item->memfd.size, &vec_size))
				return -EMSGSIZE;
			if (vec_size > bus->limits.max_payload_size)
				return -EMSGSIZE;
			break;
		case KDBUS_ITEM_FDS:
			if (fds)
				return -EEXIST;
			fds = item;
			s->fds = item->fds;
			s->n_fds = KDBUS_ITEM_PAYLOAD_SIZE(item) / sizeof(int);
			if (s->n_fds > bus->limits.max_fds_per_msg)
				return -EMFILE;
			break;
		case KDBUS_ITEM_BLOOM_FILTER:
			if (s->bloom)
				return -EEXIST;
			r = kdbus_bloom_filter_check(item, bus->bloom.size);
			if (r < 0)
				return r;
			s->bloom = &item->bloom_filter;
			break;
		case KDBUS_ITEM_MATCH_KEYS:
			if (kdbus_match_keys_validate(item) < 0)
				return -EINVAL;
			if (s->keys)
				return -EEXIST;
			s->keys = (const uint64_t *)(const void *)item->data64;
			s->n_keys = KDBUS_ITEM_PAYLOAD_SIZE(item) / sizeof(uint64_t);
			break;
		case KDBUS_ITEM_DST_NAME:
			if (s->dst_name)
				return -EEXIST;
			if (!kdbus_name_is_valid(item->str, false))
				return -EINVAL;
			if (msg->dst_id == KDBUS_DST_ID_BROADCAST)
				return -EBADMSG;
			s->dst_name = item->str;
			s->dst_name_size = KDBUS_ITEM_PAYLOAD_SIZE(item);
			break;
		default:
			return -EINVAL;
		}
	}

	/* bloom filters must be attached iff it is a signal */
	if (!(msg->flags & KDBUS_MSG_SIGNAL) != !s->bloom)
		return -EBADMSG;
	if (msg->dst_id == KDBUS_DST_ID_NAME && !s->dst_name)
		return -EDESTADDRREQ;
	if (msg->dst_id == KDBUS_DST_ID_BROADCAST && fds && !bus->broadcast_fds)
		return -ENOTUNIQ;

	*ret_payload_size = vec_size;
	return 0;
}

/*
 * kdbus_payload_offer() (bus.h): the sender's payload already sits in a
 * buffer of ours; take it if the vecs are exactly its bytes at the offered
 * address, one after the other.
 */
static bool kdbus_staging_adopt(KdbusBus *bus, const struct kdbus_msg *msg, KdbusStaging *s, uint64_t total) {
	KdbusConn *src = s->src;
	KdbusPayload *p = src->offer;
	const uint8_t *start = (const uint8_t *)msg->items, *at = src->offer_ptr, *end;
	size_t size = msg->size - offsetof(struct kdbus_msg, items);

	end = (const uint8_t *)p->data + p->cap;
	if (p->inflight || !at || ((uintptr_t)at & 7) || at < (const uint8_t *)p->data + 8 || total > (uint64_t)(end - at))
		return false;
	for (size_t pos = 0; pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *item = (const void *)(start + pos);

		if (item->type == KDBUS_ITEM_PAYLOAD_MEMFD)
			return false;
		if (item->type != KDBUS_ITEM_PAYLOAD_VEC || item->vec.size == 0)
			continue;
		if ((const uint8_t *)(uintptr_t)item->vec.address != at)
			return false;
		at += item->vec.size;
	}
	if (at != src->offer_ptr + total)
		return false;
	src->offer = NULL;		/* once */
	src->offer_taken = true;
	p->refs++;
	p->size = total;
	p->ptr = (uint8_t *)src->offer_ptr;
	p->id = ++bus->payload_seq;
	memcpy(p->ptr - 8, &p->id, 8);
	s->payload = p;
	return true;
}

static int kdbus_staging_copy_payload(KdbusBus *bus, const struct kdbus_msg *msg,
				      KdbusStaging *s, uint64_t total) {
	const uint8_t *start = (const uint8_t *)msg->items;
	size_t size = msg->size - offsetof(struct kdbus_msg, items);
	KdbusPayload *p;
	uint8_t *d;

	if (total == 0)
		return 0;
	if (s->src && s->src->offer && kdbus_staging_adopt(bus, msg, s, total))
		return 0;
	p = kdbus_cache_alloc(&bus->cache, sizeof(*p) + KDBUS_ALIGN8(total));
	if (!p)
		return -ENOMEM;
	p->refs = 1;
	p->inflight = NULL;
	p->users = 0;
	p->size = total;
	p->offered = false;
	p->ptr = (uint8_t *)p->data;
	p->cap = KDBUS_ALIGN8(total);
	p->id = ++bus->payload_seq;
	d = (uint8_t *)p->data;

	for (size_t pos = 0; pos < size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)(start + pos))->size)) {
		const struct kdbus_item *item = (const void *)(start + pos);

		if (item->type == KDBUS_ITEM_PAYLOAD_VEC) {
			if (item->vec.address)
				memcpy(d, (const void *)(uintptr_t)item->vec.address, item->vec.size);
			else
				memset(d, 0, item->vec.size);
			d += item->vec.size;
		} else if (item->type == KDBUS_ITEM_PAYLOAD_MEMFD) {
			uint64_t done = 0;

			while (done < item->memfd.size) {
				ssize_t n = pread(item->memfd.fd, d + done, item->memfd.size - done,
						  item->memfd.start + done);

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					int err = n < 0 ? -errno : -EMSGSIZE;

					kdbus_cache_free(&bus->cache, p);
					return err;
				}
				done += n;
			}
			d += item->memfd.size;
		}
	}
	memset(d, 0, KDBUS_ALIGN8(total) - total);
	s->payload = p;
	return 0;
}

/* the request @r of a synchronous sender is dead or answered by an error */
static void kdbus_reply_sync_wake(KdbusBus *bus, KdbusReply *r, int err, KdbusQueueEntry *e) {
	kdbus_reply_sync_done(r, err);
	r->reply_entry = e;
	pthread_cond_broadcast(&bus->sync_cond);
}

static int kdbus_send_wait(KdbusConn *conn, KdbusReply *r, struct kdbus_cmd_send *cmd,
			   int cancel_fd) {
	KdbusBus *bus = conn->bus;
	uint64_t deadline = r->deadline_ns;
	int err;

	while (!r->done) {
		struct timespec now, ts;
		uint64_t now_ns, until = deadline;

		clock_gettime(CLOCK_MONOTONIC, &now);
		now_ns = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec;
		if (now_ns >= deadline) {
			r->done = true;
			r->err = -ETIMEDOUT;
			break;
		}
		if (cancel_fd >= 0) {
			struct pollfd pfd = { .fd = cancel_fd, .events = POLLIN };

			if (poll(&pfd, 1, 0) > 0) {
				r->done = true;
				r->err = -ECANCELED;
				break;
			}
			/* re-check the cancel fd every 10ms */
			if (until - now_ns > 10000000ULL)
				until = now_ns + 10000000ULL;
		}
		if (until - now_ns > 3600ULL * 1000000000ULL)
			until = now_ns + 3600ULL * 1000000000ULL;
		ts.tv_sec = until / 1000000000ULL;
		ts.tv_nsec = until % 1000000000ULL;
		pthread_cond_timedwait(&bus->sync_cond, &bus->lock, &ts);
	}

	err = r->err;
	if (err == 0) {
		KdbusQueueEntry *e = r->reply_entry;
		int ir;

		r->reply_entry = NULL;
		if (e->n_fds) {
			struct kdbus_item *it = (struct kdbus_item *)((uint8_t *)e->msg + e->fds_item_off);

			memcpy(it->fds, e->fds, e->n_fds * sizeof(int));
			e->n_fds = 0;
		}
		ir = kdbus_pool_publish(&conn->pool, &e->slice);
		if (ir < 0) {
			kdbus_queue_entry_free(bus, e);
			err = ir;
		} else {
			cmd->reply.offset = e->slice.offset;
			cmd->reply.msg_size = e->msg->size;
			cmd->reply.return_flags = 0;
		}
	}
	kdbus_reply_free(bus, r);
	return err;
}

int kdbus_us_send(KdbusConn *conn, struct kdbus_cmd_send *cmd) {
	KdbusArg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_CANCEL_FD },
	};
	KdbusBus *bus = conn->bus;
	const struct kdbus_msg *msg;
	KdbusStaging s = {};
	KdbusReply *reply = NULL, *tracker = NULL;
	KdbusQueueEntry *e;
	KdbusConn *dst = NULL;
	uint64_t payload_size = 0;
	bool sync;
	int cancel_fd, r;

	r = kdbus_args_parse(cmd, sizeof(*cmd), offsetof(struct kdbus_cmd_send, items),
			     KDBUS_SEND_SYNC_REPLY, argv, ELEMENTSOF(argv));
	if (r != 0)
		return r < 0 ? r : 0;
	msg = (const struct kdbus_msg *)(uintptr_t)cmd->msg_address;
	if (!msg || (cmd->msg_address & 7))
		return -EFAULT;
	sync = cmd->flags & KDBUS_SEND_SYNC_REPLY;
	cancel_fd = argv[1].item ? argv[1].item->data32[0] : -1;

	kdbus_bus_lock(bus);
	if (!conn->connected) {
		r = -ECONNRESET;
		goto out;
	}
	if (!kdbus_conn_is_ordinary(conn)) {
		r = -EOPNOTSUPP;
		goto out;
	}
	r = kdbus_msg_examine(bus, msg, cmd, &s, &payload_size);
	if (r < 0)
		goto out;

	s.msg = msg;
	s.src = conn;
	s.flags = msg->flags;
	s.dst_id = msg->dst_id;
	s.cookie = msg->cookie;
	s.cookie_reply = msg->cookie_reply;
	s.priority = msg->priority;
	s.payload_type = msg->payload_type;

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		r = kdbus_staging_copy_payload(bus, msg, &s, payload_size);
		if (r < 0)
			goto out;
		if (conn->inflight && s.payload)
			kdbus_inflight_charge(conn->inflight, s.payload, s.n_fds);
		s.seqnum = ++bus->seqnum;
		kdbus_bus_broadcast(bus, &s);
		goto out;
	}

	if (s.dst_name) {
		KdbusNameEntry *ne = kdbus_name_lookup(&bus->names, s.dst_name);

		if (!ne) {
			r = -ESRCH;
			goto out;
		}
		dst = kdbus_name_entry_holder(ne);
		if (msg->dst_id != KDBUS_DST_ID_NAME && msg->dst_id != dst->id) {
			r = -EREMCHG;
			goto out;
		}
		if (kdbus_conn_is_activator(dst) && (msg->flags & KDBUS_MSG_NO_AUTO_START)) {
			r = -EADDRNOTAVAIL;
			goto out;
		}
		s.dst_name_id = ne->name_id;
	} else {
		dst = kdbus_bus_find_conn(bus, msg->dst_id);
		if (!dst || !kdbus_conn_is_ordinary(dst)) {
			r = -ENXIO;
			goto out;
		}
	}

	if (msg->cookie_reply && !(msg->flags & KDBUS_MSG_EXPECT_REPLY)) {
		reply = kdbus_reply_find(bus, conn, dst->id, msg->cookie_reply);
		if (!reply) {
			r = -EBADSLT;
			goto out;
		}
	}

	if (msg->flags & KDBUS_MSG_SIGNAL) {
		KdbusMatchMsg mm = { .src = conn, .dst_id = dst->id, .bloom = s.bloom, .keys = s.keys, .n_keys = s.n_keys };

		/* unicast signals are dropped silently, like unmatched broadcasts */
		if (!kdbus_match_db_match_user(bus, dst, &mm) ||
		    !kdbus_conn_policy_talk(dst, conn))
			goto out;
	} else if (!reply && !kdbus_conn_policy_talk(conn, dst)) {
		r = -EPERM;
		goto out;
	}

	r = kdbus_staging_copy_payload(bus, msg, &s, payload_size);
	if (r < 0)
		goto out;
	if (conn->inflight && s.payload)
		kdbus_inflight_charge(conn->inflight, s.payload, s.n_fds);

	if (msg->flags & KDBUS_MSG_EXPECT_REPLY) {
		r = kdbus_reply_new(bus, conn, dst, msg->cookie, msg->timeout_ns,
				    s.dst_name_id, sync, &tracker);
		if (r < 0)
			goto out;
	}

	s.seqnum = ++bus->seqnum;
	e = kdbus_entry_new(bus, dst, &s, true);
	r = ENTRY_IS_ERR(e) ? ENTRY_ERRNO(e) : 0;
	if (r < 0) {
		if (reply && reply->sync)
			kdbus_reply_sync_wake(bus, reply, r == -ECOMM ? -EREMOTEIO : r, NULL);
		kdbus_reply_free(bus, tracker);
		tracker = NULL;
		goto out;
	}

	if (reply && reply->sync) {
		/* straight to the blocked sender, never through its queue */
		kdbus_reply_sync_wake(bus, reply, 0, e);
	} else {
		if (tracker) {
			e->reply = tracker;
			tracker->entry = e;
		}
		kdbus_conn_enqueue(dst, e);
		kdbus_reply_free(bus, reply);
	}
	kdbus_bus_eavesdrop(bus, &s);

out:
	s.payload = kdbus_payload_put(bus, s.payload);
	/* what the sender has in flight now, this message included */
	if (conn->inflight && kdbus_inflight_is_full(conn->inflight)) {
		conn->inflight->full = true;
		cmd->return_flags |= KDBUS_SEND_RETURN_INFLIGHT_FULL;
	}
	if (r == 0 && tracker && sync) {
		kdbus_conn_ref(conn);
		kdbus_bus_unlock(bus);		/* deliver wakeups before blocking */
		kdbus_bus_lock(bus);
		r = kdbus_send_wait(conn, tracker, cmd, cancel_fd);
		kdbus_bus_unlock(bus);
		kdbus_conn_unref(conn);
		return r;
	}
	kdbus_bus_unlock(bus);
	return r;
}
