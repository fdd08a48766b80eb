/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * kfuzz.h - the kdbus.ko ioctl fuzzer (tests/kfuzz): state shared by the
 * infrastructure (kfuzz.c: workers, helper thread, checks, figures) and the
 * commands (ops.c: one generator per ioctl).
 *
 * Every worker process draws each command from its own stream: command k of
 * worker w uses a generator seeded with mix(mix(seed, w), k), so the choices
 * of one command do not depend on how many random numbers the ones before it
 * used, and a command can be left out (--only) without changing the others.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdbus/kdbus.h"

/* ---- the random stream ---- */

typedef struct Rng {
	uint64_t s;
} Rng;

uint64_t mix64(uint64_t z);
uint64_t rnd(void);			/* from the current command's stream */
uint64_t rn(uint64_t n);		/* 0 .. n-1 */
bool chance(unsigned pct);		/* true with pct percent */
int64_t rrange(int64_t lo, int64_t hi);	/* lo .. hi */
uint64_t clean64(uint64_t v);		/* no poison byte, not a kernel address */
uint64_t rclean(void);			/* a random clean u64 */
uint8_t cleanbyte(uint8_t b);

/* ---- operations and their figures ---- */

enum {
	OP_BUS_MAKE,
	OP_HELLO,
	OP_BYEBYE,
	OP_UPDATE,
	OP_FREE,
	OP_CONN_INFO,
	OP_CREATOR_INFO,
	OP_LIST,
	OP_SEND,
	OP_REPLY,
	OP_RECV,
	OP_NAME_ACQUIRE,
	OP_NAME_RELEASE,
	OP_MATCH_ADD,
	OP_MATCH_REMOVE,
	OP_ENDPOINT,
	OP_RAW,
	OP_POOL,
	OP_OPEN,
	OP_CLOSE,
	OP_FORK,
	OP_USERNS,
	OP_STALL,
	OP_PROBE,
	_OP_MAX,
};

extern const char *const op_names[_OP_MAX];

#define MAX_ERRNO 140
#define MAX_VIOL_TEXT 24

typedef struct Shared {
	uint64_t issued[_OP_MAX];
	uint64_t ok[_OP_MAX];
	uint64_t err[_OP_MAX][MAX_ERRNO];
	uint64_t lat_max_us[_OP_MAX];
	uint64_t commands[64];			/* per worker */
	uint64_t last_cmd[64];			/* per worker: the command in flight */
	uint64_t forks, races, violations, pool_scans, msgs_checked, bytes_scanned, slow;
	uint64_t viol_fmt[MAX_VIOL_TEXT];	/* the classes: the check's format string */
	uint64_t viol_count[MAX_VIOL_TEXT];
	char viol[MAX_VIOL_TEXT][400];		/* the first of each class */
} Shared;

extern Shared *shared;

/* ---- classes of input that --avoid can leave out (each a known bug) ---- */

enum {
	AVOID_MAKE_ATTACH = 1 << 0,	/* BUS_MAKE with unknown ATTACH_FLAGS_SEND bits */
	AVOID_SIZE_RACE = 1 << 1,	/* a second thread changing a command's size */
	AVOID_UNICAST_BLOOM = 1 << 2,	/* signals with a bloom filter of the wrong size */
	AVOID_INFO_EFAULT = 1 << 3,	/* info/list commands whose answer cannot be written */
	AVOID_RLIMIT = 1 << 4,		/* SEND under a small RLIMIT_FSIZE */
	AVOID_USERNS = 1 << 5,		/* BUS_MAKE from a user namespace */
	AVOID_URING = 1 << 6,		/* io_uring fds passed in FDS */
	AVOID_FREE_RACE = 1 << 7,	/* FREE of guessed offsets during an info command */
	AVOID_UFFD = 1 << 8,		/* user copies stalled with userfaultfd (root) */
	AVOID_SIGNAL_CALL = 1 << 9,	/* messages with both SIGNAL and EXPECT_REPLY */
	AVOID_QUOTA = 1 << 10,		/* one user filling another user's pool */
};

extern unsigned avoid;
extern bool content_unreliable;

/* ---- the worker's objects ---- */

enum {
	K_NONE,
	K_CONN,		/* a bus file after HELLO */
	K_EP,		/* a bus file, no HELLO yet (or a failed one) */
	K_CTL,		/* a control file */
	K_MEMFD_SEALED,
	K_MEMFD,
	K_SOCK,
	K_PIPE,
	K_EVENTFD,
	K_NULL,
	K_RECEIVED,	/* an fd that came with a message */
	K_URING,
};

#define MAX_FDS 40
#define MAX_BUSES 12
#define MAX_SLICES 48
#define MAX_CALLS 16
#define MAX_IDS 32

typedef struct Slice {
	uint64_t off, size;
	uint64_t k;			/* the command that got it */
	int op;
} Slice;

typedef struct Conn {
	uint64_t id, flags, pool_size, bloom_size;
	int bus;
	const uint8_t *map;		/* the pool, read-only, or NULL */
	size_t map_len;
	Slice sl[MAX_SLICES];		/* answers that are ours until FREE */
	int nsl;
	struct {
		uint64_t src, cookie;
	} calls[MAX_CALLS];		/* calls received that want an answer */
	int ncalls;
	uint64_t match_cookies[8];
	int nmc;
	bool tainted;			/* a concurrent FREE: no slice bookkeeping */
	bool dead;			/* ECONNRESET seen: BYEBYE, or its bus is gone */
} Conn;

