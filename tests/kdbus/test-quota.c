/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-quota.c - per-user accounting (kdbus/user.h, userspace extension):
 * messages are charged to the receiver's user on behalf of the sender's,
 * who only gets a share of what is left; names, matches and pending
 * replies count against the connection's own user across all its
 * connections.
 */

#include <errno.h>
#include <string.h>

#include "kdbus-test.h"

#define UID_R 7001	/* the receiving user */
#define UID_A 7002	/* a flooding sender */
#define UID_B 7003	/* another sender */

/* a sender over its share of a stuck reader's budget gets EDQUOT; a second
 * user still gets through; the reader's own user is limited by the budget */
int test_quota_user_share(Env *env) {
	KdbusLimits l = { .max_bytes_per_user = 64 * 1024, .max_msgs_per_conn = 100000 };
	static uint8_t buf[1024];
	KdbusConn *r, *a, *b;
	unsigned n_a = 0, n_b = 0;
	uint64_t id;
	KtMsg m;
	int k;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	r = kt_hello_uid(env, UID_R, UID_R, 0);
	a = kt_hello_uid(env, UID_A, UID_A, 0);
	b = kt_hello_uid(env, UID_B, UID_B, 0);
	ASSERT_RETURN(r && a && b);
	id = kdbus_conn_get_id(r);

	m = KT_MSG(.dst_id = id, .vec = { buf }, .vec_size = { sizeof(buf) });
	for (;;) {
		m.cookie = ++n_a;
		k = kt_send_msg(a, &m);
		if (k < 0)
			break;
		ASSERT_RETURN(n_a < 1000);
	}
	ASSERT_EQ(k, -EDQUOT);
	n_a--;
	/* alone, A got at most about half of the budget */
	ASSERT_RETURN(n_a >= 16 && n_a * sizeof(buf) <= 64 * 1024 / 2);

	/* B is not starved by A: it gets a share of what is left */
	for (;;) {
		m.cookie = 10000 + ++n_b;
		k = kt_send_msg(b, &m);
		if (k < 0)
			break;
		ASSERT_RETURN(n_b < 1000);
	}
	ASSERT_EQ(k, -EDQUOT);
	n_b--;
	ASSERT_RETURN(n_b >= 4);

	/* reading gives the room back */
	ASSERT_EQ(kt_drain(r), (int)(n_a + n_b));
	m.cookie = 99999;
	ASSERT_EQ(kt_send_msg(a, &m), 0);
	ASSERT_EQ(kt_drain(r), 1);

	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(r);
	return TEST_OK;
}

/* the message count and the fds of a user's connections */
int test_quota_user_msgs(Env *env) {
	KdbusLimits l = { .max_msgs_per_user = 12, .max_msgs_per_conn = 100000 };
	KdbusConn *r1, *r2, *a, *b;
	unsigned n = 0;
	int k;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	/* two connections of one user share one budget */
	r1 = kt_hello_uid(env, UID_R, UID_R, 0);
	r2 = kt_hello_uid(env, UID_R, UID_R, 0);
	a = kt_hello_uid(env, UID_A, UID_A, 0);
	b = kt_hello_uid(env, UID_B, UID_B, 0);
	ASSERT_RETURN(r1 && r2 && a && b);

	while ((k = kt_send(a, kdbus_conn_get_id(n % 2 ? r1 : r2), n + 1)) == 0)
		n++;
	ASSERT_EQ(k, -EDQUOT);
	ASSERT_EQ(n, 6);	/* (share + 1) * 2 - share <= remaining */
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(r1), 100), 0);
	/* the user itself may use everything left */
	n = 0;
	while ((k = kt_send(r2, kdbus_conn_get_id(r1), 200 + n)) == 0)
		n++;
	ASSERT_EQ(k, -EDQUOT);
	ASSERT_EQ(n, 12 - 6 - 1);
	ASSERT_EQ(kt_drain(r1) + kt_drain(r2), 12);
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(r1), 300), 0);

	kdbus_conn_close(r1);
	kdbus_conn_close(r2);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

