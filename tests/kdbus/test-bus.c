/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bus.c - BUS_MAKE, HELLO, CONN_INFO, UPDATE, BYEBYE, FREE
 * (selftests test-bus.c, test-connection.c, test-free.c)
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbus-test.h"

static uint64_t buf[1024];

static int make_raw(Env *env, const char *name, bool bloom, uint64_t bloom_size, uint64_t extra_type,
		    KdbusBus **ret) {
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)buf;
	struct kdbus_item *it;

	memset(buf, 0, sizeof(buf));
	it = cmd->items;
	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
	it->type = KDBUS_ITEM_MAKE_NAME;
	strcpy(it->str, name);
	it = KDBUS_ITEM_NEXT(it);
	if (bloom) {
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter);
		it->type = KDBUS_ITEM_BLOOM_PARAMETER;
		it->bloom_parameter.size = bloom_size;
		it->bloom_parameter.n_hash = 1;
		it = KDBUS_ITEM_NEXT(it);
	}
	if (extra_type) {
		it->size = KDBUS_ITEM_HEADER_SIZE + 8;
		it->type = extra_type;
		it = KDBUS_ITEM_NEXT(it);
	}
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_bus_make(env->backend, cmd, ret);
}

static void busname(char *b, size_t n, const char *suffix) {
	snprintf(b, n, "%u-%s", (unsigned)geteuid(), suffix);
}

