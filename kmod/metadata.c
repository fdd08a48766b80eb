// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metadata.c - metadata items: who a sender or a connection is
 * (credentials, process ids, supplementary groups, the names of the thread
 * and of the process, the executable, the command line, the cgroup,
 * capabilities, the security label, the audit ids) and the connection's
 * description; TIMESTAMP and OWNED_NAME are written where they are known
 *
 * What a process shows is collected into kernel memory once, with no lock
 * held (kdbus_meta_proc_collect()): at BUS_MAKE for BUS_CREATOR_INFO, at
 * HELLO for CONN_INFO, at every SEND for the message (then only the items
 * some connection of the bus receives).  The command line is the one
 * piece of user memory among them: it is read there, from the caller's
 * own memory, and never under a lock.  Every reader then gets a copy
 * translated into its own namespaces, as captured at its HELLO, written
 * under the locks from that kernel memory alone: uids and gids as its
 * user namespace sees them (the overflow id when they do not map), pids
 * as its pid namespace numbers them (0 when the process is not visible
 * there), capabilities as they count in its user namespace, the
 * executable only when both have the same root directory, the cgroup
 * only when it is below the root of the reader's cgroup namespace.
 *
 * Which items a message carries (kdbus_meta_msg_mask()), among those the
 * receiver asks for (attach_flags_recv): the basic ones always (CREDS,
 * PIDS, AUXGROUPS, NAMES, CONN_DESCRIPTION, TIMESTAMP: public on the bus,
 * needed for policy decisions), the others when the sender allows them
 * (attach_flags_send) or when the receiver could read them from the
 * sender's /proc anyway: the sender is visible in the receiver's pid
 * namespace and the receiver is privileged or the sender's user (the
 * final kdbus also looked at the pid namespace's hidepid; since Linux 5.8
 * that is an option of each procfs mount, which the module cannot see, so
 * the test is the one hidepid=invisible would make).  CONN_INFO shows
 * what the caller asks for of what the target allows (attach_flags_send).
 *
 * A connection made by a privileged proxy may say who it stands for
 * (HELLO's CREDS, PIDS, AUXGROUPS, PID_COMM and SECLABEL items): it then
 * shows only what it said, never the proxy's own process.
 */
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/fs_struct.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "internal.h"

/* the items of a process that take more than a reference to collect */
#define KDBUS_META_COSTLY (KDBUS_ATTACH_TID_COMM | KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_EXE | \
			   KDBUS_ATTACH_CMDLINE | KDBUS_ATTACH_CGROUP | KDBUS_ATTACH_SECLABEL | \
			   KDBUS_ATTACH_AUDIT)

/* KDBUS_ITEM_CAPS: the last capability, then four sets of it */
#define KDBUS_META_CAPS_SIZE kdbus_caps_payload_size(_KERNEL_CAPABILITY_U32S)

/* ---- collecting, with no lock held ---------------------------------------- */

/* the path of @current's executable, as its root directory sees it */
static char *kdbus_meta_exe(struct path *ret_root)
{
	struct mm_struct *mm = current->mm;
	struct file *exe = NULL;
	char *page, *p, *s = NULL;

	if (!mm)
		return NULL;
	rcu_read_lock();
	exe = rcu_dereference(mm->exe_file);
	if (exe && !get_file_rcu(exe))
		exe = NULL;
	rcu_read_unlock();
	if (!exe)
		return NULL;
	page = (char *)__get_free_page(GFP_KERNEL);
	if (page) {
		p = d_path(&exe->f_path, page, PAGE_SIZE);
		if (!IS_ERR(p)) {
			s = kstrdup(p, GFP_KERNEL_ACCOUNT);
			if (s)
				get_fs_root(current->fs, ret_root);
		}
		free_page((unsigned long)page);
	}
	fput(exe);
	return s;
}

/*
 * The arguments of @current, from its own memory (the only user memory
 * metadata reads): NUL-separated, at most KDBUS_META_CMDLINE_MAX bytes with
 * a NUL at the end.  Called with no lock held: a page that is slow to come
 * in blocks only the caller.
 */