/* a broadcast to a stuck reader is dropped for that reader only */
int test_quota_broadcast_stuck_reader(Env *env) {
	KdbusLimits l = { .max_msgs_per_user = 8, .max_msgs_per_conn = 100000 };
	KdbusConn *stuck, *live, *a;
	struct kdbus_cmd_recv rcv;
	unsigned got = 0;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	stuck = kt_hello_uid(env, UID_R, UID_R, 0);
	live = kt_hello_uid(env, UID_B, UID_B, 0);
	a = kt_hello_uid(env, UID_A, UID_A, 0);
	ASSERT_RETURN(stuck && live && a);
	ASSERT_EQ(kt_match_empty(stuck, 1), 0);
	ASSERT_EQ(kt_match_empty(live, 1), 0);
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(kt_broadcast(a, i + 1, NULL), 0);
		got += kt_drain(live);
	}
	ASSERT_EQ(got, 100);
	ASSERT_EQ(kt_recv_flags(stuck, 0, 0, &rcv), 0);
	ASSERT_RETURN(rcv.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	/* A's share: two actors hold the reader's user's resources (A, and
	 * the reader itself with its match), so A gets 2 of the 8 */
	ASSERT_EQ(rcv.dropped_msgs, 100 - 2);
	kt_free(stuck, rcv.msg.offset);

	kdbus_conn_close(stuck);
	kdbus_conn_close(live);
	kdbus_conn_close(a);
	return TEST_OK;
}

/* names, matches and pending replies: per user over all its connections */
int test_quota_user_objects(Env *env) {
	KdbusLimits l = { .max_names_per_user = 3, .max_matches_per_user = 2, .max_requests_per_user = 2 };
	KdbusConn *c1, *c2, *o, *peer;
	uint64_t pid;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	c1 = kt_hello_uid(env, UID_A, UID_A, 0);
	c2 = kt_hello_uid(env, UID_A, UID_A, 0);
	o = kt_hello_uid(env, UID_B, UID_B, 0);
	peer = kt_hello_uid(env, UID_R, UID_R, 0);
	ASSERT_RETURN(c1 && c2 && o && peer);
	pid = kdbus_conn_get_id(peer);

	ASSERT_EQ(kt_name_acquire(c1, "org.kt.q.a", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c1, "org.kt.q.b", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c2, "org.kt.q.c", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c2, "org.kt.q.d", 0, NULL), -E2BIG);
	ASSERT_EQ(kt_name_acquire(o, "org.kt.q.d", 0, NULL), 0);	/* another user */
	ASSERT_EQ(kt_name_release(c1, "org.kt.q.a"), 0);
	ASSERT_EQ(kt_name_acquire(c2, "org.kt.q.e", 0, NULL), 0);

	ASSERT_EQ(kt_match_empty(c1, 1), 0);
	ASSERT_EQ(kt_match_empty(c2, 1), 0);
	ASSERT_EQ(kt_match_empty(c2, 2), -EMFILE);
	ASSERT_EQ(kt_match_empty(o, 1), 0);
	ASSERT_EQ(kt_match_remove(c1, 1), 0);
	ASSERT_EQ(kt_match_empty(c2, 2), 0);

	ASSERT_EQ(kt_call(c1, pid, 1, 10ULL * 1000000000ULL), 0);
	ASSERT_EQ(kt_call(c2, pid, 2, 10ULL * 1000000000ULL), 0);
	ASSERT_EQ(kt_call(c2, pid, 3, 10ULL * 1000000000ULL), -EMLINK);
	ASSERT_EQ(kt_call(o, pid, 4, 10ULL * 1000000000ULL), 0);
	/* closing a connection gives everything back */
	kdbus_conn_close(c1);
	ASSERT_EQ(kt_call(c2, pid, 5, 10ULL * 1000000000ULL), 0);
	ASSERT_EQ(kt_name_acquire(c2, "org.kt.q.f", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c2, "org.kt.q.g", 0, NULL), -E2BIG);

	kdbus_conn_close(c2);
	kdbus_conn_close(o);
	kdbus_conn_close(peer);
	return TEST_OK;
}

