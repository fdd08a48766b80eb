/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-policy.c - the bus policy as a client meets it: its snapshot,
 * the names it owns as the policy sees them, the send and receive checks
 * on the forward path and for broadcasts (with their memos), and the
 * refusals shown to monitors and logged.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/kdbus-client.h"
#include "compat/message.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/log.h"
#include "daemon/security.h"
#include "policy/compile.h"
#include "policy/policy.h"
#include "util/format.h"
#include "util/macro.h"
#include <systemd/sd-login.h>

static bool client_policy_deliver(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast);

bool client_policy_receives_from_driver(Client *c, const uint8_t *msg, size_t len) {
	WireHeader h;

	/* a policy that lets everything in needs no look at the header
	 * (the driver's replies are requested and its signals are no replies) */
	if (c->state != CLIENT_ACTIVE || policy_snapshot_receives_all(c->policy.snapshot))
		return true;
	return wire_header_parse(msg, len, &h) < 0 || client_policy_deliver(c, &h, 0, false);
}

static bool client_policy_decide(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast,
				 PolicyDecision *d, bool *ret_receive);

/*
 * A message from the driver that @owner's receive rules refuse: dbus-daemon
 * answers it with an AccessDenied error from itself to itself, which only
 * monitors see.  Return: that error for monitor @mon (NULL @mon: the
 * monitors' sink; serials are @serial_from's), or NULL if @owner takes @msg.
 */
int client_driver_refusal_error(Client *owner, Client *serial_from, const uint8_t *msg, size_t len,
				uint8_t **ret_msg, size_t *ret_len) {
	PolicyDecision d;
	bool receive;
	WireHeader h;

	if (!owner || owner->state != CLIENT_ACTIVE || !owner->policy.snapshot || wire_header_parse(msg, len, &h) < 0 ||
	    client_policy_decide(owner, &h, 0, false, &d, &receive))
		return 0;
	/* as dbus-daemon: the driver's message has no sender yet; its
	 * replies are requested ones */
	_cleanup_free_ char *text = client_refusal_text("Rejected receive message", d.n_matched, NULL, &h,
							h.has_reply_serial, owner);
	if (!text)
		return -ENOMEM;
	int r = driver_build_error_to(serial_from, DRIVER_NAME, h.serial, DBUS_ERR("AccessDenied"),
				      text, ret_msg, ret_len);
	return r < 0 ? r : 1;
}

void client_policy_capture_driver_refusal(Client *to, const uint8_t *msg, size_t len) {
	_cleanup_free_ uint8_t *err = NULL;
	size_t elen;

	if (to->bus->registry.n_monitors && client_driver_refusal_error(to, to, msg, len, &err, &elen) > 0)
		driver_capture(to->bus->driver, err, elen);
}

/* ---- policy ------------------------------------------------------------------- */

static int client_at_console(uid_t uid, void *userdata) {
	return sd_uid_get_seats(uid, 0, NULL) > 0;
}

int client_policy_snapshot(Client *c, Policy *p, PolicySnapshot **ret) {
	const gid_t *gids = NULL;
	size_t n = 0;
	int r;

	if (c->is_unix) {
		r = bus_groups_of_client(c->bus, c, &gids, &n);
		if (r < 0) {
			gids = NULL;
			n = 0;
		}
	}
	PolicyIdentity id = {
		.uid = c->is_unix ? c->creds.uid : POLICY_UID_INVALID,
		.gids = gids,
		.n_gids = n,
		.is_at_console = client_at_console,
	};
	return policy_snapshot_new(ret, p, &id);
}

void client_set_policy(Client *c, PolicySnapshot *s) {
	bus_policy_swap_snapshot(c->bus, &c->policy.snapshot, s);
}

void client_policy_done(Client *c) {
	client_set_policy(c, NULL);
	strv_free(c->policy.names);
	c->policy.names = NULL;
}

static void client_policy_message(const WireHeader *h, const char *sender, PolicyMessage *m) {
	*m = (PolicyMessage) {
		.type = h->type,
		.destination = h->destination.s,
		.sender = sender ? sender : h->sender.s,
		.path = h->path.s,
		.interface = h->interface.s,
		.member = h->member.s,
		.error_name = h->error_name.s,
		.has_reply_serial = h->has_reply_serial && h->reply_serial != 0,
		.n_fds = h->unix_fds,
	};
}

