/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apparmor.c - AppArmor mediation (see apparmor.h): the labels of the bus
 * and of each connection, the queries to the kernel's policy as
 * libapparmor's aa_query_label() puts them, and their audit records, in
 * dbus-daemon's words and order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <libaudit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/apparmor.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon/apparmor-reply.h"
#include "daemon/apparmor.h"
#include "daemon/audit.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/log.h"
#include "daemon/lsm.h"
#include "policy/config.h"
#include "util/format.h"
#include "util/macro.h"
#include "util/strbuf.h"

#define DRIVER_NAME "org.freedesktop.DBus"

bool bus_apparmor_on;

static AppArmorLabel bus_label;
/* <apparmorfs>/.access: the kernel's query interface */
static char *access_path;

/* ---- audit data ------------------------------------------------------------ */

/* dbus-daemon's _dbus_append_pair_str(): ` name="value"` */
static void text_pair(StrBuf *t, const char *name, const char *value) {
	strbuf_byte(t, ' ');
	strbuf_puts(t, name);
	strbuf_puts(t, "=\"");
	strbuf_puts(t, value);
	strbuf_byte(t, '"');
}

static void text_pair_pid(StrBuf *t, const char *name, const Client *c) {
	char buf[24];

	if (!c || !c->creds.have_pid)
		return;
	snprintf(buf, sizeof(buf), "%u", (unsigned) c->creds.pid);
	strbuf_byte(t, ' ');
	strbuf_puts(t, name);
	strbuf_byte(t, '=');
	strbuf_puts(t, buf);
}

/* ---- start and stop ------------------------------------------------------- */

int bus_apparmor_start(const BusConfig *config, const LsmPaths *paths, char **ret_error) {
	char *label, *mode;
	bool mediate;
	int r;

	r = lsm_apparmor_decide(config, paths, &mediate, ret_error);
	if (r < 0 || !mediate || bus_apparmor_on)
		return r;
	_cleanup_free_ char *apparmorfs = lsm_apparmorfs(paths);
	if (!apparmorfs || !(access_path = format("%s/.access", apparmorfs))) {
		*ret_error = strdup("Error finding the AppArmor query interface");
		return -ENOENT;
	}
	bus_audit_open();
	if (aa_getcon(&label, &mode) < 0) {
		r = -errno;
		*ret_error = format("Error getting AppArmor context of bus: %s", strerror(errno));
		return r;
	}
	/* (one allocation: @mode points into @label) */
	bus_label = (AppArmorLabel) { .label = label, .mode = mode };
	bus_apparmor_on = true;
	return 0;
}

void bus_apparmor_stop(void) {
	free(access_path);
	access_path = NULL;
	free(bus_label.label);
	bus_label = (AppArmorLabel) {};
	bus_apparmor_on = false;
}

/* ---- connections ---------------------------------------------------------- */

int bus_apparmor_client_init(Client *c) {
	char *label, *mode = NULL;

	if (!bus_apparmor_on)
		return 0;
	/* aa_getpeercon(): the socket's label; dbus-daemon refuses a
	 * connection without one */
	if (!c->creds.label) {
		log_warning("Unable to set up new connection: Failed to get AppArmor confinement information of "
			    "socket peer: %s", strerror(ENOPROTOOPT));
		return -EACCES;
	}
	label = strdup(c->creds.label);
	if (!label)
		return -ENOMEM;
	if (!aa_splitcon(label, &mode)) {
		free(label);
		log_warning("Unable to set up new connection: Failed to get AppArmor confinement information of "
			    "socket peer: %s", strerror(EINVAL));
		return -EACCES;
	}
	/* aa_splitcon() returns @label itself (the mode cut off in place) */
	c->apparmor = (AppArmorLabel) { .label = label, .mode = mode };
	return 0;
}

void bus_apparmor_client_done(Client *c) {
	free(c->apparmor.label);
	c->apparmor = (AppArmorLabel) {};
}

const AppArmorLabel *bus_apparmor_label(const Client *c) {
	return c ? &c->apparmor : &bus_label;
}

/* ---- the queries ---------------------------------------------------------- */

