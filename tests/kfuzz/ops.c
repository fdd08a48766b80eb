// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - kfuzz's commands: one generator per ioctl of kdbus.ko.  Each
 * builds a mostly valid command from the worker's state (its connections,
 * the ids and names it has seen, the calls it owes an answer), mutates it
 * now and then, places it (kfuzz.c: place()) and checks the answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <poll.h>
#include <linux/userfaultfd.h>
#include <time.h>
#include <unistd.h>

#include "kfuzz.h"

#define PAGE 4096
#define CMD_CAP (36 * 1024)
#define MSG_CAP (12 * 1024)
#define PAYLOAD_SIZE (2 * 1024 * 1024 + 2 * PAGE)
#define REPLY_UNTOUCHED 0x1717171717171717ULL	/* in kdbus_cmd_send.reply until the kernel answers */

static uint8_t B[CMD_CAP + 64] __attribute__((aligned(8)));	/* the command */
static uint8_t B0[CMD_CAP + 64] __attribute__((aligned(8)));	/* what was sent */
static uint8_t M[MSG_CAP + 64] __attribute__((aligned(8)));	/* SEND's message */
static size_t bl, ml;
static uint8_t *payload;	/* PAYLOAD_SIZE bytes, then a PROT_NONE page */
static int pending_close = -1;	/* a Fent the helper closed during the last ioctl */
bool content_unreliable;		/* a concurrent FREE may have reused the answer's slice */
static bool last_flip;			/* the last command's size was flipped meanwhile */