static char *kdbus_meta_cmdline(size_t *ret_len)
{
	struct mm_struct *mm = current->mm;
	unsigned long start, end;
	size_t len;
	char *s;

	if (!mm)
		return NULL;
	spin_lock(&mm->arg_lock);
	start = mm->arg_start;
	end = mm->arg_end;
	spin_unlock(&mm->arg_lock);
	if (end <= start)
		return NULL;
	len = min_t(size_t, end - start, KDBUS_META_CMDLINE_MAX - 1);
	s = kmalloc(len + 1, GFP_KERNEL_ACCOUNT);
	if (!s)
		return NULL;
	if (copy_from_user(s, (const void __user *)start, len)) {
		kfree(s);
		return NULL;
	}
	if (s[len - 1] != '\0')
		s[len++] = '\0';
	*ret_len = len;
	return s;
}

/* the cgroup of @current in the default hierarchy, from its root */
static char *kdbus_meta_cgroup_path(struct cgroup *(*which)(void))
{
	char *page, *s = NULL;
	int r;

	page = (char *)__get_free_page(GFP_KERNEL);
	if (!page)
		return NULL;
	rcu_read_lock();
	r = cgroup_path(which(), page, PAGE_SIZE);
	rcu_read_unlock();
	if (r > 0 && r < PAGE_SIZE)
		s = kstrdup(page, GFP_KERNEL_ACCOUNT);
	free_page((unsigned long)page);
	return s;
}

static struct cgroup *kdbus_meta_task_cgroup(void)
{
	return task_dfl_cgroup(current);
}

static struct cgroup *kdbus_meta_ns_cgroup(void)
{
	return current->nsproxy->cgroup_ns->root_cset->dfl_cgrp;
}

/**
 * kdbus_meta_cgroup_root() - the root of the caller's cgroup namespace
 *
 * Its path in the default hierarchy: a reader sees cgroups below it only,
 * relative to it.
 *
 * Return: the path, or NULL.
 */
char *kdbus_meta_cgroup_root(void)
{
	return kdbus_meta_cgroup_path(kdbus_meta_ns_cgroup);
}

static char *kdbus_meta_seclabel(void)
{
	char *ctx = NULL, *s;
	u32 secid = 0, len = 0;

	security_current_getsecid_subj(&secid);
	if (security_secid_to_secctx(secid, &ctx, &len) < 0 || !ctx)
		return NULL;	/* no LSM that has labels */
	s = kmemdup_nul(ctx, len, GFP_KERNEL_ACCOUNT);
	security_release_secctx(ctx, len);
	if (s && !*s) {
		kfree(s);
		s = NULL;
	}
	return s;
}

/**
 * kdbus_meta_proc_collect() - what the calling process shows
 * @mp:		zeroed; kdbus_meta_proc_release() frees what it then holds
 * @what:	the KDBUS_ATTACH_* items wanted
 *
 * Credentials and process ids (which also decide who may read the rest)
 * are always taken: they are references.  Of the others, only those in
 * @what are collected, into kernel memory charged to the caller.  Reads
 * the caller's own memory (CMDLINE): never call it with a lock held.  An
 * item that cannot be had (no executable, no LSM label, no memory) is
 * left out, as the process's /proc would show nothing for it.
 */
void kdbus_meta_proc_collect(struct kdbus_meta_proc *mp, u64 what)
{
	struct task_struct *parent;

	mp->cred = get_current_cred();
	mp->tgid = get_pid(task_tgid(current));
	mp->pid = get_pid(task_pid(current));
	rcu_read_lock();
	parent = rcu_dereference(current->real_parent);
	mp->ppid = get_pid(task_tgid(parent));
	rcu_read_unlock();
	mp->valid = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_AUXGROUPS | KDBUS_ATTACH_CAPS;

	if (what & KDBUS_ATTACH_TID_COMM) {
		__get_task_comm(mp->tid_comm, sizeof(mp->tid_comm), current);
		mp->valid |= KDBUS_ATTACH_TID_COMM;
	}
	if (what & KDBUS_ATTACH_PID_COMM) {
		__get_task_comm(mp->pid_comm, sizeof(mp->pid_comm), current->group_leader);
		mp->valid |= KDBUS_ATTACH_PID_COMM;
	}
	if (what & KDBUS_ATTACH_EXE) {
		mp->exe = kdbus_meta_exe(&mp->root);
		if (mp->exe)
			mp->valid |= KDBUS_ATTACH_EXE;
	}
	if (what & KDBUS_ATTACH_CMDLINE) {
		mp->cmdline = kdbus_meta_cmdline(&mp->cmdline_len);
		if (mp->cmdline)
			mp->valid |= KDBUS_ATTACH_CMDLINE;
	}
	if (what & KDBUS_ATTACH_CGROUP) {
		mp->cgroup = kdbus_meta_cgroup_path(kdbus_meta_task_cgroup);
		if (mp->cgroup)
			mp->valid |= KDBUS_ATTACH_CGROUP;
	}
	if (what & KDBUS_ATTACH_SECLABEL) {
		mp->seclabel = kdbus_meta_seclabel();
		if (mp->seclabel)
			mp->valid |= KDBUS_ATTACH_SECLABEL;
	}
#ifdef CONFIG_AUDITSYSCALL
	if (what & KDBUS_ATTACH_AUDIT) {
		mp->loginuid = audit_get_loginuid(current);
		mp->sessionid = audit_get_sessionid(current);
		mp->valid |= KDBUS_ATTACH_AUDIT;
	}
#endif
}

