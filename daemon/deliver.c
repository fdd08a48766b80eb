/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deliver.c - the receive side of a client: what the core delivers to the
 * client's connection, taken one slice at a time (deliver_slice()), in
 * steps as forward.c sends:
 *
 *   take       the slice from the core's pool; kernel notifications go to
 *              client-notify.c, and an answered call leaves the limit of
 *              calls pending (forward.c)
 *   fill       a free slot of the output ring (client-io.c) with the
 *              slice's payload vectors and fds
 *   filter     what the core cannot decide for a dbus1 client: a native
 *              peer's message checked as a whole D-Bus message, the exact
 *              match rules of a broadcast and of a monitor, what monitors
 *              are not shown, the security modules (security.c) and the
 *              receive side of the XML policy (client-policy.c)
 *   write      the slot joins the ring, which client-io.c writes to the
 *              socket; a call the client owes an answer to is remembered
 *              on the kernel bus (owed-replies.c)
 *
 * A message that does not pass goes back to the core unwritten.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "compat/kdbus-client.h"
#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/log.h"
#include "daemon/owed-replies.h"
#include "daemon/security.h"
#include "policy/policy.h"
#include "util/macro.h"

/* @o becomes the slice @m at @offset: its payload vectors and fds (a free
 * slot holds nothing, out_slot_release(): only what is read before it is
 * written).  Return: whether it has bytes to write. */
static bool deliver_fill(Client *c, ClientOut *o, struct kdbus_msg *m, uint64_t offset,
			      uint64_t *ret_payload_off) {
	uint64_t payload_off;

	o->slice = offset;
	o->owned = NULL;
	o->sent = 0;
	KCLIENT_MSG_PARTS(c->conn, m, o->iov, ELEMENTSOF(o->iov), o->n_iov, o->len, payload_off, o->fds, o->n_fds);
	*ret_payload_off = payload_off;
	return o->n_iov != 0 && o->len != 0;
}

/* the header of the message in @o (client_header_parse_payload()); its h
 * is NULL when it is not one vector, or does not parse */
static ClientPayloadHeader deliver_header(Client *c, const ClientOut *o, uint64_t payload_off) {
	if (o->n_iov != 1)
		return (ClientPayloadHeader) {};
	return client_header_parse_payload(c->bus, kdbus_payload_id(c->conn, payload_off), o->iov[0].iov_base,
					   o->len);
}

/* as dbus-daemon, what monitor @c is not shown of @m */
static bool deliver_monitor_hides(Client *c, const struct kdbus_msg *m, const WireHeader *h) {
	Bus *bus = c->bus;

	/* what the sink sends are eavesdroppers' copies, which monitors saw
	 * as the originals */
	if (bus->sink && m->src_id == kdbus_conn_get_id(bus->sink))
		return true;
	/* a call (or reply, or anything of the Peer interface) without
	 * destination, and the bus's answer to it (libdbus's: without
	 * sender, and with a destination only if the client wrote itself
	 * one as SENDER) */
	if (!h->destination.s && (h->type != WIRE_TYPE_SIGNAL || driver_is_peer_message(h)))
		return true;
	if (!h->sender.s && m->src_id == driver_id(bus->driver))
		return true;
	if (m->dst_id == driver_id(bus->driver) && driver_shows_monitors_itself(h))
		return true;
	/* what the bus says only to monitors (sent to the sink) is not shown
	 * to the monitor it is addressed to (a client's message to a
	 * monitor's name, which no longer exists, is) */
	return bus->sink && m->dst_id == kdbus_conn_get_id(bus->sink) && h->destination.s && h->sender.s &&
	       streq(h->sender.s, DRIVER_NAME) && streq(h->destination.s, c->unique_name);
}

static _noinline_ bool deliver_security_broadcast(Client *c, const struct kdbus_msg *m, const WireHeader *h) {
	Client *s = client_registry_find(&c->bus->registry, m->src_id);

	return !s || client_policy_security_delivery(c, h, s);
}

