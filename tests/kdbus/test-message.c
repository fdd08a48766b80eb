/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-message.c - SEND/RECV, quotas, broadcasts, replies, timeouts,
 * wakeups, fds, synchronous calls, metadata, chat (selftests
 * test-message.c, test-timeout.c, test-fd.c, test-sync.c, test-chat.c,
 * test-metadata-ns.c)
 */

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kdbus-test.h"

int test_send_recv_unicast(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	const char data[] = "hello world";
	KtMsg m = KT_MSG(.dst_id = 0, .cookie = 0xabc, .vec = { data }, .vec_size = { sizeof(data) });
	struct kdbus_msg *msg;
	const char *p;
	uint64_t off, size;

	ASSERT_RETURN(c);
	m.dst_id = kdbus_conn_get_id(c);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_RETURN(kdbus_conn_has_messages(c));
	ASSERT_EQ(kt_recv(c, &msg, &off), 0);
	ASSERT_EQ(msg->src_id, kdbus_conn_get_id(env->conn));
	ASSERT_EQ(msg->dst_id, kdbus_conn_get_id(c));
	ASSERT_EQ(msg->cookie, 0xabc);
	ASSERT_EQ(msg->payload_type, KDBUS_PAYLOAD_DBUS);
	p = kt_msg_payload(c, msg, &size);
	ASSERT_RETURN(p);
	ASSERT_EQ(size, sizeof(data));
	ASSERT_RETURN(memcmp(p, data, sizeof(data)) == 0);
	ASSERT_RETURN(!kdbus_conn_has_messages(c));
	ASSERT_EQ(kt_free(c, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_send_vecs_joined(Env *env) {
	const char a[] = "header:", b[] = "body";
	KtMsg m = KT_MSG(.dst_id = kdbus_conn_get_id(env->conn), .cookie = 1,
			 .vec = { a, NULL, b }, .vec_size = { 7, 3, 4 });
	struct kdbus_msg *msg;
	const uint8_t *p;
	uint64_t off, size;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_recv(env->conn, &msg, &off), 0);
	ASSERT_RETURN(kt_msg_item(msg, KDBUS_ITEM_PAYLOAD_OFF, 0));
	ASSERT_RETURN(!kt_msg_item(msg, KDBUS_ITEM_PAYLOAD_OFF, 1));	/* one contiguous payload */
	p = kt_msg_payload(env->conn, msg, &size);
	ASSERT_EQ(size, 14);
	ASSERT_RETURN(memcmp(p, "header:\0\0\0body", 14) == 0);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	return TEST_OK;
}

int test_send_invalid(Env *env) {
	uint64_t id = kdbus_conn_get_id(env->conn);
	uint64_t bloom[BLOOM_SIZE / 8] = {};
	KtMsg m;

	m = KT_MSG(.dst_id = id, .cookie = 1, .payload_type = (uint64_t)-1);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);			/* PAYLOAD_KERNEL */
	m = KT_MSG(.dst_id = KDBUS_DST_ID_NAME, .cookie = 1);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EDESTADDRREQ);
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 1);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EBADMSG);			/* not a signal */
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 1, .flags = KDBUS_MSG_SIGNAL, .no_bloom = true);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EBADMSG);			/* no bloom */
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 1, .flags = KDBUS_MSG_SIGNAL | KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = 1);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOTUNIQ);
	m = KT_MSG(.dst_id = id, .cookie = 1, .flags = KDBUS_MSG_EXPECT_REPLY);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);			/* no timeout */
	m = KT_MSG(.dst_id = id, .cookie = 1, .send_flags = KDBUS_SEND_SYNC_REPLY);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);			/* sync without reply */
	m = KT_MSG(.dst_id = id, .cookie = 1, .flags = 1ULL << 10);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);
	m = KT_MSG(.dst_id = id, .cookie = 1, .flags = KDBUS_MSG_SIGNAL, .cookie_reply = 5);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);			/* signal as reply */
	m = KT_MSG(.dst_id = id, .cookie = 1, .bloom = bloom, .flags = 0);
	m.dst_name = "foo.bar.Invalid-";
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ESRCH);
	m = KT_MSG(.dst_id = 0, .dst_name = "invalid", .cookie = 1);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EINVAL);
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .dst_name = "foo.bar", .cookie = 1, .flags = KDBUS_MSG_SIGNAL);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EBADMSG);

	/* hand-built messages */
	{
		uint64_t buf[64] = {};
		struct kdbus_msg *msg = (struct kdbus_msg *)buf;
		struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t)msg };
		struct kdbus_item *it = msg->items;

		msg->payload_type = KDBUS_PAYLOAD_DBUS;
		msg->dst_id = id;
		msg->cookie = 1;
		it->size = KDBUS_ITEM_HEADER_SIZE + 8;
		it->type = KDBUS_ITEM_ID;				/* unexpected item */
		msg->size = sizeof(*msg) + 24;
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EINVAL);
		it->type = KDBUS_ITEM_DST_NAME;				/* not NUL-terminated */
		memset(it->data, 'a', 8);
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EINVAL);
		it->size = 8;						/* item too small */
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EINVAL);
		msg->size = sizeof(*msg) - 8;
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EINVAL);
		msg->size = 16 * 1024;
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EMSGSIZE);
		cmd.msg_address = (uintptr_t)msg + 4;
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EFAULT);
		/* two DST_NAME items */
		cmd.msg_address = (uintptr_t)msg;
		it->size = KDBUS_ITEM_HEADER_SIZE + 4;
		strcpy(it->str, "a.b");
		it = KDBUS_ITEM_NEXT(it);
		it->size = KDBUS_ITEM_HEADER_SIZE + 4;
		it->type = KDBUS_ITEM_DST_NAME;
		strcpy(it->str, "a.c");
		msg->size = sizeof(*msg) + 48;
		msg->dst_id = 0;
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EEXIST);
	}
	/* bloom of the wrong size */
	{
		uint64_t buf[64] = {};
		struct kdbus_msg *msg = (struct kdbus_msg *)buf;
		struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t)msg };
		struct kdbus_item *it = msg->items;

		msg->payload_type = KDBUS_PAYLOAD_DBUS;
		msg->dst_id = KDBUS_DST_ID_BROADCAST;
		msg->flags = KDBUS_MSG_SIGNAL;
		it->size = KDBUS_ITEM_HEADER_SIZE + 8 + 32;
		it->type = KDBUS_ITEM_BLOOM_FILTER;
		msg->size = sizeof(*msg) + KDBUS_ALIGN8(it->size);
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EDOM);
	}
	ASSERT_RETURN(!kdbus_conn_has_messages(env->conn));
	return TEST_OK;
}

int test_send_unknown_dst(Env *env) {
	ASSERT_EQ(kt_send(env->conn, 0x7fffffff, 1), -ENXIO);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Nobody", 1, 0), -ESRCH);
	return TEST_OK;
}