/* the names the policy sees for connection @id: its unique name and every
 * name it owns or waits for; NULL when the policy names none or on failure */
static char **client_policy_names_query(Client *via, uint64_t id) {
	char **l = calloc(2, sizeof(char *));
	size_t n = 1;

	if (!l)
		return NULL;
	l[0] = malloc(24);
	if (!l[0])
		return strv_free(l);
	message_unique_name_format(l[0], id);
	(void) kclient_conn_names_strv(via->conn, id, KDBUS_NAME_ACTIVATOR, &l, &n);
	return l;
}

/* client_policy_names(): a client's list is kept on it while no name
 * changes hands (kdbus_bus_names_generation()); another id's is the
 * caller's to free */
typedef struct ClientNames {
	char **v;
	bool owned;
} ClientNames;

static void client_names_done(ClientNames *n) {
	if (n->owned)
		strv_free(n->v);
}
#define _cleanup_names_ _cleanup_(client_names_done)

static ClientNames client_policy_names(Client *via, uint64_t id) {
	Bus *bus = via->bus;
	uint64_t gen;
	Client *t;

	if (!bus->policy.needs_names || !via->conn || !id)
		return (ClientNames) {};
	gen = kdbus_bus_names_generation(bus->kbus);
	t = client_registry_find(&bus->registry, id);
	if (!t || !gen)
		return (ClientNames) { client_policy_names_query(via, id), true };
	if (t->policy.names && t->policy.names_gen == gen)
		return (ClientNames) { t->policy.names, false };
	strv_free(t->policy.names);
	t->policy.names = client_policy_names_query(via, id);
	t->policy.names_gen = t->policy.names ? gen : 0;
	return (ClientNames) { t->policy.names, false };
}


/* send the dbus1 error @msg from @callee's connection as the reply to the
 * call @cookie of @to: the reply consumes the call's tracker */
static int client_send_reply_to(Client *callee, uint64_t to_id, uint64_t cookie, const uint8_t *msg, size_t len) {
	_Alignas(8) uint8_t buf[MESSAGE_KMSG_BYTES_SIZE];
	/* not a call: the cookie is not tracked */
	struct kdbus_msg *m = message_kmsg_bytes(buf, to_id, cookie, cookie, msg, len);

	return kclient_send(callee->conn, m, 0, NULL);
}

static int client_send_reply_for(Client *callee, Client *to, uint64_t cookie, const uint8_t *msg, size_t len) {
	return client_send_reply_to(callee, to->id, cookie, msg, len);
}

/* client_policy_complain(), answering from @callee's connection when it
 * holds the tracker of the refused call (@cookie non-zero) */
static void client_policy_complain_via(Client *sender, const WireHeader *h, bool receive, const PolicyDecision *d,
				       const Client *recipient, Client *callee, uint64_t cookie);

/* tell @sender that @h was refused, as dbus-daemon's complain_about_message() */
static void client_policy_complain(Client *sender, const WireHeader *h, bool receive, const PolicyDecision *d,
				   const Client *recipient) {
	client_policy_complain_via(sender, h, receive, d, recipient, NULL, 0);
}


/* a send that an allow rule with log="true" let through: dbus-daemon logs
 * it (bus_context_check_security_policy()) */
static void client_policy_log_would_reject(Client *c, const WireHeader *h, const PolicyDecision *d,
					   const Client *recipient) {
	if (!d->log)
		return;
	_cleanup_free_ char *text = client_refusal_text("Would reject message", d->n_matched, c, h,
							h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR,
							recipient);
	if (text)
		log_security("%s", text);
}

/* a refusal by the send (or receive) rules of a message to its addressed
 * recipient: dbus-daemon logs it, and answers a call with AccessDenied */
