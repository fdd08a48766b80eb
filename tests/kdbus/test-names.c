/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-names.c - names, LIST, matches, bloom filters, notifications and
 * monitors (selftests test-names.c, test-match.c, test-monitor.c)
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus-test.h"

/* receive one notification of @type and check it */
static int expect_name_change(KdbusConn *c, uint64_t type, uint64_t old_id, uint64_t new_id,
			      const char *name, uint64_t *ret_old_flags, uint64_t *ret_new_flags) {
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_EQ(kt_recv(c, &m, &off), 0);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->dst_id, KDBUS_DST_ID_BROADCAST);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_KERNEL);
	it = kt_msg_item(m, type, 0);
	if (!it)
		fprintf(stderr, "# got item type 0x%llx\n", (unsigned long long)m->items[0].type);
	ASSERT_RETURN(it);
	ASSERT_EQ(it->name_change.old_id.id, old_id);
	ASSERT_EQ(it->name_change.new_id.id, new_id);
	ASSERT_RETURN(strcmp(it->name_change.name, name) == 0);
	if (ret_old_flags)
		*ret_old_flags = it->name_change.old_id.flags;
	if (ret_new_flags)
		*ret_new_flags = it->name_change.new_id.flags;
	ASSERT_EQ(kt_free(c, off), 0);
	return TEST_OK;
}

static int expect_id_change(KdbusConn *c, uint64_t type, uint64_t id, uint64_t flags) {
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_EQ(kt_recv(c, &m, &off), 0);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	it = kt_msg_item(m, type, 0);
	ASSERT_RETURN(it);
	ASSERT_EQ(it->id_change.id, id);
	ASSERT_EQ(it->id_change.flags, flags);
	ASSERT_EQ(kt_free(c, off), 0);
	return TEST_OK;
}

int test_name_basic(Env *env) {
	uint64_t flags;

	ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar.test", 0, &flags), 0);
	ASSERT_EQ(flags & (KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED), KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED);
	ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar.test", 0, &flags), 0);
	ASSERT_RETURN(flags & KDBUS_NAME_PRIMARY);
	ASSERT_RETURN(!(flags & KDBUS_NAME_ACQUIRED));
	ASSERT_EQ(kt_name_release(env->conn, "foo.bar.test"), 0);
	ASSERT_EQ(kt_name_release(env->conn, "foo.bar.test"), -ESRCH);
	ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar.test", 0, &flags), 0);
	return TEST_OK;
}

int test_name_invalid(Env *env) {
	const char *bad[] = { "foo", ".foo.bar", "foo.bar.", "foo..bar", "foo.1bar", "foo.b$r",
			      "foo.bar.*", "*", "",
			      /* ASCII only: the kernel's isalpha() takes Latin-1 0xe9 */
			      "foo.b\xe9r", "foo.b\xc3\xa9r" };
	char longname[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(kt_name_acquire(env->conn, bad[i], 0, NULL), -EINVAL);
		/* an invalid name is nobody's: releasing it is ESRCH (final ABI) */
		ASSERT_EQ(kt_name_release(env->conn, bad[i]), -ESRCH);
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[1] = '.';
	longname[sizeof(longname) - 1] = 0;
	ASSERT_EQ(kt_name_acquire(env->conn, longname, 0, NULL), -EINVAL);
	/* 255 characters are a name, 256 are not */
	longname[256] = 0;
	ASSERT_EQ(kt_name_acquire(env->conn, longname, 0, NULL), -EINVAL);
	longname[255] = 0;
	ASSERT_EQ(kt_name_acquire(env->conn, longname, 0, NULL), 0);
	ASSERT_EQ(kt_name_release(env->conn, longname), 0);
	ASSERT_EQ(kt_name_acquire(env->conn, "a-b.c_d.e9", 0, NULL), 0);
	/* unknown flags */
	{
		uint64_t f;

		ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar", 1ULL << 30, &f), -EINVAL);
		ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar", KDBUS_NAME_ACTIVATOR, &f), -EINVAL);
	}
	return TEST_OK;
}

int test_name_conflict(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar.conflict", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c, "foo.bar.conflict", 0, NULL), -EEXIST);
	ASSERT_EQ(kt_name_acquire(c, "foo.bar.conflict", KDBUS_NAME_REPLACE_EXISTING, NULL), -EEXIST);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_name_release_other(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_name_acquire(env->conn, "foo.bar.other", 0, NULL), 0);
	ASSERT_EQ(kt_name_release(c, "foo.bar.other"), -EADDRINUSE);
	ASSERT_EQ(kt_name_release(c, "foo.bar.nothere"), -ESRCH);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_name_queue(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0), *w = kt_hello(env, 0);
	uint64_t flags, ida, idb;

	ASSERT_RETURN(a && b && w);
	ida = kdbus_conn_get_id(a);
	idb = kdbus_conn_get_id(b);
	ASSERT_EQ(kt_match_name(w, 1, KDBUS_ITEM_NAME_ADD, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_name(w, 1, KDBUS_ITEM_NAME_CHANGE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_name(w, 1, KDBUS_ITEM_NAME_REMOVE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);

	ASSERT_EQ(kt_name_acquire(a, "foo.bar.queue", 0, &flags), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.queue", KDBUS_NAME_QUEUE, &flags), 0);
	ASSERT_EQ(flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_PRIMARY), KDBUS_NAME_IN_QUEUE);
	ASSERT_RETURN(flags & KDBUS_NAME_ACQUIRED);
	ASSERT_EQ(expect_name_change(w, KDBUS_ITEM_NAME_ADD, 0, ida, "foo.bar.queue", NULL, NULL), TEST_OK);
	ASSERT_EQ(kt_recv(w, NULL, NULL), -EAGAIN);	/* queueing is silent */

	/* QUEUED list shows the waiter */
	{
		struct kdbus_info *l, *i;
		uint64_t size, off;
		bool found = false;

		ASSERT_EQ(kt_list(a, KDBUS_LIST_QUEUED, &l, &size, &off), 0);
		for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size)) {
			struct kdbus_item *it = kt_info_item(i, KDBUS_ITEM_OWNED_NAME, 0);

			if (i->id == idb && it && strcmp(it->name.name, "foo.bar.queue") == 0 &&
			    (it->name.flags & KDBUS_NAME_IN_QUEUE))
				found = true;
		}
		ASSERT_RETURN(found);
		ASSERT_EQ(kt_free(a, off), 0);
	}

	/* release hands the name to the first waiter */
	ASSERT_EQ(kt_name_release(a, "foo.bar.queue"), 0);
	ASSERT_EQ(expect_name_change(w, KDBUS_ITEM_NAME_CHANGE, ida, idb, "foo.bar.queue", NULL, NULL), TEST_OK);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.queue", 0, &flags), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.queue"), 0);
	ASSERT_EQ(expect_name_change(w, KDBUS_ITEM_NAME_REMOVE, idb, 0, "foo.bar.queue", NULL, NULL), TEST_OK);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(w);
	return TEST_OK;
}