int test_bus_make_invalid_names(Env *env) {
	KdbusBus *bus = NULL;
	char n[128];

	ASSERT_EQ(make_raw(env, "noprefix", true, 64, 0, &bus), -EINVAL);
	ASSERT_EQ(make_raw(env, "999999-foo", true, 64, 0, &bus), -EINVAL);
	busname(n, sizeof(n), "foo$bar");
	ASSERT_EQ(make_raw(env, n, true, 64, 0, &bus), -EINVAL);
	busname(n, sizeof(n), "trailing-");
	ASSERT_EQ(make_raw(env, n, true, 64, 0, &bus), -EINVAL);
	busname(n, sizeof(n), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ASSERT_EQ(make_raw(env, n, true, 64, 0, &bus), -ENAMETOOLONG);
	ASSERT_RETURN(bus == NULL);
	return TEST_OK;
}

int test_bus_make_duplicate(Env *env) {
	KdbusBus *bus = NULL;
	char n[128];

	ASSERT_EQ(make_raw(env, env->name, true, 64, 0, &bus), -EEXIST);
	busname(n, sizeof(n), "kt-dup-ok.x");
	ASSERT_EQ(make_raw(env, n, true, 64, 0, &bus), 0);
	ASSERT_RETURN(bus);
	kdbus_bus_close(bus);
	/* the name is free again once the owner handle is closed */
	ASSERT_EQ(make_raw(env, n, true, 64, 0, &bus), 0);
	kdbus_bus_close(bus);
	return TEST_OK;
}

int test_bus_make_bloom(Env *env) {
	KdbusBus *bus = NULL;
	char n[128];

	busname(n, sizeof(n), "kt-bloom");
	ASSERT_EQ(make_raw(env, n, false, 0, 0, &bus), -EBADMSG);
	ASSERT_EQ(make_raw(env, n, true, 0, 0, &bus), -EINVAL);
	ASSERT_EQ(make_raw(env, n, true, 12, 0, &bus), -EINVAL);
	ASSERT_EQ(make_raw(env, n, true, 8192, 0, &bus), -EINVAL);
	ASSERT_EQ(make_raw(env, n, true, 8, 0, &bus), 0);
	kdbus_bus_close(bus);
	return TEST_OK;
}

int test_bus_make_negotiate(Env *env) {
	struct {
		struct kdbus_cmd cmd;
		struct {
			uint64_t size, type;
			uint64_t types[3];
		} neg;
	} c = {};
	KdbusBus *bus = (KdbusBus *)1;

	c.cmd.size = sizeof(c);
	c.cmd.flags = KDBUS_FLAG_NEGOTIATE;
	c.neg.size = sizeof(c.neg);
	c.neg.type = KDBUS_ITEM_NEGOTIATE;
	c.neg.types[0] = KDBUS_ITEM_MAKE_NAME;
	c.neg.types[1] = KDBUS_ITEM_REPLY_DEAD;	/* not a BUS_MAKE item */
	c.neg.types[2] = KDBUS_ITEM_BLOOM_PARAMETER;
	ASSERT_EQ(kdbus_cmd_bus_make(env->backend, &c.cmd, &bus), 0);
	ASSERT_RETURN(bus == NULL);
	ASSERT_EQ(c.cmd.flags, KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD);
	ASSERT_EQ(c.neg.types[0], KDBUS_ITEM_MAKE_NAME);
	ASSERT_EQ(c.neg.types[1], 0);
	ASSERT_EQ(c.neg.types[2], KDBUS_ITEM_BLOOM_PARAMETER);
	return TEST_OK;
}

int test_bus_make_unexpected_item(Env *env) {
	KdbusBus *bus = NULL;
	char n[128];
	struct kdbus_cmd cmd = { .size = sizeof(cmd), .flags = 1ULL << 10 };

	busname(n, sizeof(n), "kt-unexp");
	ASSERT_EQ(make_raw(env, n, true, 64, KDBUS_ITEM_ID, &bus), -EINVAL);
	ASSERT_EQ(kdbus_cmd_bus_make(env->backend, &cmd, &bus), -EINVAL);
	cmd.size = 3;
	cmd.flags = 0;
	ASSERT_EQ(kdbus_cmd_bus_make(env->backend, &cmd, &bus), -EINVAL);
	return TEST_OK;
}

int test_bus_creator_info(Env *env) {
	struct kdbus_cmd_info cmd = { .size = sizeof(cmd), .attach_flags = KDBUS_ATTACH_CREDS };
	struct kdbus_info *info;
	struct kdbus_item *it;

	ASSERT_EQ(kdbus_cmd_bus_creator_info(env->conn, &cmd), 0);
	info = kdbus_pool_ptr(env->conn, cmd.offset);
	ASSERT_EQ(info->size, cmd.info_size);
	it = kt_info_item(info, KDBUS_ITEM_MAKE_NAME, 0);
	ASSERT_RETURN(it && strcmp(it->str, env->name) == 0);
	it = kt_info_item(info, KDBUS_ITEM_CREDS, 0);
	ASSERT_RETURN(it && it->creds.euid == geteuid());
	ASSERT_RETURN(!kt_info_item(info, KDBUS_ITEM_PIDS, 0));
	ASSERT_EQ(kt_free(env->conn, cmd.offset), 0);
	return TEST_OK;
}

int test_hello_bad_size(Env *env) {
	struct kdbus_cmd_hello h = { .size = 1, .pool_size = POOL_SIZE };
	KdbusConn *c = NULL;
	uint64_t mem[32] = {};

	ASSERT_EQ(kdbus_cmd_hello(env->bus, &h, &c), -EINVAL);
	ASSERT_EQ(kdbus_cmd_hello(env->bus, (struct kdbus_cmd_hello *)((uint8_t *)mem + 1), &c), -EFAULT);
	h.size = 64 * 1024;
	ASSERT_EQ(kdbus_cmd_hello(env->bus, &h, &c), -EMSGSIZE);
	ASSERT_RETURN(c == NULL);
	return TEST_OK;
}

int test_hello_bad_flags(Env *env) {
	KtHello h = { .flags = 1ULL << 32 };
	KdbusConn *c = NULL;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);
	ASSERT_RETURN(c == NULL);
	return TEST_OK;
}