int test_send_by_name(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_msg *msg;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_name_acquire(c, "org.kt.Dest", 0, NULL), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Dest", 33, 0), 0);
	ASSERT_EQ(kt_recv(c, &msg, &off), 0);
	ASSERT_EQ(msg->cookie, 33);
	ASSERT_EQ(msg->dst_id, KDBUS_DST_ID_NAME);
	it = kt_msg_item(msg, KDBUS_ITEM_DST_NAME, 0);
	ASSERT_RETURN(it && strcmp(it->str, "org.kt.Dest") == 0);
	ASSERT_EQ(kt_free(c, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_send_eremchg(Env *env) {
	KdbusConn *c = kt_hello(env, 0), *d = kt_hello(env, 0);
	KtMsg m = KT_MSG(.dst_name = "org.kt.Remchg", .cookie = 1);

	ASSERT_RETURN(c && d);
	ASSERT_EQ(kt_name_acquire(c, "org.kt.Remchg", 0, NULL), 0);
	m.dst_id = kdbus_conn_get_id(d);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EREMCHG);
	m.dst_id = kdbus_conn_get_id(c);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(c), 1);
	kdbus_conn_close(c);
	kdbus_conn_close(d);
	return TEST_OK;
}

int test_send_to_self(Env *env) {
	struct kdbus_msg m;

	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(env->conn), 5), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie, 5);
	return TEST_OK;
}

int test_recv_empty(Env *env) {
	struct kdbus_cmd_recv r = { .size = sizeof(r), .flags = 1ULL << 20 };

	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	ASSERT_EQ(kdbus_cmd_recv(env->conn, &r), -EINVAL);
	r.flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_EQ(kdbus_cmd_recv(env->conn, &r), 0);
	ASSERT_EQ(r.flags, KDBUS_RECV_PEEK | KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY);
	return TEST_OK;
}

int test_recv_fifo_order(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t id = kdbus_conn_get_id(env->conn);
	struct kdbus_msg m;

	ASSERT_RETURN(a && b);
	for (uint64_t i = 1; i <= 10; i++)
		ASSERT_EQ(kt_send((i & 1) ? a : b, id, i), 0);
	for (uint64_t i = 1; i <= 10; i++) {
		ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
		ASSERT_EQ(m.cookie, i);
	}
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_recv_priority(Env *env) {
	uint64_t id = kdbus_conn_get_id(env->conn);
	int64_t prio[] = { 25, -600, 10, -35, -100, 20, -15, -800, -150, 10, -10 };
	struct kdbus_cmd_recv r;
	struct kdbus_msg *m;

	for (size_t i = 0; i < sizeof(prio) / sizeof(prio[0]); i++) {
		KtMsg k = KT_MSG(.dst_id = id, .cookie = i + 1, .priority = prio[i]);

		ASSERT_EQ(kt_send_msg(env->conn, &k), 0);
	}
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_USE_PRIORITY, -1000, &r), -EAGAIN);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_USE_PRIORITY, -200, &r), 0);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->priority, -800);
	kt_free(env->conn, r.msg.offset);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_USE_PRIORITY, -200, &r), 0);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->priority, -600);
	kt_free(env->conn, r.msg.offset);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_USE_PRIORITY, -200, &r), -EAGAIN);
	/* equal priorities come in FIFO order */
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_USE_PRIORITY, 10, &r), 0);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->priority, -150);
	kt_free(env->conn, r.msg.offset);
	/* without USE_PRIORITY: plain FIFO */
	ASSERT_EQ(kt_recv_flags(env->conn, 0, 0, &r), 0);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->cookie, 1);
	kt_free(env->conn, r.msg.offset);
	ASSERT_EQ(kt_drain(env->conn), 7);
	return TEST_OK;
}

int test_recv_peek(Env *env) {
	uint64_t id = kdbus_conn_get_id(env->conn);
	struct kdbus_cmd_recv r, r2;
	struct kdbus_msg *m;

	ASSERT_EQ(kt_send(env->conn, id, 1), 0);
	ASSERT_EQ(kt_send(env->conn, id, 2), 0);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_PEEK, 0, &r), 0);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_PEEK, 0, &r2), 0);
	ASSERT_EQ(r.msg.offset, r2.msg.offset);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->cookie, 1);
	ASSERT_EQ(r.msg.msg_size, m->size);
	ASSERT_EQ(kt_free(env->conn, r.msg.offset), 0);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_DROP, 0, &r), 0);
	ASSERT_EQ(kt_recv_flags(env->conn, 0, 0, &r), 0);
	m = kdbus_pool_ptr(env->conn, r.msg.offset);
	ASSERT_EQ(m->cookie, 2);
	ASSERT_EQ(kt_free(env->conn, r.msg.offset), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}