int test_name_queue_twice(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0), *c = kt_hello(env, 0);
	uint64_t flags;

	ASSERT_RETURN(a && b && c);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.q2", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.q2", KDBUS_NAME_QUEUE, &flags), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.q2", KDBUS_NAME_QUEUE, &flags), 0);
	ASSERT_RETURN(flags & KDBUS_NAME_IN_QUEUE);
	ASSERT_RETURN(!(flags & KDBUS_NAME_ACQUIRED));
	/* a waiter asking again without QUEUE leaves the queue */
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.q2", 0, &flags), -EEXIST);
	ASSERT_EQ(kt_name_release(a, "foo.bar.q2"), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.q2"), -ESRCH);
	/* a waiter may release its place in the queue */
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.q2", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.q2", KDBUS_NAME_QUEUE, &flags), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.q2"), 0);
	ASSERT_EQ(kt_name_release(a, "foo.bar.q2"), 0);
	ASSERT_EQ(kt_name_release(a, "foo.bar.q2"), -ESRCH);
	/* QUEUE with a REPLACE_EXISTING the owner refuses: next in line, as
	 * dbus-daemon, before the earlier waiter */
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.q2", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.q2", KDBUS_NAME_QUEUE, NULL), 0);
	ASSERT_EQ(kt_name_acquire(c, "foo.bar.q2", KDBUS_NAME_QUEUE | KDBUS_NAME_REPLACE_EXISTING, &flags), 0);
	ASSERT_EQ(flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED),
		  KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACQUIRED);
	ASSERT_EQ(kt_name_release(a, "foo.bar.q2"), 0);
	/* the owner asking again: its flags, no ACQUIRED */
	ASSERT_EQ(kt_name_acquire(c, "foo.bar.q2", 0, &flags), 0);
	ASSERT_EQ(flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED | KDBUS_NAME_QUEUE),
		  KDBUS_NAME_PRIMARY);
	ASSERT_EQ(kt_name_release(c, "foo.bar.q2"), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.q2"), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.q2"), -ESRCH);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_name_replace(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t flags, ida, idb;

	ASSERT_RETURN(a && b);
	ida = kdbus_conn_get_id(a);
	idb = kdbus_conn_get_id(b);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_CHANGE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY,
				"foo.bar.replace"), 0);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.replace", KDBUS_NAME_ALLOW_REPLACEMENT | KDBUS_NAME_QUEUE, NULL), 0);
	/* without REPLACE_EXISTING: no takeover */
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.replace", 0, NULL), -EEXIST);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.replace", KDBUS_NAME_REPLACE_EXISTING, &flags), 0);
	ASSERT_EQ(flags & (KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED), KDBUS_NAME_PRIMARY | KDBUS_NAME_ACQUIRED);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_CHANGE, ida, idb, "foo.bar.replace", NULL, NULL),
		  TEST_OK);
	/* a asked for QUEUE: it waits and gets the name back */
	ASSERT_EQ(kt_name_release(b, "foo.bar.replace"), 0);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_CHANGE, idb, ida, "foo.bar.replace", NULL, NULL),
		  TEST_OK);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.replace", 0, &flags), 0);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_name_replace_drops(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);

	ASSERT_RETURN(a && b);
	ASSERT_EQ(kt_name_acquire(a, "foo.bar.rd", KDBUS_NAME_ALLOW_REPLACEMENT, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "foo.bar.rd", KDBUS_NAME_REPLACE_EXISTING, NULL), 0);
	/* a did not ask to queue: it lost the name entirely */
	ASSERT_EQ(kt_name_release(a, "foo.bar.rd"), -EADDRINUSE);
	ASSERT_EQ(kt_name_release(b, "foo.bar.rd"), 0);
	ASSERT_EQ(kt_name_release(b, "foo.bar.rd"), -ESRCH);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_name_limit(Env *env) {
	char n[64];
	int i;

	for (i = 0; i < 256; i++) {
		snprintf(n, sizeof(n), "org.kt.limit.n%d", i);
		ASSERT_EQ(kt_name_acquire(env->conn, n, 0, NULL), 0);
	}
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.limit.toomany", 0, NULL), -E2BIG);
	ASSERT_EQ(kt_name_release(env->conn, "org.kt.limit.n0"), 0);
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.limit.toomany", 0, NULL), 0);
	return TEST_OK;
}