void kdbus_meta_proc_release(struct kdbus_meta_proc *mp)
{
	if (mp->cred)
		put_cred(mp->cred);
	put_pid(mp->tgid);
	put_pid(mp->pid);
	put_pid(mp->ppid);
	if (mp->exe)
		path_put(&mp->root);
	kfree(mp->exe);
	kfree(mp->cmdline);
	kfree(mp->cgroup);
	kfree(mp->seclabel);
	memset(mp, 0, sizeof(*mp));
}

/**
 * kdbus_meta_collect_mask() - what a SEND collects of its sender
 * @bus:	the bus
 *
 * The costly items are collected only when a connection of the bus (or
 * one that was made since) receives them: the bus counts, per item, the
 * connections whose attach_flags_recv has it.
 *
 * Return: the KDBUS_ATTACH_* items to collect.
 */
u64 kdbus_meta_collect_mask(struct kdbus_bus *bus)
{
	u64 mask = 0;
	int i;

	for (i = 0; i < KDBUS_META_BITS; i++)
		if (atomic_read(&bus->attach_recv_count[i]) > 0)
			mask |= 1ULL << i;
	return mask;
}

/* a connection's attach_flags_recv changes from @old to @new (0: none) */
void kdbus_meta_recv_account(struct kdbus_bus *bus, u64 old, u64 new)
{
	int i;

	for (i = 0; i < KDBUS_META_BITS; i++) {
		if ((new >> i) & 1)
			atomic_inc(&bus->attach_recv_count[i]);
		if ((old >> i) & 1)
			atomic_dec(&bus->attach_recv_count[i]);
	}
}

/* ---- who shows what to whom ------------------------------------------------ */

/* the metadata a connection shows (CONN_INFO): as of its HELLO */
void kdbus_meta_src_conn(struct kdbus_meta_src *m, const struct kdbus_conn *conn)
{
	*m = (struct kdbus_meta_src) {
		.proc = conn->fake ? NULL : &conn->meta,
		.fake = conn->fake,
		.fake_cred = conn->fake ? conn->cred : NULL,
		.description = conn->description,
	};
}

/* the metadata a message shows: its sender's process as collected for
 * this SEND, or who a proxy stands for */
void kdbus_meta_src_send(struct kdbus_meta_src *m, const struct kdbus_conn *conn,
			 const struct kdbus_meta_proc *mp)
{
	kdbus_meta_src_conn(m, conn);
	if (!conn->fake)
		m->proc = mp;
}

static bool kdbus_cred_is_user(const struct cred *reader, const struct cred *c)
{
	return uid_eq(reader->euid, c->uid) && uid_eq(reader->euid, c->euid) &&
	       uid_eq(reader->euid, c->suid);
}

/*
 * Could @reader read what @m shows from the sender's /proc: the process is
 * visible in the reader's pid namespace, and the reader is privileged or
 * the process's user (what /proc allows under hidepid=invisible).  Who a
 * proxy stands for is judged by the ids it gave.
 */
static bool kdbus_meta_proc_readable(const struct kdbus_meta_src *m, const struct kdbus_conn *reader)
{
	const struct cred *c = m->proc ? m->proc->cred : m->fake_cred;

	if (!c)
		return false;
	if (m->proc && !pid_nr_ns(m->proc->tgid, ns_of_pid(reader->pid)))
		return false;
	return reader->privileged || kdbus_cred_is_user(reader->cred, c);
}