void ops_init(void)
{
	payload = mmap(NULL, PAYLOAD_SIZE + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (payload == MAP_FAILED) {
		perror("kfuzz: mmap");
		_exit(2);
	}
	mprotect(payload + PAYLOAD_SIZE, PAGE, PROT_NONE);
}

/* after each command: the helper closed an fd that was ours */
void ops_after(void)
{
	if (pending_close >= 0) {
		Fent *e = &W.f[pending_close];

		if (e->kind == K_CONN && e->c.map)
			munmap((void *)e->c.map, e->c.map_len);
		e->kind = K_NONE;
		pending_close = -1;
	}
}

/* ---- names ---- */

static const char *const good_names[] = {
	"org.kfuzz.a", "org.kfuzz.b", "org.kfuzz.c", "org.kfuzz.d", "org.kfuzz.a.b",
	"com.example.Service", "net.kfuzz.x1", "org.kfuzz.activatable", "org.kfuzz.e_f-g",
};
static const char *const bad_names[] = {
	"", "a", "1a.b", "a..b", ".a.b", "a.b.", "a b.c", "org.kfuzz.*", "org.*", "a.1b", "é.b", ":1.42",
};

static const char *pick_name(void)
{
	static char longname[300];

	if (chance(88))
		return good_names[rn(sizeof(good_names) / sizeof(good_names[0]))];
	if (chance(15)) {
		size_t n = 250 + rn(20), i;

		for (i = 0; i < n; i++)
			longname[i] = (i % 10 == 9) ? '.' : 'a' + (char)(i % 7);
		longname[n] = 0;
		return longname;
	}
	return bad_names[rn(sizeof(bad_names) / sizeof(bad_names[0]))];
}

/* ---- item lists ---- */

static struct kdbus_item *item_add(uint8_t *buf, size_t *len, size_t cap, uint64_t type, const void *data,
				   size_t dlen)
{
	size_t off = KDBUS_ALIGN8(*len);
	struct kdbus_item *it;

	if (off + KDBUS_ITEM_HEADER_SIZE + dlen > cap)
		return NULL;
	memset(buf + *len, 0, off - *len);
	it = (void *)(buf + off);
	it->size = KDBUS_ITEM_HEADER_SIZE + dlen;
	it->type = type;
	if (data)
		memcpy(it->data, data, dlen);
	else
		memset(it->data, 0, dlen);
	*len = off + KDBUS_ITEM_HEADER_SIZE + dlen;
	return it;
}

static struct kdbus_item *item_str(uint8_t *buf, size_t *len, size_t cap, uint64_t type, const char *s)
{
	size_t n = strlen(s);

	if (chance(3))
		return item_add(buf, len, cap, type, s, n);	/* without its NUL */
	return item_add(buf, len, cap, type, s, n + 1);
}

static void fill_clean(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = cleanbyte((uint8_t)rnd());
}

static const uint64_t all_types[] = {
	0, KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_PAYLOAD_VEC, KDBUS_ITEM_PAYLOAD_OFF, KDBUS_ITEM_PAYLOAD_MEMFD,
	KDBUS_ITEM_FDS, KDBUS_ITEM_CANCEL_FD, KDBUS_ITEM_BLOOM_PARAMETER, KDBUS_ITEM_BLOOM_FILTER,
	KDBUS_ITEM_BLOOM_MASK, KDBUS_ITEM_DST_NAME, KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_ATTACH_FLAGS_SEND,
	KDBUS_ITEM_ATTACH_FLAGS_RECV, KDBUS_ITEM_ID, KDBUS_ITEM_NAME, KDBUS_ITEM_DST_ID, KDBUS_ITEM_TIMESTAMP,
	KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS, KDBUS_ITEM_AUXGROUPS, KDBUS_ITEM_OWNED_NAME, KDBUS_ITEM_PID_COMM,
	KDBUS_ITEM_SECLABEL, KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_POLICY_ACCESS, KDBUS_ITEM_NAME_ADD,
	KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE, KDBUS_ITEM_ID_ADD, KDBUS_ITEM_ID_REMOVE,
	KDBUS_ITEM_REPLY_TIMEOUT, KDBUS_ITEM_REPLY_DEAD, 0x7fff, 0xffffffffffffffffULL,
};

static uint64_t random_type(void)
{
	uint64_t t = all_types[rn(sizeof(all_types) / sizeof(all_types[0]))];

	/* --avoid make-attach: no BUS_MAKE gets an ATTACH_FLAGS_SEND by chance */
	if (t == KDBUS_ITEM_ATTACH_FLAGS_SEND && (avoid & AVOID_MAKE_ATTACH) && W.op == OP_BUS_MAKE)
		t = KDBUS_ITEM_ATTACH_FLAGS_RECV;
	return t;
}

static void item_junk(uint8_t *buf, size_t *len, size_t cap)
{
	uint8_t d[72];
	size_t n = rn(sizeof(d));

	fill_clean(d, n);
	item_add(buf, len, cap, random_type(), d, n);
	dlog("junk ");
}

static void item_negotiate(uint8_t *buf, size_t *len, size_t cap)
{
	uint64_t t[6];
	size_t n = 1 + rn(6), i;

	for (i = 0; i < n; i++)
		t[i] = random_type();
	item_add(buf, len, cap, KDBUS_ITEM_NEGOTIATE, t, n * 8);
	dlog("negotiate-item ");
}

static void set_size(uint8_t *buf, size_t len)
{
	uint64_t v = len;

	memcpy(buf, &v, 8);
}

/* the offsets of the items of buf[hdr, len) */
static size_t item_offsets(const uint8_t *buf, size_t len, size_t hdr, size_t *offs, size_t max)
{
	size_t pos = hdr, n = 0;

	while (pos + KDBUS_ITEM_HEADER_SIZE <= len && n < max) {
		const struct kdbus_item *it = (const void *)(buf + pos);

		offs[n++] = pos;
		if (it->size < KDBUS_ITEM_HEADER_SIZE || it->size > len - pos)
			break;
		pos += KDBUS_ALIGN8(it->size);
	}
	return n;
}

/* 1 to 3 mutations of a command or message of @hdr bytes before its items */
static void mutate(uint8_t *buf, size_t *len, size_t hdr, size_t cap)
{
	unsigned n = 1 + (unsigned)rn(3), j;

	for (j = 0; j < n; j++) {
		size_t offs[600], ni = item_offsets(buf, *len, hdr, offs, 600);
		struct kdbus_item *it = ni ? (void *)(buf + offs[rn(ni)]) : NULL;
		uint64_t v;

		switch (rn(10)) {
		case 0: {	/* the size field */
			static const int64_t d[] = { -16, -8, -1, 1, 7, 8, 16, 4096 };

			switch (rn(4)) {
			case 0: v = *len + d[rn(8)]; break;
			case 1: v = rn(hdr + 8); break;
			case 2: v = rn(2) ? 0x8000 + rn(64) : 0xffffffffffffffffULL - rn(8); break;
			default: v = *len + 8 * rn(64); break;
			}
			memcpy(buf, &v, 8);
			dlog(" mut:size=%" PRIu64, v);
			break;
		}
		case 1:		/* a bit */
			if (*len) {
				size_t at = rn(*len);

				buf[at] = cleanbyte(buf[at] ^ (uint8_t)(1u << rn(8)));
				dlog(" mut:bit@%zu", at);
			}
			break;
		case 2:		/* an item's size */
			if (it) {
				static const uint64_t sz[] = { 0, 1, 8, 15, 16, 17, 24, 0x10000, 0x7fffffffffffffffULL,
							       0xffffffffffffffffULL };

				v = rn(3) ? it->size + rrange(-12, 12) : sz[rn(10)];
				it->size = v;
				dlog(" mut:item-size=%" PRIu64, v);
			}
			break;
		case 3:		/* an item's type */
			if (it) {
				it->type = random_type();
				dlog(" mut:item-type=0x%" PRIx64, (uint64_t)it->type);
			}
			break;
		case 4:		/* truncate */
			if (*len > hdr) {
				*len = hdr + rn(*len - hdr);
				if (chance(60))
					set_size(buf, *len);
				dlog(" mut:trunc=%zu", *len);
			}
			break;
		case 5:		/* garbage after the items */
			item_junk(buf, len, cap);
			set_size(buf, *len);
			break;
		case 6:		/* the same item twice */
			if (it && it->size <= 512 && KDBUS_ALIGN8(*len) + it->size <= cap) {
				uint8_t copy[512];
				size_t sz = it->size;

				memcpy(copy, it, sz);
				*len = KDBUS_ALIGN8(*len);
				memcpy(buf + *len, copy, sz);
				*len += sz;
				set_size(buf, *len);
				dlog(" mut:dup");
			}
			break;
		case 7: {	/* many items */
			uint64_t t = chance(50) ? KDBUS_ITEM_NEGOTIATE : random_type();
			size_t k = 100 + rn(600), i;

			for (i = 0; i < k && item_add(buf, len, cap, t, NULL, rn(3) * 8); i++)
				;
			set_size(buf, *len);
			dlog(" mut:many=%zu", i);
			break;
		}
		case 8:		/* flags */
			if (*len >= 16) {
				memcpy(&v, buf + 8, 8);
				v = rn(2) ? v | KDBUS_FLAG_NEGOTIATE : clean64(rnd());
				memcpy(buf + 8, &v, 8);
				dlog(" mut:flags=0x%" PRIx64, v);
			}
			break;
		case 9:		/* a field of the header */
			if (hdr > 16) {
				size_t at = 8 * (2 + rn((hdr - 16) / 8));

				v = rclean();
				memcpy(buf + at, &v, 8);
				dlog(" mut:field%zu=0x%" PRIx64, at, v);
			}
			break;
		}
	}
}

/* ---- issuing a command ---- */

typedef struct Issue {
	Placed pl;
	bool raced;
	bool flip;
	Action done;
} Issue;

/*
 * Place B[0, bl) (weird placements with @weird_pct percent), maybe with a
 * race of the helper thread (the one given, or one of its own: a second
 * thread changing the size, a close of a random fd), log and run it; the
 * kernel's answer is copied back into B.
 */
static int issue(int fd, unsigned long req, unsigned weird_pct, const Action *race, Issue *is)
{
	Action a = { 0 };
	int r, e, mode, victim = -1;

	mode = pick_placement(weird_pct);
	if ((avoid & AVOID_INFO_EFAULT) && mode == PL_RO &&
	    (req == KDBUS_CMD_CONN_INFO || req == KDBUS_CMD_BUS_CREATOR_INFO || req == KDBUS_CMD_LIST))
		mode = PL_NORMAL;
	is->raced = false;
	is->flip = false;
	content_unreliable = race && race->type == ACT_FREE;
	if (!race && mode == PL_NORMAL && bl >= 16 && !(avoid & AVOID_SIZE_RACE) && chance(3)) {
		uint64_t sz, k = 1 + rn(8);

		/*
		 * The size is read once to check it and once more with the
		 * copy: a second thread flips it between A, which the copy
		 * gets, and A + 8k.  With KDBUS_FLAG_NEGOTIATE and a last
		 * NEGOTIATE item that fits only the larger size, a kernel
		 * that trusts the copy's size validates, zeroes and copies
		 * back past its buffer.
		 */
		if (chance(70) && KDBUS_ALIGN8(bl) + KDBUS_ITEM_HEADER_SIZE <= CMD_CAP) {
			struct kdbus_item *it;

			bl = KDBUS_ALIGN8(bl);
			it = (void *)(B + bl);
			it->size = KDBUS_ITEM_HEADER_SIZE + 8 * k;
			it->type = KDBUS_ITEM_NEGOTIATE;
			bl += KDBUS_ITEM_HEADER_SIZE;
			set_size(B, bl);
			B[15] |= 0x80;
		} else if (chance(50)) {
			B[15] |= 0x80;
		}
		memcpy(&sz, B, 8);
		a.type = ACT_FLIP;
		a.v1 = sz;
		a.v2 = chance(85) ? sz + 8 * k : 32 * 1024;
		is->flip = true;
		dlog(" flip=%" PRIu64 "/%" PRIu64, a.v1, a.v2);
	}
	memcpy(B0, B, bl);
	place_extent = is->flip ? a.v2 : 0;
	place(&is->pl, 0, B, bl, mode);
	place_extent = 0;
	if (is->flip) {
		a.addr = (volatile uint64_t *)is->pl.p;
	} else if (race) {
		a = *race;
	} else if (chance(2)) {
		victim = fent_pick_any();
		if (victim >= 0) {
			a.type = ACT_CLOSE;
			a.fd = W.f[victim].fd;
			a.delay_us = (unsigned)rn(3000);
		}
	} else if (mode == PL_NORMAL && chance(1)) {
		a.type = ACT_PROTECT;
		a.addr = (volatile uint64_t *)is->pl.p;
		a.delay_us = (unsigned)rn(500);
	}
	if (a.type != ACT_NONE) {
		act_post(&a);
		is->raced = true;
	}
	if (race && race->type == ACT_CLOSE) {
		int i;

		for (i = 0; i < MAX_FDS; i++)
			if (W.f[i].kind != K_NONE && W.f[i].fd == race->fd)
				victim = i;
	}
	dlog(" @%d", mode);
	log_now();
	r = kio(fd, req, is->pl.arg);
	e = errno;
	if (r < 0 && e == ECONNRESET) {
		int i;

		for (i = 0; i < MAX_FDS; i++)
			if (W.f[i].kind == K_CONN && W.f[i].fd == fd)
				W.f[i].c.dead = true;
	}
	last_flip = is->flip;
	if (is->raced) {
		act_finish(&is->done);
		if (is->done.type == ACT_CLOSE && victim >= 0)
			pending_close = victim;
	}
	/* even with the size flipping: the kernel may write back only what it copied */
	placed_intact(&is->pl, op_names[W.op]);
	if (is->pl.p && (mode == PL_NORMAL || mode == PL_GUARD || mode == PL_RO))
		memcpy(B, is->pl.p, bl);
	errno = e;
	return r;
}

/*
 * After a successful KDBUS_FLAG_NEGOTIATE: the kernel may have changed the
 * flags and zeroed entries of NEGOTIATE items, and nothing else.
 */
static void check_negotiate(size_t hdr)
{
	size_t offs[600], n = item_offsets(B0, bl, hdr, offs, 600), i, k;
	uint64_t flags;

	if (last_flip)
		return;	/* either size may be the one the kernel answered for */
	memcpy(&flags, B + 8, 8);
	if (flags & KDBUS_FLAG_NEGOTIATE)
		violation("negotiation answered with KDBUS_FLAG_NEGOTIATE still set");
	check_clean(B, bl, 0, "negotiation answer");
	for (i = 0; i < bl; i++) {
		bool allowed = (i >= 8 && i < 16);

		if (B[i] == B0[i])
			continue;
		for (k = 0; k < n && !allowed; k++) {
			const struct kdbus_item *it = (const void *)(B0 + offs[k]);

			if (it->type == KDBUS_ITEM_NEGOTIATE && i >= offs[k] + 16 && i < offs[k] + it->size &&
			    B[i] == 0)
				allowed = true;
		}
		if (!allowed) {
			violation("negotiation changed byte %zu of the command (0x%02x -> 0x%02x)", i, B0[i], B[i]);
			return;
		}
	}
}

static bool negotiating(void)
{
	uint64_t flags;

	memcpy(&flags, B0 + 8, 8);
	return bl >= 16 && (flags & KDBUS_FLAG_NEGOTIATE);
}

/* ---- picking objects ---- */

static int pick_bus(void)
{
	int i, n = 0, k;

	for (i = 0; i < W.nbuses; i++)
		if (W.buses[i].alive)
			n++;
	if (n == 0)
		return -1;
	k = (int)rn(n);
	for (i = 0; i < W.nbuses; i++)
		if (W.buses[i].alive && k-- == 0)
			return i;
	return -1;
}

/* a connection, or -1 after a HELLO was done instead */
static int pick_conn(void)
{
	int i = fent_pick(K_CONN);

	if (i >= 0 && W.f[i].c.dead && chance(60)) {
		/* a connection that is gone: mostly closed, so live ones get the work */
		dlog("closed dead fd=%d; ", W.f[i].fd);
		fent_close(i);
		i = fent_pick(K_CONN);
	}
	if (i >= 0 && chance(98))
		return i;
	if (i < 0 || chance(50)) {
		W.op = OP_HELLO;
		op_hello();
		return -1;
	}
	/* now and then a bus file without HELLO, or anything else */
	i = chance(50) ? fent_pick(K_EP) : fent_pick_any();
	return i >= 0 ? i : fent_pick(K_CONN);
}

static uint64_t attach_flags(void)
{
	switch (rn(8)) {
	case 0: return 0;
	case 1: return _KDBUS_ATTACH_ALL;
	case 2: return _KDBUS_ATTACH_ANY;
	case 3: return clean64(rnd());
	default: return rnd() & _KDBUS_ATTACH_ALL;
	}
}

static void policy_access(uint8_t *buf, size_t *len, size_t cap)
{
	struct kdbus_policy_access a = {
		.type = chance(90) ? 1 + rn(3) : rn(6),
		.access = chance(90) ? rn(3) : rclean(),
		.id = chance(80) ? (chance(50) ? 1000 + rn(2) : 0) : rclean(),
	};

	item_add(buf, len, cap, KDBUS_ITEM_POLICY_ACCESS, &a, chance(95) ? sizeof(a) : rn(sizeof(a) + 8));
}

/* ---- BUS_MAKE ---- */

/* --avoid make-attach: whatever the mutations did, no ATTACH_FLAGS_SEND
 * item of B has an unknown bit (the security review's bug 6) */
static void sanitize_make_attach(void)
{
	size_t offs[600], n, k;

	if (!(avoid & AVOID_MAKE_ATTACH))
		return;
	n = item_offsets(B, bl, sizeof(struct kdbus_cmd), offs, 600);
	for (k = 0; k < n; k++) {
		struct kdbus_item *it = (void *)(B + offs[k]);

		if (it->type == KDBUS_ITEM_ATTACH_FLAGS_SEND && offs[k] + KDBUS_ITEM_HEADER_SIZE + 8 <= bl &&
		    it->data64[0] != _KDBUS_ATTACH_ANY)
			it->data64[0] &= _KDBUS_ATTACH_ALL;
	}
}

void op_bus_make(void)
{
	struct kdbus_cmd *cmd = (void *)B;
	char name[128];
	int i, r, own = 0;
	Issue is;
	bool named = false;

	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == K_CTL && W.f[i].bus >= 0)
			own++;
	if (own >= 3) {
		/* at most three buses of our own: the oldest goes, with its connections */
		for (i = 0; i < MAX_FDS; i++)
			if (W.f[i].kind == K_CTL && W.f[i].bus >= 0) {
				fent_close(i);
				dlog("closed own bus;");
				break;
			}
	}
	i = chance(90) ? -1 : fent_pick(K_CTL);
	if (i < 0)
		i = make_misc_fd(K_CTL);
	if (i < 0) {
		dlog("no control fd");
		log_now();
		return;
	}
	memset(B, 0, sizeof(struct kdbus_cmd));
	bl = sizeof(struct kdbus_cmd);
	switch (rn(10)) {
	case 0: cmd->flags = 0; break;
	case 1: cmd->flags = KDBUS_MAKE_ACCESS_GROUP; break;
	case 2: cmd->flags = clean64(rnd()) & ~KDBUS_FLAG_NEGOTIATE; break;
	case 3: cmd->flags = chance(50) ? KDBUS_FLAG_NEGOTIATE : KDBUS_FLAG_NEGOTIATE | KDBUS_MAKE_ACCESS_WORLD; break;
	default: cmd->flags = KDBUS_MAKE_ACCESS_WORLD; break;
	}
	if (chance(4))
		item_negotiate(B, &bl, CMD_CAP);
	/* the name */
	switch (rn(25)) {
	case 0: snprintf(name, sizeof(name), "%u-x", W.uid == 0 ? 1000 : 0); break;
	case 1: snprintf(name, sizeof(name), "%u-%s", W.uid, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); break;
	case 2: snprintf(name, sizeof(name), "%u-a/b", W.uid); break;
	case 3: snprintf(name, sizeof(name), "%u-", W.uid); break;
	case 4: snprintf(name, sizeof(name), "%s", ""); break;
	case 5: snprintf(name, sizeof(name), "%u-kfuzz-%06" PRIx64 "-a", W.uid, W.seed & 0xffffff); break;
	case 6: snprintf(name, sizeof(name), "%u-ends-.", W.uid); break;
	default: snprintf(name, sizeof(name), "%u-kf%d-%" PRIu64 "%s", W.uid, W.idx, W.k, W.child ? "f" : ""); break;
	}
	if (chance(96)) {
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_MAKE_NAME, name);
		named = true;
		if (chance(2))
			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_MAKE_NAME, name);
	}
	dlog("ctl=%d flags=0x%" PRIx64 " name=%s", W.f[i].fd, (uint64_t)cmd->flags, named ? name : "-");
	/* the bloom parameters */
	if (chance(96)) {
		struct kdbus_bloom_parameter bp = { .size = 8 * (1 + rn(64)), .n_hash = 1 + rn(16) };

		if (chance(10)) {
			static const uint64_t bad[] = { 0, 7, 4104, 1ULL << 40, 12 };

			bp.size = bad[rn(5)];
		}
		if (chance(4))
			bp.n_hash = chance(50) ? 0 : rclean();
		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_BLOOM_PARAMETER, &bp, chance(96) ? sizeof(bp) : 8);
		dlog(" bloom=%" PRIu64 "/%" PRIu64, (uint64_t)bp.size, (uint64_t)bp.n_hash);
	}
	if (chance(15)) {
		uint64_t f = rnd() & _KDBUS_ATTACH_ALL;

		if (!(avoid & AVOID_MAKE_ATTACH) && chance(25))
			f |= chance(50) ? (1ULL << (14 + rn(49))) : clean64(rnd());
		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_ATTACH_FLAGS_SEND, &f, 8);
		dlog(" attach-send=0x%" PRIx64, f);
	}
	if (chance(10)) {
		uint64_t f = attach_flags();

		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_ATTACH_FLAGS_RECV, &f, 8);
		dlog(" attach-recv=0x%" PRIx64, f);
	}
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	set_size(B, bl);
	if (chance(6)) {
		/* with --avoid make-attach, mutations stay away from ATTACH_FLAGS_SEND */
		if (!(avoid & AVOID_MAKE_ATTACH) || !strstr(W.desc, "attach-send"))
			mutate(B, &bl, sizeof(struct kdbus_cmd), CMD_CAP);
	}
	sanitize_make_attach();
	r = issue(W.f[i].fd, KDBUS_CMD_BUS_MAKE, 4, NULL, &is);
	if (r == 0 && negotiating()) {
		check_negotiate(sizeof(struct kdbus_cmd));
		return;
	}
	if (r == 0 && named && W.f[i].kind == K_CTL && W.f[i].bus < 0 && W.nbuses < MAX_BUSES) {
		Bus *b = &W.buses[W.nbuses];

		snprintf(b->name, sizeof(b->name), "%s", name);
		snprintf(b->path, sizeof(b->path), "%s/%s/bus", kdbusfs, name);
		b->alive = true;
		b->ours = true;
		W.f[i].bus = W.nbuses++;
	}
}

