/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kernel.c - cases only the kernel module can have: the pool is a
 * real read-only mapping, timeouts run on the kernel's clock, processes
 * and CPUs really run at once.  Skipped on the userspace backend.
 */

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"

#define IOCTL_ONLY(env)                                                         \
	do {                                                                    \
		if ((env)->backend != KDBUS_BACKEND_IOCTL)                      \
			SKIP_BECAUSE("needs the kernel module");                \
	} while (0)

/* the pool can be mapped read-only only, and never made writable */
int test_kernel_pool_readonly(Env *env) {
	IOCTL_ONLY(env);
	int fd = kdbus_conn_get_fd(env->conn);
	void *p;

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
	IOCTL_ONLY(env);
	KdbusConn *c = kt_hello(env, 0);
	struct pollfd p = { .fd = kdbus_conn_get_fd(env->conn), .events = POLLIN };
	struct kdbus_msg *m;
	uint64_t off;

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

/*
 * A caller has at most 128 calls whose outcome it does not know: a call
 * that timed out keeps its slot until the caller has received its
 * REPLY_TIMEOUT, however long ago the deadline passed.
 */
int test_kernel_reply_slot_until_received(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_msg *m;
	uint64_t off, id, deadline = kt_now_ns() + 50000000ULL;
	unsigned i;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	for (i = 0; i < 128; i++)
		ASSERT_EQ(kt_call(env->conn, id, i + 1, deadline), 0);
	while (kt_now_ns() < deadline + 300000000ULL)
		usleep(10000);
	/* every deadline has passed, no outcome was received */
	ASSERT_EQ(kt_call(env->conn, id, 1000, kt_now_ns() + 10000000000ULL), -EMLINK);
	ASSERT_EQ(kt_recv(env->conn, &m, &off), 0);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_REPLY_TIMEOUT, 0));
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_call(env->conn, id, 1001, kt_now_ns() + 10000000000ULL), 0);
	ASSERT_EQ(kt_call(env->conn, id, 1002, kt_now_ns() + 10000000000ULL), -EMLINK);
	/* the callee goes: its REPLY_DEAD holds the slot in its turn */
	kdbus_conn_close(c);
	c = kt_hello(env, 0);
	ASSERT_RETURN(c);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 1003, kt_now_ns() + 10000000000ULL), -EMLINK);
	ASSERT_EQ(kt_drain(env->conn), 128);
	ASSERT_EQ(kt_call(env->conn, kdbus_conn_get_id(c), 1004, kt_now_ns() + 10000000000ULL), 0);
	kdbus_conn_close(c);
	ASSERT_EQ(kt_drain(env->conn), 1);
	return TEST_OK;
}