/**
 * kdbus_meta_msg_mask() - the metadata items a message carries to @dst
 * @src:	the sender
 * @m:		its metadata for this message
 * @dst:	the receiver
 *
 * Of what @dst receives (attach_flags_recv): the basic items, what @src
 * allows (attach_flags_send), and what @dst could read in @src's /proc.
 *
 * Return: the KDBUS_ATTACH_* items.
 */
u64 kdbus_meta_msg_mask(const struct kdbus_conn *src, const struct kdbus_meta_src *m,
			const struct kdbus_conn *dst)
{
	u64 want = READ_ONCE(dst->attach_recv);
	u64 allowed = READ_ONCE(src->attach_send) | KDBUS_ATTACH_IMPLICIT;

	if ((want & ~allowed) && kdbus_meta_proc_readable(m, dst))
		allowed |= KDBUS_ATTACH_PROC;
	return want & allowed;
}

/* ---- writing a reader's copy ----------------------------------------------- */

/* an id as @ns sees it: the overflow id when it does not map there; an
 * invalid one stays (u32)-1 */
static u64 kdbus_meta_uid(struct user_namespace *ns, kuid_t uid)
{
	return uid_valid(uid) ? from_kuid_munged(ns, uid) : (uid_t)-1;
}

static u64 kdbus_meta_gid(struct user_namespace *ns, kgid_t gid)
{
	return gid_valid(gid) ? from_kgid_munged(ns, gid) : (gid_t)-1;
}

/* the cgroup @path as a reader whose cgroup namespace is rooted at @root
 * sees it: the rest of @path below @root ("/" for @root itself), or NULL
 * when it is not below */
static const char *kdbus_meta_cgroup_below(const char *path, const char *root)
{
	size_t n;

	if (strcmp(root, "/") == 0)
		return path;
	n = strlen(root);
	if (strncmp(path, root, n) != 0)
		return NULL;
	if (path[n] == '\0')
		return "/";
	return path[n] == '/' ? path + n : NULL;
}

/* the items of @mask that @m has and that @reader can be shown */
static u64 kdbus_meta_items(u64 mask, const struct kdbus_meta_src *m, const struct kdbus_conn *reader)
{
	const struct kdbus_meta_proc *mp = m->proc;
	const struct kdbus_meta_fake *f = m->fake;
	u64 have = 0;

	if (mp) {
		have = mp->valid;
		if ((have & KDBUS_ATTACH_EXE) && !path_equal(&mp->root, &reader->root))
			have &= ~KDBUS_ATTACH_EXE;
		if ((have & KDBUS_ATTACH_CGROUP) &&
		    (!reader->cgroup_root || !kdbus_meta_cgroup_below(mp->cgroup, reader->cgroup_root)))
			have &= ~KDBUS_ATTACH_CGROUP;
	} else if (f) {
		have |= f->creds ? KDBUS_ATTACH_CREDS : 0;
		have |= f->pids ? KDBUS_ATTACH_PIDS : 0;
		have |= f->groups ? KDBUS_ATTACH_AUXGROUPS : 0;
		have |= f->pid_comm ? KDBUS_ATTACH_PID_COMM : 0;
		have |= f->seclabel ? KDBUS_ATTACH_SECLABEL : 0;
	}
	if (m->description)
		have |= KDBUS_ATTACH_CONN_DESCRIPTION;
	return mask & have;
}

static const struct cred *kdbus_meta_cred(const struct kdbus_meta_src *m)
{
	return m->proc ? m->proc->cred : m->fake_cred;
}

static size_t kdbus_meta_ngroups(const struct kdbus_meta_src *m)
{
	const struct cred *c = kdbus_meta_cred(m);

	return c->group_info ? c->group_info->ngroups : 0;
}

/**
 * kdbus_meta_size() - the bytes kdbus_meta_write() writes
 * @mask:	the KDBUS_ATTACH_* items wanted (TIMESTAMP and NAMES are the
 *		caller's)
 * @m:		whose metadata
 * @reader:	who reads it: its namespaces, root and cgroup namespace
 *
 * Return: the size, a multiple of 8.
 */
