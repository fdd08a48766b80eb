// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fs.c - kdbusfs: every mount is a new domain whose root holds `control`;
 * BUS_MAKE on control creates <name>/bus, ENDPOINT_MAKE on `bus` a custom
 * endpoint <name>/<uid>-<ep> beside it.  The file operations of both
 * kinds of node (control, endpoint) dispatch the ioctls.
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "internal.h"

static const struct file_operations kdbus_control_fops;
static const struct file_operations kdbus_ep_fops;

/* ---- inodes ---------------------------------------------------------- */

static struct inode *kdbus_inode_new(struct super_block *sb, umode_t mode, kuid_t uid, kgid_t gid)
{
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = get_next_ino();
	inode->i_mode = mode;
	inode->i_uid = uid;
	inode->i_gid = gid;
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time(inode);
	if (S_ISDIR(mode)) {
		inode->i_op = &simple_dir_inode_operations;
		inode->i_fop = &simple_dir_operations;
		set_nlink(inode, 2);
	}
	return inode;
}

static void kdbus_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (inode->i_fop == &kdbus_ep_fops)
		kdbus_ep_unref(inode->i_private);
}

static const struct super_operations kdbus_super_ops = {
	.statfs = simple_statfs,
	.drop_inode = generic_delete_inode,
	.evict_inode = kdbus_evict_inode,
};

/* create @name in @parent; the dentry stays pinned until kdbus_fs_remove() */
static struct dentry *kdbus_node_create(struct dentry *parent, const char *name, struct inode *inode)
{
	struct inode *dir = d_inode(parent);
	struct dentry *dentry;

	inode_lock(dir);
	dentry = lookup_one_len(name, parent, strlen(name));
	if (!IS_ERR(dentry) && d_really_is_positive(dentry)) {
		dput(dentry);
		dentry = ERR_PTR(-EEXIST);
	}
	if (IS_ERR(dentry)) {
		inode_unlock(dir);
		return dentry;
	}
	if (S_ISDIR(inode->i_mode))
		inc_nlink(dir);
	d_instantiate(dentry, inode);
	dir->i_mtime = dir->i_ctime = current_time(dir);
	inode_unlock(dir);
	return dentry;
}

/**
 * kdbus_fs_make_bus_dir() - a bus's directory, with its `bus` file
 * @bus:	the bus (its creator owns the nodes)
 * @dir_mode:	the directory's access mode
 * @ep_mode:	that of `bus`
 * @ep:		the bus's own endpoint: `bus` takes this reference
 *
 * Return: the directory's dentry (pinned until kdbus_fs_remove()), or an
 * ERR_PTR; the reference on @ep is dropped on failure.
 */
struct dentry *kdbus_fs_make_bus_dir(struct kdbus_bus *bus, umode_t dir_mode, umode_t ep_mode,
				     struct kdbus_ep *ep)
{
	struct super_block *sb = bus->domain->sb;
	const struct cred *cred = bus->creator_cred;
	struct dentry *dir, *node;
	struct inode *inode;

	inode = kdbus_inode_new(sb, S_IFDIR | dir_mode, cred->fsuid, cred->fsgid);
	if (!inode) {
		kdbus_ep_unref(ep);
		return ERR_PTR(-ENOMEM);
	}
	dir = kdbus_node_create(sb->s_root, bus->name, inode);
	if (IS_ERR(dir)) {
		iput(inode);
		kdbus_ep_unref(ep);
		return dir;
	}
	inode = kdbus_inode_new(sb, S_IFREG | ep_mode, cred->fsuid, cred->fsgid);
	if (!inode) {
		kdbus_ep_unref(ep);
		kdbus_fs_remove(dir);
		return ERR_PTR(-ENOMEM);
	}
	inode->i_fop = &kdbus_ep_fops;
	inode->i_private = ep;
	node = kdbus_node_create(dir, "bus", inode);
	if (IS_ERR(node)) {
		iput(inode);	/* drops @ep */
		kdbus_fs_remove(dir);
		return node;
	}
	return dir;
}