static void client_policy_complain_via(Client *sender, const WireHeader *h, bool receive, const PolicyDecision *d,
				       const Client *recipient, Client *callee, uint64_t cookie) {
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;

	text = client_refusal_text(receive ? "Rejected receive message" : "Rejected send message", d->n_matched,
				   sender, h, reply, recipient);
	if (!text)
		return;
	log_security("%s", text);
	if (reply)
		return;	/* a refused reply is not answered */
	if (!callee || !cookie) {
		driver_send_error(sender->bus->driver, sender, h->serial, DBUS_ERR("AccessDenied"), "%s",
				  text);
		return;
	}
	if (driver_build_error(sender, h->serial, DBUS_ERR("AccessDenied"), text, &msg, &len) >= 0)
		(void) client_send_reply_for(callee, sender, cookie, msg, len);
}

/* a NameLost that a receive rule of @c refuses: logged (the receive
 * rules do not look at the body, the name) */
static void client_log_name_lost(Client *c) {
	WireHeader h = {
		.type = WIRE_TYPE_SIGNAL,
		.path = { DRIVER_PATH, sizeof(DRIVER_PATH) - 1 },
		.interface = { DRIVER_INTERFACE, sizeof(DRIVER_INTERFACE) - 1 },
		.member = { "NameLost", sizeof("NameLost") - 1 },
		.destination = { c->unique_name, (uint32_t) c->unique_name_len },
	};
	PolicyDecision d;
	bool receive;

	if (client_policy_decide(c, &h, 0, false, &d, &receive))
		return;
	_cleanup_free_ char *text = client_refusal_text("Rejected receive message", d.n_matched, NULL, &h, false, c);
	if (text)
		log_security("%s", text);
}

static int client_log_owned_name_lost(const char *name, uint64_t flags, void *userdata) {
	client_log_name_lost(userdata);
	return 0;
}

/*
 * dbus-daemon sends NameLost for every name a connection owns, its unique
 * name too (the last: the first it had), when it disconnects, becomes a
 * monitor, or the bus exits.  Receive rules that deny it make it log the
 * refusals, which differ only by the name they do not show.  Nothing to
 * do for a policy that lets everything in.
 */
void client_log_names_lost(Client *c) {
	if (c->state != CLIENT_ACTIVE || !c->policy.snapshot || policy_snapshot_receives_all(c->policy.snapshot))
		return;
	if (c->own_names_watched && c->conn)
		(void) kclient_conn_names(c->conn, c->id, KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE,
					  client_log_owned_name_lost, c);
	client_log_name_lost(c);
}

/*
 * client_policy_decide() - the policy for @h from @sender_id (a client, or
 * the driver) arriving at @c: for broadcasts the sender's send rules
 * towards @c, which only now is known, then @c's receive rules.  Unicasts
 * between clients were checked when sent.  On a refusal @d and
 * @ret_receive say which side refused.
 */
static bool client_policy_decide(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast,
				 PolicyDecision *d, bool *ret_receive) {
	Bus *bus = c->bus;
	PolicyMessage pm;
	bool from_driver = sender_id == driver_id(bus->driver) || sender_id == 0;
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;
	Client *s = from_driver ? NULL : client_registry_find(&bus->registry, sender_id);

	*d = (PolicyDecision) {};
	*ret_receive = false;
	if (!c->policy.snapshot || c->state != CLIENT_ACTIVE)
		return true;	/* monitors are not subject to policy */
	client_policy_message(h, NULL, &pm);

	/* a native peer's broadcast: its send rules, as a client's */
	const KernelPeer *kp = broadcast && !s && !from_driver ? kernel_peer_get(bus, c->conn, sender_id) : NULL;
	PolicySnapshot *sp = s ? s->policy.snapshot : kp ? kp->policy : NULL;
	if (broadcast && sp) {
		_cleanup_names_ ClientNames rn = client_policy_names(c, c->id);
		if (policy_snapshot_check_send(sp, &pm, (const char *const *) rn.v, false, d) == 0)
			return false;
		if (s)
			client_policy_log_would_reject(s, h, d, c);
	}
	if (!broadcast && !from_driver)
		return true;	/* unicasts between clients were checked when sent */

	const char *driver_names[] = { DRIVER_NAME, NULL };
	_cleanup_names_ ClientNames sn = from_driver ? (ClientNames) {} : client_policy_names(c, sender_id);
	*d = (PolicyDecision) {};
	*ret_receive = true;
	return policy_snapshot_check_receive(c->policy.snapshot, &pm, from_driver ? driver_names : (const char *const *) sn.v,
					     reply, false, d) != 0;
}

