/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handle.c - the command API of bus.h: dispatch to the userspace core or
 * to the ioctl backend.  Both kinds of handle start with their
 * KdbusBackend tag.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kdbus/bus.h"
#include "kdbus/connection.h"
#include "kdbus/core.h"
#include "kdbus/ioctl.h"
#include "kdbus/item.h"
#include "kdbus/message.h"
#include "util/macro.h"

static inline KdbusBackend bus_backend(const KdbusBus *b) {
	return *(const KdbusBackend *)(const void *)b;
}

static inline KdbusBackend conn_backend(const KdbusConn *c) {
	return *(const KdbusBackend *)(const void *)c;
}

#define IS_IOCTL(c) (conn_backend(c) == KDBUS_BACKEND_IOCTL)

int kdbus_cmd_bus_make(KdbusBackend backend, struct kdbus_cmd *cmd, KdbusBus **ret_bus) {
	assert_return(ret_bus, -EINVAL);
	assert_return(cmd, -EFAULT);

	switch (backend) {
	case KDBUS_BACKEND_USERSPACE:
		return kdbus_us_bus_make(cmd, ret_bus);
	case KDBUS_BACKEND_IOCTL:
		return kdbus_ioctl_bus_make(cmd, ret_bus);
	}
	return -EINVAL;
}

KdbusBus *kdbus_bus_close(KdbusBus *bus) {
	if (!bus)
		return NULL;
	if (bus_backend(bus) == KDBUS_BACKEND_IOCTL)
		kdbus_ioctl_bus_close(bus);
	else
		kdbus_us_bus_close(bus);
	return NULL;
}

uint64_t kdbus_bus_dispatch_timeouts(KdbusBus *bus, uint64_t now_ns) {
	if (!bus || bus_backend(bus) != KDBUS_BACKEND_USERSPACE)
		return 0;
	return kdbus_us_dispatch_timeouts(bus, now_ns);
}

int kdbus_cmd_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn) {
	assert_return(bus && ret_conn, -EINVAL);
	assert_return(cmd, -EFAULT);

	if (bus_backend(bus) == KDBUS_BACKEND_IOCTL)
		return kdbus_ioctl_hello(bus, cmd, ret_conn);
	return kdbus_us_hello(bus, cmd, ret_conn);
}

int kdbus_bus_open_endpoint(KdbusBus *bus) {
	assert_return(bus, -EINVAL);
	if (bus_backend(bus) != KDBUS_BACKEND_IOCTL)
		return -EOPNOTSUPP;
	return kdbus_ioctl_open_endpoint(bus);
}

const char *kdbus_bus_endpoint_path(KdbusBus *bus) {
	if (!bus || bus_backend(bus) != KDBUS_BACKEND_IOCTL)
		return NULL;
	return kdbus_ioctl_bus_path(bus);
}

int kdbus_cmd_hello_fd(KdbusBus *bus, int fd, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn) {
	if (!bus || !ret_conn || !cmd || bus_backend(bus) != KDBUS_BACKEND_IOCTL) {
		if (fd >= 0)
			close(fd);
		return !bus || !ret_conn ? -EINVAL : !cmd ? -EFAULT : -EOPNOTSUPP;
	}
	return kdbus_ioctl_hello_fd(bus, fd, cmd, ret_conn);
}

KdbusConn *kdbus_conn_close(KdbusConn *conn) {
	if (!conn)
		return NULL;
	if (IS_IOCTL(conn))
		kdbus_ioctl_conn_close(conn);
	else
		kdbus_us_conn_close(conn);
	return NULL;
}

KdbusConn *kdbus_conn_close_id_first(KdbusConn *conn) {
	if (!conn)
		return NULL;
	if (IS_IOCTL(conn))
		kdbus_ioctl_conn_close(conn);
	else
		kdbus_us_conn_close_id_first(conn);
	return NULL;
}

void kdbus_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata) {
	if (!conn)
		return;
	if (IS_IOCTL(conn))
		kdbus_ioctl_conn_set_wakeup(conn, fn, userdata);
	else
		kdbus_us_conn_set_wakeup(conn, fn, userdata);
}

bool kdbus_kernel_available(void) {
	return kdbus_ioctl_available();
}

void kdbus_bus_set_fd_watch(KdbusBus *bus, const KdbusFdWatch *watch) {
	if (bus && bus_backend(bus) == KDBUS_BACKEND_IOCTL)
		kdbus_ioctl_bus_set_fd_watch(bus, watch);
}