int test_quota_max_msgs(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t id;
	int i;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	for (i = 0; i < 256; i++)
		ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
	ASSERT_EQ(kt_send(env->conn, id, 999), -ENOBUFS);
	ASSERT_EQ(kt_drain(c), 256);
	ASSERT_EQ(kt_send(env->conn, id, 1000), 0);
	if (env->backend == KDBUS_BACKEND_USERSPACE) {
		KdbusLimits l = { .max_msgs_per_conn = 4 };

		ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
		for (i = 0; i < 3; i++)
			ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
		ASSERT_EQ(kt_send(env->conn, id, 99), -ENOBUFS);
	}
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_quota_pool(Env *env) {
	KtHello h = { .pool_size = 64 * 1024 };
	static uint8_t big[40 * 1024];
	KdbusConn *c = NULL;
	uint64_t id, off;
	KtMsg m;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	id = kdbus_conn_get_id(c);
	if (env->backend == KDBUS_BACKEND_IOCTL) {
		/* the final ABI: half of the pool is its owner's; of the other
		 * half a sending user gets a third of what others do not use */
		m = KT_MSG(.dst_id = id, .cookie = 1, .vec = { big }, .vec_size = { sizeof(big) });
		ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOBUFS);
		m.vec_size[0] = 8 * 1024;
		ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
		ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOBUFS);
		/* small messages still pass */
		ASSERT_EQ(kt_send(env->conn, id, 3), 0);
		/* a received message is its receiver's: the share is back */
		ASSERT_EQ(kt_recv(c, NULL, &off), 0);
		ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
		ASSERT_EQ(kt_free(c, off), 0);
		ASSERT_EQ(kt_drain(c), 2);
		kdbus_conn_close(c);
		return TEST_OK;
	}
	/* more than half of the free pool: refused */
	m = KT_MSG(.dst_id = id, .cookie = 1, .vec = { big }, .vec_size = { sizeof(big) });
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EXFULL);
	/* a quarter fits, a second one exceeds half of the rest */
	m = KT_MSG(.dst_id = id, .cookie = 2, .vec = { big }, .vec_size = { 16 * 1024 });
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	m.vec_size[0] = 30 * 1024;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EXFULL);
	/* small messages still pass */
	ASSERT_EQ(kt_send(env->conn, id, 3), 0);
	/* unfreed slices count: receiving does not give the space back */
	ASSERT_EQ(kt_recv(c, NULL, &off), 0);
	m.vec_size[0] = 25 * 1024;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EXFULL);
	ASSERT_EQ(kt_free(c, off), 0);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(c), 2);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_broadcast_dropped_count(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_cmd_recv r;
	uint64_t id;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	ASSERT_EQ(kt_match_empty(c, 1), 0);
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
	/* the broadcast is lost for c, the sender does not notice */
	ASSERT_EQ(kt_broadcast(env->conn, 500, NULL), 0);
	ASSERT_EQ(kt_broadcast(env->conn, 501, NULL), 0);
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_RETURN(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	ASSERT_EQ(r.dropped_msgs, 2);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_RETURN(!(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS));
	ASSERT_EQ(r.dropped_msgs, 0);
	kt_free(c, r.msg.offset);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_broadcast_shared_payload(Env *env) {
	KdbusConn *c[3];
	uint64_t off[3], payload[3];

	for (int i = 0; i < 3; i++) {
		c[i] = kt_hello(env, 0);
		ASSERT_RETURN(c[i]);
	}
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(kt_match_empty(c[i], 1), 0);
	ASSERT_EQ(kt_broadcast(env->conn, 77, NULL), 0);
	for (int i = 0; i < 3; i++) {
		struct kdbus_msg *m;
		struct kdbus_item *it;

		ASSERT_EQ(kt_recv(c[i], &m, &off[i]), 0);
		ASSERT_EQ(m->cookie, 77);
		ASSERT_EQ(m->dst_id, KDBUS_DST_ID_BROADCAST);
		ASSERT_RETURN(m->flags & KDBUS_MSG_SIGNAL);
		it = kt_msg_item(m, KDBUS_ITEM_PAYLOAD_OFF, 0);
		ASSERT_RETURN(it);
		payload[i] = it->vec.offset;
		ASSERT_EQ(*(const uint64_t *)kdbus_pool_ptr(c[i], it->vec.offset), 77);
	}
	if (env->backend == KDBUS_BACKEND_USERSPACE) {
		/* one payload buffer for all receivers */
		ASSERT_EQ(payload[0], payload[1]);
		ASSERT_EQ(payload[1], payload[2]);
	}
	/* the payload stays valid until the last slice is freed */
	ASSERT_EQ(kt_free(c[0], off[0]), 0);
	ASSERT_EQ(kt_free(c[1], off[1]), 0);
	ASSERT_EQ(*(const uint64_t *)kdbus_pool_ptr(c[2], payload[2]), 77);
	ASSERT_EQ(kt_free(c[2], off[2]), 0);
	for (int i = 0; i < 3; i++)
		kdbus_conn_close(c[i]);
	/* no match, no broadcast */
	ASSERT_EQ(kt_broadcast(env->conn, 78, NULL), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}

int test_broadcast_own(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_msg m;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_match_empty(env->conn, 1), 0);
	ASSERT_EQ(kt_match_empty(c, 1), 0);
	ASSERT_EQ(kt_broadcast(env->conn, 9, NULL), 0);
	/* we do get our own broadcasts */
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie, 9);
	ASSERT_EQ(kt_recv_free(c, &m), 0);
	ASSERT_EQ(m.cookie, 9);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_limits_payload_size(Env *env) {
	KdbusLimits l = { .max_payload_size = 1024, .max_fds_per_msg = 2 };
	static uint8_t big[4096];
	uint64_t id = kdbus_conn_get_id(env->conn);
	int fds[3] = { 0, 0, 0 };
	KtMsg m;

	USERSPACE_ONLY(env);
	m = KT_MSG(.dst_id = id, .cookie = 1, .vec = { big }, .vec_size = { 3000 });
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EMSGSIZE);
	m.vec_size[0] = 512;
	m.vec[1] = big;
	m.vec_size[1] = 513;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EMSGSIZE);
	m.vec_size[1] = 512;
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	m = KT_MSG(.dst_id = id, .cookie = 1, .fds = fds, .n_fds = 3);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -EMFILE);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &(KdbusLimits){}), 0);
	m = KT_MSG(.dst_id = id, .cookie = 1, .vec = { big }, .vec_size = { 4096 });
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	return TEST_OK;
}

/*
 * A signal that expects a reply: ENOTUNIQ, as the final ABI (found by
 * tests/kfuzz: the module took it as a unicast signal with no tracker, and
 * a synchronous SEND of it returned 0 without writing its reply).
 */
int test_signal_expects_no_reply(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t mask[BLOOM_SIZE / 8];
	KtMsg m;

	ASSERT_RETURN(c);
	memset(mask, 0, sizeof(mask));
	ASSERT_EQ(kt_match_bloom(c, 1, mask, 1), 0);
	m = KT_MSG(.dst_id = kdbus_conn_get_id(c), .cookie = 1, .flags = KDBUS_MSG_SIGNAL | KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = kt_now_ns() + 1000000000ULL);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOTUNIQ);
	m.send_flags = KDBUS_SEND_SYNC_REPLY;
	m.reply.offset = 0x5a5a5a5a;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOTUNIQ);
	m.dst_id = KDBUS_DST_ID_BROADCAST;
	m.send_flags = 0;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOTUNIQ);
	ASSERT_EQ(kt_recv(c, NULL, NULL), -EAGAIN);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_unicast_signal(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	KtMsg m = KT_MSG(.cookie = 3, .flags = KDBUS_MSG_SIGNAL);
	struct kdbus_msg r;

	ASSERT_RETURN(c);
	m.dst_id = kdbus_conn_get_id(c);
	/* without a match, a unicast signal is dropped silently */
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_recv(c, NULL, NULL), -EAGAIN);
	{
		uint64_t id = kdbus_conn_get_id(c);

		ASSERT_EQ(kt_match_rule(c, 1, 0, KDBUS_ITEM_DST_ID, &id, sizeof(id)), 0);
	}
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_recv_free(c, &r), 0);
	ASSERT_EQ(r.cookie, 3);
	ASSERT_RETURN(r.flags & KDBUS_MSG_SIGNAL);
	ASSERT_EQ(r.dst_id, kdbus_conn_get_id(c));
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- replies ---- */

int test_reply_tracking(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t me = kdbus_conn_get_id(env->conn);
	struct kdbus_msg m;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 100, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_recv_free(c, &m), 0);
	ASSERT_RETURN(m.flags & KDBUS_MSG_EXPECT_REPLY);
	ASSERT_EQ(m.cookie, 100);
	ASSERT_RETURN(m.timeout_ns > 0);
	ASSERT_EQ(kt_reply(c, me, 200, 100), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie, 200);
	ASSERT_EQ(m.cookie_reply, 100);
	ASSERT_EQ(m.src_id, kdbus_conn_get_id(c));
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_reply_unexpected(Env *env) {
	KdbusConn *c = kt_hello(env, 0), *d = kt_hello(env, 0);

	ASSERT_RETURN(c && d);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 12345), -EBADSLT);
	/* a tracker is only consumed by the callee it waits for */
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 55, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_reply(d, kdbus_conn_get_id(env->conn), 1, 55), -EBADSLT);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 55), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(c);
	kdbus_conn_close(d);
	return TEST_OK;
}

int test_reply_twice(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t me = kdbus_conn_get_id(env->conn);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 8, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_drain(c), 1);
	ASSERT_EQ(kt_reply(c, me, 1, 8), 0);
	ASSERT_EQ(kt_reply(c, me, 2, 8), -EBADSLT);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_reply_emlink(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t id, t = kt_now_ns() + 10000000000ULL;
	int i;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	for (i = 0; i < 128; i++)
		ASSERT_EQ(kt_call(env->conn, id, i + 1, t), 0);
	ASSERT_EQ(kt_call(env->conn, id, 1000, t), -EMLINK);
	/* answering one makes room */
	ASSERT_EQ(kt_drain(c), 128);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 5), 0);
	ASSERT_EQ(kt_call(env->conn, id, 1001, t), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

static int expect_kernel_msg(KdbusConn *conn, uint64_t type, uint64_t cookie_reply) {
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_EQ(kt_recv(conn, &m, &off), 0);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_KERNEL);
	ASSERT_EQ(m->dst_id, kdbus_conn_get_id(conn));
	ASSERT_EQ(m->cookie_reply, cookie_reply);
	it = kt_msg_item(m, type, 0);
	ASSERT_RETURN(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HEADER_SIZE);
	ASSERT_EQ(kt_free(conn, off), 0);
	return TEST_OK;
}