/* ---- HELLO ---- */

static void conn_setup(Fent *e, uint64_t flags, uint64_t pool_size)
{
	struct kdbus_cmd_hello *h = (void *)B;
	Conn *c = &e->c;

	e->kind = K_CONN;
	memset(c, 0, sizeof(*c));
	c->id = h->id;
	c->flags = flags;
	c->pool_size = pool_size;
	c->bus = e->bus;
	note_id(h->id);
	check_clean(B, sizeof(*h), 0, "HELLO answer");
	if (!in_pool(c, h->offset, h->items_size)) {
		violation("HELLO: items at 0x%" PRIx64 " size 0x%" PRIx64 " outside the pool (0x%" PRIx64 ")",
			  (uint64_t)h->offset, (uint64_t)h->items_size, pool_size);
		c->tainted = true;
		return;
	}
	if (chance(92)) {
		size_t len = pool_size > (64u << 20) ? (64u << 20) : pool_size;
		void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, e->fd, 0);

		if (p != MAP_FAILED) {
			c->map = p;
			c->map_len = len;
		}
	}
	if (c->map && h->offset + h->items_size <= c->map_len && h->offset % 8 == 0) {
		const uint8_t *p = c->map + h->offset;
		size_t pos = 0;

		check_clean(p, h->items_size, h->offset, "HELLO items");
		check_items(e, p, h->items_size, h->offset, "HELLO items");
		while (pos + KDBUS_ITEM_HEADER_SIZE <= h->items_size) {
			const struct kdbus_item *it = (const void *)(p + pos);

			if (it->size < KDBUS_ITEM_HEADER_SIZE)
				break;
			if (it->type == KDBUS_ITEM_BLOOM_PARAMETER && it->size >= 32)
				c->bloom_size = it->bloom_parameter.size;
			pos += KDBUS_ALIGN8(it->size);
		}
	}
	slice_add(e, h->offset, h->items_size, "HELLO");
}

void op_hello(void)
{
	struct kdbus_cmd_hello *h = (void *)B;
	uint64_t flags = 0, pool;
	int i, r, role, j;
	Issue is;

	i = fent_pick(K_EP);
	if (i < 0 || chance(30)) {
		int b = pick_bus();

		if (fent_count(K_CONN) + fent_count(K_EP) >= 14) {
			j = fent_pick(chance(50) ? K_CONN : K_EP);
			if (j >= 0) {
				fent_close(j);
				dlog("closed %d;", j);
			}
		}
		if (b >= 0)
			i = open_bus(b);
	}
	if (chance(3))
		i = fent_pick_any();
	if (i < 0) {
		dlog("no bus to open");
		log_now();
		return;
	}
	memset(B, 0, sizeof(*h));
	bl = sizeof(*h);
	role = (int)rn(100);
	if (role < 60) {
		flags = chance(75) ? KDBUS_HELLO_ACCEPT_FD : 0;
	} else if (role < 69) {
		flags = KDBUS_HELLO_ACTIVATOR | (chance(50) ? KDBUS_HELLO_ACCEPT_FD : 0);
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
		for (j = rn(3); j > 0; j--)
			policy_access(B, &bl, CMD_CAP);
	} else if (role < 78) {
		flags = KDBUS_HELLO_POLICY_HOLDER;
		for (j = 1 + rn(3); j > 0; j--) {
			int k;

			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, chance(20) ? "org.kfuzz.*" : pick_name());
			for (k = rn(4); k > 0; k--)
				policy_access(B, &bl, CMD_CAP);
		}
	} else if (role < 88) {
		flags = KDBUS_HELLO_MONITOR | (chance(50) ? KDBUS_HELLO_ACCEPT_FD : 0);
	} else if (role < 93) {
		flags = (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_MONITOR | KDBUS_HELLO_POLICY_HOLDER) & rnd();
		if (chance(50))
			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
	} else {
		flags = chance(50) ? (rnd() & 0xff) : clean64(rnd());
	}
	h->flags = flags;
	h->attach_flags_send = attach_flags();
	h->attach_flags_recv = attach_flags();
	switch (rn(20)) {
	case 0: pool = 0; break;
	case 1: pool = 4095; break;
	case 2: pool = (1ULL << 30) + PAGE; break;
	case 3: pool = 1ULL << 30; break;
	case 4: pool = clean64(rnd()); break;
	case 5: pool = 8ULL << 20; break;
	case 6: case 7: pool = 1ULL << 20; break;
	case 8: case 9: case 10: pool = 64 * 1024; break;
	default: pool = PAGE * (1 + rn(16)); break;
	}
	h->pool_size = pool;
	if (chance(25)) {
		char d[64];

		snprintf(d, sizeof(d), "kfuzz-w%d-%" PRIu64, W.idx, W.k);
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_CONN_DESCRIPTION, d);
	}
	if (chance(8)) {
		/* whom a privileged proxy stands for */
		switch (rn(5)) {
		case 0: {
			struct kdbus_creds c = { rn(2000), rn(2000), rn(2000), rn(2000),
						 rn(2000), rn(2000), rn(2000), rn(2000) };

			if (chance(10))
				c.euid = clean64(rnd());
			item_add(B, &bl, CMD_CAP, KDBUS_ITEM_CREDS, &c, sizeof(c));
			break;
		}
		case 1: {
			struct kdbus_pids p = { 1 + rn(5000), 1 + rn(5000), rn(5000) };

			item_add(B, &bl, CMD_CAP, KDBUS_ITEM_PIDS, &p, sizeof(p));
			break;
		}
		case 2: {
			uint64_t g[5];
			size_t n = rn(6), k;

			for (k = 0; k < n; k++)
				g[k] = chance(90) ? rn(2000) : clean64(rnd());
			item_add(B, &bl, CMD_CAP, KDBUS_ITEM_AUXGROUPS, g, n * 8);
			break;
		}
		case 3:
			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_PID_COMM, "kfuzz-proxied");
			break;
		default:
			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_SECLABEL, "system_u:system_r:kfuzz_t");
			break;
		}
		dlog("fake-meta ");
	}
	if (chance(3))
		item_negotiate(B, &bl, CMD_CAP);
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	if (chance(3))
		h->flags |= KDBUS_FLAG_NEGOTIATE;
	set_size(B, bl);
	dlog("fd=%d bus=%d flags=0x%" PRIx64 " attach=0x%" PRIx64 "/0x%" PRIx64 " pool=0x%" PRIx64, W.f[i].fd,
	     W.f[i].bus, (uint64_t)h->flags, (uint64_t)h->attach_flags_send, (uint64_t)h->attach_flags_recv, pool);
	if (chance(6))
		mutate(B, &bl, sizeof(*h), CMD_CAP);
	r = issue(W.f[i].fd, KDBUS_CMD_HELLO, 4, NULL, &is);
	if (r == 0 && negotiating()) {
		check_negotiate(sizeof(*h));
		return;
	}
	if (r == 0 && W.f[i].kind == K_EP && pending_close != i && is.pl.mode != PL_RO &&
	    (is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD)) {
		memcpy(&pool, B0 + offsetof(struct kdbus_cmd_hello, pool_size), 8);
		conn_setup(&W.f[i], flags, pool);
	} else if (r == 0 && W.f[i].kind == K_EP) {
		W.f[i].kind = K_NONE;	/* connected, but we cannot know how: close it */
		close(W.f[i].fd);
	}
}

/* ---- BYEBYE, UPDATE ---- */

void op_byebye(void)
{
	int i = pick_conn();
	Issue is;

	if (i < 0)
		return;
	memset(B, 0, sizeof(struct kdbus_cmd));
	bl = sizeof(struct kdbus_cmd);
	set_size(B, bl);
	if (chance(5))
		mutate(B, &bl, sizeof(struct kdbus_cmd), CMD_CAP);
	dlog("fd=%d", W.f[i].fd);
	issue(W.f[i].fd, KDBUS_CMD_BYEBYE, 3, NULL, &is);
}

void op_update(void)
{
	int i = pick_conn(), j;
	Issue is;
	int r;

	if (i < 0)
		return;
	memset(B, 0, sizeof(struct kdbus_cmd));
	bl = sizeof(struct kdbus_cmd);
	if (chance(60)) {
		uint64_t f = attach_flags();

		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_ATTACH_FLAGS_SEND, &f, chance(95) ? 8 : rn(16));
	}
	if (chance(60)) {
		uint64_t f = attach_flags();

		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_ATTACH_FLAGS_RECV, &f, 8);
	}
	if ((W.f[i].kind == K_CONN && (W.f[i].c.flags & KDBUS_HELLO_POLICY_HOLDER)) || chance(5)) {
		for (j = rn(3); j > 0; j--) {
			int k;

			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
			for (k = rn(3); k > 0; k--)
				policy_access(B, &bl, CMD_CAP);
		}
	}
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	if (chance(3))
		B[8 + 7] |= 0x80;	/* KDBUS_FLAG_NEGOTIATE */
	set_size(B, bl);
	dlog("fd=%d", W.f[i].fd);
	if (chance(5))
		mutate(B, &bl, sizeof(struct kdbus_cmd), CMD_CAP);
	r = issue(W.f[i].fd, KDBUS_CMD_UPDATE, 3, NULL, &is);
	if (r == 0 && negotiating())
		check_negotiate(sizeof(struct kdbus_cmd));
}

/* ---- FREE ---- */

