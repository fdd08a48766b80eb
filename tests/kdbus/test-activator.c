/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-activator.c - activators and the policy db (selftests
 * test-activator.c, test-message.c activator quota, test-policy.c,
 * test-policy-priv.c; other users are made with HELLO identity items)
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus-test.h"

#define UID_A 60001
#define UID_B 60002
#define GID_A 61001

static const struct kdbus_policy_access world_talk = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 };
static const struct kdbus_policy_access world_own = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 };

int test_activator_handover(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0);
	struct kdbus_cmd_recv r;
	struct kdbus_msg m;
	uint64_t flags, ida;

	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_ADD, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_CHANGE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Activated", NULL, 0, &act), 0);
	ida = kdbus_conn_get_id(act);
	{
		struct kdbus_msg *n;
		struct kdbus_item *it;
		uint64_t off;

		ASSERT_EQ(kt_recv(env->conn, &n, &off), 0);
		it = kt_msg_item(n, KDBUS_ITEM_NAME_ADD, 0);
		ASSERT_RETURN(it && it->name_change.new_id.id == ida);
		ASSERT_RETURN(it->name_change.new_id.flags & KDBUS_NAME_ACTIVATOR);
		ASSERT_EQ(kt_free(env->conn, off), 0);
	}
	/* messages to the name queue on the activator */
	for (uint64_t i = 1; i <= 5; i++)
		ASSERT_EQ(kt_send_name(env->conn, "org.kt.Activated", i, 0), 0);
	ASSERT_RETURN(kdbus_conn_has_messages(act));
	/* the activator may look, and receive (the final ABI): what it
	 * receives is not handed over */
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_PEEK, 0, &r), 0);
	ASSERT_EQ(kt_free(act, r.msg.offset), 0);
	{
		KtMsg urgent = KT_MSG(.dst_name = "org.kt.Activated", .cookie = 6, .priority = -1);

		ASSERT_EQ(kt_send_msg(env->conn, &urgent), 0);
		ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_USE_PRIORITY, -1, &r), 0);
		ASSERT_EQ(((struct kdbus_msg *)kdbus_pool_ptr(act, r.msg.offset))->cookie, 6);
		ASSERT_EQ(kt_free(act, r.msg.offset), 0);
	}

	/* any acquire takes the name and the queue, in order, appended to
	 * what the new owner already had (as the kernel and dbus-daemon do) */
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(svc), 100), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Activated", 0, &flags), 0);
	ASSERT_RETURN(flags & KDBUS_NAME_PRIMARY);
	ASSERT_RETURN(!kdbus_conn_has_messages(act));
	ASSERT_EQ(kt_recv_free(svc, &m), 0);
	ASSERT_EQ(m.cookie, 100);	/* queued on svc before the handover */
	for (uint64_t i = 1; i <= 5; i++) {
		ASSERT_EQ(kt_recv_free(svc, &m), 0);
		ASSERT_EQ(m.cookie, i);
	}
	{
		struct kdbus_msg *n;
		struct kdbus_item *it;
		uint64_t off;

		ASSERT_EQ(kt_recv(env->conn, &n, &off), 0);
		it = kt_msg_item(n, KDBUS_ITEM_NAME_CHANGE, 0);
		ASSERT_RETURN(it);
		ASSERT_EQ(it->name_change.old_id.id, ida);
		ASSERT_RETURN(it->name_change.old_id.flags & KDBUS_NAME_ACTIVATOR);
		ASSERT_EQ(it->name_change.new_id.id, kdbus_conn_get_id(svc));
		ASSERT_EQ(kt_free(env->conn, off), 0);
	}
	/* now the name goes to the service directly */
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Activated", 6, 0), 0);
	ASSERT_EQ(kt_drain(svc), 1);
	ASSERT_RETURN(!kdbus_conn_has_messages(act));
	kdbus_conn_close(svc);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_reply_after_handover(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0);
	struct kdbus_msg m;

	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Call", NULL, 0, &act), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Call", 77, KDBUS_MSG_EXPECT_REPLY), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Call", 0, NULL), 0);
	ASSERT_EQ(kt_recv_free(svc, &m), 0);
	ASSERT_EQ(m.cookie, 77);
	/* the tracker moved with the message */
	ASSERT_EQ(kt_reply(svc, m.src_id, 1, 77), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie_reply, 77);
	kdbus_conn_close(svc);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_give_back(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0);
	struct kdbus_cmd_recv r;
	struct kdbus_msg *m;

	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Back", NULL, 0, &act), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Back", 0, NULL), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Back", 1, 0), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(svc), 2), 0);	/* by id: stays */
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Back", 3, 0), 0);
	ASSERT_EQ(kt_name_release(svc, "org.kt.Back"), 0);
	/* what was addressed to the name went back to the activator */
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_PEEK, 0, &r), 0);
	m = kdbus_pool_ptr(act, r.msg.offset);
	ASSERT_EQ(m->cookie, 1);
	ASSERT_EQ(kt_free(act, r.msg.offset), 0);
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_DROP, 0, NULL), 0);
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_PEEK, 0, &r), 0);
	m = kdbus_pool_ptr(act, r.msg.offset);
	ASSERT_EQ(m->cookie, 3);
	ASSERT_EQ(kt_free(act, r.msg.offset), 0);
	ASSERT_EQ(kt_drain(svc), 1);
	/* the activator owns the name again */
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Back", 4, KDBUS_MSG_NO_AUTO_START), -EADDRNOTAVAIL);
	kdbus_conn_close(svc);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_give_back_on_close(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0), *svc2 = kt_hello(env, 0);
	struct kdbus_msg m;

	ASSERT_RETURN(svc && svc2);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Crash", NULL, 0, &act), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Crash", 0, NULL), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Crash", 1, KDBUS_MSG_EXPECT_REPLY), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(svc), 2), 0);
	kdbus_conn_close(svc);
	/* the call addressed to the name survives the crash */
	ASSERT_RETURN(kdbus_conn_has_messages(act));
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);	/* no REPLY_DEAD for it */
	ASSERT_EQ(kt_name_acquire(svc2, "org.kt.Crash", 0, NULL), 0);
	ASSERT_EQ(kt_recv_free(svc2, &m), 0);
	ASSERT_EQ(m.cookie, 1);
	ASSERT_EQ(kt_reply(svc2, m.src_id, 5, 1), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie_reply, 1);
	kdbus_conn_close(svc2);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_no_auto_start(Env *env) {
	KdbusConn *act = NULL;

	ASSERT_EQ(kt_hello_activator(env, "org.kt.NoStart", NULL, 0, &act), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.NoStart", 1, KDBUS_MSG_NO_AUTO_START), -EADDRNOTAVAIL);
	ASSERT_RETURN(!kdbus_conn_has_messages(act));
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.NoStart", 1, 0), 0);
	ASSERT_RETURN(kdbus_conn_has_messages(act));
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_not_addressable(Env *env) {
	KdbusConn *act = NULL, *ph = NULL;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_EQ(kt_hello_activator(env, "org.kt.NoId", NULL, 0, &act), 0);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.NoIdPolicy", &world_talk, 1, &ph), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(act), 1), -ENXIO);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(ph), 1), -ENXIO);
	ASSERT_EQ(kt_send(act, kdbus_conn_get_id(env->conn), 1), -EOPNOTSUPP);
	ASSERT_EQ(kt_send(ph, kdbus_conn_get_id(env->conn), 1), -EOPNOTSUPP);
	ASSERT_EQ(kt_name_acquire(act, "org.kt.Second", 0, NULL), -EOPNOTSUPP);
	/* nor release: an activator's name goes with its connection */
	ASSERT_EQ(kt_name_release(act, "org.kt.NoId"), -EOPNOTSUPP);
	ASSERT_EQ(kt_name_release(ph, "org.kt.NoIdPolicy"), -EOPNOTSUPP);
	ASSERT_EQ(kt_recv(ph, NULL, NULL), -EOPNOTSUPP);
	/* CONN_INFO by name finds the activator, flagged as such */
	ASSERT_EQ(kt_conn_info(env->conn, 0, "org.kt.NoId", 0, &info, &off), 0);
	ASSERT_EQ(info->id, kdbus_conn_get_id(act));
	ASSERT_RETURN(info->flags & KDBUS_HELLO_ACTIVATOR);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(act);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_activator_duplicate(Env *env) {
	KdbusConn *a = NULL, *b = NULL, *svc = kt_hello(env, 0);

	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Dup", NULL, 0, &a), 0);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Dup", NULL, 0, &b), -EEXIST);
	/* an activator may register for a name a real owner holds */
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Dup2", 0, NULL), 0);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Dup2", NULL, 0, &b), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Dup2", 1, 0), 0);
	ASSERT_EQ(kt_drain(svc), 1);
	ASSERT_EQ(kt_name_release(svc, "org.kt.Dup2"), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Dup2", 2, 0), 0);
	ASSERT_RETURN(kdbus_conn_has_messages(b));
	/* when the activator goes, a name without owner goes too */
	kdbus_conn_close(a);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Dup", 1, 0), -ESRCH);
	kdbus_conn_close(b);
	kdbus_conn_close(svc);
	return TEST_OK;
}

int test_activator_peek_drop(Env *env) {
	KdbusConn *act = NULL;
	struct kdbus_cmd_recv r;

	ASSERT_EQ(kt_hello_activator(env, "org.kt.Drop", NULL, 0, &act), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Drop", 1, KDBUS_MSG_EXPECT_REPLY), 0);
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_PEEK, 0, &r), 0);
	ASSERT_EQ(kt_free(act, r.msg.offset), 0);
	ASSERT_EQ(kt_recv_flags(act, KDBUS_RECV_DROP, 0, NULL), 0);
	ASSERT_RETURN(!kdbus_conn_has_messages(act));
	/* a dropped call is dead for its caller */
	{
		struct kdbus_msg *m;
		uint64_t off;

		ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
		ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_REPLY_DEAD, 0));
		ASSERT_EQ(m->cookie_reply, 1);
		ASSERT_EQ(kt_free(env->conn, off), 0);
	}
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_quota_on_move(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0);
	struct kdbus_cmd_recv r;
	KdbusLimits l = { .max_msgs_per_conn = 8 };
	int got = 0;

	USERSPACE_ONLY(env);
	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.Quota", NULL, 0, &act), 0);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(kt_send_name(env->conn, "org.kt.Quota", i + 1, 0), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Quota", 99, 0), -ENOBUFS);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(svc), 100 + i), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Quota", 50, KDBUS_MSG_EXPECT_REPLY), -ENOBUFS);
	/* 3 already queued + 8 moved > 8: three are dropped and counted */
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.Other", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Quota", 0, NULL), 0);
	ASSERT_EQ(kt_recv_flags(svc, 0, 0, &r), 0);
	ASSERT_RETURN(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	ASSERT_EQ(r.dropped_msgs, 3);
	kt_free(svc, r.msg.offset);
	got = 1 + kt_drain(svc);
	ASSERT_EQ(got, 8);
	kdbus_conn_close(svc);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_activator_close_reply_dead(Env *env) {
	KdbusConn *act = NULL;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_EQ(kt_hello_activator(env, "org.kt.Gone", NULL, 0, &act), 0);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Gone", 9, KDBUS_MSG_EXPECT_REPLY), 0);
	kdbus_conn_close(act);
	ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_REPLY_DEAD, 0));
	ASSERT_EQ(m->cookie_reply, 9);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	return TEST_OK;
}