size_t kdbus_meta_size(u64 mask, const struct kdbus_meta_src *m, const struct kdbus_conn *reader)
{
	const struct kdbus_meta_proc *mp = m->proc;
	u64 items = kdbus_meta_items(mask, m, reader);
	size_t size = 0;

	if (items & KDBUS_ATTACH_CREDS)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds));
	if (items & KDBUS_ATTACH_PIDS)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids));
	if (items & KDBUS_ATTACH_AUXGROUPS)
		size += KDBUS_ITEM_SIZE(kdbus_meta_ngroups(m) * sizeof(u64));
	if (items & KDBUS_ATTACH_TID_COMM)
		size += kdbus_string_item_size(strlen(mp->tid_comm));
	if (items & KDBUS_ATTACH_PID_COMM)
		size += kdbus_string_item_size(strlen(mp ? mp->pid_comm : m->fake->pid_comm));
	if (items & KDBUS_ATTACH_EXE)
		size += kdbus_string_item_size(strlen(mp->exe));
	if (items & KDBUS_ATTACH_CMDLINE)
		size += KDBUS_ITEM_SIZE(mp->cmdline_len);
	if (items & KDBUS_ATTACH_CGROUP)
		size += kdbus_string_item_size(strlen(kdbus_meta_cgroup_below(mp->cgroup, reader->cgroup_root)));
	if (items & KDBUS_ATTACH_CAPS)
		size += KDBUS_ITEM_SIZE(KDBUS_META_CAPS_SIZE);
	if (items & KDBUS_ATTACH_SECLABEL)
		size += kdbus_string_item_size(strlen(mp ? mp->seclabel : m->fake->seclabel));
	if (items & KDBUS_ATTACH_AUDIT)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_audit));
	if (items & KDBUS_ATTACH_CONN_DESCRIPTION)
		size += kdbus_string_item_size(strlen(m->description));
	return size;
}

/* a pid of a proxy's PIDS item, as @ns numbers it: the number the proxy
 * gave in its own namespace, else that process's number here if it
 * existed at HELLO, else 0 */
static u64 kdbus_meta_fake_pid(const struct kdbus_meta_fake *f, u64 nr, struct pid *pid,
			       struct pid_namespace *ns)
{
	if (ns == f->pid_ns)
		return nr;
	return pid ? pid_nr_ns(pid, ns) : 0;
}

/*
 * The capabilities of @c as they count in @ns (KDBUS_ITEM_CAPS): those of
 * its own user namespace hold in every namespace below it; a user that
 * made a namespace below its own has every capability in it and below;
 * elsewhere it has none.
 */
static void kdbus_meta_caps_write(u32 *out, const struct cred *c, struct user_namespace *ns)
{
	const kernel_cap_t *sets[] = {
		&c->cap_inheritable, &c->cap_permitted, &c->cap_effective, &c->cap_bset,
	};
	struct user_namespace *it;
	bool below = false, owner = false;
	int s, i;

	for (it = ns; it; it = it->parent) {
		if (it == c->user_ns) {
			below = true;
			break;
		}
		if (it->parent == c->user_ns && uid_eq(it->owner, c->euid)) {
			owner = true;
			break;
		}
	}
	out[0] = CAP_LAST_CAP;
	for (s = 0; s < 4; s++) {
		u32 *set = out + 1 + s * _KERNEL_CAPABILITY_U32S;

		CAP_FOR_EACH_U32(i) {
			if (below)
				set[i] = sets[s]->cap[i];
			else
				set[i] = (owner && s > 0) ? ~0U : 0;
		}
		set[CAP_LAST_U32] &= CAP_LAST_U32_VALID_MASK;
	}
}

static void *kdbus_meta_put_str(void *p, u64 type, const char *s)
{
	return kdbus_item_write(p, type, s, strlen(s) + 1);
}

/**
 * kdbus_meta_write() - write @m's metadata items for @reader
 * @p:		zeroed room of kdbus_meta_size() bytes
 * @mask:	the items wanted, as for kdbus_meta_size()
 * @m:		whose metadata
 * @reader:	who reads it
 *
 * Reads kernel memory only: callable with any lock held.
 *
 * Return: the end of what was written.
 */