/* what a process sent stays in the receiver's pool after it exited */
int test_kernel_pool_survives_sender(Env *env) {
	IOCTL_ONLY(env);
	static const char data[] = "from a process that is gone";
	uint64_t id = kdbus_conn_get_id(env->conn), size, off;
	struct kdbus_msg *m;
	const char *p;
	int status;
	pid_t pid;

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
	IOCTL_ONLY(env);
	Sender s[2] = {
		{ .conn = kt_hello(env, 0), .base = 1, .n = 2000 },
		{ .conn = kt_hello(env, 0), .base = 1000001, .n = 2000 },
	};
	struct pollfd p = { .fd = kdbus_conn_get_fd(env->conn), .events = POLLIN };
	uint64_t next[2] = { 1, 1000001 };
	pthread_t t[2];
	int got = 0;

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

/* a memfd travels as payload only when sealed; the receiver gets its own fd */
int test_kernel_memfd_sealed(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *c = kt_hello(env, 0);	/* memfds need no ACCEPT_FD */
	uint64_t buf[64] = {};
	struct kdbus_msg *msg = (struct kdbus_msg *)buf, *m;
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t)msg };
	struct kdbus_item *it = msg->items;
	char data[16] = {};
	uint64_t off;
	int fd;

	ASSERT_RETURN(c);
	fd = memfd_create("kt", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ASSERT_RETURN(fd >= 0);
	ASSERT_EQ(write(fd, "sealed payload", 14), 14);
	msg->payload_type = KDBUS_PAYLOAD_DBUS;
	msg->dst_id = kdbus_conn_get_id(c);
	msg->cookie = 9;
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_memfd);
	it->type = KDBUS_ITEM_PAYLOAD_MEMFD;
	it->memfd.start = 0;
	it->memfd.size = 14;
	it->memfd.fd = fd;
	msg->size = sizeof(*msg) + KDBUS_ALIGN8(it->size);
	ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -ETXTBSY);
	ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE), 0);
	ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -ETXTBSY);	/* the seals may still change */
	ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
	it->memfd.size = 15;
	ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EFAULT);	/* beyond its end */
	it->memfd.size = 14;
	ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), 0);
	close(fd);

	ASSERT_EQ(kt_recv(c, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_PAYLOAD_MEMFD, 0);
	ASSERT_RETURN(it && it->memfd.size == 14 && it->memfd.fd >= 0);
	ASSERT_EQ(pread(it->memfd.fd, data, sizeof(data), 0), 14);
	ASSERT_RETURN(memcmp(data, "sealed payload", 14) == 0);
	ASSERT_EQ(write(it->memfd.fd, "x", 1), -1);		/* still sealed */
	close(it->memfd.fd);
	ASSERT_EQ(kt_free(c, off), 0);

	/* a pipe is no memfd */
	{
		int p[2];

		ASSERT_EQ(pipe(p), 0);
		it = msg->items;
		it->memfd.fd = p[0];
		ASSERT_EQ(kdbus_cmd_send(env->conn, &cmd), -EMEDIUMTYPE);
		close(p[0]);
		close(p[1]);
	}
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- stress: KDBUS_STRESS_SECONDS of everything at once ---- */

#define STRESS_NAMES 4

typedef struct Stress {
	Env *env;
	volatile int stop;
	uint64_t recv_id[2];		/* the receivers, for sends by id */
	unsigned long sent, received, broadcasts, calls, churned, activations, unexpected;
	pthread_mutex_t lock;
} Stress;

static void stress_count(Stress *st, unsigned long *what, unsigned long n) {
	pthread_mutex_lock(&st->lock);
	*what += n;
	pthread_mutex_unlock(&st->lock);
}

static void stress_bad(Stress *st, const char *what, int r) {
	fprintf(stderr, "# stress: %s: %s\n", what, strerror(-r));
	stress_count(st, &st->unexpected, 1);
}

static bool send_ok(int r) {
	/* EMFILE: the sender's share of fds in flight to that receiver */
	return r == 0 || r == -ESRCH || r == -ENXIO || r == -ECONNRESET || r == -ENOBUFS ||
	       r == -EXFULL || r == -EMLINK || r == -EADDRNOTAVAIL || r == -EMFILE;
}

static const char *stress_name(unsigned i) {
	static const char *n[STRESS_NAMES] = { "org.kt.stress.a", "org.kt.stress.b", "org.kt.stress.c",
						"org.kt.stress.d" };
	return n[i % STRESS_NAMES];
}

/* receives, answers calls, and takes and gives up names */
static void *stress_receiver(void *p) {
	Stress *st = p;
	KdbusConn *c = kt_hello(st->env, KDBUS_HELLO_ACCEPT_FD);
	unsigned i = 0;

	if (!c) {
		stress_bad(st, "receiver hello", -EIO);
		return NULL;
	}
	pthread_mutex_lock(&st->lock);
	st->recv_id[st->recv_id[0] ? 1 : 0] = kdbus_conn_get_id(c);
	pthread_mutex_unlock(&st->lock);
	if (kt_match_empty(c, 1) < 0)
		stress_bad(st, "match", -EIO);
	while (!st->stop) {
		struct pollfd pfd = { .fd = kdbus_conn_get_fd(c), .events = POLLIN };
		struct kdbus_msg *m;
		uint64_t off;
		int r;

		if (++i % 64 == 0) {
			const char *n = stress_name(i / 64);

			r = (i / 64) % 3 ? kt_name_acquire(c, n, KDBUS_NAME_QUEUE | KDBUS_NAME_ALLOW_REPLACEMENT |
							 KDBUS_NAME_REPLACE_EXISTING, NULL)
					 : kt_name_release(c, n);
			if (r < 0 && r != -ESRCH && r != -EADDRINUSE && r != -EEXIST)
				stress_bad(st, "name", r);
		}
		r = kt_recv(c, &m, &off);
		if (r == -EAGAIN) {
			poll(&pfd, 1, 20);
			continue;
		}
		if (r < 0) {
			stress_bad(st, "recv", r);
			continue;
		}
		if (m->flags & KDBUS_MSG_EXPECT_REPLY) {
			r = kt_reply(c, m->src_id, 1, m->cookie);
			if (r < 0 && r != -EBADSLT && !send_ok(r))
				stress_bad(st, "reply", r);
		}
		{
			struct kdbus_item *it = kt_msg_item(m, KDBUS_ITEM_FDS, 0);

			if (it)
				for (size_t k = 0; k < (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int); k++)
					if (it->fds[k] >= 0)
						close(it->fds[k]);
		}
		r = kt_free(c, off);
		if (r < 0)
			stress_bad(st, "free", r);
		stress_count(st, &st->received, 1);
	}
	kdbus_conn_close(c);
	return NULL;
}

/* sends by name, by id, broadcasts, calls with short deadlines, fds */
static void *stress_sender(void *p) {
	Stress *st = p;
	KdbusConn *c = kt_hello(st->env, KDBUS_HELLO_ACCEPT_FD);
	uint64_t cookie = 0, payload[64] = {};
	int pfd[2];

	if (!c || pipe(pfd) < 0) {
		stress_bad(st, "sender setup", -EIO);
		return NULL;
	}
	while (!st->stop) {
		KtMsg m = KT_MSG(.cookie = ++cookie, .vec = { payload }, .vec_size = { 8 * (cookie % 64 + 1) });
		int r;

		switch (cookie % 5) {
		case 0:
			m.dst_name = stress_name(cookie);
			break;
		case 1:
			m.dst_id = st->recv_id[cookie & 1];
			m.fds = &pfd[0];
			m.n_fds = 1;
			break;
		case 2:
			m.dst_id = KDBUS_DST_ID_BROADCAST;
			m.flags = KDBUS_MSG_SIGNAL;
			stress_count(st, &st->broadcasts, 1);
			break;
		case 3:
			m.dst_name = stress_name(cookie);
			m.flags = KDBUS_MSG_EXPECT_REPLY;
			m.timeout_ns = kt_now_ns() + 20000000ULL;
			stress_count(st, &st->calls, 1);
			break;
		default:
			m.dst_id = st->recv_id[cookie & 1];
			m.flags = KDBUS_MSG_EXPECT_REPLY;
			m.timeout_ns = kt_now_ns() + 50000000ULL;
			m.send_flags = cookie % 10 == 4 ? KDBUS_SEND_SYNC_REPLY : 0;
			stress_count(st, &st->calls, 1);
			break;
		}
		if (!m.dst_id && !m.dst_name)
			continue;	/* the receivers are not up yet */
		r = kt_send_msg(c, &m);
		if (r == 0 && m.send_flags)
			kt_free(c, m.reply.offset);
		else if (!send_ok(r) && r != -ETIMEDOUT && r != -EPIPE)
			stress_bad(st, "send", r);
		stress_count(st, &st->sent, 1);
		if (cookie % 16 == 0)
			kt_drain(c);	/* answers, timeouts, dead calls, broadcasts */
	}
	kt_drain(c);
	close(pfd[0]);
	close(pfd[1]);
	kdbus_conn_close(c);
	return NULL;
}

/* connections that take names, get messages and vanish mid-stream */
static void *stress_churner(void *p) {
	Stress *st = p;
	unsigned i = 0;

	while (!st->stop) {
		KdbusConn *c = kt_hello(st->env, KDBUS_HELLO_ACCEPT_FD);
		int r;

		if (!c) {
			stress_bad(st, "churn hello", -EIO);
			continue;
		}
		r = kt_name_acquire(c, stress_name(i++), KDBUS_NAME_QUEUE, NULL);
		if (r < 0 && r != -EEXIST)
			stress_bad(st, "churn acquire", r);
		usleep(2000);
		if (i % 4 == 0 && kt_byebye(c) < 0)
			kt_drain(c);	/* EBUSY: messages came in */
		kdbus_conn_close(c);
		stress_count(st, &st->churned, 1);
	}
	return NULL;
}

/* an activator, calls queued on it, a service that takes them over,
 * answers, gives the name back and exits, over and over */
static void *stress_activation(void *p) {
	Stress *st = p;
	KdbusConn *caller = kt_hello(st->env, 0);
	uint64_t cookie = 0;

	if (!caller) {
		stress_bad(st, "activation hello", -EIO);
		return NULL;
	}
	while (!st->stop) {
		KdbusConn *act = NULL, *svc;
		struct kdbus_msg m;
		int r;

		r = kt_hello_activator(st->env, "org.kt.stress.act", NULL, 0, &act);
		if (r < 0) {
			stress_bad(st, "activator", r);
			break;
		}
		for (int i = 0; i < 3; i++) {
			r = kt_send_name(caller, "org.kt.stress.act", ++cookie, i ? KDBUS_MSG_EXPECT_REPLY : 0);
			if (r < 0 && !send_ok(r))
				stress_bad(st, "send to activator", r);
		}
		svc = kt_hello(st->env, 0);
		if (svc) {
			r = kt_name_acquire(svc, "org.kt.stress.act", 0, NULL);
			if (r < 0)
				stress_bad(st, "handover", r);
			while (kt_recv_free(svc, &m) == 0)
				if (m.flags & KDBUS_MSG_EXPECT_REPLY)
					kt_reply(svc, m.src_id, ++cookie, m.cookie);
			kt_send_name(caller, "org.kt.stress.act", ++cookie, KDBUS_MSG_EXPECT_REPLY);
			if ((cookie & 1) && kt_name_release(svc, "org.kt.stress.act") < 0)
				stress_bad(st, "give back", -EIO);
			kdbus_conn_close(svc);	/* the rest returns to the activator */
		}
		kdbus_conn_close(act);		/* and dies with it */
		kt_drain(caller);
		stress_count(st, &st->activations, 1);
	}
	kt_drain(caller);
	kdbus_conn_close(caller);
	return NULL;
}

int test_kernel_stress(Env *env) {
	IOCTL_ONLY(env);
	const char *s = getenv("KDBUS_STRESS_SECONDS");
	Stress st = { .env = env, .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t t[9];
	int n = 0, seconds;

	if (!s || (seconds = atoi(s)) <= 0)
		SKIP_BECAUSE("KDBUS_STRESS_SECONDS not set");
	pthread_create(&t[n++], NULL, stress_receiver, &st);
	pthread_create(&t[n++], NULL, stress_receiver, &st);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[n++], NULL, stress_sender, &st);
	pthread_create(&t[n++], NULL, stress_churner, &st);
	pthread_create(&t[n++], NULL, stress_churner, &st);
	pthread_create(&t[n++], NULL, stress_activation, &st);
	sleep(seconds);
	st.stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "# stress: %d s: %lu sent (%lu calls, %lu broadcasts), %lu received, %lu connections churned, %lu activator handovers, %lu unexpected errors\n",
		seconds, st.sent, st.calls, st.broadcasts, st.received, st.churned, st.activations, st.unexpected);
	ASSERT_EQ(st.unexpected, 0);
	ASSERT_RETURN(st.received > 0 && st.churned > 0 && st.activations > 0);
	return TEST_OK;
}

