/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kdbus-util.c - helpers of the conformance suite (see kdbus-test.h)
 */

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kdbus-test.h"

#define ITEM_NEXT(i) ((struct kdbus_item *)((uint8_t *)(i) + KDBUS_ALIGN8((i)->size)))

static __thread uint64_t cmd_buf[8192];	/* 64 KiB, 8-aligned scratch for commands */

static struct kdbus_item *put_item(struct kdbus_item *it, uint64_t type, const void *data, size_t size) {
	it->size = KDBUS_ITEM_HEADER_SIZE + size;
	it->type = type;
	if (size)
		memcpy(it->data, data, size);
	memset((uint8_t *)it + it->size, 0, KDBUS_ALIGN8(it->size) - it->size);
	return ITEM_NEXT(it);
}

int kt_bus_make(KdbusBackend backend, const char *name, uint64_t req_attach, KdbusBus **ret) {
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)cmd_buf;
	struct kdbus_bloom_parameter bp = { BLOOM_SIZE, BLOOM_N_HASH };
	struct kdbus_item *it;

	memset(cmd_buf, 0, 4096);
	it = cmd->items;
	it = put_item(it, KDBUS_ITEM_MAKE_NAME, name, strlen(name) + 1);
	it = put_item(it, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	if (req_attach)
		it = put_item(it, KDBUS_ITEM_ATTACH_FLAGS_SEND, &req_attach, sizeof(req_attach));
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_bus_make(backend, cmd, ret);
}

int kt_hello_full(KdbusBus *bus, KtHello *h, KdbusConn **ret) {
	struct kdbus_cmd_hello *cmd = (struct kdbus_cmd_hello *)cmd_buf;
	struct kdbus_item *it;
	int r;

	memset(cmd_buf, 0, 16384);
	cmd->flags = h->flags;
	cmd->attach_flags_send = h->attach_send;
	cmd->attach_flags_recv = h->attach_recv;
	cmd->pool_size = h->pool_size ? h->pool_size : POOL_SIZE;
	it = cmd->items;
	if (h->description)
		it = put_item(it, KDBUS_ITEM_CONN_DESCRIPTION, h->description, strlen(h->description) + 1);
	if (h->creds)
		it = put_item(it, KDBUS_ITEM_CREDS, h->creds, sizeof(*h->creds));
	if (h->pids)
		it = put_item(it, KDBUS_ITEM_PIDS, h->pids, sizeof(*h->pids));
	if (h->groups)
		it = put_item(it, KDBUS_ITEM_AUXGROUPS, h->groups, h->n_groups * sizeof(uint64_t));
	if (h->seclabel)
		it = put_item(it, KDBUS_ITEM_SECLABEL, h->seclabel, strlen(h->seclabel) + 1);
	if (h->pid_comm)
		it = put_item(it, KDBUS_ITEM_PID_COMM, h->pid_comm, strlen(h->pid_comm) + 1);
	for (size_t i = 0; i < 8 && h->names[i]; i++) {
		it = put_item(it, KDBUS_ITEM_NAME, h->names[i], strlen(h->names[i]) + 1);
		for (size_t j = 0; j < h->n_access[i]; j++)
			it = put_item(it, KDBUS_ITEM_POLICY_ACCESS, &h->access[i][j],
				      sizeof(struct kdbus_policy_access));
	}
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	r = h->use_endpoint_fd ? kdbus_cmd_hello_fd(bus, h->endpoint_fd, cmd, ret) : kdbus_cmd_hello(bus, cmd, ret);
	h->out = *cmd;
	if (r == 0 && *ret && !h->keep_items) {
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = cmd->offset };

		kdbus_cmd_free(*ret, &f);
	}
	return r;
}

KdbusConn *kt_hello(Env *env, uint64_t flags) {
	KtHello h = { .flags = flags, .attach_send = _KDBUS_ATTACH_ALL, .attach_recv = 0 };
	KdbusConn *c = NULL;

	if (kt_hello_full(env->bus, &h, &c) < 0)
		return NULL;
	return c;
}

int kt_open_as(KdbusBus *bus, uint64_t uid, uint64_t gid) {
	return kt_open_as_groups(bus, uid, gid, NULL, 0);
}