/* a broadcast (passed the bloom prefilter), anything to a monitor, or what
 * the driver sends: the exact dbus1 rules (a monitor's BecomeMonitor rules),
 * then the receive side of the policy */
static bool deliver_passes_rules(Client *c, const struct kdbus_msg *m, const ClientOut *o, uint64_t payload_off,
				      bool from_driver) {
	const uint8_t *p = o->iov[0].iov_base;
	uint64_t dst = m->dst_id;
	ClientPayloadHeader ph = deliver_header(c, o, payload_off);
	const WireHeader *h = ph.h;
	uint64_t hid = ph.id;

	if (!h)
		return false;
	/* sent to a well-known name: match against its owner */
	if (dst == KDBUS_DST_ID_NAME && h->destination.s)
		dst = client_name_owner(c, h->destination.s);
	bool broadcast = m->dst_id == KDBUS_DST_ID_BROADCAST;
	bool monitor = c->state == CLIENT_MONITOR;
	if (monitor && deliver_monitor_hides(c, m, h))
		return false;
	if (broadcast && !monitor ? !client_match_broadcast(c, h, p + h->header_len, hid, m->src_id)
	    : monitor && !client_match_any(c, h, p + h->header_len, m->src_id, dst, true))
		return false;
	/* the security modules, for the sender of a broadcast (monitors
	 * are not mediated, nor what the bus sends) */
	if (_unlikely_(bus_security_enabled()) && broadcast && !monitor && !from_driver &&
	    !deliver_security_broadcast(c, m, h))
		return false;
	return !(broadcast || from_driver) || client_policy_deliver_memo(c, h, hid, m->src_id, broadcast);
}

/*
 * A message from native peer @kp of the kernel bus, which the kernel
 * passed without looking inside: @c takes only a whole dbus1 message that
 * names its true sender (the connection's unique name) and carries the
 * fds it says, and then under the policy, as a client's.
 */
static _noinline_ bool deliver_kernel_peer(Client *c, const struct kdbus_msg *m, const ClientOut *o,
						 uint64_t payload_off, const KernelPeer *kp) {
	const uint8_t *p = o->iov[0].iov_base;
	WireHeader h;

	if (o->n_iov != 1 || wire_header_parse(p, o->len, &h) < 0 || h.total_len != o->len ||
	    wire_body_validate(&h, p + h.header_len, h.body_len) < 0 || h.unix_fds != o->n_fds) {
		log_security("Rejected message from native peer %s (%s): not a whole D-Bus message", kp->name,
			     kp->loginfo);
		return false;
	}
	if (!h.sender.s || !streq(h.sender.s, kp->name)) {
		log_security("Rejected message from native peer %s (%s): its sender field is \"%s\"", kp->name,
			     kp->loginfo, h.sender.s ? h.sender.s : "(unset)");
		return false;
	}
	if (m->dst_id == KDBUS_DST_ID_BROADCAST || c->state == CLIENT_MONITOR)
		return deliver_passes_rules(c, m, o, payload_off, false);
	return client_policy_kernel_peer_unicast(c, m, &h, kp);
}

/* whether @c takes @m (in @o): the rules and policy where they apply */
/*
 * The security modules' decision for a reply, as it is delivered: the
 * core took it and the caller's call is answered, so that, refused, it is
 * dropped and the call simply never answered, as dbus-daemon forgets a
 * call whose reply it refused; the replier gets the error.  A reply the
 * core delivers as one (cookie_reply) is a requested one; an unrequested
 * reply comes as a plain message.
 */
