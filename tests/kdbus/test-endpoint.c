/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-endpoint.c - custom endpoints (ENDPOINT_MAKE, ENDPOINT_UPDATE):
 * their files, their policy and what it hides (SEE), the rights of their
 * connections, their end (selftests test-endpoint.c checks the basics).
 * Kernel module only: the userspace core has no endpoints.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus/ioctl.h"

#define IOCTL_ONLY(env)                                                         \
	do {                                                                    \
		if ((env)->backend != KDBUS_BACKEND_IOCTL)                      \
			SKIP_BECAUSE("needs the kernel module");                \
	} while (0)

typedef struct EpPolicy {
	const char *name;
	uint64_t type, access;
} EpPolicy;

/* ENDPOINT_MAKE (@request) or ENDPOINT_UPDATE on @fd: @name (NULL: no
 * MAKE_NAME item) and a POLICY_ACCESS item per entry of @policy */
static int ep_cmd(int fd, unsigned long request, uint64_t flags, const char *name, const EpPolicy *policy,
		  size_t n) {
	uint64_t buf[512] = {};
	struct kdbus_cmd *cmd = (void *)buf;
	struct kdbus_item *it = cmd->items;

	if (name) {
		it->size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
		it->type = KDBUS_ITEM_MAKE_NAME;
		strcpy(it->str, name);
		it = (void *)((uint8_t *)it + KDBUS_ALIGN8(it->size));
	}
	for (size_t i = 0; i < n; i++) {
		it->size = KDBUS_ITEM_HEADER_SIZE + strlen(policy[i].name) + 1;
		it->type = KDBUS_ITEM_NAME;
		strcpy(it->str, policy[i].name);
		it = (void *)((uint8_t *)it + KDBUS_ALIGN8(it->size));
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_policy_access);
		it->type = KDBUS_ITEM_POLICY_ACCESS;
		it->policy_access.type = policy[i].type;
		it->policy_access.access = policy[i].access;
		it = (void *)((uint8_t *)it + KDBUS_ALIGN8(it->size));
	}
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	cmd->flags = flags;
	return ioctl(fd, request, cmd) < 0 ? -errno : 0;
}

static int open_node(Env *env, const char *node) {
	char path[256];

	snprintf(path, sizeof(path), "/sys/fs/kdbus/%s/%s", env->name, node);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* a custom endpoint "<euid>-<suffix>" of the test's bus with @policy; its
 * owner's fd in *ret_fd, a bus handle for HELLOs on it in *ret_bus */
static int ep_make(Env *env, const char *suffix, const EpPolicy *policy, size_t n, int *ret_fd,
		   KdbusBus **ret_bus, char *name, size_t name_size) {
	int fd = open_node(env, "bus"), r;

	if (fd < 0)
		return -errno;
	snprintf(name, name_size, "%u-%s", (unsigned)geteuid(), suffix);
	r = ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 0, name, policy, n);
	if (r == 0)
		r = kdbus_ioctl_bus_endpoint(env->bus, name, ret_bus);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static KdbusConn *ep_hello(KdbusBus *ep, uint64_t recv) {
	KtHello h = { .attach_send = _KDBUS_ATTACH_ALL, .attach_recv = recv };
	KdbusConn *c = NULL;

	return kt_hello_full(ep, &h, &c) == 0 ? c : NULL;
}

/* is @name among the names @conn lists; *ret_id: its owner */
static bool listed(KdbusConn *conn, uint64_t flags, const char *name, uint64_t id) {
	struct kdbus_info *l, *i;
	uint64_t size, off;
	bool found = false;

	if (kt_list(conn, flags, &l, &size, &off) < 0)
		return false;
	for (i = l; (uint8_t *)i < (uint8_t *)l + size; i = (void *)((uint8_t *)i + i->size)) {
		struct kdbus_item *it = kt_info_item(i, KDBUS_ITEM_OWNED_NAME, 0);

		if (name ? (it && strcmp(it->name.name, name) == 0) : (!it && i->id == id))
			found = true;
	}
	kt_free(conn, off);
	return found;
}

/* names, files, who may make and update them, which handle is what */
int test_endpoint_make(Env *env) {
	IOCTL_ONLY(env);
	char name[128], path[256], long_name[80];
	int fd = open_node(env, "bus"), fd2 = open_node(env, "bus"), efd;
	struct stat st;

	ASSERT_RETURN(fd >= 0 && fd2 >= 0);
	snprintf(name, sizeof(name), "%u-kt-ep", (unsigned)geteuid() + 1);
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 0, name, NULL, 0), -EINVAL);
	snprintf(long_name, sizeof(long_name), "%u-%s", (unsigned)geteuid(),
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 0, long_name, NULL, 0), -ENAMETOOLONG);
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 0, NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 1ULL << 20, name, NULL, 0), -EINVAL);
	/* only the handle that made an endpoint updates it */
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_UPDATE, 0, NULL, NULL, 0), -EBADFD);

	snprintf(name, sizeof(name), "%u-kt-ep", (unsigned)geteuid());
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, KDBUS_MAKE_ACCESS_GROUP, name, NULL, 0), 0);
	snprintf(path, sizeof(path), "/sys/fs/kdbus/%s/%s", env->name, name);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ(st.st_mode, S_IFREG | 0660);
	ASSERT_EQ(st.st_uid, geteuid());
	ASSERT_EQ(st.st_gid, getegid());
	/* the handle is its owner now, and nothing else */
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_MAKE, 0, name, NULL, 0), -EBADFD);
	ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_UPDATE, 0, NULL, NULL, 0), 0);
	{
		struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = 4096 };

		ASSERT_RETURN(ioctl(fd, KDBUS_CMD_HELLO, &h) < 0 && errno == EBADFD);
	}
	/* one name, one endpoint */
	ASSERT_EQ(ep_cmd(fd2, KDBUS_CMD_ENDPOINT_MAKE, 0, name, NULL, 0), -EEXIST);
	/* not from a connection, nor from a custom endpoint */
	ASSERT_EQ(ep_cmd(kdbus_conn_get_fd(env->conn), KDBUS_CMD_ENDPOINT_MAKE, 0, name, NULL, 0), -EBADFD);
	efd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_RETURN(efd >= 0);
	snprintf(name, sizeof(name), "%u-kt-ep2", (unsigned)geteuid());
	ASSERT_EQ(ep_cmd(efd, KDBUS_CMD_ENDPOINT_MAKE, 0, name, NULL, 0), -EPERM);
	close(efd);

	/* its owner's fd closed, the endpoint is gone */
	close(fd);
	ASSERT_RETURN(stat(path, &st) < 0 && errno == ENOENT);
	close(fd2);
	return TEST_OK;
}

