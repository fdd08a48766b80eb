/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metadata.c - identity and metadata items (see metadata.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kdbus/connection.h"
#include "kdbus/item.h"
#include "kdbus/metadata.h"
#include "kdbus/names.h"
#include "util/macro.h"

enum {
	BIT_TIMESTAMP, BIT_CREDS, BIT_PIDS, BIT_AUXGROUPS, BIT_NAMES, BIT_TID_COMM,
	BIT_PID_COMM, BIT_EXE, BIT_CMDLINE, BIT_CGROUP, BIT_CAPS, BIT_SECLABEL,
	BIT_AUDIT, BIT_CONN_DESCRIPTION,
};

typedef struct MetaPiece {
	const void *data;
	size_t size;
	bool raw;		/* @data is a complete item */
} MetaPiece;

static int kdbus_meta_assemble(KdbusMeta *m, const MetaPiece pieces[KDBUS_META_BITS]) {
	size_t total = 0;
	uint8_t *p;

	for (int b = 0; b < KDBUS_META_BITS; b++)
		if (pieces[b].data)
			total += pieces[b].raw ? KDBUS_ALIGN8(pieces[b].size)
					       : KDBUS_ITEM_SIZE(pieces[b].size);
	m->items = malloc(total ? total : 8);
	if (!m->items)
		return -ENOMEM;
	p = m->items;
	for (int b = 0; b < KDBUS_META_BITS; b++) {
		uint8_t *q;

		if (!pieces[b].data)
			continue;
		if (pieces[b].raw) {
			size_t l = KDBUS_ALIGN8(pieces[b].size);

			memcpy(p, pieces[b].data, pieces[b].size);
			memset(p + pieces[b].size, 0, l - pieces[b].size);
			q = p + l;
		} else {
			q = kdbus_item_write(p, _KDBUS_ITEM_ATTACH_BASE + b, pieces[b].data, pieces[b].size);
		}
		m->off[b] = p - m->items;
		m->len[b] = q - p;
		m->have |= 1ULL << b;
		p = q;
	}
	return 0;
}

static char *read_file(const char *path, size_t *ret_size) {
	char buf[4096];
	ssize_t n;
	int fd;
	char *s;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, buf, n);
	s[n] = 0;
	*ret_size = n;
	return s;
}

static char *read_line(const char *path) {
	size_t n;
	char *s = read_file(path, &n);

	if (s) {
		s[strcspn(s, "\n")] = 0;
		if (!*s) {
			free(s);
			s = NULL;
		}
	}
	return s;
}