int test_reply_dead_on_close(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 31, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 32), 0);	/* no reply expected */
	kdbus_conn_close(c);
	ASSERT_EQ(expect_kernel_msg(env->conn, KDBUS_ITEM_REPLY_DEAD, 31), TEST_OK);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}

int test_reply_dead_after_recv(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 41, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_drain(c), 1);
	ASSERT_EQ(kt_byebye(c), 0);
	ASSERT_EQ(expect_kernel_msg(env->conn, KDBUS_ITEM_REPLY_DEAD, 41), TEST_OK);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_reply_dead_on_drop(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 51, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_recv_flags(c, KDBUS_RECV_DROP, 0, NULL), 0);
	ASSERT_EQ(expect_kernel_msg(env->conn, KDBUS_ITEM_REPLY_DEAD, 51), TEST_OK);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 51), -EBADSLT);
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- timeouts ---- */

static uint64_t timer_deadline;
static unsigned timer_calls;

static void timer_cb(KdbusBus *bus, uint64_t deadline, void *userdata) {
	timer_deadline = deadline;
	timer_calls++;
	*(KdbusBus **)userdata = bus;
}

int test_timeout_notification(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t now = kt_now_ns();

	USERSPACE_ONLY(env);
	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 61, now + 1000), 0);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 62, now + 2000), 0);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 63, now + 1000000000000ULL), 0);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now), now + 1000);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now + 5000), now + 1000000000000ULL);
	ASSERT_EQ(expect_kernel_msg(env->conn, KDBUS_ITEM_REPLY_TIMEOUT, 61), TEST_OK);
	ASSERT_EQ(expect_kernel_msg(env->conn, KDBUS_ITEM_REPLY_TIMEOUT, 62), TEST_OK);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	/* the timed out call can no longer be answered */
	ASSERT_EQ(kt_drain(c), 3);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 61), -EBADSLT);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 63), 0);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now + 2000000000000ULL), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_timeout_timer_callback(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	KdbusBus *seen = NULL;
	uint64_t now = kt_now_ns(), id;

	USERSPACE_ONLY(env);
	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	timer_calls = 0;
	kdbus_bus_set_timer(env->bus, timer_cb, &seen);
	ASSERT_EQ(timer_calls, 0);
	ASSERT_EQ(kt_call(env->conn, id, 1, now + 5000), 0);
	ASSERT_EQ(timer_calls, 1);
	ASSERT_EQ(timer_deadline, now + 5000);
	ASSERT_RETURN(seen == env->bus);
	/* a later deadline does not move the timer */
	ASSERT_EQ(kt_call(env->conn, id, 2, now + 9000), 0);
	ASSERT_EQ(timer_calls, 1);
	/* an earlier one does */
	ASSERT_EQ(kt_call(env->conn, id, 3, now + 3000), 0);
	ASSERT_EQ(timer_calls, 2);
	ASSERT_EQ(timer_deadline, now + 3000);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now + 3000), now + 5000);
	ASSERT_EQ(timer_calls, 2);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now + 9000), 0);
	ASSERT_EQ(kt_drain(env->conn), 3);
	/* nothing armed: the next call arms again */
	ASSERT_EQ(kt_call(env->conn, id, 4, now + 100000), 0);
	ASSERT_EQ(timer_calls, 3);
	kdbus_bus_set_timer(env->bus, NULL, NULL);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_timeout_order(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t now = kt_now_ns();
	struct kdbus_msg m;

	USERSPACE_ONLY(env);
	ASSERT_RETURN(c);
	for (uint64_t i = 0; i < 50; i++)
		ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), i + 1, now + 1000 * ((i * 37) % 50 + 1)), 0);
	ASSERT_EQ(kdbus_bus_dispatch_timeouts(env->bus, now + 1000000), 0);
	for (uint64_t i = 0; i < 50; i++) {
		ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
		ASSERT_EQ((m.cookie_reply - 1) * 37 % 50, i);
	}
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- wakeups ---- */

static unsigned wake_count;
static KdbusConn *wake_conn;

static void wake_cb(KdbusConn *conn, void *userdata) {
	wake_count++;
	wake_conn = conn;
	(void)userdata;
}

int test_wakeup_on_first_message(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t id;

	USERSPACE_ONLY(env);
	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	wake_count = 0;
	kdbus_conn_set_wakeup(c, wake_cb, NULL);
	ASSERT_EQ(kt_send(env->conn, id, 1), 0);
	ASSERT_EQ(wake_count, 1);
	ASSERT_RETURN(wake_conn == c);
	ASSERT_EQ(kt_send(env->conn, id, 2), 0);
	ASSERT_EQ(wake_count, 1);		/* still non-empty */
	ASSERT_EQ(kt_drain(c), 2);
	ASSERT_EQ(kt_send(env->conn, id, 3), 0);
	ASSERT_EQ(wake_count, 2);
	ASSERT_EQ(kt_drain(c), 1);
	/* notifications wake too */
	ASSERT_EQ(kt_match_id(c, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	{
		KdbusConn *d = kt_hello(env, 0);

		ASSERT_EQ(wake_count, 3);
		kdbus_conn_close(d);
	}
	kdbus_conn_set_wakeup(c, NULL, NULL);
	kdbus_conn_close(c);
	return TEST_OK;
}

static KdbusConn *relay_to;
static int relay_result;

static void relay_cb(KdbusConn *conn, void *userdata) {
	Env *env = userdata;

	/* a callback may issue commands on other connections */
	relay_result = kt_send(env->conn, kdbus_conn_get_id(relay_to), 99);
	(void)conn;
}

int test_wakeup_outside_lock(Env *env) {
	KdbusConn *c = kt_hello(env, 0), *d = kt_hello(env, 0);
	struct kdbus_msg m;

	USERSPACE_ONLY(env);
	ASSERT_RETURN(c && d);
	relay_to = d;
	relay_result = -1;
	kdbus_conn_set_wakeup(c, relay_cb, env);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 1), 0);
	ASSERT_EQ(relay_result, 0);
	ASSERT_EQ(kt_recv_free(d, &m), 0);
	ASSERT_EQ(m.cookie, 99);
	ASSERT_EQ(kt_drain(c), 1);
	kdbus_conn_close(c);
	kdbus_conn_close(d);
	return TEST_OK;
}

/* ---- fds ---- */

