/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kdbus-client.c - the daemon's kdbus commands (compat/kdbus-client.c)
 * against the userspace core
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/kdbus-client.h"
#include "tests/unit/test.h"

#define POOL (16 * 1024 * 1024)
#define BLOOM_SIZE 64
#define BLOOM_N_HASH 1

static KdbusBus *make_bus(void) {
	char name[64];
	KdbusBus *bus = NULL;

	snprintf(name, sizeof(name), "%u-test-kdbus-client-%d", (unsigned) geteuid(), (int) getpid());
	assert(kclient_bus_make(KDBUS_BACKEND_USERSPACE, name, BLOOM_SIZE, BLOOM_N_HASH, KDBUS_MAKE_ACCESS_WORLD,
				&bus) == 0);
	return bus;
}

static KdbusConn *hello(KdbusBus *bus, uint64_t *ret_id) {
	KdbusConn *conn = NULL;

	assert(kclient_hello(bus, KDBUS_HELLO_ACCEPT_FD, POOL, NULL, &conn, ret_id) == 0);
	return conn;
}

/* the next message of @conn, or NULL; free with recv_done() */
static struct kdbus_msg *recv_one(KdbusConn *conn, uint64_t *ret_offset) {
	struct kdbus_cmd_recv r = { .size = sizeof(r) };

	if (kdbus_cmd_recv(conn, &r) < 0)
		return NULL;
	*ret_offset = r.msg.offset;
	return kdbus_pool_ptr(conn, r.msg.offset);
}

static void recv_done(KdbusConn *conn, uint64_t offset) {
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

	assert(kdbus_cmd_free(conn, &f) == 0);
}

TEST(bus_make) {
	KdbusBus *bus = NULL;
	char name[300];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	check(kclient_bus_make(KDBUS_BACKEND_USERSPACE, name, BLOOM_SIZE, BLOOM_N_HASH, 0, &bus) == -EINVAL);
	/* the bus is usable */
	bus = make_bus();
	uint64_t id = 0;
	KdbusConn *a = hello(bus, &id);
	check(id > 0);
	kdbus_conn_close(a);
	kdbus_bus_close(bus);
}

TEST(hello_identity) {
	KdbusBus *bus = make_bus();
	gid_t groups[] = { 7, 9 };
	KclientIdentity ident = {
		.uid = geteuid(), .gid = getegid(), .have_pid = true, .pid = 4242,
		.groups = groups, .n_groups = 2, .label = "unconfined",
	};
	KdbusConn *a = NULL, *b;
	uint64_t id_a = 0, id_b = 0;

	check(kclient_hello(bus, 0, POOL, &ident, &a, &id_a) == 0);
	b = hello(bus, &id_b);
	check(id_a && id_b && id_a != id_b);

	/* the faked credentials are what the core reports */
	struct kdbus_cmd_info q = { .size = sizeof(q), .id = id_a,
				    .attach_flags = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_AUXGROUPS |
						    KDBUS_ATTACH_SECLABEL };
	assert(kdbus_cmd_conn_info(b, &q) == 0);
	struct kdbus_info *info = kdbus_pool_ptr(b, q.offset);
	struct kdbus_item *it;
	bool creds = false, pids = false, groups_seen = false, label = false;
	KDBUS_ITEM_FOREACH(it, info, items) {
		if (it->type == KDBUS_ITEM_CREDS)
			creds = it->creds.uid == geteuid() && it->creds.gid == getegid();
		else if (it->type == KDBUS_ITEM_PIDS)
			pids = it->pids.pid == 4242;
		else if (it->type == KDBUS_ITEM_AUXGROUPS)
			groups_seen = it->size == KDBUS_ITEM_HEADER_SIZE + 2 * sizeof(uint64_t) && it->data64[0] == 7 &&
				      it->data64[1] == 9;
		else if (it->type == KDBUS_ITEM_SECLABEL)
			label = strcmp(it->str, "unconfined") == 0;
	}
	recv_done(b, q.offset);
	check(creds && pids && groups_seen && label);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_bus_close(bus);
}

static int collect(const char *name, uint64_t flags, void *userdata) {
	char *buf = userdata;

	strcat(buf, name);
	strcat(buf, (flags & KDBUS_NAME_IN_QUEUE) ? "(q) " : (flags & KDBUS_NAME_ACTIVATOR) ? "(a) " : " ");
	return 0;
}

static int stop_at_second(const char *name, uint64_t flags, void *userdata) {
	int *n = userdata;

	return ++*n == 2 ? -ECANCELED : 0;
}