/* per receiving connection (the kernel's rule): a sender of another user
 * may take a third of the unused queue half of the pool; the receiver's
 * own user is not limited by it */
int test_quota_conn_share(Env *env) {
	struct kdbus_creds cr = { UID_R, UID_R, UID_R, UID_R, UID_R, UID_R, UID_R, UID_R };
	KtHello h = { .pool_size = 256 * 1024, .attach_send = _KDBUS_ATTACH_ALL, .creds = &cr };
	static uint8_t buf[1024];
	KdbusConn *r = NULL, *a, *b, *self;
	unsigned n_a = 0, n_b = 0, n_self = 0;
	KtMsg m;
	int k;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &r), 0);
	a = kt_hello_uid(env, UID_A, UID_A, 0);
	b = kt_hello_uid(env, UID_B, UID_B, 0);
	self = kt_hello_uid(env, UID_R, UID_R, 0);
	ASSERT_RETURN(a && b && self);

	m = KT_MSG(.dst_id = kdbus_conn_get_id(r), .vec = { buf }, .vec_size = { sizeof(buf) });
	while ((k = kt_send_msg(a, (m.cookie = ++n_a, &m))) == 0)
		ASSERT_RETURN(n_a < 1000);
	ASSERT_EQ(k, -EDQUOT);
	n_a--;
	/* a third of the 128 KiB queue half */
	ASSERT_RETURN(n_a * (sizeof(buf) + 64) <= 128 * 1024 / 3 + 2048 && n_a >= 32);
	while ((k = kt_send_msg(b, (m.cookie = 5000 + ++n_b, &m))) == 0)
		ASSERT_RETURN(n_b < 1000);
	ASSERT_EQ(k, -EDQUOT);
	n_b--;
	ASSERT_RETURN(n_b >= 16);
	/* the receiver's own user fills what is left, up to the pool's rule */
	while ((k = kt_send_msg(self, (m.cookie = 9000 + ++n_self, &m))) == 0)
		ASSERT_RETURN(n_self < 1000);
	ASSERT_RETURN(k == -EXFULL || k == -ENOBUFS);
	ASSERT_RETURN(n_self > n_b);
	ASSERT_EQ(kt_drain(r), (int)(n_a + n_b + n_self - 1));
	ASSERT_EQ(kt_send_msg(a, &m), 0);

	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(self);
	kdbus_conn_close(r);
	return TEST_OK;
}

static void count_wakeup(KdbusConn *conn, void *userdata) {
	(void)conn;
	(*(unsigned *)userdata)++;
}

/*
 * The in-flight charge of a sender (kdbus_conn_set_inflight_limit(),
 * userspace extension): a message counts once however many receivers get
 * it, until the last of them freed it; SEND says when the charge is at a
 * limit, and the sender is woken when it drops below both.
 */