/*
 * client_policy_deliver() - client_policy_decide() at delivery.  As
 * dbus-daemon, the sender of a refused broadcast is not answered; monitors
 * saw the AccessDenied when it was sent (client_policy_broadcast_capture()).
 */
static bool client_policy_deliver(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast) {
	PolicyDecision d;
	bool receive;

	if (client_policy_decide(c, h, sender_id, broadcast, &d, &receive))
		return true;
	/* as dbus-daemon, a refusal is logged unless the message was not
	 * addressed to @c: broadcasts are not, the driver's own unicasts
	 * (its replies, NameAcquired...) are */
	if (!broadcast && h->destination.s && !client_registry_find(&c->bus->registry, sender_id)) {
		_cleanup_free_ char *text = client_refusal_text("Rejected receive message", d.n_matched, NULL, h,
								h->has_reply_serial, c);
		if (text)
			log_security("%s", text);
	}
	return false;
}

/*
 * client_policy_broadcast_capture() - dbus-daemon decides a broadcast per
 * receiver when it is sent, and for each receiver that refuses it shows
 * monitors an AccessDenied error to the sender right after the broadcast
 * (bus_transaction_capture_error_reply(); the sender gets none).  With
 * monitors on the bus, the receivers whose match rules take @h are looked
 * at now, and the errors go to the monitors' sink; the receivers' own
 * check still happens at delivery.  The same for a signal with fds and
 * each receiver that takes no fds, with NotSupported.
 */
void client_policy_broadcast_capture(Client *c, const WireHeader *h, const uint8_t *body) {
	Bus *bus = c->bus;
	Client *rc;

	if (!bus->registry.n_monitors || !c->policy.snapshot || h->type != WIRE_TYPE_SIGNAL)
		return;
	list_for_each_entry(rc, &bus->registry.all, link) {
		PolicyDecision d;
		bool receive;
		_cleanup_free_ char *text = NULL;
		_cleanup_free_ uint8_t *msg = NULL;
		size_t len;

		const char *error = DBUS_ERR("AccessDenied");

		if (rc == c || rc->state != CLIENT_ACTIVE || !rc->policy.snapshot || !rc->conn ||
		    !client_match_any(rc, h, body, c->id, KDBUS_DST_ID_BROADCAST, false))
			continue;
		if (!client_policy_decide(rc, h, c->id, true, &d, &receive))
			text = client_refusal_text(receive ? "Rejected receive message" : "Rejected send message",
						   d.n_matched, c, h, false, rc);
		else if (h->unix_fds && !rc->unix_fd) {
			/* ... and for each one that takes no fds (the core skips
			 * it, kdbus_bus_set_broadcast_fds()) a NotSupported */
			error = DBUS_ERR("NotSupported");
			text = format("broadcast cannot be delivered to %s (%s) because it does not support "
				      "receiving Unix fds", rc->unique_name, client_loginfo(rc));
		} else
			continue;
		if (text && driver_build_error(c, h->serial, error, text, &msg, &len) >= 0)
			driver_capture(bus->driver, msg, len);
	}
}

/*
 * monitors see a refused copy of @h, sent by @s, as dbus-daemon's
 * send_one_message() shows it: an error to the sender (nobody else sees
 * it, and it is not logged)
 */
static void client_policy_show_refusal(Bus *bus, Client *s, const WireHeader *h, const char *error_name,
				       const char *text) {
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;

	if (bus->registry.n_monitors && text && driver_build_error(s, h->serial, error_name, text, &msg, &len) >= 0)
		driver_capture(bus->driver, msg, len);
}

/*
 * client_policy_security_delivery() - the security modules' decision
 * (daemon/security.h) from @s to @c, for a broadcast's receiver or an
 * eavesdropper: as dbus-daemon's send_one_message(), a refusal drops the
 * copy, and monitors see it as the module's error to the sender.
 */