int test_name_list(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *act = NULL;
	struct kdbus_info *l, *i;
	uint64_t size, off;
	unsigned uniq = 0, names = 0, acts = 0;

	ASSERT_RETURN(a);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.ListAct", NULL, 0, &act), 0);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.ListA", 0, NULL), 0);

	ASSERT_EQ(kt_list(env->conn, KDBUS_LIST_UNIQUE, &l, &size, &off), 0);
	for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size))
		uniq++;
	ASSERT_EQ(uniq, 3);
	ASSERT_EQ(kt_free(env->conn, off), 0);

	ASSERT_EQ(kt_list(env->conn, KDBUS_LIST_NAMES, &l, &size, &off), 0);
	for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size)) {
		struct kdbus_item *it = kt_info_item(i, KDBUS_ITEM_OWNED_NAME, 0);

		ASSERT_RETURN(it);
		ASSERT_RETURN(strcmp(it->name.name, "org.kt.ListA") == 0);
		ASSERT_EQ(i->id, kdbus_conn_get_id(a));
		names++;
	}
	ASSERT_EQ(names, 1);
	ASSERT_EQ(kt_free(env->conn, off), 0);

	ASSERT_EQ(kt_list(env->conn, KDBUS_LIST_ACTIVATORS, &l, &size, &off), 0);
	for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size)) {
		struct kdbus_item *it = kt_info_item(i, KDBUS_ITEM_OWNED_NAME, 0);

		ASSERT_RETURN(it && strcmp(it->name.name, "org.kt.ListAct") == 0);
		ASSERT_RETURN(it->name.flags & KDBUS_NAME_ACTIVATOR);
		ASSERT_RETURN(i->flags & KDBUS_HELLO_ACTIVATOR);
		acts++;
	}
	ASSERT_EQ(acts, 1);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_list(env->conn, 1ULL << 10, &l, &size, &off), -EINVAL);
	kdbus_conn_close(act);
	kdbus_conn_close(a);
	return TEST_OK;
}

int test_name_many(Env *env) {
	KdbusLimits l = { .max_names_per_conn = 50000 };
	char n[64];
	int i;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	for (i = 0; i < 50000; i++) {
		snprintf(n, sizeof(n), "org.kt.many.n%d", i);
		ASSERT_EQ(kt_name_acquire(env->conn, n, 0, NULL), 0);
	}
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.many.over", 0, NULL), -E2BIG);
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.many.n49999", 1, 0), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	for (i = 0; i < 50000; i += 2) {
		snprintf(n, sizeof(n), "org.kt.many.n%d", i);
		ASSERT_EQ(kt_name_release(env->conn, n), 0);
	}
	/* the rest goes with the connection (test teardown) */
	return TEST_OK;
}

int test_name_disconnect(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t ida, idb;

	ASSERT_RETURN(a && b);
	ida = kdbus_conn_get_id(a);
	idb = kdbus_conn_get_id(b);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Disc", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.Disc", KDBUS_NAME_QUEUE, NULL), 0);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_CHANGE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_REMOVE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_id(env->conn, 2, KDBUS_ITEM_ID_REMOVE, KDBUS_MATCH_ID_ANY), 0);
	kdbus_conn_close(a);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_CHANGE, ida, idb, "org.kt.Disc", NULL, NULL), TEST_OK);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_REMOVE, ida, 0), TEST_OK);
	kdbus_conn_close(b);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_REMOVE, idb, 0, "org.kt.Disc", NULL, NULL), TEST_OK);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_REMOVE, idb, 0), TEST_OK);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}

/* ---- matches ---- */

int test_match_id_add_remove(Env *env) {
	KdbusConn *c;
	uint64_t id;

	ASSERT_EQ(kt_match_id(env->conn, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	ASSERT_EQ(kt_match_id(env->conn, 1, KDBUS_ITEM_ID_REMOVE, KDBUS_MATCH_ID_ANY), 0);
	c = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_ADD, id, KDBUS_HELLO_ACCEPT_FD), TEST_OK);
	kdbus_conn_close(c);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_REMOVE, id, KDBUS_HELLO_ACCEPT_FD), TEST_OK);
	/* a match for one specific id */
	ASSERT_EQ(kt_match_remove(env->conn, 1), 0);
	ASSERT_EQ(kt_match_id(env->conn, 2, KDBUS_ITEM_ID_ADD, id + 2), 0);
	c = kt_hello(env, 0);
	kdbus_conn_close(c);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	c = kt_hello(env, 0);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_ADD, id + 2, 0), TEST_OK);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_match_name_notifications(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t ida, idb, of, nf;

	ASSERT_RETURN(a && b);
	ida = kdbus_conn_get_id(a);
	idb = kdbus_conn_get_id(b);
	ASSERT_EQ(kt_match_name(env->conn, 1, KDBUS_ITEM_NAME_ADD, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY,
				"org.kt.Watched"), 0);
	ASSERT_EQ(kt_match_name(env->conn, 2, KDBUS_ITEM_NAME_REMOVE, ida, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_match_name(env->conn, 3, KDBUS_ITEM_NAME_CHANGE, KDBUS_MATCH_ID_ANY, idb, NULL), 0);

	ASSERT_EQ(kt_name_acquire(a, "org.kt.Other", 0, NULL), 0);	/* name does not match */
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Watched", KDBUS_NAME_ALLOW_REPLACEMENT, NULL), 0);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_ADD, 0, ida, "org.kt.Watched", &of, &nf), TEST_OK);
	ASSERT_EQ(of, 0);
	ASSERT_RETURN(nf & KDBUS_NAME_ALLOW_REPLACEMENT);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.Watched", KDBUS_NAME_REPLACE_EXISTING, NULL), 0);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_CHANGE, ida, idb, "org.kt.Watched", NULL, NULL),
		  TEST_OK);
	ASSERT_EQ(kt_name_release(a, "org.kt.Other"), 0);
	ASSERT_EQ(expect_name_change(env->conn, KDBUS_ITEM_NAME_REMOVE, ida, 0, "org.kt.Other", NULL, NULL), TEST_OK);
	ASSERT_EQ(kt_name_release(b, "org.kt.Watched"), 0);	/* old id is b: no match */
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_match_replace(Env *env) {
	KdbusConn *c;

	ASSERT_EQ(kt_match_id(env->conn, 7, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	ASSERT_EQ(kt_match_rule(env->conn, 7, KDBUS_MATCH_REPLACE, KDBUS_ITEM_ID_REMOVE,
				&(struct kdbus_notify_id_change){ .id = KDBUS_MATCH_ID_ANY },
				sizeof(struct kdbus_notify_id_change)), 0);
	uint64_t id;

	c = kt_hello(env, 0);
	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);	/* ID_ADD match is gone */
	kdbus_conn_close(c);
	ASSERT_EQ(expect_id_change(env->conn, KDBUS_ITEM_ID_REMOVE, id, 0), TEST_OK);
	ASSERT_EQ(kt_match_remove(env->conn, 7), 0);
	ASSERT_EQ(kt_match_remove(env->conn, 7), -EBADSLT);
	return TEST_OK;
}

int test_match_remove_unknown(Env *env) {
	ASSERT_EQ(kt_match_remove(env->conn, 0xdead), -EBADSLT);
	ASSERT_EQ(kt_match_rule(env->conn, 1, 1ULL << 5, 0, NULL, 0), -EINVAL);
	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_DST_NAME, "a.b", 4), -EINVAL);
	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_NAME, "invalid", 8), -EINVAL);
	return TEST_OK;
}

