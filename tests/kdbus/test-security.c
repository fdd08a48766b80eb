/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-security.c - the attacks on kdbus.ko that a local user could make,
 * one regression test each (kmod/README.md, "Threat model"; each failed,
 * with a splat or a wrong answer, on the module before its fix).  The
 * races are made deterministic with userfaultfd: a page whose access by
 * the kernel blocks until the test resolves it, while another thread does
 * what an attacker would do in that window.  Kernel module only.
 */

#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kdbus-test.h"

#define IOCTL_ONLY(env)                                                         \
	do {                                                                    \
		if ((env)->backend != KDBUS_BACKEND_IOCTL)                      \
			SKIP_BECAUSE("needs the kernel module");                \
	} while (0)

#define PAGE 4096

static double now_s(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- userfaultfd: a page the kernel blocks on ------------------------------ */

typedef struct Trap {
	int uffd;
	uint8_t *page;
} Trap;

/* a fresh anonymous page registered with userfaultfd in @mode (MISSING:
 * never touched; WP: holding @init, readable, write-protected); -1 when
 * this kernel cannot */
static int trap_new(Trap *t, uint64_t mode, const void *init, size_t len) {
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = mode };

	if (mode == UFFDIO_REGISTER_MODE_WP)
		api.features = UFFD_FEATURE_PAGEFAULT_FLAG_WP;
	t->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (t->uffd < 0)
		return -1;
	if (ioctl(t->uffd, UFFDIO_API, &api) < 0)
		goto fail;
	t->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->page == MAP_FAILED)
		goto fail;
	if (mode == UFFDIO_REGISTER_MODE_WP) {
		memset(t->page, 0, PAGE);	/* present before it is protected */
		memcpy(t->page, init, len);
	}
	reg.range.start = (uintptr_t)t->page;
	reg.range.len = PAGE;
	if (ioctl(t->uffd, UFFDIO_REGISTER, &reg) < 0)
		goto fail;
	if (mode == UFFDIO_REGISTER_MODE_WP) {
		struct uffdio_writeprotect wp = {
			.range = { (uintptr_t)t->page, PAGE }, .mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};

		if (ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp) < 0)
			goto fail;
	}
	return 0;
fail:
	close(t->uffd);
	t->uffd = -1;
	return -1;
}

/* wait (at most @ms) until a thread faults on the page; 0 when one did */
static int trap_wait(Trap *t, int ms) {
	struct pollfd p = { .fd = t->uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, ms) != 1)
		return -1;
	if (read(t->uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		return -1;
	return msg.arg.pagefault.address >= (uintptr_t)t->page &&
	       msg.arg.pagefault.address < (uintptr_t)t->page + PAGE ? 0 : -1;
}

/* let the blocked thread go on: the page gets @fill bytes */
static void trap_fill(Trap *t, uint8_t fill) {
	static uint8_t src[PAGE] __attribute__((aligned(PAGE)));
	struct uffdio_copy c = { .dst = (uintptr_t)t->page, .src = (uintptr_t)src, .len = PAGE };

	memset(src, fill, sizeof(src));
	ioctl(t->uffd, UFFDIO_COPY, &c);
}

/* let the blocked thread go on: its access fails (EFAULT) */
static void trap_fault(Trap *t) {
	struct uffdio_range r = { (uintptr_t)t->page, PAGE };

	munmap(t->page, PAGE);
	ioctl(t->uffd, UFFDIO_WAKE, &r);
}

static int trap_skip_reason(Env *env) {
	(void)env;
	kt_skip_reason = "no userfaultfd with kernel faults here";
	return TEST_SKIP;
}

/* ---- 1: the command size is read once -------------------------------------- */

typedef struct Flipper {
	_Atomic uint64_t *size;
	uint64_t a, b;
	atomic_int stop;
} Flipper;

static void *flipper(void *p) {
	Flipper *f = p;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		atomic_store_explicit(f->size, f->a, memory_order_relaxed);
		atomic_store_explicit(f->size, f->b, memory_order_relaxed);
	}
	return NULL;
}

/* BUS_MAKE negotiations on @cmd for at least @min_s seconds, until
 * @want of them failed with EINVAL (at most @max_s); other errors stop */