void kdbus_conn_fd_ready(KdbusConn *conn) {
	if (conn && IS_IOCTL(conn))
		kdbus_ioctl_conn_fd_ready(conn);
}

int kdbus_conn_get_fd(KdbusConn *conn) {
	if (conn && IS_IOCTL(conn))
		return kdbus_ioctl_conn_get_fd(conn);
	return -1;
}

uint64_t kdbus_conn_get_id(KdbusConn *conn) {
	if (!conn)
		return 0;
	if (IS_IOCTL(conn))
		return kdbus_ioctl_conn_get_id(conn);
	return conn->id;
}

void kdbus_conn_defer_handover(KdbusConn *conn) {
	if (conn && !IS_IOCTL(conn))
		kdbus_us_conn_defer_handover(conn);
}

void kdbus_conn_finish_handover(KdbusConn *conn) {
	if (conn && !IS_IOCTL(conn))
		kdbus_us_conn_finish_handover(conn);
}

bool kdbus_conn_has_messages(KdbusConn *conn) {
	if (!conn)
		return false;
	if (IS_IOCTL(conn))
		return kdbus_ioctl_conn_has_messages(conn);
	return kdbus_us_conn_has_messages(conn);
}

int kdbus_conn_set_inflight_limit(KdbusConn *conn, uint64_t max_bytes, uint64_t max_fds) {
	assert_return(conn, -EINVAL);
	if (IS_IOCTL(conn))
		return -EOPNOTSUPP;
	return kdbus_us_conn_set_inflight_limit(conn, max_bytes, max_fds);
}

bool kdbus_conn_inflight_full(KdbusConn *conn) {
	if (!conn || IS_IOCTL(conn))
		return false;
	return kdbus_us_conn_inflight_full(conn);
}

int kdbus_payload_new(KdbusBus *bus, size_t size, void **ret_handle, uint8_t **ret_data) {
	assert_return(bus, -EINVAL);
	assert_return(ret_handle && ret_data, -EFAULT);
	if (bus_backend(bus) != KDBUS_BACKEND_USERSPACE)
		return -EOPNOTSUPP;
	return kdbus_us_payload_new(bus, size, ret_handle, ret_data);
}

bool kdbus_payload_offer(KdbusConn *conn, void *handle, const void *ptr) {
	if (!conn || IS_IOCTL(conn))
		return false;
	return kdbus_us_payload_offer(conn, handle, ptr);
}

bool kdbus_payload_unshared(KdbusBus *bus, void *handle) {
	if (!bus || !handle || bus_backend(bus) != KDBUS_BACKEND_USERSPACE)
		return false;
	return kdbus_us_payload_unshared(bus, handle);
}

void kdbus_payload_release(KdbusBus *bus, void *handle) {
	if (bus && handle && bus_backend(bus) == KDBUS_BACKEND_USERSPACE)
		kdbus_us_payload_release(bus, handle);
}

void *kdbus_pool_ptr_mapped(KdbusConn *conn, uint64_t offset) {
	return kdbus_ioctl_pool_ptr(conn, offset);
}

#define DISPATCH(conn, cmd, ioctl_nr, us_fn)                       \
	do {                                                       \
		assert_return(conn, -EINVAL);                      \
		assert_return(cmd, -EFAULT);                       \
		if (IS_IOCTL(conn))                                \
			return kdbus_ioctl_cmd((conn), (ioctl_nr), (cmd)); \
		return us_fn((conn), (cmd));                       \
	} while (0)

int kdbus_cmd_byebye(KdbusConn *conn, struct kdbus_cmd *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_BYEBYE, kdbus_us_byebye);
}

int kdbus_cmd_update(KdbusConn *conn, struct kdbus_cmd *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_UPDATE, kdbus_us_update);
}

int kdbus_cmd_send(KdbusConn *conn, struct kdbus_cmd_send *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_SEND, kdbus_us_send);
}

int kdbus_cmd_recv(KdbusConn *conn, struct kdbus_cmd_recv *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_RECV, kdbus_us_recv);
}

int kdbus_cmd_free(KdbusConn *conn, struct kdbus_cmd_free *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_FREE, kdbus_us_free);
}

