/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forward.c - the forward path: one message a client sent, from its frame
 * to KDBUS_CMD_SEND, one step per function (client_dispatch() walks them:
 * take, hello, target, policy, rewrite, adopt, send, answer).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compat/bloom.h"
#include "compat/match-key.h"
#include "compat/message.h"
#include "daemon/bus.h"
#include "daemon/call-overflow.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/monitor-sink.h"
#include "daemon/security.h"
#include "daemon/service-registry.h"
#include "policy/policy.h"
#include "util/macro.h"

/*
 * The bloom filter of a signal depends on its type, path, interface, member
 * and body, so a client that emits the same signal again gets it from a
 * one-entry cache keyed by the forwarded header (without the serial) and
 * the body: a memcmp() instead of about twenty SipHash rounds.
 */
#define CLIENT_BLOOM_KEY_MAX 512
struct ClientBloomCache {
	uint64_t bloom[BLOOM_DEFAULT_SIZE / 8];
	uint64_t keys[MATCH_KEYS_MAX];
	size_t n_keys;
	size_t hlen, blen;
	uint8_t key[CLIENT_BLOOM_KEY_MAX];
};

/* the bloom filter and the match keys (match-key.h) of a signal; *n_keys
 * 0 when the core does not take keys */
static void client_bloom(Client *c, const WireHeader *h, const uint8_t *hdr, size_t hlen, const uint8_t *body,
			 uint64_t *bloom, uint64_t keys[static MATCH_KEYS_MAX], size_t *n_keys) {
	struct ClientBloomCache *bc = c->bloom_cache;
	/* only string-like arguments (s, o, g, arrays of them) go into the
	 * filter: without them the body is no part of the key */
	size_t blen = h->signature.s && strpbrk(h->signature.s, "sog") ? h->body_len : 0;
	bool cacheable = hlen >= 16 && hlen + blen <= CLIENT_BLOOM_KEY_MAX;
	bool with_keys = kdbus_conn_is_userspace(c->conn);

	if (cacheable && bc && bc->hlen == hlen && bc->blen == blen && memcmp(bc->key, hdr, 8) == 0 &&
	    memcmp(bc->key + 12, hdr + 12, hlen - 12) == 0 && memcmp(bc->key + hlen, body, blen) == 0) {
		memcpy(bloom, bc->bloom, BLOOM_DEFAULT_SIZE);
		*n_keys = with_keys ? bc->n_keys : 0;
		memcpy(keys, bc->keys, *n_keys * sizeof(uint64_t));
		return;
	}
	memset(bloom, 0, BLOOM_DEFAULT_SIZE);
	bloom_add_message(bloom, BLOOM_DEFAULT_SIZE, BLOOM_DEFAULT_N_HASH, h, body);
	*n_keys = with_keys ? match_keys_of_signal(h->interface.s, h->member.s, keys) : 0;
	if (!cacheable)
		return;
	if (!bc && !(bc = c->bloom_cache = malloc(sizeof(*bc))))
		return;
	memcpy(bc->bloom, bloom, BLOOM_DEFAULT_SIZE);
	bc->n_keys = *n_keys;
	memcpy(bc->keys, keys, *n_keys * sizeof(uint64_t));
	bc->hlen = hlen;
	bc->blen = blen;
	memcpy(bc->key, hdr, hlen);
	memcpy(bc->key + hlen, body, blen);
}

/* the connection a unicast from @c was for, if it is a client */
static const Client *client_send_recipient(Client *c, const WireHeader *h, const MessageTarget *t) {
	uint64_t id = 0;

	if (t->dst_id == KDBUS_DST_ID_NAME) {
		if (!h->destination.s || kclient_name_owner(c->conn, h->destination.s, &id) < 0)
			return NULL;
	} else if (t->dst_id != KDBUS_DST_ID_BROADCAST)
		id = t->dst_id;
	return id ? client_registry_find(&c->bus->registry, id) : NULL;
}

/*
 * client_capture_unsent() - monitors see a message the bus did not deliver
 * (no such destination, or a refused reply) before the error that answers
 * it, as with dbus-daemon's bus_transaction_capture(): it goes to the
 * monitors' sink.  Only with monitors on the bus.
 */
static void client_capture_unsent(Client *c, const WireHeader *h, const uint8_t *body, const int *fds, size_t n_fds) {
	Bus *bus = c->bus;
	MessageTarget t = {};
	_cleanup_free_ uint8_t *hbuf = NULL;
	size_t hmax, hlen;

	if (!bus->registry.n_monitors || !(t.dst_id = monitor_sink_id(bus)))
		return;
	hmax = wire_header_rewrite_size(h, c->unique_name_len);
	hbuf = malloc(hmax);
	if (!hbuf || wire_header_rewrite(h, c->unique_name, c->unique_name_len, hbuf, hmax, &hlen) < 0)
		return;
	MessageSendParts parts = {
		.header = hbuf,
		.header_len = hlen,
		.body = body,
		.body_len = h->body_len,
		.fds = fds,
		.n_fds = n_fds,
	};
	_Alignas(8) uint8_t kbuf[MESSAGE_KMSG_BASE_SIZE + CLIENT_MAX_FDS_PER_READ * sizeof(int)];
	struct kdbus_msg *km = message_kmsg_build(h, &t, &parts, kbuf);

	(void) kclient_send(c->conn, km, KCLIENT_SEND_PLAIN, NULL);
}

