/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioctl.c - thin backend for /sys/fs/kdbus (see ioctl.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kdbus/ioctl.h"
#include "kdbus/item.h"
#include "util/macro.h"

typedef struct KdbusIoctlBus {
	KdbusBackend backend;
	int fd;
	char *path;		/* /sys/fs/kdbus/<name>/bus */
	KdbusFdWatch watch;	/* the caller's event loop, or none */
} KdbusIoctlBus;

typedef struct KdbusIoctlConn {
	KdbusBackend backend;
	int fd;
	uint8_t *pool;
	size_t pool_size;
	uint64_t id;
	KdbusFdWatch fd_watch;	/* the bus's, as of HELLO */
	KdbusWakeupFn wakeup;
	void *wakeup_userdata;
	void *watch;		/* the event loop's handle while a wakeup is set */
} KdbusIoctlConn;

static KdbusIoctlBus *to_bus(KdbusBus *b) {
	return (KdbusIoctlBus *)(void *)b;
}

static KdbusIoctlConn *to_conn(KdbusConn *c) {
	return (KdbusIoctlConn *)(void *)c;
}

int kdbus_ioctl_available(void) {
	return access(KDBUS_IOCTL_CONTROL, F_OK) == 0;
}

int kdbus_ioctl_bus_make(struct kdbus_cmd *cmd, KdbusBus **ret_bus) {
	_cleanup_close_ int fd = -1;
	KdbusIoctlBus *b;
	const char *name = NULL;
	size_t pos, size;
	/* the kernel answers a negotiation by overwriting flags */
	bool negotiate = cmd->flags & KDBUS_FLAG_NEGOTIATE;

	*ret_bus = NULL;
	fd = open(KDBUS_IOCTL_CONTROL, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd) < 0)
		return -errno;
	if (negotiate)
		return 0;

	size = cmd->size - offsetof(struct kdbus_cmd, items);
	for (pos = 0; pos < size; pos += KDBUS_ALIGN8(((struct kdbus_item *)((uint8_t *)cmd->items + pos))->size)) {
		struct kdbus_item *it = (void *)((uint8_t *)cmd->items + pos);

		if (it->type == KDBUS_ITEM_MAKE_NAME)
			name = it->str;
	}
	if (!name)
		return -EINVAL;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (asprintf(&b->path, "/sys/fs/kdbus/%s/bus", name) < 0) {
		free(b);
		return -ENOMEM;
	}
	b->backend = KDBUS_BACKEND_IOCTL;
	b->fd = TAKE_FD(fd);
	*ret_bus = (KdbusBus *)(void *)b;
	return 0;
}

int kdbus_ioctl_bus_endpoint(KdbusBus *bus, const char *ep_name, KdbusBus **ret_bus) {
	KdbusIoctlBus *b = to_bus(bus), *e;
	size_t dir_len = strrchr(b->path, '/') - b->path;

	*ret_bus = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (asprintf(&e->path, "%.*s/%s", (int)dir_len, b->path, ep_name) < 0) {
		free(e);
		return -ENOMEM;
	}
	e->backend = KDBUS_BACKEND_IOCTL;
	e->fd = -1;
	*ret_bus = (KdbusBus *)(void *)e;
	return 0;
}

int kdbus_ioctl_bus_open(const char *path, KdbusBus **ret_bus) {
	KdbusIoctlBus *b;

	*ret_bus = NULL;
	if (!path || path[0] != '/' || !strrchr(path, '/')[1])
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->path = strdup(path);
	if (!b->path) {
		free(b);
		return -ENOMEM;
	}
	b->backend = KDBUS_BACKEND_IOCTL;
	b->fd = -1;
	*ret_bus = (KdbusBus *)(void *)b;
	return 0;
}

void kdbus_ioctl_bus_close(KdbusBus *bus) {
	KdbusIoctlBus *b = to_bus(bus);

	safe_close(b->fd);
	free(b->path);
	free(b);
}