int test_hello_bad_pool_size(Env *env) {
	struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = 0 };
	KdbusConn *c = NULL;

	ASSERT_EQ(kdbus_cmd_hello(env->bus, &h, &c), -EINVAL);
	h.pool_size = 4097;
	ASSERT_EQ(kdbus_cmd_hello(env->bus, &h, &c), -EINVAL);
	h.pool_size = 4096;
	ASSERT_EQ(kdbus_cmd_hello(env->bus, &h, &c), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_hello_required_attach_flags(Env *env) {
	KdbusBus *bus = NULL;
	KdbusConn *c = NULL;
	KtHello h = { .attach_send = _KDBUS_ATTACH_ALL & ~KDBUS_ATTACH_TIMESTAMP };
	char n[128];

	snprintf(n, sizeof(n), "%s-req", env->name);
	ASSERT_EQ(kt_bus_make(env->backend, n, _KDBUS_ATTACH_ALL, &bus), 0);
	ASSERT_EQ(kt_hello_full(bus, &h, &c), -ECONNREFUSED);
	ASSERT_EQ(h.out.attach_flags_send, _KDBUS_ATTACH_ALL);
	h.attach_send = _KDBUS_ATTACH_ANY;
	ASSERT_EQ(kt_hello_full(bus, &h, &c), 0);
	ASSERT_EQ(h.out.attach_flags_send, _KDBUS_ATTACH_ALL);
	/* UPDATE may not drop what the bus requires */
	ASSERT_EQ(kt_update_attach(c, KDBUS_ATTACH_CREDS, (uint64_t)-2), -EINVAL);
	kdbus_conn_close(c);
	kdbus_bus_close(bus);
	return TEST_OK;
}

int test_hello_bad_attach_flags(Env *env) {
	KtHello h = { .attach_send = 1ULL << 40 };
	KdbusConn *c = NULL;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);
	h.attach_send = 0;
	h.attach_recv = 1ULL << 20;
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);
	return TEST_OK;
}

int test_hello_roles(Env *env) {
	struct kdbus_policy_access a = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 };
	KtHello h = { .flags = KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_MONITOR };
	KdbusConn *c = NULL;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);
	h.flags = KDBUS_HELLO_ACTIVATOR;
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);		/* no name */
	h.flags = KDBUS_HELLO_POLICY_HOLDER;
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);		/* no name */
	h.flags = 0;
	h.names[0] = "foo.bar";
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);		/* name on ordinary */
	h.flags = KDBUS_HELLO_ACTIVATOR;
	h.names[0] = "foo.bar.*";
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);		/* wildcard activator */
	h.names[0] = "foo.bar";
	h.names[1] = "foo.baz";
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EINVAL);		/* two names */
	h.names[1] = NULL;
	h.access[0] = &a;
	h.n_access[0] = 1;
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	ASSERT_RETURN(c);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_hello_unprivileged_roles(Env *env) {
	struct kdbus_creds cr;
	KtHello h = { .flags = KDBUS_HELLO_MONITOR };
	KdbusConn *c = NULL;

	if (geteuid() == 4242)
		SKIP_BECAUSE("runs as the uid it fakes");
	ASSERT_EQ(kt_hello_as(env, &h, &cr, 4242, 4242), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EPERM);
	h.flags = KDBUS_HELLO_ACTIVATOR;
	h.names[0] = "foo.bar";
	ASSERT_EQ(kt_hello_as(env, &h, &cr, 4242, 4242), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EPERM);
	h.flags = KDBUS_HELLO_POLICY_HOLDER;
	ASSERT_EQ(kt_hello_as(env, &h, &cr, 4242, 4242), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), -EPERM);
	h.flags = 0;
	h.names[0] = NULL;
	ASSERT_EQ(kt_hello_as(env, &h, &cr, 4242, 4242), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_hello_items(Env *env) {
	struct kdbus_policy_access a = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 };
	KtHello h = { .keep_items = true };
	KdbusConn *c = NULL, *d = NULL;
	struct kdbus_item *it;
	bool nonzero = false;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	ASSERT_RETURN(h.out.id > kdbus_conn_get_id(env->conn));
	ASSERT_EQ(h.out.id, kdbus_conn_get_id(c));
	for (int i = 0; i < 16; i++)
		nonzero |= h.out.id128[i] != 0;
	ASSERT_RETURN(nonzero);
	ASSERT_EQ(h.out.items_size, KDBUS_ITEM_SIZE(sizeof(struct kdbus_bloom_parameter)));
	it = kdbus_pool_ptr(c, h.out.offset);
	ASSERT_EQ(it->type, KDBUS_ITEM_BLOOM_PARAMETER);
	ASSERT_EQ(it->bloom_parameter.size, BLOOM_SIZE);
	ASSERT_EQ(it->bloom_parameter.n_hash, BLOOM_N_HASH);
	ASSERT_EQ(kt_free(c, h.out.offset), 0);
	ASSERT_EQ(kt_free(c, h.out.offset), -ENXIO);

	/* an activator gets its NAME and POLICY_ACCESS items back */
	h = (KtHello){ .flags = KDBUS_HELLO_ACTIVATOR, .keep_items = true, .names = { "org.kt.Items" },
		       .access = { &a }, .n_access = { 1 } };
	ASSERT_EQ(kt_hello_full(env->bus, &h, &d), 0);
	it = kdbus_pool_ptr(d, h.out.offset);
	ASSERT_EQ(it->type, KDBUS_ITEM_BLOOM_PARAMETER);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_NAME);
	ASSERT_RETURN(strcmp(it->str, "org.kt.Items") == 0);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_POLICY_ACCESS);
	ASSERT_EQ(it->policy_access.access, KDBUS_POLICY_TALK);
	ASSERT_EQ(kt_free(d, h.out.offset), 0);
	kdbus_conn_close(d);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_hello_negotiate(Env *env) {
	KtHello h = { .flags = KDBUS_FLAG_NEGOTIATE };
	KdbusConn *c = (KdbusConn *)1;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	ASSERT_RETURN(c == NULL);
	ASSERT_EQ(h.out.flags, KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_ACTIVATOR |
		  KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR);
	return TEST_OK;
}

