// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kfuzz.c - a structure-aware fuzzer of kdbus.ko's ioctl surface
 *
 *   kfuzz [--seed S] [--seconds N] [--procs N] [--log FILE] [--avoid CLASS,...]
 *   kfuzz --seed S --procs N --replay W [--count N] [--only LIST] [--skip LIST]
 *
 * Runs only where kdbus.ko is loaded and kdbusfs is mounted (the VM of
 * tests/vm/run.sh): never on a machine that matters.  The supervisor makes
 * a few buses as root, then forks --procs workers: worker 0 and every third
 * one stay root, the others become uid 1000 and 1001.  Each worker runs
 * random commands (ops.c) on its connections, with a helper thread that
 * closes fds, changes a command's size, signals, cancels or frees while an
 * ioctl is in flight, or holds a user copy on a userfaultfd page; and it
 * checks everything the kernel hands back: offsets and sizes inside the
 * pool, item framing, payload that is what was sent, no slab poison or
 * kernel address in replies and pool slices, no byte written past a
 * command, no slice given out twice, and the final ABI's answers where a
 * wrong one is a security bug (doc/fuzzing.md lists them).  Exit status: 0
 * when no violation was seen, 1 otherwise, 77 when there is no kdbusfs.
 *
 * The seed is printed first; command k of worker w depends only on the
 * seed, w and k, so `--replay W --count K` repeats what worker W did (with
 * the other workers absent), and `--only` runs a subset of its commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "kfuzz.h"

#ifndef KFUZZ_VERSION
#define KFUZZ_VERSION "unknown"
#endif

Shared *shared;
Worker W;
unsigned avoid;
const char *kdbusfs = "/sys/fs/kdbus";

const char *const op_names[_OP_MAX] = {
	[OP_BUS_MAKE] = "BUS_MAKE",
	[OP_HELLO] = "HELLO",
	[OP_BYEBYE] = "BYEBYE",
	[OP_UPDATE] = "UPDATE",
	[OP_FREE] = "FREE",
	[OP_CONN_INFO] = "CONN_INFO",
	[OP_CREATOR_INFO] = "BUS_CREATOR_INFO",
	[OP_LIST] = "LIST",
	[OP_SEND] = "SEND",
	[OP_REPLY] = "SEND(reply)",
	[OP_RECV] = "RECV",
	[OP_NAME_ACQUIRE] = "NAME_ACQUIRE",
	[OP_NAME_RELEASE] = "NAME_RELEASE",
	[OP_MATCH_ADD] = "MATCH_ADD",
	[OP_MATCH_REMOVE] = "MATCH_REMOVE",
	[OP_ENDPOINT] = "ENDPOINT_MAKE/UPDATE",
	[OP_RAW] = "raw ioctl",
	[OP_POOL] = "pool mmap/read",
	[OP_OPEN] = "open",
	[OP_CLOSE] = "close",
	[OP_FORK] = "fork",
	[OP_USERNS] = "userns BUS_MAKE",
	[OP_STALL] = "stalled user copy",
	[OP_PROBE] = "probe (uring, quota)",
};

static const struct {
	const char *name;
	unsigned bit;
	const char *what;
} avoid_classes[] = {
	{ "make-attach", AVOID_MAKE_ATTACH, "BUS_MAKE with unknown ATTACH_FLAGS_SEND bits (the security review's bug 6)" },
	{ "size-race", AVOID_SIZE_RACE, "a thread changing a command's size during the ioctl (bug 1)" },
	{ "unicast-bloom", AVOID_UNICAST_BLOOM, "signals with a bloom filter of the wrong size (bug 3)" },
	{ "info-efault", AVOID_INFO_EFAULT, "info and list commands on read-only memory (bug 2's path)" },
	{ "free-race", AVOID_FREE_RACE, "FREE of guessed offsets while an info command runs (bug 2)" },
	{ "rlimit", AVOID_RLIMIT, "SEND under a small RLIMIT_FSIZE (bug 8)" },
	{ "userns", AVOID_USERNS, "BUS_MAKE from a user namespace (bug 4)" },
	{ "uring", AVOID_URING, "io_uring fds passed in FDS (bug 7)" },
	{ "uffd", AVOID_UFFD, "answers and payload on userfaultfd pages, stalled (bugs 2 and 5)" },
	{ "quota", AVOID_QUOTA, "one user filling another user's pool (bug 9)" },
	{ "signal-call", AVOID_SIGNAL_CALL, "calls flagged as signals: SIGNAL with EXPECT_REPLY (not one of the nine)" },
};

/* ---- the random stream ---- */

static Rng R;

uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rnd(void)
{
	R.s += 0x9e3779b97f4a7c15ULL;
	return mix64(R.s);
}

uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

bool chance(unsigned pct)
{
	return rn(100) < pct;
}

int64_t rrange(int64_t lo, int64_t hi)
{
	return lo + (int64_t)rn((uint64_t)(hi - lo + 1));
}

static bool is_poison_byte(uint8_t b)
{
	return b == 0x6b || b == 0x5a || b == 0xa5 || b == 0xbb || b == 0xcc || b == 0xaa;
}

uint8_t cleanbyte(uint8_t b)
{
	return is_poison_byte(b) ? (uint8_t)(b ^ 0x01) : b;
}

static bool is_kptr(uint64_t v)
{
	return v >= 0xffff800000000000ULL && v < 0xffffffffff000000ULL;
}

/* what the fuzzer writes never looks like slab poison or a kernel address,
 * so that either one in a reply is the kernel's */
uint64_t clean64(uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++) {
		uint8_t b = (uint8_t)(v >> (i * 8));

		if (is_poison_byte(b))
			v ^= 1ULL << (i * 8);
	}
	if (is_kptr(v))
		v &= ~(1ULL << 62);
	return v;
}

