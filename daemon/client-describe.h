/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * client-describe.h - how a client is described in logs, errors and
 * refusals, in dbus-daemon's words.  A leaf: it calls nothing of the
 * daemon's, so that the security modules and the policy can describe a
 * client without reaching back into the client module.
 */

#include <stdbool.h>
#include <stdint.h>

typedef struct Client Client;
typedef struct WireHeader WireHeader;

/* @c's unique name, "(not registered)" before Hello */
const char *client_name(const Client *c);

/* how dbus-daemon describes @c in logs and errors (its loginfo):
 * "uid=U pid=P comm=\"...\"" and a label=\"...\", as @c was when it said
 * Hello; "inactive" before */
const char *client_loginfo(const Client *c);

/* the name of message type @t as dbus-daemon's logs write it */
const char *policy_type_name(uint8_t t);

/*
 * The text of dbus-daemon's complain_about_message(): @complaint about @h
 * from @sender (NULL: the bus driver) to @recipient (NULL: the bus itself,
 * or a name that is being activated), with their loginfo.
 */
char *client_refusal_text(const char *complaint, unsigned n_matched, const Client *sender, const WireHeader *h,
			  bool requested_reply, const Client *recipient);
/* the same with the sender's name and loginfo and the recipient's loginfo
 * given (a native peer of the kernel bus) */
char *peer_refusal_text(const char *complaint, unsigned n_matched, const char *sender, const char *sender_info,
			const WireHeader *h, bool requested_reply, const char *recipient_info);