bool client_policy_security_delivery(Client *c, const WireHeader *h, Client *s) {
	SecurityRefusal refusal;

	if (security_allows_send(s, c, h, false, &refusal))
		return true;
	client_policy_show_refusal(c->bus, s, h, refusal.error_name, refusal.text);
	security_refusal_done(&refusal);
	return false;
}

/*
 * client_policy_eavesdrop() - may eavesdropper @c see @h, sent by client
 * @s (NULL: gone) to someone else: as dbus-daemon, the sender's send rules
 * with @c's names as the receiver, then @c's receive rules with
 * eavesdropping; requested_reply is false (the reply is not @c's).
 */
bool client_policy_eavesdrop(Client *c, const WireHeader *h, Client *s) {
	Bus *bus = c->bus;
	uint64_t sender_id = s ? s->id : 0;
	PolicyDecision d = {};
	PolicyMessage pm;
	bool receive = false;

	if (!c->policy.snapshot || !s || !s->policy.snapshot)
		return false;
	if (_unlikely_(bus_security_enabled()) && !client_policy_security_delivery(c, h, s))
		return false;
	client_policy_message(h, NULL, &pm);
	_cleanup_names_ ClientNames rn = client_policy_names(c, c->id);
	if (policy_snapshot_check_send(s->policy.snapshot, &pm, (const char *const *) rn.v, false, &d) != 0) {
		_cleanup_names_ ClientNames sn = client_policy_names(c, sender_id);
		d = (PolicyDecision) {};
		receive = true;
		if (policy_snapshot_check_receive(c->policy.snapshot, &pm, (const char *const *) sn.v, false, true, &d) != 0)
			return true;
	}
	/* monitors see the refusal as an AccessDenied error to the sender */
	if (bus->registry.n_monitors) {
		_cleanup_free_ char *text = client_refusal_text(receive ? "Rejected receive message" :
								"Rejected send message", d.n_matched, s, h, false, c);
		client_policy_show_refusal(bus, s, h, DBUS_ERR("AccessDenied"), text);
	}
	return false;
}

/*
 * client_policy_refused() - answer @c's message @h that @f refused: as
 * dbus-daemon, every refused message is answered with AccessDenied,
 * replies too (their text says whether the receiver had asked for them).
 */
void client_policy_refused(Client *c, const WireHeader *h, const PolicyRefusal *f) {
	_cleanup_free_ char *text = NULL;

	if (!f->reply) {
		client_policy_complain(c, h, f->receive, &f->d, f->recipient);
		return;
	}
	text = client_refusal_text(f->receive ? "Rejected receive message" : "Rejected send message", f->d.n_matched,
				   c, h, f->requested_reply, f->recipient);
	if (!text)
		return;
	log_security("%s", text);
	driver_send_error(c->bus->driver, c, h->serial, DBUS_ERR("AccessDenied"), "%s", text);
}

/* the connection a unicast @h goes to: 0 if none (or an activator) */
uint64_t client_target_id(Client *c, const WireHeader *h, const MessageTarget *t) {
	uint64_t id = 0;

	if (t->dst_id != KDBUS_DST_ID_NAME)
		return t->dst_id;
	return kclient_name_owner(c->conn, h->destination.s, &id) < 0 ? 0 : id;
}

/* the receive side of a send check: may @dc take @pm from @c (under c's
 * names)?  A refusal is described in @f */
static bool client_policy_receive_side_of(Client *c, const PolicySnapshot *rp, const PolicyMessage *pm, bool reply,
					  PolicyRefusal *f) {
	if (!rp)
		return true;
	_cleanup_names_ ClientNames sn = client_policy_names(c, c->id);
	f->receive = true;
	memset(&f->d, 0, sizeof(f->d));
	return policy_snapshot_check_receive(rp, pm, (const char *const *) sn.v, reply, false, &f->d) != 0;
}

static bool client_policy_receive_side(Client *c, Client *dc, const PolicyMessage *pm, bool reply,
				       PolicyRefusal *f) {
	return client_policy_receive_side_of(c, dc ? dc->policy.snapshot : NULL, pm, reply, f);
}