uint64_t rclean(void)
{
	switch (rn(6)) {
	case 0:
		return rn(16);
	case 1:
		return ~rn(16);
	case 2:
		return rn(1ULL << 32);
	default:
		return clean64(rnd());
	}
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the log and violations ---- */

static int logfd = -1;
static bool log_sync;
static bool quiet;
static unsigned printed_violations;
static unsigned printed_class[MAX_VIOL_TEXT];
static uint64_t seed_of_run;

void dlog(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (W.desc_len >= sizeof(W.desc) - 2)
		return;
	va_start(ap, fmt);
	n = vsnprintf(W.desc + W.desc_len, sizeof(W.desc) - W.desc_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		W.desc_len += (size_t)n;
	if (W.desc_len > sizeof(W.desc) - 2)
		W.desc_len = sizeof(W.desc) - 2;
}

static void log_command(void)
{
	char line[640];
	int n;

	if (logfd < 0)
		return;
	n = snprintf(line, sizeof(line), "w%d%s %" PRIu64 " %s %.*s\n", W.idx, W.child ? "f" : "", W.k,
		     op_names[W.op], (int)W.desc_len, W.desc);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (write(logfd, line, (size_t)n) < 0)
		return;
	if (log_sync)
		tcdrain(logfd);
}

void violation(const char *fmt, ...)
{
	char msg[256], line[512];
	uint64_t n;
	va_list ap;
	int len, cls;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = __atomic_fetch_add(&shared->violations, 1, __ATOMIC_RELAXED);
	(void)n;
	/* a class is the format: the same check, whatever the numbers */
	for (cls = 0; cls < MAX_VIOL_TEXT; cls++) {
		uint64_t expected = 0;

		if (shared->viol_fmt[cls] == (uintptr_t)fmt)
			break;
		if (__atomic_compare_exchange_n(&shared->viol_fmt[cls], &expected, (uintptr_t)fmt, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			snprintf(shared->viol[cls], sizeof(shared->viol[cls]), "w%d%s #%" PRIu64 " %s: %s (seed 0x%"
				 PRIx64 ")", W.idx, W.child ? "f" : "", W.k, op_names[W.op], msg, seed_of_run);
			break;
		}
	}
	if (cls < MAX_VIOL_TEXT) {
		__atomic_fetch_add(&shared->viol_count[cls], 1, __ATOMIC_RELAXED);
		if (printed_class[cls]++ >= 3)
			return;
	}
	if (printed_violations++ >= 20)
		return;
	len = snprintf(line, sizeof(line), "# VIOLATION w%d%s #%" PRIu64 " %s: %s\n#   command: %.*s\n",
		       W.idx, W.child ? "f" : "", W.k, op_names[W.op], msg, (int)W.desc_len, W.desc);
	if (len > (int)sizeof(line) - 1)
		len = sizeof(line) - 1;
	if (write(1, line, (size_t)len) < 0)
		return;
	if (logfd >= 0 && write(logfd, line, (size_t)len) < 0)
		return;
}

/* ---- ids seen ---- */

void note_id(uint64_t id)
{
	int i;

	if (id == 0 || id == ~0ULL)
		return;
	for (i = 0; i < W.nids; i++)
		if (W.ids[i] == id)
			return;
	if (W.nids < MAX_IDS)
		W.ids[W.nids++] = id;
	else
		W.ids[rn(MAX_IDS)] = id;
}

uint64_t pick_id(void)
{
	if (W.nids == 0 || chance(5))
		return rn(64) + 1;
	return W.ids[rn(W.nids)];
}

/* ---- the arenas: where an ioctl's argument lives ---- */

#define PAGE 4096
#define ARENA_RW_PAGES 10
#define ARENA_PAGES (ARENA_RW_PAGES + 2)
#define CANARY 0x3c
#define CANARY_LEN 64

static uint8_t *arena[2];
size_t place_extent;

static void arenas_init(void)
{
	int a;

	for (a = 0; a < 2; a++) {
		uint8_t *p = mmap(NULL, ARENA_PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t i;

		if (p == MAP_FAILED) {
			perror("kfuzz: mmap");
			_exit(2);
		}
		for (i = 0; i < PAGE; i++)
			p[(ARENA_RW_PAGES + 1) * PAGE + i] = (uint8_t)(0x40 + i % 0x0b);	/* no tag byte 0x4b */
		mprotect(p + ARENA_RW_PAGES * PAGE, PAGE, PROT_NONE);
		mprotect(p + (ARENA_RW_PAGES + 1) * PAGE, PAGE, PROT_READ);
		arena[a] = p;
	}
}

int pick_placement(unsigned weird_pct)
{
	static const int weird[] = { PL_GUARD, PL_GUARD, PL_RO, PL_RO, PL_NULL, PL_UNMAPPED, PL_KERNEL, PL_MISALIGNED };

	if (!chance(weird_pct))
		return PL_NORMAL;
	return weird[rn(sizeof(weird) / sizeof(weird[0]))];
}

void place(Placed *pl, int a, const void *buf, size_t len, int mode)
{
	uint8_t *base = arena[a];
	size_t rw = ARENA_RW_PAGES * PAGE;

	memset(pl, 0, sizeof(*pl));
	pl->mode = mode;
	pl->len = len;
	if (mode == PL_RO && len > PAGE)
		mode = pl->mode = PL_GUARD;
	if (mode == PL_GUARD && len > rw)
		mode = pl->mode = PL_NORMAL;
	switch (mode) {
	case PL_NORMAL: {
		size_t off = 8 * rn(8), decl = 0, end;

		if (len >= 8)
			memcpy(&decl, buf, 8);
		if (place_extent > decl)
			decl = place_extent;	/* a size the command may take meanwhile */
		if (off + len + CANARY_LEN > rw)
			off = 0;
		pl->p = base + off;
		memcpy(pl->p, buf, len > rw ? rw : len);
		end = len > decl ? len : (decl < rw ? decl : len);
		end = (end + 7) & ~7UL;
		if (off + end + CANARY_LEN <= rw) {
			pl->canary_at = end;
			memset(pl->p + len, 0, end > len ? end - len : 0);
			memset(pl->p + end, CANARY, CANARY_LEN);
		} else {
			pl->canary_at = 0;
		}
		pl->arg = (unsigned long)pl->p;
		break;
	}
	case PL_GUARD:
		pl->p = base + rw - ((len + 7) & ~7UL);
		memcpy(pl->p, buf, len);
		pl->arg = (unsigned long)pl->p;
		break;
	case PL_RO: {
		uint8_t *ro = base + rw + PAGE;

		mprotect(ro, PAGE, PROT_READ | PROT_WRITE);
		pl->p = ro + PAGE - ((len + 7) & ~7UL);
		memcpy(pl->p, buf, len);
		mprotect(ro, PAGE, PROT_READ);
		pl->arg = (unsigned long)pl->p;
		break;
	}
	case PL_NULL:
		pl->arg = 0;
		break;
	case PL_UNMAPPED:
		pl->arg = chance(50) ? (unsigned long)(base + rw) : 0x1000UL * (1 + rn(15));
		break;
	case PL_KERNEL: {
		static const unsigned long k[] = { 0xffffffff81000000UL, 0xffff888000000000UL,
						   0xffffc90000000000UL, 0xfffffffffffff000UL };

		pl->arg = k[rn(4)];
		break;
	}
	case PL_MISALIGNED:
		pl->p = base + 4 + 8 * rn(4);
		memcpy(pl->p, buf, len + 12 > rw ? rw - 12 : len);
		pl->arg = (unsigned long)pl->p;
		break;
	}
}

/* nothing was written past the command (PL_NORMAL) */
bool placed_intact(const Placed *pl, const char *what)
{
	size_t i;

	if (pl->mode != PL_NORMAL || !pl->canary_at)
		return true;
	for (i = 0; i < CANARY_LEN; i++)
		if (pl->p[pl->canary_at + i] != CANARY) {
			violation("%s: the kernel wrote past the end of the command (byte %zu after it is 0x%02x)",
				  what, i, pl->p[pl->canary_at + i]);
			return false;
		}
	return true;
}

/* ---- the helper thread ---- */

static pthread_t main_thread, helper_thread;
static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t act_cond = PTHREAD_COND_INITIALIZER;
static Action act;
static int act_state;		/* 0 idle, 1 posted, 2 done */
static volatile int act_started;
static volatile int act_stop;
static bool helper_running;

static void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void act_run(Action *a)
{
	unsigned long i;

	switch (a->type) {
	case ACT_CLOSE:
		sleep_us(a->delay_us);
		close(a->fd);
		break;
	case ACT_FLIP:
		for (i = 0; !act_stop && i < 50000000UL; i++) {
			*a->addr = a->v2;
			__asm__ volatile("" ::: "memory");
			*a->addr = a->v1;
		}
		break;
	case ACT_SIGNAL:
		sleep_us(a->delay_us);
		pthread_kill(main_thread, SIGUSR1);
		break;
	case ACT_CANCEL: {
		uint64_t one = 1;

		sleep_us(a->delay_us);
		if (write(a->fd, &one, sizeof(one)) < 0)
			break;
		break;
	}
	case ACT_FREE:
		for (i = 0; !act_stop && i < 2000000UL; i++) {
			struct kdbus_cmd_free f = { .size = sizeof(f), .offset = 8 * (i % (a->pool_size / 8 ? a->pool_size / 8 : 1)) };

			if (i % 64 == 0)
				f.offset = 0;
			if (ioctl(a->fd, KDBUS_CMD_FREE, &f) == 0 && a->nfreed < 16)
				a->freed[a->nfreed++] = f.offset;
		}
		break;
	case ACT_STALL: {
		struct pollfd pfd = { .fd = a->uffd, .events = POLLIN };
		struct uffd_msg m;
		uint64_t t0 = now_ns(), off;
		int j;

		a->stalled = 0;
		if (poll(&pfd, 1, 500) > 0 && read(a->uffd, &m, sizeof(m)) == (ssize_t)sizeof(m))
			a->stalled = 1;
		if (a->stalled && a->mode == 0) {
			/* the kernel waits to write an answer's offset: free that
			 * answer and queue messages where it was; then the write fails */
			for (off = 0; off < a->pool_size && off < 16384; off += 8) {
				struct kdbus_cmd_free f = { .size = sizeof(f), .offset = off };

				if (ioctl(a->fd, KDBUS_CMD_FREE, &f) == 0)
					a->nfreed++;
			}
			for (j = 0; j < 2; j++)
				if (ioctl(a->fd2, KDBUS_CMD_SEND, a->send_arg) == 0)
					a->sent++;
			munmap(a->page, PAGE);
		} else if (a->stalled && a->mode == 1) {
			/* a SEND waits for its payload page: somebody else tries the
			 * bus meanwhile (go_fd), then the page comes */
			struct uffdio_copy c = { .dst = (uintptr_t)a->page, .src = (uintptr_t)a->srcpage, .len = PAGE };

			if (write(a->go_fd, "g", 1) < 0)
				a->sent = -1;
			sleep_us(a->delay_us);
			ioctl(a->uffd, UFFDIO_COPY, &c);
		}
		a->stall_ns = now_ns() - t0;
		close(a->uffd);
		break;
	}
	case ACT_PROTECT: {
		uint8_t *page = (uint8_t *)((uintptr_t)a->addr & ~(uintptr_t)(PAGE - 1));

		sleep_us(a->delay_us);
		mprotect(page, PAGE, PROT_NONE);
		sleep_us(200);
		mprotect(page, PAGE, PROT_READ | PROT_WRITE);
		break;
	}
	}
}

static void *helper_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&act_lock);
	for (;;) {
		while (act_state != 1)
			pthread_cond_wait(&act_cond, &act_lock);
		pthread_mutex_unlock(&act_lock);
		act_started = 1;
		act_run(&act);
		pthread_mutex_lock(&act_lock);
		act_state = 2;
		pthread_cond_broadcast(&act_cond);
	}
	return NULL;
}

void act_post(const Action *a)
{
	if (!helper_running || W.child)
		return;
	__atomic_fetch_add(&shared->races, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&act_lock);
	act = *a;
	act_stop = 0;
	act_started = 0;
	act_state = 1;
	pthread_cond_broadcast(&act_cond);
	pthread_mutex_unlock(&act_lock);
	if (a->type == ACT_FLIP || a->type == ACT_FREE) {
		/* the race is on before the ioctl starts */
		uint64_t end = now_ns() + 20000000ULL;

		while (!act_started && now_ns() < end)
			sched_yield();
	}
	dlog(" [race %d]", a->type);
}

/* after the ioctl: stop the action and wait for the helper */
void act_finish(Action *out)
{
	if (!helper_running || W.child)
		return;
	act_stop = 1;
	pthread_mutex_lock(&act_lock);
	while (act_state == 1)
		pthread_cond_wait(&act_cond, &act_lock);
	act_state = 0;
	if (out)
		*out = act;
	pthread_mutex_unlock(&act_lock);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* ---- ioctls and their figures ---- */

int kio(int fd, unsigned long req, unsigned long arg)
{
	uint64_t t0, us;
	int r, e;

	__atomic_fetch_add(&shared->issued[W.op], 1, __ATOMIC_RELAXED);
	t0 = now_ns();
	r = ioctl(fd, req, arg);
	e = errno;
	us = (now_ns() - t0) / 1000;
	if (us > shared->lat_max_us[W.op])
		shared->lat_max_us[W.op] = us;	/* racy maximum: good enough for a figure */
	if (r < 0)
		__atomic_fetch_add(&shared->err[W.op][e < MAX_ERRNO ? e : 0], 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&shared->ok[W.op], 1, __ATOMIC_RELAXED);
	errno = e;
	return r;
}

/* ---- fds ---- */

int fent_add(int fd, int kind, int bus)
{
	int i;

	if (fd < 0)
		return -1;
	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == K_NONE) {
			memset(&W.f[i], 0, sizeof(W.f[i]));
			W.f[i].fd = fd;
			W.f[i].kind = kind;
			W.f[i].bus = bus;
			return i;
		}
	close(fd);
	return -1;
}

static void conn_unmap(Conn *c)
{
	if (c->map)
		munmap((void *)c->map, c->map_len);
	c->map = NULL;
}

void fent_close(int i)
{
	Fent *e = &W.f[i];
	int b;

	if (e->kind == K_NONE)
		return;
	if (e->kind == K_CONN)
		conn_unmap(&e->c);
	if (e->kind == K_CTL && e->bus >= 0) {
		W.buses[e->bus].alive = false;	/* closing the control fd ends the bus */
		for (b = 0; b < MAX_FDS; b++)
			if ((W.f[b].kind == K_EP || W.f[b].kind == K_CONN) && W.f[b].bus == e->bus)
				W.f[b].bus = -1;
	}
	close(e->fd);
	e->kind = K_NONE;
}

int fent_count(int kind)
{
	int i, n = 0;

	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == kind)
			n++;
	return n;
}

int fent_pick(int kind)
{
	int i, n = fent_count(kind), k;

	if (n == 0)
		return -1;
	k = (int)rn(n);
	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == kind && k-- == 0)
			return i;
	return -1;
}

