/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * selinux.h - SELinux mediation of the bus, as dbus-daemon's bus/selinux.c
 * decides it (class dbus).
 *
 * When SELinux is enabled, every connection has the security identifier
 * of its peer's socket label (SO_PEERSEC, read when it connects; a
 * connection without one is refused), and the bus asks the access vector
 * cache:
 *   - acquire_svc, from a connection to the context <associate>d with the
 *     name it requests (or to the bus's own context), before the XML
 *     policy's own rules;
 *   - send_msg, from the sender to every connection a message is delivered
 *     to (the addressed recipient, every receiver of a broadcast, every
 *     eavesdropper), or to the bus's context for a message to the bus
 *     itself, Hello included; not for what the bus sends, nor for a call
 *     that starts a service (dbus-daemon does not mediate activation; the
 *     service is asked about when it is handed the call: security.h).
 * Denials are audited as dbus-daemon audits them: an AUDIT_USER_AVC record
 * through libaudit when the bus may write to the audit log
 * (CAP_AUDIT_WRITE), else a syslog line, with dbus-daemon's auxiliary data
 * (msgtype=, interface=, member=, error_name=, dest=, spid=, tpid=;
 * service=, spid=).  A policy load reloads the configuration (its
 * associations may name new contexts), as SIGHUP does; enforcing and
 * permissive mode are the kernel's, followed by the cache.
 */

#include <stdbool.h>

#include "compat/wire.h"

typedef struct Bus Bus;
typedef struct Client Client;
typedef struct BusConfig BusConfig;

/* SELinux is enabled (a policy is loaded): the bus mediates.  Read on
 * every delivery, so inline; written by selinux.c only */
extern bool bus_selinux_on;
static inline bool bus_selinux_enabled(void) {
	return bus_selinux_on;
}

/**
 * bus_selinux_start() - open the access vector cache (when SELinux is
 * enabled), watch for policy loads on @bus's loop, take the bus's own
 * context and @config's associations
 *
 * Return: 0 (also when SELinux is disabled), or -errno with *@ret_error
 * saying why, in dbus-daemon's words where it has them.
 */
int bus_selinux_start(Bus *bus, const BusConfig *config, char **ret_error);

/* the associations of a reloaded configuration (names whose context does
 * not exist are skipped, with a warning, as dbus-daemon does) */
int bus_selinux_set_associations(const BusConfig *config);

void bus_selinux_stop(void);

/* the connection's security identifier, from its socket label; -EACCES
 * when it has none SELinux knows (the connection is refused) */
int bus_selinux_client_init(Client *c);

/**
 * bus_selinux_allows_acquire() - may @c own @name?  On a denial *@ret_text
 * is dbus-daemon's error text (AccessDenied; NULL without memory).
 */
bool bus_selinux_allows_acquire(const Client *c, const char *name, char **ret_text);

/**
 * bus_selinux_allows_send() - may @sender send @h to @recipient (NULL: the
 * bus itself)?  @destination is the message's destination as dbus-daemon
 * audits it (NULL: org.freedesktop.DBus).
 */
bool bus_selinux_allows_send(const Client *sender, const Client *recipient, const WireHeader *h);

/* dbus-daemon's error text for a send bus_selinux_allows_send() refused
 * (AccessDenied), malloc()ed */
char *bus_selinux_refusal_text(const Client *sender, const WireHeader *h, const Client *recipient);

/* the context of @c (NULL: the bus), malloc()ed; NULL if unknown */
char *bus_selinux_context(const Client *c);