int test_quota_inflight(Env *env) {
	static uint8_t buf[400];
	KdbusConn *a, *r1, *r2;
	unsigned wakes = 0;
	int fds[2] = { 0, 0 };
	KtMsg m;

	USERSPACE_ONLY(env);
	a = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	r1 = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	r2 = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_RETURN(a && r1 && r2);
	ASSERT_EQ(kdbus_conn_set_inflight_limit(a, 1000, 2), 0);
	kdbus_conn_set_wakeup(a, count_wakeup, &wakes);
	ASSERT_EQ(kt_match_empty(r1, 1), 0);
	ASSERT_EQ(kt_match_empty(r2, 1), 0);

	/* two receivers, charged once: 400, 800, then 1200 >= 1000 */
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .flags = KDBUS_MSG_SIGNAL, .vec = { buf },
		   .vec_size = { sizeof(buf) });
	for (int i = 1; i <= 3; i++) {
		m.cookie = i;
		ASSERT_EQ(kt_send_msg(a, &m), 0);
		ASSERT_EQ(!!(m.return_flags & KDBUS_SEND_RETURN_INFLIGHT_FULL), i == 3);
	}
	ASSERT_RETURN(kdbus_conn_inflight_full(a));
	/* one receiver done: the other still holds all three */
	ASSERT_EQ(kt_drain(r1), 3);
	ASSERT_RETURN(kdbus_conn_inflight_full(a) && wakes == 0);
	/* the last copy of the first goes: 800, below, the sender is woken */
	ASSERT_EQ(kt_recv_free(r2, NULL), 0);
	ASSERT_EQ(wakes, 1);
	ASSERT_RETURN(!kdbus_conn_inflight_full(a));
	ASSERT_EQ(kt_drain(r2), 2);
	ASSERT_EQ(wakes, 1);		/* woken once, when it dropped below */

	/* a broadcast nobody gets is given back at once */
	ASSERT_EQ(kt_match_remove(r1, 1), 0);
	ASSERT_EQ(kt_match_remove(r2, 1), 0);
	for (int i = 0; i < 5; i++) {
		m.cookie = 10 + i;
		ASSERT_EQ(kt_send_msg(a, &m), 0);
		ASSERT_EQ(m.return_flags & KDBUS_SEND_RETURN_INFLIGHT_FULL, 0);
	}

	/* fds: 2 >= 2; a receiver that goes away gives the charge back */
	m = KT_MSG(.dst_id = kdbus_conn_get_id(r1), .cookie = 20, .vec = { buf }, .vec_size = { 8 },
		   .fds = fds, .n_fds = 2);
	ASSERT_EQ(kt_send_msg(a, &m), 0);
	ASSERT_RETURN(m.return_flags & KDBUS_SEND_RETURN_INFLIGHT_FULL);
	ASSERT_RETURN(kdbus_conn_inflight_full(a));
	kdbus_conn_close(r1);
	ASSERT_EQ(wakes, 2);
	ASSERT_RETURN(!kdbus_conn_inflight_full(a));

	kdbus_conn_close(a);
	kdbus_conn_close(r2);
	return TEST_OK;
}

/* a sender that goes away while its messages are charged: they stay
 * queued, and the receivers free them later (the charge outlives it) */
int test_quota_inflight_sender_gone(Env *env) {
	static uint8_t buf[4096];
	KdbusConn *a, *r1, *r2;
	struct kdbus_msg *msg;
	uint64_t off;
	KtMsg m;

	USERSPACE_ONLY(env);
	a = kt_hello(env, 0);
	r1 = kt_hello(env, 0);
	r2 = kt_hello(env, 0);
	ASSERT_RETURN(a && r1 && r2);
	ASSERT_EQ(kdbus_conn_set_inflight_limit(a, 1 << 20, 16), 0);
	ASSERT_EQ(kt_match_empty(r1, 1), 0);
	ASSERT_EQ(kt_match_empty(r2, 1), 0);
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .flags = KDBUS_MSG_SIGNAL, .vec = { buf },
		   .vec_size = { sizeof(buf) });
	for (int i = 1; i <= 4; i++) {
		m.cookie = i;
		ASSERT_EQ(kt_send_msg(a, &m), 0);
	}
	m = KT_MSG(.dst_id = kdbus_conn_get_id(r1), .cookie = 5, .vec = { buf }, .vec_size = { sizeof(buf) });
	ASSERT_EQ(kt_send_msg(a, &m), 0);
	/* one received and not yet freed, the rest queued */
	ASSERT_EQ(kt_recv(r1, &msg, &off), 0);
	kdbus_conn_close(a);
	ASSERT_EQ(kt_drain(r2), 4 + 1);	/* and the sender's ID_REMOVE */
	ASSERT_EQ(kt_free(r1, off), 0);
	/* r1 goes with 4 still queued */
	kdbus_conn_close(r1);
	kdbus_conn_close(r2);
	return TEST_OK;
}