/*
 * What the policy of a custom endpoint does not let its connections see
 * does not exist for them: names in LIST and CONN_INFO, peers, names of
 * OWNED_NAME items, name notifications, destinations of SEND.  Seen is
 * not talked to; an answer needs no policy.
 */
int test_endpoint_see(Env *env) {
	IOCTL_ONLY(env);
	const EpPolicy policy[] = {
		{ "org.kt.ep.Seen", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE },
		{ "org.kt.ep.Talk", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK },
	};
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0), *t = kt_hello(env, 0), *e;
	KdbusBus *ep = NULL;
	struct kdbus_info *info;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	char name[128];
	uint64_t off;
	int fd;

	ASSERT_RETURN(a && b && t);
	ASSERT_EQ(ep_make(env, "kt-see", policy, 2, &fd, &ep, name, sizeof(name)), 0);
	e = ep_hello(ep, KDBUS_ATTACH_NAMES);
	ASSERT_RETURN(e);
	ASSERT_EQ(kt_match_name(e, 1, KDBUS_ITEM_NAME_ADD, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY, NULL), 0);
	ASSERT_EQ(kt_name_acquire(a, "org.kt.ep.Hidden", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(b, "org.kt.ep.Seen", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(t, "org.kt.ep.Talk", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(t, "org.kt.ep.Hidden2", 0, NULL), 0);

	/* notifications: only those of what it sees */
	ASSERT_EQ(kt_recv(e, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_NAME_ADD, 0);
	ASSERT_RETURN(it && strcmp(it->name_change.name, "org.kt.ep.Seen") == 0);
	ASSERT_EQ(kt_free(e, off), 0);
	ASSERT_EQ(kt_recv(e, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_NAME_ADD, 0);
	ASSERT_RETURN(it && strcmp(it->name_change.name, "org.kt.ep.Talk") == 0);
	ASSERT_EQ(kt_free(e, off), 0);
	ASSERT_EQ(kt_recv(e, NULL, NULL), -EAGAIN);

	/* LIST */
	ASSERT_RETURN(listed(e, KDBUS_LIST_NAMES, "org.kt.ep.Seen", 0));
	ASSERT_RETURN(listed(e, KDBUS_LIST_NAMES, "org.kt.ep.Talk", 0));
	ASSERT_RETURN(!listed(e, KDBUS_LIST_NAMES, "org.kt.ep.Hidden", 0));
	ASSERT_RETURN(!listed(e, KDBUS_LIST_UNIQUE, NULL, kdbus_conn_get_id(a)));
	ASSERT_RETURN(listed(e, KDBUS_LIST_UNIQUE, NULL, kdbus_conn_get_id(e)));
	ASSERT_RETURN(listed(env->conn, KDBUS_LIST_NAMES, "org.kt.ep.Hidden", 0));

	/* CONN_INFO */
	ASSERT_EQ(kt_conn_info(e, 0, "org.kt.ep.Hidden", 0, &info, &off), -ESRCH);
	ASSERT_EQ(kt_conn_info(e, kdbus_conn_get_id(a), NULL, 0, &info, &off), -ENXIO);
	ASSERT_EQ(kt_conn_info(e, kdbus_conn_get_id(t), NULL, KDBUS_ATTACH_NAMES, &info, &off), 0);
	ASSERT_RETURN(kt_info_item(info, KDBUS_ITEM_OWNED_NAME, 0));
	ASSERT_RETURN(!kt_info_item(info, KDBUS_ITEM_OWNED_NAME, 1));	/* not Hidden2 */
	ASSERT_EQ(kt_free(e, off), 0);

	/* SEND: what it does not see does not exist, what it sees but may
	 * not talk to refuses it */
	ASSERT_EQ(kt_send_name(e, "org.kt.ep.Hidden", 1, 0), -ESRCH);
	ASSERT_EQ(kt_send(e, kdbus_conn_get_id(a), 2), -ENXIO);
	ASSERT_EQ(kt_send_name(e, "org.kt.ep.Seen", 3, 0), -EPERM);
	ASSERT_EQ(kt_send(e, kdbus_conn_get_id(b), 4), -EPERM);
	ASSERT_EQ(kt_send_name(e, "org.kt.ep.Talk", 5, 0), 0);
	ASSERT_EQ(kt_drain(t), 1);

	/* what it receives names only what it sees */
	ASSERT_EQ(kt_send(t, kdbus_conn_get_id(e), 6), 0);
	ASSERT_EQ(kt_recv(e, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_OWNED_NAME, 0);
	ASSERT_RETURN(it && strcmp(it->name.name, "org.kt.ep.Talk") == 0);
	ASSERT_RETURN(!kt_msg_item(m, KDBUS_ITEM_OWNED_NAME, 1));
	ASSERT_EQ(kt_free(e, off), 0);

	/* a call from a peer it cannot see is answered all the same */
	ASSERT_EQ(kt_call(a, kdbus_conn_get_id(e), 7, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_drain(e), 1);
	ASSERT_EQ(kt_reply(e, kdbus_conn_get_id(a), 8, 7), 0);
	ASSERT_EQ(kt_recv(a, &m, &off), 0);
	ASSERT_EQ(m->cookie_reply, 7);
	ASSERT_EQ(kt_free(a, off), 0);

	/* ENDPOINT_UPDATE replaces the policy: Hidden appears, Talk is
	 * no longer talked to */
	{
		const EpPolicy p2[] = {
			{ "org.kt.ep.Hidden", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE },
			{ "org.kt.ep.Talk", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE },
		};

		ASSERT_EQ(ep_cmd(fd, KDBUS_CMD_ENDPOINT_UPDATE, 0, NULL, p2, 2), 0);
	}
	ASSERT_EQ(kt_conn_info(e, 0, "org.kt.ep.Hidden", 0, &info, &off), 0);
	ASSERT_EQ(info->id, kdbus_conn_get_id(a));
	ASSERT_EQ(kt_free(e, off), 0);
	ASSERT_EQ(kt_conn_info(e, 0, "org.kt.ep.Seen", 0, &info, &off), -ESRCH);
	ASSERT_EQ(kt_send_name(e, "org.kt.ep.Talk", 9, 0), -EPERM);

	kdbus_conn_close(e);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_conn_close(t);
	kdbus_bus_close(ep);
	close(fd);
	return TEST_OK;
}

/*
 * Through a custom endpoint nobody is privileged nor the bus owner: no
 * monitor, activator, policy holder or faked identity, and a name is
 * owned only when both the endpoint's policy and the bus's grant it.
 */
int test_endpoint_rights(Env *env) {
	IOCTL_ONLY(env);
	const EpPolicy policy[] = {
		{ "org.kt.ep.Own", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN },
		{ "org.kt.ep.Mine", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN },
	};
	struct kdbus_policy_access world_own = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 };
	struct kdbus_creds cr = { 0, 0, 0, 0, 0, 0, 0, 0 };
	KdbusConn *e, *holder = NULL, *c = NULL;
	KdbusBus *ep = NULL;
	char name[128];
	int fd;

	ASSERT_EQ(ep_make(env, "kt-rights", policy, 2, &fd, &ep, name, sizeof(name)), 0);
	{
		KtHello h = { .flags = KDBUS_HELLO_MONITOR };

		ASSERT_EQ(kt_hello_full(ep, &h, &c), -EOPNOTSUPP);
	}
	{
		KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .names = { "org.kt.ep.Own" },
			      .access = { &world_own }, .n_access = { 1 } };

		ASSERT_EQ(kt_hello_full(ep, &h, &c), -EPERM);
		h.flags = KDBUS_HELLO_ACTIVATOR;
		ASSERT_EQ(kt_hello_full(ep, &h, &c), -EPERM);
	}
	{
		KtHello h = { .creds = &cr };

		ASSERT_EQ(kt_hello_full(ep, &h, &c), -EPERM);
	}
	e = ep_hello(ep, 0);
	ASSERT_RETURN(e);
	/* the bus owner could; through the endpoint the bus's policy counts */
	ASSERT_EQ(kt_name_acquire(env->conn, "org.kt.ep.Nowhere", 0, NULL), 0);
	ASSERT_EQ(kt_name_acquire(e, "org.kt.ep.Own", 0, NULL), -EPERM);
	ASSERT_EQ(kt_hello_policy(env, "org.kt.ep.Own", &world_own, 1, &holder), 0);
	ASSERT_EQ(kt_name_acquire(e, "org.kt.ep.Own", 0, NULL), 0);
	/* the bus's policy alone is not enough */
	{
		KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .attach_send = _KDBUS_ATTACH_ALL,
			      .names = { "org.kt.ep.Other" }, .access = { &world_own }, .n_access = { 1 } };

		ASSERT_EQ(kt_hello_full(env->bus, &h, &c), 0);
	}
	ASSERT_EQ(kt_name_acquire(e, "org.kt.ep.Other", 0, NULL), -EPERM);
	kdbus_conn_close(c);
	kdbus_conn_close(holder);
	kdbus_conn_close(e);
	kdbus_bus_close(ep);
	close(fd);
	return TEST_OK;
}

/*
 * An endpoint ends with its owner's fd: its connections are disconnected
 * and no HELLO reaches it any more.  The bus may go first: its endpoints'
 * files go with it, and their owners' fds close cleanly afterwards.
 */
int test_endpoint_close(Env *env) {
	IOCTL_ONLY(env);
	const EpPolicy policy[] = { { "org.kt.ep.Any", KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK } };
	KdbusConn *e, *e2, *late = NULL;
	KdbusBus *ep = NULL, *bus = NULL, *ep2 = NULL;
	char name[128], bname[128];
	int fd, bfd;

	ASSERT_EQ(ep_make(env, "kt-close", policy, 1, &fd, &ep, name, sizeof(name)), 0);
	e = ep_hello(ep, 0);
	e2 = ep_hello(ep, 0);
	ASSERT_RETURN(e && e2);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(e), 1), 0);
	close(fd);
	ASSERT_EQ(kt_recv(e, NULL, NULL), -ECONNRESET);
	ASSERT_EQ(kt_send(env->conn, kdbus_conn_get_id(e2), 2), -ENXIO);
	ASSERT_EQ(kt_hello_full(ep, &(KtHello){ .attach_send = 0 }, &late), -ENOENT);
	kdbus_conn_close(e);
	kdbus_conn_close(e2);
	kdbus_bus_close(ep);

	/* a bus of its own, closed before its endpoint's owner */
	snprintf(bname, sizeof(bname), "%s-ep", env->name);
	ASSERT_EQ(kt_bus_make(KDBUS_BACKEND_IOCTL, bname, 0, &bus), 0);
	{
		char path[256];

		snprintf(path, sizeof(path), "/sys/fs/kdbus/%s/bus", bname);
		bfd = open(path, O_RDWR | O_CLOEXEC);
	}
	ASSERT_RETURN(bfd >= 0);
	snprintf(name, sizeof(name), "%u-kt-late", (unsigned)geteuid());
	ASSERT_EQ(ep_cmd(bfd, KDBUS_CMD_ENDPOINT_MAKE, KDBUS_MAKE_ACCESS_WORLD, name, policy, 1), 0);
	ASSERT_EQ(kdbus_ioctl_bus_endpoint(bus, name, &ep2), 0);
	e = ep_hello(ep2, 0);
	ASSERT_RETURN(e);
	kdbus_bus_close(bus);
	ASSERT_EQ(kt_recv(e, NULL, NULL), -ECONNRESET);
	ASSERT_EQ(ep_cmd(bfd, KDBUS_CMD_ENDPOINT_UPDATE, 0, NULL, NULL, 0), 0);
	close(bfd);
	kdbus_conn_close(e);
	kdbus_bus_close(ep2);
	return TEST_OK;
}