static int negotiate_loop(int fd, struct kdbus_cmd *cmd, double min_s, double max_s, unsigned long want,
			  unsigned long *ret_calls, unsigned long *ret_einval) {
	double start = now_s();
	int r = 0;

	*ret_calls = *ret_einval = 0;
	while (now_s() < start + max_s && (now_s() < start + min_s || *ret_einval < want)) {
		cmd->flags = KDBUS_FLAG_NEGOTIATE;	/* the answer replaces the flags */
		r = ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd) < 0 ? -errno : 0;
		++*ret_calls;
		if (r == -EINVAL)
			++*ret_einval;
		else if (r < 0)
			break;
	}
	return r == -EINVAL ? 0 : r;
}

/*
 * A second thread changes the size of a BUS_MAKE command with NEGOTIATE
 * (which writes the command back) while the kernel reads it; the kernel
 * must use the size it checked and allocated, or refuse (EINVAL).
 *
 * First both sizes are valid commands: only a change seen by the kernel
 * gives EINVAL, so the count shows the race was really run.  Then the
 * review's attack: a 40-byte command whose one NEGOTIATE item claims the
 * rest of 32 KiB, valid only at the large size.  Before the fix, reading
 * 40 then copying a size of 32 KiB made the negotiation zero the item's
 * "types" past the 40-byte copy and copy 32 KiB back: a usercopy BUG,
 * then a redzone overwritten in kmalloc-64.
 */
int test_security_cmd_size_read_once(Env *env) {
	IOCTL_ONLY(env);
	const size_t big = 32 * 1024;
	uint64_t *buf = aligned_alloc(8, big);
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)buf;
	struct kdbus_item *it;
	unsigned long calls, raced;
	Flipper f = { .stop = 0 };
	pthread_t th;
	int fd;

	ASSERT_RETURN(buf);
	fd = open("/sys/fs/kdbus/control", O_RDWR | O_CLOEXEC);
	ASSERT_RETURN(fd >= 0);
	f.size = (_Atomic uint64_t *)&cmd->size;
	f.b = big;

	/* a NEGOTIATE item of 4 types, then one that fills the rest */
	memset(buf, 0, big);
	it = cmd->items;
	it->size = KDBUS_ITEM_HEADER_SIZE + 4 * 8;
	it->type = KDBUS_ITEM_NEGOTIATE;
	it = (struct kdbus_item *)((uint8_t *)it + it->size);
	it->size = big - ((uint8_t *)it - (uint8_t *)cmd);
	it->type = KDBUS_ITEM_NEGOTIATE;
	f.a = (uint8_t *)it - (uint8_t *)cmd;
	/* either size alone answers the negotiation */
	cmd->size = f.a;
	ASSERT_EQ(negotiate_loop(fd, cmd, 0, 0.001, 0, &calls, &raced), 0);
	ASSERT_EQ(raced, 0);
	cmd->size = f.b;
	ASSERT_EQ(negotiate_loop(fd, cmd, 0, 0.001, 0, &calls, &raced), 0);
	ASSERT_EQ(raced, 0);
	ASSERT_EQ(pthread_create(&th, NULL, flipper, &f), 0);
	ASSERT_EQ(negotiate_loop(fd, cmd, 3, 30, 20, &calls, &raced), 0);
	atomic_store(&f.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "# %lu negotiations, %lu saw the size change (EINVAL)\n", calls, raced);
	ASSERT_RETURN(raced > 0);

	/* the attack: one item that is the whole command at 32 KiB only */
	memset(buf, 0, big);
	it = cmd->items;
	it->size = big - offsetof(struct kdbus_cmd, items);
	it->type = KDBUS_ITEM_NEGOTIATE;
	memset(it->data64, 0xaa, it->size - KDBUS_ITEM_HEADER_SIZE);
	f.a = offsetof(struct kdbus_cmd, items) + KDBUS_ITEM_HEADER_SIZE;
	atomic_store(&f.stop, 0);
	ASSERT_EQ(pthread_create(&th, NULL, flipper, &f), 0);
	ASSERT_EQ(negotiate_loop(fd, cmd, 3, 3, 0, &calls, &raced), 0);
	atomic_store(&f.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "# %lu negotiations of the attack, %lu refused (EINVAL)\n", calls, raced);
	/* answered at 32 KiB only: every type is unknown, zeroed */
	ASSERT_RETURN(raced < calls);
	close(fd);
	free(buf);
	return TEST_OK;
}