int test_conn_info_by_id(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(c), NULL, 0, &info, &off), 0);
	ASSERT_EQ(info->id, kdbus_conn_get_id(c));
	ASSERT_EQ(info->flags, 0);
	ASSERT_EQ(info->size, sizeof(*info));
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(env->conn), NULL, 0, &info, &off), 0);
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_conn_info_by_name(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_info *info;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_name_acquire(c, "org.kt.Info", 0, NULL), 0);
	ASSERT_EQ(kt_conn_info(env->conn, 0, "org.kt.Info", KDBUS_ATTACH_NAMES, &info, &off), 0);
	ASSERT_EQ(info->id, kdbus_conn_get_id(c));
	it = kt_info_item(info, KDBUS_ITEM_OWNED_NAME, 0);
	ASSERT_RETURN(it && strcmp(it->name.name, "org.kt.Info") == 0);
	ASSERT_RETURN(it->name.flags & KDBUS_NAME_PRIMARY);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_conn_info_errors(Env *env) {
	ASSERT_EQ(kt_conn_info(env->conn, 0, "org.kt.NoSuchName", 0, NULL, NULL), -ESRCH);
	ASSERT_EQ(kt_conn_info(env->conn, 0x7fffffff, NULL, 0, NULL, NULL), -ENXIO);
	ASSERT_EQ(kt_conn_info(env->conn, 0, NULL, 0, NULL, NULL), -EINVAL);
	ASSERT_EQ(kt_conn_info(env->conn, 0, "invalid", 0, NULL, NULL), -EINVAL);
	ASSERT_EQ(kt_conn_info(env->conn, 1, NULL, 1ULL << 50, NULL, NULL), -EINVAL);
	return TEST_OK;
}