int test_fd_passing(Env *env) {
	KdbusConn *c = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	int p[2], rfd;
	struct kdbus_msg *msg;
	struct kdbus_item *it;
	uint64_t off;
	char ch = 0;
	KtMsg m = KT_MSG(.cookie = 1);

	ASSERT_RETURN(c);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	m.dst_id = kdbus_conn_get_id(c);
	m.fds = &p[1];
	m.n_fds = 1;
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	/* the sender keeps its fd */
	ASSERT_EQ(write(p[1], "x", 1), 1);
	ASSERT_EQ(read(p[0], &ch, 1), 1);
	ASSERT_EQ(kt_recv(c, &msg, &off), 0);
	it = kt_msg_item(msg, KDBUS_ITEM_FDS, 0);
	ASSERT_RETURN(it && it->size == KDBUS_ITEM_HEADER_SIZE + sizeof(int));
	rfd = it->fds[0];
	ASSERT_RETURN(rfd >= 0 && rfd != p[1]);
	ASSERT_EQ(write(rfd, "y", 1), 1);
	ASSERT_EQ(read(p[0], &ch, 1), 1);
	ASSERT_EQ(ch, 'y');
	ASSERT_EQ(kt_free(c, off), 0);
	/* the receiver owns its fd: still valid after FREE */
	ASSERT_EQ(write(rfd, "z", 1), 1);
	close(rfd);
	close(p[1]);
	ASSERT_EQ(read(p[0], &ch, 1), 1);
	ASSERT_EQ(read(p[0], &ch, 1), 0);	/* every write end is closed */
	close(p[0]);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_fd_no_accept(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	int p[2];
	KtMsg m = KT_MSG(.cookie = 1);

	ASSERT_RETURN(c);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	m.dst_id = kdbus_conn_get_id(c);
	m.fds = &p[0];
	m.n_fds = 1;
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ECOMM);
	ASSERT_EQ(kt_recv(c, NULL, NULL), -EAGAIN);
	m.n_fds = 0;
	m.fds = NULL;
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_drain(c), 1);
	close(p[0]);
	close(p[1]);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_fd_dropped_closed(Env *env) {
	KdbusConn *c = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	int p[2];
	char ch;
	KtMsg m = KT_MSG(.cookie = 1);

	ASSERT_RETURN(c);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	m.dst_id = kdbus_conn_get_id(c);
	m.fds = &p[1];
	m.n_fds = 1;
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	close(p[1]);
	ASSERT_EQ(kt_recv_flags(c, KDBUS_RECV_DROP, 0, NULL), 0);
	kdbus_conn_close(c);		/* the second copy goes with the queue */
	ASSERT_EQ(read(p[0], &ch, 1), 0);
	close(p[0]);
	return TEST_OK;
}

int test_fd_broadcast(Env *env) {
	int fd = 0;
	KtMsg m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 1, .flags = KDBUS_MSG_SIGNAL,
			 .fds = &fd, .n_fds = 1);

	ASSERT_EQ(kt_send_msg(env->conn, &m), -ENOTUNIQ);
	return TEST_OK;
}

/* kdbus_bus_set_broadcast_fds(): a copy for each receiver that takes fds,
 * nothing for the others */
int test_fd_broadcast_enabled(Env *env) {
	KdbusConn *a, *b, *n;
	int p[2];
	char ch;
	KtMsg m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 3, .flags = KDBUS_MSG_SIGNAL,
			 .fds = &p[1], .n_fds = 1);

	USERSPACE_ONLY(env);
	a = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	b = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	n = kt_hello(env, 0);
	ASSERT_RETURN(a && b && n);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	ASSERT_EQ(kt_match_empty(a, 1), 0);
	ASSERT_EQ(kt_match_empty(b, 1), 0);
	ASSERT_EQ(kt_match_empty(n, 1), 0);
	ASSERT_EQ(kdbus_bus_set_broadcast_fds(env->bus, true), 0);
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	close(p[1]);
	KdbusConn *rc[] = { a, b };
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		struct kdbus_msg *msg;
		struct kdbus_item *it;
		uint64_t off;

		ASSERT_EQ(kt_recv(rc[i], &msg, &off), 0);
		ASSERT_EQ(msg->cookie, 3);
		it = kt_msg_item(msg, KDBUS_ITEM_FDS, 0);
		ASSERT_RETURN(it && it->size == KDBUS_ITEM_HEADER_SIZE + sizeof(int) && it->fds[0] >= 0);
		ASSERT_EQ(write(it->fds[0], "x", 1), 1);
		close(it->fds[0]);
		ASSERT_EQ(kt_free(rc[i], off), 0);
	}
	ASSERT_EQ(kt_recv(n, NULL, NULL), -EAGAIN);
	ASSERT_EQ(read(p[0], &ch, 1), 1);
	ASSERT_EQ(read(p[0], &ch, 1), 1);
	ASSERT_EQ(read(p[0], &ch, 1), 0);	/* no copy left anywhere */
	close(p[0]);
	ASSERT_EQ(kdbus_bus_set_broadcast_fds(env->bus, false), 0);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(n);
	return TEST_OK;
}

/* kdbus_reply_pending(): whether a reply would find a tracker; dropping it */
int test_reply_pending(Env *env) {
	uint64_t me = kdbus_conn_get_id(env->conn);
	KdbusConn *c;

	USERSPACE_ONLY(env);
	c = kt_hello(env, 0);
	ASSERT_RETURN(c);
	ASSERT_EQ(kdbus_reply_pending(c, me, 9, false), 0);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 9, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_drain(c), 1);
	ASSERT_EQ(kdbus_reply_pending(c, me, 9, false), 1);
	ASSERT_EQ(kdbus_reply_pending(env->conn, kdbus_conn_get_id(c), 9, false), 0);
	ASSERT_EQ(kdbus_reply_pending(c, me, 9, true), 1);
	ASSERT_EQ(kdbus_reply_pending(c, me, 9, false), 0);
	ASSERT_EQ(kt_reply(c, me, 1, 9), -EBADSLT);
	kdbus_conn_close(c);
	/* no REPLY_DEAD for a call that was forgotten */
	ASSERT_EQ(kt_drain(env->conn), 0);
	return TEST_OK;
}

/* ---- synchronous calls ---- */

typedef struct SyncPeer {
	KdbusConn *conn;
	uint64_t reply_to;
	int mode;		/* 0 reply, 1 close, 2 drop, 3 nothing */
	int result;
} SyncPeer;

static void *sync_peer(void *p) {
	SyncPeer *s = p;
	struct kdbus_msg m;

	for (int i = 0; i < 2000; i++) {
		if (kdbus_conn_has_messages(s->conn))
			break;
		usleep(1000);
	}
	switch (s->mode) {
	case 0:
		s->result = kt_recv_free(s->conn, &m);
		if (s->result == 0)
			s->result = kt_reply(s->conn, m.src_id, 0x1234, m.cookie);
		break;
	case 1:
		kdbus_conn_close(s->conn);
		s->conn = NULL;
		s->result = 0;
		break;
	case 2:
		s->result = kt_recv_flags(s->conn, KDBUS_RECV_DROP, 0, NULL);
		break;
	default:
		s->result = 0;
		break;
	}
	return NULL;
}

static int sync_call(Env *env, SyncPeer *peer, uint64_t timeout, KtMsg *m) {
	pthread_t t;
	int r;

	*m = KT_MSG(.dst_id = kdbus_conn_get_id(peer->conn), .cookie = 0x99,
		    .flags = KDBUS_MSG_EXPECT_REPLY, .timeout_ns = kt_now_ns() + timeout,
		    .send_flags = KDBUS_SEND_SYNC_REPLY);
	pthread_create(&t, NULL, sync_peer, peer);
	r = kt_send_msg(env->conn, m);
	pthread_join(t, NULL);
	return r;
}

