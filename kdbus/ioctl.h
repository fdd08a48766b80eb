/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * ioctl.h - the backend for a real /sys/fs/kdbus (kernel module)
 *
 * Each bus handle is a control fd; each connection handle is an fd on
 * /sys/fs/kdbus/<bus>/bus with its pool mmap()ed read-only.  Every command
 * is one ioctl(2) returning -errno.
 */

#include <stdbool.h>
#include <stdint.h>

#include "kdbus/bus.h"

#define KDBUS_IOCTL_CONTROL "/sys/fs/kdbus/control"

/* handles of this backend start with the backend tag, like the core's */
int kdbus_ioctl_bus_make(struct kdbus_cmd *cmd, KdbusBus **ret_bus);
void kdbus_ioctl_bus_close(KdbusBus *bus);
int kdbus_ioctl_hello(KdbusBus *bus, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn);
int kdbus_ioctl_open_endpoint(KdbusBus *bus);
const char *kdbus_ioctl_bus_path(KdbusBus *bus);
int kdbus_ioctl_hello_fd(KdbusBus *bus, int endpoint_fd, struct kdbus_cmd_hello *cmd, KdbusConn **ret_conn);
void kdbus_ioctl_conn_close(KdbusConn *conn);
int kdbus_ioctl_conn_get_fd(KdbusConn *conn);
uint64_t kdbus_ioctl_conn_get_id(KdbusConn *conn);
bool kdbus_ioctl_conn_has_messages(KdbusConn *conn);
void *kdbus_ioctl_pool_ptr(KdbusConn *conn, uint64_t offset);
void kdbus_ioctl_bus_set_fd_watch(KdbusBus *bus, const KdbusFdWatch *watch);
void kdbus_ioctl_conn_set_wakeup(KdbusConn *conn, KdbusWakeupFn fn, void *userdata);
void kdbus_ioctl_conn_fd_ready(KdbusConn *conn);

/**
 * kdbus_ioctl_cmd() - issue @request with @arg on the connection's fd
 *
 * Return: 0 or -errno.
 */
int kdbus_ioctl_cmd(KdbusConn *conn, unsigned long request, void *arg);

/**
 * kdbus_ioctl_bus_endpoint() - a handle of one of @bus's custom endpoints
 * @bus:	a bus of this backend
 * @ep_name:	the endpoint's name ("<uid>-<name>", made with
 *		KDBUS_CMD_ENDPOINT_MAKE on the bus's `bus` file)
 * @ret_bus:	a handle whose HELLOs go to that endpoint; it owns nothing
 *		(kdbus_bus_close() only frees it)
 *
 * Return: 0 or -ENOMEM.
 */
int kdbus_ioctl_bus_endpoint(KdbusBus *bus, const char *ep_name, KdbusBus **ret_bus);

/**
 * kdbus_ioctl_bus_open() - a handle of a bus someone else made, by the
 * path of an endpoint file (/sys/fs/kdbus/<bus>/bus): its HELLOs open
 * that file; it owns nothing (kdbus_bus_close() only frees it)
 *
 * Return: 0, -EINVAL (not an absolute path of a file), -ENOMEM.
 */
int kdbus_ioctl_bus_open(const char *path, KdbusBus **ret_bus);

/** kdbus_ioctl_available() - whether /sys/fs/kdbus/control exists. */
int kdbus_ioctl_available(void);