int test_conn_info_metadata(Env *env) {
	struct kdbus_creds cr = { 1001, 1002, 1003, 1004, 2001, 2002, 2003, 2004 };
	struct kdbus_pids pids = { 111, 112, 113 };
	uint64_t groups[] = { 7, 8, 9 };
	KtHello h = {
		.attach_send = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_AUXGROUPS |
			       KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_SECLABEL |
			       KDBUS_ATTACH_CONN_DESCRIPTION | KDBUS_ATTACH_EXE,
		.creds = &cr, .pids = &pids, .groups = groups, .n_groups = 3,
		.seclabel = "system_u:test", .pid_comm = "ktcomm", .description = "kt-desc",
	};
	struct kdbus_info *info;
	struct kdbus_item *it;
	KdbusConn *c = NULL;
	uint64_t off;

	ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(c), NULL, _KDBUS_ATTACH_ALL & ~KDBUS_ATTACH_PIDS,
			       &info, &off), 0);
	it = kt_info_item(info, KDBUS_ITEM_CREDS, 0);
	ASSERT_RETURN(it);
	ASSERT_EQ(it->creds.uid, 1001);
	ASSERT_EQ(it->creds.euid, 1002);
	ASSERT_EQ(it->creds.fsgid, 2004);
	ASSERT_RETURN(!kt_info_item(info, KDBUS_ITEM_PIDS, 0));	/* not asked for */
	it = kt_info_item(info, KDBUS_ITEM_AUXGROUPS, 0);
	ASSERT_RETURN(it && it->size == KDBUS_ITEM_HEADER_SIZE + 24 && it->data64[2] == 9);
	it = kt_info_item(info, KDBUS_ITEM_PID_COMM, 0);
	ASSERT_RETURN(it && strcmp(it->str, "ktcomm") == 0);
	it = kt_info_item(info, KDBUS_ITEM_SECLABEL, 0);
	ASSERT_RETURN(it && strcmp(it->str, "system_u:test") == 0);
	it = kt_info_item(info, KDBUS_ITEM_CONN_DESCRIPTION, 0);
	ASSERT_RETURN(it && strcmp(it->str, "kt-desc") == 0);
	/* faked identity: no process items of the bridge */
	ASSERT_RETURN(!kt_info_item(info, KDBUS_ITEM_EXE, 0));
	/* not in the target's attach_flags_send */
	ASSERT_RETURN(!kt_info_item(info, KDBUS_ITEM_CGROUP, 0));
	ASSERT_EQ(kt_free(env->conn, off), 0);

	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(c), NULL, KDBUS_ATTACH_PIDS, &info, &off), 0);
	it = kt_info_item(info, KDBUS_ITEM_PIDS, 0);
	ASSERT_RETURN(it && it->pids.pid == 111 && it->pids.ppid == 113);
	ASSERT_EQ(kt_free(env->conn, off), 0);

	/* without identity items the connection has the process's */
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(env->conn), NULL, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS,
			       &info, &off), 0);
	it = kt_info_item(info, KDBUS_ITEM_CREDS, 0);
	ASSERT_RETURN(it && it->creds.uid == getuid() && it->creds.euid == geteuid());
	it = kt_info_item(info, KDBUS_ITEM_PIDS, 0);
	ASSERT_RETURN(it && it->pids.pid == (uint64_t)getpid());
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_user_conn_limit(Env *env) {
	KdbusLimits l = { .max_conns_per_user = 3 };
	KdbusConn *c[4] = {};

	USERSPACE_ONLY(env);
	ASSERT_EQ(kdbus_bus_set_limits(env->bus, &l), 0);
	c[0] = kt_hello_uid(env, 5555, 5555, 0);
	c[1] = kt_hello_uid(env, 5555, 5555, 0);
	c[2] = kt_hello_uid(env, 5555, 5555, 0);
	ASSERT_RETURN(c[0] && c[1] && c[2]);
	{
		struct kdbus_creds cr = { 5555, 5555, 5555, 5555, 1, 1, 1, 1 };
		KtHello h = { .creds = &cr };

		ASSERT_EQ(kt_hello_full(env->bus, &h, &c[3]), -EMFILE);
		/* another uid is not affected */
		cr.uid = 5556;
		ASSERT_EQ(kt_hello_full(env->bus, &h, &c[3]), 0);
		kdbus_conn_close(c[3]);
		cr.uid = 5555;
		kdbus_conn_close(c[0]);
		ASSERT_EQ(kt_hello_full(env->bus, &h, &c[0]), 0);
	}
	for (int i = 0; i < 3; i++)
		kdbus_conn_close(c[i]);
	return TEST_OK;
}