/* ---- 2: a slice is released by reference, never by its offset ------------ */

typedef struct InfoCall {
	int fd;
	struct kdbus_cmd_info *cmd;
	int ret;
} InfoCall;

static void *info_call(void *p) {
	InfoCall *c = p;

	c->ret = ioctl(c->fd, KDBUS_CMD_CONN_INFO, c->cmd) < 0 ? -errno : 0;
	return NULL;
}

/*
 * CONN_INFO's answer is in a public slice; writing its offset back blocks
 * (a write-protected page).  Meanwhile the caller FREEs that offset (a
 * guess that is right) and has a message queued, then the write fails.
 * Before the fix the error path released whatever slice was at the
 * offset by then, the queued message's: RECV gave offset
 * 0x6b6b6b6b6b6b6b6b (freed memory) and slub reported poison overwritten.
 */
int test_security_info_reply_fault(Env *env) {
	IOCTL_ONLY(env);
	static const char data[] = "queued while the answer was being written";
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t id, off, size;
	struct kdbus_info *info;
	struct kdbus_msg *m;
	InfoCall call;
	pthread_t th;
	const char *p;
	Trap t;
	KtMsg k;

	struct kdbus_cmd_info ci = { .size = sizeof(ci) };

	ASSERT_RETURN(a && b);
	id = kdbus_conn_get_id(a);
	ci.id = id;
	if (trap_new(&t, UFFDIO_REGISTER_MODE_WP, &ci, sizeof(ci)) < 0)
		return trap_skip_reason(env);
	/* where the next answer lands */
	ASSERT_EQ(kt_conn_info(a, id, NULL, 0, &info, &off), 0);
	ASSERT_EQ(kt_free(a, off), 0);

	call.fd = kdbus_conn_get_fd(a);
	call.cmd = (struct kdbus_cmd_info *)t.page;
	ASSERT_EQ(pthread_create(&th, NULL, info_call, &call), 0);
	ASSERT_EQ(trap_wait(&t, 10000), 0);
	/* the answer exists, its offset is not written yet */
	ASSERT_EQ(kt_free(a, off), 0);
	k = KT_MSG(.dst_id = id, .cookie = 42, .vec = { data }, .vec_size = { sizeof(data) });
	ASSERT_EQ(kt_send_msg(b, &k), 0);
	trap_fault(&t);
	pthread_join(th, NULL);
	ASSERT_EQ(call.ret, -EFAULT);

	/* the message is intact */
	ASSERT_EQ(kt_recv(a, &m, &off), 0);
	ASSERT_RETURN(off < POOL_SIZE);
	ASSERT_EQ(m->cookie, 42);
	p = kt_msg_payload(a, m, &size);
	ASSERT_RETURN(p && size == sizeof(data) && memcmp(p, data, size) == 0);
	ASSERT_EQ(kt_free(a, off), 0);
	ASSERT_EQ(kt_recv(a, NULL, NULL), -EAGAIN);
	/* and the pool still works */
	ASSERT_EQ(kt_conn_info(a, id, NULL, 0, &info, &off), 0);
	ASSERT_EQ(info->id, id);
	ASSERT_EQ(kt_free(a, off), 0);
	close(t.uffd);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

/* ---- 3: a bloom filter has the bus's size, whatever the message ---------- */

/*
 * A unicast signal with a bloom filter shorter (or longer) than the bus's
 * to a receiver whose match needs a bit near the end of the filter.
 * Before the fix only broadcasts were checked: the match test read the
 * bus's whole size past the end of the message (a heap read, one bit per
 * probe, delivered or not).
 */
int test_security_unicast_bloom_size(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	uint64_t mask[BLOOM_SIZE / 8] = {}, filter[512 / 8];
	size_t sizes[] = { 8, BLOOM_SIZE - 8, BLOOM_SIZE + 8, 2 * BLOOM_SIZE };
	KtMsg k;

	ASSERT_RETURN(a && b);
	mask[BLOOM_SIZE / 8 - 1] = 1ULL << 63;
	ASSERT_EQ(kt_match_bloom(b, 1, mask, 1), 0);
	memset(filter, 0xff, sizeof(filter));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		k = KT_MSG(.dst_id = kdbus_conn_get_id(b), .cookie = i + 1, .flags = KDBUS_MSG_SIGNAL,
			   .bloom = filter, .bloom_size = sizes[i]);
		ASSERT_EQ(kt_send_msg(a, &k), -EDOM);
		k.dst_id = KDBUS_DST_ID_BROADCAST;
		ASSERT_EQ(kt_send_msg(a, &k), -EDOM);
	}
	ASSERT_EQ(kt_recv(b, NULL, NULL), -EAGAIN);
	/* the bus's size passes, and matches */
	k = KT_MSG(.dst_id = kdbus_conn_get_id(b), .cookie = 9, .flags = KDBUS_MSG_SIGNAL, .bloom = filter);
	ASSERT_EQ(kt_send_msg(a, &k), 0);
	ASSERT_EQ(kt_drain(b), 1);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

/* ---- 4: bus names are checked in the mount's user namespace ------------- */

static int write_file(const char *path, const char *text) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * A user that maps itself to root in a user namespace of its own tries to
 * make "0-<name>", squatting on a name of root's.  Before the fix the
 * prefix was computed in the caller's namespace: it could create
 * 0-system before PID 1 and read what root's clients sent.  Exits: 0
 * refused as it must be, 10 no namespace here, others a failure.
 */
int test_security_bus_name_userns(Env *env) {
	IOCTL_ONLY(env);
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		char name[64], map[64];
		KdbusBus *bus = NULL;

		if (setgid(1000) < 0 || setuid(1000) < 0)
			_exit(2);
		/* as if it had always been that user: its /proc files are its own */
		prctl(PR_SET_DUMPABLE, 1);
		if (unshare(CLONE_NEWUSER) < 0) {
			fprintf(stderr, "# unshare(CLONE_NEWUSER): %m\n");
			_exit(10);
		}
		snprintf(map, sizeof(map), "0 1000 1\n");
		if (write_file("/proc/self/setgroups", "deny") < 0 ||
		    write_file("/proc/self/uid_map", map) < 0 || write_file("/proc/self/gid_map", map) < 0) {
			fprintf(stderr, "# the namespace's maps: %m\n");
			_exit(10);
		}
		if (geteuid() != 0)
			_exit(3);
		snprintf(name, sizeof(name), "0-kt-squat-%d", (int)getpid());
		if (kt_bus_make(KDBUS_BACKEND_IOCTL, name, 0, &bus) != -EINVAL)
			_exit(4);
		/* its own uid, as the mount sees it, works */
		snprintf(name, sizeof(name), "1000-kt-own-%d", (int)getpid());
		if (kt_bus_make(KDBUS_BACKEND_IOCTL, name, 0, &bus) != 0)
			_exit(5);
		kdbus_bus_close(bus);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_RETURN(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10)
		SKIP_BECAUSE("no unprivileged user namespaces here");
	ASSERT_EQ(WEXITSTATUS(status), 0);
	return TEST_OK;
}

/* a policy's uid is a uid of the installer's namespace, never truncated */
int test_security_policy_id_range(Env *env) {
	IOCTL_ONLY(env);
	struct kdbus_policy_access a = { KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, (1ULL << 32) + 0 };
	KdbusConn *p = NULL;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.IdRange", &a, 1, &p), -EINVAL);
	a.type = KDBUS_POLICY_ACCESS_GROUP;
	a.id = (uint32_t)-1;
	ASSERT_EQ(kt_hello_policy(env, "org.kt.IdRange", &a, 1, &p), -EINVAL);
	a.id = 1000;
	ASSERT_EQ(kt_hello_policy(env, "org.kt.IdRange", &a, 1, &p), 0);
	kdbus_conn_close(p);
	return TEST_OK;
}

/* ---- 5: no user copy with a bus lock held ------------------------------ */

typedef struct Blocked {
	KdbusConn *conn;
	uint64_t dst;
	void *data;
	int ret;
} Blocked;

static void *blocked_send(void *p) {
	Blocked *b = p;
	KtMsg k = KT_MSG(.dst_id = b->dst, .cookie = 7, .vec = { b->data }, .vec_size = { PAGE });

	b->ret = kt_send_msg(b->conn, &k);
	return NULL;
}

typedef struct Probe {
	Env *env;
	uint64_t dst;
	atomic_int done;
	int failed;
} Probe;

/* what every other user does meanwhile: HELLO, a send to the same
 * receiver, a name, a list */
static void *probe_bus(void *p) {
	Probe *pr = p;
	KdbusConn *c = kt_hello(pr->env, 0);
	struct kdbus_info *l;
	uint64_t off, size;

	if (!c || kt_send(c, pr->dst, 8) < 0 || kt_name_acquire(c, "org.kt.Probe", 0, NULL) < 0 ||
	    kt_list(c, KDBUS_LIST_NAMES, &l, &size, &off) < 0 || kt_free(c, off) < 0)
		pr->failed = 1;
	if (c)
		kdbus_conn_close(c);
	atomic_store(&pr->done, 1);
	return NULL;
}

/*
 * A send whose payload is on a page that never comes in (userfaultfd;
 * for an attacker, a FUSE file that never answers).  Before the fix the
 * payload was copied with the registry and the receiver locked: every
 * HELLO and SEND of every user hung (hung-task reports in HELLO).  Now
 * the copy is made before any lock: the others go on at once.
 */
int test_security_copy_without_locks(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *a = kt_hello(env, 0), *b = kt_hello(env, 0);
	Blocked bl = { .conn = a };
	Probe pr = { .env = env, .done = 0 };
	pthread_t tb, tp;
	struct kdbus_msg *m;
	uint64_t off, size;
	const uint8_t *p;
	double end;
	int done;
	Trap t;

	ASSERT_RETURN(a && b);
	if (trap_new(&t, UFFDIO_REGISTER_MODE_MISSING, NULL, 0) < 0)
		return trap_skip_reason(env);
	bl.dst = pr.dst = kdbus_conn_get_id(b);
	bl.data = t.page;
	ASSERT_EQ(pthread_create(&tb, NULL, blocked_send, &bl), 0);
	ASSERT_EQ(trap_wait(&t, 10000), 0);
	ASSERT_EQ(pthread_create(&tp, NULL, probe_bus, &pr), 0);
	for (end = now_s() + 5; !atomic_load(&pr.done) && now_s() < end;)
		usleep(10000);
	done = atomic_load(&pr.done);
	trap_fill(&t, 0x5a);	/* whatever happened, nothing stays blocked */
	pthread_join(tb, NULL);
	pthread_join(tp, NULL);
	ASSERT_RETURN(done);
	ASSERT_EQ(pr.failed, 0);
	ASSERT_EQ(bl.ret, 0);
	/* the probe's message came first, then the blocked one, whole */
	ASSERT_EQ(kt_recv(b, &m, &off), 0);
	ASSERT_EQ(m->cookie, 8);
	ASSERT_EQ(kt_free(b, off), 0);
	ASSERT_EQ(kt_recv(b, &m, &off), 0);
	ASSERT_EQ(m->cookie, 7);
	p = kt_msg_payload(b, m, &size);
	ASSERT_RETURN(p && size == PAGE && p[0] == 0x5a && p[PAGE - 1] == 0x5a);
	ASSERT_EQ(kt_free(b, off), 0);
	close(t.uffd);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}

/* ---- 6: no WARN on user input ------------------------------------------ */

/*
 * BUS_MAKE with an unknown bit in ATTACH_FLAGS_SEND.  Before the fix it
 * failed before the bus's lists were initialised and the free path's
 * WARN_ON fired twice: a panic under panic_on_warn.
 */
int test_security_bus_make_bad_attach(Env *env) {
	IOCTL_ONLY(env);
	char name[64];
	KdbusBus *bus = NULL;

	snprintf(name, sizeof(name), "%u-kt-attach-%d", (unsigned)geteuid(), (int)getpid());
	ASSERT_EQ(kt_bus_make(KDBUS_BACKEND_IOCTL, name, 1ULL << 62, &bus), -EINVAL);
	ASSERT_EQ(kt_bus_make(KDBUS_BACKEND_IOCTL, name, _KDBUS_ATTACH_ALL + 1, &bus), -EINVAL);
	/* the name was not taken by the failures */
	ASSERT_EQ(kt_bus_make(KDBUS_BACKEND_IOCTL, name, KDBUS_ATTACH_CREDS, &bus), 0);
	kdbus_bus_close(bus);
	return TEST_OK;
}

/* ---- 7: no file that can hold files is passed ----------------------------- */

/*
 * A connection's own fd registered in an io_uring, whose fd is sent to
 * that connection: the queued message would keep the ring, the ring the
 * connection, until the bus goes.  Before the fix: accepted (6 such
 * connections kept 62 MB of pool each after every process was gone).
 */
int test_security_io_uring_fd(Env *env) {
	IOCTL_ONLY(env);
	KdbusConn *c = kt_hello(env, KDBUS_HELLO_ACCEPT_FD);
	struct io_uring_params params = {};
	int ring, cfd, efd;
	uint64_t id;
	KtMsg k;

	ASSERT_RETURN(c);
	id = kdbus_conn_get_id(c);
	cfd = kdbus_conn_get_fd(c);
	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0)
		SKIP_BECAUSE("no io_uring here");
	ASSERT_EQ(syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, &cfd, 1), 0);
	k = KT_MSG(.dst_id = id, .cookie = 1, .fds = &ring, .n_fds = 1);
	ASSERT_EQ(kt_send_msg(c, &k), -EOPNOTSUPP);
	/* nor the connection itself, nor the bus's control file */
	k.fds = &cfd;
	ASSERT_EQ(kt_send_msg(c, &k), -EOPNOTSUPP);
	/* an eventfd is fine */
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_RETURN(efd >= 0);
	k.fds = &efd;
	ASSERT_EQ(kt_send_msg(c, &k), 0);
	ASSERT_EQ(kt_drain(c), 1);
	close(efd);
	close(ring);
	kdbus_conn_close(c);
	return TEST_OK;
}

