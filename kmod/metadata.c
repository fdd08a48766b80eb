// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metadata.c - metadata items: credentials, process ids, the connection's
 * description, as a sender or a queried connection shows them
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "internal.h"

size_t kdbus_meta_size(u64 mask, const struct cred *cred, struct pid *pid, const char *description)
{
	size_t size = 0;

	if ((mask & KDBUS_ATTACH_CREDS) && cred)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds));
	if ((mask & KDBUS_ATTACH_PIDS) && pid)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids));
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && description)
		size += KDBUS_ITEM_SIZE(strlen(description) + 1);
	return size;
}

/*
 * Write the metadata items of @mask into @p (zeroed, kdbus_meta_size()
 * bytes).  Identifiers are those of the initial namespaces; translation
 * into the reader's namespaces is not done yet.
 */
void *kdbus_meta_write(void *p, u64 mask, const struct cred *cred, struct pid *pid,
		       struct pid *tid, const char *description)
{
	if ((mask & KDBUS_ATTACH_CREDS) && cred) {
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
	if ((mask & KDBUS_ATTACH_PIDS) && pid) {
		struct kdbus_pids ps = { .pid = pid_nr(pid), .tid = pid_nr(tid ? tid : pid) };
		struct task_struct *task;

		rcu_read_lock();
		task = pid_task(pid, PIDTYPE_PID);
		if (task)
			ps.ppid = task_tgid_nr(rcu_dereference(task->real_parent));
		rcu_read_unlock();
		p = kdbus_item_put(p, KDBUS_ITEM_PIDS, &ps, sizeof(ps));
	}
	if ((mask & KDBUS_ATTACH_CONN_DESCRIPTION) && description)
		p = kdbus_item_put(p, KDBUS_ITEM_CONN_DESCRIPTION, description, strlen(description) + 1);
	return p;
}