/*
 * client_routing_error() - answer @c's message @h that the core could not
 * deliver (@r, KDBUS_CMD_SEND's error).  As dbus-daemon, whatever the
 * message's type and NO_REPLY_EXPECTED: signals and replies to a name
 * nobody holds are answered as method calls are.
 */
static void client_routing_error(Client *c, const WireHeader *h, const MessageTarget *t, int r) {
	Bus *bus = c->bus;
	const char *err = driver_error_for_send(r);

	switch (r) {
	case -ESRCH:
	case -ENXIO:
	case -EADDRNOTAVAIL:
		/* as dbus-daemon: without NO_AUTO_START it would have been
		 * activated, but no service file provides it (an activatable
		 * name's activator holds it: -EADDRNOTAVAIL) */
		if (h->flags & WIRE_FLAG_NO_AUTO_START)
			driver_send_error(bus->driver, c, h->serial, DBUS_ERR("NameHasNoOwner"),
					  "Name \"%s\" does not exist", strempty(h->destination.s));
		else
			driver_send_error(bus->driver, c, h->serial, DBUS_ERR("ServiceUnknown"),
					  "The name %s was not provided by any .service files",
					  h->destination.s ? h->destination.s : "(none)");
		break;
	case -EMLINK:
		/* dbus-daemon logs this one */
		log_security("The maximum number of pending replies for \"%s\" (%s) has been reached "
			     "(max_replies_per_connection=%" PRIu64 ")", c->unique_name, client_loginfo(c),
			     bus->limits.max_replies_per_connection);
		driver_send_error(bus->driver, c, h->serial, err,
				  "The maximum number of pending replies per connection has been reached");
		break;
	case -ENOBUFS:
	case -EXFULL:
	case -EPERM: {
		/* as dbus-daemon's complain_about_message(), logged */
		_cleanup_free_ char *text = client_refusal_text(
			r == -EPERM ? "Rejected send message" : "Rejected: destination has a full message queue",
			0, c, h, false, client_send_recipient(c, h, t));
		if (!text)
			break;
		log_security("%s", text);
		driver_send_error(bus->driver, c, h->serial, err, "%s", text);
		break;
	}
	case -EDQUOT:
		driver_send_error(bus->driver, c, h->serial, err,
				  "The destination %s has too many messages queued from uid %u "
				  "(the user's share of max_outgoing_bytes/max_outgoing_unix_fds)",
				  h->destination.s, (unsigned) c->creds.uid);
		break;
	case -ECOMM:
		/* (sic: dbus-daemon's text has no space there) */
		driver_send_error(bus->driver, c, h->serial, err,
				  "Tried to send message with Unix file descriptors"
				  "to a client that doesn't support that.");
		break;
	default:
		driver_send_error(bus->driver, c, h->serial, err, "Cannot deliver the message to %s: %s",
				  h->destination.s ? h->destination.s : "(broadcast)", strerror(-r));
		break;
	}
}

/*
 * A message before Hello, as dbus-daemon takes it: 1 for a Hello that
 * registers the client; 0 for a message answered (a call without
 * destination as any other, anything else to the driver with an error to
 * ":not.active.yet") after which the client may go on; -EPERM when the
 * client is to be disconnected (a message for anyone else, a signal without
 * destination); what client_send_owned() returns when the answer cannot
 * be written.
 */
/* monitors see what a client sends before Hello with the sender
 * ":not.active.yet", as dbus-daemon shows it */
static void client_capture_before_hello(Client *c, const WireHeader *h, const uint8_t *body) {
	static const char sender[] = ":not.active.yet";
	_cleanup_free_ uint8_t *buf = NULL;
	size_t max, hlen;

	if (!c->bus->registry.n_monitors)
		return;
	max = wire_header_rewrite_size(h, strlen(sender));
	buf = malloc(max + h->body_len);
	if (!buf || wire_header_rewrite(h, sender, strlen(sender), buf, max, &hlen) < 0)
		return;
	memcpy(buf + hlen, body, h->body_len);
	driver_capture(c->bus->driver, buf, hlen + h->body_len);
}