/* ---- policy ---- */

int test_policy_secure_default(Env *env) {
	KdbusConn *u, *v;

	u = kt_hello_uid(env, UID_A, GID_A, 0);
	v = kt_hello_uid(env, UID_B, GID_A, 0);
	ASSERT_RETURN(u && v);
	/* without a policy holder an unprivileged peer can own nothing */
	ASSERT_EQ(kt_name_acquire(u, "org.kt.Secure", 0, NULL), -EPERM);
	/* nor talk to another user, nor the other way round */
	ASSERT_EQ(kt_send(u, kdbus_conn_get_id(v), 1), -EPERM);
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.Secure", 0, NULL), 0);
	ASSERT_EQ(kt_send_name(u, "org.kt.Secure", 1, 0), -EPERM);
	/* the bus owner may talk to anyone */
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(u), 1), 0);
	ASSERT_EQ(kt_drain(u), 1);
	/* the same user always may */
	{
		KdbusConn *u2 = kt_hello_uid(env, UID_A, GID_A, 0);

		ASSERT_EQ(kt_send(u, kdbus_conn_get_id(u2), 1), 0);
		ASSERT_EQ(kt_drain(u2), 1);
		kdbus_conn_close(u2);
	}
	kdbus_conn_close(u);
	kdbus_conn_close(v);
	return TEST_OK;
}