int test_sync_reply(Env *env) {
	SyncPeer peer = { .conn = kt_hello(env, 0), .mode = 0 };
	struct kdbus_msg *msg;
	KtMsg m;

	ASSERT_RETURN(peer.conn);
	ASSERT_EQ(sync_call(env, &peer, 5000000000ULL, &m), 0);
	ASSERT_EQ(peer.result, 0);
	msg = kdbus_pool_ptr(env->conn, m.reply.offset);
	ASSERT_EQ(msg->cookie, 0x1234);
	ASSERT_EQ(msg->cookie_reply, 0x99);
	ASSERT_EQ(m.reply.msg_size, msg->size);
	ASSERT_EQ(kt_free(env->conn, m.reply.offset), 0);
	/* the reply never appears in the queue */
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	kdbus_conn_close(peer.conn);
	return TEST_OK;
}

int test_sync_timeout(Env *env) {
	SyncPeer peer = { .conn = kt_hello(env, 0), .mode = 3 };
	KtMsg m;

	ASSERT_RETURN(peer.conn);
	ASSERT_EQ(sync_call(env, &peer, 100000000ULL, &m), -ETIMEDOUT);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);	/* no REPLY_TIMEOUT either */
	ASSERT_EQ(kt_drain(peer.conn), 1);
	ASSERT_EQ(kt_reply(peer.conn, kdbus_conn_get_id(env->conn), 1, 0x99), -EBADSLT);
	kdbus_conn_close(peer.conn);
	return TEST_OK;
}

int test_sync_peer_close(Env *env) {
	SyncPeer peer = { .conn = kt_hello(env, 0), .mode = 1 };
	KtMsg m;

	ASSERT_RETURN(peer.conn);
	ASSERT_EQ(sync_call(env, &peer, 5000000000ULL, &m), -EPIPE);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}

int test_sync_drop(Env *env) {
	SyncPeer peer = { .conn = kt_hello(env, 0), .mode = 2 };
	KtMsg m;

	ASSERT_RETURN(peer.conn);
	ASSERT_EQ(sync_call(env, &peer, 5000000000ULL, &m), -EPIPE);
	ASSERT_EQ(peer.result, 0);
	kdbus_conn_close(peer.conn);
	return TEST_OK;
}

static void *cancel_thread(void *p) {
	usleep(50000);
	if (write(*(int *)p, "c", 1) != 1)
		abort();
	return NULL;
}

int test_sync_cancel(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	pthread_t t;
	int p[2];
	KtMsg m;

	ASSERT_RETURN(c);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	m = KT_MSG(.dst_id = kdbus_conn_get_id(c), .cookie = 5, .flags = KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = kt_now_ns() + 5000000000ULL, .send_flags = KDBUS_SEND_SYNC_REPLY);
	m.cancel_fd = p[0];
	pthread_create(&t, NULL, cancel_thread, &p[1]);
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ECANCELED);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- metadata ---- */

/*
 * The final ABI's masking: of what the receiver asks for, the basic items
 * (CREDS, PIDS, AUXGROUPS, NAMES, CONN_DESCRIPTION, TIMESTAMP) always, the
 * others (a process's /proc items) when the sender allows them or when the
 * receiver could read them in the sender's /proc: it is the sender's user
 * (or privileged).
 */
int test_metadata_mask(Env *env) {
	KtHello hs = { .attach_send = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_CONN_DESCRIPTION, .description = "sender" };
	KtHello hr = { .attach_recv = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_AUXGROUPS | KDBUS_ATTACH_CONN_DESCRIPTION |
				      KDBUS_ATTACH_PID_COMM };
	struct kdbus_creds other;
	KtHello ho = { .attach_recv = hr.attach_recv };
	KdbusConn *s = NULL, *r = NULL, *o = NULL;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_EQ(kt_hello_as(env, &ho, &other, 5555, 5555), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &hs, &s), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &hr, &r), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &ho, &o), 0);
	ASSERT_EQ(kt_send(s, kdbus_conn_get_id(r), 1), 0);
	ASSERT_EQ(kt_recv(r, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_PIDS, 0));	/* not asked for */
	/* a basic item, whatever the sender allows (a process without
	 * supplementary groups may show none) */
	if (getgroups(0, NULL) > 0)
		ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_AUXGROUPS, 0));
	it = kt_msg_item(m, KDBUS_ITEM_CONN_DESCRIPTION, 0);
	ASSERT_RETURN(it && strcmp(it->str, "sender") == 0);
	/* not allowed by the sender, but the receiver is its user */
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0));
	/* metadata follows the payload item */
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_PAYLOAD_OFF, 0) < kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_EQ(kt_free(r, off), 0);

	/* another user gets the basic items only */
	ASSERT_EQ(kt_send(s, kdbus_conn_get_id(o), 2), 0);
	ASSERT_EQ(kt_recv(o, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CONN_DESCRIPTION, 0));
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0));
	ASSERT_EQ(kt_free(o, off), 0);
	kdbus_conn_close(s);
	kdbus_conn_close(r);
	kdbus_conn_close(o);
	return TEST_OK;
}

/* a file of /proc/self, NUL-terminated, its size in *ret_size; NULL if unreadable */
static char *read_proc_self(const char *name, size_t *ret_size) {
	static char buf[4096];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	*ret_size = n;
	return buf;
}

/*
 * The process items as the sender's /proc shows them: the names of the
 * thread and the process, the executable, the command line, the cgroup
 * (default hierarchy), capabilities, the LSM label, the audit ids.
 */
int test_metadata_proc_items(Env *env) {
	KtHello hr = { .attach_recv = _KDBUS_ATTACH_ALL };
	KdbusConn *r = NULL;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	char exe[4096], *s;
	uint64_t off;
	size_t n;
	ssize_t l;

	ASSERT_EQ(kt_hello_full(env->bus, &hr, &r), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(r), 1), 0);
	ASSERT_EQ(kt_recv(r, &m, &off), 0);

	it = kt_msg_item(m, KDBUS_ITEM_PIDS, 0);
	ASSERT_RETURN(it && it->pids.pid == (uint64_t)getpid() && it->pids.ppid == (uint64_t)getppid());
	s = read_proc_self("comm", &n);
	ASSERT_RETURN(s);
	s[strcspn(s, "\n")] = 0;
	it = kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0);
	ASSERT_RETURN(it && strcmp(it->str, s) == 0);
	it = kt_msg_item(m, KDBUS_ITEM_TID_COMM, 0);
	ASSERT_RETURN(it && strcmp(it->str, s) == 0);	/* the main thread */
	l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_RETURN(l > 0);
	exe[l] = 0;
	it = kt_msg_item(m, KDBUS_ITEM_EXE, 0);
	ASSERT_RETURN(it && strcmp(it->str, exe) == 0);
	s = read_proc_self("cmdline", &n);
	ASSERT_RETURN(s);
	it = kt_msg_item(m, KDBUS_ITEM_CMDLINE, 0);
	ASSERT_RETURN(it && it->size - KDBUS_ITEM_HEADER_SIZE == n + (s[n - 1] != 0));
	ASSERT_RETURN(memcmp(it->str, s, n) == 0 && it->str[it->size - KDBUS_ITEM_HEADER_SIZE - 1] == 0);
	/* /proc shows the default hierarchy once cgroup2 is mounted (the
	 * kernel module has it anyway) */
	s = read_proc_self("cgroup", &n);
	if (s && strncmp(s, "0::", 3) != 0 && (s = strstr(s, "\n0::")))
		s++;
	if (s && strncmp(s, "0::", 3) == 0) {
		s += 3;
		s[strcspn(s, "\n")] = 0;
		it = kt_msg_item(m, KDBUS_ITEM_CGROUP, 0);
		ASSERT_RETURN(it && strcmp(it->str, s) == 0);
	}
	it = kt_msg_item(m, KDBUS_ITEM_CAPS, 0);
	ASSERT_RETURN(it);
	s = read_proc_self("../../proc/sys/kernel/cap_last_cap", &n);
	ASSERT_RETURN(s && it->caps.last_cap == (uint32_t)atoi(s));
	ASSERT_EQ(it->size, KDBUS_ITEM_HEADER_SIZE + 4 + 4 * ((it->caps.last_cap / 32 + 1) * 4));
	s = read_proc_self("attr/current", &n);
	if (s && (s[strcspn(s, "\n")] = 0, *s)) {
		it = kt_msg_item(m, KDBUS_ITEM_SECLABEL, 0);
		ASSERT_RETURN(it && strcmp(it->str, s) == 0);
	}
	s = read_proc_self("loginuid", &n);
	if (s) {
		it = kt_msg_item(m, KDBUS_ITEM_AUDIT, 0);
		ASSERT_RETURN(it && it->audit.loginuid == (uint32_t)strtoul(s, NULL, 10));
		s = read_proc_self("sessionid", &n);
		ASSERT_RETURN(s && it->audit.sessionid == (uint32_t)strtoul(s, NULL, 10));
	}
	ASSERT_EQ(kt_free(r, off), 0);
	kdbus_conn_close(r);
	return TEST_OK;
}