int kt_open_as_groups(KdbusBus *bus, uint64_t uid, uint64_t gid, const uint64_t *groups, size_t n_groups) {
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = {};
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	int sv[2], fd = -1, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct caps[2] = {};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		gid_t g[64];

		for (size_t i = 0; i < n_groups && i < 64; i++)
			g[i] = (gid_t)groups[i];
		if (setgroups(n_groups < 64 ? n_groups : 64, g) < 0 || prctl(PR_SET_KEEPCAPS, 1) < 0 ||
		    setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(1);
		caps[0].effective = caps[0].permitted = 1u << CAP_DAC_OVERRIDE;
		if (syscall(SYS_capset, &hdr, caps) < 0)
			_exit(2);
		fd = kdbus_bus_open_endpoint(bus);
		if (fd < 0)
			_exit(3);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		_exit(sendmsg(sv[1], &mh, 0) == 1 ? 0 : 4);
	}
	close(sv[1]);
	if (pid > 0 && recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) == 1 && CMSG_FIRSTHDR(&mh) &&
	    CMSG_FIRSTHDR(&mh)->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	close(sv[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return fd >= 0 ? fd : -EPERM;
}

int kt_hello_as(Env *env, KtHello *h, struct kdbus_creds *creds, uint64_t uid, uint64_t gid) {
	if (env->backend == KDBUS_BACKEND_IOCTL) {
		h->creds = NULL;
		h->endpoint_fd = kt_open_as(env->bus, uid, gid);
		h->use_endpoint_fd = true;
		return h->endpoint_fd < 0 ? h->endpoint_fd : 0;
	}
	*creds = (struct kdbus_creds) { uid, uid, uid, uid, gid, gid, gid, gid };
	h->creds = creds;
	return 0;
}

KdbusConn *kt_hello_uid(Env *env, uint64_t uid, uint64_t gid, uint64_t flags) {
	struct kdbus_creds cr = { uid, uid, uid, uid, gid, gid, gid, gid };
	KtHello h = { .flags = flags, .attach_send = _KDBUS_ATTACH_ALL, .creds = &cr };
	KdbusConn *c = NULL;

	if (env->backend == KDBUS_BACKEND_IOCTL) {
		h.creds = NULL;
		h.endpoint_fd = kt_open_as(env->bus, uid, gid);
		h.use_endpoint_fd = true;
		if (h.endpoint_fd < 0)
			return NULL;
	}
	if (kt_hello_full(env->bus, &h, &c) < 0)
		return NULL;
	return c;
}

int kt_hello_activator(Env *env, const char *name, const struct kdbus_policy_access *a,
		       size_t n, KdbusConn **ret) {
	KtHello h = {
		.flags = KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD,
		.attach_send = _KDBUS_ATTACH_ALL,
		.names = { name },
		.access = { a },
		.n_access = { n },
	};

	return kt_hello_full(env->bus, &h, ret);
}

int kt_hello_policy(Env *env, const char *name, const struct kdbus_policy_access *a,
		    size_t n, KdbusConn **ret) {
	KtHello h = {
		.flags = KDBUS_HELLO_POLICY_HOLDER,
		.attach_send = _KDBUS_ATTACH_ALL,
		.names = { name },
		.access = { a },
		.n_access = { n },
	};

	return kt_hello_full(env->bus, &h, ret);
}

int kt_send_msg(KdbusConn *conn, KtMsg *m) {
	static __thread uint64_t msgbuf[1024];
	struct kdbus_msg *msg = (struct kdbus_msg *)msgbuf;
	struct {
		struct kdbus_cmd_send cmd;
		uint64_t items[16];
	} s;
	struct kdbus_item *it;
	static const uint64_t zero_bloom[512 / 8];
	size_t bloom_size = m->bloom_size ? m->bloom_size : BLOOM_SIZE;
	int r;

	memset(msgbuf, 0, sizeof(msgbuf));
	memset(&s, 0, sizeof(s));
	msg->flags = m->flags;
	msg->priority = m->priority;
	msg->dst_id = m->dst_name && m->dst_id == 0 ? KDBUS_DST_ID_NAME : m->dst_id;
	msg->payload_type = m->payload_type ? m->payload_type : KDBUS_PAYLOAD_DBUS;
	if (m->payload_type == (uint64_t)-1)
		msg->payload_type = KDBUS_PAYLOAD_KERNEL;
	msg->cookie = m->cookie;
	if (m->flags & KDBUS_MSG_EXPECT_REPLY)
		msg->timeout_ns = m->timeout_ns;
	else
		msg->cookie_reply = m->cookie_reply ? m->cookie_reply : m->timeout_ns;

	it = msg->items;
	if (m->dst_name)
		it = put_item(it, KDBUS_ITEM_DST_NAME, m->dst_name, strlen(m->dst_name) + 1);
	for (int i = 0; i < 4; i++) {
		struct kdbus_vec v = { .size = m->vec_size[i], .address = (uint64_t)(uintptr_t)m->vec[i] };

		if (m->vec_size[i])
			it = put_item(it, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	}
	if (m->fds)
		it = put_item(it, KDBUS_ITEM_FDS, m->fds, m->n_fds * sizeof(int));
	if ((m->flags & KDBUS_MSG_SIGNAL) && !m->no_bloom) {
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_filter) + bloom_size;
		it->type = KDBUS_ITEM_BLOOM_FILTER;
		it->bloom_filter.generation = m->bloom_generation;
		memcpy(it->bloom_filter.data, m->bloom ? m->bloom : zero_bloom,
		       bloom_size <= sizeof(zero_bloom) ? bloom_size : sizeof(zero_bloom));
		it = ITEM_NEXT(it);
	}
	if (m->n_keys)
		it = put_item(it, KDBUS_ITEM_MATCH_KEYS, m->keys, m->n_keys * sizeof(uint64_t));
	msg->size = (uint8_t *)it - (uint8_t *)msg;

	s.cmd.flags = m->send_flags;
	s.cmd.msg_address = (uint64_t)(uintptr_t)msg;
	it = s.cmd.items;
	if (m->cancel_fd >= 0)
		it = put_item(it, KDBUS_ITEM_CANCEL_FD, &m->cancel_fd, sizeof(int));
	s.cmd.size = (uint8_t *)it - (uint8_t *)&s.cmd;
	r = kdbus_cmd_send(conn, &s.cmd);
	m->reply = s.cmd.reply;
	m->return_flags = s.cmd.return_flags;
	return r;
}

int kt_send(KdbusConn *conn, uint64_t dst_id, uint64_t cookie) {
	KtMsg m = KT_MSG(.dst_id = dst_id, .cookie = cookie, .vec = { &cookie }, .vec_size = { 8 });

	return kt_send_msg(conn, &m);
}

int kt_send_name(KdbusConn *conn, const char *name, uint64_t cookie, uint64_t flags) {
	KtMsg m = KT_MSG(.dst_name = name, .cookie = cookie, .flags = flags,
			 .timeout_ns = (flags & KDBUS_MSG_EXPECT_REPLY) ? kt_now_ns() + 5000000000ULL : 0,
			 .vec = { &cookie }, .vec_size = { 8 });

	return kt_send_msg(conn, &m);
}

int kt_call(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, uint64_t timeout_ns) {
	KtMsg m = KT_MSG(.dst_id = dst_id, .cookie = cookie, .flags = KDBUS_MSG_EXPECT_REPLY,
			 .timeout_ns = timeout_ns, .vec = { &cookie }, .vec_size = { 8 });

	return kt_send_msg(conn, &m);
}

int kt_reply(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, uint64_t cookie_reply) {
	KtMsg m = KT_MSG(.dst_id = dst_id, .cookie = cookie, .cookie_reply = cookie_reply,
			 .vec = { &cookie }, .vec_size = { 8 });

	return kt_send_msg(conn, &m);
}

int kt_broadcast(KdbusConn *conn, uint64_t cookie, const uint64_t *bloom) {
	KtMsg m = KT_MSG(.dst_id = KDBUS_DST_ID_BROADCAST, .cookie = cookie,
			 .flags = KDBUS_MSG_SIGNAL, .bloom = bloom,
			 .vec = { &cookie }, .vec_size = { 8 });

	return kt_send_msg(conn, &m);
}

int kt_recv_flags(KdbusConn *conn, uint64_t flags, int64_t priority, struct kdbus_cmd_recv *ret) {
	struct kdbus_cmd_recv r = { .size = sizeof(r), .flags = flags, .priority = priority };
	int e = kdbus_cmd_recv(conn, &r);

	if (ret)
		*ret = r;
	return e;
}

int kt_recv(KdbusConn *conn, struct kdbus_msg **ret_msg, uint64_t *ret_offset) {
	struct kdbus_cmd_recv r;
	int e = kt_recv_flags(conn, 0, 0, &r);

	if (e < 0)
		return e;
	if (ret_msg)
		*ret_msg = kdbus_pool_ptr(conn, r.msg.offset);
	if (ret_offset)
		*ret_offset = r.msg.offset;
	return 0;
}

int kt_free(KdbusConn *conn, uint64_t offset) {
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

	return kdbus_cmd_free(conn, &f);
}

/* receive one message, copy its header into @copy, free it */
int kt_recv_free(KdbusConn *conn, struct kdbus_msg *copy) {
	struct kdbus_msg *m;
	uint64_t off;
	int r = kt_recv(conn, &m, &off);

	if (r < 0)
		return r;
	if (copy)
		*copy = *m;
	return kt_free(conn, off);
}

int kt_drain(KdbusConn *conn) {
	int n = 0;

	while (kt_recv_free(conn, NULL) == 0)
		n++;
	return n;
}

static struct kdbus_item *kt_find(struct kdbus_item *first, size_t size, uint64_t type, unsigned nth) {
	struct kdbus_item *it = first;

	while ((uint8_t *)it < (uint8_t *)first + size) {
		if (it->type == type && nth-- == 0)
			return it;
		it = ITEM_NEXT(it);
	}
	return NULL;
}

struct kdbus_item *kt_msg_item(struct kdbus_msg *msg, uint64_t type, unsigned nth) {
	return kt_find(msg->items, msg->size - offsetof(struct kdbus_msg, items), type, nth);
}

struct kdbus_item *kt_info_item(struct kdbus_info *info, uint64_t type, unsigned nth) {
	return kt_find(info->items, info->size - offsetof(struct kdbus_info, items), type, nth);
}

const void *kt_msg_payload(KdbusConn *conn, struct kdbus_msg *msg, uint64_t *ret_size) {
	struct kdbus_item *it = kt_msg_item(msg, KDBUS_ITEM_PAYLOAD_OFF, 0);

	if (!it)
		return NULL;
	if (ret_size)
		*ret_size = it->vec.size;
	return kdbus_pool_ptr(conn, it->vec.offset);
}

static int kt_name_cmd(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags,
		       bool acquire) {
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)cmd_buf;
	struct kdbus_item *it;
	int r;

	memset(cmd_buf, 0, 1024);
	cmd->flags = flags;
	it = put_item(cmd->items, KDBUS_ITEM_NAME, name, strlen(name) + 1);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	r = acquire ? kdbus_cmd_name_acquire(conn, cmd) : kdbus_cmd_name_release(conn, cmd);
	if (ret_flags)
		*ret_flags = cmd->return_flags;
	return r;
}

int kt_name_acquire(KdbusConn *conn, const char *name, uint64_t flags, uint64_t *ret_flags) {
	return kt_name_cmd(conn, name, flags, ret_flags, true);
}

int kt_name_release(KdbusConn *conn, const char *name) {
	return kt_name_cmd(conn, name, 0, NULL, false);
}

int kt_match_rule(KdbusConn *conn, uint64_t cookie, uint64_t flags, uint64_t type,
		  const void *data, size_t size) {
	struct kdbus_cmd_match *cmd = (struct kdbus_cmd_match *)cmd_buf;
	struct kdbus_item *it;

	memset(cmd_buf, 0, 16384);
	cmd->cookie = cookie;
	cmd->flags = flags;
	it = cmd->items;
	if (type)
		it = put_item(it, type, data, size);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_match_add(conn, cmd);
}

int kt_match_keys(KdbusConn *conn, uint64_t cookie, const uint64_t *mask, const uint64_t *keys, size_t n) {
	struct kdbus_cmd_match *cmd = (struct kdbus_cmd_match *)cmd_buf;
	struct kdbus_item *it;

	memset(cmd_buf, 0, 16384);
	cmd->cookie = cookie;
	it = cmd->items;
	if (mask)
		it = put_item(it, KDBUS_ITEM_BLOOM_MASK, mask, BLOOM_SIZE);
	it = put_item(it, KDBUS_ITEM_MATCH_KEYS, keys, n * sizeof(uint64_t));
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_match_add(conn, cmd);
}

int kt_match_empty(KdbusConn *conn, uint64_t cookie) {
	return kt_match_rule(conn, cookie, 0, 0, NULL, 0);
}

int kt_match_id(KdbusConn *conn, uint64_t cookie, uint64_t type, uint64_t id) {
	struct kdbus_notify_id_change c = { .id = id };

	return kt_match_rule(conn, cookie, 0, type, &c, sizeof(c));
}

int kt_match_name(KdbusConn *conn, uint64_t cookie, uint64_t type, uint64_t old_id,
		  uint64_t new_id, const char *name) {
	uint8_t buf[sizeof(struct kdbus_notify_name_change) + 256] = {};
	struct kdbus_notify_name_change *c = (void *)buf;
	size_t size = sizeof(*c);

	c->old_id.id = old_id;
	c->new_id.id = new_id;
	if (name) {
		strcpy(c->name, name);
		size += strlen(name) + 1;
	}
	return kt_match_rule(conn, cookie, 0, type, buf, size);
}

int kt_match_bloom(KdbusConn *conn, uint64_t cookie, const uint64_t *masks, size_t generations) {
	return kt_match_rule(conn, cookie, 0, KDBUS_ITEM_BLOOM_MASK, masks, generations * BLOOM_SIZE);
}

int kt_match_remove(KdbusConn *conn, uint64_t cookie) {
	struct kdbus_cmd_match cmd = { .size = sizeof(cmd), .cookie = cookie };

	return kdbus_cmd_match_remove(conn, &cmd);
}

int kt_conn_info(KdbusConn *conn, uint64_t id, const char *name, uint64_t attach,
		 struct kdbus_info **ret, uint64_t *ret_offset) {
	struct kdbus_cmd_info *cmd = (struct kdbus_cmd_info *)cmd_buf;
	struct kdbus_item *it;
	int r;

	memset(cmd_buf, 0, 1024);
	cmd->id = id;
	cmd->attach_flags = attach;
	it = cmd->items;
	if (name)
		it = put_item(it, KDBUS_ITEM_NAME, name, strlen(name) + 1);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	r = kdbus_cmd_conn_info(conn, cmd);
	if (r < 0)
		return r;
	if (ret)
		*ret = kdbus_pool_ptr(conn, cmd->offset);
	if (ret_offset)
		*ret_offset = cmd->offset;
	return 0;
}

int kt_list(KdbusConn *conn, uint64_t flags, struct kdbus_info **ret, uint64_t *ret_size,
	    uint64_t *ret_offset) {
	struct kdbus_cmd_list cmd = { .size = sizeof(cmd), .flags = flags };
	int r = kdbus_cmd_list(conn, &cmd);

	if (r < 0)
		return r;
	*ret = kdbus_pool_ptr(conn, cmd.offset);
	*ret_size = cmd.list_size;
	*ret_offset = cmd.offset;
	return 0;
}

int kt_byebye(KdbusConn *conn) {
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };

	return kdbus_cmd_byebye(conn, &cmd);
}

int kt_update_attach(KdbusConn *conn, uint64_t send, uint64_t recv) {
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)cmd_buf;
	struct kdbus_item *it;

	memset(cmd_buf, 0, 1024);
	it = cmd->items;
	if (send != (uint64_t)-2)
		it = put_item(it, KDBUS_ITEM_ATTACH_FLAGS_SEND, &send, sizeof(send));
	if (recv != (uint64_t)-2)
		it = put_item(it, KDBUS_ITEM_ATTACH_FLAGS_RECV, &recv, sizeof(recv));
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	return kdbus_cmd_update(conn, cmd);
}

uint64_t kt_now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
