// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metadata.c - metadata items: credentials, process ids, supplementary
 * groups, the process name, the security label and the connection's
 * description, as a sender or a queried connection shows them
 *
 * A connection made by a privileged proxy may say who it stands for
 * (HELLO's CREDS, PIDS, AUXGROUPS, PID_COMM and SECLABEL items): it then
 * shows only what it said, never the proxy's own process.
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "internal.h"

static bool kdbus_meta_has_groups(const struct kdbus_meta_src *m)
{
	return m->fake ? m->fake->groups : true;
}

static size_t kdbus_meta_ngroups(const struct kdbus_meta_src *m)
{
	return m->cred->group_info ? m->cred->group_info->ngroups : 0;
}

static const char *kdbus_meta_comm(const struct kdbus_meta_src *m)
{
	return m->fake ? m->fake->pid_comm : m->comm;
}

size_t kdbus_meta_size(u64 mask, const struct kdbus_meta_src *m)
{
	const char *comm = kdbus_meta_comm(m);
	size_t size = 0;

	if ((mask & KDBUS_ATTACH_CREDS) && m->cred && (!m->fake || m->fake->creds))
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds));
	if ((mask & KDBUS_ATTACH_PIDS) && (m->fake ? m->fake->pids : m->pid != NULL))
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids));
	if ((mask & KDBUS_ATTACH_AUXGROUPS) && m->cred && kdbus_meta_has_groups(m))
		size += KDBUS_ITEM_SIZE(kdbus_meta_ngroups(m) * sizeof(u64));
	if ((mask & KDBUS_ATTACH_PID_COMM) && comm)
		size += KDBUS_ITEM_SIZE(strlen(comm) + 1);
	if ((mask & KDBUS_ATTACH_SECLABEL) && m->fake && m->fake->seclabel)
		size += KDBUS_ITEM_SIZE(strlen(m->fake->seclabel) + 1);
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && m->description)
		size += KDBUS_ITEM_SIZE(strlen(m->description) + 1);
	return size;
}

/*
 * Write the metadata items of @mask into @p (zeroed, kdbus_meta_size()
 * bytes).  Identifiers are those of the initial namespaces; translation
 * into the reader's namespaces is not done yet.
 */
void *kdbus_meta_write(void *p, u64 mask, const struct kdbus_meta_src *m)
{
	const struct cred *cred = m->cred;
	const char *comm = kdbus_meta_comm(m);

	if ((mask & KDBUS_ATTACH_CREDS) && cred && (!m->fake || m->fake->creds)) {
		struct kdbus_creds c = {
			.uid = from_kuid_munged(&init_user_ns, cred->uid),
			.euid = from_kuid_munged(&init_user_ns, cred->euid),
			.suid = from_kuid_munged(&init_user_ns, cred->suid),
			.fsuid = from_kuid_munged(&init_user_ns, cred->fsuid),
			.gid = from_kgid_munged(&init_user_ns, cred->gid),
			.egid = from_kgid_munged(&init_user_ns, cred->egid),
			.sgid = from_kgid_munged(&init_user_ns, cred->sgid),
			.fsgid = from_kgid_munged(&init_user_ns, cred->fsgid),
		};

		p = kdbus_item_put(p, KDBUS_ITEM_CREDS, &c, sizeof(c));
	}
	if ((mask & KDBUS_ATTACH_PIDS) && m->fake && m->fake->pids) {
		p = kdbus_item_put(p, KDBUS_ITEM_PIDS, &m->fake->pids_v, sizeof(m->fake->pids_v));
	} else if ((mask & KDBUS_ATTACH_PIDS) && !m->fake && m->pid) {
		struct kdbus_pids ps = { .pid = pid_nr(m->pid), .tid = pid_nr(m->tid ? m->tid : m->pid) };
		struct task_struct *task;

		rcu_read_lock();
		task = pid_task(m->pid, PIDTYPE_PID);
		if (task)
			ps.ppid = task_tgid_nr(rcu_dereference(task->real_parent));
		rcu_read_unlock();
		p = kdbus_item_put(p, KDBUS_ITEM_PIDS, &ps, sizeof(ps));
	}
	if ((mask & KDBUS_ATTACH_AUXGROUPS) && cred && kdbus_meta_has_groups(m)) {
		size_t i, n = kdbus_meta_ngroups(m);
		struct kdbus_item *it = p;
		u64 *gids = (u64 *)kdbus_item_str(it);

		it->size = KDBUS_ITEM_HEADER_SIZE + n * sizeof(u64);
		it->type = KDBUS_ITEM_AUXGROUPS;
		for (i = 0; i < n; i++)
			gids[i] = from_kgid_munged(&init_user_ns, cred->group_info->gid[i]);
		p = (u8 *)p + KDBUS_ITEM_SIZE(n * sizeof(u64));
	}
	if ((mask & KDBUS_ATTACH_PID_COMM) && comm)
		p = kdbus_item_put(p, KDBUS_ITEM_PID_COMM, comm, strlen(comm) + 1);
	if ((mask & KDBUS_ATTACH_SECLABEL) && m->fake && m->fake->seclabel)
		p = kdbus_item_put(p, KDBUS_ITEM_SECLABEL, m->fake->seclabel, strlen(m->fake->seclabel) + 1);
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && m->description)
		p = kdbus_item_put(p, KDBUS_ITEM_CONN_DESCRIPTION, m->description, strlen(m->description) + 1);
	return p;
}

/* the metadata a connection shows (CONN_INFO): as of its HELLO */
void kdbus_meta_src_conn(struct kdbus_meta_src *m, const struct kdbus_conn *conn)
{
	*m = (struct kdbus_meta_src) {
		.cred = conn->cred,
		.pid = conn->fake ? NULL : conn->pid,
		.tid = conn->fake ? NULL : conn->tid,
		.comm = conn->comm,
		.fake = conn->fake,
		.description = conn->description,
	};
}

/* the metadata a message shows: its sender now, or who a proxy stands for */
void kdbus_meta_src_current(struct kdbus_meta_src *m, const struct kdbus_conn *conn, char *comm_buf)
{
	if (conn->fake) {
		kdbus_meta_src_conn(m, conn);
		return;
	}
	__get_task_comm(comm_buf, TASK_COMM_LEN, current);
	*m = (struct kdbus_meta_src) {
		.cred = current_cred(),
		.pid = task_tgid(current),
		.tid = task_pid(current),
		.comm = comm_buf,
		.description = conn->description,
	};
}

void kdbus_meta_fake_free(struct kdbus_meta_fake *fake)
{
	if (!fake)
		return;
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
	KDBUS_ITEMS_FOREACH(it, items, items_size) {
		size_t len = it->size - KDBUS_ITEM_HEADER_SIZE;

		r = -EINVAL;
		switch (it->type) {
		case KDBUS_ITEM_CREDS: {
			const struct kdbus_creds *c = &it->creds;

			if (len != sizeof(*c))
				goto fail;
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
			if (len != sizeof(struct kdbus_pids))
				goto fail;
			fake->pids_v = it->pids;
			fake->pids = true;
			break;
		case KDBUS_ITEM_AUXGROUPS: {
			size_t i, n = len / sizeof(u64);
			const u64 *gids = (const u64 *)kdbus_item_str(it);
			struct group_info *gi;

			if (len % sizeof(u64) || n > NGROUPS_MAX)
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

			if (!kdbus_item_is_string(it) || *slot)
				goto fail;
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