int test_policy_own_world(Env *env) {
	KdbusConn *ph = NULL, *u;

	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.World", &world_own, 1, &ph), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.World", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.NotWorld", 0, NULL), -EPERM);
	kdbus_conn_close(ph);
	kdbus_conn_close(u);
	return TEST_OK;
}

int test_policy_own_user_group(Env *env) {
	struct kdbus_policy_access acc[] = {
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UID_B },
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, UID_A },	/* in the middle */
		{ KDBUS_POLICY_ACCESS_GROUP, KDBUS_POLICY_SEE, GID_A },
	};
	struct kdbus_policy_access grp = { KDBUS_POLICY_ACCESS_GROUP, KDBUS_POLICY_OWN, 62000 };
	KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .names = { "org.kt.User", "org.kt.Group" },
		      .access = { acc, &grp }, .n_access = { 3, 1 } };
	struct kdbus_creds cr = { UID_B, UID_B, UID_B, UID_B, GID_A, GID_A, GID_A, GID_A };
	uint64_t groups[] = { 62000 };
	KtHello hg = { .creds = &cr, .groups = groups, .n_groups = 1 };
	KdbusConn *ph = NULL, *a, *b, *g = NULL;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &ph), 0);
	a = kt_hello_uid(env, UID_A, GID_A, 0);
	b = kt_hello_uid(env, UID_B, GID_A, 0);
	ASSERT_RETURN(a && b);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.User", 0, NULL), 0);
	ASSERT_EQ(kt_name_release(a, "org.kt.User"), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.User", 0, NULL), -EPERM);	/* TALK only */
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Group", 0, NULL), -EPERM);
	/* a supplementary group grants it (on the kernel, a process in that
	 * group opens the fd: a privileged proxy's faked groups prove nothing) */
	if (env->backend == KDBUS_BACKEND_IOCTL) {
		hg.creds = NULL;
		hg.groups = NULL;
		hg.endpoint_fd = kt_open_as_groups(env->bus, UID_B, GID_A, groups, 1);
		hg.use_endpoint_fd = true;
		ASSERT_RETURN(hg.endpoint_fd >= 0);
	}
	ASSERT_EQ(kt_hello_full(env->bus, &hg, &g), 0);
	ASSERT_EQ(kt_name_acquire(g, "org.kt.Group", 0, NULL), 0);
	kdbus_conn_close(g);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_talk(Env *env) {
	struct kdbus_policy_access acc[] = {
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, UID_A },
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UID_B },
	};
	KdbusConn *ph = NULL, *a, *b, *c;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.Talk", acc, 2, &ph), 0);
	a = kt_hello_uid(env, UID_A, GID_A, 0);
	b = kt_hello_uid(env, UID_B, GID_A, 0);
	c = kt_hello_uid(env, UID_B + 1, GID_A, 0);
	ASSERT_RETURN(a && b && c);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Talk", 0, NULL), 0);
	ASSERT_EQ(kt_send_name(b, "org.kt.Talk", 1, 0), 0);
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(a), 2), 0);	/* by id: any name counts */
	ASSERT_EQ(kt_send_name(c, "org.kt.Talk", 3, 0), -EPERM);
	ASSERT_EQ(kt_drain(a), 2);
	/* OWN implies TALK: a talks to another owner of an OWN name? a owns it */
	ASSERT_EQ(kt_name_release(a, "org.kt.Talk"), 0);
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(a), 4), -EPERM);	/* no name left */
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(c);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_wildcard_any_depth(Env *env) {
	KdbusConn *ph = NULL, *u;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.wild.*", &world_own, 1, &ph), 0);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.wild.one", 0, NULL), 0);
	/* our extension: any depth below the prefix */
	ASSERT_EQ(kt_name_acquire(u, "org.kt.wild.two.three", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.wild.a.b.c.d", 0, NULL), 0);
	/* but not the prefix itself, nor a sibling */
	ASSERT_EQ(kt_name_acquire(u, "org.kt.wild", 0, NULL), -EPERM);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.wilder.x", 0, NULL), -EPERM);
	kdbus_conn_close(u);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_wildcard_one_element(Env *env) {
	KdbusConn *ph = NULL, *u;

	/* "ktone.*" is a valid wildcard entry (kshared/name.c): the name
	 * "ktone.*" has two elements, the last one "*" */
	ASSERT_EQ(kt_hello_policy(env, "ktone.*", &world_own, 1, &ph), 0);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_name_acquire(u, "ktone.x", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(u, "ktone.y.z", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(u, "kttwo.x", 0, NULL), -EPERM);
	kdbus_conn_close(u);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_exact_over_wildcard(Env *env) {
	struct kdbus_policy_access see = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE, 0 };
	KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .names = { "org.kt.ex.*", "org.kt.ex.closed", "org.kt.ex.deep.*" },
		      .access = { &world_own, &see, &see }, .n_access = { 1, 1, 1 } };
	KdbusConn *ph = NULL, *u;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &ph), 0);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ex.open", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ex.closed", 0, NULL), -EPERM);
	/* the nearest wildcard wins */
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ex.deep.x", 0, NULL), -EPERM);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ex.deeper.x", 0, NULL), 0);
	kdbus_conn_close(u);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_duplicate(Env *env) {
	KdbusConn *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .names = { "org.kt.dd", "org.kt.dd" },
		      .access = { &world_talk, &world_talk }, .n_access = { 1, 1 } };

	ASSERT_EQ(kt_hello_policy(env, "org.kt.dup", &world_talk, 1, &a), 0);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.dup", &world_talk, 1, &b), -EEXIST);
	/* exact and wildcard entries coexist */
	ASSERT_EQ(kt_hello_policy(env, "org.kt.dup.*", &world_talk, 1, &c), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &d), -EEXIST);
	/* an activator's entry conflicts too */
	ASSERT_EQ(kt_hello_activator(env, "org.kt.dup", &world_talk, 1, &d), -EEXIST);
	kdbus_conn_close(a);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.dup", &world_talk, 1, &b), 0);
	if (env->backend == KDBUS_BACKEND_IOCTL) {
		/* the final ABI: an activator always installs its name's entry,
		 * with the access it brings, maybe none */
		ASSERT_EQ(kt_hello_activator(env, "org.kt.dup", NULL, 0, &d), -EEXIST);
	} else {
		/* the in-process core: an activator without POLICY_ACCESS
		 * items installs no entry (busbridged's activators live under
		 * its policy holder's entries) */
		ASSERT_EQ(kt_hello_activator(env, "org.kt.dup", NULL, 0, &d), 0);
		kdbus_conn_close(d);
	}
	kdbus_conn_close(b);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_policy_invalid_names(Env *env) {
	KdbusConn *a = NULL;
	struct kdbus_policy_access bad = { 7, KDBUS_POLICY_TALK, 0 };

	ASSERT_EQ(kt_hello_policy(env, "foo", &world_talk, 1, &a), -EINVAL);
	ASSERT_EQ(kt_hello_policy(env, "foo.*.bar", &world_talk, 1, &a), -EINVAL);
	ASSERT_EQ(kt_hello_policy(env, "*", &world_talk, 1, &a), -EINVAL);
	ASSERT_EQ(kt_hello_policy(env, "foo.bar.", &world_talk, 1, &a), -EINVAL);
	ASSERT_EQ(kt_hello_policy(env, "foo.bar", &bad, 1, &a), -EINVAL);
	ASSERT_RETURN(a == NULL);
	return TEST_OK;
}