int test_match_bloom(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t mask[BLOOM_SIZE / 8] = {}, filter[BLOOM_SIZE / 8] = {};
	struct kdbus_msg m;

	ASSERT_RETURN(c);
	mask[0] = 0x0011;
	mask[7] = 0x8000000000000000ULL;
	ASSERT_EQ(kt_match_bloom(env->conn, 1, mask, 1), 0);
	/* a zero filter does not match a non-empty mask */
	ASSERT_EQ(kt_broadcast(c, 1, filter), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	/* a filter with only some of the bits does not match */
	filter[0] = 0x0011;
	ASSERT_EQ(kt_broadcast(c, 2, filter), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	/* a superset does */
	filter[0] = 0xff11;
	filter[7] = 0x8000000000000001ULL;
	filter[3] = 0x1234;
	ASSERT_EQ(kt_broadcast(c, 3, filter), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie, 3);
	/* an all-zero mask matches everything */
	memset(mask, 0, sizeof(mask));
	memset(filter, 0, sizeof(filter));
	ASSERT_EQ(kt_match_bloom(env->conn, 2, mask, 1), 0);
	ASSERT_EQ(kt_broadcast(c, 4, filter), 0);
	ASSERT_EQ(kt_recv_free(env->conn, &m), 0);
	ASSERT_EQ(m.cookie, 4);
	/* kernel notifications never pass a bloom rule */
	kdbus_conn_close(kt_hello(env, 0));
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_match_bloom_generations(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t masks[2][BLOOM_SIZE / 8] = {}, filter[BLOOM_SIZE / 8] = {};
	KtMsg m;

	ASSERT_RETURN(c);
	masks[0][0] = 0x1;	/* generation 0 */
	masks[1][0] = 0x2;	/* generation 1 and above */
	ASSERT_EQ(kt_match_bloom(env->conn, 1, &masks[0][0], 2), 0);
	filter[0] = 0x1;
	m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 1, .flags = KDBUS_MSG_SIGNAL, .bloom = filter,
		   .bloom_generation = 0);
	ASSERT_EQ(kt_send_msg(c, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	m.bloom_generation = 1;
	ASSERT_EQ(kt_send_msg(c, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 0);
	filter[0] = 0x2;
	m.bloom_generation = 5;	/* newer than the mask: its last generation */
	ASSERT_EQ(kt_send_msg(c, &m), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_match_bloom_bad_size(Env *env) {
	uint64_t mask[3 * BLOOM_SIZE / 8] = {};

	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_BLOOM_MASK, mask, BLOOM_SIZE - 8), -EDOM);
	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_BLOOM_MASK, mask, BLOOM_SIZE + 8), -EDOM);
	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_BLOOM_MASK, mask, 3 * BLOOM_SIZE), 0);
	return TEST_OK;
}

int test_match_limit(Env *env) {
	int i;

	for (i = 0; i < 256; i++)
		ASSERT_EQ(kt_match_empty(env->conn, i + 1), 0);
	ASSERT_EQ(kt_match_empty(env->conn, 1000), -EMFILE);
	/* replacing does not count twice */
	ASSERT_EQ(kt_match_rule(env->conn, 5, KDBUS_MATCH_REPLACE, 0, NULL, 0), 0);
	ASSERT_EQ(kt_match_remove(env->conn, 5), 0);
	ASSERT_EQ(kt_match_empty(env->conn, 1000), 0);
	return TEST_OK;
}

int test_match_sender(Env *env) {
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);

	ASSERT_RETURN(a && b);
	uint64_t ida = kdbus_conn_get_id(a), any = KDBUS_MATCH_ID_ANY;

	ASSERT_EQ(kt_match_rule(env->conn, 1, 0, KDBUS_ITEM_ID, &ida, 8), 0);
	ASSERT_EQ(kt_broadcast(a, 1, NULL), 0);
	ASSERT_EQ(kt_broadcast(b, 2, NULL), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	ASSERT_EQ(kt_match_remove(env->conn, 1), 0);
	/* by sender name: the sender must own it at send time */
	ASSERT_EQ(kt_match_rule(env->conn, 2, 0, KDBUS_ITEM_NAME, "org.kt.Sender", 14), 0);
	ASSERT_EQ(kt_broadcast(b, 3, NULL), 0);
	ASSERT_EQ(kt_drain(env->conn), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.Sender", 0, NULL), 0);
	ASSERT_EQ(kt_broadcast(b, 4, NULL), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	ASSERT_EQ(kt_match_remove(env->conn, 2), 0);
	/* DST_ID ANY matches broadcasts */
	ASSERT_EQ(kt_match_rule(env->conn, 3, 0, KDBUS_ITEM_DST_ID, &any, 8), 0);
	ASSERT_EQ(kt_broadcast(a, 5, NULL), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_match_many(Env *env) {
	KdbusLimits l = { .max_matches_per_conn = 50000 };
	uint64_t mask[BLOOM_SIZE / 8] = {}, filter[BLOOM_SIZE / 8] = {};
	int i;

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	for (i = 0; i < 50000; i++) {
		mask[i % 8] = 1ULL << (i % 61);
		ASSERT_EQ(kt_match_bloom(env->conn, i + 1, mask, 1), 0);
		mask[i % 8] = 0;
	}
	ASSERT_EQ(kt_match_empty(env->conn, 99999), -EMFILE);
	filter[3] = 1ULL << 5;
	ASSERT_EQ(kt_broadcast(env->conn, 1, filter), 0);
	ASSERT_EQ(kt_drain(env->conn), 1);
	for (i = 0; i < 50000; i += 2)
		ASSERT_EQ(kt_match_remove(env->conn, i + 1), 0);
	return TEST_OK;
}

/*
 * The userspace core files one-generation bloom masks under one of their
 * bits (match.c): whatever bit it picks, every receiver with a matching
 * rule gets a broadcast exactly once, and removing, replacing and
 * disconnecting keep that so.
 */
int test_match_bloom_index(Env *env) {
	enum { N = 40 };
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0), *e = kt_hello(env, 0), *s = kt_hello(env, 0);
	KdbusConn *one[N];
	uint64_t ma[BLOOM_SIZE / 8] = {}, mb[BLOOM_SIZE / 8] = {}, mx[BLOOM_SIZE / 8] = {};
	uint64_t f[BLOOM_SIZE / 8] = {};

	ASSERT_RETURN(a && b && e && s);
	ma[0] = 0x11;
	ma[1] = 0x100;	/* rule A: three bits */
	mb[2] = 0x4;	/* rule B: one bit */
	mx[0] = 0x1;
	mx[5] = 0x8;	/* shares a bit with A, has one A's filter lacks */
	ASSERT_EQ(kt_match_bloom(a, 1, ma, 1), 0);
	ASSERT_EQ(kt_match_bloom(a, 2, mb, 1), 0);	/* a: A and B, gets each broadcast once */
	ASSERT_EQ(kt_match_bloom(b, 1, ma, 1), 0);
	ASSERT_EQ(kt_match_bloom(b, 2, mx, 1), 0);
	ASSERT_EQ(kt_match_empty(e, 1), 0);		/* e: everything (not indexed) */
	for (int i = 0; i < N; i++) {
		uint64_t m[BLOOM_SIZE / 8] = {};

		one[i] = kt_hello(env, 0);
		ASSERT_RETURN(one[i]);
		m[3] = 1ULL << i;	/* one[i]: bit i of word 3 only */
		ASSERT_EQ(kt_match_bloom(one[i], 1, m, 1), 0);
	}

	kt_drain(e);	/* the ID_ADD notifications of one[] */

	/* A and B */
	f[0] = 0x11;
	f[1] = 0x100;
	f[2] = 0x4;
	f[3] = 1ULL << 7;
	ASSERT_EQ(kt_broadcast(s, 1, f), 0);
	ASSERT_EQ(kt_drain(a), 1);
	ASSERT_EQ(kt_drain(b), 1);
	ASSERT_EQ(kt_drain(e), 1);
	for (int i = 0; i < N; i++)
		ASSERT_EQ(kt_drain(one[i]), i == 7);
	/* B only */
	memset(f, 0, sizeof(f));
	f[2] = 0x4;
	ASSERT_EQ(kt_broadcast(s, 2, f), 0);
	ASSERT_EQ(kt_drain(a), 1);
	ASSERT_EQ(kt_drain(b), 0);
	ASSERT_EQ(kt_drain(e), 1);
	/* without B, a no longer gets it */
	ASSERT_EQ(kt_match_remove(a, 2), 0);
	ASSERT_EQ(kt_broadcast(s, 3, f), 0);
	ASSERT_EQ(kt_drain(a), 0);
	/* b's rule 1 replaced by B */
	ASSERT_EQ(kt_match_rule(b, 1, KDBUS_MATCH_REPLACE, KDBUS_ITEM_BLOOM_MASK, mb, BLOOM_SIZE), 0);
	ASSERT_EQ(kt_broadcast(s, 4, f), 0);
	ASSERT_EQ(kt_drain(b), 1);
	f[0] = 0x11;
	f[1] = 0x100;
	f[2] = 0;
	ASSERT_EQ(kt_broadcast(s, 5, f), 0);
	ASSERT_EQ(kt_drain(a), 1);
	ASSERT_EQ(kt_drain(b), 0);
	ASSERT_EQ(kt_drain(e), 3);	/* broadcasts 3, 4 and 5 */
	/* closed receivers are gone from the index */
	kdbus_conn_close(a);
	for (int i = 0; i < N; i += 2)
		kdbus_conn_close(one[i]);
	f[3] = ~0ULL;
	ASSERT_EQ(kt_broadcast(s, 6, f), 0);
	ASSERT_RETURN(kt_drain(e) >= 1);	/* and ID_REMOVE notifications */
	for (int i = 1; i < N; i += 2) {
		ASSERT_EQ(kt_drain(one[i]), 1);
		kdbus_conn_close(one[i]);
	}
	kdbus_conn_close(b);
	kdbus_conn_close(e);
	kdbus_conn_close(s);
	return TEST_OK;
}

/*
 * The same broadcast (sender, filter) again and again: the userspace core
 * remembers each match's answer while the broadcast repeats (message.c).
 * A match added, removed or replaced meanwhile answers afresh, and a
 * sender's names count as they are now.
 */
int test_match_repeated_broadcast(Env *env) {
	KdbusConn *r = kt_hello(env, 0), *s = kt_hello(env, 0), *t = kt_hello(env, 0);
	uint64_t yes[BLOOM_SIZE / 8] = {}, no[BLOOM_SIZE / 8] = {}, f[BLOOM_SIZE / 8] = {};

	ASSERT_RETURN(r && s && t);
	f[0] = 0x7;
	f[3] = 0x100;
	yes[0] = 0x5;
	yes[3] = 0x100;
	no[0] = 0x5;
	no[2] = 0x1;
	ASSERT_EQ(kt_match_bloom(r, 1, no, 1), 0);
	for (uint64_t i = 1; i <= 3; i++) {
		ASSERT_EQ(kt_broadcast(s, i, f), 0);
		ASSERT_EQ(kt_drain(r), 0);
	}
	/* a new match, perhaps where the old one was */
	ASSERT_EQ(kt_match_remove(r, 1), 0);
	ASSERT_EQ(kt_match_bloom(r, 2, yes, 1), 0);
	ASSERT_EQ(kt_broadcast(s, 4, f), 0);
	ASSERT_EQ(kt_drain(r), 1);
	ASSERT_EQ(kt_broadcast(s, 5, f), 0);
	ASSERT_EQ(kt_drain(r), 1);
	ASSERT_EQ(kt_match_rule(r, 2, KDBUS_MATCH_REPLACE, KDBUS_ITEM_BLOOM_MASK, no, BLOOM_SIZE), 0);
	ASSERT_EQ(kt_broadcast(s, 6, f), 0);
	ASSERT_EQ(kt_drain(r), 0);
	/* another sender, the same filter */
	ASSERT_EQ(kt_match_remove(r, 2), 0);
	uint64_t ids = kdbus_conn_get_id(s);
	ASSERT_EQ(kt_match_rule(r, 3, 0, KDBUS_ITEM_ID, &ids, 8), 0);
	ASSERT_EQ(kt_broadcast(s, 7, f), 0);
	ASSERT_EQ(kt_drain(r), 1);
	ASSERT_EQ(kt_broadcast(t, 8, f), 0);
	ASSERT_EQ(kt_drain(r), 0);
	ASSERT_EQ(kt_broadcast(s, 9, f), 0);
	ASSERT_EQ(kt_drain(r), 1);
	/* a sender's name: it owns it, then not */
	ASSERT_EQ(kt_match_remove(r, 3), 0);
	ASSERT_EQ(kt_match_rule(r, 4, 0, KDBUS_ITEM_NAME, "com.example.repeat", sizeof("com.example.repeat")), 0);
	ASSERT_EQ(kt_name_acquire(s, "com.example.repeat", 0, NULL), 0);
	ASSERT_EQ(kt_broadcast(s, 10, f), 0);
	ASSERT_EQ(kt_drain(r), 1);
	ASSERT_EQ(kt_name_release(s, "com.example.repeat"), 0);
	ASSERT_EQ(kt_broadcast(s, 11, f), 0);
	ASSERT_EQ(kt_drain(r), 0);
	kdbus_conn_close(r);
	kdbus_conn_close(s);
	kdbus_conn_close(t);
	return TEST_OK;
}

int test_notify_kernel_message(Env *env) {
	KdbusConn *c;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_EQ(kt_match_id(env->conn, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	c = kt_hello(env, 0);
	ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->dst_id, KDBUS_DST_ID_BROADCAST);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_KERNEL);
	ASSERT_EQ(m->cookie, 0);
	ASSERT_EQ(m->items[0].type, KDBUS_ITEM_ID_ADD);
	/* exactly one notification item */
	ASSERT_EQ(m->size, sizeof(*m) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_notify_id_change)));
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- monitors ---- */

int test_monitor_sees_unicast(Env *env) {
	KtHello h = { .flags = KDBUS_HELLO_MONITOR, .attach_recv = KDBUS_ATTACH_CREDS };
	KdbusConn *mon = NULL, *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_RETURN(a && b);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &mon), 0);
	ASSERT_EQ(kt_send(a, kdbus_conn_get_id(b), 11), 0);
	ASSERT_EQ(kt_recv(mon, &m, &off), 0);
	ASSERT_EQ(m->cookie, 11);
	ASSERT_EQ(m->src_id, kdbus_conn_get_id(a));
	ASSERT_EQ(m->dst_id, kdbus_conn_get_id(b));
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_EQ(kt_free(mon, off), 0);
	/* broadcasts without any match, and notifications */
	ASSERT_EQ(kt_broadcast(a, 12, NULL), 0);
	ASSERT_EQ(kt_recv(mon, &m, &off), 0);
	ASSERT_EQ(m->cookie, 12);
	ASSERT_EQ(kt_free(mon, off), 0);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.Mon", 0, NULL), 0);
	ASSERT_EQ(kt_recv(mon, &m, &off), 0);
	ASSERT_EQ(m->items[0].type, KDBUS_ITEM_NAME_ADD);
	ASSERT_EQ(kt_free(mon, off), 0);
	ASSERT_EQ(kt_drain(b), 1);
	kdbus_conn_close(mon);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

int test_monitor_invisible(Env *env) {
	KtHello h = { .flags = KDBUS_HELLO_MONITOR };
	KdbusConn *mon = NULL;
	struct kdbus_info *l;
	uint64_t size, off;

	ASSERT_EQ(kt_match_id(env->conn, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	ASSERT_EQ(kt_match_id(env->conn, 1, KDBUS_ITEM_ID_REMOVE, KDBUS_MATCH_ID_ANY), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &mon), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);	/* no ID_ADD */
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(mon), 1), -ENXIO);
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(mon), NULL, 0, NULL, NULL), -ENXIO);
	ASSERT_EQ(kt_list(env->conn, KDBUS_LIST_UNIQUE, &l, &size, &off), 0);
	ASSERT_EQ(size, sizeof(struct kdbus_info));	/* only env->conn */
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(mon);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);	/* no ID_REMOVE */
	return TEST_OK;
}

