/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - objects of the kdbus module
 *
 * domain (one per kdbusfs mount) -> bus (one per BUS_MAKE, lives as long as
 * the control fd that made it) -> endpoint (the bus's `bus` file, and the
 * custom endpoints ENDPOINT_MAKE adds, each as long as the fd that made
 * it) -> connection (one per HELLO on an endpoint) -> pool (a shmem file
 * the connection maps read-only) with slices holding received messages
 * and query results.
 *
 * Lock order: bus->name_lock (rwsem) -> bus->policy_lock (rwsem) ->
 * bus->conn_lock (rwsem) -> ep->lock (mutex) -> conn->lock (mutex; two at
 * once only for an activator's handover, lower address first) ->
 * bus->reply_lock.  bus->node_lock (mutex) is taken with none of them,
 * before the VFS's inode locks.  No lock is held while user memory is
 * read or written (kmod/README.md, "Threat model").
 */
#ifndef KDBUS_INTERNAL_H
#define KDBUS_INTERNAL_H

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "kdbus/kdbus.h"
#include "kshared/item.h"
#include "kshared/name.h"

#define KDBUS_SUPER_MAGIC		0x44427573
#define KDBUS_SYSNAME_MAX_LEN		63
#define KDBUS_CMD_MAX_SIZE		(32 * 1024)
#define KDBUS_MSG_MAX_SIZE		(8 * 1024)
#define KDBUS_MSG_MAX_ITEMS		128
#define KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE	(2 * 1024 * 1024)
#define KDBUS_BUS_BLOOM_MAX_SIZE	4096
#define KDBUS_CONN_MAX_MSGS		256	/* queued per sending user */
#define KDBUS_CONN_MAX_FDS_PER_USER	16	/* fds queued per sending user */
#define KDBUS_CONN_MAX_REQUESTS_PENDING	128
#define KDBUS_MSG_MAX_MEMFD_ITEMS	16
#define KDBUS_USER_MAX_CONN		1024	/* connections per user and domain */
#define KDBUS_USER_MAX_BUSES		16	/* buses per user and domain */
#define KDBUS_META_BITS			14	/* KDBUS_ATTACH_* bits */
#define KDBUS_META_CMDLINE_MAX		4096	/* bytes of a CMDLINE item */

/* metadata every receiver may have, whatever the sender allows */
#define KDBUS_ATTACH_IMPLICIT	(KDBUS_ATTACH_TIMESTAMP | KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | \
				 KDBUS_ATTACH_AUXGROUPS | KDBUS_ATTACH_NAMES |		      \
				 KDBUS_ATTACH_CONN_DESCRIPTION)
/* what a process's /proc shows */
#define KDBUS_ATTACH_PROC	(KDBUS_ATTACH_TID_COMM | KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_EXE |   \
				 KDBUS_ATTACH_CMDLINE | KDBUS_ATTACH_CGROUP | KDBUS_ATTACH_CAPS |    \
				 KDBUS_ATTACH_SECLABEL | KDBUS_ATTACH_AUDIT)

/* a policy database: entries by name (policy.c) */
struct kdbus_policy_db {
	DECLARE_HASHTABLE(entries, 6);	/* struct kdbus_policy_entry */
};

/* one kdbusfs mount; its buses keep it (a reply timeout may still stamp a
 * message after the last fd is closed) */
struct kdbus_domain {
	struct kref kref;
	struct super_block *sb;
	struct user_namespace *user_ns;	/* of the mount: bus names, uids */
	atomic64_t seqnum;		/* message and notification sequence */
	struct mutex user_lock;		/* protects users */
	DECLARE_HASHTABLE(users, 6);	/* struct kdbus_user by uid */
	struct ida user_ida;		/* their quota ids */
};

/* a user of a domain: what it owns there, and its quota id */
struct kdbus_user {
	struct kref kref;
	struct kdbus_domain *domain;
	struct hlist_node hentry;	/* in domain->users */
	kuid_t uid;
	unsigned int id;		/* 1..: its slot in every connection's quota */
	atomic_t buses, conns;
};