/**
 * kdbus_fs_make_ep_node() - a custom endpoint's file in its bus's directory
 * @dir:	the bus's directory
 * @ep:		the endpoint (the file takes a reference), named ep->name
 * @mode:	its access mode
 * @uid:	its owner
 * @gid:	its group
 *
 * With bus->node_lock held.
 *
 * Return: its dentry (pinned until kdbus_fs_remove()), or an ERR_PTR
 * (-EEXIST when the name is taken).
 */
struct dentry *kdbus_fs_make_ep_node(struct dentry *dir, struct kdbus_ep *ep, umode_t mode, kuid_t uid,
				     kgid_t gid)
{
	struct inode *inode;
	struct dentry *node;

	inode = kdbus_inode_new(dir->d_sb, S_IFREG | mode, uid, gid);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	inode->i_fop = &kdbus_ep_fops;
	inode->i_private = kdbus_ep_ref(ep);
	node = kdbus_node_create(dir, ep->name, inode);
	if (IS_ERR(node))
		iput(inode);	/* drops its reference */
	return node;
}

void kdbus_fs_remove(struct dentry *dentry)
{
	if (!IS_ERR_OR_NULL(dentry))
		simple_recursive_removal(dentry, NULL);
}

/* ---- control ---------------------------------------------------------- */

struct kdbus_control {
	struct mutex lock;
	struct kdbus_domain *domain;
	struct kdbus_bus *bus;		/* the bus this fd made, or NULL */
	bool used;
};

static int kdbus_control_open(struct inode *inode, struct file *file)
{
	struct kdbus_control *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);

	if (!c)
		return -ENOMEM;
	mutex_init(&c->lock);
	c->domain = inode->i_sb->s_fs_info;
	file->private_data = c;
	return 0;
}

static int kdbus_control_release(struct inode *inode, struct file *file)
{
	struct kdbus_control *c = file->private_data;

	if (c->bus) {
		kdbus_bus_shutdown(c->bus);
		kdbus_bus_unref(c->bus);
	}
	kfree(c);
	return 0;
}

/* BUS_MAKE: the command is read and answered with no lock held */
static long kdbus_control_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kdbus_control *c = file->private_data;
	struct kdbus_meta_proc creator = {};
	struct kdbus_bus *bus = NULL;
	struct kdbus_cmd *make;
	size_t items_size;
	int ret;

	if (cmd != KDBUS_CMD_BUS_MAKE)
		return -ENOTTY;
	if (READ_ONCE(c->used))
		return -EBADFD;
	make = kdbus_bus_make_args_parse((void __user *)arg, &items_size);
	if (IS_ERR_OR_NULL(make))
		return PTR_ERR_OR_ZERO(make);
	/* BUS_CREATOR_INFO's metadata, read before the control fd's lock */
	kdbus_meta_proc_collect(&creator, _KDBUS_ATTACH_ALL);
	mutex_lock(&c->lock);
	if (c->used) {
		ret = -EBADFD;
	} else {
		ret = kdbus_bus_make(c->domain, make, items_size, &creator, &bus);
		if (ret == 0) {
			c->bus = bus;
			WRITE_ONCE(c->used, true);
		}
	}
	mutex_unlock(&c->lock);
	kdbus_meta_proc_release(&creator);
	kfree(make);
	return ret;
}

static const struct file_operations kdbus_control_fops = {
	.owner = THIS_MODULE,
	.open = kdbus_control_open,
	.release = kdbus_control_release,
	.unlocked_ioctl = kdbus_control_ioctl,
	.compat_ioctl = kdbus_control_ioctl,
	.llseek = noop_llseek,
};

/* ---- endpoints (`bus`, custom ones) --------------------------------------- */

/*
 * A handle of an endpoint file is set up once: HELLO makes it a
 * connection, ENDPOINT_MAKE (on `bus`) the owner of a custom endpoint.
 */
