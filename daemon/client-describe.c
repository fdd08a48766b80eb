/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-describe.c - how a client is described in logs, errors and
 * refusals, in dbus-daemon's words (client-describe.h).  It reads a
 * client and writes nothing of it but the cache of its loginfo.
 */
#include <stdlib.h>
#include <string.h>

#include "compat/protocol.h"
#include "compat/wire.h"
#include "daemon/client-describe.h"
#include "daemon/client.h"
#include "daemon/peer-creds.h"
#include "util/format.h"
#include "util/macro.h"
#include "util/strutil.h"

const char *client_name(const Client *c) {
	return c->unique_name_len ? c->unique_name : "(not registered)";
}

static char *client_make_loginfo(const Client *c);

const char *client_loginfo(const Client *c) {
	if (!c->said_hello)
		return "inactive";
	/* made when first needed (a refusal, a log line): the cache is
	 * the only thing set here */
	if (!c->loginfo)
		((Client *) c)->loginfo = client_make_loginfo(c);
	return c->loginfo ? c->loginfo : "(out of memory)";
}

/* dbus-daemon's cache_peer_loginfo_string(), when the client says Hello:
 * uid=U pid=P comm="..." label="...", each part only when known (built
 * without printf: every connection pays for it) */
static char *client_make_loginfo(const Client *c) {
	char comm[PEER_COMMAND_MAX + 1];
	size_t n = 0;
	size_t label_len = c->creds.label ? strlen(c->creds.label) : 0;
	char *s = malloc(sizeof("uid= pid= comm=\"\" label=\"\"") + 2 * 20 + PEER_COMMAND_MAX + label_len);
	char *p = s;

	if (!s)
		return NULL;
	if (c->is_unix && c->creds.uid != (uid_t) -1)
		p = format_decimal(stpcpy(p, "uid="), (uint64_t) c->creds.uid);
	if (c->creds.have_pid) {
		memcpy(comm, c->comm, c->comm_len);
		n = peer_command_show(comm, c->comm_len);
		if (p != s)
			*p++ = ' ';
		p = format_decimal(stpcpy(p, "pid="), (uint64_t) (unsigned) c->creds.pid);
		p = stpcpy(p, " comm=\"");
		memcpy(p, comm, n);
		p += n;
		*p++ = '"';
	}
	if (c->creds.label) {
		if (p != s)
			*p++ = ' ';
		p = stpcpy(p, "label=\"");
		memcpy(p, c->creds.label, label_len);
		p += label_len;
		*p++ = '"';
	}
	*p = '\0';
	return s;
}

const char *policy_type_name(uint8_t t) {
	const char *s = wire_type_to_string(t);

	return s ? s : "invalid";
}

/*
 * The text of dbus-daemon's complain_about_message(): @complaint about @h
 * from @sender (NULL: the bus driver) to @recipient (NULL: the bus itself,
 * or a name that is being activated), with their loginfo.  The destination
 * is the message's, as dbus-daemon shows it (the driver's name if none).
 */
char *peer_refusal_text(const char *complaint, unsigned n_matched, const char *sender, const char *sender_info,
			  const WireHeader *h, bool requested_reply, const char *recipient_info) {
	return format("%s, %u matched rules; type=\"%s\", sender=\"%s\" (%s) interface=\"%s\" member=\"%s\" "
		      "error name=\"%s\" requested_reply=\"%d\" destination=\"%s\" (%s)",
		      complaint, n_matched, policy_type_name(h->type), sender, sender_info,
		      h->interface.s ? h->interface.s : "(unset)", h->member.s ? h->member.s : "(unset)",
		      h->error_name.s ? h->error_name.s : "(unset)", requested_reply,
		      h->destination.s ? h->destination.s : DRIVER_NAME, recipient_info);
}

char *client_refusal_text(const char *complaint, unsigned n_matched, const Client *sender, const WireHeader *h,
			  bool requested_reply, const Client *recipient) {
	/* (before Hello a sender has no name: dbus-daemon prints its NULL) */
	return peer_refusal_text(complaint, n_matched,
			    sender ? (sender->unique_name[0] ? sender->unique_name : "(null)") : "(unset)",
			    sender ? client_loginfo(sender) : "(bus)", h, requested_reply,
			    recipient ? client_loginfo(recipient) : "bus");
}