typedef struct Fent {
	int fd;
	int kind;
	int bus;			/* K_EP, K_CONN: the bus; K_CTL: the bus it made, or -1 */
	Conn c;				/* K_CONN */
} Fent;

typedef struct Bus {
	char name[128];
	char path[200];
	bool alive;
	bool ours;			/* made by this worker (its control fd is a Fent) */
} Bus;

typedef struct Worker {
	int idx;
	uid_t uid;
	uint64_t seed;
	uint64_t k;			/* the current command's number */
	bool child;			/* a forked child with inherited fds */
	Fent f[MAX_FDS];
	Bus buses[MAX_BUSES];
	int nbuses;
	uint64_t ids[MAX_IDS];		/* connection ids seen */
	int nids;
	char desc[512];			/* the current command, for the log */
	size_t desc_len;
	int op;
} Worker;

extern Worker W;
extern const char *kdbusfs;

/* ---- infrastructure (kfuzz.c) ---- */

void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note_id(uint64_t id);
uint64_t pick_id(void);
uint64_t now_ns(void);

/* command buffers: placement of an ioctl argument */
enum {
	PL_NORMAL,	/* in the arena, with a canary after it */
	PL_GUARD,	/* its end touches a PROT_NONE page */
	PL_RO,		/* on a read-only page */
	PL_NULL,
	PL_UNMAPPED,
	PL_KERNEL,
	PL_MISALIGNED,
};

typedef struct Placed {
	int mode;
	uint8_t *p;		/* where it is (for PL_NORMAL, PL_GUARD, PL_RO) */
	size_t len;
	size_t canary_at;	/* PL_NORMAL: offset of the canary from p */
	unsigned long arg;	/* what the ioctl gets */
} Placed;

int pick_placement(unsigned weird_pct);
extern size_t place_extent;	/* PL_NORMAL: the canary goes after this many bytes at least */
void place(Placed *pl, int arena, const void *buf, size_t len, int mode);
bool placed_intact(const Placed *pl, const char *what);

/* the helper thread: something that happens while the next ioctl runs */
enum {
	ACT_NONE,
	ACT_CLOSE,	/* close(fd) after delay */
	ACT_FLIP,	/* flip *addr between v1 and v2 until the ioctl returns */
	ACT_SIGNAL,	/* SIGUSR1 to the main thread after delay */
	ACT_CANCEL,	/* write the eventfd after delay */
	ACT_FREE,	/* FREE guessed offsets on fd until the ioctl returns */
	ACT_PROTECT,	/* mprotect(addr page, NONE) after delay, then back */
	ACT_STALL,	/* wait for a userfaultfd fault, act, then let it fail or resolve */
};

typedef struct Action {
	int type;
	int fd;
	volatile uint64_t *addr;
	uint64_t v1, v2;
	unsigned delay_us;
	uint64_t pool_size;
	int nfreed;
	uint64_t freed[16];
	/* ACT_STALL */
	int uffd, fd2, mode, go_fd;
	void *page, *srcpage;
	unsigned long send_arg;
	int stalled, sent;
	uint64_t stall_ns;
} Action;

void act_post(const Action *a);
void act_finish(Action *out);

/* an ioctl with its figures */
int kio(int fd, unsigned long req, unsigned long arg);

/* checks of what the kernel gave */
void check_clean(const uint8_t *p, size_t len, uint64_t base, const char *what);
void check_msg(Fent *e, uint64_t off, uint64_t size, bool peek, bool got_fds);
void check_info(Fent *e, uint64_t off, uint64_t size, bool list, const char *what);
void check_items(Fent *e, const uint8_t *p, size_t len, uint64_t base, const char *what);
void slice_add(Fent *e, uint64_t off, uint64_t size, const char *what);
void slice_drop(Conn *c, uint64_t off);
bool in_pool(Conn *c, uint64_t off, uint64_t size);

/* fds */
int fent_add(int fd, int kind, int bus);
void fent_close(int i);
int fent_pick(int kind);		/* a random entry of @kind, or -1 */
int fent_pick_any(void);
int fent_count(int kind);
int open_bus(int bus);
int make_misc_fd(int kind);

/* payload that verifies itself */
uint64_t payload_tag(size_t len);
void payload_fill(uint8_t *p, size_t len, uint64_t tag);
int payload_verify(const uint8_t *p, size_t len);

/* a random ioctl command of the dispatcher */
void run_command(void);
void log_now(void);
void fork_child_run(unsigned n, uint64_t fseed);
void ops_after(void);
void worker_cleanup_maps(void);

/* ops.c */
void op_bus_make(void);
void op_hello(void);
void op_byebye(void);
void op_update(void);
void op_free(void);
void op_conn_info(bool creator);
void op_list(void);
void op_send(bool reply);
void op_recv(void);
void op_name(bool acquire);
void op_match_add(void);
void op_match_remove(void);
void op_endpoint(void);
void op_raw(void);
void op_pool(void);
void op_open(void);
void op_close(void);
void op_fork(void);
void op_userns(void);
void op_stall(void);
void op_probe(void);
void ops_init(void);