int test_metadata_timestamp(Env *env) {
	KtHello hr = { .attach_recv = KDBUS_ATTACH_TIMESTAMP };
	KdbusConn *r = NULL;
	uint64_t seq[3], before = kt_now_ns();

	ASSERT_EQ(kt_hello_full(env->bus, &hr, &r), 0);
	ASSERT_EQ(kt_match_id(r, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(r), 1), 0);
	kdbus_conn_close(kt_hello(env, 0));	/* an ID_ADD notification */
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(r), 2), 0);
	for (int i = 0; i < 3; i++) {
		struct kdbus_msg *m;
		struct kdbus_item *it;
		uint64_t off;

		ASSERT_EQ(kt_recv(r, &m, &off), 0);
		it = kt_msg_item(m, KDBUS_ITEM_TIMESTAMP, 0);
		ASSERT_RETURN(it);
		ASSERT_RETURN(it->timestamp.monotonic_ns >= before);
		ASSERT_RETURN(it->timestamp.realtime_ns > 0);
		seq[i] = it->timestamp.seqnum;
		ASSERT_EQ(kt_free(r, off), 0);
	}
	ASSERT_RETURN(seq[0] < seq[1] && seq[1] < seq[2]);
	kdbus_conn_close(r);
	return TEST_OK;
}

int test_metadata_names(Env *env) {
	KtHello hr = { .attach_recv = KDBUS_ATTACH_NAMES };
	KdbusConn *r = NULL;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_EQ(kt_hello_full(env->bus, &hr, &r), 0);
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.MetaA", 0, NULL), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(r), 1), 0);
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.MetaB", 0, NULL), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(r), 2), 0);

	ASSERT_EQ(kt_recv(r, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_OWNED_NAME, 0);
	ASSERT_RETURN(it && strcmp(it->name.name, "org.kt.MetaA") == 0);
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_OWNED_NAME, 1));
	ASSERT_EQ(kt_free(r, off), 0);
	ASSERT_EQ(kt_recv(r, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_OWNED_NAME, 1));	/* names at send time */
	ASSERT_EQ(kt_free(r, off), 0);
	kdbus_conn_close(r);
	return TEST_OK;
}

/* ---- chat ---- */

int test_chat(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	struct kdbus_info *list;
	uint64_t flags, size, off, cookie = 1;
	struct kdbus_msg m;

	ASSERT_RETURN(a && b);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.test", KDBUS_NAME_ALLOW_REPLACEMENT, &flags), 0);
	ASSERT_RETURN(flags & KDBUS_NAME_ACQUIRED);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.baz", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.baz", KDBUS_NAME_QUEUE, &flags), 0);
	ASSERT_RETURN(flags & KDBUS_NAME_IN_QUEUE);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.double", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.double", 0, &flags), 0);
	ASSERT_RETURN(!(flags & KDBUS_NAME_ACQUIRED));
	ASSERT_EQ(kt_name_release(a, "foo.bar.double"), 0);
	ASSERT_EQ(kt_name_release(a, "foo.bar.double"), -ESRCH);
	ASSERT_EQ(kt_list(b, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS | KDBUS_LIST_QUEUED,
			  &list, &size, &off), 0);
	ASSERT_RETURN(size > 0);
	ASSERT_EQ(kt_free(b, off), 0);
	ASSERT_EQ(kt_match_empty(a, 0), 0);
	ASSERT_EQ(kt_match_empty(b, 0), 0);

	/* ping-pong */
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(b), cookie), 0);
	for (int i = 0; i < 100; i++) {
		KdbusConn *from = (i & 1) ? a : b, *to = (i & 1) ? b : a;

		ASSERT_EQ(kt_recv_free(from, &m), 0);
		ASSERT_EQ(m.cookie, cookie);
		ASSERT_EQ(kt_send(from, kdbus_conn_get_id(to), ++cookie), 0);
	}
	ASSERT_EQ(kt_drain(a) + kt_drain(b), 1);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

static void *byebye_thread(void *p) {
	usleep(50000);
	*(int *)((void **)p)[1] = kt_byebye(((KdbusConn **)p)[0]);
	return NULL;
}