TEST(names) {
	KdbusBus *bus = make_bus();
	uint64_t id_a, id_b, ret_flags = 0;
	KdbusConn *a = hello(bus, &id_a), *b = hello(bus, &id_b), *act = NULL;
	char buf[512] = "";
	char longname[300];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	check(kclient_name_acquire(a, longname, 0, NULL) == -EINVAL);
	check(kclient_hello_activator(bus, longname, 0, POOL, &act) == -EINVAL);

	check(kclient_hello_activator(bus, "org.example.Act", KDBUS_HELLO_ACCEPT_FD, POOL, &act) == 0);
	check(kclient_name_acquire(a, "org.example.One", 0, &ret_flags) == 0);
	check(kclient_name_acquire(a, "org.example.Two", 0, NULL) == 0);
	check(kclient_name_acquire(b, "org.example.Two", KDBUS_NAME_QUEUE, &ret_flags) == 0);
	check(ret_flags & KDBUS_NAME_IN_QUEUE);
	check(kclient_name_acquire(b, "org.example.Three", 0, NULL) == 0);

	check(kclient_conn_names(b, id_a, 0, collect, buf) == 0);
	check(strcmp(buf, "org.example.One org.example.Two ") == 0);
	buf[0] = 0;
	check(kclient_conn_names(a, id_b, 0, collect, buf) == 0);
	check(strcmp(buf, "org.example.Three org.example.Two(q) ") == 0);
	buf[0] = 0;
	check(kclient_conn_names(a, id_b, KDBUS_NAME_IN_QUEUE, collect, buf) == 0);
	check(strcmp(buf, "org.example.Three ") == 0);
	int n = 0;
	check(kclient_conn_names(a, id_a, 0, stop_at_second, &n) == -ECANCELED && n == 2);
	check(kclient_conn_names(a, 9999, 0, collect, buf) < 0);

	/* LIST of a name: its owner and waiters */
	uint64_t off = 0, size = 0;
	check(kclient_list(a, KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED, "org.example.Two", &off, &size) == 0);
	struct kdbus_info *base = kdbus_pool_ptr(a, off), *info;
	unsigned n_infos = 0;
	KDBUS_FOREACH(info, base, size) {
		buf[0] = 0;
		check(kclient_info_names(info, 0, collect, buf) == 0);
		check(strstr(buf, "org.example.Two") != NULL);
		n_infos++;
	}
	check(n_infos == 2);
	recv_done(a, off);
	/* LIST of everything: the activator's name is flagged */
	check(kclient_list(a, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS, NULL, &off, &size) == 0);
	base = kdbus_pool_ptr(a, off);
	bool act_seen = false;
	KDBUS_FOREACH(info, base, size) {
		buf[0] = 0;
		check(kclient_info_names(info, KDBUS_NAME_IN_QUEUE, collect, buf) == 0);
		if (strcmp(buf, "org.example.Act(a) ") == 0)
			act_seen = true;
	}
	check(act_seen);
	recv_done(a, off);

	check(kclient_name_release(a, "org.example.Two", 0, NULL) == 0);
	check(kclient_name_release(a, "org.example.Two", 0, NULL) < 0);
	buf[0] = 0;
	check(kclient_conn_names(a, id_b, 0, collect, buf) == 0);
	check(strcmp(buf, "org.example.Two org.example.Three ") == 0);

	kdbus_conn_close(act);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_bus_close(bus);
}