static int update_policy(KdbusConn *ph, const char *name, const struct kdbus_policy_access *a) {
	uint64_t buf[64] = {};
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)buf;
	struct kdbus_item *it = cmd->items;

	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
	it->type = KDBUS_ITEM_NAME;
	strcpy(it->str, name);
	it = KDBUS_ITEM_NEXT(it);
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(*a);
	it->type = KDBUS_ITEM_POLICY_ACCESS;
	it->policy_access = *a;
	it = KDBUS_ITEM_NEXT(it);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_update(ph, cmd);
}

int test_policy_update(Env *env) {
	KdbusConn *ph = NULL, *other = NULL, *u;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.upd.a", &world_own, 1, &ph), 0);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.upd.b", &world_own, 1, &other), 0);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.upd.a", 0, NULL), 0);
	ASSERT_EQ(kt_name_release(u, "org.kt.upd.a"), 0);
	/* replace a by c */
	ASSERT_EQ(update_policy(ph, "org.kt.upd.c", &world_own), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.upd.a", 0, NULL), -EPERM);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.upd.c", 0, NULL), 0);
	/* a failing update keeps the old set */
	ASSERT_EQ(update_policy(ph, "org.kt.upd.b", &world_own), -EEXIST);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.upd.c", 0, NULL), 0);
	ASSERT_EQ(kt_name_release(u, "org.kt.upd.c"), 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.upd.c", 0, NULL), 0);
	/* only policy holders upload policy */
	ASSERT_EQ(update_policy(env->conn, "org.kt.upd.d", &world_own), -EOPNOTSUPP);
	kdbus_conn_close(u);
	kdbus_conn_close(ph);
	kdbus_conn_close(other);
	return TEST_OK;
}