void op_free(void)
{
	struct kdbus_cmd_free *f = (void *)B;
	int i = pick_conn(), r;
	Conn *c;
	bool tracked = false, mutated = false;
	uint64_t from_k = 0;
	int from_op = 0;
	Issue is;

	if (i < 0)
		return;
	c = &W.f[i].c;
	memset(B, 0, sizeof(*f));
	bl = sizeof(*f);
	f->size = bl;
	if (W.f[i].kind == K_CONN && c->nsl && chance(65)) {
		const Slice *sl = &c->sl[rn(c->nsl)];

		f->offset = sl->off;
		tracked = true;
		from_op = sl->op;
		from_k = sl->k;
	} else if (W.f[i].kind == K_CONN && c->nsl && chance(20)) {
		f->offset = c->sl[rn(c->nsl)].off + 8 * (1 + rn(4));
	} else if (chance(70)) {
		f->offset = W.f[i].kind == K_CONN ? 8 * rn(c->pool_size / 8 + 2) : rn(1 << 20);
	} else {
		f->offset = rclean();
	}
	if (chance(3))
		f->flags = chance(50) ? KDBUS_FLAG_NEGOTIATE : clean64(rnd());
	dlog("fd=%d off=0x%" PRIx64 "%s", W.f[i].fd, (uint64_t)f->offset, tracked ? " (ours)" : "");
	if (chance(4)) {
		mutate(B, &bl, sizeof(*f), CMD_CAP);
		mutated = true;
	}
	r = issue(W.f[i].fd, KDBUS_CMD_FREE, 3, NULL, &is);
	if (W.f[i].kind != K_CONN || pending_close == i)
		return;
	if (r == 0) {
		slice_drop(c, ((struct kdbus_cmd_free *)B0)->offset);
	} else if (tracked && !mutated && !c->tainted && !is.flip && f->flags == 0 &&
		   (is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD || is.pl.mode == PL_RO) &&
		   (errno == ENXIO || errno == EINVAL)) {
		violation("FREE of offset 0x%" PRIx64 ", which the kernel gave (%s #%" PRIu64 ") and nobody freed,"
			  " failed: %s", (uint64_t)((struct kdbus_cmd_free *)B0)->offset, op_names[from_op], from_k,
			  strerror(errno));
		slice_drop(c, ((struct kdbus_cmd_free *)B0)->offset);
	}
}

/* ---- CONN_INFO, BUS_CREATOR_INFO, LIST ---- */

static void race_free(Action *a, Fent *e)
{
	a->type = ACT_FREE;
	a->fd = e->fd;
	a->pool_size = e->c.pool_size > (1 << 20) ? (1 << 20) : e->c.pool_size;
	e->c.tainted = true;	/* its slices are no longer known */
}

void op_conn_info(bool creator)
{
	struct kdbus_cmd_info *ci = (void *)B;
	int i = pick_conn(), r;
	Action a = { 0 };
	Issue is;
	bool mutated = false;

	if (i < 0)
		return;
	memset(B, 0, sizeof(*ci));
	bl = sizeof(*ci);
	switch (rn(10)) {
	case 0: ci->id = 0; break;
	case 1: ci->id = W.f[i].kind == K_CONN ? W.f[i].c.id : 1; break;
	case 2: ci->id = rclean(); break;
	default: ci->id = pick_id(); break;
	}
	ci->attach_flags = attach_flags();
	if (!creator && chance(35))
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	if (chance(3))
		ci->flags = chance(60) ? KDBUS_FLAG_NEGOTIATE : clean64(rnd());
	set_size(B, bl);
	dlog("fd=%d id=%" PRIu64 " attach=0x%" PRIx64, W.f[i].fd, (uint64_t)ci->id, (uint64_t)ci->attach_flags);
	if (chance(5)) {
		mutate(B, &bl, sizeof(*ci), CMD_CAP);
		mutated = true;
	}
	if (W.f[i].kind == K_CONN && !(avoid & AVOID_FREE_RACE) && chance(4))
		race_free(&a, &W.f[i]);
	r = issue(W.f[i].fd, creator ? KDBUS_CMD_BUS_CREATOR_INFO : KDBUS_CMD_CONN_INFO,
		  (avoid & AVOID_INFO_EFAULT) ? 5 : 12, a.type ? &a : NULL, &is);
	if (r == 0 && negotiating()) {
		check_negotiate(sizeof(*ci));
		return;
	}
	(void)mutated;
	if (r == 0 && W.f[i].kind == K_CONN && pending_close != i &&
	    (is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD)) {
		check_info(&W.f[i], ci->offset, ci->info_size, false, op_names[W.op]);
		slice_add(&W.f[i], ci->offset, ci->info_size, op_names[W.op]);
	}
}

void op_list(void)
{
	struct kdbus_cmd_list *l = (void *)B;
	int i = pick_conn(), r;
	Action a = { 0 };
	Issue is;

	if (i < 0)
		return;
	memset(B, 0, sizeof(*l));
	bl = sizeof(*l);
	l->flags = chance(90) ? rnd() & 0xf : clean64(rnd());
	set_size(B, bl);
	dlog("fd=%d flags=0x%" PRIx64, W.f[i].fd, (uint64_t)l->flags);
	if (chance(4))
		mutate(B, &bl, sizeof(*l), CMD_CAP);
	if (W.f[i].kind == K_CONN && !(avoid & AVOID_FREE_RACE) && chance(3))
		race_free(&a, &W.f[i]);
	r = issue(W.f[i].fd, KDBUS_CMD_LIST, (avoid & AVOID_INFO_EFAULT) ? 5 : 10, a.type ? &a : NULL, &is);
	if (r == 0 && negotiating()) {
		check_negotiate(sizeof(*l));
		return;
	}
	if (r == 0 && W.f[i].kind == K_CONN && pending_close != i &&
	    (is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD)) {
		check_info(&W.f[i], l->offset, l->list_size, true, "LIST");
		slice_add(&W.f[i], l->offset, l->list_size, "LIST");
	}
}

/* ---- SEND ---- */

static size_t payload_cursor;

static uint64_t vec_address(uint64_t size, bool *valid)
{
	uint8_t *p;

	*valid = false;
	switch (rn(100)) {
	case 0: case 1: case 2: case 3:
		return 0;
	case 4: case 5: case 6:
		return chance(50) ? (uint64_t)(uintptr_t)(payload + PAYLOAD_SIZE) : 0x1000 * (1 + rn(15));
	case 7: case 8: case 9: {
		static const uint64_t k[] = { 0xffffffff81000000ULL, 0xffff888000000000ULL, 0xffffffffffffffffULL - 4095,
					      0x00007ffffffff000ULL };

		return k[rn(4)];
	}
	case 10: case 11: case 12:	/* runs into the PROT_NONE page */
		return (uint64_t)(uintptr_t)(payload + PAYLOAD_SIZE - (size > 1 ? size / 2 : 1));
	default:
		break;
	}
	if (size > PAYLOAD_SIZE)
		return (uint64_t)(uintptr_t)payload;
	if (payload_cursor + size > PAYLOAD_SIZE)
		payload_cursor = 0;
	p = payload + payload_cursor;
	payload_fill(p, size, payload_tag(size));
	payload_cursor = KDBUS_ALIGN8(payload_cursor + size);
	*valid = true;
	return (uint64_t)(uintptr_t)p;
}

static uint64_t vec_size(void)
{
	switch (rn(100)) {
	case 0: case 1: case 2: case 3: case 4: return 0;
	case 5: case 6: case 7: case 8: case 9: return 64 * 1024;
	case 10: case 11: return 256 * 1024 + rn(8);
	case 12: return 2 * 1024 * 1024;
	case 13: return 2 * 1024 * 1024 + 1;
	case 14: return clean64(rnd());
	default:
		if (chance(40))
			return 1 + rn(16);
		return chance(70) ? 17 + rn(500) : 513 + rn(8192);
	}
}

static int fd_for_fds(void)
{
	int i;

	if (chance(5))
		return chance(50) ? -1 : 1000 + (int)rn(100);
	i = fent_pick_any();
	return i >= 0 ? W.f[i].fd : 0;
}