static int client_before_hello(Client *c, const WireHeader *h, const uint8_t *body) {
	_cleanup_free_ char *text = NULL;
	const char *name;
	uint8_t *msg;
	size_t len;
	int r;

	if (!h->destination.s && (h->type != WIRE_TYPE_SIGNAL || driver_is_peer_message(h))) {
		r = driver_build_undirected_reply(c, h, &msg, &len);
	} else if (!h->destination.s || !streq(h->destination.s, DRIVER_NAME)) {
		client_capture_before_hello(c, h, body);
		return -EPERM;
	} else {
		if (h->type == WIRE_TYPE_METHOD_CALL && h->member.s && streq(h->member.s, "Hello") &&
		    (!h->interface.s || streq(h->interface.s, DRIVER_INTERFACE))) {
			if (!h->signature.s || !h->signature.s[0])
				return 1;
			name = DBUS_ERR("InvalidArgs");
			if (asprintf(&text, "Call to Hello has wrong args (%s, expected )\n", h->signature.s) < 0)
				return -ENOMEM;
		} else {
			name = DBUS_ERR("AccessDenied");
			text = strdup("Client tried to send a message other than Hello without being registered");
			if (!text)
				return -ENOMEM;
		}
		client_capture_before_hello(c, h, body);
		r = driver_build_error_to(c, ":not.active.yet", h->serial, name, text, &msg, &len);
		if (r >= 0)
			driver_capture(c->bus->driver, msg, len);
	}
	if (r < 0)
		return r;
	if (!msg)
		return 0;
	return client_send_owned(c, msg, len);
}

/* ---- the forward path: one message from the client to the core ------------ */

/* the fds that came with one message: closed once it is done with (the
 * core took its own copies) */
typedef struct MessageFds {
	int v[CLIENT_MAX_FDS_PER_READ];
	size_t n;
} MessageFds;

static void message_fds_close(MessageFds *f) {
	for (size_t i = 0; i < f->n; i++)
		safe_close(f->v[i]);
	f->n = 0;
}

/* one message on its way through client_dispatch() */
typedef struct Forward {
	uint8_t *msg;
	size_t len;
	WireHeader h;
	MessageTarget t;
	MessageFds fds;
	bool is_hello;		/* the client's Hello: not subject to the send policy */
	bool to_driver;
	bool undirected;	/* no destination, answered by the bus as libdbus (to the driver) */
	bool rescanned;		/* its name was unknown: the service directories were read again */
	bool allowed;		/* else it goes to the monitors' sink, then is refused */
	bool unrequested;	/* a reply no call waits for that the policy allows */
	SecurityRefusal security;	/* refused by a security module, not by the XML policy */
	PolicyRefusal refusal;
	const char *close_reason;	/* DISPATCH_CLOSE: why */
	/* the header the bus forwards */
	uint8_t hstack[1024];
	uint8_t *hheap;
	uint8_t *hbuf;
	size_t hlen;
	/* a broadcast's bloom filter and match keys */
	uint64_t bloom[BLOOM_DEFAULT_SIZE / 8], keys[MATCH_KEYS_MAX];
	size_t bloom_size, n_keys;
} Forward;

static void forward_init(Forward *f, uint8_t *msg, size_t len) {
	f->msg = msg;
	f->len = len;
	f->fds.n = 0;
	f->is_hello = f->to_driver = f->undirected = f->rescanned = f->allowed = f->unrequested = false;
	f->security = (SecurityRefusal) {};
	/* (h, t and refusal are set by the steps that decide them) */
	f->hheap = NULL;
	f->hbuf = NULL;
	f->hlen = 0;
	f->bloom_size = f->n_keys = 0;
}

static void forward_done(Forward *f) {
	message_fds_close(&f->fds);
	if (_unlikely_(f->security.error_name))
		security_refusal_done(&f->security);
	free(f->hheap);
	f->hheap = NULL;
}

/* a step's verdict: the client is to be closed, for @reason
 * (forward_end() closes it) */
static Dispatch forward_close(Forward *f, const char *reason) {
	f->close_reason = reason;
	return DISPATCH_CLOSE;
}

/* a step's result @r, what client_send_owned() returned for an answer:
 * done, even when -ENOMEM dropped it; a socket that cannot be written
 * closes the client, as client_flush() closes it */
static Dispatch forward_of_errno(Forward *f, int r) {
	if (r >= 0 || r == -ENOMEM)
		return DISPATCH_DONE;
	return forward_close(f, r == -EPIPE || r == -ECONNRESET ? "peer closed" : "write failed");
}

/* the one place a message closes its client: @d is what the steps
 * decided, and what client_dispatch() returns (DISPATCH_CLOSED once the
 * client is closed) */
static inline Dispatch forward_end(Client *c, const Forward *f, Dispatch d) {
	if (_unlikely_(d == DISPATCH_CLOSE)) {
		client_close(c, f->close_reason);
		return DISPATCH_CLOSED;
	}
	return d;
}

/* frame → validate: the header and body checked, the message's fds taken
 * from what came with the bytes */
static Dispatch forward_take(Client *c, Forward *f) {
	Bus *bus = c->bus;
	WireHeader *h = &f->h;

	if (wire_header_parse(f->msg, f->len, h) < 0)
		return forward_close(f, "invalid message header");
	if (wire_body_validate(h, f->msg + h->header_len, h->body_len) < 0)
		return forward_close(f, "invalid message body");
	if (h->unix_fds > c->in.n_fds || h->unix_fds > bus->limits.max_message_unix_fds ||
	    h->unix_fds > CLIENT_MAX_FDS_PER_READ)
		return forward_close(f, "message announces more fds than were passed");
	f->fds.n = h->unix_fds;
	if (f->fds.n) {
		client_input_take_fds(c, f->fds.v, f->fds.n);
	}
	client_stats_message_in(c);
	return DISPATCH_NEXT;
}