struct kdbus_handle {
	struct mutex lock;		/* protects setup_busy, and the setting of the below */
	bool setup_busy;		/* a HELLO or ENDPOINT_MAKE is under way */
	struct kdbus_ep *ep;		/* the endpoint it was opened on */
	struct kdbus_conn *conn;	/* set once by HELLO, then constant */
	struct kdbus_ep *ep_owned;	/* set once by ENDPOINT_MAKE, then constant */
};

static int kdbus_ep_open(struct inode *inode, struct file *file)
{
	struct kdbus_ep *ep = inode->i_private;
	struct kdbus_bus *bus = ep->bus;
	struct kdbus_handle *h;
	bool active;

	down_read(&bus->conn_lock);
	active = bus->active;
	up_read(&bus->conn_lock);
	if (active && ep->custom) {
		mutex_lock(&ep->lock);
		active = ep->active;
		mutex_unlock(&ep->lock);
	}
	if (!active)
		return -ESHUTDOWN;
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	mutex_init(&h->lock);
	h->ep = kdbus_ep_ref(ep);
	file->private_data = h;
	return 0;
}

static int kdbus_ep_release(struct inode *inode, struct file *file)
{
	struct kdbus_handle *h = file->private_data;

	if (h->conn) {
		kdbus_conn_disconnect(h->conn);
		kdbus_conn_unref(h->conn);
	}
	if (h->ep_owned) {
		kdbus_ep_deactivate(h->ep_owned);
		kdbus_ep_unref(h->ep_owned);
	}
	kdbus_ep_unref(h->ep);
	kfree(h);
	return 0;
}

static struct kdbus_conn *kdbus_handle_conn(struct kdbus_handle *h)
{
	return smp_load_acquire(&h->conn);
}

static struct kdbus_ep *kdbus_handle_ep_owned(struct kdbus_handle *h)
{
	return smp_load_acquire(&h->ep_owned);
}

/* a handle not yet set up is marked busy for a setup command: a second
 * one on the same fd fails (EBADFD) as one after it does */
static int kdbus_handle_setup_begin(struct kdbus_handle *h)
{
	int ret = 0;

	mutex_lock(&h->lock);
	if (h->conn || h->ep_owned || h->setup_busy)
		ret = -EBADFD;
	else
		h->setup_busy = true;
	mutex_unlock(&h->lock);
	return ret;
}

static void kdbus_handle_setup_end(struct kdbus_handle *h, struct kdbus_conn *conn, struct kdbus_ep *ep)
{
	mutex_lock(&h->lock);
	h->setup_busy = false;
	if (conn)
		smp_store_release(&h->conn, conn);
	if (ep)
		smp_store_release(&h->ep_owned, ep);
	mutex_unlock(&h->lock);
}

static bool kdbus_handle_is_set_up(struct kdbus_handle *h)
{
	return kdbus_handle_conn(h) || kdbus_handle_ep_owned(h) || READ_ONCE(h->setup_busy);
}

/*
 * HELLO: the command is read, and answered, with no lock held; the
 * handle is marked busy meanwhile.
 */
static long kdbus_ep_hello(struct kdbus_handle *h, struct file *file, void __user *argp)
{
	struct kdbus_cmd_hello __user *uhello = argp;
	struct kdbus_cmd_hello *cmd;
	struct kdbus_conn *conn = NULL;
	size_t items_size;
	int ret;

	if (kdbus_handle_is_set_up(h))
		return -EBADFD;
	cmd = kdbus_hello_args_parse(argp, &items_size);
	if (IS_ERR_OR_NULL(cmd))
		return PTR_ERR_OR_ZERO(cmd);
	ret = kdbus_handle_setup_begin(h);
	if (ret < 0)
		goto out;

	conn = kdbus_hello_connect(h->ep, file, cmd, items_size);
	if (IS_ERR(conn)) {
		ret = PTR_ERR(conn);
		conn = NULL;
		/* which attach flags the bus requires */
		if (ret == -ECONNREFUSED && put_user(h->ep->bus->attach_req, &uhello->attach_flags_send))
			ret = -EFAULT;
	} else {
		ret = kdbus_hello_answer(conn, argp, cmd);
		if (ret < 0)
			conn = kdbus_conn_unref(conn);
	}
	kdbus_handle_setup_end(h, conn, NULL);
out:
	kfree(cmd);
	return ret;
}