int test_sync_byebye_self(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	int result = -1;
	void *args[2] = { env->conn, &result };
	pthread_t t;
	KtMsg m;

	ASSERT_RETURN(c);
	m = KT_MSG(.dst_id = kdbus_conn_get_id(c), .cookie = 5, .flags = KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = kt_now_ns() + 5000000000ULL, .send_flags = KDBUS_SEND_SYNC_REPLY);
	pthread_create(&t, NULL, byebye_thread, args);
	/* our own connection goes away while we wait */
	ASSERT_EQ(kt_send_msg(env->conn, &m), -ECONNRESET);
	pthread_join(t, NULL);
	ASSERT_EQ(result, 0);
	ASSERT_EQ(kt_drain(c), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

typedef struct FdPeer {
	KdbusConn *conn;
	int fd;
	int result;
} FdPeer;

static void *fd_peer(void *p) {
	FdPeer *s = p;
	struct kdbus_msg m;
	KtMsg r;

	for (int i = 0; i < 2000 && !kdbus_conn_has_messages(s->conn); i++)
		usleep(1000);
	s->result = kt_recv_free(s->conn, &m);
	if (s->result < 0)
		return NULL;
	r = KT_MSG(.dst_id = m.src_id, .cookie = 2, .cookie_reply = m.cookie, .fds = &s->fd, .n_fds = 1);
	s->result = kt_send_msg(s->conn, &r);
	return NULL;
}

int test_sync_reply_ecomm(Env *env) {
	KdbusConn *req = kt_hello(env, 0);	/* no ACCEPT_FD */
	FdPeer peer = { .conn = kt_hello(env, 0), .fd = 0 };
	pthread_t t;
	KtMsg m;

	ASSERT_RETURN(req && peer.conn);
	m = KT_MSG(.dst_id = kdbus_conn_get_id(peer.conn), .cookie = 7, .flags = KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = kt_now_ns() + 5000000000ULL, .send_flags = KDBUS_SEND_SYNC_REPLY);
	pthread_create(&t, NULL, fd_peer, &peer);
	/* the reply failed with ECOMM on the replying side */
	ASSERT_EQ(kt_send_msg(req, &m), -EREMOTEIO);
	pthread_join(t, NULL);
	ASSERT_EQ(peer.result, -ECOMM);
	kdbus_conn_close(req);
	kdbus_conn_close(peer.conn);
	return TEST_OK;
}

/*
 * The answer to a synchronous call carries fds: they are the caller's
 * (installed in its fd table when the SEND returns), numbered in the
 * answer's FDS item, and refer to the files the callee sent.
 */
int test_sync_reply_fds(Env *env) {
	KdbusConn *req = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	FdPeer peer = { .conn = kt_hello(env, 0) };
	struct stat a, b;
	struct kdbus_msg *msg;
	struct kdbus_item *it;
	pthread_t t;
	KtMsg m;
	int p[2];

	ASSERT_RETURN(req && peer.conn);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	peer.fd = p[1];
	m = KT_MSG(.dst_id = kdbus_conn_get_id(peer.conn), .cookie = 8, .flags = KDBUS_MSG_EXPECT_REPLY,
		   .timeout_ns = kt_now_ns() + 5000000000ULL, .send_flags = KDBUS_SEND_SYNC_REPLY);
	pthread_create(&t, NULL, fd_peer, &peer);
	ASSERT_EQ(kt_send_msg(req, &m), 0);
	pthread_join(t, NULL);
	ASSERT_EQ(peer.result, 0);
	msg = kdbus_pool_ptr(req, m.reply.offset);
	ASSERT_EQ(msg->cookie_reply, 8);
	it = kt_msg_item(msg, KDBUS_ITEM_FDS, 0);
	ASSERT_RETURN(it && it->size == KDBUS_ITEM_HEADER_SIZE + sizeof(int));
	ASSERT_RETURN(it->fds[0] >= 0 && it->fds[0] != p[1]);
	ASSERT_EQ(fstat(it->fds[0], &a), 0);
	ASSERT_EQ(fstat(p[1], &b), 0);
	ASSERT_RETURN(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	ASSERT_EQ(fcntl(it->fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* the installed fd writes into the caller's pipe */
	ASSERT_EQ(write(it->fds[0], "x", 1), 1);
	char c = 0;
	ASSERT_EQ(read(p[0], &c, 1), 1);
	ASSERT_EQ(c, 'x');
	close(it->fds[0]);
	ASSERT_EQ(kt_free(req, m.reply.offset), 0);
	close(p[0]);
	close(p[1]);
	kdbus_conn_close(req);
	kdbus_conn_close(peer.conn);
	return TEST_OK;
}

/*
 * The final ABI: the kernel's notifications are charged to a quota of
 * their own in the receiver (256 messages), apart from every user's: a
 * full user share does not lose them, a full kernel share does (counted
 * as dropped), REPLY_DEAD included.
 */
static int notify_quota_final(Env *env, KdbusConn *c) {
	uint64_t id = kdbus_conn_get_id(c);
	struct kdbus_cmd_recv r;
	KdbusConn *d;

	for (int i = 0; i < 256; i++)
		ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
	ASSERT_EQ(kt_send(env->conn, id, 999), -ENOBUFS);
	kdbus_conn_close(kt_hello(env, 0));
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_EQ(r.dropped_msgs, 0);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_drain(c), 256);	/* 255 messages and the notification */

	for (int i = 0; i < 256; i++)
		kdbus_conn_close(kt_hello(env, 0));
	/* the kernel's share is full: this one is dropped */
	kdbus_conn_close(kt_hello(env, 0));
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_RETURN(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	ASSERT_EQ(r.dropped_msgs, 1);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_drain(c), 255);

	/* reply notifications are lost the same way */
	d = kt_hello(env, 0);
	ASSERT_RETURN(d);
	ASSERT_EQ(kt_drain(c), 1);	/* d's ID_ADD */
	ASSERT_EQ(kt_call(c, kdbus_conn_get_id(d), 1, kt_now_ns() + 10000000000ULL), 0);
	for (int i = 0; i < 256; i++)
		kdbus_conn_close(kt_hello(env, 0));
	kdbus_conn_close(d);	/* REPLY_DEAD does not fit */
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_EQ(r.dropped_msgs, 1);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_drain(c), 255);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_notify_quota(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_cmd_recv r;
	uint64_t id;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	ASSERT_EQ(kt_match_id(c, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	if (env->backend == KDBUS_BACKEND_IOCTL)
		return notify_quota_final(env, c);
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
	/* the notification does not fit: counted as dropped */
	kdbus_conn_close(kt_hello(env, 0));
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_RETURN(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	ASSERT_EQ(r.dropped_msgs, 1);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_drain(c), 255);
	/* reply notifications are lost the same way */
	{
		KdbusConn *d = kt_hello(env, 0);

		ASSERT_RETURN(d);
		ASSERT_EQ(kt_drain(c), 1);	/* d's ID_ADD */
		ASSERT_EQ(kt_call(c, kdbus_conn_get_id(d), 1, kt_now_ns() + 10000000000ULL), 0);
		for (int i = 0; i < 256; i++)
			ASSERT_EQ(kt_send(env->conn, id, i + 1), 0);
		kdbus_conn_close(d);	/* REPLY_DEAD does not fit */
	}
	ASSERT_EQ(kt_recv_flags(c, 0, 0, &r), 0);
	ASSERT_EQ(r.dropped_msgs, 1);
	kt_free(c, r.msg.offset);
	ASSERT_EQ(kt_drain(c), 255);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_monitor_fds(Env *env) {
	KtHello h = { .flags = KDBUS_HELLO_MONITOR };
	KdbusConn *mon = NULL, *c = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	KtMsg m = KT_MSG(.cookie = 1);
	struct kdbus_msg *msg;
	uint64_t off;
	int p[2];

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &mon), 0);
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	m.dst_id = kdbus_conn_get_id(c);
	m.fds = &p[1];
	m.n_fds = 1;
	ASSERT_EQ(kt_send_msg(env->conn, &m), 0);
	/* a monitor without ACCEPT_FD sees the message without its fds */
	ASSERT_EQ(kt_recv(mon, &msg, &off), 0);
	ASSERT_EQ(msg->cookie, 1);
	ASSERT_RETURN(!kt_msg_item(msg, KDBUS_ITEM_FDS, 0));
	ASSERT_EQ(kt_free(mon, off), 0);
	ASSERT_EQ(kt_recv(c, &msg, &off), 0);
	close(kt_msg_item(msg, KDBUS_ITEM_FDS, 0)->fds[0]);
	ASSERT_EQ(kt_free(c, off), 0);
	close(p[0]);
	close(p[1]);
	kdbus_conn_close(mon);
	kdbus_conn_close(c);
	return TEST_OK;
}
