/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * selinux.c - SELinux mediation (see selinux.h): the access vector cache of
 * libselinux, opened once per process as dbus-daemon opens it, its netlink
 * socket on the bus's loop, the security identifiers of the bus, of each
 * connection and of the <associate>d names, and the two checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <event2/event.h>
#include <libaudit.h>
#include <selinux/avc.h>
#include <selinux/selinux.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon/audit.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/log.h"
#include "daemon/selinux.h"
#include "policy/config.h"
#include "util/format.h"
#include "util/macro.h"

typedef struct Association {
	char *name;
	security_id_t sid;
} Association;

static struct {
	security_id_t bus_sid;
	struct avc_entry_ref aeref;
	int netlink_fd;
	struct event *ev_netlink;
	Association *associations;
	size_t n_associations;
} se = { .netlink_fd = -1 };

bool bus_selinux_on;

/* ---- audit and log (libselinux's callbacks) ------------------------------ */

/* SELINUX_CB_LOG: an AVC record to the audit log when it can be written,
 * anything else (and AVC records otherwise) to syslog, as dbus-daemon's
 * log_callback() */
_printf_(2, 3)
static int selinux_log(int type, const char *fmt, ...) {
	va_list ap;
	int audit_type = 0;

	va_start(ap, fmt);
	if (bus_audit_fd() >= 0) {
		if (type == SELINUX_AVC)
			audit_type = AUDIT_USER_AVC;
#ifdef AUDIT_USER_MAC_POLICY_LOAD
		else if (type == SELINUX_POLICYLOAD)
			audit_type = AUDIT_USER_MAC_POLICY_LOAD;
#endif
#ifdef AUDIT_USER_MAC_STATUS
		else if (type == SELINUX_SETENFORCE)
			audit_type = AUDIT_USER_MAC_STATUS;
#endif
	}
	if (audit_type) {
		char buf[8192];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		(void) bus_audit_log_avc(audit_type, buf);
	} else {
		vsyslog(LOG_USER | LOG_INFO, fmt, ap);
	}
	va_end(ap);
	return 0;
}

/* SELINUX_CB_AUDIT: the auxiliary data of the check (the string given to
 * avc_has_perm()) */
static int selinux_audit_data(void *data, security_class_t cls, char *buf, size_t size) {
	const char *aux = data;

	if (!aux || size == 0)
		return 0;
	if (strlen(aux) < size)
		memcpy(buf, aux, strlen(aux) + 1);
	else if (size > sizeof("Buffer too small for audit message") - 1)
		memcpy(buf, "Buffer too small for audit message", sizeof("Buffer too small for audit message"));
	return 0;
}

/* SELINUX_CB_POLICYLOAD: the configuration again, as dbus-daemon raises
 * SIGHUP (its handler reloads) */
static int selinux_policy_loaded(int seqno) {
	return raise(SIGHUP);
}

static void selinux_on_netlink(evutil_socket_t fd, short what, void *userdata) {
	if (avc_netlink_check_nb() < 0)
		log_warning("Failed to check the netlink socket for pending messages and process them: %s",
			    strerror(errno));
}

/* ---- start and stop ------------------------------------------------------- */

static void associations_clear(void) {
	for (size_t i = 0; i < se.n_associations; i++)
		free(se.associations[i].name);
	free(se.associations);
	se.associations = NULL;
	se.n_associations = 0;
}

int bus_selinux_set_associations(const BusConfig *config) {
	Association *a;
	size_t n = 0;

	if (!bus_selinux_on)
		return 0;
	a = calloc(config->n_associations ? config->n_associations : 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < config->n_associations; i++) {
		const BusConfigAssociation *ca = &config->associations[i];
		security_id_t sid;

		if (avc_context_to_sid(ca->context, &sid) < 0) {
			if (errno == ENOMEM) {
				for (size_t k = 0; k < n; k++)
					free(a[k].name);
				free(a);
				return -ENOMEM;
			}
			log_warning("Error getting SID from context \"%s\": %s", ca->context, strerror(errno));
			continue;
		}
		/* the last association of a name wins */
		size_t k = 0;
		while (k < n && !streq(a[k].name, ca->own))
			k++;
		if (k == n) {
			a[n].name = strdup(ca->own);
			if (!a[n].name) {
				for (size_t j = 0; j < n; j++)
					free(a[j].name);
				free(a);
				return -ENOMEM;
			}
			n++;
		}
		a[k].sid = sid;
	}
	associations_clear();
	se.associations = a;
	se.n_associations = n;
	return 0;
}