/* ---- policy, with a process that really is another user ---- */

#define UNPRIV_UID 60001

/* run @fn(@arg) in a child that dropped to UNPRIV_UID; its exit status */
static int as_unprivileged(int (*fn)(void *), void *arg) {
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(UNPRIV_UID, UNPRIV_UID, UNPRIV_UID) < 0 ||
		    setresuid(UNPRIV_UID, UNPRIV_UID, UNPRIV_UID) < 0)
			_exit(99);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

typedef struct PolicyProbe {
	Env *env;
	uint64_t root_id;
	bool granted;
} PolicyProbe;

static int policy_probe(void *p) {
	PolicyProbe *pp = p;
	KdbusConn *u = kt_hello(pp->env, 0);
	int want_own = pp->granted ? 0 : -EPERM, want_talk = pp->granted ? 0 : -EPERM;

	if (!u)
		return 10;
	if (kt_name_acquire(u, "org.kt.Mine", 0, NULL) != want_own)
		return 11;
	if (kt_name_acquire(u, "org.kt.NotMine", 0, NULL) != -EPERM)
		return 12;
	if (kt_send(u, pp->root_id, 1) != want_talk)
		return 13;
	if (kt_send_name(u, "org.kt.Talk", 2, 0) != want_talk)
		return 14;
	kdbus_conn_close(u);
	return 0;
}