void op_send(bool reply)
{
	struct kdbus_cmd_send *cmd = (void *)B;
	struct kdbus_msg *m = (void *)M;
	int i = pick_conn(), r, ncall = -1, j;
	Conn *c;
	uint64_t bloom_want = 64, bloom_size = 0, now = now_ns();
	bool bloom_wrong = false, mutated = false, sync = false, broadcast = false, rlimited = false;
	Placed mpl;
	Action a = { 0 };
	Issue is;
	struct rlimit old_fsize;

	if (i < 0)
		return;
	c = &W.f[i].c;
	if (W.f[i].kind == K_CONN && c->bloom_size)
		bloom_want = c->bloom_size;
	memset(M, 0, sizeof(*m));
	ml = sizeof(*m);
	m->payload_type = chance(95) ? KDBUS_PAYLOAD_DBUS : (chance(50) ? KDBUS_PAYLOAD_KERNEL : rclean());
	m->cookie = 1 + rn(1ULL << 40);
	m->priority = chance(90) ? rrange(-2, 3) : (int64_t)rclean();
	m->src_id = chance(95) ? 0 : (chance(50) && W.f[i].kind == K_CONN ? c->id : rclean());

	if (reply && W.f[i].kind == K_CONN && c->ncalls) {
		ncall = (int)rn(c->ncalls);
		m->dst_id = chance(92) ? c->calls[ncall].src : pick_id();
		m->cookie_reply = chance(92) ? c->calls[ncall].cookie : rclean();
		m->flags = chance(92) ? 0 : rnd() & 7;
		dlog("reply fd=%d dst=%" PRIu64 " cookie_reply=%" PRIu64, W.f[i].fd, (uint64_t)m->dst_id,
		     (uint64_t)m->cookie_reply);
	} else {
		int kind = (int)rn(100);

		if (kind < 35)
			m->flags = KDBUS_MSG_SIGNAL;
		else if (kind < 72)
			m->flags = KDBUS_MSG_EXPECT_REPLY;
		else if (kind < 96)
			m->flags = 0;
		else
			m->flags = chance(50) ? rnd() & 7 : clean64(rnd());
		if (chance(10))
			m->flags |= KDBUS_MSG_NO_AUTO_START;
		if ((avoid & AVOID_SIGNAL_CALL) && (m->flags & KDBUS_MSG_SIGNAL))
			m->flags &= ~(uint64_t)KDBUS_MSG_EXPECT_REPLY;
		kind = (int)rn(100);
		if ((m->flags & KDBUS_MSG_SIGNAL) ? kind < 55 : kind < 3) {
			m->dst_id = KDBUS_DST_ID_BROADCAST;
			broadcast = true;
		} else if (kind < 80) {
			m->dst_id = chance(10) && W.f[i].kind == K_CONN ? c->id : pick_id();
		} else if (kind < 97) {
			m->dst_id = chance(90) ? KDBUS_DST_ID_NAME : pick_id();
			item_str(M, &ml, MSG_CAP, KDBUS_ITEM_DST_NAME, pick_name());
		} else {
			m->dst_id = rclean();
		}
		if (m->flags & KDBUS_MSG_EXPECT_REPLY) {
			switch (rn(40)) {
			case 0: m->timeout_ns = 0; break;
			case 1: m->timeout_ns = 1; break;
			case 2: m->timeout_ns = ~0ULL >> 1; break;
			default: m->timeout_ns = now + 1000000ULL * (1 + rn(200)); break;
			}
			if (chance(15)) {
				sync = true;
				if (m->timeout_ns > now + 50000000ULL)
					m->timeout_ns = now + 1000000ULL * (1 + rn(50));
			}
		} else if (chance(3)) {
			m->cookie_reply = rclean();
		}
		dlog("fd=%d dst=%" PRIu64 " flags=0x%" PRIx64 "%s", W.f[i].fd, (uint64_t)m->dst_id,
		     (uint64_t)m->flags, sync ? " sync" : "");
	}
	/* payload */
	for (j = chance(30) ? 0 : (int)rn(5); j > 0; j--) {
		struct kdbus_vec v;
		bool valid;

		v.size = vec_size();
		v.address = vec_address(v.size, &valid);
		item_add(M, &ml, MSG_CAP, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
		dlog(" vec=%" PRIu64 "@%s", (uint64_t)v.size, valid ? "ok" : "bad");
	}
	if (chance(10)) {
		for (j = chance(95) ? 1 + rn(2) : 17; j > 0; j--) {
			struct kdbus_memfd mf = { 0 };
			int k = fent_pick(chance(75) ? K_MEMFD_SEALED : K_MEMFD);

			if (k < 0 && chance(70))
				k = make_misc_fd(chance(80) ? K_MEMFD_SEALED : K_MEMFD);
			mf.fd = k >= 0 ? W.f[k].fd : fd_for_fds();
			mf.start = chance(85) ? 0 : (chance(50) ? 8 * rn(1024) : ~0ULL - rn(100));
			mf.size = chance(85) ? 8 + 8 * rn(8) : (chance(50) ? PAGE * (1 + rn(8)) : clean64(rnd()));
			item_add(M, &ml, MSG_CAP, KDBUS_ITEM_PAYLOAD_MEMFD, &mf, chance(97) ? sizeof(mf) : 16);
			dlog(" memfd=%d", mf.fd);
		}
	}
	if (chance(10)) {
		static const unsigned big[] = { 16, 17, 253, 254 };
		unsigned n = chance(90) ? 1 + (unsigned)rn(4) : big[rn(4)], k;
		int fds[256];

		for (k = 0; k < n; k++)
			fds[k] = fd_for_fds();
		item_add(M, &ml, MSG_CAP, KDBUS_ITEM_FDS, fds, n * sizeof(int));
		dlog(" fds=%u", n);
	}
	if ((m->flags & KDBUS_MSG_SIGNAL) ? chance(85) : chance(3)) {
		uint8_t bf[8 + 4096 + 16];

		bloom_size = bloom_want;
		if (chance(15) && (broadcast || !(avoid & AVOID_UNICAST_BLOOM))) {
			static const int64_t d[] = { -8, 8, -64, 64 };
			int64_t s = (int64_t)bloom_want + d[rn(4)];

			bloom_size = chance(30) ? 0 : (uint64_t)(s < 0 ? 0 : s);
			bloom_wrong = bloom_size != bloom_want;
		}
		if (bloom_size > 4096)
			bloom_size = 4096;
		memset(bf, 0, sizeof(bf));
		bf[0] = (uint8_t)rn(3);
		fill_clean(bf + 8, bloom_size);
		item_add(M, &ml, MSG_CAP, KDBUS_ITEM_BLOOM_FILTER, bf, 8 + bloom_size);
		dlog(" bloom=%" PRIu64 "%s", bloom_size, bloom_wrong ? "(wrong)" : "");
	}
	if (chance(2))
		item_junk(M, &ml, MSG_CAP);
	set_size(M, ml);
	if (chance(6)) {
		mutate(M, &ml, sizeof(*m), MSG_CAP);
		mutated = true;
	}

	/* the command */
	memset(B, 0, sizeof(*cmd));
	bl = sizeof(*cmd);
	cmd->reply.offset = cmd->reply.msg_size = REPLY_UNTOUCHED;
	if (sync)
		cmd->flags = KDBUS_SEND_SYNC_REPLY;
	else if (chance(2))
		cmd->flags = chance(50) ? KDBUS_SEND_SYNC_REPLY : clean64(rnd());
	if (chance(2))
		cmd->flags |= KDBUS_FLAG_NEGOTIATE;
	if ((sync && chance(50)) || chance(2)) {
		int k = fent_pick(K_EVENTFD), fd;

		if (k < 0)
			k = make_misc_fd(K_EVENTFD);
		fd = k >= 0 && chance(90) ? W.f[k].fd : fd_for_fds();
		if (k >= 0) {
			uint64_t v;

			if (read(W.f[k].fd, &v, sizeof(v)) < 0)
				v = 0;	/* it was not readable: fine */
		}
		item_add(B, &bl, CMD_CAP, KDBUS_ITEM_CANCEL_FD, &fd, chance(96) ? sizeof(int) : 8);
		dlog(" cancel=%d", fd);
		if (sync && k >= 0 && fd == W.f[k].fd && chance(40)) {
			a.type = ACT_CANCEL;
			a.fd = fd;
			a.delay_us = (unsigned)rn(20000);
		}
	}
	if (sync && !a.type && chance(15)) {
		a.type = ACT_SIGNAL;
		a.delay_us = (unsigned)rn(20000);
	} else if (sync && !a.type && chance(8)) {
		a.type = ACT_CLOSE;
		a.fd = W.f[i].fd;
		a.delay_us = (unsigned)rn(20000);
	}
	set_size(B, bl);
	/* the message's place */
	place(&mpl, 1, M, ml, pick_placement(4));
	cmd->msg_address = mpl.arg;
	if (!a.type && mpl.mode == PL_NORMAL && !(avoid & AVOID_SIZE_RACE) && chance(3)) {
		a.type = ACT_FLIP;
		a.addr = (volatile uint64_t *)mpl.p;
		a.v1 = ml;
		a.v2 = chance(50) ? ml + 8 * (1 + rn(128)) : 8 * 1024;
		mutated = true;
	}
	if (chance(3))
		mutate(B, &bl, sizeof(*cmd), CMD_CAP);
	{
		/* a synchronous call, whatever the mutations made of it, waits
		 * 100 ms at most: nobody may answer */
		uint64_t f, t;

		memcpy(&f, B + 8, 8);
		if ((f & KDBUS_SEND_SYNC_REPLY) && mpl.p && mpl.mode != PL_RO && ml >= 64) {
			memcpy(&t, mpl.p + 56, 8);
			if (t > now + 100000000ULL) {
				t = now + 1000000ULL * (1 + rn(100));
				memcpy((uint8_t *)mpl.p + 56, &t, 8);
			}
		} else if ((f & KDBUS_SEND_SYNC_REPLY) && mpl.mode == PL_RO && ml >= 64) {
			memcpy(&t, M + 56, 8);
			if (t > now + 100000000ULL) {
				t = now + 1000000ULL * (1 + rn(100));
				memcpy(M + 56, &t, 8);
				place(&mpl, 1, M, ml, PL_RO);
			}
		}
	}
	if (!(avoid & AVOID_RLIMIT) && chance(3)) {
		struct rlimit rl;

		getrlimit(RLIMIT_FSIZE, &old_fsize);
		rl = old_fsize;
		rl.rlim_cur = 64 * (1 + rn(64));
		if (setrlimit(RLIMIT_FSIZE, &rl) == 0)
			rlimited = true;
		dlog(" rlimit-fsize=%lu", (unsigned long)rl.rlim_cur);
	}
	r = issue(W.f[i].fd, KDBUS_CMD_SEND, 3, a.type ? &a : NULL, &is);
	if (rlimited) {
		int e = errno;

		setrlimit(RLIMIT_FSIZE, &old_fsize);
		if (r < 0 && e == EFBIG)
			violation("SEND failed with EFBIG: the sender's RLIMIT_FSIZE was applied to a receiver's pool");
		errno = e;
	}
	if (r == 0 && negotiating())
		return;
	if (r < 0 || W.f[i].kind != K_CONN || pending_close == i)
		return;
	if (bloom_wrong && !mutated && !broadcast && c->bloom_size && mpl.mode == PL_NORMAL &&
	    (m->flags & KDBUS_MSG_SIGNAL))
		violation("a signal to %" PRIu64 " with a bloom filter of %" PRIu64 " bytes on a bus of %" PRIu64
			  " was accepted (EDOM expected; the match reads past the filter)",
			  (uint64_t)m->dst_id, bloom_size, c->bloom_size);
	if (ncall >= 0 && !mutated)
		c->calls[ncall] = c->calls[--c->ncalls];
	if ((((struct kdbus_cmd_send *)B0)->flags & KDBUS_SEND_SYNC_REPLY) &&
	    (is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD)) {
		uint64_t off = cmd->reply.offset, size = cmd->reply.msg_size;

		if (off == REPLY_UNTOUCHED && size == REPLY_UNTOUCHED) {
			violation("a synchronous SEND (message flags 0x%" PRIx64 ") returned 0 without an answer:"
				  " reply.offset and msg_size untouched", (uint64_t)m->flags);
			return;
		}
		check_msg(&W.f[i], off, size, false, true);
		slice_add(&W.f[i], off, size, "SEND's synchronous reply");
	}
}

/* ---- RECV ---- */

void op_recv(void)
{
	struct kdbus_cmd_recv *rv = (void *)B;
	int i = pick_conn(), r;
	Action a = { 0 };
	Issue is;
	uint64_t flags;

	if (i < 0)
		return;
	memset(B, 0, sizeof(*rv));
	bl = sizeof(*rv);
	switch (rn(20)) {
	case 0: case 1: case 2: case 3: rv->flags = KDBUS_RECV_PEEK; break;
	case 4: case 5: rv->flags = KDBUS_RECV_DROP; break;
	case 6: case 7: rv->flags = KDBUS_RECV_USE_PRIORITY; break;
	case 8: rv->flags = KDBUS_RECV_USE_PRIORITY | (chance(50) ? KDBUS_RECV_PEEK : KDBUS_RECV_DROP); break;
	case 9: rv->flags = chance(50) ? rnd() & 7 : clean64(rnd()); break;
	default: rv->flags = 0; break;
	}
	rv->priority = rrange(-3, 3);
	flags = rv->flags;
	set_size(B, bl);
	dlog("fd=%d flags=0x%" PRIx64 " prio=%" PRId64, W.f[i].fd, flags, (int64_t)rv->priority);
	if (chance(3))
		mutate(B, &bl, sizeof(*rv), CMD_CAP);
	if (W.f[i].kind == K_CONN && !(avoid & AVOID_FREE_RACE) && chance(2))
		race_free(&a, &W.f[i]);
	r = issue(W.f[i].fd, KDBUS_CMD_RECV, 3, a.type ? &a : NULL, &is);
	if (r < 0 || W.f[i].kind != K_CONN || pending_close == i || negotiating())
		return;
	if (!(is.pl.mode == PL_NORMAL || is.pl.mode == PL_GUARD))
		return;
	flags = ((struct kdbus_cmd_recv *)B0)->flags;
	if (flags & KDBUS_RECV_PEEK) {
		check_msg(&W.f[i], rv->msg.offset, rv->msg.msg_size, true, false);
	} else if (!(flags & KDBUS_RECV_DROP)) {
		check_msg(&W.f[i], rv->msg.offset, rv->msg.msg_size, false, true);
		slice_add(&W.f[i], rv->msg.offset, rv->msg.msg_size, "RECV");
	}
}

/* ---- NAME_ACQUIRE, NAME_RELEASE ---- */

void op_name(bool acquire)
{
	struct kdbus_cmd *cmd = (void *)B;
	int i = pick_conn(), r;
	const char *name;
	Issue is;

	if (i < 0)
		return;
	memset(B, 0, sizeof(*cmd));
	bl = sizeof(*cmd);
	if (acquire)
		cmd->flags = chance(90) ? rnd() & 7 : (chance(50) ? rnd() & 0x7f : clean64(rnd()));
	else
		cmd->flags = chance(95) ? 0 : clean64(rnd());
	if (chance(2))
		cmd->flags |= KDBUS_FLAG_NEGOTIATE;
	name = pick_name();
	if (chance(97))
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, name);
	if (chance(3))
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
	if (chance(2))
		item_junk(B, &bl, CMD_CAP);
	set_size(B, bl);
	dlog("fd=%d %s flags=0x%" PRIx64, W.f[i].fd, name, (uint64_t)cmd->flags);
	if (chance(4))
		mutate(B, &bl, sizeof(*cmd), CMD_CAP);
	r = issue(W.f[i].fd, acquire ? KDBUS_CMD_NAME_ACQUIRE : KDBUS_CMD_NAME_RELEASE, 3, NULL, &is);
	if (r == 0 && negotiating())
		check_negotiate(sizeof(*cmd));
}

/* ---- MATCH_ADD, MATCH_REMOVE ---- */