/* ENDPOINT_MAKE: the handle becomes the new endpoint's owner */
static long kdbus_ep_make(struct kdbus_handle *h, struct file *file, void __user *argp)
{
	struct kdbus_ep *ep;
	int ret;

	ret = kdbus_handle_setup_begin(h);
	if (ret < 0)
		return ret;
	ep = kdbus_cmd_ep_make(h->ep, file, argp);
	ret = PTR_ERR_OR_ZERO(ep);
	kdbus_handle_setup_end(h, NULL, IS_ERR(ep) ? NULL : ep);
	return ret;
}

/*
 * A connection is its fd, as any other file: whoever has the fd (by fork
 * or fd passing) uses the connection, whose credentials are those of the
 * fd's opener (f_cred), captured at HELLO.  So is the ownership of a
 * custom endpoint.
 */
static long kdbus_ep_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kdbus_handle *h = file->private_data;
	void __user *argp = (void __user *)arg;
	struct kdbus_conn *conn;
	struct kdbus_ep *owned;

	switch (cmd) {
	case KDBUS_CMD_HELLO:
		return kdbus_ep_hello(h, file, argp);
	case KDBUS_CMD_ENDPOINT_MAKE:
		return kdbus_ep_make(h, file, argp);
	case KDBUS_CMD_ENDPOINT_UPDATE:
		owned = kdbus_handle_ep_owned(h);
		return owned ? kdbus_cmd_ep_update(owned, file, argp) : -EBADFD;
	case KDBUS_CMD_BYEBYE:
	case KDBUS_CMD_CONN_INFO:
	case KDBUS_CMD_BUS_CREATOR_INFO:
	case KDBUS_CMD_SEND:
	case KDBUS_CMD_RECV:
	case KDBUS_CMD_FREE:
	case KDBUS_CMD_UPDATE:
	case KDBUS_CMD_LIST:
	case KDBUS_CMD_NAME_ACQUIRE:
	case KDBUS_CMD_NAME_RELEASE:
	case KDBUS_CMD_MATCH_ADD:
	case KDBUS_CMD_MATCH_REMOVE:
		break;
	default:
		return -ENOTTY;
	}
	conn = kdbus_handle_conn(h);
	if (!conn)
		return -EBADFD;

	switch (cmd) {
	case KDBUS_CMD_BYEBYE:
		return kdbus_cmd_byebye(conn, argp);
	case KDBUS_CMD_CONN_INFO:
		return kdbus_cmd_conn_info(conn, argp);
	case KDBUS_CMD_BUS_CREATOR_INFO:
		return kdbus_cmd_bus_creator_info(conn, argp);
	case KDBUS_CMD_SEND:
		return kdbus_cmd_send(conn, file, argp);
	case KDBUS_CMD_RECV:
		return kdbus_cmd_recv(conn, argp);
	case KDBUS_CMD_FREE:
		return kdbus_cmd_free(conn, argp);
	case KDBUS_CMD_NAME_ACQUIRE:
		return kdbus_cmd_name_acquire(conn, argp);
	case KDBUS_CMD_NAME_RELEASE:
		return kdbus_cmd_name_release(conn, argp);
	case KDBUS_CMD_LIST:
		return kdbus_cmd_list(conn, argp);
	case KDBUS_CMD_MATCH_ADD:
		return kdbus_cmd_match_add(conn, argp);
	case KDBUS_CMD_MATCH_REMOVE:
		return kdbus_cmd_match_remove(conn, argp);
	default:	/* KDBUS_CMD_UPDATE */
		return kdbus_cmd_update(conn, argp);
	}
}

static __poll_t kdbus_ep_poll(struct file *file, poll_table *wait)
{
	struct kdbus_handle *h = file->private_data;
	struct kdbus_conn *conn = kdbus_handle_conn(h);

	if (!conn)
		return EPOLLERR | EPOLLHUP;
	return kdbus_conn_poll(conn, file, wait);
}