TEST(send_and_parts) {
	KdbusBus *bus = make_bus();
	uint64_t id_a, id_b, off;
	KdbusConn *a = hello(bus, &id_a), *b = hello(bus, &id_b), *act = NULL;
	static const char payload[] = "0123456789abcdef";
	int p[2];

	assert(pipe(p) == 0);
	check(kclient_send_bytes(a, id_b, NULL, 5, 0, payload, sizeof(payload), p, 2) == 0);
	struct kdbus_msg *m = recv_one(b, &off);
	assert(m);
	check(m->src_id == id_a && m->cookie == 5 && m->payload_type == KDBUS_PAYLOAD_DBUS);
	struct iovec iov[2];
	size_t len = 0;
	uint64_t first = 0;
	int *fds = NULL;
	unsigned n_fds = 0, n = 0;
	KCLIENT_MSG_PARTS(b, m, iov, 2u, n, len, first, fds, n_fds);
	check(n == 1 && len == sizeof(payload) && first != 0);
	check(iov[0].iov_len == sizeof(payload) && memcmp(iov[0].iov_base, payload, sizeof(payload)) == 0);
	check(kdbus_pool_ptr(b, first) == iov[0].iov_base);
	check(n_fds == 2 && fds && fds[0] >= 0 && fds[1] >= 0);
	for (unsigned i = 0; fds && i < n_fds; i++)
		close(fds[i]);
	/* no room for slices: only the fds */
	unsigned no_room = 0;
	KCLIENT_MSG_PARTS(b, m, iov, no_room, n, len, first, fds, n_fds);
	check(n == 0 && len == 0 && first == 0 && n_fds == 2);
	recv_done(b, off);

	/* without fds */
	check(kclient_send_bytes(a, id_b, NULL, 6, 0, payload, 4, NULL, 0) == 0);
	m = recv_one(b, &off);
	assert(m);
	KclientMsgParts parts;
	kclient_msg_read(b, m, &parts);
	check(parts.n_iov == 1 && parts.len == 4 && parts.payload.iov_len == 4 && !parts.fds && parts.n_fds == 0);
	check(memcmp(parts.payload.iov_base, payload, 4) == 0 && parts.first_offset);
	recv_done(b, off);

	check(kclient_send_bytes(a, id_b, NULL, 7, 0, payload, 4, p, KCLIENT_SEND_MAX_FDS + 1) == -EINVAL);
	close(p[0]);
	close(p[1]);

	/* to a name an activator holds: queued on the activator */
	check(kclient_hello_activator(bus, "org.example.Act", KDBUS_HELLO_ACCEPT_FD, POOL, &act) == 0);
	check(kclient_send_bytes(a, KDBUS_DST_ID_NAME, "org.example.Act", 8, 0, payload, 4, NULL, 0) == 0);
	/* an activator only peeks */
	struct kdbus_cmd_recv peek = { .size = sizeof(peek), .flags = KDBUS_RECV_PEEK };
	assert(kdbus_cmd_recv(act, &peek) == 0);
	off = peek.msg.offset;
	m = kdbus_pool_ptr(act, off);
	assert(m);
	check(m->cookie == 8 && m->src_id == id_a);
	kclient_msg_read(act, m, &parts);
	check(parts.n_iov == 1 && parts.len == 4);
	recv_done(act, off);
	check(kclient_send_bytes(a, KDBUS_DST_ID_NAME, "org.example.Nobody", 9, 0, payload, 4, NULL, 0) < 0);

	kdbus_conn_close(act);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	kdbus_bus_close(bus);
}

TEST(notifications) {
	KdbusBus *bus = make_bus();
	uint64_t id_w, id_a, off;
	KdbusConn *w = hello(bus, &id_w), *a = hello(bus, &id_a);
	const struct kdbus_item *cursor;
	KclientNotify nt = {};

	check(kclient_match_name_change(w, 1, KCLIENT_NAME_ADD, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY) == 0);
	check(kclient_match_name_change(w, 1, KCLIENT_NAME_REMOVE, KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY) == 0);
	check(kclient_match_id_change(w, 2, KCLIENT_ID_ADD, KDBUS_MATCH_ID_ANY) == 0);
	check(kclient_match_id_change(w, 2, KCLIENT_ID_REMOVE, id_a) == 0);
	check(kclient_match_id_change(w, 2, KCLIENT_NAME_ADD, id_a) == -EINVAL);
	check(kclient_match_name_change(w, 2, KCLIENT_ID_ADD, 0, 0) == -EINVAL);

	check(kclient_name_acquire(a, "org.example.N", 0, NULL) == 0);
	struct kdbus_msg *m = recv_one(w, &off);
	assert(m);
	check(m->payload_type == KDBUS_PAYLOAD_KERNEL);
	KclientMsgParts parts;
	kclient_msg_read(w, m, &parts);
	check(parts.n_iov == 0 && !parts.payload.iov_base && parts.len == 0 && !parts.fds && parts.n_fds == 0);
	cursor = NULL;
	check(kclient_notify_next(m, &cursor, &nt));
	check(nt.type == KCLIENT_NAME_ADD && strcmp(nt.name, "org.example.N") == 0 && nt.old_id == 0 &&
	      nt.new_id == id_a &&
	      !(nt.new_flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR)));
	check(!kclient_notify_next(m, &cursor, &nt));
	recv_done(w, off);

	uint64_t id_b;
	KdbusConn *b = hello(bus, &id_b);
	m = recv_one(w, &off);
	assert(m);
	cursor = NULL;
	check(kclient_notify_next(m, &cursor, &nt) && nt.type == KCLIENT_ID_ADD && nt.id == id_b);
	recv_done(w, off);

	/* a's goodbye: its name goes, then its id */
	kdbus_conn_close(a);
	m = recv_one(w, &off);
	assert(m);
	cursor = NULL;
	check(kclient_notify_next(m, &cursor, &nt) && nt.type == KCLIENT_NAME_REMOVE && nt.old_id == id_a &&
	      nt.new_id == 0);
	recv_done(w, off);
	m = recv_one(w, &off);
	assert(m);
	cursor = NULL;
	check(kclient_notify_next(m, &cursor, &nt) && nt.type == KCLIENT_ID_REMOVE && nt.id == id_a);
	recv_done(w, off);
	/* b's goodbye is not watched */
	check(kclient_match_remove(w, 1) == 0);
	check(kclient_match_remove(w, 1) < 0);
	kdbus_conn_close(b);
	check(!recv_one(w, &off));

	kdbus_conn_close(w);
	kdbus_bus_close(bus);
}