static bool is_unconfined(const AppArmorLabel *l) {
	if (!l->label)
		return false;	/* (dbus-daemon: a denial follows) */
	return l->mode ? streq(l->mode, "unconfined") : streq(l->label, "unconfined");
}

static bool is_complain(const char *mode) {
	return mode && streq(mode, "complain");
}

static const char *bus_type(const Client *c) {
	return c->bus->config ? c->bus->config->type : NULL;
}

/* the head of a query (dbus-daemon's build_common_query()): room for the
 * command libapparmor writes, the label, its class and the bus type */
static void query_start(StrBuf *q, const char *label, const char *bustype) {
	static const char zero[AA_QUERY_CMD_LABEL_SIZE];

	(void) strbuf_reserve(q, 256);	/* (most queries fit) */
	strbuf_add(q, zero, sizeof(zero));
	strbuf_puts(q, label ? label : "");
	strbuf_byte(q, 0);
	strbuf_byte(q, AA_CLASS_DBUS);
	strbuf_puts(q, bustype ? bustype : "");
}

static void query_field(StrBuf *q, const char *s) {
	strbuf_byte(q, 0);
	if (s)
		strbuf_puts(q, s);
}

/*
 * One query, as libapparmor's aa_query_label() puts it: the kernel's
 * query interface (<apparmorfs>/.access) takes one per open, write and
 * read.  Return: 0 with *allow and *audit (what the kernel would audit:
 * every denial but the quiet ones), or -errno (ENOENT: a label the kernel
 * does not know).
 */