void *kdbus_meta_write(void *p, u64 mask, const struct kdbus_meta_src *m, const struct kdbus_conn *reader)
{
	const struct kdbus_meta_proc *mp = m->proc;
	const struct kdbus_meta_fake *f = m->fake;
	const struct cred *cred = kdbus_meta_cred(m);
	struct user_namespace *user_ns = reader->cred->user_ns;
	struct pid_namespace *pid_ns = ns_of_pid(reader->pid);
	u64 items = kdbus_meta_items(mask, m, reader);

	if (items & KDBUS_ATTACH_CREDS) {
		struct kdbus_creds c = {
			.uid = kdbus_meta_uid(user_ns, cred->uid),
			.euid = kdbus_meta_uid(user_ns, cred->euid),
			.suid = kdbus_meta_uid(user_ns, cred->suid),
			.fsuid = kdbus_meta_uid(user_ns, cred->fsuid),
			.gid = kdbus_meta_gid(user_ns, cred->gid),
			.egid = kdbus_meta_gid(user_ns, cred->egid),
			.sgid = kdbus_meta_gid(user_ns, cred->sgid),
			.fsgid = kdbus_meta_gid(user_ns, cred->fsgid),
		};

		p = kdbus_item_write(p, KDBUS_ITEM_CREDS, &c, sizeof(c));
	}
	if (items & KDBUS_ATTACH_PIDS) {
		struct kdbus_pids ps;

		if (mp) {
			ps.pid = pid_nr_ns(mp->tgid, pid_ns);
			ps.tid = pid_nr_ns(mp->pid, pid_ns);
			ps.ppid = pid_nr_ns(mp->ppid, pid_ns);
		} else {
			ps.pid = kdbus_meta_fake_pid(f, f->pids_v.pid, f->tgid, pid_ns);
			ps.tid = kdbus_meta_fake_pid(f, f->pids_v.tid, f->pid, pid_ns);
			ps.ppid = kdbus_meta_fake_pid(f, f->pids_v.ppid, f->ppid, pid_ns);
		}
		p = kdbus_item_write(p, KDBUS_ITEM_PIDS, &ps, sizeof(ps));
	}
	if (items & KDBUS_ATTACH_AUXGROUPS) {
		size_t i, n = kdbus_meta_ngroups(m);
		u64 *gids = (u64 *)kdbus_item_payload(p);

		for (i = 0; i < n; i++)
			gids[i] = kdbus_meta_gid(user_ns, cred->group_info->gid[i]);
		p = kdbus_item_init(p, KDBUS_ITEM_AUXGROUPS, n * sizeof(u64));
	}
	if (items & KDBUS_ATTACH_TID_COMM)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_TID_COMM, mp->tid_comm);
	if (items & KDBUS_ATTACH_PID_COMM)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_PID_COMM, mp ? mp->pid_comm : f->pid_comm);
	if (items & KDBUS_ATTACH_EXE)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_EXE, mp->exe);
	if (items & KDBUS_ATTACH_CMDLINE)
		p = kdbus_item_write(p, KDBUS_ITEM_CMDLINE, mp->cmdline, mp->cmdline_len);
	if (items & KDBUS_ATTACH_CGROUP)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_CGROUP,
				       kdbus_meta_cgroup_below(mp->cgroup, reader->cgroup_root));
	if (items & KDBUS_ATTACH_CAPS) {
		kdbus_meta_caps_write((u32 *)kdbus_item_payload(p), cred, user_ns);
		p = kdbus_item_init(p, KDBUS_ITEM_CAPS, KDBUS_META_CAPS_SIZE);
	}
	if (items & KDBUS_ATTACH_SECLABEL)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_SECLABEL, mp ? mp->seclabel : f->seclabel);
	if (items & KDBUS_ATTACH_AUDIT) {
		struct kdbus_audit a = {
			.sessionid = mp->sessionid,
			.loginuid = kdbus_meta_uid(user_ns, mp->loginuid),
		};

		p = kdbus_item_write(p, KDBUS_ITEM_AUDIT, &a, sizeof(a));
	}
	if (items & KDBUS_ATTACH_CONN_DESCRIPTION)
		p = kdbus_meta_put_str(p, KDBUS_ITEM_CONN_DESCRIPTION, m->description);
	return p;
}

/* ---- proxies ----------------------------------------------------------------- */

void kdbus_meta_fake_free(struct kdbus_meta_fake *fake)
{
	if (!fake)
		return;
	put_pid(fake->tgid);
	put_pid(fake->pid);
	put_pid(fake->ppid);
	kfree(fake->pid_comm);
	kfree(fake->seclabel);
	kfree(fake);
}

/**
 * kdbus_meta_fake_new() - who a proxy's connection stands for
 * @items:	HELLO's items (CREDS, PIDS, AUXGROUPS, PID_COMM, SECLABEL are used)
 * @items_size:	their size
 * @opener:	the credentials of the proxy's fd: the ids are in its namespace
 * @ret_cred:	the credentials to use: the caller's with the faked ids and
 *		groups
 *
 * The pids are numbers of the caller's pid namespace: readers there get
 * them as they are, readers elsewhere the same process's number in their
 * namespace if it existed at HELLO, else 0.
 *
 * Return: the faked metadata, NULL when the items fake nothing, or an
 * ERR_PTR (-EINVAL for ids that do not map, -ENOMEM).
 */