int test_kernel_policy_unprivileged(Env *env) {
	IOCTL_ONLY(env);
	static const struct kdbus_policy_access own = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 };
	static const struct kdbus_policy_access talk = { KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UNPRIV_UID };
	uint64_t buf[64] = {};
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)buf;
	struct kdbus_item *it = cmd->items;
	struct kdbus_bloom_parameter bp = { BLOOM_SIZE, BLOOM_N_HASH };
	Env world = { .backend = env->backend };
	PolicyProbe pp = { .env = &world };
	KdbusConn *root, *ph = NULL;
	KtHello h = { .flags = KDBUS_HELLO_POLICY_HOLDER, .names = { "org.kt.Mine", "org.kt.Talk" },
		      .access = { &own, &talk }, .n_access = { 1, 1 } };

	if (geteuid() != 0)
		SKIP_BECAUSE("needs root to become another user");
	/* a bus that every user may open */
	snprintf(world.name, sizeof(world.name), "%.50s-world", env->name);
	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(world.name) + 1;
	it->type = KDBUS_ITEM_MAKE_NAME;
	strcpy(it->str, world.name);
	it = KDBUS_ITEM_NEXT(it);
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(bp);
	it->type = KDBUS_ITEM_BLOOM_PARAMETER;
	it->bloom_parameter = bp;
	it = KDBUS_ITEM_NEXT(it);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd;
	cmd->flags = KDBUS_MAKE_ACCESS_WORLD;
	ASSERT_EQ(kdbus_cmd_bus_make(env->backend, cmd, &world.bus), 0);
	root = kt_hello(&world, 0);
	ASSERT_RETURN(root);
	pp.root_id = kdbus_conn_get_id(root);
	ASSERT_EQ(kt_name_acquire(root, "org.kt.Talk", 0, NULL), 0);

	/* secure by default: no name to own, nobody to talk to */
	ASSERT_EQ(as_unprivileged(policy_probe, &pp), 0);
	ASSERT_EQ(kt_recv(root, NULL, NULL), -EAGAIN);
	/* a policy holder grants OWN of one name to all, TALK to one user */
	ASSERT_EQ(kt_hello_full(world.bus, &h, &ph), 0);
	pp.granted = true;
	ASSERT_EQ(as_unprivileged(policy_probe, &pp), 0);
	ASSERT_EQ(kt_drain(root), 2);
	/* its entries go with it */
	kdbus_conn_close(ph);
	pp.granted = false;
	ASSERT_EQ(as_unprivileged(policy_probe, &pp), 0);
	kdbus_conn_close(root);
	kdbus_bus_close(world.bus);
	return TEST_OK;
}