static int query(uint32_t mask, StrBuf *q, int *allow, int *audit) {
	char reply[APPARMOR_REPLY_LEN];
	ssize_t n;

	if (q->oom)
		return -ENOMEM;
	memcpy(q->s, AA_QUERY_CMD_LABEL, AA_QUERY_CMD_LABEL_SIZE);
	_cleanup_close_ int fd = open(access_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EPROTONOSUPPORT : -errno;
	n = write(fd, q->s, q->len);
	if (n != (ssize_t) q->len)
		return n < 0 ? -errno : -EPROTO;
	n = read(fd, reply, sizeof(reply));
	if (n != APPARMOR_REPLY_LEN)
		return n < 0 ? -errno : -EPROTO;
	return apparmor_reply_decide(reply, n, mask, allow, audit);
}

/* dbus-daemon's log_message(): the audit log, else syslog */
static void log_record(bool allow, const char *op, const StrBuf *data) {
	_cleanup_free_ char *avc = NULL;

	if (data->oom)
		return;
	if (bus_audit_fd() >= 0) {
		avc = format("apparmor=\"%s\" operation=\"dbus_%s\" %s\n", allow ? "ALLOWED" : "DENIED", op,
			     data->s ? data->s : "");
		if (avc && bus_audit_log_avc(AUDIT_USER_AVC, avc))
			return;
	}
	syslog(LOG_USER | LOG_NOTICE, "apparmor=\"%s\" operation=\"dbus_%s\" %s\n", allow ? "ALLOWED" : "DENIED", op,
	       data->s ? data->s : "");
}

/* a query that failed: dbus-daemon's error, named from the errno as its
 * _dbus_error_from_errno() names those a query can fail with (a label the
 * kernel does not know: FileNotFound; anything else Failed) */
static void refuse_errno(AppArmorRefusal *ret, int r) {
	switch (r) {
	case -ENOMEM:
	case -ENOBUFS:
		ret->error_name = "org.freedesktop.DBus.Error.NoMemory";
		break;
	case -EACCES:
	case -EPERM:
		ret->error_name = "org.freedesktop.DBus.Error.AccessDenied";
		break;
	case -ENOENT:
		ret->error_name = "org.freedesktop.DBus.Error.FileNotFound";
		break;

	default:
		ret->error_name = "org.freedesktop.DBus.Error.Failed";
		break;
	}
	ret->text = format("Failed to query AppArmor policy: %s", strerror(-r));
}

static void refuse_access(AppArmorRefusal *ret, char *text) {
	ret->error_name = "org.freedesktop.DBus.Error.AccessDenied";
	ret->text = text;
}

static const char *active_name(const Client *c) {
	return c->unique_name[0] ? c->unique_name : "(inactive)";
}

/*
 * A check of @c alone: bind of @name, or (@name NULL) eavesdrop, as
 * dbus-daemon's bus_apparmor_allows_acquire_service() and
 * bus_apparmor_allows_eavesdropping() decide and audit them.
 */
static bool allows_alone(const Client *c, const char *name, AppArmorRefusal *ret) {
	const AppArmorLabel *l = &c->apparmor;
	const char *bustype = bus_type(c);
	const char *op = name ? "bind" : "eavesdrop";
	_cleanup_(strbuf_done) StrBuf q = {}, aux = {};
	int allow = 0, audit = 1, r;

	*ret = (AppArmorRefusal) {};
	if (!bus_apparmor_on || is_unconfined(l))
		return true;
	query_start(&q, l->label, bustype);
	if (name)
		query_field(&q, name);
	r = query(name ? AA_DBUS_BIND : AA_DBUS_EAVESDROP, &q, &allow, &audit);
	if (r == -ENOMEM) {
		refuse_errno(ret, r);
		return false;
	}
	if (r < 0) {
		allow = 0;
		refuse_errno(ret, r);
	} else {
		if (is_complain(l->mode))
			allow = 1;
		if (!allow)
			refuse_access(ret, name ? format("Connection \"%s\" is not allowed to own the service \"%s\" "
							 "due to AppArmor policy", active_name(c), name)
						: format("Connection \"%s\" is not allowed to eavesdrop due to "
							 "AppArmor policy", active_name(c)));
		if (!audit)
			return allow;
	}
	text_pair(&aux, "bus", bustype ? bustype : "unknown");
	if (name)
		text_pair(&aux, "name", name);
	if (r < 0)
		text_pair(&aux, "info", strerror(-r));
	text_pair(&aux, "mask", op);
	text_pair_pid(&aux, "pid", c);
	if (l->label)
		text_pair(&aux, "label", l->label);
	log_record(allow, op, &aux);
	return allow;
}

bool bus_apparmor_allows_acquire(const Client *c, const char *name, AppArmorRefusal *ret) {
	return allows_alone(c, name, ret);
}

/* "An AppArmor policy prevents ...": dbus-daemon's
 * set_error_from_denied_message() */
static char *send_refusal_text(const Client *sender, const Client *recipient, const WireHeader *h,
			       bool requested_reply) {
	return format("An AppArmor policy prevents this sender from sending this message to this recipient; "
		      "type=\"%s\", sender=\"%s\" (%s) interface=\"%s\" member=\"%s\" error name=\"%s\" "
		      "requested_reply=\"%d\" destination=\"%s\" (%s)",
		      wire_type_to_string(h->type), sender->unique_name[0] ? sender->unique_name : "(null)",
		      client_loginfo(sender), h->interface.s ? h->interface.s : "(unset)",
		      h->member.s ? h->member.s : "(unset)", h->error_name.s ? h->error_name.s : "(unset)",
		      requested_reply, h->destination.s ? h->destination.s : DRIVER_NAME,
		      recipient ? client_loginfo(recipient) : "bus");
}

bool bus_apparmor_allows_send(const Client *sender, const Client *recipient, bool activation,
			      const char *assumed_label, const WireHeader *h, bool requested_reply,
			      AppArmorRefusal *ret) {
	const AppArmorLabel *src = &sender->apparmor;
	AppArmorLabel dst = {};
	const char *bustype = bus_type(sender);
	const char *destination = h->destination.s ? h->destination.s : DRIVER_NAME;
	/* the sender's unique name, as the bus sets it (none before Hello) */
	const char *source = sender->unique_name[0] ? sender->unique_name : DRIVER_NAME;
	const char *op = wire_type_to_string(h->type);
	int src_allow = 0, dst_allow = 0, src_audit = 1, dst_audit = 1;
	int src_r = 0, dst_r = 0;
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;

	*ret = (AppArmorRefusal) {};
	if (!bus_apparmor_on)
		return true;
	/* a requested reply: sending the call allowed it */
	if (requested_reply)
		return true;
	if (recipient)
		dst = recipient->apparmor;
	else if (activation)
		dst.label = (char *) assumed_label;
	else
		dst = bus_label;

	if (is_unconfined(src)) {
		src_allow = 1;
		src_audit = 0;
	} else {
		_cleanup_(strbuf_done) StrBuf q = {};
		query_start(&q, src->label, bustype);
		query_field(&q, destination);
		query_field(&q, dst.label);
		query_field(&q, h->path.s);
		query_field(&q, h->interface.s);
		query_field(&q, h->member.s);
		src_r = query(AA_DBUS_SEND, &q, &src_allow, &src_audit);
		if (src_r == -ENOMEM) {
			refuse_errno(ret, src_r);
			return false;
		}
		if (src_r < 0)
			src_allow = 0;
	}
	/* a call that would start a service: only the sender's side */
	if (src_r == 0) {
		if (activation || is_unconfined(&dst)) {
			dst_allow = 1;
			dst_audit = 0;
		} else {
			_cleanup_(strbuf_done) StrBuf q = {};
			query_start(&q, dst.label, bustype);
			query_field(&q, source);
			query_field(&q, src->label);
			query_field(&q, h->path.s);
			query_field(&q, h->interface.s);
			query_field(&q, h->member.s);
			dst_r = query(AA_DBUS_RECEIVE, &q, &dst_allow, &dst_audit);
			if (dst_r == -ENOMEM) {
				refuse_errno(ret, dst_r);
				return false;
			}
			if (dst_r < 0)
				dst_allow = 0;
		}
	}
	if (src_r < 0 || dst_r < 0) {
		refuse_errno(ret, src_r < 0 ? src_r : dst_r);
	} else {
		if (is_complain(src->mode))
			src_allow = 1;
		if (is_complain(dst.mode))
			dst_allow = 1;
		if (!src_allow || !dst_allow)
			refuse_access(ret, send_refusal_text(sender, recipient, h, requested_reply));
		/* replies are not audited: the policy has no notion of them */
		if ((!src_audit && !dst_audit) || reply)
			return src_allow && dst_allow;
	}

	_cleanup_(strbuf_done) StrBuf aux = {};
	text_pair(&aux, "bus", bustype ? bustype : "unknown");
	if (h->path.s)
		text_pair(&aux, "path", h->path.s);
	if (h->interface.s)
		text_pair(&aux, "interface", h->interface.s);
	if (h->member.s)
		text_pair(&aux, "member", h->member.s);
	if (h->error_name.s)
		text_pair(&aux, "error_name", h->error_name.s);
	size_t common = aux.len;
	if (src_audit) {
		text_pair(&aux, "mask", "send");
		text_pair(&aux, "name", destination);
		text_pair_pid(&aux, "pid", sender);
		if (src->label)
			text_pair(&aux, "label", src->label);
		text_pair_pid(&aux, "peer_pid", recipient);
		if (dst.label)
			text_pair(&aux, "peer_label", dst.label);
		if (src_r < 0)
			text_pair(&aux, "info", strerror(-src_r));
		if (dst_r < 0)
			text_pair(&aux, "peer_info", strerror(-dst_r));
		log_record(src_allow, op, &aux);
	}
	if (dst_audit) {
		strbuf_truncate(&aux, common);
		text_pair(&aux, "name", source);
		text_pair(&aux, "mask", "receive");
		text_pair_pid(&aux, "pid", recipient);
		if (dst.label)
			text_pair(&aux, "label", dst.label);
		text_pair_pid(&aux, "peer_pid", sender);
		if (src->label)
			text_pair(&aux, "peer_label", src->label);
		if (dst_r < 0)
			text_pair(&aux, "info", strerror(-dst_r));
		if (src_r < 0)
			text_pair(&aux, "peer_info", strerror(-src_r));
		log_record(dst_allow, op, &aux);
	}
	return src_allow && dst_allow;
}

bool bus_apparmor_allows_eavesdrop(const Client *c, AppArmorRefusal *ret) {
	return allows_alone(c, NULL, ret);
}