int test_monitor_restrictions(Env *env) {
	KtHello h = { .flags = KDBUS_HELLO_MONITOR };
	KdbusConn *mon = NULL;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &mon), 0);
	ASSERT_EQ(kt_name_acquire(mon, "org.kt.MonName", 0, NULL), -EOPNOTSUPP);
	ASSERT_EQ(kt_name_release(mon, "org.kt.MonName"), -EOPNOTSUPP);
	ASSERT_EQ(kt_match_empty(mon, 1), -EOPNOTSUPP);
	ASSERT_EQ(kt_send(mon, kdbus_conn_get_id(env->conn), 1), -EOPNOTSUPP);
	ASSERT_EQ(kt_byebye(mon), -EOPNOTSUPP);
	kdbus_conn_close(mon);
	return TEST_OK;
}

int test_monitor_unprivileged(Env *env) {
	struct kdbus_creds cr;
	KtHello h = { .flags = KDBUS_HELLO_MONITOR };
	KdbusConn *mon = NULL;

	if (geteuid() == 4343)
		SKIP_BECAUSE("runs as the uid it fakes");
	ASSERT_EQ(kt_hello_as(env, &h, &cr, 4343, 4343), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &mon), -EPERM);
	return TEST_OK;
}

int test_activator_list(Env *env) {
	KdbusConn *act = NULL, *svc = kt_hello(env, 0);
	struct kdbus_info *l, *i;
	uint64_t size, off;
	unsigned n = 0;

	ASSERT_RETURN(svc);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.LA", NULL, 0, &act), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.LA", 0, NULL), 0);
	/* the activator stays listed, now as a waiter */
	ASSERT_EQ(kt_list(env->conn, KDBUS_LIST_ACTIVATORS | KDBUS_LIST_NAMES, &l, &size, &off), 0);
	for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size)) {
		struct kdbus_item *it = kt_info_item(i, KDBUS_ITEM_OWNED_NAME, 0);

		ASSERT_RETURN(it && strcmp(it->name.name, "org.kt.LA") == 0);
		if (i->id == kdbus_conn_get_id(act))
			ASSERT_EQ(it->name.flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE),
				  KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE);
		else
			ASSERT_RETURN(it->name.flags & KDBUS_NAME_PRIMARY);
		n++;
	}
	ASSERT_EQ(n, 2);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	/* CONN_INFO by name now finds the service */
	ASSERT_EQ(kt_conn_info(env->conn, 0, "org.kt.LA", 0, &l, &off), 0);
	ASSERT_EQ(l->id, kdbus_conn_get_id(svc));
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(svc);
	kdbus_conn_close(act);
	return TEST_OK;
}