static _noinline_ bool deliver_security_reply(Client *c, const struct kdbus_msg *m, const ClientOut *o,
						    uint64_t payload_off) {
	const WireHeader *h = deliver_header(c, o, payload_off).h;
	SecurityRefusal refusal;
	Client *s;

	if (!h || (h->type != WIRE_TYPE_METHOD_RETURN && h->type != WIRE_TYPE_ERROR))
		return true;
	s = client_registry_find(&c->bus->registry, m->src_id);
	if (!s || security_allows_send(s, c, h, m->cookie_reply != 0, &refusal))
		return true;
	if (refusal.text)
		driver_send_error(c->bus->driver, s, h->serial, refusal.error_name, "%s", refusal.text);
	security_refusal_done(&refusal);
	return false;
}

static bool deliver_wanted(Client *c, const struct kdbus_msg *m, const ClientOut *o, uint64_t payload_off) {
	bool from_driver = m->src_id == driver_id(c->bus->driver);

	if (_unlikely_(c->bus->on_kernel) && !from_driver) {
		const KernelPeer *kp = kernel_peer_get(c->bus, c->conn, m->src_id);
		if (kp)
			return deliver_kernel_peer(c, m, o, payload_off, kp);
	}

	/* the driver's unicasts need only the receive rules: none to apply
	 * when they let everything in */
	if (from_driver && m->dst_id != KDBUS_DST_ID_BROADCAST && c->state == CLIENT_ACTIVE &&
	    policy_snapshot_receives_all(c->policy.snapshot))
		return true;
	if (m->dst_id == KDBUS_DST_ID_BROADCAST || c->state == CLIENT_MONITOR || from_driver)
		return deliver_passes_rules(c, m, o, payload_off, from_driver);
	/* moved from an activator: the new owner's receive rules */
	if ((m->flags & KDBUS_MSG_HANDED_OVER) || (_unlikely_(c->handover_unchecked) && m->dst_id == KDBUS_DST_ID_NAME))
		return client_handed_over_allowed(c, m, o);
	if (_unlikely_(bus_security_enabled()))
		return deliver_security_reply(c, m, o, payload_off);
	return true;
}

/* the slice at @offset goes back to the core unwritten (out of line: the
 * address of @offset would cost deliver_slice() a stack canary) */
static _noinline_ void deliver_free_slice(Client *c, uint64_t offset) {
	(void) kdbus_free_batch(c->conn, &offset, 1);
}

/*
 * One received slice: queue it for the socket, or drop it.  It is built in
 * place in the ring's free tail slot; nothing below pushes to the ring
 * before out_ring_commit() (what the policy answers goes through the
 * core).
 */
int deliver_slice(Client *c, uint64_t offset) {
	struct kdbus_msg *m = kdbus_pool_ptr(c->conn, offset);
	uint64_t payload_off;
	ClientOut *o;

	if (_unlikely_(c->kernel_calls.n) && m->cookie_reply)
		kernel_calls_answered(&c->kernel_calls, m->cookie_reply);
	if (m->payload_type == KDBUS_PAYLOAD_KERNEL) {
		client_handle_kernel_msg(c, m);
		deliver_free_slice(c, offset);
		return 0;
	}
	o = out_ring_reserve(&c->out);
	if (!o) {
		deliver_free_slice(c, offset);
		return -ENOMEM;
	}
	if (!deliver_fill(c, o, m, offset, &payload_off) || !deliver_wanted(c, m, o, payload_off) ||
	    /* cannot happen: the core refuses fds to connections without ACCEPT_FD */
	    (o->n_fds && !c->unix_fd)) {
		out_slot_release(o, c->conn);
		return 0;
	}
	if (_unlikely_(c->bus->on_kernel) && (m->flags & KDBUS_MSG_EXPECT_REPLY) && c->state == CLIENT_ACTIVE)
		owed_replies_add(&c->owed_replies, c->bus, c->conn, m->src_id, m->cookie);
	if (_unlikely_(o->len >= CLIENT_SNDBUF_GROW_MIN))
		client_grow_sndbuf(c);
	out_ring_commit(&c->out, o);
	return 0;
}