/*
 * The security modules' decision (daemon/security.h) for a message to the
 * bus or to one client: the recipient is the bus for what goes to the
 * driver, else the client the destination names; a broadcast is decided
 * per receiver at delivery, a reply as it is delivered (it answers the
 * call: client-io.c).  A call to a name an activator holds is decided as
 * one that starts the service (AppArmor, with the label its file
 * assumes); what else no client receives now (a name nobody holds, a
 * native peer of the kernel bus) is not decided here.
 */
static bool forward_security_allows(Client *c, Forward *f, Client **ret_recipient) {
	Bus *bus = c->bus;
	const WireHeader *h = &f->h;
	uint64_t dst = f->t.dst_id;

	*ret_recipient = NULL;
	if (f->to_driver)
		return security_allows_send(c, NULL, h, false, &f->security);
	if (dst == KDBUS_DST_ID_BROADCAST || h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR)
		return true;
	if (dst == KDBUS_DST_ID_NAME && kclient_name_owner(c->conn, h->destination.s, &dst) < 0)
		return true;
	if (dst == 0 && f->t.dst_name) {
		/* an activator's: the call starts the service */
		if (h->type == WIRE_TYPE_METHOD_CALL && !(h->flags & WIRE_FLAG_NO_AUTO_START))
			return security_allows_activation(
				c, service_registry_assumed_apparmor_label(bus, h->destination.s), h, &f->security);
		return true;
	}
	*ret_recipient = dst ? client_registry_find(&bus->registry, dst) : NULL;
	return !*ret_recipient || security_allows_send(c, *ret_recipient, h, false, &f->security);
}

/* a message a security module refused: as dbus-daemon, its error in its
 * words, whatever the message (not logged: the module audited it) */
static void forward_security_refused(Client *c, const WireHeader *h, const SecurityRefusal *refusal, bool registered) {
	_cleanup_free_ uint8_t *msg = NULL;
	size_t len;

	if (!refusal->text)
		return;
	if (registered) {
		driver_send_error(c->bus->driver, c, h->serial, refusal->error_name, "%s", refusal->text);
		return;
	}
	/* before Hello, as client_before_hello() answers */
	if (driver_build_error_to(c, ":not.active.yet", h->serial, refusal->error_name, refusal->text, &msg,
				  &len) < 0)
		return;
	driver_capture(c->bus->driver, msg, len);
	(void) client_send_owned(c, TAKE_PTR(msg), len);
}

/* the client's first message: Hello registers it (and may be answered
 * here), anything else is answered as dbus-daemon does */
static Dispatch forward_hello(Client *c, Forward *f) {
	Bus *bus = c->bus;
	int r;

	f->is_hello = true;
	r = client_before_hello(c, &f->h, f->msg + f->h.header_len);
	if (r == -EPERM)
		return forward_close(f, "first message was not Hello");
	if (r <= 0)
		return forward_of_errno(f, r);
	/* Hello to the bus, under the security modules too */
	if (_unlikely_(bus_security_enabled()) && !security_allows_send(c, NULL, &f->h, false, &f->security)) {
		forward_security_refused(c, &f->h, &f->security, false);
		return DISPATCH_DONE;
	}
	/* as dbus-daemon: an error reply, and the connection stays until
	 * it gives up or times out */
	r = client_check_limits(c, f->h.serial);
	if (r <= 0)
		return forward_of_errno(f, r);
	r = client_register(c);
	if (r < 0)
		return forward_close(f, r == -EMFILE ? "too many connections" : "cannot register");
	driver_stats_names(bus->driver, c, true);
	driver_names_hello(bus->driver, c);
	kdbus_conn_set_wakeup(c->conn, client_wakeup, c);
	/* answered here, or else by the driver through the core */
	r = driver_hello_direct(bus->driver, c, &f->h);
	if (r < 0)
		log_debug("Cannot answer Hello of %s directly: %s", c->unique_name, strerror(-r));
	return r > 0 ? DISPATCH_DONE : DISPATCH_NEXT;
}

/* monitors may not send; dbus-daemon disconnects them, but for what
 * libdbus answers before the bus sees it (the Peer interface without
 * destination), which is answered as to any connection */
static Dispatch forward_from_monitor(Client *c, Forward *f) {
	const WireHeader *h = &f->h;

	if (driver_is_peer_message(h)) {
		uint8_t *msg;
		size_t len;
		int r = driver_build_undirected_reply(c, h, &msg, &len);
		if (r >= 0 && msg)
			r = client_send_owned(c, msg, len);
		return forward_of_errno(f, r);
	}

	log_warning("Monitoring connection %s (%s) is not allowed to send messages; closing it. Please fix the "
		    "monitor to not do that. (message type=\"%s\" interface=\"%s\" member=\"%s\" error "
		    "name=\"%s\" destination=\"%s\")", c->unique_name, client_loginfo(c), policy_type_name(h->type),
		    h->interface.s ? h->interface.s : "(unset)", h->member.s ? h->member.s : "(unset)",
		    h->error_name.s ? h->error_name.s : "(unset)", h->destination.s ? h->destination.s : DRIVER_NAME);
	return forward_close(f, "monitor sent a message");
}