/*
 * client_policy_unrequested() - the policy for a reply @h from @c that no
 * call of its receiver @dst waits for: @c's send rules and @dst's receive
 * rules with requested_reply false.  dbus-daemon delivers such a reply
 * when they allow it (session.conf's eavesdrop="true" rules do, and
 * send_requested_reply="false" ones), and answers AccessDenied otherwise.
 * Return: true if it may go; else @f says why.
 */
bool client_policy_unrequested(Client *c, const WireHeader *h, uint64_t dst, PolicyRefusal *f) {
	Client *dc = dst ? client_registry_find(&c->bus->registry, dst) : NULL;
	PolicyMessage pm;

	*f = (PolicyRefusal) { .recipient = dc, .reply = true };
	if (!c->policy.snapshot)
		return false;
	client_policy_message(h, c->unique_name, &pm);
	_cleanup_names_ ClientNames rn = dc ? client_policy_names(c, dst) : (ClientNames) {};
	if (policy_snapshot_check_send(c->policy.snapshot, &pm, dc ? (const char *const *) rn.v : NULL, false, &f->d) == 0)
		return false;
	return client_policy_receive_side(c, dc, &pm, false, f);
}

/*
 * client_policy_refused_reply() - client_policy_send() refused reply @h as
 * a requested one.  dbus-daemon decides so only if the receiver asked for
 * it (and then forgets the call, as the reply would have); else it
 * decides as for an unrequested reply, which may let it through.
 * Return: true if it may go, as an unrequested reply.
 */
bool client_policy_refused_reply(Client *c, const WireHeader *h, const MessageTarget *t, PolicyRefusal *f) {
	uint64_t dst = client_target_id(c, h, t);
	/* the kernel keeps its trackers to itself: the calls we handed @c */
	int r = !dst ? 0
		: c->bus->on_kernel ? owed_replies_take(&c->owed_replies, dst, h->reply_serial)
				    : kdbus_reply_pending(c->conn, dst, h->reply_serial, true);

	f->reply = true;
	if (r != 0) {
		f->requested_reply = true;
		return false;
	}
	return client_policy_unrequested(c, h, dst, f);
}

/*
 * client_policy_send() - the policy for a unicast or driver-bound message
 * from @c, before it is sent: @c's send rules and, for a destination that
 * is a client, its receive rules.  Return: true if it may go; else
 * @ret_refusal says why.
 */