/* the MATCH_KEYS extension (bus.h): a rule on keys, and the keyed index */
static int keyed_broadcast(KdbusConn *s, uint64_t cookie, const uint64_t *bloom, const uint64_t *keys, size_t n) {
	KtMsg m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = cookie, .flags = KDBUS_MSG_SIGNAL,
			 .bloom = bloom, .vec = { &cookie }, .vec_size = { 8 }, .keys = keys, .n_keys = n);

	return kt_send_msg(s, &m);
}

int test_match_keys(Env *env) {
	KdbusConn *k1 = kt_hello(env, 0), *k2 = kt_hello(env, 0), *both = kt_hello(env, 0), *u = kt_hello(env, 0);
	KdbusConn *x = kt_hello(env, 0), *s = kt_hello(env, 0);
	const uint64_t K1 = 0x1111, K2 = 0x2222, K3 = 0x3333;
	uint64_t zero[BLOOM_SIZE / 8] = {}, bit[BLOOM_SIZE / 8] = {}, f[BLOOM_SIZE / 8] = {};
	uint64_t too_many[KDBUS_MATCH_KEYS_MAX + 1] = {};

	USERSPACE_ONLY(env);
	ASSERT_RETURN(k1 && k2 && both && u && x && s);
	bit[4] = 0x10;
	ASSERT_EQ(kt_match_keys(k1, 1, zero, &K1, 1), 0);
	ASSERT_EQ(kt_match_keys(k2, 1, NULL, &K2, 1), 0);
	ASSERT_EQ(kt_match_keys(both, 1, zero, (uint64_t[]){ K1, K2 }, 2), 0);
	ASSERT_EQ(kt_match_bloom(u, 1, zero, 1), 0);
	ASSERT_EQ(kt_match_keys(x, 1, bit, &K1, 1), 0);	/* K1 and a bloom bit */
	ASSERT_EQ(kt_match_keys(x, 2, zero, too_many, 0), -EINVAL);
	ASSERT_EQ(kt_match_keys(x, 2, zero, too_many, KDBUS_MATCH_KEYS_MAX + 1), -EINVAL);

	ASSERT_EQ(keyed_broadcast(s, 1, f, &K1, 1), 0);
	ASSERT_EQ(kt_drain(k1), 1);
	ASSERT_EQ(kt_drain(k2), 0);
	ASSERT_EQ(kt_drain(both), 0);
	ASSERT_EQ(kt_drain(u), 1);
	ASSERT_EQ(kt_drain(x), 0);
	/* the same filter with other keys: a remembered answer must not hold */
	ASSERT_EQ(keyed_broadcast(s, 2, f, (uint64_t[]){ K2, K1 }, 2), 0);
	ASSERT_EQ(kt_drain(k1), 1);
	ASSERT_EQ(kt_drain(k2), 1);
	ASSERT_EQ(kt_drain(both), 1);
	ASSERT_EQ(kt_drain(u), 1);
	ASSERT_EQ(keyed_broadcast(s, 3, f, &K2, 1), 0);
	ASSERT_EQ(kt_drain(k1), 0);
	ASSERT_EQ(kt_drain(k2), 1);
	ASSERT_EQ(kt_drain(both), 0);
	ASSERT_EQ(kt_drain(u), 1);
	/* no keys, or others: only the rule without a key */
	ASSERT_EQ(kt_broadcast(s, 4, f), 0);
	ASSERT_EQ(keyed_broadcast(s, 5, f, &K3, 1), 0);
	ASSERT_EQ(kt_drain(k1) + kt_drain(k2) + kt_drain(both) + kt_drain(x), 0);
	ASSERT_EQ(kt_drain(u), 2);
	/* the key and the bloom bit */
	f[4] = 0x10;
	ASSERT_EQ(keyed_broadcast(s, 6, f, &K1, 1), 0);
	ASSERT_EQ(kt_drain(x), 1);
	ASSERT_EQ(kt_drain(k1), 1);
	/* a removed keyed match is gone from the index */
	ASSERT_EQ(kt_match_remove(k1, 1), 0);
	ASSERT_EQ(keyed_broadcast(s, 7, f, &K1, 1), 0);
	ASSERT_EQ(kt_drain(k1), 0);
	ASSERT_EQ(kt_drain(x), 1);
	/* a message's keys: once, and within the size */
	KtMsg m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = 8, .flags = KDBUS_MSG_SIGNAL, .bloom = f,
			 .vec = { &K1 }, .vec_size = { 8 }, .keys = too_many, .n_keys = KDBUS_MATCH_KEYS_MAX + 1);
	ASSERT_EQ(kt_send_msg(s, &m), -EINVAL);
	for (KdbusConn **c = (KdbusConn *[]){ k1, k2, both, u, x, s, NULL }; *c; c++)
		kdbus_conn_close(*c);
	return TEST_OK;
}

