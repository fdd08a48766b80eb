/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * monitor-sink.c - the bus's connection that takes what monitors are
 * shown without a receiver (monitor-sink.h): the only writer of Bus.sink.
 */
#include "compat/kdbus-client.h"
#include "daemon/bus.h"
#include "daemon/client-registry.h"
#include "daemon/monitor-sink.h"
#include "util/macro.h"

static int sink_drop(KdbusConn *conn, struct kdbus_msg *m, void *userdata) {
	KclientMsgParts parts;

	kclient_msg_read(conn, m, &parts);
	for (unsigned i = 0; i < parts.n_fds; i++)
		safe_close(parts.fds[i]);
	return 0;
}

static void sink_wakeup(KdbusConn *conn, void *userdata) {
	(void) kclient_recv_each(conn, sink_drop, NULL);
}

uint64_t monitor_sink_id(Bus *bus) {
	if (!bus->sink) {
		if (kclient_hello(bus->kbus, KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_HIDDEN_ID, 16 * 1024 * 1024, NULL,
				  &bus->sink, NULL) < 0)
			return 0;
		kdbus_conn_set_wakeup(bus->sink, sink_wakeup, bus);
		(void) client_registry_internal_add(&bus->registry, bus->sink);
	}
	return kdbus_conn_get_id(bus->sink);
}

void monitor_sink_close(Bus *bus) {
	client_registry_internal_remove(&bus->registry, bus->sink);
	bus->sink = kdbus_conn_close(bus->sink);
}