/* what a process shows, collected once into kernel memory (metadata.c) */
struct kdbus_meta_proc {
	u64 valid;			/* the KDBUS_ATTACH_* items collected */
	const struct cred *cred;	/* CREDS, AUXGROUPS, CAPS */
	struct pid *tgid, *pid, *ppid;	/* PIDS */
	char tid_comm[TASK_COMM_LEN];
	char pid_comm[TASK_COMM_LEN];
	char *exe;			/* EXE: its path as @root sees it */
	struct path root;		/* the process's root directory, with @exe */
	char *cmdline;			/* CMDLINE: the arguments, NUL-separated */
	size_t cmdline_len;		/* with the last NUL */
	char *cgroup;			/* CGROUP: in the default hierarchy, from its root */
	char *seclabel;			/* SECLABEL: the LSM's label of the process */
	kuid_t loginuid;		/* AUDIT */
	unsigned int sessionid;
};

struct kdbus_bus {
	struct kref kref;
	struct kdbus_domain *domain;
	struct kdbus_user *creator;	/* charged for the bus */
	char name[KDBUS_SYSNAME_MAX_LEN + 1];
	u64 flags;			/* BUS_MAKE flags */
	u64 attach_req;			/* metadata every sender must attach */
	struct kdbus_bloom_parameter bloom;
	u8 id128[16];

	struct rw_semaphore conn_lock;	/* protects the fields below */
	bool active;			/* false once the control fd is closed */
	u64 last_id;
	DECLARE_HASHTABLE(conns, 8);	/* by id */
	struct hlist_head monitors;	/* invisible: by no id, in no list */

	struct rw_semaphore name_lock;	/* the registry and every conn->names */
	DECLARE_HASHTABLE(names, 8);	/* struct kdbus_name_entry by name */
	u64 last_name_id;

	struct rw_semaphore policy_lock;	/* after the name lock: every policy db */
	struct kdbus_policy_db policy;	/* the bus's */

	struct mutex reply_lock;	/* after any connection lock */
	struct list_head replies;	/* struct kdbus_reply */

	spinlock_t notify_lock;
	struct list_head notify_list;	/* notifications not yet delivered */
	struct mutex notify_flush_lock;	/* delivers them in order */

	/* per metadata item, the connections that receive it */
	atomic_t attach_recv_count[KDBUS_META_BITS];

	/* the creator, as captured at BUS_MAKE */
	const struct cred *creator_cred;
	struct kdbus_meta_proc creator_meta;
	struct mutex node_lock;		/* the bus's files: the fields below */
	struct dentry *dir;		/* <domain>/<name>, pinned until shutdown */
	struct list_head eps;		/* custom endpoints with a file */
};

/* an entry point to a bus: its `bus` file, or a custom endpoint */
struct kdbus_ep {
	struct kref kref;
	struct kdbus_bus *bus;
	bool custom;			/* made by ENDPOINT_MAKE */
	struct kdbus_user *user;	/* custom: its connections are accounted to it */
	char name[KDBUS_SYSNAME_MAX_LEN + 1];
	struct dentry *dentry;		/* custom: its file, until removed (bus->node_lock) */
	struct list_head bus_link;	/* custom: in bus->eps (bus->node_lock) */
	struct kdbus_policy_db policy;	/* custom: its policy (bus->policy_lock) */
	struct list_head policy_entries;	/* the same entries, as their owner's */
	struct mutex lock;		/* protects the below */
	bool active;			/* false once its owner's fd is closed */
	struct list_head conns;		/* its connections */
};

struct kdbus_pool;

/* what a proxy's connection says about who it stands for */
struct kdbus_meta_fake {
	bool creds, pids, groups;	/* creds and groups are in conn->cred */
	struct kdbus_pids pids_v;	/* as given, numbers of @pid_ns */
	struct pid_namespace *pid_ns;	/* the proxy's (its conn->pid holds it) */
	struct pid *tgid, *pid, *ppid;	/* the same processes, where they existed */
	char *pid_comm;
	char *seclabel;
};