TEST(reply_dead) {
	KdbusBus *bus = make_bus();
	uint64_t id_a, id_b, off;
	KdbusConn *a = hello(bus, &id_a), *b = hello(bus, &id_b);
	static const char payload[] = "call";

	/* a call expecting a reply, then the callee goes */
	/* room for a whole struct kdbus_item (UBSan checks the member
	 * accesses against it); the message is as long as its one item */
	struct {
		struct kdbus_msg msg;
		uint8_t items[sizeof(struct kdbus_item) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec))];
	} km = {};
	km.msg.size = offsetof(struct kdbus_msg, items) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec));
	km.msg.flags = KDBUS_MSG_EXPECT_REPLY;
	km.msg.payload_type = KDBUS_PAYLOAD_DBUS;
	km.msg.dst_id = id_b;
	km.msg.cookie = 77;
	km.msg.timeout_ns = UINT64_MAX / 2;
	km.msg.items[0].size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
	km.msg.items[0].type = KDBUS_ITEM_PAYLOAD_VEC;
	km.msg.items[0].vec.address = (uintptr_t) payload;
	km.msg.items[0].vec.size = sizeof(payload);
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) &km.msg };
	assert(kdbus_cmd_send(a, &cmd) == 0);
	kdbus_conn_close(b);
	struct kdbus_msg *m = recv_one(a, &off);
	assert(m);
	const struct kdbus_item *cursor = NULL;
	KclientNotify nt = {};
	check(m->payload_type == KDBUS_PAYLOAD_KERNEL && m->cookie_reply == 77);
	check(kclient_notify_next(m, &cursor, &nt) && nt.type == KCLIENT_REPLY_DEAD);
	check(!kclient_notify_next(m, &cursor, &nt));
	recv_done(a, off);
	kdbus_conn_close(a);
	kdbus_bus_close(bus);
}

TEST(match_bloom) {
	KdbusBus *bus = make_bus();
	uint64_t id_a;
	KdbusConn *a = hello(bus, &id_a);
	uint64_t mask[BLOOM_SIZE / 8] = { 1 }, key = 42, keys[KDBUS_MATCH_KEYS_MAX + 1] = {};

	check(kclient_match_bloom(a, 3, mask, BLOOM_SIZE, NULL, 0) == 0);
	check(kclient_match_bloom(a, 4, mask, BLOOM_SIZE, &key, 1) == 0);
	check(kclient_match_bloom(a, 5, mask, BLOOM_SIZE, keys, KDBUS_MATCH_KEYS_MAX + 1) == -EINVAL);
	check(kclient_match_bloom(a, 5, mask, KCLIENT_BLOOM_MAX_SIZE + 8, NULL, 0) == -EINVAL);
	/* the core checks the mask's size against the bus's */
	check(kclient_match_bloom(a, 5, mask, BLOOM_SIZE / 2, NULL, 0) < 0);
	check(kclient_match_remove(a, 3) == 0);
	check(kclient_match_remove(a, 4) == 0);
	check(kclient_match_remove(a, 5) < 0);
	kdbus_conn_close(a);
	kdbus_bus_close(bus);
}

int main(void) {
	RUN(bus_make);
	RUN(hello_identity);
	RUN(names);
	RUN(send_and_parts);
	RUN(notifications);
	RUN(reply_dead);
	RUN(match_bloom);
	return test_done();
}