int test_update_attach_flags(Env *env) {
	KdbusConn *c = kt_hello_uid(env, 5555, 5555, 0);
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_update_attach(c, (uint64_t)-2, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PID_COMM), 0);
	ASSERT_EQ(kt_update_attach(c, 1ULL << 33, (uint64_t)-2), -EINVAL);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 1), 0);
	ASSERT_EQ(kt_recv(c, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0));
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_PIDS, 0));
	ASSERT_EQ(kt_free(c, off), 0);
	/* the sender withdraws PID_COMM from another user; CREDS is a basic
	 * item, not the sender's to withdraw */
	ASSERT_EQ(kt_update_attach(env->conn, KDBUS_ATTACH_PIDS, (uint64_t)-2), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 2), 0);
	ASSERT_EQ(kt_recv(c, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_CREDS, 0));
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0));
	ASSERT_EQ(kt_free(c, off), 0);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_byebye_busy(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 1), 0);
	ASSERT_EQ(kt_byebye(c), -EBUSY);
	ASSERT_EQ(kt_drain(c), 1);
	ASSERT_EQ(kt_byebye(c), 0);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(c), 2), -ENXIO);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_byebye_twice(Env *env) {
	KdbusConn *c = kt_hello(env, 0);

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_byebye(c), 0);
	ASSERT_EQ(kt_byebye(c), -ECONNRESET);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_byebye_commands(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	uint64_t flags;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_name_acquire(c, "org.kt.Bye", 0, NULL), 0);
	ASSERT_EQ(kt_byebye(c), 0);
	ASSERT_EQ(kt_send(c, kdbus_conn_get_id(env->conn), 1), -ECONNRESET);
	ASSERT_EQ(kt_recv(c, NULL, NULL), -ECONNRESET);
	ASSERT_EQ(kt_name_acquire(c, "org.kt.Bye2", 0, &flags), -ECONNRESET);
	ASSERT_EQ(kt_match_empty(c, 1), -ECONNRESET);
	/* the name went away with it */
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Bye", 1, 0), -ESRCH);
	kdbus_conn_close(c);
	return TEST_OK;
}

int test_byebye_not_ordinary(Env *env) {
	KdbusConn *a = NULL;

	ASSERT_EQ(kt_hello_activator(env, "org.kt.ByeAct", NULL, 0, &a), 0);
	ASSERT_EQ(kt_byebye(a), -EOPNOTSUPP);
	kdbus_conn_close(a);
	return TEST_OK;
}

int test_free_unknown(Env *env) {
	ASSERT_EQ(kt_free(env->conn, 0), -ENXIO);
	ASSERT_EQ(kt_free(env->conn, 4096), -ENXIO);
	ASSERT_EQ(kt_free(env->conn, (uint64_t)-8), -ENXIO);
	return TEST_OK;
}

int test_free_twice(Env *env) {
	uint64_t off;

	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(env->conn), 7), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, &off), 0);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_free(env->conn, off), -ENXIO);
	return TEST_OK;
}

int test_free_peeked(Env *env) {
	struct kdbus_cmd_recv r;
	uint64_t off;

	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(env->conn), 7), 0);
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_PEEK, 0, &r), 0);
	ASSERT_EQ(kt_free(env->conn, r.msg.offset), 0);
	/* still queued: the slice exists but is no longer the user's */
	ASSERT_EQ(kt_free(env->conn, r.msg.offset), -EINVAL);
	ASSERT_EQ(kt_recv(env->conn, NULL, &off), 0);
	ASSERT_EQ(off, r.msg.offset);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_free(env->conn, off), -ENXIO);
	return TEST_OK;
}