/*
 * A connection is its fd, as any other file: a child that inherited it
 * sends, receives, maps the pool and owns names with it, and the
 * connection keeps the credentials of its opener even after the child
 * gave up its own (so a setuid program that inherits a user's connection
 * gains nothing either).
 */
int test_kernel_conn_is_its_fd(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *c = kt_hello(env, 0);
	struct kdbus_info *info;
	uint64_t id, off;
	int status, fd;
	pid_t pid;

	ASSERT_RETURN(c);
	fd = kdbus_conn_get_fd(c);
	id = kdbus_conn_get_id(c);
	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		struct kdbus_msg *m;
		void *p;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		if (kt_send(c, id, 1) != 0)
			_exit(2);
		if (kt_recv(c, &m, &off) != 0 || m->cookie != 1 || kt_free(c, off) != 0)
			_exit(3);
		/* its opener may own any name: so may whoever has the fd */
		if (kt_name_acquire(c, "org.kt.Child", 0, NULL) != 0)
			_exit(4);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_RETURN(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* what the child did is the connection's */
	ASSERT_EQ(kt_conn_info(env->conn, 0, "org.kt.Child", 0, &info, &off), 0);
	ASSERT_EQ(info->id, id);
	ASSERT_EQ(kt_free(env->conn, off), 0);
	ASSERT_EQ(kt_send(env->conn, id, 2), 0);
	ASSERT_EQ(kt_drain(c), 1);
	kdbus_conn_close(c);
	return TEST_OK;
}

/*
 * A message carries its sender's metadata as of the SEND: the process
 * that sends (here a child that inherited the fd and became another
 * user), while CONN_INFO keeps what the connection was at HELLO.
 */
int test_kernel_metadata_at_send(Env *env) {
	IOCTL_ONLY(env);
	KtHello hr = { .attach_recv = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_PID_COMM };
	KdbusConn *c = kt_hello(env, 0), *r = NULL;
	struct kdbus_info *info;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;
	int status;
	pid_t pid;

	ASSERT_RETURN(c);
	ASSERT_EQ(kt_hello_full(env->bus, &hr, &r), 0);
	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "kt-child");
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		_exit(kt_send(c, kdbus_conn_get_id(r), 1) == 0 ? 0 : 2);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_RETURN(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(kt_recv(r, &m, &off), 0);
	it = kt_msg_item(m, KDBUS_ITEM_CREDS, 0);
	ASSERT_RETURN(it && it->creds.uid == 65534 && it->creds.euid == 65534 && it->creds.gid == 65534);
	it = kt_msg_item(m, KDBUS_ITEM_PIDS, 0);
	ASSERT_RETURN(it && it->pids.pid == (uint64_t)pid && it->pids.tid == (uint64_t)pid &&
		      it->pids.ppid == (uint64_t)getpid());
	it = kt_msg_item(m, KDBUS_ITEM_PID_COMM, 0);
	ASSERT_RETURN(it && strcmp(it->str, "kt-child") == 0);
	ASSERT_EQ(kt_free(r, off), 0);
	/* the connection itself is still what it was at HELLO */
	ASSERT_EQ(kt_conn_info(env->conn, kdbus_conn_get_id(c), NULL, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS,
			       &info, &off), 0);
	it = kt_info_item(info, KDBUS_ITEM_CREDS, 0);
	ASSERT_RETURN(it && it->creds.uid == getuid());
	it = kt_info_item(info, KDBUS_ITEM_PIDS, 0);
	ASSERT_RETURN(it && it->pids.pid == (uint64_t)getpid());
	ASSERT_EQ(kt_free(env->conn, off), 0);
	kdbus_conn_close(c);
	kdbus_conn_close(r);
	return TEST_OK;
}

/* ---- the bus goes away under load ---- */

typedef struct Loaded {
	Env env;
	volatile int stop;
	uint64_t dst;
	unsigned long sent, received, refused;
} Loaded;

static void *loaded_sender(void *p) {
	Loaded *l = p;
	KdbusConn *c = kt_hello(&l->env, 0);
	uint64_t cookie = 0;

	if (!c)
		return NULL;
	while (!l->stop) {
		int r = kt_send(c, l->dst, ++cookie);

		if (r == 0)
			__atomic_add_fetch(&l->sent, 1, __ATOMIC_RELAXED);
		else if (r == -ECONNRESET || r == -ENXIO)
			__atomic_add_fetch(&l->refused, 1, __ATOMIC_RELAXED);
		else if (r != -ENOBUFS && r != -EXFULL)
			__atomic_add_fetch(&l->refused, 1000000, __ATOMIC_RELAXED);	/* unexpected */
	}
	kdbus_conn_close(c);
	return NULL;
}

/* closing the control fd disconnects every connection while they send
 * and receive; nothing breaks, and the name is free again */
int test_kernel_bus_close_under_load(Env *env) {
	IOCTL_ONLY(env);
	Loaded l = { .env = { .backend = env->backend } };
	KdbusConn *rcv;
	pthread_t t[3];

	snprintf(l.env.name, sizeof(l.env.name), "%.50s-load", env->name);
	ASSERT_EQ(kt_bus_make(env->backend, l.env.name, 0, &l.env.bus), 0);
	rcv = kt_hello(&l.env, 0);
	ASSERT_RETURN(rcv);
	l.dst = kdbus_conn_get_id(rcv);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, loaded_sender, &l);
	for (int i = 0; i < 2000 && l.sent < 200; i++) {
		kt_drain(rcv);
		usleep(1000);
	}
	kdbus_bus_close(l.env.bus);	/* everybody is disconnected */
	ASSERT_EQ(kt_recv(rcv, NULL, NULL), -ECONNRESET);
	usleep(100000);
	l.stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ASSERT_RETURN(l.sent > 0);
	ASSERT_RETURN(l.refused > 0 && l.refused < 1000000);
	kdbus_conn_close(rcv);
	/* the name is free again */
	ASSERT_EQ(kt_bus_make(env->backend, l.env.name, 0, &l.env.bus), 0);
	kdbus_bus_close(l.env.bus);
	return TEST_OK;
}