int fent_pick_any(void)
{
	int i, n = 0, k;

	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind != K_NONE)
			n++;
	if (n == 0)
		return -1;
	k = (int)rn(n);
	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind != K_NONE && k-- == 0)
			return i;
	return -1;
}

int open_bus(int b)
{
	int fd;

	if (b < 0 || b >= W.nbuses)
		return -1;
	fd = open(W.buses[b].path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return fent_add(fd, K_EP, b);
}

int make_misc_fd(int kind)
{
	int fd = -1, sv[2], pp[2];

	switch (kind) {
	case K_MEMFD_SEALED:
	case K_MEMFD: {
		size_t size = chance(50) ? 64 : PAGE * (1 + rn(4));
		uint8_t buf[256];
		size_t n = size < sizeof(buf) ? size : sizeof(buf);

		fd = memfd_create("kfuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (fd < 0)
			return -1;
		if (ftruncate(fd, (off_t)size) < 0)
			break;
		payload_fill(buf, n, payload_tag(n));
		if (pwrite(fd, buf, n, 0) < 0)
			break;
		if (kind == K_MEMFD_SEALED)
			fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
		else if (chance(30))
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);	/* sealed, but writable */
		break;
	}
	case K_SOCK:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return -1;
		close(sv[1]);
		fd = sv[0];
		break;
	case K_PIPE:
		if (pipe2(pp, O_CLOEXEC) < 0)
			return -1;
		close(pp[0]);
		fd = pp[1];
		break;
	case K_EVENTFD:
		fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		break;
	case K_NULL:
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		break;
	case K_URING: {
		uint8_t params[120] = { 0 };	/* struct io_uring_params */

#ifdef __NR_io_uring_setup
		fd = (int)syscall(__NR_io_uring_setup, 4, params);
#endif
		break;
	}
	case K_CTL: {
		char path[200];

		snprintf(path, sizeof(path), "%s/control", kdbusfs);
		fd = open(path, O_RDWR | O_CLOEXEC);
		return fent_add(fd, K_CTL, -1);
	}
	}
	return fent_add(fd, kind, -1);
}

/* ---- payload that verifies itself: 8 bytes of tag, then bytes from it ---- */

#define TAG_MAGIC 0x4bULL

/*
 * The tag: 3 random bytes, the length (24 bits), a check byte, 0x4b.  The
 * length must tell apart every size a vec may have from inside the
 * payload buffer (it is 2 MiB and a page or two, then a PROT_NONE page):
 * with 16 bits, a vec whose size a mutation had flipped bit 17 of read
 * past its fill into an older one, and passed as a payload of the size
 * the tag named (12 and 131084 are the same mod 2^16).
 */
uint64_t payload_tag(size_t len)
{
	uint64_t t = (rnd() & 0xffffffULL) | ((uint64_t)(len & 0xffffff) << 24), sum = 0;
	int i;

	for (i = 0; i < 6; i++) {
		uint8_t b = (uint8_t)(t >> (i * 8));

		if (i < 3) {
			b = cleanbyte(b);
			if (b == TAG_MAGIC)
				b = 0x4c;
			t = (t & ~(0xffULL << (i * 8))) | ((uint64_t)b << (i * 8));
		}
		sum += b * (i + 3);
	}
	sum = cleanbyte((uint8_t)sum);
	if (sum == TAG_MAGIC)
		sum = 0x4d;
	return t | (sum << 48) | (TAG_MAGIC << 56);
}

static bool tag_valid(uint64_t t)
{
	uint64_t sum = 0;
	int i;

	if ((t >> 56) != TAG_MAGIC)
		return false;
	for (i = 0; i < 6; i++)
		sum += ((t >> (i * 8)) & 0xff) * (i + 3);
	sum = cleanbyte((uint8_t)sum);
	if (sum == TAG_MAGIC)
		sum = 0x4d;
	return ((t >> 48) & 0xff) == sum;
}

void payload_fill(uint8_t *p, size_t len, uint64_t tag)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = i == 0 ? tag : clean64(mix64(tag ^ i));
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &w, n);
	}
}