/* → target: the driver, a unique id, a well-known name or a broadcast; a
 * name that cannot exist is answered at once */
static Dispatch forward_target(Client *c, Forward *f) {
	Bus *bus = c->bus;
	int r;

	if (wire_header_is_local(&f->h))
		return forward_close(f, "message on the reserved Local interface");
	f->to_driver = f->h.destination.s && streq(f->h.destination.s, DRIVER_NAME);
	if (f->to_driver) {
		f->t = (MessageTarget) { .dst_id = driver_id(bus->driver) };
		return DISPATCH_NEXT;
	}
	r = message_target(&f->h, &f->t);
	if (r == 0 && f->t.dst_id == driver_id(bus->driver))
		r = -ENXIO;	/* the driver has no unique name */
	if (r < 0) {
		/* as dbus-daemon: no such name, whatever the type */
		client_capture_unsent(c, &f->h, f->msg + f->h.header_len, f->fds.v, f->fds.n);
		client_routing_error(c, &f->h, &f->t, -ENXIO);
		return DISPATCH_DONE;
	}
	return DISPATCH_NEXT;
}

/* → policy: the send rules (and the receiver's receive rules); a refused
 * message still goes on to the monitors' sink when there are monitors */
static Dispatch forward_policy(Client *c, Forward *f) {
	const WireHeader *h = &f->h;

	/* the security modules first, as dbus-daemon (Hello was decided
	 * before) */
	if (_unlikely_(bus_security_enabled()) && !f->is_hello) {
		Client *recipient;
		security_refusal_done(&f->security);	/* (decided anew after a rescan) */
		if (!forward_security_allows(c, f, &recipient)) {
			f->allowed = false;
			f->refusal = (PolicyRefusal) { .recipient = recipient };
			if (!c->bus->registry.n_monitors) {
				forward_security_refused(c, h, &f->security, true);
				return DISPATCH_DONE;
			}
			return DISPATCH_NEXT;
		}
	}
	/* as dbus-daemon, Hello is not subject to the send policy */
	f->allowed = f->is_hello || client_policy_send(c, h, &f->t, f->to_driver, &f->refusal);
	/* a reply refused as a requested one: was it asked for?  One to a
	 * name an activator holds never was (and is decided before it can
	 * start the service) */
	if (!f->to_driver && (h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR)) {
		uint64_t owner;
		if (!f->allowed) {
			f->allowed = f->unrequested = client_policy_refused_reply(c, h, &f->t, &f->refusal);
		} else {
			/* (on kdbus.ko, the call it answers is no longer owed) */
			if (_unlikely_(c->bus->on_kernel) && c->owed_replies.calls.n)
				(void) owed_replies_take(&c->owed_replies, client_target_id(c, h, &f->t),
							 h->reply_serial);
			if (f->t.dst_name && !(h->flags & WIRE_FLAG_NO_AUTO_START) &&
			    kclient_name_owner(c->conn, h->destination.s, &owner) == 0 && owner == 0)
				f->allowed = f->unrequested = client_policy_unrequested(c, h, 0, &f->refusal);
		}
	}
	if (!f->allowed && !c->bus->registry.n_monitors) {
		client_policy_refused(c, h, &f->refusal);
		return DISPATCH_DONE;
	}
	return DISPATCH_NEXT;
}

/* monitors see what the policy refused, as with dbus-daemon: it goes to a
 * connection that only drops it */
static void forward_refused_to_sink(Client *c, Forward *f) {
	if (f->allowed)
		return;
	f->t = (MessageTarget) { .dst_id = monitor_sink_id(c->bus) };
	f->bloom_size = 0;
	f->n_keys = 0;
	f->to_driver = false;
}

/* → rewrite: the header the bus forwards (our sender, only known fields);
 * a message without destination gets its real target, a signal its bloom
 * filter, a refused message the monitors' sink */