int test_policy_holder_disconnect(Env *env) {
	KdbusConn *ph = NULL, *u;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.Temp", &world_own, 1, &ph), 0);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_RETURN(u);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.Temp", 0, NULL), 0);
	ASSERT_EQ(kt_name_release(u, "org.kt.Temp"), 0);
	kdbus_conn_close(ph);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.Temp", 0, NULL), -EPERM);
	kdbus_conn_close(u);
	return TEST_OK;
}

int test_policy_broadcast_receiver_talk(Env *env) {
	KdbusConn *ph = NULL, *recv_b, *send_a;
	struct kdbus_policy_access acc[] = {
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, UID_A },
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UID_B },
	};

	send_a = kt_hello_uid(env, UID_A, GID_A, 0);
	recv_b = kt_hello_uid(env, UID_B, GID_A, 0);
	uint64_t zero[BLOOM_SIZE / 8] = {};

	ASSERT_RETURN(send_a && recv_b);
	ASSERT_EQ(kt_match_bloom(recv_b, 1, zero, 1), 0);	/* all broadcasts, no notifications */
	/* b may not talk to a: it gets none of a's broadcasts */
	ASSERT_EQ(kt_broadcast(send_a, 1, NULL), 0);
	ASSERT_EQ(kt_recv(recv_b, NULL, NULL), -EAGAIN);
	/* nor those of the bus owner, which owns no name b may talk to */
	ASSERT_EQ(kt_broadcast(env->conn, 2, NULL), 0);
	ASSERT_EQ(kt_drain(recv_b), 0);
	/* a connection of b's own user always reaches it */
	{
		KdbusConn *b2 = kt_hello_uid(env, UID_B, GID_A, 0);

		ASSERT_EQ(kt_broadcast(b2, 4, NULL), 0);
		ASSERT_EQ(kt_drain(recv_b), 1);
		kdbus_conn_close(b2);
	}
	/* once b may talk to a name a owns, it receives a's broadcasts */
	ASSERT_EQ(kt_hello_policy(env, "org.kt.Bcast", acc, 2, &ph), 0);
	ASSERT_EQ(kt_name_acquire(send_a, "org.kt.Bcast", 0, NULL), 0);
	ASSERT_EQ(kt_broadcast(send_a, 3, NULL), 0);
	ASSERT_EQ(kt_drain(recv_b), 1);
	kdbus_conn_close(send_a);
	kdbus_conn_close(recv_b);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_reply_bypass(Env *env) {
	KdbusConn *ph = NULL, *svc, *caller;
	struct kdbus_policy_access acc[] = {
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, UID_A },
		{ KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 },
	};
	struct kdbus_msg m;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.Svc", acc, 2, &ph), 0);
	svc = kt_hello_uid(env, UID_A, GID_A, 0);
	caller = kt_hello_uid(env, UID_B, GID_A, 0);
	ASSERT_RETURN(svc && caller);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Svc", 0, NULL), 0);
	/* the service cannot talk to the caller (no names) ... */
	ASSERT_EQ(kt_send(svc, kdbus_conn_get_id(caller), 1), -EPERM);
	/* ... but may answer its calls */
	ASSERT_EQ(kt_send_name(caller, "org.kt.Svc", 10, KDBUS_MSG_EXPECT_REPLY), 0);
	ASSERT_EQ(kt_recv_free(svc, &m), 0);
	ASSERT_EQ(kt_reply(svc, kdbus_conn_get_id(caller), 11, 10), 0);
	ASSERT_EQ(kt_recv_free(caller, &m), 0);
	ASSERT_EQ(m.cookie_reply, 10);
	kdbus_conn_close(svc);
	kdbus_conn_close(caller);
	kdbus_conn_close(ph);
	return TEST_OK;
}