/* 0 when it is what a tag says, 1 when it is not, -1 when it has no tag;
 * @prefix: @len bytes are the start of a longer payload */
static int payload_verify_part(const uint8_t *p, size_t len, bool prefix);

int payload_verify(const uint8_t *p, size_t len)
{
	return payload_verify_part(p, len, false);
}

static int payload_verify_part(const uint8_t *p, size_t len, bool prefix)
{
	uint64_t tag, w;
	size_t i;

	if (len < 8)
		return -1;
	memcpy(&tag, p, 8);
	if (!tag_valid(tag))
		return -1;
	if (!prefix && ((tag >> 24) & 0xffffff) != (len & 0xffffff))
		return -1;	/* a mutated size: the sender did not fill all of it */
	if (prefix && ((tag >> 24) & 0xffffff) < len)
		return -1;
	for (i = 8; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		w = clean64(mix64(tag ^ i));
		if (memcmp(p + i, &w, n) != 0)
			return 1;
	}
	return 0;
}

/* ---- checks of what the kernel gave ---- */

static bool is_poison_word(uint64_t v)
{
	uint8_t b = (uint8_t)v;

	return is_poison_byte(b) && v == 0x0101010101010101ULL * b;
}

void check_clean(const uint8_t *p, size_t len, uint64_t base, const char *what)
{
	size_t i;

	__atomic_fetch_add(&shared->bytes_scanned, len, __ATOMIC_RELAXED);
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (is_poison_word(v)) {
			violation("%s: slab poison 0x%016" PRIx64 " at pool offset 0x%" PRIx64
				  " (uninitialised or freed kernel memory)", what, v, base + i);
			return;
		}
	}
}

bool in_pool(Conn *c, uint64_t off, uint64_t size)
{
	return off <= c->pool_size && size <= c->pool_size - off;
}

static bool kptr_checked_type(uint64_t type)
{
	switch (type) {
	case KDBUS_ITEM_PAYLOAD_OFF:
	case KDBUS_ITEM_BLOOM_PARAMETER:
	case KDBUS_ITEM_ID:
	case KDBUS_ITEM_TIMESTAMP:
	case KDBUS_ITEM_CREDS:
	case KDBUS_ITEM_PIDS:
	case KDBUS_ITEM_AUXGROUPS:
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		return true;
	}
	return false;
}

static bool known_out_type(uint64_t type)
{
	if (type >= KDBUS_ITEM_NEGOTIATE && type <= KDBUS_ITEM_DST_ID)
		return true;
	if (type >= KDBUS_ITEM_TIMESTAMP && type <= KDBUS_ITEM_CONN_DESCRIPTION)
		return true;
	if (type == KDBUS_ITEM_POLICY_ACCESS)
		return true;
	return type >= KDBUS_ITEM_NAME_ADD && type <= KDBUS_ITEM_REPLY_DEAD;
}

/* item framing of a list the kernel wrote at @p (@len bytes, pool offset @base) */
void check_items(Fent *e, const uint8_t *p, size_t len, uint64_t base, const char *what)
{
	size_t pos = 0;

	(void)e;
	while (pos < len) {
		const struct kdbus_item *it = (const void *)(p + pos);
		size_t j;

		if (len - pos < KDBUS_ITEM_HEADER_SIZE) {
			violation("%s: %zu bytes at the end of an item list (pool offset 0x%" PRIx64 ")", what,
				  len - pos, base + pos);
			return;
		}
		if (it->size < KDBUS_ITEM_HEADER_SIZE || it->size > len - pos) {
			violation("%s: item of size %" PRIu64 " (type 0x%" PRIx64 ") at pool offset 0x%" PRIx64
				  " with %zu bytes left", what, (uint64_t)it->size, (uint64_t)it->type, base + pos,
				  len - pos);
			return;
		}
		if (!known_out_type(it->type))
			violation("%s: item of unknown type 0x%" PRIx64 " at pool offset 0x%" PRIx64, what,
				  (uint64_t)it->type, base + pos);
		if (kptr_checked_type(it->type) || !known_out_type(it->type)) {
			for (j = 0; j + 8 <= it->size - KDBUS_ITEM_HEADER_SIZE; j += 8) {
				uint64_t v;

				memcpy(&v, it->data + j, 8);
				if (is_kptr(v)) {
					violation("%s: kernel address 0x%016" PRIx64 " in item type 0x%" PRIx64
						  " at pool offset 0x%" PRIx64, what, v, (uint64_t)it->type,
						  base + pos + 16 + j);
					break;
				}
			}
		}
		if (it->type == KDBUS_ITEM_ID_ADD || it->type == KDBUS_ITEM_ID_REMOVE)
			note_id(it->id_change.id);
		if (it->type == KDBUS_ITEM_NAME_ADD || it->type == KDBUS_ITEM_NAME_CHANGE) {
			note_id(it->name_change.new_id.id);
			note_id(it->name_change.old_id.id);
		}
		pos += KDBUS_ALIGN8(it->size);
	}
}

void slice_drop(Conn *c, uint64_t off)
{
	int i;

	for (i = 0; i < c->nsl; i++)
		if (c->sl[i].off == off) {
			c->sl[i] = c->sl[--c->nsl];
			return;
		}
}