void op_match_add(void)
{
	struct kdbus_cmd_match *mc = (void *)B;
	int i = pick_conn(), r, j;
	uint64_t bs = 64;
	Issue is;

	if (i < 0)
		return;
	if (W.f[i].kind == K_CONN && W.f[i].c.bloom_size)
		bs = W.f[i].c.bloom_size;
	memset(B, 0, sizeof(*mc));
	bl = sizeof(*mc);
	mc->cookie = chance(85) ? 1 + rn(8) : rclean();
	mc->flags = chance(20) ? KDBUS_MATCH_REPLACE : 0;
	if (chance(3))
		mc->flags = chance(50) ? KDBUS_FLAG_NEGOTIATE : clean64(rnd());
	for (j = (int)rn(5); j > 0; j--) {
		switch (rn(9)) {
		case 0: case 1: {
			uint8_t mask[4096 * 2];
			uint64_t n = bs * (1 + rn(2));

			if (chance(20))
				n = chance(50) ? bs - 8 : bs + 8;
			if (n > sizeof(mask))
				n = sizeof(mask);
			fill_clean(mask, n);
			if (chance(30))
				memset(mask, 0xff, n);
			item_add(B, &bl, CMD_CAP, KDBUS_ITEM_BLOOM_MASK, mask, n);
			dlog(" mask=%" PRIu64, n);
			break;
		}
		case 2:
			item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
			break;
		case 3: case 4: {
			uint64_t id = chance(20) ? KDBUS_MATCH_ID_ANY : pick_id();

			item_add(B, &bl, CMD_CAP, chance(50) ? KDBUS_ITEM_ID : KDBUS_ITEM_DST_ID, &id, chance(95) ? 8 : 4);
			break;
		}
		case 5: case 6: {
			struct kdbus_notify_id_change ic = { chance(50) ? KDBUS_MATCH_ID_ANY : pick_id(), rn(16) };

			item_add(B, &bl, CMD_CAP, chance(50) ? KDBUS_ITEM_ID_ADD : KDBUS_ITEM_ID_REMOVE, &ic,
				 chance(95) ? sizeof(ic) : 8);
			break;
		}
		default: {
			uint8_t nc[sizeof(struct kdbus_notify_name_change) + 300];
			struct kdbus_notify_name_change *p = (void *)nc;
			size_t n = sizeof(*p);
			static const uint64_t t[] = { KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE };

			memset(nc, 0, sizeof(nc));
			p->old_id.id = chance(50) ? KDBUS_MATCH_ID_ANY : pick_id();
			p->new_id.id = chance(50) ? KDBUS_MATCH_ID_ANY : pick_id();
			if (chance(60)) {
				const char *s = pick_name();
				size_t l = strlen(s) + (chance(95) ? 1 : 0);

				memcpy(nc + n, s, l);
				n += l;
			}
			item_add(B, &bl, CMD_CAP, t[rn(3)], nc, n);
			break;
		}
		}
	}
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	set_size(B, bl);
	dlog("fd=%d cookie=%" PRIu64 " flags=0x%" PRIx64, W.f[i].fd, (uint64_t)mc->cookie, (uint64_t)mc->flags);
	if (chance(5))
		mutate(B, &bl, sizeof(*mc), CMD_CAP);
	r = issue(W.f[i].fd, KDBUS_CMD_MATCH_ADD, 3, NULL, &is);
	if (r == 0 && negotiating()) {
		check_negotiate(sizeof(*mc));
		return;
	}
	if (r == 0 && W.f[i].kind == K_CONN && pending_close != i && W.f[i].c.nmc < 8)
		W.f[i].c.match_cookies[W.f[i].c.nmc++] = ((struct kdbus_cmd_match *)B0)->cookie;
}

void op_match_remove(void)
{
	struct kdbus_cmd_match *mc = (void *)B;
	int i = pick_conn();
	Conn *c;
	Issue is;

	if (i < 0)
		return;
	c = &W.f[i].c;
	memset(B, 0, sizeof(*mc));
	bl = sizeof(*mc);
	mc->cookie = W.f[i].kind == K_CONN && c->nmc && chance(80) ? c->match_cookies[rn(c->nmc)] : 1 + rn(8);
	if (chance(3))
		mc->flags = clean64(rnd());
	if (chance(3))
		item_junk(B, &bl, CMD_CAP);
	set_size(B, bl);
	dlog("fd=%d cookie=%" PRIu64, W.f[i].fd, (uint64_t)mc->cookie);
	if (chance(4))
		mutate(B, &bl, sizeof(*mc), CMD_CAP);
	if (issue(W.f[i].fd, KDBUS_CMD_MATCH_REMOVE, 3, NULL, &is) == 0 && W.f[i].kind == K_CONN &&
	    pending_close != i) {
		int k;

		for (k = 0; k < c->nmc; k++)
			if (c->match_cookies[k] == ((struct kdbus_cmd_match *)B0)->cookie)
				c->match_cookies[k--] = c->match_cookies[--c->nmc];
	}
}

/* ---- ENDPOINT_MAKE, ENDPOINT_UPDATE ---- */

void op_endpoint(void)
{
	struct kdbus_cmd *cmd = (void *)B;
	int i = chance(50) ? fent_pick(K_EP) : fent_pick(K_CONN), j;
	char name[64];
	Issue is;

	if (i < 0)
		i = fent_pick_any();
	if (i < 0) {
		log_now();
		return;
	}
	memset(B, 0, sizeof(*cmd));
	bl = sizeof(*cmd);
	cmd->flags = chance(80) ? KDBUS_MAKE_ACCESS_WORLD * rn(2) : clean64(rnd());
	snprintf(name, sizeof(name), "%u-ep%" PRIu64, W.uid, W.k);
	item_str(B, &bl, CMD_CAP, KDBUS_ITEM_MAKE_NAME, name);
	for (j = rn(3); j > 0; j--) {
		item_str(B, &bl, CMD_CAP, KDBUS_ITEM_NAME, pick_name());
		policy_access(B, &bl, CMD_CAP);
	}
	if (chance(5))
		item_junk(B, &bl, CMD_CAP);
	set_size(B, bl);
	dlog("fd=%d", W.f[i].fd);
	if (chance(5))
		mutate(B, &bl, sizeof(*cmd), CMD_CAP);
	issue(W.f[i].fd, chance(50) ? KDBUS_CMD_ENDPOINT_MAKE : KDBUS_CMD_ENDPOINT_UPDATE, 3, NULL, &is);
}

/* ---- a random ioctl on a kdbus fd ---- */

void op_raw(void)
{
	static const unsigned long known[] = {
		KDBUS_CMD_BUS_MAKE, KDBUS_CMD_ENDPOINT_MAKE, KDBUS_CMD_ENDPOINT_UPDATE, KDBUS_CMD_HELLO,
		KDBUS_CMD_UPDATE, KDBUS_CMD_BYEBYE, KDBUS_CMD_FREE, KDBUS_CMD_CONN_INFO,
		KDBUS_CMD_BUS_CREATOR_INFO, KDBUS_CMD_LIST, KDBUS_CMD_SEND, KDBUS_CMD_RECV,
		KDBUS_CMD_NAME_ACQUIRE, KDBUS_CMD_NAME_RELEASE, KDBUS_CMD_MATCH_ADD, KDBUS_CMD_MATCH_REMOVE,
	};
	int kinds[] = { K_CONN, K_EP, K_CTL };
	int i = fent_pick(kinds[rn(3)]), fd;
	unsigned long req;
	Issue is;
	uint64_t v;

	if (i < 0)
		i = fent_pick(K_CONN);
	if (i < 0) {
		log_now();
		return;
	}
	fd = W.f[i].fd;
	if (chance(60))
		req = known[rn(sizeof(known) / sizeof(known[0]))];
	else
		req = _IOC((unsigned)rn(4), chance(80) ? KDBUS_IOCTL_MAGIC : (unsigned)rn(256), (unsigned)rn(256),
			   (unsigned)rn(1 << 14));
	bl = 8 * (3 + rn(60));
	fill_clean(B, bl);
	v = chance(70) ? bl : rclean();
	memcpy(B, &v, 8);
	if (chance(50)) {
		v = chance(50) ? 0 : KDBUS_FLAG_NEGOTIATE;
		memcpy(B + 8, &v, 8);
	}
	dlog("fd=%d req=0x%lx len=%zu", fd, req, bl);
	if (req == KDBUS_CMD_BUS_MAKE)
		sanitize_make_attach();
	issue(fd, req, 10, NULL, &is);
}

/* ---- the pool: reads, and mappings that must be refused ---- */

void op_pool(void)
{
	int i = fent_pick(K_CONN);
	Conn *c;
	void *p;

	if (i < 0) {
		log_now();
		return;
	}
	c = &W.f[i].c;
	dlog("fd=%d pool=0x%" PRIx64, W.f[i].fd, c->pool_size);
	__atomic_fetch_add(&shared->issued[OP_POOL], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&shared->ok[OP_POOL], 1, __ATOMIC_RELAXED);
	switch (rn(10)) {
	case 0: case 1: case 2: case 3: {
		size_t start, len;
		volatile uint8_t sink;
		int k;

		if (!c->map)
			break;
		start = PAGE * rn(c->map_len / PAGE);
		len = c->map_len - start;
		if (len > 128 * 1024)
			len = 128 * 1024;
		dlog(" scan 0x%zx+0x%zx", start, len);
		log_now();
		for (k = 0; k < 16; k++)
			sink = c->map[rn(c->map_len)];
		(void)sink;
		check_clean(c->map + start, len, start, "pool");
		__atomic_fetch_add(&shared->pool_scans, 1, __ATOMIC_RELAXED);
		return;
	}
	case 4: case 5:
		dlog(" mmap-rw");
		log_now();
		p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, chance(50) ? MAP_SHARED : MAP_PRIVATE, W.f[i].fd, 0);
		if (p != MAP_FAILED) {
			violation("the pool was mapped writable");
			munmap(p, PAGE);
		}
		return;
	case 6:
		dlog(" mprotect-rw");
		log_now();
		if (c->map && mprotect((void *)c->map, PAGE, PROT_READ | PROT_WRITE) == 0) {
			violation("a read-only mapping of the pool could be made writable");
			mprotect((void *)c->map, PAGE, PROT_READ);
		}
		return;
	case 7: {
		uint64_t pages = c->pool_size / PAGE;

		dlog(" mmap-past-end");
		log_now();
		if (pages == 0 || pages > (1u << 20))
			return;
		p = mmap(NULL, PAGE * 2, PROT_READ, MAP_SHARED, W.f[i].fd, (off_t)((pages - 1) * PAGE));
		if (p != MAP_FAILED) {
			violation("the pool (0x%" PRIx64 " bytes) could be mapped past its end", c->pool_size);
			munmap(p, PAGE * 2);
		}
		return;
	}
	case 8:
		dlog(" mmap-private");
		log_now();
		p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, W.f[i].fd, 0);
		if (p != MAP_FAILED) {
			if (mprotect(p, PAGE, PROT_READ | PROT_WRITE) == 0)
				violation("a private mapping of the pool could be made writable");
			munmap(p, PAGE);
		}
		return;
	default:
		dlog(" remap");
		log_now();
		if (c->map)
			munmap((void *)c->map, c->map_len);
		c->map = NULL;
		if (c->pool_size && c->pool_size <= (64u << 20)) {
			p = mmap(NULL, c->pool_size, PROT_READ, MAP_SHARED, W.f[i].fd, 0);
			if (p != MAP_FAILED) {
				c->map = p;
				c->map_len = c->pool_size;
			}
		}
		return;
	}
	log_now();
}

/* ---- fds ---- */