static Dispatch forward_rewrite(Client *c, Forward *f) {
	Bus *bus = c->bus;
	size_t hmax;
	int r;

	if (_unlikely_(f->t.dst_id == KDBUS_DST_ID_BROADCAST) &&
	    (f->h.type != WIRE_TYPE_SIGNAL || driver_is_peer_message(&f->h))) {
		/* no destination, and not a broadcast signal: dbus-daemon's
		 * end of the connection (libdbus) answers a call, or any
		 * message of the Peer interface, and drops a reply
		 * (driver_build_undirected_reply()).  The driver answers in
		 * libdbus' place, after the client's earlier calls; the
		 * header goes as the client wrote it (its SENDER, if any, is
		 * the answer's destination), as a plain message (no reply is
		 * tracked, nobody else sees it) */
		if (f->h.type != WIRE_TYPE_METHOD_CALL && !driver_is_peer_message(&f->h))
			return DISPATCH_DONE;
		f->t.dst_id = driver_id(bus->driver);
		f->to_driver = f->undirected = true;
		f->hbuf = f->msg;
		f->hlen = f->h.header_len;
		return DISPATCH_NEXT;
	}
	hmax = wire_header_rewrite_size(&f->h, c->unique_name_len);

	f->hbuf = f->hstack;
	if (hmax > sizeof(f->hstack)) {
		f->hheap = malloc(hmax);
		if (!f->hheap)
			return DISPATCH_DONE;	/* dropped: out of memory */
		f->hbuf = f->hheap;
	}
	r = wire_header_rewrite(&f->h, c->unique_name, c->unique_name_len, f->hbuf, hmax, &f->hlen);
	if (r < 0)
		return forward_close(f, "cannot rewrite header");

	if (f->t.dst_id == KDBUS_DST_ID_BROADCAST) {
		f->bloom_size = BLOOM_DEFAULT_SIZE;
		client_bloom(c, &f->h, f->hbuf, f->hlen, f->msg + f->h.header_len, f->bloom, f->keys, &f->n_keys);
	}

	forward_refused_to_sink(c, f);
	return DISPATCH_NEXT;
}

/* a large unicast that sits in a core payload buffer (our read buffer)
 * goes by reference: its forwarded header replaces the original one,
 * right before the body, and h is parsed again from there, since its
 * strings pointed into the bytes overwritten.  Return: where the message
 * now starts, NULL if it is not adopted */
static uint8_t *forward_adopt(Client *c, Forward *f, Dispatch *ret) {
	uint8_t *q;
	WireHeader h2;

	*ret = DISPATCH_NEXT;
	if (!f->allowed || f->to_driver || f->t.dst_id == KDBUS_DST_ID_BROADCAST || !c->in.handle ||
	    f->h.body_len < CLIENT_ADOPT_MIN || f->msg < c->in.buf || f->msg + f->len > c->in.buf + c->in.len)
		return NULL;
	q = f->msg + f->h.header_len - f->hlen;
	if (((uintptr_t) q & 7) != 0 || q < c->in.buf - CLIENT_RBUF_SLACK + 8)
		return NULL;
	memmove(q, f->hbuf, f->hlen);
	if (wire_header_parse(q, f->hlen + f->h.body_len, &h2) < 0) {
		*ret = forward_close(f, "cannot rewrite header");
		return NULL;
	}
	f->h = h2;
	if (f->t.dst_name) {
		f->t.dst_name = f->h.destination.s;
		f->t.dst_name_len = f->h.destination.len;
	}
	return q;
}

/* what monitors see before an allowed message itself */
static void forward_before_send(Client *c, const Forward *f) {
	const WireHeader *h = &f->h;

	/* the ActivationRequest it causes */
	if (f->t.dst_name && !(h->flags & WIRE_FLAG_NO_AUTO_START))
		service_registry_before_send(c->bus, c, h->destination.s);
	/* the errors of the activations an ActivationFailure ends, before the
	 * signal itself, as dbus-daemon sends them */
	if (f->to_driver && h->type == WIRE_TYPE_SIGNAL && h->member.s && streq(h->member.s, "ActivationFailure") &&
	    h->interface.s && streq(h->interface.s, "org.freedesktop.systemd1.Activator"))
		service_registry_activation_failure_raw(c->bus, c, f->msg, f->len);
}

/*
 * kdbus.ko limits the calls a connection has waiting for a reply to its
 * own number (the final ABI's KDBUS_CONN_MAX_REQUESTS_PENDING).  Below
 * it, max_replies_per_connection is the daemon's to count on the kernel
 * bus (the in-process core counts it itself): the cookies of a client's
 * calls are kept until their reply, REPLY_TIMEOUT or REPLY_DEAD arrives.
 * Return: the limit to count against, 0 when nothing is counted.
 */
static uint32_t client_calls_limited(const Client *c) {
	uint64_t max = c->bus->limits.max_replies_per_connection;

	if (!c->bus->on_kernel || max >= KERNEL_MAX_CALLS_PENDING)
		return 0;
	return max ? (uint32_t) max : 1;
}

void client_forward_done(Client *c) {
	free(c->bloom_cache);
	c->bloom_cache = NULL;
}

/*
 * A call past kdbus.ko's limit of pending replies while
 * max_replies_per_connection allows more (call-overflow.h): it goes as a
 * plain message, tracked by the daemon.  Return: as kdbus_cmd_send(),
 * -EMLINK when the configured limit is reached too.
 */