int kdbus_meta_init_proc(KdbusMeta *m) {
	MetaPiece pc[KDBUS_META_BITS] = {};
	_cleanup_free_ char *pid_comm = NULL, *exe = NULL, *cmdline = NULL, *cgroup_file = NULL;
	_cleanup_free_ char *seclabel = NULL, *loginuid = NULL, *sessionid = NULL;
	_cleanup_free_ struct kdbus_caps *caps = NULL;
	char tid_comm[17] = {};
	char exe_buf[4096];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	struct kdbus_audit audit;
	size_t cmdline_size = 0, n;
	ssize_t l;
	int ng;

	memset(m, 0, sizeof(*m));
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	m->creds = (struct kdbus_creds){ ru, eu, su, eu, rg, eg, sg, eg };
	m->pids = (struct kdbus_pids){ getpid(), (uint64_t)syscall(SYS_gettid), getppid() };
	pc[BIT_CREDS] = (MetaPiece){ &m->creds, sizeof(m->creds), false };
	pc[BIT_PIDS] = (MetaPiece){ &m->pids, sizeof(m->pids), false };

	ng = getgroups(0, NULL);
	if (ng > 0) {
		_cleanup_free_ gid_t *g = calloc(ng, sizeof(gid_t));

		if (g && (ng = getgroups(ng, g)) > 0) {
			m->groups = calloc(ng, sizeof(uint64_t));
			if (m->groups) {
				for (int i = 0; i < ng; i++)
					m->groups[i] = g[i];
				m->n_groups = ng;
			}
		}
	}
	if (m->n_groups)
		pc[BIT_AUXGROUPS] = (MetaPiece){ m->groups, m->n_groups * sizeof(uint64_t), false };

	if (prctl(PR_GET_NAME, tid_comm) == 0)
		pc[BIT_TID_COMM] = (MetaPiece){ tid_comm, strlen(tid_comm) + 1, false };
	pid_comm = read_line("/proc/self/comm");
	if (pid_comm)
		pc[BIT_PID_COMM] = (MetaPiece){ pid_comm, strlen(pid_comm) + 1, false };
	l = readlink("/proc/self/exe", exe_buf, sizeof(exe_buf) - 1);
	if (l > 0) {
		exe_buf[l] = 0;
		exe = strdup(exe_buf);
		if (exe)
			pc[BIT_EXE] = (MetaPiece){ exe, strlen(exe) + 1, false };
	}
	cmdline = read_file("/proc/self/cmdline", &cmdline_size);
	if (cmdline && cmdline_size > 0) {
		if (cmdline[cmdline_size - 1] != 0)
			cmdline_size++;	/* read_file() NUL-terminated it */
		pc[BIT_CMDLINE] = (MetaPiece){ cmdline, cmdline_size, false };
	}
	cgroup_file = read_file("/proc/self/cgroup", &n);
	if (cgroup_file) {
		char *c = strstr(cgroup_file, "0::");

		if (c && (c == cgroup_file || c[-1] == '\n')) {
			c += 3;
			c[strcspn(c, "\n")] = 0;
			pc[BIT_CGROUP] = (MetaPiece){ c, strlen(c) + 1, false };
		}
	}
	{
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct data[2] = {};
		_cleanup_free_ char *lc = read_line("/proc/sys/kernel/cap_last_cap");
		unsigned last = lc ? (unsigned)atoi(lc) : 40;
		unsigned words = last / 32 + 1;
		size_t sz = kdbus_caps_payload_size(words);

		if (words <= 2 && syscall(SYS_capget, &hdr, data) == 0 && (caps = calloc(1, sz))) {
			caps->last_cap = last;
			for (unsigned w = 0; w < words; w++) {
				caps->caps[0 * words + w] = data[w].inheritable;
				caps->caps[1 * words + w] = data[w].permitted;
				caps->caps[2 * words + w] = data[w].effective;
			}
			for (unsigned c = 0; c <= last; c++)
				if (prctl(PR_CAPBSET_READ, c) == 1)
					caps->caps[3 * words + c / 32] |= 1U << (c % 32);
			pc[BIT_CAPS] = (MetaPiece){ caps, sz, false };
		}
	}
	seclabel = read_line("/proc/self/attr/current");
	if (seclabel)
		pc[BIT_SECLABEL] = (MetaPiece){ seclabel, strlen(seclabel) + 1, false };
	loginuid = read_line("/proc/self/loginuid");
	sessionid = read_line("/proc/self/sessionid");
	if (loginuid && sessionid) {
		audit.loginuid = (uint32_t)strtoul(loginuid, NULL, 10);
		audit.sessionid = (uint32_t)strtoul(sessionid, NULL, 10);
		pc[BIT_AUDIT] = (MetaPiece){ &audit, sizeof(audit), false };
	}

	return kdbus_meta_assemble(m, pc);
}

int kdbus_meta_init_hello(KdbusMeta *m, const KdbusMeta *proc,
			  const struct kdbus_item *items, size_t items_size) {
	MetaPiece pc[KDBUS_META_BITS] = {};
	const struct kdbus_item *groups = NULL;
	bool faked = false;
	size_t pos;

	memset(m, 0, sizeof(*m));
	m->creds = proc->creds;
	m->pids = proc->pids;

	for (pos = 0; pos < items_size; pos += KDBUS_ALIGN8(((const struct kdbus_item *)((const uint8_t *)items + pos))->size)) {
		const struct kdbus_item *it = (const void *)((const uint8_t *)items + pos);
		int b = -1;

		switch (it->type) {
		case KDBUS_ITEM_CREDS:
			m->creds = it->creds;
			b = BIT_CREDS;
			break;
		case KDBUS_ITEM_PIDS:
			m->pids = it->pids;
			b = BIT_PIDS;
			break;
		case KDBUS_ITEM_AUXGROUPS:
			groups = it;
			b = BIT_AUXGROUPS;
			break;
		case KDBUS_ITEM_SECLABEL:
			b = BIT_SECLABEL;
			break;
		case KDBUS_ITEM_PID_COMM:
			b = BIT_PID_COMM;
			break;
		case KDBUS_ITEM_CONN_DESCRIPTION:
			pc[BIT_CONN_DESCRIPTION] = (MetaPiece){ it, it->size, true };
			continue;
		default:
			continue;
		}
		faked = true;
		pc[b] = (MetaPiece){ it, it->size, true };
	}

	/* the identity items missing are the calling process's */
	static const int identity[] = { BIT_CREDS, BIT_PIDS, BIT_AUXGROUPS, BIT_SECLABEL, BIT_PID_COMM };
	for (size_t i = 0; i < ELEMENTSOF(identity); i++) {
		int b = identity[i];

		if (!pc[b].data && proc->len[b])
			pc[b] = (MetaPiece){ proc->items + proc->off[b], proc->len[b], true };
	}
	if (!faked) {
		static const int rest[] = { BIT_TID_COMM, BIT_EXE, BIT_CMDLINE, BIT_CGROUP, BIT_CAPS, BIT_AUDIT };

		for (size_t i = 0; i < ELEMENTSOF(rest); i++) {
			int b = rest[i];

			if (proc->len[b])
				pc[b] = (MetaPiece){ proc->items + proc->off[b], proc->len[b], true };
		}
	}

	if (groups) {
		size_t n = KDBUS_ITEM_PAYLOAD_SIZE(groups) / sizeof(uint64_t);

		if (n) {
			m->groups = malloc(n * sizeof(uint64_t));
			if (!m->groups)
				return -ENOMEM;
			memcpy(m->groups, groups->data64, n * sizeof(uint64_t));
			m->n_groups = n;
		}
	} else if (proc->n_groups) {
		m->groups = malloc(proc->n_groups * sizeof(uint64_t));
		if (!m->groups)
			return -ENOMEM;
		memcpy(m->groups, proc->groups, proc->n_groups * sizeof(uint64_t));
		m->n_groups = proc->n_groups;
	}

	return kdbus_meta_assemble(m, pc);
}