void op_open(void)
{
	int kind, r = -1, used = 0, i;

	for (i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind != K_NONE)
			used++;
	if (used >= 32) {
		i = fent_pick_any();
		dlog("full: close fd=%d kind=%d", W.f[i].fd, W.f[i].kind);
		log_now();
		fent_close(i);
		return;
	}
	switch (rn(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		kind = K_EP;
		break;
	case 6: case 7: case 8: kind = K_MEMFD_SEALED; break;
	case 9: kind = K_MEMFD; break;
	case 10: case 11: kind = K_SOCK; break;
	case 12: kind = K_PIPE; break;
	case 13: case 14: kind = K_EVENTFD; break;
	case 15: kind = K_NULL; break;
	case 16: kind = K_CTL; break;
	case 17: kind = (avoid & AVOID_URING) ? K_EVENTFD : K_URING; break;
	default: kind = K_MEMFD_SEALED; break;
	}
	dlog("kind=%d", kind);
	log_now();
	if (kind == K_EP)
		r = open_bus(pick_bus());
	else
		r = make_misc_fd(kind);
	__atomic_fetch_add(&shared->issued[OP_OPEN], 1, __ATOMIC_RELAXED);
	if (r >= 0)
		__atomic_fetch_add(&shared->ok[OP_OPEN], 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&shared->err[OP_OPEN][errno < MAX_ERRNO ? errno : 0], 1, __ATOMIC_RELAXED);
}

void op_close(void)
{
	int i = fent_pick_any();

	if (i < 0) {
		log_now();
		return;
	}
	dlog("fd=%d kind=%d", W.f[i].fd, W.f[i].kind);
	log_now();
	__atomic_fetch_add(&shared->issued[OP_CLOSE], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&shared->ok[OP_CLOSE], 1, __ATOMIC_RELAXED);
	fent_close(i);
}

/* ---- fork: a child uses what it inherited ---- */

static void wait_child(pid_t pid, unsigned secs)
{
	uint64_t end = now_ns() + secs * 1000000000ULL;
	struct timespec ts = { 0, 10 * 1000000 };

	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			end = now_ns() + 10 * 1000000000ULL;
			while (waitpid(pid, NULL, WNOHANG) == 0 && now_ns() < end)
				nanosleep(&ts, NULL);
			return;
		}
		nanosleep(&ts, NULL);
	}
}

void op_fork(void)
{
	unsigned n = 4 + (unsigned)rn(12);
	uint64_t fs = rnd();
	pid_t pid;

	if (W.child) {
		log_now();
		return;
	}
	dlog("child runs %u commands", n);
	log_now();
	__atomic_fetch_add(&shared->forks, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&shared->issued[OP_FORK], 1, __ATOMIC_RELAXED);
	pid = fork();
	if (pid == 0)
		fork_child_run(n, fs);
	if (pid < 0)
		return;
	__atomic_fetch_add(&shared->ok[OP_FORK], 1, __ATOMIC_RELAXED);
	wait_child(pid, 10);
	/* a connection is its fd: the child may have received and freed on
	 * ours, so what we know of their slices is no longer true */
	for (int i = 0; i < MAX_FDS; i++)
		if (W.f[i].kind == K_CONN)
			W.f[i].c.tainted = true;
}

/* ---- a user namespace where we are root: may it make "0-" buses? ---- */

void op_userns(void)
{
	char name[80];
	pid_t pid;

	if ((avoid & AVOID_USERNS) || W.child || W.uid == 0) {
		dlog("skipped");
		log_now();
		return;
	}
	snprintf(name, sizeof(name), "0-kfuzz-userns-%d-%" PRIu64, W.idx, W.k);
	dlog("%s", name);
	log_now();
	__atomic_fetch_add(&shared->issued[OP_USERNS], 1, __ATOMIC_RELAXED);
	pid = fork();
	if (pid == 0) {
		char map[64], path[200];
		uint8_t buf[256] __attribute__((aligned(8)));
		struct kdbus_cmd *cmd = (void *)buf;
		struct kdbus_item *it;
		int fd;

#define USERNS_FAIL() do { __atomic_fetch_add(&shared->err[OP_USERNS][errno < MAX_ERRNO ? errno : 0], 1, \
						     __ATOMIC_RELAXED); _exit(10); } while (0)
		W.child = true;
		if (unshare(CLONE_NEWUSER) < 0)
			USERNS_FAIL();
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "deny", 4) < 0)
				USERNS_FAIL();
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", W.uid);
		fd = open("/proc/self/uid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			USERNS_FAIL();
		close(fd);
		fd = open("/proc/self/gid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			USERNS_FAIL();
		close(fd);
#undef USERNS_FAIL
		memset(buf, 0, sizeof(buf));
		it = cmd->items;
		it->type = KDBUS_ITEM_MAKE_NAME;
		it->size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
		memcpy(it->str, name, strlen(name) + 1);
		it = KDBUS_ITEM_NEXT(it);
		it->type = KDBUS_ITEM_BLOOM_PARAMETER;
		it->size = KDBUS_ITEM_HEADER_SIZE + 16;
		it->bloom_parameter.size = 8;
		it->bloom_parameter.n_hash = 1;
		it = KDBUS_ITEM_NEXT(it);
		cmd->size = (uint8_t *)it - buf;
		snprintf(path, sizeof(path), "%s/control", kdbusfs);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			__atomic_fetch_add(&shared->err[OP_USERNS][errno < MAX_ERRNO ? errno : 0], 1, __ATOMIC_RELAXED);
			_exit(14);
		}
		if (ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd) == 0) {
			__atomic_fetch_add(&shared->ok[OP_USERNS], 1, __ATOMIC_RELAXED);
			violation("uid %u, root only in its own user namespace, made the bus %s", W.uid, name);
		} else {
			__atomic_fetch_add(&shared->err[OP_USERNS][errno < MAX_ERRNO ? errno : 0], 1,
					   __ATOMIC_RELAXED);
		}
		close(fd);
		_exit(0);
	}
	if (pid > 0)
		wait_child(pid, 10);
}

/* ---- user copies stalled with userfaultfd (root only) ---- */

static int uffd_open(void *page, uint64_t mode)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .range = { (uintptr_t)page, PAGE }, .mode = mode };
	int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) < 0 || ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
		close(fd);
		return -1;
	}
	if (mode == UFFDIO_REGISTER_MODE_WP) {
		struct uffdio_writeprotect wp = { .range = { (uintptr_t)page, PAGE },
						  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

		if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* another ordinary, live connection on @bus, or -1 */
static int other_conn(int bus, int not)
{
	int i, n = 0, k;

	for (i = 0; i < MAX_FDS; i++)
		if (i != not && W.f[i].kind == K_CONN && W.f[i].bus == bus && !W.f[i].c.dead &&
		    !(W.f[i].c.flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)))
			n++;
	if (n == 0)
		return -1;
	k = (int)rn(n);
	for (i = 0; i < MAX_FDS; i++)
		if (i != not && W.f[i].kind == K_CONN && W.f[i].bus == bus && !W.f[i].c.dead &&
		    !(W.f[i].c.flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)) &&
		    k-- == 0)
			return i;
	return -1;
}

/*
 * Mode 0, the shape of the security review's bug 2: CONN_INFO's answer offset is
 * written to a write-protected page; while the kernel waits, the helper
 * FREEs the answer, another connection queues two messages to the same
 * pool and the page goes away, so the write fails and the kernel undoes the
 * answer by its offset.  Both messages must then be received intact, in
 * slices of their own.
 * Mode 1, the shape of bug 5: a SEND's payload page is missing; while the
 * kernel waits for it, a child process says HELLO and NAME_ACQUIRE on the
 * same bus, which must not wait for the sender's page.
 */
void op_stall(void)
{
	static uint8_t sm[256] __attribute__((aligned(8)));
	static struct kdbus_cmd_send sc;
	int x = fent_pick(K_CONN), y, mode = (int)rn(4) == 0 ? 1 : 0, r, j;
	Action a = { 0 }, done;
	struct kdbus_msg *m = (void *)sm;
	Conn *c;
	uint8_t *page;

	if (W.uid != 0 || W.child || (avoid & AVOID_UFFD) || x < 0 || W.f[x].bus < 0 || W.f[x].c.dead ||
	    (W.f[x].c.flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)) ||
	    !chance(mode ? 30 : 60)) {
		dlog("skipped");
		log_now();
		return;
	}
	c = &W.f[x].c;
	y = other_conn(W.f[x].bus, x);
	if (y < 0) {
		dlog("no second connection on bus %d", W.f[x].bus);
		log_now();
		return;
	}
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return;
	if (mode == 0) {
		struct kdbus_cmd_info *ci = (void *)page;
		struct kdbus_cmd_recv rv;

		/* an empty pool: the answer and then the messages start at the same offset */
		for (j = 0; j < 300; j++) {
			memset(&rv, 0, sizeof(rv));
			rv.size = sizeof(rv);
			rv.flags = KDBUS_RECV_DROP;
			if (kio(W.f[x].fd, KDBUS_CMD_RECV, (unsigned long)&rv) < 0)
				break;
		}
		for (j = 0; j < c->nsl; j++) {
			struct kdbus_cmd_free f = { .size = sizeof(f), .offset = c->sl[j].off };

			kio(W.f[x].fd, KDBUS_CMD_FREE, (unsigned long)&f);
		}
		c->nsl = 0;
		memset(ci, 0, sizeof(*ci));
		ci->size = sizeof(*ci);
		ci->id = c->id;
		a.uffd = uffd_open(page, UFFDIO_REGISTER_MODE_WP);
		memset(sm, 0, sizeof(sm));
		m->size = sizeof(*m);
		m->dst_id = c->id;
		m->payload_type = KDBUS_PAYLOAD_DBUS;
		m->cookie = 1 + rn(1000);
		memset(&sc, 0, sizeof(sc));
		sc.size = sizeof(sc);
		sc.msg_address = (uintptr_t)sm;
	} else {
		a.uffd = uffd_open(page, UFFDIO_REGISTER_MODE_MISSING);
		a.srcpage = payload;
		payload_fill(payload, PAGE, payload_tag(PAGE));
	}
	if (a.uffd < 0) {
		dlog("no userfaultfd: %s", strerror(errno));
		log_now();
		munmap(page, PAGE);
		return;
	}
	a.type = ACT_STALL;
	a.mode = mode;
	a.fd = W.f[x].fd;
	a.fd2 = W.f[y].fd;
	a.page = page;
	a.pool_size = c->pool_size;
	a.send_arg = (unsigned long)&sc;
	dlog("mode=%d fd=%d other=%d", mode, W.f[x].fd, W.f[y].fd);
	if (mode == 0) {
		log_now();
		act_post(&a);
		r = kio(W.f[x].fd, KDBUS_CMD_CONN_INFO, (unsigned long)page);
		act_finish(&done);
		dlog(" -> %d stalled=%d freed=%d sent=%d", r < 0 ? -errno : r, done.stalled, done.nfreed, done.sent);
		if (!done.stalled)
			return;
		if (r == 0) {
			/* nothing failed: the answer is ours (its offset is on the page) */
			munmap(page, PAGE);
			return;
		}
		/* the two messages the helper queued come out whole and apart */
		for (j = 0; j < done.sent; j++) {
			struct kdbus_cmd_recv rv = { .size = sizeof(rv) };

			if (kio(W.f[x].fd, KDBUS_CMD_RECV, (unsigned long)&rv) < 0) {
				violation("message %d of 2 queued while CONN_INFO's answer could not be written"
					  " is gone: RECV %s", j + 1, strerror(errno));
				break;
			}
			check_msg(&W.f[x], rv.msg.offset, rv.msg.msg_size, false, true);
			slice_add(&W.f[x], rv.msg.offset, rv.msg.msg_size, "RECV after a failed CONN_INFO");
		}
		return;
	} else {
		int go[2], back[2];
		pid_t pid;
		uint64_t waited = 0;
		struct kdbus_vec v = { .size = PAGE, .address = (uintptr_t)page };
		uint8_t mb[128] __attribute__((aligned(8)));
		struct kdbus_msg *mm = (void *)mb;
		struct kdbus_item *it = mm->items;
		struct kdbus_cmd_send cs = { .size = sizeof(cs), .msg_address = (uintptr_t)mb };
		char path[200];

		if (pipe(go) < 0 || pipe(back) < 0) {
			close(a.uffd);
			munmap(page, PAGE);
			return;
		}
		snprintf(path, sizeof(path), "%s", W.buses[W.f[x].bus].path);
		pid = fork();
		if (pid == 0) {
			/* another process: HELLO and a name on the same bus, timed */
			struct kdbus_cmd_hello h = { .size = sizeof(h), .attach_flags_send = _KDBUS_ATTACH_ANY,
						     .pool_size = 16 * PAGE };
			uint8_t nb[128] __attribute__((aligned(8)));
			struct kdbus_cmd *nc = (void *)nb;
			char g, name[64];
			uint64_t t0, dt;
			int fd = open(path, O_RDWR);

			snprintf(name, sizeof(name), "org.kfuzz.stall.w%d.k%" PRIu64, W.idx, W.k);
			memset(nb, 0, sizeof(nb));
			nc->items[0].type = KDBUS_ITEM_NAME;
			nc->items[0].size = KDBUS_ITEM_HEADER_SIZE + strlen(name) + 1;
			memcpy(nc->items[0].str, name, strlen(name) + 1);
			nc->size = sizeof(*nc) + KDBUS_ALIGN8(nc->items[0].size);
			if (fd < 0 || read(go[0], &g, 1) != 1)
				_exit(2);
			t0 = now_ns();
			if (ioctl(fd, KDBUS_CMD_HELLO, &h) < 0 || ioctl(fd, KDBUS_CMD_NAME_ACQUIRE, nc) < 0)
				_exit(1);	/* no figure: it failed */
			dt = now_ns() - t0;
			if (write(back[1], &dt, sizeof(dt)) < 0)
				_exit(3);
			_exit(0);
		}
		close(go[0]);
		close(back[1]);
		if (pid < 0) {
			close(go[1]);
			close(back[0]);
			close(a.uffd);
			munmap(page, PAGE);
			return;
		}
		a.go_fd = go[1];
		a.delay_us = 1000000;
		memset(mb, 0, sizeof(mb));
		mm->dst_id = W.f[y].c.id;
		mm->payload_type = KDBUS_PAYLOAD_DBUS;
		mm->cookie = 1 + rn(1000);
		it->type = KDBUS_ITEM_PAYLOAD_VEC;
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(v);
		it->vec = v;
		mm->size = sizeof(*mm) + it->size;
		log_now();
		act_post(&a);
		r = kio(W.f[x].fd, KDBUS_CMD_SEND, (unsigned long)&cs);
		act_finish(&done);
		close(go[1]);
		{
			struct pollfd pfd = { .fd = back[0], .events = POLLIN };

			if (poll(&pfd, 1, 5000) > 0 && read(back[0], &waited, sizeof(waited)) != sizeof(waited))
				waited = 0;
		}
		close(back[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		munmap(page, PAGE);
		dlog(" -> %d stalled=%d hello+name-acquire waited %" PRIu64 " ms", r < 0 ? -errno : r, done.stalled,
		     waited / 1000000);
		if (done.stalled && waited > 800000000ULL)
			violation("another process's HELLO and NAME_ACQUIRE waited %" PRIu64 " ms while a SEND waited for its"
				  " payload page (a bus-wide lock held across a user copy)", waited / 1000000);
	}
}

/* ---- probes: a connection that outlives its process, one user filling a pool ---- */

/* HELLO on @fd, plain; the id, or 0 */
static uint64_t hello_plain(int fd, uint64_t flags, uint64_t pool)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h), .flags = flags, .attach_flags_send = _KDBUS_ATTACH_ANY,
				     .pool_size = pool };

	if (kio(fd, KDBUS_CMD_HELLO, (unsigned long)&h) < 0)
		return 0;
	return h.id;
}