int kdbus_recv_batch(KdbusConn *conn, uint64_t *offsets, size_t max) {
	size_t n = 0;

	assert_return(conn, -EINVAL);
	assert_return(offsets || max == 0, -EFAULT);
	if (max == 0)
		return -EINVAL;
	if (!IS_IOCTL(conn))
		return kdbus_us_recv_batch(conn, offsets, max);
	while (n < max) {
		struct kdbus_cmd_recv cmd = { .size = sizeof(cmd) };
		int r = kdbus_ioctl_cmd(conn, KDBUS_CMD_RECV, &cmd);

		if (r < 0)
			return n > 0 ? (int)n : r;
		offsets[n++] = cmd.msg.offset;
	}
	return (int)n;
}

/* KDBUS_CMD_FREE of each (out of line: its command would cost the
 * userspace core's path a stack canary) */
static _noinline_ int kdbus_ioctl_free_batch(KdbusConn *conn, const uint64_t *offsets, size_t n) {
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct kdbus_cmd_free cmd = { .size = sizeof(cmd), .offset = offsets[i] };
		int r = kdbus_ioctl_cmd(conn, KDBUS_CMD_FREE, &cmd);

		if (r < 0)
			ret = r;
	}
	return ret;
}

int kdbus_free_batch(KdbusConn *conn, const uint64_t *offsets, size_t n) {
	assert_return(conn, -EINVAL);
	assert_return(offsets || n == 0, -EFAULT);
	if (!IS_IOCTL(conn))
		return kdbus_us_free_batch(conn, offsets, n);
	return kdbus_ioctl_free_batch(conn, offsets, n);
}

int kdbus_cmd_conn_info(KdbusConn *conn, struct kdbus_cmd_info *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_CONN_INFO, kdbus_us_conn_info);
}

int kdbus_reply_pending(KdbusConn *conn, uint64_t dst_id, uint64_t cookie, bool drop) {
	assert_return(conn, -EINVAL);
	if (IS_IOCTL(conn))
		return -EOPNOTSUPP;
	return kdbus_us_reply_pending(conn, dst_id, cookie, drop);
}

int kdbus_name_owner(KdbusConn *conn, const char *name, uint64_t *ret_id, uint64_t *ret_flags) {
	struct {
		struct kdbus_cmd_info cmd;
		uint8_t items[KDBUS_ITEM_SIZE(KDBUS_NAME_MAX_LEN + 1)];
	} q = {};
	size_t l;
	int r;

	assert_return(conn && name && ret_id && ret_flags, -EINVAL);
	if (!IS_IOCTL(conn))
		return kdbus_us_name_owner(conn, name, ret_id, ret_flags);
	l = strlen(name);
	if (l > KDBUS_NAME_MAX_LEN)
		return -EINVAL;
	q.cmd.size = sizeof(q.cmd) + KDBUS_ITEM_SIZE(l + 1);
	q.cmd.items[0].size = KDBUS_ITEM_HEADER_SIZE + l + 1;
	q.cmd.items[0].type = KDBUS_ITEM_NAME;
	memcpy(q.cmd.items[0].str, name, l + 1);
	r = kdbus_ioctl_cmd(conn, KDBUS_CMD_CONN_INFO, &q.cmd);
	if (r < 0)
		return r;
	struct kdbus_info *info = kdbus_ioctl_pool_ptr(conn, q.cmd.offset);
	*ret_id = info->id;
	*ret_flags = info->flags;
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = q.cmd.offset };
	(void) kdbus_ioctl_cmd(conn, KDBUS_CMD_FREE, &f);
	return 0;
}

int kdbus_cmd_bus_creator_info(KdbusConn *conn, struct kdbus_cmd_info *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_BUS_CREATOR_INFO, kdbus_us_bus_creator_info);
}

int kdbus_cmd_list(KdbusConn *conn, struct kdbus_cmd_list *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_LIST, kdbus_us_list);
}

int kdbus_cmd_name_acquire(KdbusConn *conn, struct kdbus_cmd *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_NAME_ACQUIRE, kdbus_us_name_acquire);
}

int kdbus_cmd_name_release(KdbusConn *conn, struct kdbus_cmd *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_NAME_RELEASE, kdbus_us_name_release);
}

int kdbus_cmd_match_add(KdbusConn *conn, struct kdbus_cmd_match *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_MATCH_ADD, kdbus_us_match_add);
}

int kdbus_cmd_match_remove(KdbusConn *conn, struct kdbus_cmd_match *cmd) {
	DISPATCH(conn, cmd, KDBUS_CMD_MATCH_REMOVE, kdbus_us_match_remove);
}