/* whose metadata an item list shows */
struct kdbus_meta_src {
	const struct kdbus_meta_proc *proc;	/* a process's, or NULL */
	const struct kdbus_meta_fake *fake;	/* who a proxy stands for, or NULL */
	const struct cred *fake_cred;	/* the proxy's: the faked ids and groups */
	const char *description;
};

struct kdbus_conn {
	struct kref kref;
	struct kdbus_bus *bus;
	struct kdbus_ep *ep;		/* the endpoint it said HELLO on */
	struct list_head ep_link;	/* in ep->conns, under ep->lock */
	u64 id;
	u64 flags;			/* HELLO flags */
	bool privileged;		/* the opener had CAP_IPC_OWNER (never on a custom endpoint) */
	bool owner;			/* privileged, or the bus creator's user (idem) */
	struct kdbus_user *user;	/* its own, charged for it; and its quota as a sender */
	struct list_head policy;	/* the policy entries it installed */
	u64 attach_send, attach_recv;
	char *description;
	const struct cred *cred;	/* of the opener of the fd, or who a proxy stands for */
	struct kdbus_meta_fake *fake;	/* the proxy's items, or NULL */
	struct kdbus_meta_proc meta;	/* the process that said HELLO (none for a proxy) */
	struct pid *pid;		/* that process: the pid namespace it reads in */
	struct path root;		/* its root directory: EXE items are relative to it */
	char *cgroup_root;		/* the root of its cgroup namespace (NULL: unknown) */
	struct hlist_node hentry;	/* in bus->conns or bus->monitors, under bus->conn_lock */
	struct list_head names;		/* struct kdbus_name_owner, under bus->name_lock */
	unsigned int n_names;
	atomic_t n_requests;		/* its calls waiting for a reply */

	struct mutex lock;		/* protects everything below */
	bool connected;
	struct list_head matches;	/* struct kdbus_match */
	unsigned int n_matches;
	u64 lost_count;			/* broadcasts and notifications lost */
	struct kdbus_pool *pool;
	struct xarray quota;		/* per sending user id (0: the kernel), packed */
	struct list_head queue;		/* of struct kdbus_queue_entry */
	unsigned int n_msgs;
	struct list_head parked_replies;	/* its synchronous calls a signal interrupted */
	wait_queue_head_t wait;
};

#define KDBUS_HELLO_ROLES (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR)

/* a message in a connection's queue */
struct kdbus_queue_entry {
	struct list_head entry;		/* in conn->queue */
	struct kdbus_reply *reply;	/* a call: its tracker */
	struct file **files;		/* fds and memfds to install at RECV */
	u64 *fd_pos;			/* where in the pool each one's number goes */
	unsigned int n_files;
	unsigned int n_fds;		/* of them, KDBUS_ITEM_FDS (charged to the quota) */
	struct kdbus_user *user;	/* the sender's, charged; NULL: the kernel */
	size_t charge;			/* bytes charged to it */
	bool holds_request;		/* a REPLY_TIMEOUT or REPLY_DEAD: the call's slot
					 * in the receiver's n_requests, until received */
	u64 dst_name_id;		/* sent to a name: which */
	struct kdbus_slice *slice;
	u64 msg_size;			/* the kdbus_msg with its items */
	s64 priority;
};

/* a message on its way: what every receiver's copy is built from */
struct kdbus_send_vec {
	u64 size;
	const u8 *data;			/* in kernel memory; NULL: that many NUL bytes, not stored */
};

struct kdbus_send_memfd {
	struct file *f;
	u64 start, size;
};