static int send_plain(int fd, uint64_t dst, const void *data, size_t size, const int *fds, unsigned n_fds,
		      const char *dst_name)
{
	uint8_t mb[256] __attribute__((aligned(8)));
	struct kdbus_msg *m = (void *)mb;
	struct kdbus_cmd_send cs = { .size = sizeof(cs), .msg_address = (uintptr_t)mb };
	size_t len = sizeof(*m);

	memset(mb, 0, sizeof(mb));
	m->dst_id = dst;
	m->payload_type = KDBUS_PAYLOAD_DBUS;
	m->cookie = 1 + rn(1000);
	if (size) {
		struct kdbus_vec v = { .size = size, .address = (uintptr_t)data };

		item_add(mb, &len, sizeof(mb), KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	}
	if (n_fds)
		item_add(mb, &len, sizeof(mb), KDBUS_ITEM_FDS, fds, n_fds * sizeof(int));
	if (dst_name)
		item_add(mb, &len, sizeof(mb), KDBUS_ITEM_DST_NAME, dst_name, strlen(dst_name) + 1);
	m->size = len;
	return kio(fd, KDBUS_CMD_SEND, (unsigned long)&cs);
}

/*
 * Mode 0 (bug 7): a child says HELLO, registers its connection's fd in an
 * io_uring and sends the ring's fd to itself, then exits; once its files
 * are closed, the connection must be gone (CONN_INFO from here: ENXIO).
 * Mode 1 (bug 9): a child of uid 1001 fills one of our connections' pool
 * with messages of 64 KiB, then of half that, down to 1 byte; a small
 * message from us (another user) must still get in.
 */
void op_probe(void)
{
	int mode = (int)rn(2), b = pick_bus(), p[2], x, ph = -1, rfd = -1;
	uint64_t id = 0, rid = 0;
	char qname[64] = "";
	pid_t pid;

	if (W.child || b < 0 || (mode == 0 && (avoid & AVOID_URING)) || (mode == 1 && (avoid & AVOID_QUOTA)) ||
	    (mode == 1 && W.uid != 0)) {
		dlog("skipped");
		log_now();
		return;
	}
	x = other_conn(b, -1);
	if (x < 0) {
		dlog("no connection on bus %d", b);
		log_now();
		return;
	}
	dlog("mode=%d bus=%d conn=%" PRIu64, mode, b, W.f[x].c.id);
	log_now();
	if (mode == 1) {
		/* the receiver: a service that owns qname, which everybody may talk to */
		uint8_t hb[512] __attribute__((aligned(8)));
		struct kdbus_cmd_hello *h = (void *)hb;
		struct kdbus_policy_access pa = { .type = KDBUS_POLICY_ACCESS_WORLD, .access = KDBUS_POLICY_TALK };
		size_t hl = sizeof(*h);
		uint8_t nb[128] __attribute__((aligned(8)));
		size_t nl = sizeof(struct kdbus_cmd);

		snprintf(qname, sizeof(qname), "org.kfuzz.quota.w%d", W.idx);
		memset(hb, 0, sizeof(hb));
		h->flags = KDBUS_HELLO_POLICY_HOLDER;
		h->attach_flags_send = _KDBUS_ATTACH_ANY;
		h->pool_size = 16 * PAGE;
		item_add(hb, &hl, sizeof(hb), KDBUS_ITEM_NAME, qname, strlen(qname) + 1);
		item_add(hb, &hl, sizeof(hb), KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
		h->size = hl;
		ph = open(W.buses[b].path, O_RDWR | O_CLOEXEC);
		rfd = open(W.buses[b].path, O_RDWR | O_CLOEXEC);
		memset(nb, 0, sizeof(nb));
		item_add(nb, &nl, sizeof(nb), KDBUS_ITEM_NAME, qname, strlen(qname) + 1);
		((struct kdbus_cmd *)nb)->size = nl;
		if (ph < 0 || rfd < 0 || kio(ph, KDBUS_CMD_HELLO, (unsigned long)hb) < 0 ||
		    !(rid = hello_plain(rfd, 0, 1 << 20)) || kio(rfd, KDBUS_CMD_NAME_ACQUIRE, (unsigned long)nb) < 0) {
			if (ph >= 0)
				close(ph);
			if (rfd >= 0)
				close(rfd);
			return;
		}
	}
	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int fd = -1;

		W.child = true;
		close(p[0]);
		if (mode == 0) {
			fd = open(W.buses[b].path, O_RDWR);
			int ring = -1;
			uint8_t params[120] = { 0 };

			if (fd < 0 || !(id = hello_plain(fd, KDBUS_HELLO_ACCEPT_FD, 16 * PAGE)))
				_exit(1);
#if defined(__NR_io_uring_setup) && defined(__NR_io_uring_register)
			ring = (int)syscall(__NR_io_uring_setup, 4, params);
			if (ring < 0 || syscall(__NR_io_uring_register, ring, 2 /* IORING_REGISTER_FILES */, &fd, 1) < 0)
				_exit(2);
#endif
			if (send_plain(fd, id, NULL, 0, &ring, 1, NULL) < 0)
				_exit(3);	/* refused: nothing can keep it */
		} else {
			uint8_t *big = payload;
			int k;

			if (setresgid(1001, 1001, 1001) < 0 || setresuid(1001, 1001, 1001) < 0)
				_exit(1);
			/* opened as uid 1001: a connection has its opener's credentials */
			fd = open(W.buses[b].path, O_RDWR);
			if (fd < 0 || !hello_plain(fd, 0, 16 * PAGE))
				_exit(2);
			size_t sz = 64 * 1024;

			/* as much as it can: 64 KiB messages, then smaller ones */
			payload_fill(big, sz, payload_tag(sz));
			for (k = 0; k < 300 && sz >= 1;)
				if (send_plain(fd, KDBUS_DST_ID_NAME, big, sz, NULL, 0, qname) == 0)
					k++;
				else
					sz /= 2;
			id = (uint64_t)k;
		}
		if (write(p[1], &id, sizeof(id)) < 0)
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return;
	}
	wait_child(pid, 10);
	if (read(p[0], &id, sizeof(id)) != sizeof(id))
		id = 0;
	close(p[0]);
	if (mode == 0 && id) {
		struct kdbus_cmd_info ci = { .size = sizeof(ci), .id = id };
		int k, r = 0;

		/* the files of a process that is gone are put a little later */
		for (k = 0; k < 20; k++) {
			struct timespec ts = { 0, 20 * 1000000 };

			r = kio(W.f[x].fd, KDBUS_CMD_CONN_INFO, (unsigned long)&ci);
			if (r < 0)
				break;
			struct kdbus_cmd_free f = { .size = sizeof(f), .offset = ci.offset };

			kio(W.f[x].fd, KDBUS_CMD_FREE, (unsigned long)&f);
			nanosleep(&ts, NULL);
		}
		if (r == 0)
			violation("connection %" PRIu64 " outlived its process: its queue holds an io_uring that holds"
				  " its fd", id);
	} else if (mode == 1 && id) {
		uint64_t small = payload_tag(64);
		int sfd = open(W.buses[b].path, O_RDWR | O_CLOEXEC), r = -1;

		/* from a connection of our own user (one of ours may stand for
		 * uid 1001 with faked credentials: its share is the flooder's) */
		payload_fill(payload, 64, small);
		if (sfd >= 0 && hello_plain(sfd, 0, 16 * PAGE))
			r = send_plain(sfd, rid, payload, 64, NULL, 0, NULL);
		else
			errno = 0;
		if (sfd >= 0)
			close(sfd);
		if (r < 0 && (errno == EXFULL || errno == ENOBUFS))
			violation("after %" PRIu64 " messages of 64 KiB and less from uid 1001, a 64-byte message from uid %u to"
				  " the same 1 MiB pool fails: %s", id, W.uid, strerror(errno));
	}
	if (ph >= 0)
		close(ph);
	if (rfd >= 0)
		close(rfd);
}
