/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * apparmor.h - AppArmor mediation of the bus, as dbus-daemon's
 * bus/apparmor.c decides it (class dbus).
 *
 * Where the kernel offers AppArmor D-Bus mediation (lsm.h) and the
 * configuration does not say <apparmor mode="disabled"/>, every connection
 * has the AppArmor label and mode of its peer's socket (SO_PEERSEC, read
 * when it connects; a connection without one is refused), the bus has its
 * own (aa_getcon()), and the bus asks the kernel's policy (aa_query_label())
 * with the bus type of the configuration (<type>) in every query:
 *   - bind, for a name a connection requests, after SELinux and before the
 *     XML policy;
 *   - send on the sender's side (its label; the destination name, or
 *     org.freedesktop.DBus; the receiver's label, path, interface,
 *     member) and receive on the receiver's (its label; the sender's
 *     unique name; the sender's label, ...), for every delivery: the
 *     addressed recipient, every receiver of a broadcast, every
 *     eavesdropper, the bus itself for what is sent to it; for a call that
 *     would start a service, only the sender's side, with the label its
 *     .service file assumes (AssumedAppArmorLabel=).  A requested reply is
 *     not asked about (sending the call allowed it); unrequested ones are;
 *   - eavesdrop, for a match rule with eavesdrop='true' and BecomeMonitor.
 * Unconfined labels are not asked about; a profile in complain mode is
 * allowed, and its denials logged as ALLOWED.  What the kernel asks to
 * audit (every denial, and what `audit` rules name) goes to the audit log
 * as an AUDIT_USER_AVC record in dbus-daemon's format (apparmor="DENIED"
 * operation="dbus_method_call" bus=... mask=... label=... peer_label=...),
 * or to syslog; replies are never audited.  A policy reloaded in the
 * kernel applies to the next query.
 */

#include <stdbool.h>

#include "compat/wire.h"

typedef struct Client Client;
typedef struct BusConfig BusConfig;
typedef struct LsmPaths LsmPaths;

/* AppArmor mediates this bus.  Read on every delivery, so inline; written
 * by apparmor.c only */
extern bool bus_apparmor_on;
static inline bool bus_apparmor_enabled(void) {
	return bus_apparmor_on;
}

/* the label of a connection (or of the bus), as aa_splitcon() splits it */
typedef struct AppArmorLabel {
	char *label;		/* "unconfined", or a profile's name */
	const char *mode;	/* "enforce", "complain", ...; NULL if none */
} AppArmorLabel;

/**
 * bus_apparmor_start() - mediate when the kernel offers D-Bus mediation
 * (found at @paths) and @config's <apparmor mode=> is not "disabled"
 *
 * Return: 0, or -errno with *@ret_error saying why, in dbus-daemon's words
 * ("AppArmor mediation required but not present").
 */
int bus_apparmor_start(const BusConfig *config, const LsmPaths *paths, char **ret_error);
void bus_apparmor_stop(void);

/* @c's label, from its socket's; -EACCES when it has none (the connection
 * is refused, as dbus-daemon refuses it) */
int bus_apparmor_client_init(Client *c);
void bus_apparmor_client_done(Client *c);

/* an AppArmor refusal: the D-Bus error and its text (malloc()ed; NULL
 * without memory) */
typedef struct AppArmorRefusal {
	const char *error_name;
	char *text;
} AppArmorRefusal;

/* may @c own @name (bind)? */
bool bus_apparmor_allows_acquire(const Client *c, const char *name, AppArmorRefusal *ret);

/**
 * bus_apparmor_allows_send() - may @sender send @h to @recipient?
 * @recipient:	the receiver, NULL for the bus itself (or, with
 *		@activation, a service to be started)
 * @activation:	the call would start a service: only the sender's side is
 *		asked, with @assumed_label (NULL: none) as the receiver's
 * @requested_reply: @h is a reply the receiver waits for (allowed)
 */
bool bus_apparmor_allows_send(const Client *sender, const Client *recipient, bool activation,
			      const char *assumed_label, const WireHeader *h, bool requested_reply,
			      AppArmorRefusal *ret);

/* may @c eavesdrop (eavesdrop='true' rules, BecomeMonitor)? */
bool bus_apparmor_allows_eavesdrop(const Client *c, AppArmorRefusal *ret);

/* @c's label (NULL: the bus's), "label (mode)" as the kernel gives it */
const AppArmorLabel *bus_apparmor_label(const Client *c);