bool client_policy_send(Client *c, const WireHeader *h, const MessageTarget *t, bool to_driver,
			PolicyRefusal *ret_refusal) {
	Bus *bus = c->bus;
	PolicyMessage pm;
	PolicyRefusal *f = ret_refusal;
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;
	uint64_t dst = 0;
	Client *dc = NULL;

	*f = (PolicyRefusal) {};
	if (!c->policy.snapshot)
		return false;
	if (t->dst_id == KDBUS_DST_ID_BROADCAST)
		return true;	/* as dbus-daemon: decided per receiver, at delivery */
	/* nothing to decide when we may send anything and everybody may
	 * receive anything (session.conf) */
	if (policy_snapshot_sends_all(c->policy.snapshot) && bus->policy.n_strict_receivers == 0 &&
	    (!bus->on_kernel || bus->policy.everyone_receives))
		return true;
	client_policy_message(h, c->unique_name, &pm);
	if (to_driver) {
		/* a reply to the driver never answers a call of it: refused,
		 * it is answered as an unrequested reply (dbus-daemon) */
		f->reply = reply;
		if (policy_snapshot_check_send(c->policy.snapshot, &pm, NULL, false, &f->d) == 0)
			return false;
		client_policy_log_would_reject(c, h, &f->d, NULL);
		return true;
	}
	if (t->dst_id == KDBUS_DST_ID_NAME) {
		/* as dbus-daemon, a name nobody holds is ServiceUnknown before
		 * any policy is looked at: the core answers ESRCH; and one
		 * only an activator holds, with NO_AUTO_START, NameHasNoOwner
		 * (EADDRNOTAVAIL) */
		if (kclient_name_owner(c->conn, h->destination.s, &dst) == -ESRCH ||
		    (dst == 0 && (h->flags & WIRE_FLAG_NO_AUTO_START)))
			return true;
	} else {
		dst = t->dst_id;
		/* no such peer: the core answers ENXIO */
		if (!client_registry_find(&bus->registry, dst) && !(bus->on_kernel && kernel_peer_get(bus, c->conn, dst)))
			return true;
	}
	dc = dst ? client_registry_find(&bus->registry, dst) : NULL;
	f->recipient = dc;
	/* a native peer of the kernel bus: its names and receive rules */
	const KernelPeer *kp = !dc && dst && bus->on_kernel ? kernel_peer_get(bus, c->conn, dst) : NULL;

	/* replies pass if they were asked for: the core refuses any other */
	_cleanup_names_ ClientNames rn = dc || kp ? client_policy_names(c, dst) : (ClientNames) {};
	/* a call or signal to a client whose names' TALK entries provably
	 * answer as the send rules (policy/compile.h): the core's TALK check
	 * on sending is the sender side; the receive side stays ours */
	bool talk_decided = dc && rn.v && !reply && !pm.has_reply_serial && !policy_snapshot_logs_sends(c->policy.snapshot) &&
			    (h->type == WIRE_TYPE_METHOD_CALL || h->type == WIRE_TYPE_SIGNAL) &&
			    policy_compiled_talk_is_exact(bus->policy.compiled, (const char *const *) rn.v, NULL);
	if (!talk_decided &&
	    policy_snapshot_check_send(c->policy.snapshot, &pm, dc || kp ? (const char *const *) rn.v : NULL, reply,
				       &f->d) == 0)
		return false;
	client_policy_log_would_reject(c, h, &f->d, dc);
	if (kp)
		return client_policy_receive_side_of(c, kp->policy, &pm, reply, f);
	return client_policy_receive_side(c, dc, &pm, reply, f);
}

/*
 * client_policy_kernel_peer_unicast() - a unicast from native peer @kp
 * arriving at @c: @kp's send rules towards @c's names, then @c's receive
 * rules, as for a client's message (the kernel checked neither).  A
 * refused call is answered with AccessDenied from @c's connection, which
 * holds its tracker; the refusal is logged as dbus-daemon logs a client's.
 */
bool client_policy_kernel_peer_unicast(Client *c, const struct kdbus_msg *m, const WireHeader *h,
				       const KernelPeer *kp) {
	PolicyMessage pm;
	PolicyDecision d = {};
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;
	/* the kernel delivers a reply with cookie_reply only for a call
	 * it tracked */
	bool requested = reply && m->cookie_reply;
	bool receive = false;

	if (!c->policy.snapshot || c->state != CLIENT_ACTIVE)
		return true;
	client_policy_message(h, NULL, &pm);
	{
		_cleanup_names_ ClientNames rn = client_policy_names(c, c->id);
		if (policy_snapshot_check_send(kp->policy, &pm, (const char *const *) rn.v, requested, &d) == 0)
			goto refused;
	}
	{
		_cleanup_names_ ClientNames sn = client_policy_names(c, kp->id);
		d = (PolicyDecision) {};
		receive = true;
		if (policy_snapshot_check_receive(c->policy.snapshot, &pm, (const char *const *) sn.v, requested, false, &d) != 0)
			return true;
	}
refused:;
	_cleanup_free_ char *text = peer_refusal_text(receive ? "Rejected receive message" : "Rejected send message",
						 d.n_matched, kp->name, kp->loginfo ? kp->loginfo : "", h, requested,
						 client_loginfo(c));
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;

	if (!text)
		return false;
	log_security("%s", text);
	if (reply || !(m->flags & KDBUS_MSG_EXPECT_REPLY))
		return false;
	if (driver_build_error_to(c, kp->name, h->serial, DBUS_ERR("AccessDenied"), text, &msg, &len) >= 0)
		(void) client_send_reply_to(c, kp->id, m->cookie, msg, len);
	return false;
}