struct kdbus_staging {
	const struct kdbus_msg *msg;	/* header as sent */
	struct kdbus_conn *src;		/* NULL: a kernel message */
	const char *dst_name;
	const struct kdbus_send_vec *vecs;
	size_t n_vecs;
	const struct kdbus_item *notify;	/* of a kernel message */
	struct file **fds;		/* KDBUS_ITEM_FDS, installed at RECV */
	size_t n_fds;
	const struct kdbus_send_memfd *memfds;	/* PAYLOAD_MEMFD, installed at RECV */
	size_t n_memfds;
	u64 dst_name_id;		/* sent to a name: which (activator moves) */
	struct kdbus_meta_src meta;	/* the sender's, at send time */
	u64 seq, monotonic_ns, realtime_ns;
	bool count_lost;		/* a failure counts as lost for the receiver */
	bool holds_request;		/* the entry takes over a pending call's slot */
	struct kdbus_reply *reply;	/* a call: its tracker, linked once queued */
	struct kdbus_reply *sync_reply;	/* the answer to a synchronous call: not
					 * queued, a public slice handed to it */
};

struct kdbus_reply {
	struct kref kref;
	struct list_head entry;		/* in bus->replies */
	bool linked;			/* under bus->reply_lock */
	struct kdbus_conn *reply_src;	/* waits for the answer */
	struct kdbus_conn *reply_dst;	/* owes it */
	u64 cookie;
	u64 deadline_ns;		/* CLOCK_MONOTONIC */
	bool sync;
	struct delayed_work timeout_work;	/* asynchronous calls */
	wait_queue_head_t wait;		/* synchronous calls: the outcome */
	bool done;
	int err;
	struct kdbus_slice *slice;	/* the answer, with a kernel reference */
	struct kdbus_queue_entry *answer_files;	/* its fds and memfds, to install, or NULL */
	u64 msg_size;
	struct list_head parked_link;	/* in reply_src->parked_replies, under its lock */
	bool parked;			/* a synchronous wait interrupted by a signal */
};

/* what a user message shows the match rules */
struct kdbus_match_msg {
	struct kdbus_conn *src;
	u64 dst_id;
	const struct kdbus_bloom_filter *bloom;	/* the bus's size, or NULL */
};

/* main.c / fs.c */
struct kdbus_domain *kdbus_domain_ref(struct kdbus_domain *domain);
struct kdbus_domain *kdbus_domain_unref(struct kdbus_domain *domain);
bool kdbus_file_is_kdbus(const struct file *f);
int kdbus_fs_init(void);
void kdbus_fs_exit(void);
struct dentry *kdbus_fs_make_bus_dir(struct kdbus_bus *bus, umode_t dir_mode, umode_t ep_mode,
				     struct kdbus_ep *ep);
struct dentry *kdbus_fs_make_ep_node(struct dentry *dir, struct kdbus_ep *ep, umode_t mode, kuid_t uid,
				     kgid_t gid);
void kdbus_fs_remove(struct dentry *dentry);

/* user.c */
struct kdbus_user *kdbus_user_get(struct kdbus_domain *domain, kuid_t uid);
struct kdbus_user *kdbus_user_new_anon(struct kdbus_domain *domain);
struct kdbus_user *kdbus_user_ref(struct kdbus_user *u);
struct kdbus_user *kdbus_user_unref(struct kdbus_user *u);
int kdbus_conn_quota_charge(struct kdbus_conn *conn, struct kdbus_user *u, size_t size, unsigned int fds);
void kdbus_conn_quota_uncharge(struct kdbus_conn *conn, struct kdbus_user *u, size_t size, unsigned int fds);

/* bus.c */
struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus);
struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus);
struct kdbus_cmd *kdbus_bus_make_args_parse(void __user *argp, size_t *ret_items_size);
int kdbus_sysname_check(struct kdbus_domain *domain, const char *name, size_t len);
int kdbus_bus_make(struct kdbus_domain *domain, struct kdbus_cmd *cmd, size_t items_size,
		   struct kdbus_meta_proc *creator, struct kdbus_bus **ret);
void kdbus_bus_shutdown(struct kdbus_bus *bus);
struct kdbus_conn *kdbus_bus_find_conn(struct kdbus_bus *bus, u64 id);
int kdbus_cmd_bus_creator_info(struct kdbus_conn *conn, void __user *argp);