static _noinline_ int forward_send_untracked(Client *c, Forward *f, struct kdbus_msg *km, uint64_t *ret_return_flags) {
	Bus *bus = c->bus;
	uint64_t callee = f->t.dst_id, flags = 0;
	int r;

	if (!bus->call_overflow || !call_overflow_has_room(bus->call_overflow, c->id))
		return -EMLINK;
	/* by name: its owner now, unless an activator holds it (the call
	 * then goes to whoever takes the name) */
	if (f->t.dst_name && (kdbus_name_owner(c->conn, f->t.dst_name, &callee, &flags) < 0 ||
			      (flags & KDBUS_HELLO_ACTIVATOR)))
		callee = 0;
	r = kclient_send(c->conn, km, KCLIENT_SEND_NO_TRACKER | KCLIENT_SEND_NO_TIMEOUT, ret_return_flags);
	if (r == 0)
		(void) call_overflow_add(bus->call_overflow, c->id, callee, (uint32_t) km->cookie,
					 bus_reply_deadline(bus));
	return r;
}

/* the receiver's kernel queue is full (ENOBUFS): if it is one of our
 * clients, its ring takes the queue (client_take_queue()) */
static _noinline_ bool forward_take_receiver_queue(Client *c, const Forward *f) {
	uint64_t id = f->t.dst_id, flags;

	if (f->t.dst_name && kdbus_name_owner(c->conn, f->t.dst_name, &id, &flags) < 0)
		return false;
	return id != c->id && client_take_queue(c->bus, id);
}

/* forward_send()'s answer when the message is to go again: its name was
 * unknown, and is activatable since the directories were read again */
#define FORWARD_SEND_AGAIN 1

/*
 * A name nobody holds, not even an activator (the core's ESRCH), and
 * auto-start allowed: as dbus-daemon's activation_find_entry(), the
 * service directories are read again (once) before the sender is told
 * that no .service file provides it.  Return: whether it is activatable
 * now.
 */
static bool forward_rescan(Client *c, Forward *f) {
	if (!f->t.dst_name || (f->h.flags & WIRE_FLAG_NO_AUTO_START) || f->rescanned)
		return false;
	f->rescanned = true;
	return service_registry_rescan(c->bus, f->h.destination.s);
}

/* → SEND: the kdbus message to the core, and what dbus-daemon does where
 * the core says no (a call to the driver beyond the pending replies, a
 * reply no call waits for, fds on a broadcast).  Return: the send's
 * result, or FORWARD_SEND_AGAIN (nothing sent, nothing answered); @ret_full
 * set when the client has max_incoming_* in flight */
static int forward_send(Client *c, Forward *f, uint8_t *adopt_at, bool *ret_full) {
	Bus *bus = c->bus;
	const WireHeader *h = &f->h;
	const uint8_t *body = f->msg + f->h.header_len;
	int r;

	if (adopt_at)
		body = adopt_at + f->hlen;
	MessageSendParts parts = {
		.header = adopt_at ? adopt_at : f->hbuf,
		.header_len = f->hlen,
		.body = body,
		.body_len = h->body_len,
		.fds = f->fds.v,
		.n_fds = f->fds.n,
		.bloom = f->bloom,
		.bloom_size = f->bloom_size,
		.keys = f->keys,
		.n_keys = f->n_keys,
		.timeout_ns = bus_reply_deadline(bus),
	};
	_Alignas(8) uint8_t kbuf_stack[MESSAGE_KMSG_BASE_SIZE + CLIENT_MAX_FDS_PER_READ * sizeof(int)];
	struct kdbus_msg *km = message_kmsg_build(h, &f->t, &parts, kbuf_stack);
	uint64_t return_flags = 0;
	/* (an unrequested reply that the policy allows is an ordinary
	 * unicast: it consumes no tracker; so is what goes to the driver
	 * without destination) */
	unsigned how = !f->allowed || f->unrequested || f->undirected ? KCLIENT_SEND_PLAIN : 0;
	if (f->allowed)
		forward_before_send(c, f);
	/* (a refused message goes to the monitors' sink, if there is one) */
	if (adopt_at)
		(void) kdbus_payload_offer(c->conn, c->in.handle, adopt_at);
	uint32_t calls_limit = _unlikely_(c->bus->on_kernel) && !how && (km->flags & KDBUS_MSG_EXPECT_REPLY) &&
				       !f->to_driver ? client_calls_limited(c) : 0;
	if (calls_limit && c->kernel_calls.n >= calls_limit)
		r = -EMLINK;	/* as the in-process core: the caller gets LimitsExceeded */
	else if (how)
		r = f->allowed || f->t.dst_id ? kclient_send(c->conn, km, KCLIENT_SEND_PLAIN, &return_flags) : 0;
	else
		r = kclient_send(c->conn, km, 0, &return_flags);
	if (_unlikely_(r == -ENOBUFS) && c->bus->on_kernel && forward_take_receiver_queue(c, f))
		r = kclient_send(c->conn, km, 0, &return_flags);
	if (calls_limit && r == 0)
		kernel_calls_sent(&c->kernel_calls, km->cookie);
	if (_unlikely_(r == -ESRCH) && forward_rescan(c, f)) {
		if (adopt_at)
			(void) kdbus_payload_offer(c->conn, NULL, NULL);	/* offered again */
		return FORWARD_SEND_AGAIN;
	}
	if (_unlikely_(r == -EMLINK) && !f->to_driver && !calls_limit && c->bus->on_kernel)
		r = forward_send_untracked(c, f, km, &return_flags);
	if (r == -EMLINK && f->to_driver)
		/* as dbus-daemon, calls to the driver are answered whatever
		 * the caller has pending: no reply tracker for this one (the
		 * driver's answer then goes as a plain message) */
		r = kclient_send(c->conn, km, KCLIENT_SEND_NO_TRACKER, &return_flags);
	if (r == -EBADSLT) {
		/*
		 * A reply no call waits for (kdbus' EBADSLT: the core only
		 * takes a reply that consumes a tracker).  dbus-daemon
		 * decides it with requested_reply false; if that allows it,
		 * it goes again as an ordinary unicast, without cookie_reply
		 * (the dbus1 header keeps its REPLY_SERIAL), which on kdbus
		 * too is a plain message.  The offer of our read buffer
		 * still holds: the failed send took nothing.
		 */
		if (call_overflow_take(bus->call_overflow, f->t.dst_id, c->id, h->reply_serial) ||
		    client_policy_unrequested(c, h, client_target_id(c, h, &f->t), &f->refusal)) {
			r = kclient_send(c->conn, km, KCLIENT_SEND_NOT_REPLY, &return_flags);
		} else {
			f->allowed = false;
			client_capture_unsent(c, h, body, f->fds.v, f->fds.n);
			r = 0;
		}
	} else if (r == -ENOTUNIQ && f->fds.n && f->t.dst_id == KDBUS_DST_ID_BROADCAST) {
		/* kdbus refuses fds on broadcasts (our core takes them, see
		 * kdbus_bus_set_broadcast_fds()): the signal goes without */
		parts.n_fds = 0;
		km = message_kmsg_build(h, &f->t, &parts, kbuf_stack);
		r = kclient_send(c->conn, km, 0, &return_flags);
	} else if (r < 0 && r != -EBADSLT && f->allowed && !f->to_driver) {
		/* monitors see what could not be routed, then the error */
		client_capture_unsent(c, h, body, f->fds.v, f->fds.n);
	}
	if (adopt_at && kdbus_payload_offer(c->conn, NULL, NULL))
		client_input_given(c);
	*ret_full = return_flags & KDBUS_SEND_RETURN_INFLIGHT_FULL;
	return r;
}