int test_policy_activator_talk(Env *env) {
	KdbusConn *act = NULL, *u;
	struct kdbus_policy_access acc[] = {
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UID_A },
		{ KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, UID_B },
	};

	ASSERT_EQ(kt_hello_activator(env, "org.kt.ActPol", acc, 2, &act), 0);
	u = kt_hello_uid(env, UID_B + 7, GID_A, 0);
	ASSERT_RETURN(u);
	/* not addressable by id, and no TALK by name without policy */
	ASSERT_EQ(kt_send(u, kdbus_conn_get_id(act), 1), -ENXIO);
	ASSERT_EQ(kt_send_name(u, "org.kt.ActPol", 1, 0), -EPERM);
	kdbus_conn_close(u);
	u = kt_hello_uid(env, UID_A, GID_A, 0);
	ASSERT_EQ(kt_send_name(u, "org.kt.ActPol", 1, 0), 0);
	/* TALK is not OWN */
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ActPol", 0, NULL), -EPERM);
	kdbus_conn_close(u);
	/* the implementor's user may take the name over */
	u = kt_hello_uid(env, UID_B, GID_A, 0);
	ASSERT_EQ(kt_name_acquire(u, "org.kt.ActPol", 0, NULL), 0);
	ASSERT_EQ(kt_drain(u), 1);
	kdbus_conn_close(u);
	kdbus_conn_close(act);
	return TEST_OK;
}