/* ---- 8: a sender's RLIMIT_FSIZE is not the receiver's -------------------- */

/*
 * A process with RLIMIT_FSIZE of one page says HELLO (a notification
 * written on its behalf) and sends to a receiver whose pool is used past
 * that page.  Before the fix the pool was written through the VFS with
 * the writer's limits: the sends failed (EFBIG) and the watcher lost the
 * notification.
 */
int test_security_rlimit_fsize(Env *env) {
	IOCTL_ONLY(env);
	static uint8_t big[16 * 1024], mid[8 * 1024];
	KdbusConn *r = kt_hello(env, 0);
	struct kdbus_cmd_recv rv;
	struct kdbus_msg *m;
	uint64_t id, off, size;
	const uint8_t *p;
	int status;
	pid_t pid;
	KtMsg k;

	ASSERT_RETURN(r);
	id = kdbus_conn_get_id(r);
	/* the start of the pool is taken */
	k = KT_MSG(.dst_id = id, .cookie = 1, .vec = { big }, .vec_size = { sizeof(big) });
	ASSERT_EQ(kt_send_msg(env->conn, &k), 0);
	ASSERT_EQ(kt_match_id(r, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY), 0);
	memset(mid, 0xa5, sizeof(mid));

	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { PAGE, PAGE };
		KdbusConn *s;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		s = kt_hello(env, 0);
		if (!s)
			_exit(3);
		for (int i = 0; i < 3; i++) {
			KtMsg km = KT_MSG(.dst_id = id, .cookie = 10 + i, .vec = { mid }, .vec_size = { sizeof(mid) });

			if (kt_send_msg(s, &km) != 0)
				_exit(4 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_RETURN(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);

	ASSERT_EQ(kt_recv(r, &m, &off), 0);
	ASSERT_EQ(m->cookie, 1);
	ASSERT_EQ(kt_free(r, off), 0);
	/* the notification: nothing lost */
	ASSERT_EQ(kt_recv_flags(r, 0, 0, &rv), 0);
	ASSERT_EQ(rv.dropped_msgs, 0);
	m = kdbus_pool_ptr(r, rv.msg.offset);
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_RETURN(kt_msg_item(m, KDBUS_ITEM_ID_ADD, 0));
	ASSERT_EQ(kt_free(r, rv.msg.offset), 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(kt_recv(r, &m, &off), 0);
		ASSERT_EQ(m->cookie, 10 + i);
		p = kt_msg_payload(r, m, &size);
		ASSERT_RETURN(p && size == sizeof(mid) && p[0] == 0xa5 && p[sizeof(mid) - 1] == 0xa5);
		ASSERT_RETURN(off + sizeof(mid) > PAGE);
		ASSERT_EQ(kt_free(r, off), 0);
	}
	kdbus_conn_close(r);
	return TEST_OK;
}

/* ---- 9: each sending user gets a share of a receiver ---------------------- */

/* send @size-byte messages until one fails: how many passed, the error in *ret */
static unsigned flood(KdbusConn *c, const char *name, size_t size, int *ret) {
	static uint8_t buf[64 * 1024];
	unsigned n = 0;

	for (;;) {
		KtMsg k = KT_MSG(.dst_name = name, .cookie = n + 1, .vec = { buf }, .vec_size = { size });

		*ret = kt_send_msg(c, &k);
		if (*ret < 0 || ++n >= 4000)
			return n;
	}
}

/*
 * A user floods a root service with big messages, then small ones, then
 * empty ones, until nothing more is accepted; another user's calls must
 * still get through.  Before the fix the service's queue (256 messages)
 * or pool was anybody's to fill: its legitimate clients got ENOBUFS or
 * "Exchange full".
 */
int test_security_user_quota(Env *env) {
	IOCTL_ONLY(env);
	struct kdbus_policy_access world = { KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0 };
	KtHello h = { .pool_size = 1024 * 1024 };
	KdbusConn *svc = NULL, *holder = NULL, *evil, *good;
	unsigned big, small, empty, got;
	int r;

	ASSERT_EQ(kt_hello_policy(env, "org.kt.Quota", &world, 1, &holder), 0);
	ASSERT_EQ(kt_hello_full(env->bus, &h, &svc), 0);
	ASSERT_EQ(kt_name_acquire(svc, "org.kt.Quota", 0, NULL), 0);
	evil = kt_hello_uid(env, 1000, 1000, 0);
	good = kt_hello_uid(env, 1001, 1001, 0);
	ASSERT_RETURN(evil && good);

	big = flood(evil, "org.kt.Quota", 64 * 1024, &r);
	ASSERT_EQ(r, -ENOBUFS);
	small = flood(evil, "org.kt.Quota", 1024, &r);
	ASSERT_EQ(r, -ENOBUFS);
	empty = flood(evil, "org.kt.Quota", 0, &r);
	ASSERT_EQ(r, -ENOBUFS);
	fprintf(stderr, "# one user queued %u+%u+%u messages\n", big, small, empty);
	/* at most a third of the incoming half of the pool, 256 messages */
	ASSERT_RETURN((big * 64 + small) * 1024 <= 1024 * 1024 / 2 / 3 + 64 * 1024);
	ASSERT_RETURN(big + small + empty <= 256);

	/* the other user gets through, and so does the service's own */
	for (unsigned i = 0; i < 20; i++) {
		KtMsg k = KT_MSG(.dst_name = "org.kt.Quota", .cookie = 100 + i);

		ASSERT_EQ(kt_send_msg(good, &k), 0);
	}
	ASSERT_EQ(kt_send_name(env->conn, "org.kt.Quota", 200, 0), 0);
	got = kt_drain(svc);
	ASSERT_EQ(got, big + small + empty + 21);
	/* received: the share is back */
	ASSERT_EQ(flood(evil, "org.kt.Quota", 64 * 1024, &r), big);
	kdbus_conn_close(evil);
	kdbus_conn_close(good);
	kdbus_conn_close(svc);
	kdbus_conn_close(holder);
	return TEST_OK;
}

/* ---- metadata in user memory: the command line -------------------------------- */

typedef struct Cmdline {
	KdbusConn *conn;
	uint64_t dst;
	int ret;
} Cmdline;

static void *cmdline_send(void *p) {
	Cmdline *c = p;

	c->ret = kt_send(c->conn, c->dst, 7);
	return NULL;
}

/*
 * The one metadata item that lives in user memory: the sender's command
 * line (CMDLINE), which a SEND reads from the sender's own memory for the
 * receivers that get it.  A child points its argument area at a page that
 * never comes in (prctl PR_SET_MM; for an attacker, a FUSE file mapped
 * over it) and sends: it must block alone, with no lock held, while every
 * other user goes on.  When the page comes in, the message carries what
 * was there.
 */
int test_security_cmdline_without_locks(Env *env) {
	IOCTL_ONLY(env);
	KtHello hr = { .attach_recv = KDBUS_ATTACH_CMDLINE };
	KdbusConn *a = kt_hello(env, 0), *b = NULL;
	Probe pr = { .env = env, .done = 0 };
	int blocked[2], go[2], status, done;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;
	pthread_t tp;
	double end;
	char x = 0;
	pid_t pid;

	ASSERT_RETURN(a);
	ASSERT_EQ(kt_hello_full(env->bus, &hr, &b), 0);
	ASSERT_EQ(pipe(blocked), 0);
	ASSERT_EQ(pipe(go), 0);
	pid = fork();
	ASSERT_RETURN(pid >= 0);
	if (pid == 0) {
		Cmdline c = { .conn = a, .dst = kdbus_conn_get_id(b) };
		pthread_t ts;
		Trap t;

		close(blocked[0]);
		close(go[1]);
		if (trap_new(&t, UFFDIO_REGISTER_MODE_MISSING, NULL, 0) < 0)
			_exit(77);
		if (prctl(PR_SET_MM, PR_SET_MM_ARG_START, (unsigned long)t.page, 0, 0) < 0 ||
		    prctl(PR_SET_MM, PR_SET_MM_ARG_END, (unsigned long)t.page + 64, 0, 0) < 0)
			_exit(78);
		if (pthread_create(&ts, NULL, cmdline_send, &c) != 0)
			_exit(3);
		if (trap_wait(&t, 10000) == 0)
			x = 1;
		if (write(blocked[1], &x, 1) != 1 || read(go[0], &x, 1) != 1)
			x = 0;
		trap_fill(&t, 'z');	/* whatever happened, nothing stays blocked */
		pthread_join(ts, NULL);
		_exit(c.ret == 0 ? 0 : 4);
	}
	close(blocked[1]);
	close(go[0]);
	ASSERT_EQ(read(blocked[0], &x, 1), 1);
	if (!x) {
		ASSERT_EQ(write(go[1], &x, 1), 1);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			return trap_skip_reason(env);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 78)
			SKIP_BECAUSE("prctl(PR_SET_MM) refused");
		ASSERT_RETURN(x);
	}
	/* the sender is stuck reading its own memory: the bus is not */
	pr.dst = kdbus_conn_get_id(b);
	ASSERT_EQ(pthread_create(&tp, NULL, probe_bus, &pr), 0);
	for (end = now_s() + 5; !atomic_load(&pr.done) && now_s() < end;)
		usleep(10000);
	done = atomic_load(&pr.done);
	ASSERT_EQ(write(go[1], &x, 1), 1);
	pthread_join(tp, NULL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	close(blocked[0]);
	close(go[1]);
	ASSERT_RETURN(done);
	ASSERT_EQ(pr.failed, 0);
	ASSERT_RETURN(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* the probe's message first, then the child's, with what the page held */
	ASSERT_EQ(kt_recv(b, &m, &off), 0);
	ASSERT_EQ(m->cookie, 8);
	ASSERT_EQ(kt_free(b, off), 0);
	ASSERT_EQ(kt_recv(b, &m, &off), 0);
	ASSERT_EQ(m->cookie, 7);
	it = kt_msg_item(m, KDBUS_ITEM_CMDLINE, 0);
	ASSERT_RETURN(it && it->size == KDBUS_ITEM_HEADER_SIZE + 65);
	ASSERT_RETURN(it->str[0] == 'z' && it->str[63] == 'z' && it->str[64] == 0);
	ASSERT_EQ(kt_free(b, off), 0);
	kdbus_conn_close(a);
	kdbus_conn_close(b);
	return TEST_OK;
}