/* a slice the kernel says is ours until FREE: it may not overlap another one */
void slice_add(Fent *e, uint64_t off, uint64_t size, const char *what)
{
	Conn *c = &e->c;
	int i;

	if (size == 0)
		size = 8;
	size = KDBUS_ALIGN8(size);
	if (c->tainted)
		return;
	for (i = 0; i < c->nsl; i++) {
		Slice *s = &c->sl[i];

		if (off < s->off + s->size && s->off < off + size) {
			violation("%s: pool slice [0x%" PRIx64 ", +0x%" PRIx64 ") overlaps [0x%" PRIx64 ", +0x%" PRIx64
				  ") that the kernel gave before (%s #%" PRIu64 ") and that was not freed", what, off, size,
				  s->off, s->size, op_names[s->op], s->k);
			c->tainted = true;
			return;
		}
	}
	if (c->nsl == MAX_SLICES) {
		c->sl[0] = c->sl[--c->nsl];	/* forgotten: still ours in the kernel */
	}
	c->sl[c->nsl].off = off;
	c->sl[c->nsl].size = size;
	c->sl[c->nsl].k = W.k;
	c->sl[c->nsl].op = W.op;
	c->nsl++;
}

static void take_fd(int fd, int kind, bool received)
{
	if (fd < 0)
		return;
	if (received && fcntl(fd, F_GETFD) < 0) {
		violation("fd %d in a received message is not open in the receiver", fd);
		return;
	}
	if (fent_count(K_RECEIVED) < 4 && chance(50))
		fent_add(fd, kind, -1);
	else
		close(fd);
}

void check_msg(Fent *e, uint64_t off, uint64_t size, bool peek, bool got_fds)
{
	Conn *c = &e->c;
	const struct kdbus_msg *m;
	const uint8_t *p;
	size_t pos;

	__atomic_fetch_add(&shared->msgs_checked, 1, __ATOMIC_RELAXED);
	if (!in_pool(c, off, size)) {
		violation("message at offset 0x%" PRIx64 " size 0x%" PRIx64 " is outside the pool (0x%" PRIx64 ")",
			  off, size, c->pool_size);
		return;
	}
	if (off % 8)
		violation("message at unaligned pool offset 0x%" PRIx64, off);
	if (size < sizeof(struct kdbus_msg)) {
		violation("message size %" PRIu64 " is less than a kdbus_msg", size);
		return;
	}
	if (!c->map || off + size > c->map_len || off % 8 || content_unreliable)
		return;
	p = c->map + off;
	m = (const void *)p;
	if (m->size != size)
		violation("message at 0x%" PRIx64 " says size %" PRIu64 ", RECV said %" PRIu64, off,
			  (uint64_t)m->size, size);
	if (is_kptr(m->src_id))
		violation("kernel address 0x%016" PRIx64 " as the src_id of a message", (uint64_t)m->src_id);
	note_id(m->src_id);
	check_clean(p, size, off, "message");
	check_items(e, p + sizeof(*m), size - sizeof(*m), off + sizeof(*m), "message");
	/* the parts of the items the generic check does not know */
	for (pos = sizeof(*m); pos + KDBUS_ITEM_HEADER_SIZE <= size;) {
		const struct kdbus_item *it = (const void *)(p + pos);
		size_t n, i;

		if (it->size < KDBUS_ITEM_HEADER_SIZE || it->size > size - pos)
			break;
		switch (it->type) {
		case KDBUS_ITEM_PAYLOAD_OFF:
			if (it->size < KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_vec) || it->vec.offset == ~0ULL)
				break;
			if (!in_pool(c, it->vec.offset, it->vec.size)) {
				violation("PAYLOAD_OFF [0x%" PRIx64 ", +0x%" PRIx64 ") is outside the pool",
					  (uint64_t)it->vec.offset, (uint64_t)it->vec.size);
				break;
			}
			if (it->vec.offset + it->vec.size <= c->map_len) {
				const uint8_t *d = c->map + it->vec.offset;

				if (payload_verify(d, it->vec.size) == 1)
					violation("payload at pool offset 0x%" PRIx64 " (size %" PRIu64
						  ") is not what the sender wrote", (uint64_t)it->vec.offset,
						  (uint64_t)it->vec.size);
				if (it->vec.offset % 8 == 0)
					check_clean(d, it->vec.size, it->vec.offset, "payload");
			}
			break;
		case KDBUS_ITEM_FDS:
			n = (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int);
			for (i = 0; i < n; i++)
				if (got_fds)
					take_fd(it->fds[i], K_RECEIVED, true);
			break;
		case KDBUS_ITEM_PAYLOAD_MEMFD:
			if (it->size < KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_memfd) || !got_fds ||
			    it->memfd.fd < 0)
				break;
			if (it->memfd.start == 0 && it->memfd.size >= 8) {
				uint8_t buf[64];
				size_t want = it->memfd.size < sizeof(buf) ? it->memfd.size : sizeof(buf);

				if (pread(it->memfd.fd, buf, want, 0) == (ssize_t)want &&
				    payload_verify_part(buf, want, true) == 1)
					violation("memfd of a received message does not hold what the sender wrote");
			}
			take_fd(it->memfd.fd, K_RECEIVED, true);
			break;
		}
		pos += KDBUS_ALIGN8(it->size);
	}
	if (!peek && (m->flags & KDBUS_MSG_EXPECT_REPLY) && m->src_id != 0) {
		int i = c->ncalls < MAX_CALLS ? c->ncalls++ : (int)rn(MAX_CALLS);

		c->calls[i].src = m->src_id;
		c->calls[i].cookie = m->cookie;
	}
}

/* a kdbus_info (CONN_INFO, BUS_CREATOR_INFO) or a list of them (LIST) */
void check_info(Fent *e, uint64_t off, uint64_t size, bool list, const char *what)
{
	Conn *c = &e->c;
	const uint8_t *p;
	size_t pos = 0;

	if (!in_pool(c, off, size ? size : 8)) {
		violation("%s: answer at offset 0x%" PRIx64 " size 0x%" PRIx64 " is outside the pool (0x%" PRIx64 ")",
			  what, off, size, c->pool_size);
		return;
	}
	if (off % 8)
		violation("%s: answer at unaligned pool offset 0x%" PRIx64, what, off);
	if (!c->map || off + size > c->map_len || off % 8 || content_unreliable)
		return;
	p = c->map + off;
	check_clean(p, size, off, what);
	while (pos < size) {
		const struct kdbus_info *info = (const void *)(p + pos);

		if (size - pos < sizeof(*info) || info->size < sizeof(*info) || info->size > size - pos) {
			violation("%s: kdbus_info at 0x%" PRIx64 " of size %" PRIu64 " with %" PRIu64 " bytes left",
				  what, off + pos, size - pos >= 8 ? (uint64_t)info->size : 0, size - pos);
			return;
		}
		if (!list && info->size != size)
			violation("%s: kdbus_info says size %" PRIu64 ", the command said %" PRIu64, what,
				  (uint64_t)info->size, size);
		if (is_kptr(info->id) || is_kptr(info->flags))
			violation("%s: kernel address in a kdbus_info header (id 0x%" PRIx64 " flags 0x%" PRIx64 ")",
				  what, (uint64_t)info->id, (uint64_t)info->flags);
		note_id(info->id);
		check_items(e, p + pos + sizeof(*info), info->size - sizeof(*info), off + pos + sizeof(*info), what);
		pos += KDBUS_ALIGN8(info->size);
		if (!list)
			break;
	}
}

/* ---- the command loop ---- */

static const struct {
	int op;
	unsigned weight;
} weights[] = {
	{ OP_SEND, 200 },	  { OP_REPLY, 40 },	 { OP_RECV, 160 },	  { OP_FREE, 90 },
	{ OP_HELLO, 60 },	  { OP_CONN_INFO, 45 },	 { OP_CREATOR_INFO, 15 }, { OP_LIST, 30 },
	{ OP_NAME_ACQUIRE, 50 },  { OP_NAME_RELEASE, 25 }, { OP_MATCH_ADD, 45 },  { OP_MATCH_REMOVE, 15 },
	{ OP_UPDATE, 20 },	  { OP_BYEBYE, 8 },	 { OP_BUS_MAKE, 20 },	  { OP_ENDPOINT, 8 },
	{ OP_RAW, 10 },		  { OP_POOL, 30 },	 { OP_OPEN, 35 },	  { OP_CLOSE, 20 },
	{ OP_FORK, 3 },		  { OP_USERNS, 2 },	 { OP_STALL, 2 },	  { OP_PROBE, 1 },
};