int test_policy_fallback(Env *env) {
	struct kdbus_policy_access see = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE, 0 };
	KdbusConn *ph = NULL, *a, *b;

	USERSPACE_ONLY(env);	/* kdbus_bus_set_policy_fallback() */
	a = kt_hello_uid(env, UID_A, GID_A, 0);
	b = kt_hello_uid(env, UID_B, GID_A, 0);
	ASSERT_RETURN(a && b);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, 7), -EINVAL);
	/* the kernel's behaviour by default */
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Fb", 0, NULL), -EPERM);
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(b), 1), -EPERM);
	/* TALK for destinations without entries, also without names */
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_TALK), 0);
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(b), 2), 0);
	ASSERT_EQ(kt_drain(b), 1);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Fb", 0, NULL), -EPERM);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, KDBUS_POLICY_OWN), 0);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Fb", 0, NULL), 0);
	/* entries still decide where they exist */
	ASSERT_EQ(kt_hello_policy(env, "org.kt.Fb", &see, 1, &ph), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.Fb2.x", 0, NULL), 0);
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(a), 3), -EPERM);	/* a's only name is covered */
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(b), 4), 0);	/* b's name is not */
	ASSERT_EQ(kt_drain(b), 1);
	kdbus_conn_close(ph);
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(a), 5), 0);	/* entry gone: fallback */
	ASSERT_EQ(kt_drain(a), 1);
	ASSERT_EQ(kdbus_bus_set_policy_fallback(env->bus, -1), 0);
	ASSERT_EQ(kt_send(b, kdbus_conn_get_id(a), 6), -EPERM);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}