/* connection.c */
struct kdbus_conn *kdbus_conn_ref(struct kdbus_conn *conn);
struct kdbus_conn *kdbus_conn_unref(struct kdbus_conn *conn);
struct kdbus_cmd_hello *kdbus_hello_args_parse(void __user *argp, size_t *ret_items_size);
struct kdbus_conn *kdbus_hello_connect(struct kdbus_ep *ep, struct file *file,
				       struct kdbus_cmd_hello *cmd, size_t items_size);
int kdbus_hello_answer(struct kdbus_conn *conn, void __user *argp, struct kdbus_cmd_hello *cmd);
void kdbus_conn_disconnect(struct kdbus_conn *conn);
int kdbus_cmd_byebye(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_conn_info(struct kdbus_conn *conn, void __user *argp);
/* message.c */
int kdbus_cmd_send(struct kdbus_conn *conn, struct file *file, void __user *argp);

/* queue.c: the entries under the connection's lock */
void kdbus_queue_entry_free(struct kdbus_queue_entry *e);
int kdbus_conn_install_fds(struct kdbus_conn *conn, struct kdbus_queue_entry *e);
void kdbus_conn_flush_queue(struct kdbus_conn *conn, struct list_head *gone);
void kdbus_queue_entries_free(struct list_head *gone);
int kdbus_cmd_recv(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_free(struct kdbus_conn *conn, void __user *argp);
__poll_t kdbus_conn_poll(struct kdbus_conn *conn, struct file *file, poll_table *wait);
int kdbus_conn_mmap(struct kdbus_conn *conn, struct vm_area_struct *vma);
struct kdbus_slice *kdbus_conn_slice_public(struct kdbus_conn *conn, const void *data, size_t size);
int kdbus_conn_slice_tell(struct kdbus_conn *conn, struct kdbus_slice *slice, int copy_result);
/* metadata.c */
void kdbus_meta_proc_collect(struct kdbus_meta_proc *mp, u64 what);
void kdbus_meta_proc_release(struct kdbus_meta_proc *mp);
char *kdbus_meta_cgroup_root(void);
u64 kdbus_meta_collect_mask(struct kdbus_bus *bus);
void kdbus_meta_recv_account(struct kdbus_bus *bus, u64 old, u64 new);
void kdbus_meta_src_conn(struct kdbus_meta_src *m, const struct kdbus_conn *conn);
void kdbus_meta_src_send(struct kdbus_meta_src *m, const struct kdbus_conn *conn,
			 const struct kdbus_meta_proc *mp);
u64 kdbus_meta_msg_mask(const struct kdbus_conn *src, const struct kdbus_meta_src *m,
			const struct kdbus_conn *dst);
size_t kdbus_meta_size(u64 mask, const struct kdbus_meta_src *m, const struct kdbus_conn *reader);
void *kdbus_meta_write(void *p, u64 mask, const struct kdbus_meta_src *m, const struct kdbus_conn *reader);
struct kdbus_meta_fake *kdbus_meta_fake_new(const struct kdbus_item *items, size_t items_size,
					    const struct cred *opener, const struct cred **ret_cred);
void kdbus_meta_fake_free(struct kdbus_meta_fake *fake);

int kdbus_conn_enqueue(struct kdbus_conn *dst, const struct kdbus_staging *s);
void kdbus_staging_stamp(struct kdbus_staging *s, struct kdbus_bus *bus);
int kdbus_conn_enqueue_kernel(struct kdbus_conn *dst, const struct kdbus_item *notify,
			      u64 dst_id, u64 cookie_reply, const struct kdbus_staging *stamp);
void kdbus_bus_eavesdrop(struct kdbus_bus *bus, const struct kdbus_staging *s);
int kdbus_cmd_update(struct kdbus_conn *conn, void __user *argp);

/* reply.c */
extern struct workqueue_struct *kdbus_wq;
int kdbus_reply_init(void);
void kdbus_reply_exit(void);
struct kdbus_reply *kdbus_reply_new(struct kdbus_conn *src, struct kdbus_conn *dst, u64 cookie,
				    u64 deadline_ns, bool sync);
struct kdbus_reply *kdbus_reply_ref(struct kdbus_reply *r);
struct kdbus_reply *kdbus_reply_unref(struct kdbus_reply *r);
void kdbus_reply_link(struct kdbus_reply *r);
bool kdbus_reply_take(struct kdbus_reply *r);
struct kdbus_reply *kdbus_reply_find_take(struct kdbus_conn *dst, u64 src_id, u64 cookie);
void kdbus_reply_move(struct kdbus_reply *r, struct kdbus_conn *to);
bool kdbus_reply_complete(struct kdbus_reply *r, int err, struct kdbus_slice *slice, u64 msg_size,
			  struct kdbus_queue_entry *files);
void kdbus_reply_notify(struct kdbus_reply *r, bool timeout, int sync_err);
void kdbus_reply_conn_gone(struct kdbus_conn *conn);
void kdbus_reply_park(struct kdbus_reply *r);
struct kdbus_reply *kdbus_reply_resume(struct kdbus_conn *src, u64 cookie);

/* match.c */
int kdbus_cmd_match_add(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_match_remove(struct kdbus_conn *conn, void __user *argp);
void kdbus_match_flush(struct kdbus_conn *conn);
bool kdbus_match_user(struct kdbus_conn *conn, const struct kdbus_match_msg *msg);
bool kdbus_match_kernel(struct kdbus_conn *conn, const struct kdbus_item *notify);

/* notify.c */
void kdbus_notify_id_change(struct kdbus_bus *bus, u64 type, u64 id, u64 flags);
void kdbus_notify_name_change(struct kdbus_bus *bus, u64 type, u64 old_id, u64 new_id,
			      u64 old_flags, u64 new_flags, const char *name);
void kdbus_notify_flush(struct kdbus_bus *bus);

/* policy.c */
void kdbus_policy_db_init(struct kdbus_policy_db *db);
int kdbus_policy_set(struct kdbus_bus *bus, struct kdbus_policy_db *db, const void *owner,
		     struct list_head *owner_list, struct user_namespace *ns,
		     const struct kdbus_item *items, size_t items_size, size_t max_names, bool wildcards);
void kdbus_policy_remove(struct kdbus_bus *bus, struct list_head *owner_list);
void kdbus_policy_list_free(struct list_head *list);
int kdbus_policy_query_locked(const struct kdbus_policy_db *db, const struct cred *cred, const char *name);
bool kdbus_conn_may_own(struct kdbus_conn *conn, const char *name);
bool kdbus_conn_may_talk_locked(struct kdbus_conn *conn, struct kdbus_conn *to);
bool kdbus_conn_may_see_name_locked(const struct kdbus_conn *conn, const char *name);
bool kdbus_conn_may_see_locked(struct kdbus_conn *conn, struct kdbus_conn *whom);

/* endpoint.c */
struct kdbus_ep *kdbus_ep_new_default(struct kdbus_bus *bus);
struct kdbus_ep *kdbus_ep_ref(struct kdbus_ep *ep);
struct kdbus_ep *kdbus_ep_unref(struct kdbus_ep *ep);
struct kdbus_ep *kdbus_cmd_ep_make(struct kdbus_ep *on, struct file *file, void __user *argp);
int kdbus_cmd_ep_update(struct kdbus_ep *ep, struct file *file, void __user *argp);
void kdbus_ep_deactivate(struct kdbus_ep *ep);
int kdbus_ep_add_conn(struct kdbus_ep *ep, struct kdbus_conn *conn);
void kdbus_ep_remove_conn(struct kdbus_conn *conn);
void kdbus_bus_remove_nodes(struct kdbus_bus *bus);

/* names.c */
bool kdbus_names_policy_allows(const struct kdbus_policy_db *db, struct kdbus_conn *conn,
			       const struct cred *cred, int level);
bool kdbus_name_owned_by(struct kdbus_bus *bus, const char *name, struct kdbus_conn *conn);
#define KDBUS_CONN_MAX_NAMES 256
int kdbus_cmd_name_acquire(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_name_release(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_list(struct kdbus_conn *conn, void __user *argp);
void kdbus_names_release_all(struct kdbus_conn *conn);
struct kdbus_conn *kdbus_name_lookup_owner(struct kdbus_bus *bus, const char *name, u64 *ret_name_id);
int kdbus_name_activator_add(struct kdbus_conn *conn, const char *name);
bool kdbus_name_has_activator(struct kdbus_bus *bus, const char *name);
void kdbus_conn_move_messages(struct kdbus_conn *to, struct kdbus_conn *from, u64 name_id);
size_t kdbus_names_meta_size(struct kdbus_conn *conn, const struct kdbus_conn *reader);
void *kdbus_names_meta_write(void *p, struct kdbus_conn *conn, const struct kdbus_conn *reader);

/* pool.c: every call with the owning connection's lock held */
struct kdbus_slice;
struct kdbus_pool *kdbus_pool_new(const char *name, size_t size);
void kdbus_pool_free(struct kdbus_pool *pool);
size_t kdbus_pool_size(const struct kdbus_pool *pool);
size_t kdbus_pool_accounted(const struct kdbus_pool *pool);
struct kdbus_slice *kdbus_pool_slice_alloc(struct kdbus_pool *pool, size_t size, bool accounted);
void kdbus_pool_slice_get(struct kdbus_slice *slice);
void kdbus_pool_slice_put(struct kdbus_pool *pool, struct kdbus_slice *slice);
void kdbus_slice_publish(struct kdbus_slice *slice);
void kdbus_pool_slice_unpublish(struct kdbus_pool *pool, struct kdbus_slice *slice);
void kdbus_slice_set_queued(struct kdbus_slice *slice);
void kdbus_pool_slice_dequeue(struct kdbus_pool *pool, struct kdbus_slice *slice);
void kdbus_pool_slice_unaccount(struct kdbus_pool *pool, struct kdbus_slice *slice);
struct kdbus_slice *kdbus_pool_slice_find(struct kdbus_pool *pool, u64 off);
size_t kdbus_slice_offset(const struct kdbus_slice *slice);
size_t kdbus_slice_size(const struct kdbus_slice *slice);
bool kdbus_slice_is_public(const struct kdbus_slice *slice);
int kdbus_pool_write(struct kdbus_pool *pool, size_t off, const void *data, size_t len);
int kdbus_pool_read(struct kdbus_pool *pool, size_t off, void *data, size_t len);
int kdbus_pool_mmap(struct kdbus_pool *pool, struct vm_area_struct *vma);

/* item.c */
void *kdbus_cmd_copy(void __user *argp, size_t min, size_t max);
int kdbus_negotiate(void __user *argp, void *cmd, size_t items_off, u64 valid_flags,
		    const u64 *types, size_t n_types);
bool kdbus_item_allowed(u64 type, const u64 *types, size_t n_types);
int kdbus_attach_flags_check(u64 *flags);
void *kdbus_args_parse(void __user *argp, size_t min, size_t items_off, u64 valid_flags,
		       const u64 *types, size_t n_types, size_t *ret_items_size);
void *kdbus_cmd_simple(void __user *argp, size_t min, size_t items_off, u64 valid);

/*
 * Payloads of items, reached by offset and not through the uapi's
 * zero-length members: FORTIFY_SOURCE takes those for objects of size 0
 * and panics on a strlen() or memcpy() through them.
 */
static inline char *kdbus_item_str(const struct kdbus_item *it)
{
	return (char *)it + KDBUS_ITEM_HEADER_SIZE;
}

static inline char *kdbus_item_name_change_str(const struct kdbus_item *it)
{
	return (char *)it + KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change);
}

static inline char *kdbus_item_name_str(const struct kdbus_item *it)
{
	return (char *)it + KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_name);
}

#define KDBUS_ITEMS_FOREACH(it, first, items_len)				\
	for ((it) = (first);							\
	     (u8 *)(it) < (u8 *)(first) + (items_len);			\
	     (it) = (void *)((u8 *)(it) + KDBUS_ALIGN8((it)->size)))

#endif