void kdbus_meta_deinit(KdbusMeta *m) {
	free(m->items);
	free(m->groups);
	m->items = NULL;
	m->groups = NULL;
	m->n_groups = 0;
	m->have = 0;
}

static size_t kdbus_meta_names_size(const KdbusConn *c) {
	const KdbusNameOwner *o;
	size_t s = 0;

	list_for_each_entry(o, &c->names, conn_link)
		if (!(o->flags & KDBUS_NAME_IN_QUEUE))
			s += kdbus_owned_name_item_size(o->entry->len);
	return s;
}

size_t kdbus_meta_size(const KdbusMeta *m, const KdbusConn *names, uint64_t mask) {
	uint64_t stat = mask & m->have;
	size_t s = 0;

	if (!mask)
		return 0;

	if (mask & KDBUS_ATTACH_TIMESTAMP)
		s += KDBUS_ITEM_SIZE(sizeof(struct kdbus_timestamp));
	if ((mask & KDBUS_ATTACH_NAMES) && names)
		s += kdbus_meta_names_size(names);
	while (stat) {
		int b = __builtin_ctzll(stat);

		s += m->len[b];
		stat &= stat - 1;
	}
	return s;
}

void *kdbus_meta_write(void *p, const KdbusMeta *m, const KdbusConn *names,
		       uint64_t mask, const struct kdbus_timestamp *ts) {
	uint8_t *q = p;

	mask &= (1ULL << KDBUS_META_BITS) - 1;
	while (mask) {
		int b = __builtin_ctzll(mask);

		mask &= mask - 1;
		if (b == BIT_TIMESTAMP) {
			if (ts)
				q = kdbus_item_write(q, KDBUS_ITEM_TIMESTAMP, ts, sizeof(*ts));
		} else if (b == BIT_NAMES) {
			const KdbusNameOwner *o;

			if (!names)
				continue;
			list_for_each_entry(o, &names->names, conn_link) {
				struct kdbus_item *it = (struct kdbus_item *)q;

				if (o->flags & KDBUS_NAME_IN_QUEUE)
					continue;
				it->name.flags = o->flags;
				memcpy(it->name.name, o->entry->name, o->entry->len + 1);
				q = kdbus_item_init(q, KDBUS_ITEM_OWNED_NAME,
						    sizeof(struct kdbus_name) + o->entry->len + 1);
			}
		} else if (m->have & (1ULL << b)) {
			memcpy(q, m->items + m->off[b], m->len[b]);
			q += m->len[b];
		}
	}
	return q;
}

uint64_t kdbus_meta_msg_mask(const KdbusConn *src, const KdbusConn *dst) {
	uint64_t allowed = src->attach_send | KDBUS_ATTACH_IMPLICIT;
	const struct kdbus_creds *c = &src->meta.creds;
	uint64_t euid = dst->meta.creds.euid;

	if ((dst->attach_recv & ~allowed) &&
	    (dst->privileged || (euid == c->uid && euid == c->euid && euid == c->suid)))
		allowed |= KDBUS_ATTACH_PROC;
	return dst->attach_recv & allowed;
}

bool kdbus_meta_in_group(const KdbusMeta *m, uint64_t gid) {
	if (m->creds.egid == gid)
		return true;
	for (size_t i = 0; i < m->n_groups; i++)
		if (m->groups[i] == gid)
			return true;
	return false;
}