struct kdbus_meta_fake *kdbus_meta_fake_new(const struct kdbus_item *items, size_t items_size,
					    const struct cred *opener, const struct cred **ret_cred)
{
	struct user_namespace *ns = opener->user_ns;
	struct kdbus_meta_fake *fake;
	const struct kdbus_item *it;
	struct cred *cred;
	int r = -ENOMEM;

	*ret_cred = NULL;
	fake = kzalloc(sizeof(*fake), GFP_KERNEL_ACCOUNT);
	cred = prepare_creds();
	if (!fake || !cred)
		goto fail;
	fake->pid_ns = task_active_pid_ns(current);
	/* the items passed kdbus_args_parse() and HELLO's one-of-each check */
	KDBUS_ITEMS_FOREACH(it, items, items_size) {
		size_t len = kdbus_item_payload_size(it);

		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_CREDS: {
			const struct kdbus_creds *c = &it->creds;

			cred->uid = make_kuid(ns, c->uid);
			cred->euid = make_kuid(ns, c->euid);
			cred->suid = make_kuid(ns, c->suid);
			cred->fsuid = make_kuid(ns, c->fsuid);
			cred->gid = make_kgid(ns, c->gid);
			cred->egid = make_kgid(ns, c->egid);
			cred->sgid = make_kgid(ns, c->sgid);
			cred->fsgid = make_kgid(ns, c->fsgid);
			if (!uid_valid(cred->uid) || !uid_valid(cred->euid) || !uid_valid(cred->suid) ||
			    !uid_valid(cred->fsuid) || !gid_valid(cred->gid) || !gid_valid(cred->egid) ||
			    !gid_valid(cred->sgid) || !gid_valid(cred->fsgid))
				goto fail;
			fake->creds = true;
			break;
		}
		case KDBUS_ITEM_PIDS:
			fake->pids_v = it->pids;
			fake->pids = true;
			if (it->pids.pid <= PID_MAX_LIMIT)
				fake->tgid = find_get_pid(it->pids.pid);
			if (it->pids.tid <= PID_MAX_LIMIT)
				fake->pid = find_get_pid(it->pids.tid);
			if (it->pids.ppid <= PID_MAX_LIMIT)
				fake->ppid = find_get_pid(it->pids.ppid);
			break;
		case KDBUS_ITEM_AUXGROUPS: {
			size_t i, n = len / sizeof(u64);
			const u64 *gids = (const u64 *)kdbus_item_str(it);
			struct group_info *gi;

			if (n > NGROUPS_MAX)
				goto fail;
			r = -ENOMEM;
			gi = groups_alloc(n);
			if (!gi)
				goto fail;
			for (i = 0; i < n; i++) {
				gi->gid[i] = make_kgid(ns, gids[i]);
				if (!gid_valid(gi->gid[i])) {
					put_group_info(gi);
					r = -EINVAL;
					goto fail;
				}
			}
			groups_sort(gi);
			set_groups(cred, gi);
			put_group_info(gi);
			fake->groups = true;
			break;
		}
		case KDBUS_ITEM_PID_COMM:
		case KDBUS_ITEM_SECLABEL: {
			char **slot = it->type == KDBUS_ITEM_PID_COMM ? &fake->pid_comm : &fake->seclabel;

			r = -ENOMEM;
			*slot = kstrdup(kdbus_item_str(it), GFP_KERNEL_ACCOUNT);
			if (!*slot)
				goto fail;
			break;
		}
		default:
			break;
		}
	}
	if (!fake->creds && !fake->pids && !fake->groups && !fake->pid_comm && !fake->seclabel) {
		put_cred(cred);
		kdbus_meta_fake_free(fake);
		return NULL;
	}
	if (fake->creds && !fake->groups) {
		/* another identity has none of the caller's groups */
		struct group_info *gi = groups_alloc(0);

		r = -ENOMEM;
		if (!gi)
			goto fail;
		set_groups(cred, gi);
		put_group_info(gi);
	}
	*ret_cred = cred;
	return fake;
fail:
	if (cred)
		put_cred(cred);
	kdbus_meta_fake_free(fake);
	return ERR_PTR(r);
}