static int kdbus_ep_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kdbus_handle *h = file->private_data;
	struct kdbus_conn *conn = kdbus_handle_conn(h);

	if (!conn)
		return -EPERM;
	return kdbus_conn_mmap(conn, vma);
}

static const struct file_operations kdbus_ep_fops = {
	.owner = THIS_MODULE,
	.open = kdbus_ep_open,
	.release = kdbus_ep_release,
	.poll = kdbus_ep_poll,
	.mmap = kdbus_ep_mmap,
	.unlocked_ioctl = kdbus_ep_ioctl,
	.compat_ioctl = kdbus_ep_ioctl,
	.llseek = noop_llseek,
};

bool kdbus_file_is_kdbus(const struct file *f)
{
	return f->f_op == &kdbus_ep_fops || f->f_op == &kdbus_control_fops;
}

struct kdbus_domain *kdbus_domain_ref(struct kdbus_domain *domain)
{
	if (domain)
		kref_get(&domain->kref);
	return domain;
}

static void __kdbus_domain_free(struct kref *kref)
{
	struct kdbus_domain *domain = container_of(kref, struct kdbus_domain, kref);

	/* every user holds a reference: none is left */
	ida_destroy(&domain->user_ida);
	put_user_ns(domain->user_ns);
	kfree(domain);
}

struct kdbus_domain *kdbus_domain_unref(struct kdbus_domain *domain)
{
	if (domain)
		kref_put(&domain->kref, __kdbus_domain_free);
	return NULL;
}

/* ---- superblock -------------------------------------------------------- */

static int kdbus_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct kdbus_domain *domain;
	struct dentry *control;
	struct inode *inode;

	domain = kzalloc(sizeof(*domain), GFP_KERNEL);
	if (!domain)
		return -ENOMEM;
	kref_init(&domain->kref);
	domain->sb = sb;
	/* the namespace bus names and uids are seen in: the mount's (kdbusfs
	 * is mounted in the initial user namespace only) */
	domain->user_ns = get_user_ns(sb->s_user_ns);
	atomic64_set(&domain->seqnum, 0);
	mutex_init(&domain->user_lock);
	hash_init(domain->users);
	ida_init(&domain->user_ida);
	sb->s_fs_info = domain;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = KDBUS_SUPER_MAGIC;
	sb->s_op = &kdbus_super_ops;
	sb->s_time_gran = 1;

	inode = kdbus_inode_new(sb, S_IFDIR | 0755, GLOBAL_ROOT_UID, GLOBAL_ROOT_GID);
	if (!inode)
		return -ENOMEM;
	sb->s_root = d_make_root(inode);
	if (!sb->s_root)
		return -ENOMEM;

	inode = kdbus_inode_new(sb, S_IFREG | 0666, GLOBAL_ROOT_UID, GLOBAL_ROOT_GID);
	if (!inode)
		return -ENOMEM;
	inode->i_fop = &kdbus_control_fops;
	control = kdbus_node_create(sb->s_root, "control", inode);
	if (IS_ERR(control)) {
		iput(inode);
		return PTR_ERR(control);
	}
	return 0;
}

static int kdbus_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, kdbus_fill_super);
}

static const struct fs_context_operations kdbus_fs_context_ops = {
	.get_tree = kdbus_get_tree,
};

static int kdbus_init_fs_context(struct fs_context *fc)
{
	fc->ops = &kdbus_fs_context_ops;
	return 0;
}

static void kdbus_kill_sb(struct super_block *sb)
{
	struct kdbus_domain *domain = sb->s_fs_info;

	kill_litter_super(sb);
	kdbus_domain_unref(domain);
}

static struct file_system_type kdbus_fs_type = {
	.owner = THIS_MODULE,
	.name = "kdbusfs",
	.init_fs_context = kdbus_init_fs_context,
	.kill_sb = kdbus_kill_sb,
};

int kdbus_fs_init(void)
{
	return register_filesystem(&kdbus_fs_type);
}

void kdbus_fs_exit(void)
{
	unregister_filesystem(&kdbus_fs_type);
}