/* 300 connections with rules on other keys cost a broadcast nothing and
 * get nothing; the ones on its key get it once, also with two matches */
int test_match_keys_many(Env *env) {
	enum { N = 300 };
	KdbusConn *c[N], *s = kt_hello(env, 0);
	uint64_t f[BLOOM_SIZE / 8] = {};

	USERSPACE_ONLY(env);
	ASSERT_RETURN(s);
	for (int i = 0; i < N; i++) {
		uint64_t k = 1000 + (uint64_t)(i % 100);

		c[i] = kt_hello(env, 0);
		ASSERT_RETURN(c[i]);
		ASSERT_EQ(kt_match_keys(c[i], 1, NULL, &k, 1), 0);
		if (i % 7 == 0)	/* a second match on the same key */
			ASSERT_EQ(kt_match_keys(c[i], 2, NULL, &k, 1), 0);
	}
	for (uint64_t k = 1000; k < 1100; k += 37) {
		ASSERT_EQ(keyed_broadcast(s, k, f, &k, 1), 0);
		for (int i = 0; i < N; i++)
			ASSERT_EQ(kt_drain(c[i]), 1000 + (uint64_t)(i % 100) == k);
	}
	for (int i = 0; i < N; i++)
		kdbus_conn_close(c[i]);
	kdbus_conn_close(s);
	return TEST_OK;
}