int bus_selinux_start(Bus *bus, const BusConfig *config, char **ret_error) {
	char *context = NULL;
	int r;

	*ret_error = NULL;
	if (bus_selinux_on || is_selinux_enabled() <= 0)
		return 0;
	bus_audit_open();
	avc_entry_ref_init(&se.aeref);
	if (avc_open(NULL, 0) < 0) {
		r = -errno;
		*ret_error = format("Failed to start Access Vector Cache (AVC): %s", strerror(errno));
		return r;
	}
	selinux_set_callback(SELINUX_CB_POLICYLOAD, (union selinux_callback) { .func_policyload = selinux_policy_loaded });
	selinux_set_callback(SELINUX_CB_AUDIT, (union selinux_callback) { .func_audit = selinux_audit_data });
	selinux_set_callback(SELINUX_CB_LOG, (union selinux_callback) { .func_log = selinux_log });
	se.netlink_fd = avc_netlink_acquire_fd();
	if (se.netlink_fd < 0) {
		r = -errno;
		*ret_error = format("Cannot acquire AVC netlink fd: %s", strerror(errno));
		bus_selinux_stop();
		return r;
	}
	se.ev_netlink = event_new(bus->base, se.netlink_fd, EV_READ | EV_PERSIST, selinux_on_netlink, NULL);
	if (!se.ev_netlink || event_add(se.ev_netlink, NULL) < 0) {
		bus_selinux_stop();
		return -ENOMEM;
	}
	if (getcon(&context) < 0) {
		r = -errno;
		*ret_error = format("Error getting context of bus: %s", strerror(errno));
		bus_selinux_stop();
		return r;
	}
	r = avc_context_to_sid(context, &se.bus_sid) < 0 ? -errno : 0;
	if (r < 0)
		*ret_error = format("Error getting SID from bus context: %s", strerror(-r));
	freecon(context);
	if (r < 0) {
		bus_selinux_stop();
		return r;
	}
	bus_selinux_on = true;
	r = bus_selinux_set_associations(config);
	if (r < 0) {
		bus_selinux_stop();
		return r;
	}
	return 0;
}

void bus_selinux_stop(void) {
	associations_clear();
	if (se.ev_netlink) {
		event_free(se.ev_netlink);
		se.ev_netlink = NULL;
	}
	if (se.netlink_fd >= 0) {
		avc_netlink_release_fd();
		se.netlink_fd = -1;
	}
	if (bus_selinux_on || se.bus_sid)
		avc_destroy();
	bus_selinux_on = false;
	se.bus_sid = NULL;
}

/* ---- connections ---------------------------------------------------------- */

int bus_selinux_client_init(Client *c) {
	if (!bus_selinux_on)
		return 0;
	/* getpeercon(): the socket's label (dbus-daemon refuses a
	 * connection without one) */
	if (!c->creds.label) {
		log_debug("Failed to read an SELinux context from connection");
		return -EACCES;
	}
	if (avc_context_to_sid(c->creds.label, &c->selinux_sid) < 0) {
		if (errno == ENOMEM)
			return -ENOMEM;
		log_warning("Error getting SID from context \"%s\": %s", c->creds.label, strerror(errno));
		return -EACCES;
	}
	return 0;
}

/* ---- the checks ----------------------------------------------------------- */

/* bus_selinux_check(): class dbus, @perm; an unknown class or permission
 * passes if the policy allows unknown ones */