/*
 * client_handed_over_allowed() - the receive side of a message that waited
 * on an activator and was handed over to @c when @c took the name: it was
 * not checked when sent, since no client owned the name then.  A refused
 * call is answered with AccessDenied, as dbus-daemon does when it
 * dispatches the messages of a finished activation.
 */
/* a handed-over message the security modules refuse: its sender gets the
 * module's error, as the answer to its call */
static _noinline_ bool client_handed_over_secure(Client *c, const struct kdbus_msg *m, const WireHeader *h) {
	Client *s = client_registry_find(&c->bus->registry, m->src_id);
	SecurityRefusal refusal;
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;

	if (!s || security_allows_send(s, c, h, false, &refusal))
		return true;
	if (refusal.text && !(m->flags & KDBUS_MSG_EXPECT_REPLY))
		driver_send_error(c->bus->driver, s, h->serial, refusal.error_name, "%s", refusal.text);
	else if (refusal.text && driver_build_error(s, h->serial, refusal.error_name, refusal.text, &msg, &len) >= 0)
		(void) client_send_reply_for(c, s, m->cookie, msg, len);
	security_refusal_done(&refusal);
	return false;
}

bool client_handed_over_allowed(Client *c, const struct kdbus_msg *m, const ClientOut *o) {
	Bus *bus = c->bus;
	PolicyMessage pm;
	PolicyDecision d = {};
	WireHeader h;

	if (!c->policy.snapshot || c->state != CLIENT_ACTIVE)
		return true;
	if (o->n_iov != 1 || client_header_parse_shared(bus, o->iov[0].iov_base, o->len, &h) < 0)
		return true;	/* the core holds only messages the sender's client validated */
	/* as dbus-daemon delivers the messages of a finished activation: the
	 * security modules with the service as the recipient first */
	if (_unlikely_(bus_security_enabled()) && !client_handed_over_secure(c, m, &h))
		return false;
	client_policy_message(&h, NULL, &pm);
	_cleanup_names_ ClientNames sn = client_policy_names(c, m->src_id);
	if (policy_snapshot_check_receive(c->policy.snapshot, &pm, (const char *const *) sn.v, false, false, &d) != 0)
		return true;
	Client *s = client_registry_find(&bus->registry, m->src_id);
	if (s)
		client_policy_complain_via(s, &h, true, &d, c, c,
					   (m->flags & KDBUS_MSG_EXPECT_REPLY) ? m->cookie : 0);
	return false;
}

/*
 * client_policy_deliver() for a stream of like broadcasts: its answer
 * depends only on the header (but the serial), the sender, the two
 * snapshots and, with names in the policy, the names of the two (which
 * cannot change while kdbus_bus_names_generation() stays), so a "yes" is
 * remembered for the next broadcast with the same header from the same
 * sender.  A "no" is not: it has to be complained about each time.
 */
bool client_policy_deliver_memo(Client *c, const WireHeader *h, uint64_t header_id, uint64_t sender_id,
				bool broadcast) {
	Bus *bus = c->bus;
	/* with names in the policy, while no name changed hands */
	uint64_t names_gen = bus->policy.needs_names ? kdbus_bus_names_generation(bus->kbus) : 0;
	bool memo = broadcast && header_id && (!bus->policy.needs_names || names_gen);

	if (memo && c->policy.memo.header_id == header_id && c->policy.memo.sender_id == sender_id &&
	    c->policy.memo.generation == bus->policy.generation && c->policy.memo.policy == c->policy.snapshot &&
	    c->policy.memo.names_generation == names_gen)
		return true;
	if (!client_policy_deliver(c, h, sender_id, broadcast))
		return false;
	/* a sender whose sends are logged is logged each time */
	if (memo) {
		Client *s = client_registry_find(&bus->registry, sender_id);
		memo = !s || !policy_snapshot_logs_sends(s->policy.snapshot);
	}
	if (memo) {
		c->policy.memo.header_id = header_id;
		c->policy.memo.sender_id = sender_id;
		c->policy.memo.generation = bus->policy.generation;
		c->policy.memo.policy = c->policy.snapshot;
		c->policy.memo.names_generation = names_gen;
	}
	return true;
}