/* → answer: what follows a SEND (monitors' captures, the refusal, the
 * driver's turn, or the error of a message that could not be routed) */
static void forward_answer(Client *c, Forward *f, int r) {
	if (r >= 0 && f->allowed && f->t.dst_id == KDBUS_DST_ID_BROADCAST)
		client_policy_broadcast_capture(c, &f->h, f->msg + f->h.header_len);
	if (!f->allowed && f->security.error_name)
		forward_security_refused(c, &f->h, &f->security, true);
	else if (!f->allowed)
		client_policy_refused(c, &f->h, &f->refusal);
	else if (f->to_driver)
		driver_dispatch(c->bus->driver);
	else if (r < 0 && f->t.dst_id != KDBUS_DST_ID_BROADCAST)
		/* (a broadcast fails only as a whole: not answered) */
		client_routing_error(c, &f->h, &f->t, r);
}

/*
 * client_dispatch() - one complete, framed message from the client, along
 * the data path: take (frame, validate, fds) → Hello → target → policy →
 * rewrite → SEND → answer.
 */
Dispatch client_dispatch(Client *c, uint8_t *msg, size_t len) {
	/* (not zeroed as a whole: its buffers are kilobytes, per message) */
	_cleanup_(forward_done) Forward f;
	uint8_t *adopt_at = NULL;
	Dispatch d;

	forward_init(&f, msg, len);
	bool full = false;
	int r;

	d = forward_take(c, &f);
	if (d == DISPATCH_NEXT && c->state == CLIENT_AWAIT_HELLO)
		d = forward_hello(c, &f);
	else if (d == DISPATCH_NEXT && c->state == CLIENT_MONITOR)
		d = forward_from_monitor(c, &f);
	if (d == DISPATCH_NEXT)
		d = forward_target(c, &f);
again:
	if (d == DISPATCH_NEXT)
		d = forward_policy(c, &f);
	if (d == DISPATCH_NEXT) {
		if (!f.rescanned)
			d = forward_rewrite(c, &f);
		else
			forward_refused_to_sink(c, &f);	/* (its header is written already) */
	}
	if (d != DISPATCH_NEXT)
		return forward_end(c, &f, d);
	if (!f.rescanned) {
		adopt_at = forward_adopt(c, &f, &d);
		if (d != DISPATCH_NEXT)
			return forward_end(c, &f, d);
	}
	r = forward_send(c, &f, adopt_at, &full);
	/* (each step has one call, so that all are inlined here) */
	if (_unlikely_(r == FORWARD_SEND_AGAIN))
		goto again;	/* to a name activatable now: the policy decides it anew */
	/* as dbus-daemon: the next message waits while what this client
	 * has in flight is at max_incoming_bytes / max_incoming_unix_fds */
	if (full)
		client_input_hold(c);
	message_fds_close(&f.fds);
	forward_answer(c, &f, r);
	return DISPATCH_DONE;
}