static bool check(security_id_t ssid, security_id_t tsid, const char *perm, const char *aux) {
	security_class_t cls = string_to_security_class("dbus");
	access_vector_t av;

	if (cls == 0) {
		selinux_log(SELINUX_ERROR, "Unknown class %s", "dbus");
		return security_deny_unknown() == 0;
	}
	av = string_to_av_perm(cls, perm);
	if (av == 0) {
		selinux_log(SELINUX_ERROR, "Unknown permission %s for class %s", perm, "dbus");
		return security_deny_unknown() == 0;
	}
	return avc_has_perm(ssid, tsid ? tsid : se.bus_sid, cls, av, &se.aeref, (void *) aux) == 0;
}

bool bus_selinux_allows_acquire(const Client *c, const char *name, char **ret_text) {
	_cleanup_free_ char *aux = NULL;
	security_id_t tsid = NULL;
	int r;

	*ret_text = NULL;
	if (!bus_selinux_on)
		return true;
	for (size_t i = 0; i < se.n_associations; i++)
		if (streq(se.associations[i].name, name))
			tsid = se.associations[i].sid;
	r = c->creds.have_pid ? asprintf(&aux, "service=%s spid=%u", name, (unsigned) c->creds.pid)
			      : asprintf(&aux, "service=%s", name);
	if (r < 0)
		aux = NULL;
	if (aux && check(c->selinux_sid, tsid, "acquire_svc", aux))
		return true;
	if (asprintf(ret_text, "Connection \"%s\" is not allowed to own the service \"%s\" due to SELinux policy",
		     c->unique_name, name) < 0)
		*ret_text = NULL;
	return false;
}

static char *append(char *p, const char *key, const char *value) {
	if (!value)
		return p;
	return stpcpy(stpcpy(p, key), value);
}

bool bus_selinux_allows_send(const Client *sender, const Client *recipient, const WireHeader *h) {
	const char *dest = h->destination.s ? h->destination.s : "org.freedesktop.DBus";
	char spid[24] = "", tpid[24] = "";
	char *aux, *p;
	size_t size;
	bool ok;

	if (!bus_selinux_on)
		return true;
	if (sender->creds.have_pid)
		snprintf(spid, sizeof(spid), "%u", (unsigned) sender->creds.pid);
	if (recipient && recipient->creds.have_pid)
		snprintf(tpid, sizeof(tpid), "%u", (unsigned) recipient->creds.pid);
	/* dbus-daemon's auxiliary data, in its order */
	size = sizeof("msgtype= interface= member= error_name= dest= spid= tpid=") + 32 + strlen(dest) +
	       strlen(spid) + strlen(tpid) + (h->interface.s ? strlen(h->interface.s) : 0) +
	       (h->member.s ? strlen(h->member.s) : 0) + (h->error_name.s ? strlen(h->error_name.s) : 0);
	aux = p = malloc(size);
	if (!aux)
		return false;
	p = stpcpy(stpcpy(p, "msgtype="), wire_type_to_string(h->type));
	p = append(p, " interface=", h->interface.s);
	p = append(p, " member=", h->member.s);
	p = append(p, " error_name=", h->error_name.s);
	p = append(p, " dest=", dest);
	p = append(p, " spid=", spid[0] ? spid : NULL);
	(void) append(p, " tpid=", tpid[0] ? tpid : NULL);
	ok = check(sender->selinux_sid, recipient ? recipient->selinux_sid : NULL, "send_msg", aux);
	free(aux);
	return ok;
}

char *bus_selinux_refusal_text(const Client *sender, const WireHeader *h, const Client *recipient) {
	return client_refusal_text("An SELinux policy prevents this sender from sending this message to this recipient",
				   0, sender, h, false, recipient);
}

char *bus_selinux_context(const Client *c) {
	char *ctx = NULL, *copy;

	if (!bus_selinux_on)
		return NULL;
	if (avc_sid_to_context(c ? c->selinux_sid : se.bus_sid, &ctx) < 0)
		return NULL;
	copy = strdup(ctx);
	freecon(ctx);
	return copy;
}