const char *kdbus_ioctl_bus_path(KdbusBus *bus) {
	return to_bus(bus)->path;
}

int kdbus_ioctl_open_endpoint(KdbusBus *bus) {
	int fd = open(to_bus(bus)->path, O_RDWR | O_CLOEXEC | O_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

int kdbus_ioctl_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn) {
	int fd = kdbus_ioctl_open_endpoint(bus);

	*ret_conn = NULL;
	if (fd < 0)
		return fd;
	return kdbus_ioctl_hello_fd(bus, fd, cmd, ret_conn);
}

int kdbus_ioctl_hello_fd(KdbusBus *bus, int endpoint_fd, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn) {
	KdbusIoctlBus *b = to_bus(bus);
	_cleanup_close_ int fd = endpoint_fd;
	KdbusIoctlConn *c;
	void *pool;
	bool negotiate = cmd->flags & KDBUS_FLAG_NEGOTIATE;

	*ret_conn = NULL;
	cmd->flags &= ~KDBUS_HELLO_HIDDEN_ID;
	if (ioctl(fd, KDBUS_CMD_HELLO, cmd) < 0)
		return -errno;
	if (negotiate)
		return 0;

	pool = mmap(NULL, cmd->pool_size, PROT_READ, MAP_SHARED, fd, 0);
	if (pool == MAP_FAILED)
		return -errno;
	c = calloc(1, sizeof(*c));
	if (!c) {
		munmap(pool, cmd->pool_size);
		return -ENOMEM;
	}
	c->backend = KDBUS_BACKEND_IOCTL;
	c->fd_watch = b->watch;
	c->fd = TAKE_FD(fd);
	c->pool = pool;
	c->pool_size = cmd->pool_size;
	c->id = cmd->id;
	*ret_conn = (KdbusConn *)(void *)c;
	return 0;
}

void kdbus_ioctl_conn_close(KdbusConn *conn) {
	KdbusIoctlConn *c = to_conn(conn);

	kdbus_ioctl_conn_set_wakeup(conn, NULL, NULL);
	if (c->pool)
		munmap(c->pool, c->pool_size);
	safe_close(c->fd);
	free(c);
}

int kdbus_ioctl_conn_get_fd(KdbusConn *conn) {
	return to_conn(conn)->fd;
}

uint64_t kdbus_ioctl_conn_get_id(KdbusConn *conn) {
	return to_conn(conn)->id;
}

/* (out of line: its pollfd would cost the userspace core's callers a stack canary) */
_noinline_ bool kdbus_ioctl_conn_has_messages(KdbusConn *conn) {
	struct pollfd p = { .fd = to_conn(conn)->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

void *kdbus_ioctl_pool_ptr(KdbusConn *conn, uint64_t offset) {
	return to_conn(conn)->pool + offset;
}

void kdbus_ioctl_bus_set_fd_watch(KdbusBus *bus, const KdbusFdWatch *watch) {
	to_bus(bus)->watch = watch ? *watch : (KdbusFdWatch) {};
}

/* the fd is watched exactly while a wakeup callback is set */
void kdbus_ioctl_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata) {
	KdbusIoctlConn *c = to_conn(conn);
	const KdbusFdWatch *w = &c->fd_watch;

	c->wakeup = fn;
	c->wakeup_userdata = userdata;
	if (fn && !c->watch && w->add)
		c->watch = w->add(w->userdata, c->fd, conn);
	else if (!fn && c->watch) {
		w->remove(w->userdata, c->watch);
		c->watch = NULL;
	}
}

void kdbus_ioctl_conn_fd_ready(KdbusConn *conn) {
	KdbusIoctlConn *c = to_conn(conn);

	if (c->wakeup)
		c->wakeup(conn, c->wakeup_userdata);
}

int kdbus_ioctl_cmd(KdbusConn *conn, unsigned long request, void *arg) {
	return ioctl(to_conn(conn)->fd, request, arg) < 0 ? -errno : 0;
}
