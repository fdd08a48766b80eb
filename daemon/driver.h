/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * driver.h - org.freedesktop.DBus, the bus driver.
 *
 * The driver is a kdbus connection of its own.  Clients' calls to
 * org.freedesktop.DBus are SENT to it like any other message (so monitors
 * see them), and it answers through the core, so a client receives the
 * driver's replies in order with everything else.  Each driver method maps
 * onto core commands (NAME_ACQUIRE, LIST, CONN_INFO, MATCH_ADD …).
 *
 * The driver's files are daemon/driver*.c, one job each (driver.c says
 * which); what they share with each other only is in driver-call.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "compat/protocol.h"
#include "compat/wire.h"
#include "util/macro.h"

typedef struct Bus Bus;
typedef struct Client Client;
typedef struct Driver Driver;

int driver_new(Driver **ret, Bus *bus);
Driver *driver_free(Driver *d);

/* the kdbus id messages to the driver are sent to */
uint64_t driver_id(const Driver *d);

/* handle every call queued on the driver's connection */
void driver_dispatch(Driver *d);

/* a client went away: drop what the driver keeps for it */
void driver_forget_client(Driver *d, Client *c);

/* a client said Hello: its unique name joins the names ListNames orders
 * as dbus-daemon does (see driver-names.c, "the order of ListNames") */
void driver_names_hello(Driver *d, Client *c);

/**
 * driver_send_error() - send a D-Bus error from org.freedesktop.DBus to
 * @to, as the reply to its message @reply_serial, through the core (so it
 * is ordered after what @to was already sent, and monitors see it).
 */
int driver_send_error(Driver *d, Client *to, uint32_t reply_serial, const char *name,
		      const char *fmt, ...) __attribute__((__format__(printf, 5, 6)));

/**
 * struct BusError - the error a driver method fails with: dbus-daemon's
 * error name and text
 * @name:	NULL while no error is set
 * @text:	malloc()ed; NULL if it could not be formatted (sent as "")
 */
typedef struct BusError {
	const char *name;
	char *text;
} BusError;

/* set @e (replacing what it held) to @name and the formatted text;
 * returns -EPROTO, what a method returns with the error set */
int bus_error_set(BusError *e, const char *name, const char *fmt, ...) __attribute__((__format__(printf, 3, 4)));
void bus_error_clear(BusError *e);

/**
 * driver_send_message() - finish @b and send it from org.freedesktop.DBus
 * to @to through the core: the sender is set, the destination if @b has
 * none, NO_REPLY_EXPECTED (nothing the driver sends expects a reply) and
 * the serial (@to's next); @b is consumed (wire_builder_done()) in any case
 * @reply_cookie:	the serial @b answers, to consume the caller's reply
 *			tracker, or 0
 * @fds, @n_fds:	fds to pass with it (the caller keeps its own)
 */
int driver_send_message(Driver *d, Client *to, WireBuilder *b, uint64_t reply_cookie,
			const int *fds, size_t n_fds);

/**
 * driver_send_message_to_name() - finish @b and send it from
 * org.freedesktop.DBus to the well-known @name through the core (sender,
 * destination, NO_REPLY_EXPECTED and serial are filled in; @b is consumed);
 * an activator holding @name queues it for the service
 *
 * Return: 0 or the kdbus_cmd_send() errno (-ESRCH: nobody holds @name).
 */
int driver_send_message_to_name(Driver *d, const char *name, WireBuilder *b);

/**
 * driver_build_*() - marshal a message from org.freedesktop.DBus to @to;
 * *ret_msg is malloc()ed and owned by the caller.
 */
int driver_build_name_owner_changed(Client *to, const char *name, const char *old_owner,
				    const char *new_owner, uint8_t **ret_msg, size_t *ret_len);
/* the same with the serial @serial (none of a client's taken) */
int driver_build_name_owner_changed_numbered(uint32_t serial, const char *name, const char *old_owner,
					     const char *new_owner, uint8_t **ret_msg, size_t *ret_len);
int driver_build_name_signal(Client *to, const char *member, const char *name,
			     uint8_t **ret_msg, size_t *ret_len);
/* ... the same signal addressed to @destination, as a monitor sees it */
int driver_build_name_signal_to(Client *to, const char *destination, const char *member, const char *name,
				uint8_t **ret_msg, size_t *ret_len);
void driver_broadcast_activatable_services_changed(Driver *d);
void driver_stats_names(Driver *d, Client *c, bool fresh);
int driver_build_undirected_reply(Client *to, const WireHeader *h, uint8_t **ret_msg, size_t *ret_len);

#define DRIVER_PEER_INTERFACE "org.freedesktop.DBus.Peer"

/*
 * driver_is_peer_message() - a message of the interface
 * org.freedesktop.DBus.Peer without destination, of any type: dbus-daemon's
 * end of every connection (libdbus's peer filter, dbus-connection.c
 * _dbus_connection_peer_filter_unlocked_no_update()) answers it before the
 * bus sees it, and it reaches nobody, monitors neither, whatever the
 * connection's state (before Hello, a monitor)
 */
static inline bool driver_is_peer_message(const WireHeader *h) {
	return !h->destination.s && h->interface.s && h->interface.len == sizeof(DRIVER_PEER_INTERFACE) - 1 &&
	       memcmp(h->interface.s, DRIVER_PEER_INTERFACE, sizeof(DRIVER_PEER_INTERFACE) - 1) == 0;
}
int driver_build_error(Client *to, uint32_t reply_serial, const char *name, const char *text,
		       uint8_t **ret_msg, size_t *ret_len);
/* the same with another destination (NULL: none) */
int driver_build_error_to(Client *to, const char *destination, uint32_t reply_serial, const char *name,
			  const char *text, uint8_t **ret_msg, size_t *ret_len);

/* the driver's introspection XML at its canonical path (--introspect) */
char *driver_introspect_string(void);

/* map a kdbus SEND errno onto the D-Bus error a sender gets */
const char *driver_error_for_send(int r);

/* driver_capture() - show monitors @msg from org.freedesktop.DBus without
 * sending it to anyone (dbus-daemon's bus_transaction_capture()) */
/* driver_shows_monitors_itself() - a call to the driver that monitors
 * see from the driver, when it handles it, instead of as it is sent:
 * ReloadConfig, whose ActivatableServicesChanged comes before it */
bool driver_shows_monitors_itself(const WireHeader *h);
void driver_capture(Driver *d, const uint8_t *msg, size_t len);

/*
 * driver_hello_direct() - answer @c's first message @h, a Hello,
 * straight into @c's output instead of through the core: the reply and
 * the NameAcquired of the unique name are the first messages a connection
 * gets, so nothing can be queued before them.  Only while no monitor
 * watches (monitors see the driver's traffic through the core).
 *
 * Return: 1 answered, 0 the driver must answer it (send it through the
 * core), negative errno.
 */
int driver_hello_direct(Driver *d, Client *c, const WireHeader *h);

DEFINE_CLEANUP(Driver *, driver_free);