/* kdbus_name_owner(): what CONN_INFO by name says, without a slice */
int test_name_owner(Env *env) {
	KdbusConn *act = NULL, *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t id = 0, flags = 0;

	ASSERT_RETURN(a && b);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.Nobody", &id, &flags), -ESRCH);
	ASSERT_EQ(kdbus_name_owner(env->conn, "not a name", &id, &flags), -EINVAL);
	ASSERT_EQ(kt_hello_activator(env, "org.kt.NO", NULL, 0, &act), 0);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.NO", &id, &flags), 0);
	ASSERT_EQ(id, kdbus_conn_get_id(act));
	ASSERT_RETURN(flags & KDBUS_HELLO_ACTIVATOR);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.NO", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.NO", KDBUS_NAME_QUEUE, NULL), 0);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.NO", &id, &flags), 0);
	ASSERT_EQ(id, kdbus_conn_get_id(a));
	ASSERT_EQ(flags & KDBUS_HELLO_ACTIVATOR, 0);
	/* the queued one takes over, then the activator again */
	kdbus_conn_close(a);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.NO", &id, &flags), 0);
	ASSERT_EQ(id, kdbus_conn_get_id(b));
	kdbus_conn_close(b);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.NO", &id, &flags), 0);
	ASSERT_EQ(id, kdbus_conn_get_id(act));
	kdbus_conn_close(act);
	ASSERT_EQ(kdbus_name_owner(env->conn, "org.kt.NO", &id, &flags), -ESRCH);
	return TEST_OK;
}