static uint64_t ops_mask = ~0ULL;	/* --ops */

static unsigned weight_of(unsigned i)
{
	return (ops_mask >> weights[i].op) & 1 ? weights[i].weight : 0;
}

void run_command(void)
{
	unsigned total = 0, x, i;

	for (i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
		total += weight_of(i);
	x = (unsigned)rn(total);
	for (i = 0; x >= weight_of(i); i++)
		x -= weight_of(i);
	W.op = weights[i].op;
	W.desc_len = 0;
	W.desc[0] = 0;
	switch (W.op) {
	case OP_BUS_MAKE: op_bus_make(); break;
	case OP_HELLO: op_hello(); break;
	case OP_BYEBYE: op_byebye(); break;
	case OP_UPDATE: op_update(); break;
	case OP_FREE: op_free(); break;
	case OP_CONN_INFO: op_conn_info(false); break;
	case OP_CREATOR_INFO: op_conn_info(true); break;
	case OP_LIST: op_list(); break;
	case OP_SEND: op_send(false); break;
	case OP_REPLY: op_send(true); break;
	case OP_RECV: op_recv(); break;
	case OP_NAME_ACQUIRE: op_name(true); break;
	case OP_NAME_RELEASE: op_name(false); break;
	case OP_MATCH_ADD: op_match_add(); break;
	case OP_MATCH_REMOVE: op_match_remove(); break;
	case OP_ENDPOINT: op_endpoint(); break;
	case OP_RAW: op_raw(); break;
	case OP_POOL: op_pool(); break;
	case OP_OPEN: op_open(); break;
	case OP_CLOSE: op_close(); break;
	case OP_FORK: op_fork(); break;
	case OP_USERNS: op_userns(); break;
	case OP_STALL: op_stall(); break;
	case OP_PROBE: op_probe(); break;
	}
	ops_after();
}

/* the commands describe themselves (dlog) as they are generated; the line
 * goes out before the ioctl, from the op itself */
void log_now(void)
{
	log_command();
}

void worker_cleanup_maps(void)
{
	int i;

	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == K_CONN)
			conn_unmap(&W.f[i].c);
}

/* ---- options ---- */

typedef struct Range {
	uint64_t lo, hi;
} Range;

static Range *only, *skip;
static size_t n_only, n_skip;

static int parse_ranges(const char *s, Range **ret, size_t *n)
{
	char *copy = strdup(s), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		Range r;
		char *dash = strchr(tok, '-');

		r.lo = strtoull(tok, NULL, 0);
		r.hi = dash ? strtoull(dash + 1, NULL, 0) : r.lo;
		*ret = realloc(*ret, (*n + 1) * sizeof(Range));
		(*ret)[(*n)++] = r;
	}
	free(copy);
	return 0;
}

static bool in_ranges(const Range *r, size_t n, uint64_t k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (k >= r[i].lo && k <= r[i].hi)
			return true;
	return false;
}

static bool selected(uint64_t k)
{
	if (n_only && !in_ranges(only, n_only, k))
		return false;
	return !in_ranges(skip, n_skip, k);
}

static int parse_avoid(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	size_t i;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		if (strcmp(tok, "known") == 0) {
			for (i = 0; i < sizeof(avoid_classes) / sizeof(avoid_classes[0]); i++)
				avoid |= avoid_classes[i].bit;
			continue;
		}
		for (i = 0; i < sizeof(avoid_classes) / sizeof(avoid_classes[0]); i++)
			if (strcmp(tok, avoid_classes[i].name) == 0) {
				avoid |= avoid_classes[i].bit;
				found = true;
			}
		if (!found) {
			fprintf(stderr, "kfuzz: unknown class '%s' for --avoid\n", tok);
			free(copy);
			return -1;
		}
	}
	free(copy);
	return 0;
}

static const char *const op_short[_OP_MAX] = {
	[OP_BUS_MAKE] = "bus_make", [OP_HELLO] = "hello", [OP_BYEBYE] = "byebye", [OP_UPDATE] = "update",
	[OP_FREE] = "free", [OP_CONN_INFO] = "conn_info", [OP_CREATOR_INFO] = "creator_info", [OP_LIST] = "list",
	[OP_SEND] = "send", [OP_REPLY] = "reply", [OP_RECV] = "recv", [OP_NAME_ACQUIRE] = "name_acquire",
	[OP_NAME_RELEASE] = "name_release", [OP_MATCH_ADD] = "match_add", [OP_MATCH_REMOVE] = "match_remove",
	[OP_ENDPOINT] = "endpoint", [OP_RAW] = "raw", [OP_POOL] = "pool", [OP_OPEN] = "open", [OP_CLOSE] = "close",
	[OP_FORK] = "fork", [OP_USERNS] = "userns", [OP_STALL] = "stall", [OP_PROBE] = "probe",
};

static int parse_ops(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int op;

	ops_mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (op = 0; op < _OP_MAX; op++)
			if (strcmp(tok, op_short[op]) == 0)
				break;
		if (op == _OP_MAX) {
			fprintf(stderr, "kfuzz: unknown operation '%s' for --ops\n", tok);
			free(copy);
			return -1;
		}
		ops_mask |= 1ULL << op;
	}
	free(copy);
	return 0;
}

static void usage(void)
{
	size_t i;

	printf("usage: kfuzz [options]\n"
	       "  --seed S          the seed (decimal or 0x hex; default: from the clock)\n"
	       "  --seconds N       stop after N seconds (default 60)\n"
	       "  --procs N         worker processes (default 4; 0, 3, 6... root, the others uid 1000/1001)\n"
	       "  --log FILE        write every command to FILE before it runs (e.g. /dev/ttyS1)\n"
	       "  --log-sync        tcdrain() the log after every line (FILE is a tty)\n"
	       "  --replay W        run only worker W's commands (with the seed and --procs of the run)\n"
	       "  --count N         stop every worker after N commands\n"
	       "  --only LIST       run only these command numbers (1,5,9-12)\n"
	       "  --skip LIST       leave these command numbers out\n"
	       "  --repeat-last N   then run the last command N times more (a race)\n"
	       "  --ops LIST        only these operations (send,recv,hello,stall,...; the names of ops.c)\n"
	       "  --avoid CLASS,..  leave out a class of input (\"known\": all of them):\n");
	for (i = 0; i < sizeof(avoid_classes) / sizeof(avoid_classes[0]); i++)
		printf("      %-14s %s\n", avoid_classes[i].name, avoid_classes[i].what);
	printf("  --kdbusfs DIR     where kdbusfs is mounted (default /sys/fs/kdbus)\n"
	       "  --quiet           no figures per operation\n");
}

/* ---- the supervisor's buses ---- */

static int sup_ctl[8];
static int n_sup_ctl;