/* ---- the last reference of a connection, dropped while others broadcast ---- */

typedef struct Broadcaster {
	KdbusConn *conn;
	atomic_int stop;
	unsigned long sent;
} Broadcaster;

static void *broadcaster(void *p) {
	Broadcaster *b = p;
	uint64_t cookie = 0;

	while (!atomic_load(&b->stop))
		if (kt_broadcast(b->conn, ++cookie, NULL) == 0)
			b->sent++;
	return NULL;
}

/*
 * A call whose caller has gone is received: its tracker held the caller's
 * last reference, and freeing the caller takes the bus's policy lock.  That
 * must not happen under the receiver's lock while another thread, holding
 * the policy lock for a broadcast, waits for the receiver's lock (a
 * deadlock found by tests/kfuzz, seed 0xabb294421cda4c72: every HELLO,
 * BYEBYE and SEND of the bus hung).
 */
int test_kernel_last_ref_while_broadcasting(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *d = kt_hello(env, 0);
	uint64_t zero[BLOOM_SIZE / 8] = {};
	Broadcaster b = { .conn = kt_hello(env, 0), .stop = 0 };
	unsigned long calls = 0;
	pthread_t th;
	uint64_t id;

	ASSERT_RETURN(d && b.conn);
	id = kdbus_conn_get_id(d);
	ASSERT_EQ(kt_match_bloom(d, 1, zero, 1), 0);
	ASSERT_EQ(pthread_create(&th, NULL, broadcaster, &b), 0);
	for (int i = 0; i < 1500; i++) {
		KdbusConn *c = kt_hello(env, 0);

		if (!c)
			continue;
		if (kt_call(c, id, i + 1, kt_now_ns() + 1000000000ULL) == 0)
			calls++;
		kdbus_conn_close(c);	/* its call holds it now */
		kt_drain(d);		/* the broadcasts, and the call */
	}
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "# %lu calls of callers gone received beside %lu broadcasts\n", calls, b.sent);
	ASSERT_RETURN(calls > 1000);
	kdbus_conn_close(b.conn);
	kdbus_conn_close(d);
	return TEST_OK;
}
