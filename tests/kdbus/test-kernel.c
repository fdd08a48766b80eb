/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kernel.c - cases only the kernel module can have: the pool is a
 * real read-only mapping, timeouts run on the kernel's clock, processes
 * and CPUs really run at once.  Skipped on the userspace backend.
 */

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"

#define IOCTL_ONLY(env)                                                         \
	do {                                                                    \
		if ((env)->backend != KDBUS_BACKEND_IOCTL)                      \
			return TEST_SKIP;                                       \
	} while (0)

/* the pool can be mapped read-only only, and never made writable */
int test_kernel_pool_readonly(Env *env) {
	int fd = kdbus_conn_get_fd(env->conn);
	void *p;

	IOCTL_ONLY(env);
	ASSERT_RETURN(fd >= 0);
	p = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_RETURN(p == MAP_FAILED && errno == EPERM);
	p = mmap(NULL, POOL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_RETURN(p != MAP_FAILED);
	ASSERT_RETURN(mprotect(p, 4096, PROT_READ | PROT_WRITE) < 0 && errno == EACCES);
	munmap(p, POOL_SIZE);
	/* beyond the pool */
	p = mmap(NULL, POOL_SIZE + 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_RETURN(p == MAP_FAILED);
	return TEST_OK;
}

/* an unanswered call times out on the kernel's clock: one REPLY_TIMEOUT */
int test_kernel_reply_timeout(Env *env) {
	KdbusConn *c = kt_hello(env, 0);
	struct pollfd p = { .fd = kdbus_conn_get_fd(env->conn), .events = POLLIN };
	struct kdbus_msg *m;
	uint64_t off;

	IOCTL_ONLY(env);
	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 77, kt_now_ns() + 50000000ULL), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	ASSERT_EQ(poll(&p, 1, 5000), 1);
	ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->cookie_reply, 77);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_REPLY_TIMEOUT, 0));
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	/* too late to answer */
	ASSERT_EQ(kt_drain(c), 1);
	ASSERT_EQ(kt_reply(c, kdbus_conn_get_id(env->conn), 1, 77), -EBADSLT);
	kdbus_conn_close(c);
	return TEST_OK;
}

/* what a process sent stays in the receiver's pool after it exited */
int test_kernel_pool_survives_sender(Env *env) {
	static const char data[] = "from a process that is gone";
	uint64_t id = kdbus_conn_get_id(env->conn), size, off;
	struct kdbus_msg *m;
	const char *p;
	int status;
	pid_t pid;

	IOCTL_ONLY(env);
	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		KdbusConn *c = kt_hello(env, 0);
		KtMsg k = KT_MSG(.dst_id = id, .cookie = 5, .vec = { data }, .vec_size = { sizeof(data) });

		_exit(c && kt_send_msg(c, &k) == 0 ? 0 : 1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_RETURN(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
	ASSERT_EQ(m->cookie, 5);
	p = kt_msg_payload(env->conn, m, &size);
	ASSERT_RETURN(p && size == sizeof(data) && memcmp(p, data, size) == 0);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	return TEST_OK;
}

typedef struct Sender {
	KdbusConn *conn;
	uint64_t dst, base;
	int n, sent;
} Sender;

static void *sender_thread(void *p) {
	Sender *s = p;

	for (int i = 0; i < s->n; i++) {
		while (kt_send(s->conn, s->dst, s->base + i) == -ENOBUFS)
			usleep(100);
		s->sent++;
	}
	return NULL;
}

/* two senders on two CPUs, one receiver: nothing lost, each in order */
int test_kernel_concurrent_senders(Env *env) {
	Sender s[2] = {
		{ .conn = kt_hello(env, 0), .base = 1, .n = 2000 },
		{ .conn = kt_hello(env, 0), .base = 1000001, .n = 2000 },
	};
	struct pollfd p = { .fd = kdbus_conn_get_fd(env->conn), .events = POLLIN };
	uint64_t next[2] = { 1, 1000001 };
	pthread_t t[2];
	int got = 0;

	IOCTL_ONLY(env);
	ASSERT_RETURN(s[0].conn && s[1].conn);
	for (int i = 0; i < 2; i++) {
		s[i].dst = kdbus_conn_get_id(env->conn);
		pthread_create(&t[i], NULL, sender_thread, &s[i]);
	}
	while (got < 4000) {
		struct kdbus_msg m;
		int r = kt_recv_free(env->conn, &m);

		if (r == -EAGAIN) {
			ASSERT_EQ(poll(&p, 1, 10000), 1);
			continue;
		}
		ASSERT_EQ(r, 0);
		ASSERT_EQ(m.cookie, next[m.cookie > 1000000]);
		next[m.cookie > 1000000]++;
		got++;
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		ASSERT_EQ(s[i].sent, s[i].n);
		kdbus_conn_close(s[i].conn);
	}
	ASSERT_EQ(kt_recv(env->conn, NULL, NULL), -EAGAIN);
	return TEST_OK;
}