static int make_bus(const char *name, uint64_t flags, uint64_t bloom_size, uint64_t n_hash, uint64_t attach_req)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct kdbus_cmd *cmd = (void *)buf;
	struct kdbus_item *it;
	char path[200];
	size_t len = strlen(name) + 1;
	int fd;

	memset(buf, 0, sizeof(buf));
	it = cmd->items;
	it->type = KDBUS_ITEM_MAKE_NAME;
	it->size = KDBUS_ITEM_HEADER_SIZE + len;
	memcpy(it->str, name, len);
	it = KDBUS_ITEM_NEXT(it);
	it->type = KDBUS_ITEM_BLOOM_PARAMETER;
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter);
	it->bloom_parameter.size = bloom_size;
	it->bloom_parameter.n_hash = n_hash;
	it = KDBUS_ITEM_NEXT(it);
	if (attach_req) {
		it->type = KDBUS_ITEM_ATTACH_FLAGS_SEND;
		it->size = KDBUS_ITEM_HEADER_SIZE + 8;
		it->data64[0] = attach_req;
		it = KDBUS_ITEM_NEXT(it);
	}
	cmd->size = (uint8_t *)it - buf;
	cmd->flags = flags;
	snprintf(path, sizeof(path), "%s/control", kdbusfs);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd) < 0) {
		fprintf(stderr, "kfuzz: BUS_MAKE %s: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	sup_ctl[n_sup_ctl++] = fd;
	snprintf(W.buses[W.nbuses].name, sizeof(W.buses[0].name), "%s", name);
	snprintf(W.buses[W.nbuses].path, sizeof(W.buses[0].path), "%s/%s/bus", kdbusfs, name);
	W.buses[W.nbuses].alive = true;
	W.nbuses++;
	return 0;
}

/* ---- workers ---- */

static uint64_t seed, count_limit, repeat_last;
static double seconds = 60;
static uint64_t deadline_ns;

static void drop_privileges(uid_t uid)
{
	gid_t gid = uid;

	if (uid == 0)
		return;
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		perror("kfuzz: cannot drop privileges");
		_exit(3);
	}
	/* as any process of that user: its /proc/self (uid_map) is its own */
	prctl(PR_SET_DUMPABLE, 1);
}

static void bootstrap(void)
{
	int b, i;

	/* a few ordinary connections to start from: HELLOs of the stream */
	for (b = 0; b < W.nbuses && b < 2; b++)
		for (i = 0; i < 2; i++) {
			int e = open_bus(b);

			(void)e;
		}
}

static void worker_main(int idx, int procs)
{
	struct sigaction sa;
	char name[16];
	int i;

	(void)procs;
	W.idx = idx;
	seed_of_run = seed;
	W.seed = mix64(seed ^ mix64((uint64_t)idx + 1));
	W.uid = (idx % 3 == 0) ? 0 : (idx % 3 == 1 ? 1000 : 1001);
	for (i = 0; i < n_sup_ctl; i++)
		close(sup_ctl[i]);
	snprintf(name, sizeof(name), "kfuzz-w%d", idx);
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	arenas_init();
	ops_init();
	if (geteuid() == 0)
		drop_privileges(W.uid);
	else
		W.uid = geteuid();
	main_thread = pthread_self();
	if (pthread_create(&helper_thread, NULL, helper_main, NULL) == 0)
		helper_running = true;
	R.s = W.seed;
	bootstrap();
	for (W.k = 0;; W.k++) {
		if (count_limit && W.k >= count_limit)
			break;
		if (deadline_ns && now_ns() >= deadline_ns)
			break;
		if (!selected(W.k))
			continue;
		R.s = mix64(W.seed ^ mix64(W.k));
		shared->last_cmd[idx] = W.k;
		run_command();
		shared->commands[idx]++;
	}
	if (repeat_last && W.k > 0) {
		/* a race again and again: the last command, with the same choices */
		uint64_t j, last = W.k - 1;

		for (j = 0; j < repeat_last; j++) {
			if (deadline_ns && now_ns() >= deadline_ns)
				break;
			W.k = last;
			R.s = mix64(W.seed ^ mix64(W.k));
			run_command();
			shared->commands[idx]++;
		}
	}
	_exit(0);
}

/* a child of fork (op_fork): runs @n commands of its own stream on what it inherited */
void fork_child_run(unsigned n, uint64_t fseed)
{
	unsigned j;
	uint64_t parent_k = W.k;

	W.child = true;
	helper_running = false;
	for (j = 0; j < n; j++) {
		R.s = mix64(fseed ^ mix64(j));
		W.k = parent_k * 1000 + j;
		run_command();
	}
	_exit(0);
}

/* ---- figures ---- */

