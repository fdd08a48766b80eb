/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * security.h - what the security modules decide about a message together,
 * in dbus-daemon's order (bus_context_check_security_policy()): SELinux's
 * send_msg (daemon/selinux.c), then AppArmor's send and receive
 * (daemon/apparmor.c), both before the XML policy.  A refusal is the
 * first module's, with its error and its words.
 */

#include <stdbool.h>

#include "compat/wire.h"
#include "daemon/apparmor.h"
#include "daemon/selinux.h"

typedef struct Client Client;

/* a security module mediates: read on every delivery, so inline */
static inline bool bus_security_enabled(void) {
	return bus_selinux_on | bus_apparmor_on;
}

typedef struct SecurityRefusal {
	const char *error_name;	/* NULL: allowed */
	char *text;		/* malloc()ed; NULL without memory */
} SecurityRefusal;

void security_refusal_done(SecurityRefusal *r);

/**
 * security_allows_send() - may @sender send @h to @recipient (NULL: the bus
 * itself)?  @requested_reply: @h is a reply @recipient waits for.
 * On a refusal, *@ret says what to answer.
 */
bool security_allows_send(const Client *sender, const Client *recipient, const WireHeader *h, bool requested_reply,
			  SecurityRefusal *ret);

/**
 * security_allows_activation() - may @sender send @h, a call that would
 * start a service? (AppArmor's send, with @assumed_label, the label the
 * service's file assumes, or NULL; SELinux does not mediate activation)
 */
bool security_allows_activation(const Client *sender, const char *assumed_label, const WireHeader *h,
				SecurityRefusal *ret);