/* kdbus_recv_batch() and kdbus_free_batch(): queue order, FREE of a batch
 * message by either call, what each call refuses */
int test_recv_batch(Env *env) {
	uint64_t off[8], peeked;
	struct kdbus_cmd_recv r;
	uint64_t id = kdbus_conn_get_id(env->conn);

	USERSPACE_ONLY(env);	/* the ioctl backend's FREE has other errors */
	ASSERT_EQ(kdbus_recv_batch(env->conn, off, 8), -EAGAIN);
	for (uint64_t i = 1; i <= 5; i++)
		ASSERT_EQ(kt_send(env->conn, id, i), 0);
	ASSERT_EQ(kdbus_recv_batch(env->conn, off, 3), 3);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(((struct kdbus_msg *)kdbus_pool_ptr(env->conn, off[i]))->cookie, i + 1);
	/* KDBUS_CMD_FREE takes a batch message as well, once */
	ASSERT_EQ(kt_free(env->conn, off[1]), 0);
	ASSERT_EQ(kt_free(env->conn, off[1]), -ENXIO);
	ASSERT_EQ(kdbus_free_batch(env->conn, (uint64_t[]){ off[0], off[2] }, 2), 0);
	ASSERT_EQ(kt_free(env->conn, off[0]), -ENXIO);

	/* a PEEKed message is not kdbus_free_batch()'s: refused, still there */
	ASSERT_EQ(kt_recv_flags(env->conn, KDBUS_RECV_PEEK, 0, &r), 0);
	peeked = r.msg.offset;
	ASSERT_EQ(kdbus_free_batch(env->conn, &peeked, 1), -ENXIO);
	ASSERT_EQ(kt_free(env->conn, peeked), 0);
	ASSERT_EQ(kdbus_recv_batch(env->conn, off, 8), 2);
	ASSERT_EQ(off[0], peeked);
	ASSERT_EQ(((struct kdbus_msg *)kdbus_pool_ptr(env->conn, off[1]))->cookie, 5);
	/* another connection's message: refused */
	KdbusConn *other = kt_hello(env, 0);
	ASSERT_RETURN(other);
	ASSERT_EQ(kdbus_free_batch(other, off, 1), -ENXIO);
	ASSERT_EQ(kdbus_free_batch(env->conn, off, 2), 0);
	ASSERT_EQ(kdbus_recv_batch(env->conn, off, 8), -EAGAIN);
	kdbus_conn_close(other);
	return TEST_OK;
}

/* messages with fds taken by kdbus_recv_batch() and never freed go with
 * the connection (valgrind and ASan see any leak) */
int test_recv_batch_fds_on_close(Env *env) {
	KdbusConn *a = kt_hello(env, KDBUS_HELLO_ACCEPT_FD), *b = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	int fds[2] = { 0, 1 };
	uint64_t off[4];

	ASSERT_RETURN(a && b);
	for (int i = 0; i < 3; i++) {
		KtMsg m = KT_MSG(.dst_id = kdbus_conn_get_id(b), .cookie = i + 1, .fds = fds, .n_fds = 2);

		ASSERT_EQ(kt_send_msg(a, &m), 0);
	}
	ASSERT_EQ(kdbus_recv_batch(b, off, 4), 3);
	/* the fds were installed: the receiver owns them */
	for (int i = 0; i < 3; i++) {
		struct kdbus_msg *m = kdbus_pool_ptr(b, off[i]);
		struct kdbus_item *it;
		int n = 0;

		KDBUS_ITEM_FOREACH(it, m, items)
			if (it->type == KDBUS_ITEM_FDS) {
				for (size_t k = 0; k < (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int); k++) {
					ASSERT_RETURN(it->fds[k] > 2);
					close(it->fds[k]);
					n++;
				}
			}
		ASSERT_EQ(n, 2);
	}
	ASSERT_EQ(kdbus_free_batch(b, off, 1), 0);
	kdbus_conn_close(b);	/* two still held */
	kdbus_conn_close(a);
	return TEST_OK;
}