static const char *errname(int e)
{
	static char buf[16];

	switch (e) {
#define E(x) case x: return #x
	E(EPERM); E(ENOENT); E(ESRCH); E(EINTR); E(EIO); E(ENXIO); E(E2BIG); E(EBADF); E(EAGAIN);
	E(ENOMEM); E(EACCES); E(EFAULT); E(EBUSY); E(EEXIST); E(ENODEV); E(EINVAL); E(ENFILE);
	E(EMFILE); E(ENOTTY); E(ETXTBSY); E(EFBIG); E(ENOSPC); E(EPIPE); E(EDOM); E(ERANGE);
	E(ENAMETOOLONG); E(ENOMSG); E(EBADFD); E(EBADMSG); E(EBADSLT); E(ENOTUNIQ); E(EMSGSIZE);
	E(EOPNOTSUPP); E(EADDRINUSE); E(EADDRNOTAVAIL); E(ECONNRESET); E(ENOBUFS); E(ESHUTDOWN);
	E(ETIMEDOUT); E(ECONNREFUSED); E(EALREADY); E(EDESTADDRREQ); E(EREMCHG); E(ECOMM);
	E(EXFULL); E(EMLINK); E(ECANCELED); E(EMEDIUMTYPE); E(EREMOTEIO); E(ENOTCONN); E(ELOOP);
#undef E
	}
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static void print_figures(int procs, double elapsed, int stuck, int died)
{
	uint64_t total = 0, errs[MAX_ERRNO] = { 0 }, issued_total = 0;
	int op, e, w;

	for (w = 0; w < procs && w < 64; w++) {
		printf("# worker %d: uid %d, seed 0x%016" PRIx64 ", %" PRIu64 " commands\n", w,
		       (w % 3 == 0) ? 0 : (w % 3 == 1 ? 1000 : 1001), mix64(seed ^ mix64((uint64_t)w + 1)),
		       shared->commands[w]);
		total += shared->commands[w];
	}
	if (!quiet)
		printf("# %-22s %9s %9s %9s  errors by errno\n", "operation", "ioctls", "ok", "max-us");
	for (op = 0; op < _OP_MAX; op++) {
		char line[1024];
		size_t n = 0;

		issued_total += shared->issued[op];
		for (e = 0; e < MAX_ERRNO; e++) {
			errs[e] += shared->err[op][e];
			if (shared->err[op][e] && n < sizeof(line) - 40)
				n += (size_t)snprintf(line + n, sizeof(line) - n, " %s:%" PRIu64, errname(e),
						      shared->err[op][e]);
		}
		line[n] = 0;
		if (!quiet)
			printf("# %-22s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %s\n", op_names[op], shared->issued[op],
			       shared->ok[op], shared->lat_max_us[op], line);
	}
	printf("# errors by errno:");
	for (e = 0; e < MAX_ERRNO; e++)
		if (errs[e])
			printf(" %s:%" PRIu64, errname(e), errs[e]);
	printf("\n# races %" PRIu64 ", forks %" PRIu64 ", messages checked %" PRIu64 ", pool scans %" PRIu64
	       ", bytes scanned %" PRIu64 ", commands interrupted after 10 s %" PRIu64 "\n",
	       shared->races, shared->forks, shared->msgs_checked, shared->pool_scans, shared->bytes_scanned,
	       shared->slow);
	for (e = 0; e < MAX_VIOL_TEXT && shared->viol_fmt[e]; e++)
		printf("# violations: %" PRIu64 " like %s\n", shared->viol_count[e], shared->viol[e]);
	printf("kfuzz: seed=0x%016" PRIx64 " procs=%d commands=%" PRIu64 " ioctls=%" PRIu64
	       " time=%.1fs violations=%" PRIu64 " stuck=%d died=%d version=%s%s\n",
	       seed, procs, total, issued_total, elapsed, shared->violations, stuck, died, KFUZZ_VERSION,
	       avoid ? " (some classes avoided)" : "");
}

int main(int argc, char **argv)
{
	int procs = 4, replay = -1, i, stuck = 0, died = 0;
	pid_t pids[64];
	uint64_t seen_cmds[64] = { 0 }, seen_at[64] = { 0 };
	bool have_seed = false, have_seconds = false;
	const char *logpath = NULL;
	char path[200];
	uint64_t t0;
	struct stat st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

#define NEEDV() do { if (!v) { usage(); return 2; } i++; } while (0)
		if (strcmp(a, "--seed") == 0) {
			NEEDV();
			seed = strtoull(v, NULL, 0);
			have_seed = true;
		} else if (strcmp(a, "--seconds") == 0) {
			NEEDV();
			seconds = strtod(v, NULL);
			have_seconds = true;
		} else if (strcmp(a, "--procs") == 0) {
			NEEDV();
			procs = atoi(v);
		} else if (strcmp(a, "--log") == 0) {
			NEEDV();
			logpath = v;
		} else if (strcmp(a, "--log-sync") == 0) {
			log_sync = true;
		} else if (strcmp(a, "--replay") == 0) {
			NEEDV();
			replay = atoi(v);
		} else if (strcmp(a, "--count") == 0) {
			NEEDV();
			count_limit = strtoull(v, NULL, 0);
		} else if (strcmp(a, "--repeat-last") == 0) {
			NEEDV();
			repeat_last = strtoull(v, NULL, 0);
		} else if (strcmp(a, "--only") == 0) {
			NEEDV();
			parse_ranges(v, &only, &n_only);
		} else if (strcmp(a, "--skip") == 0) {
			NEEDV();
			parse_ranges(v, &skip, &n_skip);
		} else if (strcmp(a, "--ops") == 0) {
			NEEDV();
			if (parse_ops(v) < 0)
				return 2;
		} else if (strcmp(a, "--avoid") == 0) {
			NEEDV();
			if (parse_avoid(v) < 0)
				return 2;
		} else if (strcmp(a, "--kdbusfs") == 0) {
			NEEDV();
			kdbusfs = v;
		} else if (strcmp(a, "--quiet") == 0) {
			quiet = true;
		} else {
			usage();
			return strcmp(a, "--help") == 0 ? 0 : 2;
		}
#undef NEEDV
	}
	if (procs < 1 || procs > 64 || replay >= procs) {
		fprintf(stderr, "kfuzz: --procs 1..64, --replay below --procs\n");
		return 2;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid());
	}
	if (replay >= 0 && !have_seconds)
		seconds = 0;
	if (n_only) {
		/* nothing to do after the last command asked for */
		uint64_t last = 0;
		size_t k;

		for (k = 0; k < n_only; k++)
			if (only[k].hi > last)
				last = only[k].hi;
		if (!count_limit || count_limit > last + 1)
			count_limit = last + 1;
	}
	printf("# kfuzz %s: seed 0x%016" PRIx64 ", %d workers, %.0f s%s%s\n", KFUZZ_VERSION, seed, procs, seconds,
	       replay >= 0 ? ", replay of one worker" : "", avoid ? ", some classes avoided" : "");
	snprintf(path, sizeof(path), "%s/control", kdbusfs);
	if (stat(path, &st) < 0) {
		printf("# SKIP no kdbusfs at %s\n", kdbusfs);
		return 77;
	}
	if (logpath) {
		logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY | O_CLOEXEC, 0644);
		if (logfd < 0)
			fprintf(stderr, "kfuzz: cannot open %s: %s\n", logpath, strerror(errno));
		else if (isatty(logfd)) {
			struct termios t;

			if (tcgetattr(logfd, &t) == 0) {
				cfmakeraw(&t);
				t.c_oflag |= OPOST | ONLCR;
				cfsetospeed(&t, B115200);
				tcsetattr(logfd, TCSANOW, &t);
			}
		}
	}
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("kfuzz: mmap");
		return 2;
	}
	memset(shared, 0, sizeof(*shared));

	/* the shared buses: the names carry the seed, so runs do not collide */
	{
		uid_t me = geteuid();
		char n[80];

		snprintf(n, sizeof(n), "%u-kfuzz-%06" PRIx64 "-a", me, seed & 0xffffff);
		make_bus(n, KDBUS_MAKE_ACCESS_WORLD, 64, 8, 0);
		snprintf(n, sizeof(n), "%u-kfuzz-%06" PRIx64 "-b", me, seed & 0xffffff);
		make_bus(n, KDBUS_MAKE_ACCESS_WORLD, 8, 1, 0);
		snprintf(n, sizeof(n), "%u-kfuzz-%06" PRIx64 "-c", me, seed & 0xffffff);
		make_bus(n, KDBUS_MAKE_ACCESS_WORLD, 256, 3, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS);
		snprintf(n, sizeof(n), "%u-kfuzz-%06" PRIx64 "-d", me, seed & 0xffffff);
		make_bus(n, 0, 64, 8, 0);
		if (W.nbuses == 0) {
			printf("not ok - kfuzz: cannot make a bus\n");
			return 1;
		}
	}

	t0 = now_ns();
	deadline_ns = seconds > 0 ? t0 + (uint64_t)(seconds * 1e9) : 0;
	for (i = 0; i < procs; i++) {
		if (replay >= 0 && i != replay) {
			pids[i] = 0;
			continue;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("kfuzz: fork");
			pids[i] = 0;
			continue;
		}
		if (pids[i] == 0)
			worker_main(i, procs);
	}
	/* wait; a command that takes 10 s gets SIGUSR1 (EINTR); a worker still
	 * there 20 s after the deadline is stuck in the kernel */
	for (;;) {
		int left = 0, status;

		for (i = 0; i < procs; i++) {
			uint64_t t = now_ns();

			if (pids[i] <= 0)
				continue;
			if (shared->commands[i] != seen_cmds[i]) {
				seen_cmds[i] = shared->commands[i];
				seen_at[i] = t;
			} else if (seen_at[i] && t - seen_at[i] > 10000000000ULL) {
				printf("# worker %d: command %" PRIu64 " has taken 10 s (SIGUSR1)\n", i,
				       shared->last_cmd[i]);
				kill(pids[i], SIGUSR1);
				shared->slow++;
				seen_at[i] = t;
			}
		}

		for (i = 0; i < procs; i++) {
			pid_t r;

			if (pids[i] <= 0)
				continue;
			r = waitpid(pids[i], &status, WNOHANG);
			if (r == pids[i]) {
				if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
					printf("# worker %d (last command %" PRIu64 ") ended with %s %d\n", i,
					       shared->last_cmd[i], WIFSIGNALED(status) ? "signal" : "status",
					       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
					died++;
				}
				pids[i] = 0;
			} else {
				left++;
			}
		}
		if (!left)
			break;
		if (deadline_ns && now_ns() > deadline_ns + 20000000000ULL) {
			for (i = 0; i < procs; i++)
				if (pids[i] > 0) {
					printf("# worker %d is stuck at command %" PRIu64 " (killed)\n", i,
					       shared->last_cmd[i]);
					kill(pids[i], SIGKILL);
					stuck++;
				}
			sleep_us(2000000);
			for (i = 0; i < procs; i++)
				if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i])
					pids[i] = 0;
			break;
		}
		sleep_us(50000);
	}
	for (i = 0; i < n_sup_ctl; i++)
		close(sup_ctl[i]);
	print_figures(procs, (double)(now_ns() - t0) / 1e9, stuck, died);
	return (shared->violations || stuck || died) ? 1 : 0;
}
