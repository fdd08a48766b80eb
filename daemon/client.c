/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.c - one classic D-Bus connection.
 *
 * Input: bytes are read into one buffer (recvmsg with SCM_RIGHTS), framed,
 * validated and handed on: before Hello to the SASL state machine, then
 * each message is header-rewritten (sender set, unknown fields dropped) and
 * SENT to the core with the body bytes as they came.  Messages to
 * org.freedesktop.DBus go to the driver's connection, and the driver runs
 * before the next message of this client is looked at, so a client's
 * messages take effect in order.
 *
 * Output: the core wakes the client when its queue becomes non-empty; the
 * client RECVs slices and writes them with one sendmsg() per batch,
 * straight from the payload the core shares between receivers.  While the
 * socket is full it stops RECVing, so messages wait in the core, where
 * quotas apply to their senders.
 */
#include <assert.h>
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/sockios.h>

#include "compat/auth.h"
#include "compat/bloom.h"
#include "compat/match-key.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/monitor.h"
#include "daemon/peer-creds.h"
#include "daemon/service-registry.h"
#include "policy/compile.h"
#include "policy/config.h"
#include "policy/policy.h"
#include <systemd/sd-login.h>
#include "util/format.h"
#include "util/macro.h"

#define CLIENT_READ_MIN (64 * 1024)
#define CLIENT_RBUF_KEEP (1024 * 1024)
#define CLIENT_READ_BUDGET (256 * 1024)
#define CLIENT_OUT_MAX 128		/* messages in flight to the socket */
#define CLIENT_OUT_BYTES_MAX (4 * 1024 * 1024)
#define CLIENT_MAX_FDS_PER_READ 253
#define CLIENT_IOV_MAX 64
#define CLIENT_RECV_BATCH 16		/* messages taken from the core at once */
#define CLIENT_LIMIT_SLACK 256		/* client_limit_output() */
/* read buffers are core payload buffers (kdbus_payload_new()) with room in
 * front, so that a large message can be handed to the core in place: its
 * forwarded header is written just before its body (client_dispatch()) */
#define CLIENT_RBUF_SLACK 512
#define CLIENT_ADOPT_MIN (16 * 1024)	/* bodies this large go by reference */
/* a client sent a message this large gets a larger socket send buffer
 * (client_grow_sndbuf()) */
#define CLIENT_SNDBUF_GROW_MIN (256 * 1024)
#define CLIENT_SNDBUF_LARGE (1024 * 1024)	/* asked for; the kernel doubles it,
						 * up to twice net.core.wmem_max */

static uint8_t *client_rbuf_new(Bus *bus, size_t cap, void **ret_handle) {
	uint8_t *d;

	/* a buffer the core took and gave back, of about the size */
	for (size_t i = 0; i < ELEMENTSOF(bus->given_rbuf); i++) {
		struct BusGivenRbuf *g = &bus->given_rbuf[i];

		if (g->handle && g->cap >= cap && g->cap <= 2 * cap && kdbus_payload_unshared(bus->kbus, g->handle)) {
			*ret_handle = g->handle;
			d = g->buf;
			*g = (struct BusGivenRbuf) {};
			return d;
		}
	}
	if (kdbus_payload_new(bus->kbus, CLIENT_RBUF_SLACK + cap, ret_handle, &d) == 0)
		return d + CLIENT_RBUF_SLACK;
	*ret_handle = NULL;
	return malloc(cap);
}

static void client_rbuf_free(Bus *bus, uint8_t *buf, void *handle) {
	if (handle)
		kdbus_payload_release(bus->kbus, handle);
	else
		free(buf);
}

/* a read buffer the core took: kept for client_rbuf_new(), oldest out */
static void client_rbuf_give(Bus *bus, uint8_t *buf, void *handle, size_t cap) {
	struct BusGivenRbuf *g = bus->given_rbuf;
	size_t n = ELEMENTSOF(bus->given_rbuf);

	if (g[n - 1].handle)
		kdbus_payload_release(bus->kbus, g[n - 1].handle);
	memmove(g + 1, g, (n - 1) * sizeof(*g));
	g[0] = (struct BusGivenRbuf) { .handle = handle, .buf = buf, .cap = cap };
}

/*
 * client_rbuf_move() - the read buffer becomes a new one of @cap bytes
 * holding what the old one had from @from on; the old one goes back to
 * the bus for reuse if the core took it (@given), else it is let go.
 * Return: 0 or -ENOMEM (the old buffer stays).
 */
static int client_rbuf_move(Client *c, size_t cap, size_t from, bool given) {
	void *handle;
	uint8_t *n = client_rbuf_new(c->bus, cap, &handle);

	if (!n)
		return -ENOMEM;
	if (c->rlen > from)
		memcpy(n, c->rbuf + from, c->rlen - from);
	if (given)
		client_rbuf_give(c->bus, c->rbuf, c->rbuf_handle, c->rcap);
	else if (c->rbuf)
		client_rbuf_free(c->bus, c->rbuf, c->rbuf_handle);
	c->rbuf = n;
	c->rbuf_handle = handle;
	c->rcap = cap;
	c->rlen = c->rlen > from ? c->rlen - from : 0;
	return 0;
}

static void client_update_events(Client *c);
static int client_process_input(Client *c);
static void client_update_fd_timer(Client *c);

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

bool client_is_privileged(const Client *c) {
	return c->is_unix && (c->creds.uid == 0 || c->creds.uid == c->bus->euid);
}

/* the ring's slot @i places after its head (out_cap is a power of two) */
static inline ClientOut *client_out_at(Client *c, size_t i) {
	return &c->out[(c->out_head + i) & (c->out_cap - 1)];
}

static void client_out_release(Client *c, ClientOut *o) {
	/* every slice of ours came from kdbus_recv_batch() */
	if (o->slice && c->conn)
		(void) kdbus_free_batch(c->conn, &o->slice, 1);
	for (unsigned i = 0; i < o->n_fds; i++)
		safe_close(o->fds[i]);
	free(o->owned);
	*o = (ClientOut) {};
}

static void client_drop_output(Client *c) {
	while (c->out_n) {
		client_out_release(c, &c->out[c->out_head]);
		c->out_head = (c->out_head + 1) & (c->out_cap - 1);
		c->out_n--;
	}
	c->out_bytes = 0;
}

static void client_drop_input_fds(Client *c) {
	for (size_t i = 0; i < c->n_in_fds; i++)
		safe_close(c->in_fds[i]);
	c->n_in_fds = 0;
}

static void client_creds_done(ClientCreds *cr) {
	free(cr->groups);
	free(cr->label);
	*cr = (ClientCreds) {};
}

Client *client_free(Client *c) {
	if (!c)
		return NULL;
	Bus *bus = c->bus;

	client_log_names_lost(c);

	if (c->state == CLIENT_AWAIT_HELLO || c->state == CLIENT_AUTH || c->state == CLIENT_NONCE)
		bus->n_incomplete--;
	else if (c->state == CLIENT_ACTIVE || c->state == CLIENT_MONITOR)
		bus->n_complete--;
	bus->stats_wk_names -= c->stats_wk_names;
	bus->stats_match_rules -= c->n_matches;
	if (c->state == CLIENT_MONITOR)
		bus->n_monitors--;

	if (bus->driver)
		driver_forget_client(bus->driver, c);
	monitor_forget_client(bus, c);
	if (c->id)
		idmap_remove(&bus->clients_by_id, c->id);
	list_unlink(&c->link);
	list_unlink(&c->ready_link);

	client_drop_output(c);
	free(c->out);
	client_drop_input_fds(c);
	free(c->in_fds);
	client_rbuf_free(c->bus, c->rbuf, c->rbuf_handle);
	free(c->bloom_cache);

	ClientMatch *m, *n;
	list_for_each_entry_safe(m, n, &c->matches, link) {
		list_unlink(&m->link);
		match_rule_free(m->rule);
		free(m);
	}
	for (size_t i = 0; i < c->n_monitor_rules; i++)
		match_rule_free(c->monitor_rules[i]);
	free(c->monitor_rules);

	c->conn = kdbus_conn_close(c->conn);
	client_set_policy(c, NULL);
	strv_free(c->policy_names);
	auth_free(c->auth);
	if (c->ev_timeout)
		event_free(c->ev_timeout);
	if (c->ev)
		event_free(c->ev);
	safe_close(c->fd);
	client_creds_done(&c->creds);
	free(c->loginfo);
	free(c);

	bus_resume_listeners(bus);
	bus_client_gone(bus);
	return NULL;
}

/* client_close() - disconnect, logging the reason once */
void client_close(Client *c, const char *reason) {
	/* dbus-daemon does not log why it closes a connection: debug only */
	if (reason)
		log_debug("Closing connection %s (%s): %s", client_name(c), client_loginfo(c), reason);
	/* as dbus-daemon, while it runs (not when it exits) */
	if (c->state == CLIENT_MONITOR)
		log_info("Monitoring connection %s closed.", c->unique_name);
	client_free(c);
}

/* ---- output ------------------------------------------------------------- */

static size_t iov_total(const struct iovec *iov, size_t n) {
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

static ClientOut *client_out_grow(Client *c);

/* a free slot at the ring's tail (growing it), not yet counted: filled in
 * place, then client_out_commit() */

static inline ClientOut *client_out_reserve(Client *c) {
	if (c->out_n < c->out_cap)
		return client_out_at(c, c->out_n);
	return client_out_grow(c);
}

/* a full ring doubles (small at first: an idle connection keeps its ring) */
static ClientOut *client_out_grow(Client *c) {
	size_t cap = c->out_cap ? c->out_cap * 2 : 2;
	ClientOut *n = calloc(cap, sizeof(*n));

	if (!n)
		return NULL;
	for (size_t i = 0; i < c->out_n; i++)
		n[i] = *client_out_at(c, i);
	free(c->out);
	c->out = n;
	c->out_head = 0;
	c->out_cap = cap;
	return client_out_at(c, c->out_n);
}

/* the reserved slot @o joins the ring */
static void client_out_commit(Client *c, const ClientOut *o) {
	assert(o == client_out_at(c, c->out_n));
	c->out_n++;
	c->out_bytes += o->len;
	if (c->out_bytes > c->peak_out_bytes)
		c->peak_out_bytes = c->out_bytes;
}

static int client_out_push(Client *c, ClientOut *o) {
	ClientOut *slot = client_out_reserve(c);

	if (!slot)
		return -ENOMEM;
	*slot = *o;
	client_out_commit(c, slot);
	return 0;
}

int client_queue_owned(Client *c, uint8_t *msg, size_t len) {
	ClientOut o = {
		.owned = msg,
		.iov[0] = { .iov_base = msg, .iov_len = len },
		.n_iov = 1,
		.len = len,
	};
	int r = client_out_push(c, &o);
	if (r < 0)
		free(msg);
	return r;
}

int client_queue_owned_fds(Client *c, uint8_t *msg, size_t len, int *fds, unsigned n_fds) {
	ClientOut o = {
		.owned = msg,
		.iov[0] = { .iov_base = msg, .iov_len = len },
		.n_iov = 1,
		.len = len,
		.fds = fds,
		.n_fds = n_fds,
	};
	int r = client_out_push(c, &o);
	if (r < 0) {
		for (unsigned i = 0; i < n_fds; i++)
			safe_close(fds[i]);
		free(msg);
	}
	return r;
}

/* write as much of the output ring as the socket takes; -EPIPE etc. on error */
static int client_write(Client *c) {
	while (c->out_n) {
		struct iovec iov[CLIENT_IOV_MAX];
		size_t n_iov = 0, idx = c->out_head;
		union {
			struct cmsghdr cm;
			uint8_t buf[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS_PER_READ)];
		} control;
		struct msghdr mh = {};
		ClientOut *first = &c->out[idx];

		/* a message's fds travel with its first byte: one such message
		 * per sendmsg(), and only at the start of the batch */
		for (size_t i = 0; i < c->out_n && n_iov < CLIENT_IOV_MAX - 2; i++) {
			ClientOut *o = client_out_at(c, i);
			size_t skip = o->sent;

			if (i > 0 && o->n_fds)
				break;
			for (unsigned k = 0; k < o->n_iov; k++) {
				if (skip >= o->iov[k].iov_len) {
					skip -= o->iov[k].iov_len;
					continue;
				}
				iov[n_iov].iov_base = (uint8_t *) o->iov[k].iov_base + skip;
				iov[n_iov].iov_len = o->iov[k].iov_len - skip;
				n_iov++;
				skip = 0;
			}
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = n_iov;
		if (first->n_fds && first->sent == 0) {
			mh.msg_control = control.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * first->n_fds);
			memset(control.buf, 0, mh.msg_controllen);	/* the padding too (valgrind) */
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * first->n_fds);
			memcpy(CMSG_DATA(cm), first->fds, sizeof(int) * first->n_fds);
		}

		ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -errno;
		}

		size_t left = k;
		uint64_t done[CLIENT_IOV_MAX];
		size_t n_done = 0;
		while (c->out_n && left > 0) {
			ClientOut *o = &c->out[c->out_head];
			size_t rest = o->len - o->sent;
			if (left < rest) {
				o->sent += left;
				left = 0;
				break;
			}
			left -= rest;
			c->out_bytes -= o->len;
			/* the slices of what was written go back in one batch */
			if (o->slice && c->conn && n_done < ELEMENTSOF(done)) {
				done[n_done++] = o->slice;
				o->slice = 0;
			}
			/* a written slot with nothing else to let go is left as it
			 * is: client_out_reserve() fills it anew */
			if (o->owned || o->n_fds || o->slice)
				client_out_release(c, o);
			c->out_head = (c->out_head + 1) & (c->out_cap - 1);
			c->out_n--;
			c->stats_out_messages++;
		}
		if (n_done)
			(void) kdbus_free_batch(c->conn, done, n_done);
		/* zero-length messages cannot exist, but be safe */
		while (c->out_n && c->out[c->out_head].len == c->out[c->out_head].sent) {
			client_out_release(c, &c->out[c->out_head]);
			c->out_head = (c->out_head + 1) & (c->out_cap - 1);
			c->out_n--;
		}
		if ((size_t) k < iov_total(iov, n_iov))
			return 0;	/* short write: the socket is full */
	}
	return 0;
}

/* the id owning @name, 0 if none */
static uint64_t client_name_owner(Client *c, const char *name) {
	uint64_t id = 0;

	return bus_name_owner(c->conn, name, &id) < 0 ? 0 : id;
}

static bool client_id_owns_name(Client *c, uint64_t id, const char *name) {
	return id && client_name_owner(c, name) == id;
}

typedef struct MatchIds {
	Client *c;
	uint64_t sender_id;
	uint64_t receiver_id;
} MatchIds;

static bool client_sender_has_name(void *userdata, const char *name) {
	MatchIds *ids = userdata;
	return client_id_owns_name(ids->c, ids->sender_id, name);
}

static bool client_receiver_has_name(void *userdata, const char *name) {
	MatchIds *ids = userdata;
	return client_id_owns_name(ids->c, ids->receiver_id, name);
}

/* do @c's rules (or, for a monitor, its BecomeMonitor rules) match a
 * message from @sender_id addressed to @dst_id (KDBUS_DST_ID_BROADCAST for
 * broadcasts)?  With @eavesdrop_only, only eavesdrop='true' rules count. */
static bool client_match_any_of(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
				uint64_t dst_id, bool monitor, bool eavesdrop_only, const MatchRule **ret_rule) {
	MatchIds ids = { c, sender_id, dst_id };
	char receiver[24] = "";
	MatchContext ctx = {
		.sender = h->sender.s,
		.sender_has_name = client_sender_has_name,
		.receiver_has_name = client_receiver_has_name,
		.userdata = &ids,
		.eavesdropping = monitor,	/* monitors always eavesdrop */
	};

	if (dst_id != KDBUS_DST_ID_BROADCAST && dst_id != 0) {
		message_unique_name_format(receiver, dst_id);
		ctx.receiver = receiver;
	}

	if (monitor) {
		if (c->n_monitor_rules == 0)
			return true;
		for (size_t i = 0; i < c->n_monitor_rules; i++)
			if (match_rule_matches(c->monitor_rules[i], h, body, &ctx))
				return true;
		return false;
	}

	ClientMatch *m;
	list_for_each_entry(m, &c->matches, link)
		if ((!eavesdrop_only || m->eavesdrop) && match_rule_matches(m->rule, h, body, &ctx)) {
			if (ret_rule)
				*ret_rule = m->rule;
			return true;
		}
	return false;
}

/* does a rule's answer depend only on the header (but the serial)?  No
 * argN keys (the body), no well-known sender or any destination (name
 * ownership) */
static bool client_match_header_only(const MatchRule *r) {
	unsigned f = match_rule_get_flags(r);
	const char *s;

	if (f & (MATCH_RULE_ARGS | MATCH_RULE_DESTINATION))
		return false;
	s = (f & MATCH_RULE_SENDER) ? match_rule_get_sender(r) : NULL;
	return !s || s[0] == ':' || streq(s, DRIVER_NAME);
}

/*
 * client_match_any() of a broadcast to a client that is not a monitor,
 * for a stream of like broadcasts: a header-only rule that matched one
 * matches every broadcast with the same header (@header_id, from
 * bus_header_parse_shared_id()) from the same sender, until a rule is
 * removed (an added one cannot undo a match), so that is remembered.
 */
static bool client_match_broadcast(Client *c, const WireHeader *h, const uint8_t *body, uint64_t header_id,
				   uint64_t sender_id) {
	const MatchRule *r = NULL;

	if (header_id && c->match_memo.header_id == header_id && c->match_memo.sender_id == sender_id)
		return true;
	if (!client_match_any_of(c, h, body, sender_id, KDBUS_DST_ID_BROADCAST, false, false, &r))
		return false;
	if (header_id && client_match_header_only(r)) {
		c->match_memo.header_id = header_id;
		c->match_memo.sender_id = sender_id;
	}
	return true;
}

static bool client_match_any(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			     uint64_t dst_id, bool monitor) {
	return client_match_any_of(c, h, body, sender_id, dst_id, monitor, false, NULL);
}

bool client_eavesdrop_matches(Client *c, const WireHeader *h, const uint8_t *body, uint64_t sender_id,
			      uint64_t dst_id) {
	return client_match_any_of(c, h, body, sender_id, dst_id, false, true, NULL);
}

static bool client_policy_deliver(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast);

bool client_policy_receives_from_driver(Client *c, const uint8_t *msg, size_t len) {
	WireHeader h;

	/* a policy that lets everything in needs no look at the header
	 * (the driver's replies are requested and its signals are no replies) */
	if (c->state != CLIENT_ACTIVE || policy_snapshot_receives_all(c->policy))
		return true;
	return wire_header_parse(msg, len, &h) < 0 || client_policy_deliver(c, &h, 0, false);
}

static int client_queue_synth(Client *c, uint8_t *msg, size_t len, bool broadcast) {
	WireHeader h;

	/* what the bus synthesizes is subject to the receive policy too
	 * (forbidding.conf denies receiving NameAcquired) */
	if (!client_policy_receives_from_driver(c, msg, len)) {
		free(msg);
		return 0;
	}

	if (broadcast) {
		/* exact dbus1 matching of a signal the bus synthesizes */
		uint64_t dst = KDBUS_DST_ID_BROADCAST;
		if (wire_header_parse(msg, len, &h) < 0 ||
		    (h.destination.s && !message_unique_name_to_id(h.destination.s, h.destination.len, &dst)) ||
		    !client_match_any(c, &h, msg + h.header_len, 0, dst, c->state == CLIENT_MONITOR)) {
			free(msg);
			return 0;
		}
	}
	return client_queue_owned(c, msg, len);
}

bool client_matches_driver_signal(Client *c, const uint8_t *msg, size_t len) {
	WireHeader h;

	return wire_header_parse(msg, len, &h) >= 0 &&
	       client_match_any_of(c, &h, msg + h.header_len, 0, KDBUS_DST_ID_BROADCAST, false, false, NULL);
}

void client_monitor_queue_signal(Client *c, uint8_t *msg, size_t len) {
	(void) client_queue_synth(c, msg, len, true);
}

static bool client_policy_decide(Client *c, const WireHeader *h, uint64_t sender_id, bool broadcast,
				 PolicyDecision *d, bool *ret_receive);
static const char *policy_type_name(uint8_t t);
static char *client_refusal_text(const char *complaint, unsigned n_matched, const Client *sender, const WireHeader *h,
				 bool requested_reply, const Client *recipient);

/*
 * A message from the driver that @owner's receive rules refuse: dbus-daemon
 * answers it with an AccessDenied error from itself to itself, which only
 * monitors see.  Return: that error for monitor @mon (NULL @mon: the
 * monitors' sink; serials are @serial_from's), or NULL if @owner takes @msg.
 */
static int client_driver_refusal_error(Client *owner, Client *serial_from, const uint8_t *msg, size_t len,
				       uint8_t **ret_msg, size_t *ret_len) {
	PolicyDecision d;
	bool receive;
	WireHeader h;

	if (!owner || owner->state != CLIENT_ACTIVE || !owner->policy || wire_header_parse(msg, len, &h) < 0 ||
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

	if (to->bus->n_monitors && client_driver_refusal_error(to, to, msg, len, &err, &elen) > 0)
		driver_capture(to->bus->driver, err, elen);
}

/* monitor @c's copy @msg of what the driver sends to @owner_id; with the
 * error dbus-daemon shows monitors if @owner refuses it */
static void client_monitor_queue_driver_copy(Client *c, uint64_t owner_id, uint8_t *msg, size_t len) {
	uint8_t *err = NULL;
	size_t elen;
	int r = client_driver_refusal_error(bus_find_client(c->bus, owner_id), c, msg, len, &err, &elen);

	client_queue_synth(c, msg, len, true);
	if (r > 0) {
		WireHeader h;
		if (wire_header_parse(err, elen, &h) >= 0 &&
		    client_match_any(c, &h, err + h.header_len, 0, KDBUS_DST_ID_NAME, true))
			client_queue_owned(c, err, elen);
		else
			free(err);
	}
}

static void client_name_change(Client *c, const char *name, uint64_t old_id, uint64_t new_id,
			       bool old_queued_or_activator, bool new_queued_or_activator) {
	char old_name[24] = "", new_name[24] = "";
	uint8_t *msg;
	size_t len;

	/* activators and waiters are not owners in dbus1 terms */
	if (old_id && !old_queued_or_activator)
		message_unique_name_format(old_name, old_id);
	if (new_id && !new_queued_or_activator)
		message_unique_name_format(new_name, new_id);
	if (streq(old_name, new_name))
		return;

	/* dbus-daemon's order: NameLost before NameOwnerChanged, and
	 * NameAcquired after it.  A monitor sees the NameLost and NameAcquired
	 * the driver sends to the owners, too. */
	bool own = c->state == CLIENT_ACTIVE && name;
	bool mon = c->state == CLIENT_MONITOR;
	if (own && old_id == c->id && old_name[0] &&
	    driver_build_name_signal(c, "NameLost", name, &msg, &len) >= 0)
		client_queue_synth(c, msg, len, false);
	/* a departing connection is told that it loses its unique name
	 * too (it never reads it; monitors see it) */
	if (mon && old_name[0] &&
	    driver_build_name_signal_to(c, old_name, "NameLost", name ? name : old_name, &msg, &len) >= 0)
		client_monitor_queue_driver_copy(c, old_id, msg, len);
	if (c->state == CLIENT_MONITOR || c->n_noc_rules > 0) {
		if (driver_build_name_owner_changed(c, name ? name : (new_id ? new_name : old_name),
						    old_name, new_name, &msg, &len) >= 0)
			client_queue_synth(c, msg, len, true);
	}
	if (own && new_id == c->id && new_name[0] &&
	    driver_build_name_signal(c, "NameAcquired", name, &msg, &len) >= 0)
		client_queue_synth(c, msg, len, false);
	if (mon && name && new_name[0] &&
	    driver_build_name_signal_to(c, new_name, "NameAcquired", name, &msg, &len) >= 0)
		client_monitor_queue_driver_copy(c, new_id, msg, len);
}

/* a kernel message: notifications become dbus1 signals or errors */
static void client_handle_kernel_msg(Client *c, struct kdbus_msg *m) {
	struct kdbus_item *it;
	uint8_t *msg;
	size_t len;

	KDBUS_ITEM_FOREACH(it, m, items) {
		switch (it->type) {
		case KDBUS_ITEM_NAME_ADD:
		case KDBUS_ITEM_NAME_REMOVE:
		case KDBUS_ITEM_NAME_CHANGE: {
			const struct kdbus_notify_name_change *nc = &it->name_change;
			client_name_change(c, nc->name, nc->old_id.id, nc->new_id.id,
					   nc->old_id.flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR),
					   nc->new_id.flags & (KDBUS_NAME_IN_QUEUE | KDBUS_NAME_ACTIVATOR));
			break;
		}
		case KDBUS_ITEM_ID_ADD:
		case KDBUS_ITEM_ID_REMOVE: {
			const uint64_t hidden = KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER;
			uint64_t id = it->id_change.id;
			if (id == c->id || (it->id_change.flags & hidden) || bus_is_internal_id(c->bus, id))
				break;
			/* the driver shows monitors a new connection after its Hello */
			if (it->type == KDBUS_ITEM_ID_ADD && c->state == CLIENT_MONITOR)
				break;
			if (it->type == KDBUS_ITEM_ID_ADD)
				client_name_change(c, NULL, 0, id, false, false);
			else
				client_name_change(c, NULL, id, 0, false, false);
			break;
		}
		case KDBUS_ITEM_REPLY_TIMEOUT:
			/* a monitor sees the requester's trackers end: the
			 * requester's client shows it the NoReply */
			if (c->state == CLIENT_MONITOR)
				break;
			if (driver_build_error(c, (uint32_t) m->cookie_reply, DBUS_ERR("NoReply"),
					       "Message did not receive a reply (timeout by message bus)", &msg, &len) >= 0) {
				driver_capture(c->bus->driver, msg, len);
				client_queue_owned(c, msg, len);
			}
			break;
		case KDBUS_ITEM_REPLY_DEAD:
			/* a failed activation already answered this call */
			if (c->state == CLIENT_MONITOR ||
			    service_registry_consume_reply_dead(c->bus, c->id, m->cookie_reply))
				break;
			if (driver_build_error(c, (uint32_t) m->cookie_reply, DBUS_ERR("NoReply"),
					       "Message recipient disconnected from message bus without replying",
					       &msg, &len) >= 0) {
				driver_capture(c->bus->driver, msg, len);
				client_queue_owned(c, msg, len);
			}
			break;
		default:
			break;
		}
	}
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
		/* dbus-daemon takes the groups from the user database */
		r = bus_groups_for_uid(c->bus, c->creds.uid, &gids, &n);
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
	if (c->policy && !policy_snapshot_receives_all(c->policy))
		c->bus->n_strict_receivers--;
	policy_snapshot_free(c->policy);
	c->policy = s;
	if (s && !policy_snapshot_receives_all(s))
		c->bus->n_strict_receivers++;
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
	struct kdbus_cmd_info cmd = { .size = sizeof(cmd), .id = id, .attach_flags = KDBUS_ATTACH_NAMES };
	struct kdbus_item *it;
	char **l = NULL;
	size_t n = 0;

	l = calloc(2, sizeof(char *));
	if (!l)
		return NULL;
	l[0] = malloc(24);
	if (!l[0])
		return strv_free(l);
	message_unique_name_format(l[0], id);
	n = 1;
	if (kdbus_cmd_conn_info(via->conn, &cmd) < 0)
		return l;
	struct kdbus_info *info = kdbus_pool_ptr(via->conn, cmd.offset);
	KDBUS_ITEM_FOREACH(it, info, items) {
		if (it->type != KDBUS_ITEM_OWNED_NAME || (it->name.flags & KDBUS_NAME_ACTIVATOR))
			continue;
		char **nl = realloc(l, (n + 2) * sizeof(char *));
		if (!nl)
			break;
		l = nl;
		if (!(l[n] = strdup(it->name.name)))
			break;
		l[++n] = NULL;
	}
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = cmd.offset };
	(void) kdbus_cmd_free(via->conn, &f);
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

	if (!bus->policy_needs_names || !via->conn || !id)
		return (ClientNames) {};
	gen = kdbus_bus_names_generation(bus->kbus);
	t = bus_find_client(bus, id);
	if (!t || !gen)
		return (ClientNames) { client_policy_names_query(via, id), true };
	if (t->policy_names && t->policy_names_gen == gen)
		return (ClientNames) { t->policy_names, false };
	strv_free(t->policy_names);
	t->policy_names = client_policy_names_query(via, id);
	t->policy_names_gen = t->policy_names ? gen : 0;
	return (ClientNames) { t->policy_names, false };
}

static const char *policy_type_name(uint8_t t) {
	const char *s = wire_type_to_string(t);

	return s ? s : "invalid";
}

/* send the dbus1 error @msg from @callee's connection as the reply to the
 * call @cookie of @to: the reply consumes the call's tracker */
static int client_send_reply_for(Client *callee, Client *to, uint64_t cookie, const uint8_t *msg, size_t len) {
	_Alignas(8) uint8_t buf[MESSAGE_KMSG_BYTES_SIZE];
	/* not a call: the cookie is not tracked */
	struct kdbus_msg *m = message_kmsg_bytes(buf, to->id, cookie, cookie, msg, len);
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) m };

	return kdbus_cmd_send(callee->conn, &cmd);
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

/*
 * The text of dbus-daemon's complain_about_message(): @complaint about @h
 * from @sender (NULL: the bus driver) to @recipient (NULL: the bus itself,
 * or a name that is being activated), with their loginfo.  The destination
 * is the message's, as dbus-daemon shows it (the driver's name if none).
 */
static char *client_refusal_text(const char *complaint, unsigned n_matched, const Client *sender, const WireHeader *h,
				 bool requested_reply, const Client *recipient) {
	return format("%s, %u matched rules; type=\"%s\", sender=\"%s\" (%s) interface=\"%s\" member=\"%s\" "
		      "error name=\"%s\" requested_reply=\"%d\" destination=\"%s\" (%s)",
		      complaint, n_matched, policy_type_name(h->type), sender ? sender->unique_name : "(unset)",
		      sender ? client_loginfo(sender) : "(bus)", h->interface.s ? h->interface.s : "(unset)",
		      h->member.s ? h->member.s : "(unset)", h->error_name.s ? h->error_name.s : "(unset)",
		      requested_reply, h->destination.s ? h->destination.s : DRIVER_NAME,
		      recipient ? client_loginfo(recipient) : "bus");
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

/*
 * dbus-daemon sends NameLost for every name a connection owns, its unique
 * name too (the last: the first it had), when it disconnects, becomes a
 * monitor, or the bus exits.  Receive rules that deny it make it log the
 * refusals, which differ only by the name they do not show.  Nothing to
 * do for a policy that lets everything in.
 */
void client_log_names_lost(Client *c) {
	struct kdbus_cmd_info cmd = { .size = sizeof(cmd), .id = c->id, .attach_flags = KDBUS_ATTACH_NAMES };
	struct kdbus_item *it;

	if (c->state != CLIENT_ACTIVE || !c->policy || policy_snapshot_receives_all(c->policy))
		return;
	if (c->own_names_watched && c->conn && kdbus_cmd_conn_info(c->conn, &cmd) >= 0) {
		struct kdbus_info *info = kdbus_pool_ptr(c->conn, cmd.offset);
		KDBUS_ITEM_FOREACH(it, info, items)
			if (it->type == KDBUS_ITEM_OWNED_NAME &&
			    !(it->name.flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE)))
				client_log_name_lost(c);
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = cmd.offset };
		(void) kdbus_cmd_free(c->conn, &f);
	}
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
	Client *s = from_driver ? NULL : bus_find_client(bus, sender_id);

	*d = (PolicyDecision) {};
	*ret_receive = false;
	if (!c->policy || c->state != CLIENT_ACTIVE)
		return true;	/* monitors are not subject to policy */
	client_policy_message(h, NULL, &pm);

	if (broadcast && s && s->policy) {
		_cleanup_names_ ClientNames rn = client_policy_names(c, c->id);
		if (policy_snapshot_check_send(s->policy, &pm, (const char *const *) rn.v, false, d) == 0)
			return false;
		client_policy_log_would_reject(s, h, d, c);
	}
	if (!broadcast && !from_driver)
		return true;	/* unicasts between clients were checked when sent */

	const char *driver_names[] = { DRIVER_NAME, NULL };
	_cleanup_names_ ClientNames sn = from_driver ? (ClientNames) {} : client_policy_names(c, sender_id);
	*d = (PolicyDecision) {};
	*ret_receive = true;
	return policy_snapshot_check_receive(c->policy, &pm, from_driver ? driver_names : (const char *const *) sn.v,
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
	if (!broadcast && h->destination.s && !bus_find_client(c->bus, sender_id)) {
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
static void client_policy_broadcast_capture(Client *c, const WireHeader *h, const uint8_t *body) {
	Bus *bus = c->bus;
	Client *rc;

	if (!bus->n_monitors || !c->policy || h->type != WIRE_TYPE_SIGNAL)
		return;
	list_for_each_entry(rc, &bus->clients, link) {
		PolicyDecision d;
		bool receive;
		_cleanup_free_ char *text = NULL;
		_cleanup_free_ uint8_t *msg = NULL;
		size_t len;

		const char *error = DBUS_ERR("AccessDenied");

		if (rc == c || rc->state != CLIENT_ACTIVE || !rc->policy || !rc->conn ||
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

	if (!c->policy || !s || !s->policy)
		return false;
	client_policy_message(h, NULL, &pm);
	_cleanup_names_ ClientNames rn = client_policy_names(c, c->id);
	if (policy_snapshot_check_send(s->policy, &pm, (const char *const *) rn.v, false, &d) != 0) {
		_cleanup_names_ ClientNames sn = client_policy_names(c, sender_id);
		d = (PolicyDecision) {};
		receive = true;
		if (policy_snapshot_check_receive(c->policy, &pm, (const char *const *) sn.v, false, true, &d) != 0)
			return true;
	}
	/* as dbus-daemon's send_one_message(): monitors see the refusal as
	 * an AccessDenied error to the sender (nobody else does, and it is
	 * not logged) */
	if (bus->n_monitors) {
		_cleanup_free_ char *text = client_refusal_text(receive ? "Rejected receive message" :
								"Rejected send message", d.n_matched, s, h, false, c);
		_cleanup_free_ uint8_t *msg = NULL;
		size_t len;
		if (text && driver_build_error(s, h->serial, DBUS_ERR("AccessDenied"), text, &msg,
					       &len) >= 0)
			driver_capture(bus->driver, msg, len);
	}
	return false;
}

/* a refusal of client_policy_send(), reported once monitors saw the message */
typedef struct PolicyRefusal {
	bool receive;
	PolicyDecision d;
	const Client *recipient;	/* NULL: the driver, or a name being activated */
	bool reply;		/* a reply, refused knowing whether it was asked for */
	bool requested_reply;
} PolicyRefusal;

/*
 * client_policy_refused() - answer @c's message @h that @f refused: as
 * dbus-daemon, every refused message is answered with AccessDenied,
 * replies too (their text says whether the receiver had asked for them).
 */
static void client_policy_refused(Client *c, const WireHeader *h, const PolicyRefusal *f) {
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
static uint64_t client_target_id(Client *c, const WireHeader *h, const MessageTarget *t) {
	uint64_t id = 0;

	if (t->dst_id != KDBUS_DST_ID_NAME)
		return t->dst_id;
	return bus_name_owner(c->conn, h->destination.s, &id) < 0 ? 0 : id;
}

/* the receive side of a send check: may @dc take @pm from @c (under c's
 * names)?  A refusal is described in @f */
static bool client_policy_receive_side(Client *c, Client *dc, const PolicyMessage *pm, bool reply,
				       PolicyRefusal *f) {
	if (!dc || !dc->policy)
		return true;
	_cleanup_names_ ClientNames sn = client_policy_names(c, c->id);
	f->receive = true;
	memset(&f->d, 0, sizeof(f->d));
	return policy_snapshot_check_receive(dc->policy, pm, (const char *const *) sn.v, reply, false, &f->d) != 0;
}

/*
 * client_policy_unrequested() - the policy for a reply @h from @c that no
 * call of its receiver @dst waits for: @c's send rules and @dst's receive
 * rules with requested_reply false.  dbus-daemon delivers such a reply
 * when they allow it (session.conf's eavesdrop="true" rules do, and
 * send_requested_reply="false" ones), and answers AccessDenied otherwise.
 * Return: true if it may go; else @f says why.
 */
static bool client_policy_unrequested(Client *c, const WireHeader *h, uint64_t dst, PolicyRefusal *f) {
	Client *dc = dst ? bus_find_client(c->bus, dst) : NULL;
	PolicyMessage pm;

	*f = (PolicyRefusal) { .recipient = dc, .reply = true };
	if (!c->policy)
		return false;
	client_policy_message(h, c->unique_name, &pm);
	_cleanup_names_ ClientNames rn = dc ? client_policy_names(c, dst) : (ClientNames) {};
	if (policy_snapshot_check_send(c->policy, &pm, dc ? (const char *const *) rn.v : NULL, false, &f->d) == 0)
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
static bool client_policy_refused_reply(Client *c, const WireHeader *h, const MessageTarget *t, PolicyRefusal *f) {
	uint64_t dst = client_target_id(c, h, t);
	/* the ioctl backend cannot tell: a requested reply, as assumed */
	int r = dst ? kdbus_reply_pending(c->conn, dst, h->reply_serial, true) : 0;

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
static bool client_policy_send(Client *c, const WireHeader *h, const MessageTarget *t, bool to_driver,
			       PolicyRefusal *ret_refusal) {
	Bus *bus = c->bus;
	PolicyMessage pm;
	PolicyRefusal *f = ret_refusal;
	bool reply = h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR;
	uint64_t dst = 0;
	Client *dc = NULL;

	*f = (PolicyRefusal) {};
	if (!c->policy)
		return false;
	if (t->dst_id == KDBUS_DST_ID_BROADCAST)
		return true;	/* as dbus-daemon: decided per receiver, at delivery */
	/* nothing to decide when we may send anything and everybody may
	 * receive anything (session.conf) */
	if (policy_snapshot_sends_all(c->policy) && bus->n_strict_receivers == 0)
		return true;
	client_policy_message(h, c->unique_name, &pm);
	if (to_driver) {
		/* a reply to the driver never answers a call of it: refused,
		 * it is answered as an unrequested reply (dbus-daemon) */
		f->reply = reply;
		if (policy_snapshot_check_send(c->policy, &pm, NULL, false, &f->d) == 0)
			return false;
		client_policy_log_would_reject(c, h, &f->d, NULL);
		return true;
	}
	if (t->dst_id == KDBUS_DST_ID_NAME) {
		/* as dbus-daemon, a name nobody holds is ServiceUnknown before
		 * any policy is looked at: the core answers ESRCH; and one
		 * only an activator holds, with NO_AUTO_START, NameHasNoOwner
		 * (EADDRNOTAVAIL) */
		if (bus_name_owner(c->conn, h->destination.s, &dst) == -ESRCH ||
		    (dst == 0 && (h->flags & WIRE_FLAG_NO_AUTO_START)))
			return true;
	} else {
		dst = t->dst_id;
		if (!bus_find_client(bus, dst))
			return true;	/* no such peer: the core answers ENXIO */
	}
	dc = dst ? bus_find_client(bus, dst) : NULL;
	f->recipient = dc;

	/* replies pass if they were asked for: the core refuses any other */
	_cleanup_names_ ClientNames rn = dc ? client_policy_names(c, dst) : (ClientNames) {};
	/* a call or signal to a client whose names' TALK entries provably
	 * answer as the send rules (policy/compile.h): the core's TALK check
	 * on sending is the sender side; the receive side stays ours */
	bool talk_decided = dc && rn.v && !reply && !pm.has_reply_serial && !policy_snapshot_logs_sends(c->policy) &&
			    (h->type == WIRE_TYPE_METHOD_CALL || h->type == WIRE_TYPE_SIGNAL) &&
			    policy_compiled_talk_is_exact(bus->compiled, (const char *const *) rn.v, NULL);
	if (!talk_decided &&
	    policy_snapshot_check_send(c->policy, &pm, dc ? (const char *const *) rn.v : NULL, reply, &f->d) == 0)
		return false;
	client_policy_log_would_reject(c, h, &f->d, dc);
	return client_policy_receive_side(c, dc, &pm, reply, f);
}

/*
 * client_handed_over_allowed() - the receive side of a message that waited
 * on an activator and was handed over to @c when @c took the name: it was
 * not checked when sent, since no client owned the name then.  A refused
 * call is answered with AccessDenied, as dbus-daemon does when it
 * dispatches the messages of a finished activation.
 */
static bool client_handed_over_allowed(Client *c, const struct kdbus_msg *m, const ClientOut *o) {
	Bus *bus = c->bus;
	PolicyMessage pm;
	PolicyDecision d = {};
	WireHeader h;

	if (!c->policy || c->state != CLIENT_ACTIVE)
		return true;
	if (o->n_iov != 1 || bus_header_parse_shared(bus, o->iov[0].iov_base, o->len, &h) < 0)
		return true;	/* the core holds only messages the sender's client validated */
	client_policy_message(&h, NULL, &pm);
	_cleanup_names_ ClientNames sn = client_policy_names(c, m->src_id);
	if (policy_snapshot_check_receive(c->policy, &pm, (const char *const *) sn.v, false, false, &d) != 0)
		return true;
	Client *s = bus_find_client(bus, m->src_id);
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
static bool client_policy_deliver_memo(Client *c, const WireHeader *h, uint64_t header_id, uint64_t sender_id,
				       bool broadcast) {
	Bus *bus = c->bus;
	/* with names in the policy, while no name changed hands */
	uint64_t names_gen = bus->policy_needs_names ? kdbus_bus_names_generation(bus->kbus) : 0;
	bool memo = broadcast && header_id && (!bus->policy_needs_names || names_gen);

	if (memo && c->policy_memo.header_id == header_id && c->policy_memo.sender_id == sender_id &&
	    c->policy_memo.generation == bus->policy_generation && c->policy_memo.policy == c->policy &&
	    c->policy_memo.names_generation == names_gen)
		return true;
	if (!client_policy_deliver(c, h, sender_id, broadcast))
		return false;
	/* a sender whose sends are logged is logged each time */
	if (memo) {
		Client *s = bus_find_client(bus, sender_id);
		memo = !s || !policy_snapshot_logs_sends(s->policy);
	}
	if (memo) {
		c->policy_memo.header_id = header_id;
		c->policy_memo.sender_id = sender_id;
		c->policy_memo.generation = bus->policy_generation;
		c->policy_memo.policy = c->policy;
		c->policy_memo.names_generation = names_gen;
	}
	return true;
}

/*
 * A large message goes through the default socket buffer (208 KiB) in
 * five writes, each after a wakeup when the reader made room.  A client
 * that receives large messages gets a buffer of up to 2 MiB instead, once:
 * the bytes sit in its socket rather than in our queue.  Not for a
 * limited output (client_limit_output()), whose small buffer is the point.
 */
static void client_grow_sndbuf(Client *c) {
	int v = CLIENT_SNDBUF_LARGE;

	if (c->sndbuf_grown || c->out_limit || c->fd < 0)
		return;
	c->sndbuf_grown = true;
	(void) setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/*
 * One received slice: queue it for the socket, or drop it.  It is built in
 * place in the ring's free tail slot; nothing below pushes to the ring
 * before client_out_commit() (what the policy answers goes through the
 * core).
 */
static int client_take_slice(Client *c, uint64_t offset) {
	struct kdbus_msg *m = kdbus_pool_ptr(c->conn, offset);
	struct kdbus_item *it;
	ClientOut *o;

	if (m->payload_type == KDBUS_PAYLOAD_KERNEL) {
		client_handle_kernel_msg(c, m);
		(void) kdbus_free_batch(c->conn, &offset, 1);
		return 0;
	}
	o = client_out_reserve(c);
	if (!o) {
		(void) kdbus_free_batch(c->conn, &offset, 1);
		return -ENOMEM;
	}
	/* a free slot holds nothing (client_out_release()): only what is
	 * read before it is written */
	o->slice = offset;
	o->owned = NULL;
	o->n_iov = 0;
	o->len = o->sent = 0;
	o->fds = NULL;
	o->n_fds = 0;

	uint64_t payload_off = 0;
	KDBUS_ITEM_FOREACH(it, m, items) {
		if (it->type == KDBUS_ITEM_PAYLOAD_OFF && o->n_iov < ELEMENTSOF(o->iov)) {
			if (o->n_iov == 0)
				payload_off = it->vec.offset;
			o->iov[o->n_iov].iov_base = kdbus_pool_ptr(c->conn, it->vec.offset);
			o->iov[o->n_iov].iov_len = it->vec.size;
			o->len += it->vec.size;
			o->n_iov++;
		} else if (it->type == KDBUS_ITEM_FDS) {
			o->fds = it->fds;
			o->n_fds = (it->size - KDBUS_ITEM_HEADER_SIZE) / sizeof(int);
		}
	}
	if (o->n_iov == 0 || o->len == 0)
		goto drop;

	/* broadcasts passed the bloom prefilter; apply the exact dbus1 rules.
	 * Monitors apply their BecomeMonitor rules to everything.  Then the
	 * receive side of the policy. */
	bool from_driver = m->src_id == driver_id(c->bus->driver);
	/* the driver's unicasts need only the receive rules: none to apply
	 * when they let everything in */
	if (from_driver && m->dst_id != KDBUS_DST_ID_BROADCAST && c->state == CLIENT_ACTIVE &&
	    policy_snapshot_receives_all(c->policy))
		from_driver = false;
	else if (m->dst_id == KDBUS_DST_ID_BROADCAST || c->state == CLIENT_MONITOR || from_driver) {
		WireHeader parsed;
		const WireHeader *h = &parsed;
		const uint8_t *p = o->iov[0].iov_base;
		uint64_t dst = m->dst_id, hid = 0;
		uint64_t pid = o->n_iov == 1 ? kdbus_payload_id(c->conn, payload_off) : 0;
		struct BusPayloadHeader *ph = &c->bus->payload_header[pid % ELEMENTSOF(c->bus->payload_header)];
		if (pid && ph->payload_id == pid) {
			/* a broadcast's receivers share one parse */
			h = &ph->h;
			hid = ph->header_id;
		} else if (o->n_iov != 1 || bus_header_parse_shared_id(c->bus, p, o->len, &parsed, &hid) < 0) {
			goto drop;
		} else if (pid) {
			ph->payload_id = pid;
			ph->header_id = hid;
			ph->h = parsed;
		}
		/* sent to a well-known name: match against its owner */
		if (dst == KDBUS_DST_ID_NAME && h->destination.s)
			dst = client_name_owner(c, h->destination.s);
		bool broadcast = m->dst_id == KDBUS_DST_ID_BROADCAST;
		bool monitor = c->state == CLIENT_MONITOR;
		/* what the sink sends are eavesdroppers' copies, which
		 * monitors saw as the originals */
		if (monitor && c->bus->sink && m->src_id == kdbus_conn_get_id(c->bus->sink))
			goto drop;
		/* as dbus-daemon: a call (or reply) without destination and
		 * the bus's answer to it are not shown to monitors */
		if (monitor && !h->destination.s && h->type != WIRE_TYPE_SIGNAL)
			goto drop;
		if (monitor && m->dst_id == driver_id(c->bus->driver) && driver_shows_monitors_itself(h))
			goto drop;
		/* as dbus-daemon: what the bus says only to monitors (sent to
		 * the sink) is not shown to the monitor it is addressed to (a
		 * client's message to a monitor's name, which no longer
		 * exists, is) */
		if (monitor && c->bus->sink && m->dst_id == kdbus_conn_get_id(c->bus->sink) && h->destination.s &&
		    h->sender.s && streq(h->sender.s, DRIVER_NAME) && streq(h->destination.s, c->unique_name))
			goto drop;
		if (broadcast && !monitor ? !client_match_broadcast(c, h, p + h->header_len, hid, m->src_id)
		    : monitor && !client_match_any(c, h, p + h->header_len, m->src_id, dst, true))
			goto drop;
		if ((broadcast || from_driver) && !client_policy_deliver_memo(c, h, hid, m->src_id, broadcast))
			goto drop;
	} else if ((m->flags & KDBUS_MSG_HANDED_OVER) && !client_handed_over_allowed(c, m, o)) {
		goto drop;
	}

	/* cannot happen: the core refuses fds to connections without ACCEPT_FD */
	if (o->n_fds && !c->unix_fd)
		goto drop;
	if (o->len >= CLIENT_SNDBUF_GROW_MIN)
		client_grow_sndbuf(c);
	client_out_commit(c, o);
	return 0;

drop:
	client_out_release(c, o);
	return 0;
}

void client_limit_output(Client *c) {
	int v = 1;	/* the kernel's minimum */
	socklen_t l = sizeof(v);

	if (c->out_limit || c->fd < 0)
		return;
	/* EV_WRITE fires once the peer has read down to a quarter of the
	 * send buffer: the limit is just above that */
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
	    getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, &l) < 0 || v <= 0)
		return;
	c->out_limit = (size_t) v / 4 + CLIENT_LIMIT_SLACK;
}

/* limited output: may more go out?  (SIOCOUTQ: what the peer has not read) */
static bool client_out_room(Client *c) {
	int outq = 0;

	if (!c->out_limit || ioctl(c->fd, SIOCOUTQ, &outq) < 0)
		return true;
	if ((size_t) outq + c->out_bytes < c->out_limit)
		return true;
	c->out_held = true;
	return false;
}

/* pull from the core while there is room in flight */
static int client_pull(Client *c) {
	if (!c->conn)
		return 0;
	c->out_held = false;
	while (c->out_n < CLIENT_OUT_MAX && c->out_bytes < CLIENT_OUT_BYTES_MAX && client_out_room(c)) {
		/* a batch per lock round in the core; while much is in flight
		 * one at a time, so that the byte limit holds */
		uint64_t offs[CLIENT_RECV_BATCH];
		size_t want = c->out_bytes < CLIENT_OUT_BYTES_MAX / 2 && !c->out_limit ? CLIENT_RECV_BATCH : 1;
		if (want > CLIENT_OUT_MAX - c->out_n)
			want = CLIENT_OUT_MAX - c->out_n;
		int n = kdbus_recv_batch(c->conn, offs, want);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			int r = client_take_slice(c, offs[i]);
			if (r < 0) {
				/* the rest is not taken: give it back */
				if (c->conn && i + 1 < n)
					(void) kdbus_free_batch(c->conn, offs + i + 1, n - i - 1);
				return r;
			}
		}
		if ((size_t) n < want)
			return 0;	/* the queue is empty */
	}
	return 0;
}

void client_drain(Client *c) {
	while (c->conn) {
		uint64_t off;
		if (kdbus_recv_batch(c->conn, &off, 1) < 0 || client_take_slice(c, off) < 0)
			break;
	}
	/* slices must not outlive the connection they belong to */
	for (size_t i = 0; i < c->out_n; i++) {
		ClientOut *o = client_out_at(c, i);
		if (!o->slice)
			continue;
		uint8_t *copy = malloc(o->len ? o->len : 1);
		size_t at = 0;
		if (!copy)
			continue;
		for (unsigned k = 0; k < o->n_iov; k++) {
			memcpy(copy + at, o->iov[k].iov_base, o->iov[k].iov_len);
			at += o->iov[k].iov_len;
		}
		(void) kdbus_free_batch(c->conn, &o->slice, 1);
		o->slice = 0;
		o->owned = copy;
		o->iov[0] = (struct iovec) { .iov_base = copy, .iov_len = at };
		o->n_iov = 1;
	}
}

void client_flush(Client *c) {
	int r;

	for (int round = 0; round < 64; round++) {
		r = client_pull(c);
		if (r < 0)
			goto fail;
		if (!c->out_n)
			break;
		size_t before = c->out_n;
		r = client_write(c);
		if (r < 0)
			goto fail;
		if (c->out_n == before && c->out_n)
			break;	/* socket full */
		if (c->conn && !kdbus_conn_has_messages(c->conn) && !c->out_n)
			break;
	}
	client_update_events(c);
	return;
fail:
	client_close(c, r == -EPIPE || r == -ECONNRESET ? "peer closed" : "write failed");
}

/* ---- input -------------------------------------------------------------- */

static __attribute__((noinline)) void client_set_events(Client *c, bool want_read, bool want_write) {
	c->want_write = want_write;
	c->want_read = want_read;
	event_del(c->ev);
	if (!want_read && !want_write)
		return;
	event_assign(c->ev, c->bus->base, c->fd, EV_PERSIST | (want_read ? EV_READ : 0) | (want_write ? EV_WRITE : 0),
		     event_get_callback(c->ev), c);
	event_add(c->ev, NULL);
}

/* client_update_events() while input is held (or has just resumed) */
static __attribute__((noinline)) void client_update_held_events(Client *c, bool want_write) {
	/* held input resumes once the core says the client's messages in
	 * flight dropped below the limits (it wakes the client then) */
	if (c->input == CLIENT_INPUT_HELD && !kdbus_conn_inflight_full(c->conn))
		c->input = CLIENT_INPUT_RESUMED;
	bool want_read = c->input != CLIENT_INPUT_HELD;
	if (want_write != c->want_write || want_read != c->want_read)
		client_set_events(c, want_read, want_write);
	/* what was read while held is dispatched first, whether or not more
	 * comes (client_on_event(), which may have been busy writing) */
	if (c->input == CLIENT_INPUT_RESUMED)
		event_active(c->ev, EV_READ, 0);
}

static void client_update_events(Client *c) {
	size_t pending = 0;
	if (c->auth)
		(void) auth_output(c->auth, &pending);
	/* a client on the ready list is flushed before the loop polls again
	 * (bus_on_ready()), which comes back here: no EV_WRITE for that */
	bool want_write = (c->out_n > 0 && !list_is_linked(&c->ready_link)) || pending > 0 || c->out_held;
	if (_unlikely_(c->input != CLIENT_INPUT_READ)) {
		client_update_held_events(c, want_write);
		return;
	}
	if (want_write == c->want_write && c->want_read)
		return;
	client_set_events(c, true, want_write);
}

static int client_reserve(Client *c, size_t need) {
	if (c->rcap - c->rlen >= need)
		return 0;
	if (!c->rbuf && need <= CLIENT_READ_MIN && c->bus->spare_rbuf) {
		c->rbuf = TAKE_PTR(c->bus->spare_rbuf);
		c->rbuf_handle = TAKE_PTR(c->bus->spare_rbuf_handle);
		c->rcap = CLIENT_READ_MIN;
		return 0;
	}
	size_t cap = c->rcap ? c->rcap : CLIENT_READ_MIN;
	while (cap - c->rlen < need)
		cap *= 2;
	return client_rbuf_move(c, cap, 0, false);
}

/*
 * An idle connection holds no read buffer: once everything read is
 * processed the buffer goes back to the bus, for the next client that
 * reads (one spare; any other is freed).  dbus-broker's idle connections
 * cost about 3 KiB; a 64 KiB buffer per connection, even mostly untouched,
 * would cost more.  Only buffers of the default size go back.
 */
static void client_release_rbuf(Client *c) {
	/* a larger buffer stays: the client sends large messages, which
	 * would otherwise be copied into a grown buffer every time
	 * (client_process_input() shrinks it past CLIENT_RBUF_KEEP) */
	if (!c->rbuf || c->rlen || c->rcap != CLIENT_READ_MIN)
		return;
	if (!c->bus->spare_rbuf) {
		c->bus->spare_rbuf = c->rbuf;
		c->bus->spare_rbuf_handle = c->rbuf_handle;
	} else {
		client_rbuf_free(c->bus, c->rbuf, c->rbuf_handle);
	}
	c->rbuf = NULL;
	c->rbuf_handle = NULL;
	c->rcap = 0;
}

static void client_close_fds(int *fds, size_t n) {
	for (size_t i = 0; i < n; i++)
		safe_close(fds[i]);
}

/*
 * read once; 0 on EOF, -EAGAIN when drained, > 0 bytes read.
 *
 * File descriptors are taken as libdbus's transport and loader take
 * them (dbus-transport-socket.c do_reading(), dbus-message.c
 * _dbus_message_loader_get_buffer()): not at all before authentication
 * or without NEGOTIATE_UNIX_FD (a plain read, the kernel closes them);
 * at most max_message_unix_fds pending at a time, more in one read is an
 * error; and while fds are pending, only the rest of the current message
 * is read, without fds.
 */
static ssize_t client_read_once(Client *c, size_t want) {
	union {
		struct cmsghdr cm;
		uint8_t buf[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS_PER_READ)];
	} control;
	struct iovec iov;
	struct msghdr mh = {};
	size_t room;
	bool take_fds;
	ssize_t k;
	int r;

	r = client_reserve(c, want);
	if (r < 0)
		return r;
	room = c->rcap - c->rlen;
	take_fds = c->unix_fd && (c->state == CLIENT_AWAIT_HELLO || c->state == CLIENT_ACTIVE ||
				  c->state == CLIENT_MONITOR);
	if (take_fds && c->n_in_fds && c->rlen) {
		size_t total = 0;

		if (c->rlen < WIRE_FIXED_HEADER_SIZE)
			total = WIRE_FIXED_HEADER_SIZE;
		else if (wire_frame_size(c->rbuf, c->rlen, c->bus->limits.max_message_size, &total) < 0)
			total = 0;	/* invalid: the connection goes anyway */
		if (total > c->rlen) {
			room = MIN(room, total - c->rlen);
			take_fds = false;
		}
	}
	iov.iov_base = c->rbuf + c->rlen;
	iov.iov_len = room;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (take_fds) {
		uint64_t max = c->bus->limits.max_message_unix_fds;
		size_t space = max > c->n_in_fds ? MIN(max - c->n_in_fds, (uint64_t) CLIENT_MAX_FDS_PER_READ) : 0;

		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * space);
	}
	k = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (k < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (!take_fds)
		goto done;	/* fds that came along are closed: MSG_CTRUNC says so */

	for (struct cmsghdr *cm = mh.msg_controllen ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = (int *) CMSG_DATA(cm);
		int *nf;

		/* more than there was room for: libdbus closes what it got
		 * and takes the read as failed (CVE-2020-12049) */
		if (mh.msg_flags & MSG_CTRUNC) {
			client_close_fds(fds, n);
			continue;
		}
		/* the last part of the fd table is kept for new connections,
		 * the driver and root: the lowest free fd is taken, so an fd
		 * there means the rest is full */
		for (size_t i = 0; i < n; i++)
			if (fds[i] >= c->bus->fd_reserve_start && !(c->is_unix && c->creds.uid == 0)) {
				log_warning("Connection \"%s\" (uid=%u pid=%d) sent unix fds while the daemon is "
					    "short of fds, closing it", client_name(c), (unsigned) c->creds.uid,
					    (int) c->creds.pid);
				client_close_fds(fds, n);
				return -EMFILE;
			}
		nf = realloc(c->in_fds, (c->n_in_fds + n) * sizeof(int));
		if (!nf) {
			client_close_fds(fds, n);
			return -ENOMEM;
		}
		c->in_fds = nf;
		memcpy(c->in_fds + c->n_in_fds, fds, n * sizeof(int));
		c->n_in_fds += n;
	}
	if (mh.msg_flags & MSG_CTRUNC)
		return -ENOSPC;
done:
	c->rlen += k;
	return k;
}

static void client_on_event(evutil_socket_t fd, short what, void *userdata);

static int client_auth_step(Client *c) {
	size_t consumed = 0;
	int r = auth_feed(c->auth, c->rbuf, c->rlen, &consumed);

	memmove(c->rbuf, c->rbuf + consumed, c->rlen - consumed);
	c->rlen -= consumed;

	/* send what SASL has to say */
	for (;;) {
		size_t l;
		const void *p = auth_output(c->auth, &l);
		if (!p || l == 0)
			break;
		ssize_t k = send(c->fd, p, l, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		auth_output_consume(c->auth, k);
	}
	if (r < 0)
		return r;
	if (r == AUTH_DONE) {
		if (!bus_policy_check_connect(c->bus, c))
			return -EACCES;
		c->unix_fd = auth_unix_fd_negotiated(c->auth);
		c->auth = auth_free(c->auth);
		/* auth_timeout runs on until Hello, as dbus-daemon's
		 * expiry of incomplete connections */
		c->state = CLIENT_AWAIT_HELLO;
	}
	return 0;
}

static void client_on_event(evutil_socket_t fd, short what, void *userdata) {
	Client *c = userdata;
	size_t budget = CLIENT_READ_BUDGET;
	int r;

	if (what & EV_WRITE) {
		if (c->auth) {
			r = client_auth_step(c);
			if (r < 0)
				return client_close(c, "authentication failed");
		} else {
			client_flush(c);
			return;	/* c may be gone; reading resumes on the next EV_READ */
		}
	}
	if (!(what & EV_READ))
		return;
	bool resumed = false;
	if (_unlikely_(c->input != CLIENT_INPUT_READ)) {
		if (c->input == CLIENT_INPUT_HELD)
			return;
		/* what was read while held first */
		c->input = CLIENT_INPUT_READ;
		resumed = c->rlen > 0;
	}

	while (budget > 0 && c->input == CLIENT_INPUT_READ) {
		ssize_t k = 0;

		if (_unlikely_(resumed)) {
			/* k = 0: what comes next waits for the next EV_READ */
			resumed = false;
			goto process;
		}
		if (c->state == CLIENT_NONCE) {
			uint8_t buf[16];
			k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_PEEK);
			if (k < 0 && errno == EAGAIN)
				return;
			if (k < 16) {
				if (k > 0)
					return; /* wait for the whole nonce */
				return client_close(c, "nonce missing");
			}
			(void) recv(c->fd, buf, 16, MSG_DONTWAIT);
			if (memcmp(buf, c->nonce, 16) != 0)
				return client_close(c, "wrong nonce");
			c->state = CLIENT_AUTH;
			continue;
		}

		k = client_read_once(c, c->state == CLIENT_AUTH ? 512 : CLIENT_READ_MIN / 4);
		if (k == -EAGAIN)
			break;
		if (k == 0 || k == -ECONNRESET)
			return client_close(c, "peer closed");
		if (k < 0) {
			char why[64];
			snprintf(why, sizeof(why), "read failed: %s", strerror((int) -k));
			return client_close(c, why);
		}
		budget = budget > (size_t) k ? budget - k : 0;

		if (c->state == CLIENT_AUTH) {
			r = client_auth_step(c);
			if (r < 0)
				return client_close(c, "authentication failed");
			if (c->state == CLIENT_AUTH)
				continue;
		}
process:
		r = client_process_input(c);
		if (r < 0)
			return; /* closed */
		if ((size_t) k < c->rcap - (c->rlen - k) && c->state != CLIENT_AUTH)
			break;	/* short read: drained for now */
	}
	client_release_rbuf(c);
	client_update_events(c);
}

void client_start(Client *c) {
	client_on_event(c->fd, EV_READ, c);
}

/* dbus-daemon's bus_connections_check_limits(), at Hello: 1 if the client
 * may register, 0 if it got a LimitsExceeded error instead */
static int client_check_limits(Client *c, uint32_t serial) {
	Bus *bus = c->bus;
	_cleanup_free_ char *text = NULL;
	const char *limit_name;
	uint64_t limit;
	uint8_t *msg;
	size_t len;
	int r;

	if (bus->n_complete >= bus->limits.max_completed_connections) {
		limit_name = "max_completed_connections";
		limit = bus->limits.max_completed_connections;
		if (asprintf(&text, "The maximum number of active connections has been reached") < 0)
			return -ENOMEM;
	} else {
		uint64_t n = 0;
		Client *o;
		if (!c->is_unix)
			return 1;
		list_for_each_entry(o, &bus->clients, link)
			if (o != c && o->is_unix && o->creds.uid == c->creds.uid &&
			    (o->state == CLIENT_ACTIVE || o->state == CLIENT_MONITOR))
				n++;
		if (n < bus->limits.max_connections_per_user)
			return 1;
		limit_name = "max_connections_per_user";
		limit = bus->limits.max_connections_per_user;
		if (asprintf(&text, "The maximum number of active connections for UID %u has been reached",
			     (unsigned) c->creds.uid) < 0)
			return -ENOMEM;
	}
	log_warning("%s (%s=%" PRIu64 ")", text, limit_name, limit);
	r = driver_build_error(c, serial, DBUS_ERR("LimitsExceeded"), text, &msg, &len);
	if (r < 0)
		return r;
	r = client_queue_owned(c, msg, len);
	if (r < 0)
		return r;
	r = client_write(c);
	if (r < 0)
		return r;
	client_update_events(c);
	return 0;
}

static int client_register(Client *c) {
	Bus *bus = c->bus;
	struct {
		struct kdbus_cmd_hello cmd;
		uint8_t items[4096];
	} h = {};
	struct kdbus_item *it = h.cmd.items;
	uint64_t pool = bus->limits.max_outgoing_bytes;
	int r;

	if (bus->n_complete >= bus->limits.max_completed_connections)
		return -EMFILE;

	pool = pool < 16 * 1024 * 1024 ? 16 * 1024 * 1024 : pool;
	pool = pool > (1ULL << 40) ? (1ULL << 40) : pool;
	pool = ALIGN_TO(pool, (uint64_t) 4096);

	h.cmd.flags = c->unix_fd ? KDBUS_HELLO_ACCEPT_FD : 0;
	h.cmd.attach_flags_send = _KDBUS_ATTACH_ALL;
	h.cmd.attach_flags_recv = 0;
	h.cmd.pool_size = pool;

	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_creds);
	it->type = KDBUS_ITEM_CREDS;
	it->creds = (struct kdbus_creds) {
		.uid = c->creds.uid, .euid = c->creds.uid, .suid = c->creds.uid, .fsuid = c->creds.uid,
		.gid = c->creds.gid, .egid = c->creds.gid, .sgid = c->creds.gid, .fsgid = c->creds.gid,
	};
	it = KDBUS_ITEM_NEXT(it);
	if (c->creds.have_pid) {
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_pids);
		it->type = KDBUS_ITEM_PIDS;
		it->pids = (struct kdbus_pids) { .pid = c->creds.pid, .tid = c->creds.pid };
		it = KDBUS_ITEM_NEXT(it);
	}
	if (c->creds.n_groups > 0 && c->creds.n_groups <= 256) {
		it->size = KDBUS_ITEM_HEADER_SIZE + c->creds.n_groups * sizeof(uint64_t);
		it->type = KDBUS_ITEM_AUXGROUPS;
		for (size_t i = 0; i < c->creds.n_groups; i++)
			it->data64[i] = c->creds.groups[i];
		it = KDBUS_ITEM_NEXT(it);
	}
	if (c->creds.label && strlen(c->creds.label) < 1024) {
		size_t l = strlen(c->creds.label);
		it->size = KDBUS_ITEM_HEADER_SIZE + l + 1;
		it->type = KDBUS_ITEM_SECLABEL;
		memcpy(it->str, c->creds.label, l + 1);
		it = KDBUS_ITEM_NEXT(it);
	}
	h.cmd.size = (uint8_t *) it - (uint8_t *) &h.cmd;

	r = kdbus_cmd_hello(bus->kbus, &h.cmd, &c->conn);
	if (r < 0)
		return r;
	if (h.cmd.offset) {
		struct kdbus_cmd_free f = { .size = sizeof(f), .offset = h.cmd.offset };
		(void) kdbus_cmd_free(c->conn, &f);
	}
	c->id = h.cmd.id;
	c->unique_name_len = message_unique_name_format(c->unique_name, c->id);
	/* dbus-daemon's dbus_connection_set_max_received_size() and
	 * _unix_fds(): what the client sent and is not yet written to every
	 * recipient (or dropped) holds its reading at these */
	r = kdbus_conn_set_inflight_limit(c->conn, bus->limits.max_incoming_bytes,
					  bus->limits.max_incoming_unix_fds);
	if (r < 0 && r != -EOPNOTSUPP)
		return r;
	/* dbus-daemon reads the command line at Hello: the process may be
	 * gone when the description is first needed */
	if (c->creds.have_pid)
		c->comm_len = (uint8_t) peer_command_read(c->creds.pid, c->comm);
	c->said_hello = true;
	PolicySnapshot *snap;
	r = client_policy_snapshot(c, bus->policy, &snap);
	if (r < 0)
		return r;
	client_set_policy(c, snap);
	r = idmap_put(&bus->clients_by_id, c->id, c);
	if (r < 0)
		return r;

	return 0;
}

/*
 * NameAcquired / NameLost come from the core's notifications about the
 * client's own names.  A connection can only own or queue for a name
 * after it asked for one, so the four notification matches are installed
 * on its first RequestName: most connections never ask, and their Hello
 * and goodbye cost four MATCH_ADDs and their removal less.
 */
int client_watch_own_names(Client *c) {
	struct {
		struct kdbus_cmd_match cmd;
		uint8_t items[256];	/* one item; room for the whole union */
	} mt;
	static const uint64_t types[] = { KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_CHANGE, KDBUS_ITEM_NAME_CHANGE,
					  KDBUS_ITEM_NAME_REMOVE };
	int r;

	if (c->own_names_watched)
		return 0;
	if (!c->conn)
		return -ENOTCONN;
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		memset(&mt, 0, sizeof(mt));
		mt.cmd.size = sizeof(mt.cmd) + KDBUS_ITEM_SIZE(sizeof(struct kdbus_notify_name_change));
		mt.cmd.cookie = 0;	/* cookie 0: the client's own-name matches */
		struct kdbus_item *it = (struct kdbus_item *) mt.items;
		bool own_is_new = (i == 0 || i == 1);

		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change);
		it->type = types[i];
		it->name_change.old_id.id = own_is_new ? KDBUS_MATCH_ID_ANY : c->id;
		it->name_change.new_id.id = own_is_new ? c->id : KDBUS_MATCH_ID_ANY;
		r = kdbus_cmd_match_add(c->conn, &mt.cmd);
		if (r < 0) {
			struct kdbus_cmd_match rm = { .size = sizeof(rm), .cookie = 0 };

			(void) kdbus_cmd_match_remove(c->conn, &rm);
			return r;
		}
	}
	c->own_names_watched = true;
	return 0;
}

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
		if (!h->destination.s || bus_name_owner(c->conn, h->destination.s, &id) < 0)
			return NULL;
	} else if (t->dst_id != KDBUS_DST_ID_BROADCAST)
		id = t->dst_id;
	return id ? bus_find_client(c->bus, id) : NULL;
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

	if (!bus->n_monitors || !(t.dst_id = monitor_sink_id(bus)))
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
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) km };

	km->flags &= ~(uint64_t) (KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_SIGNAL);
	km->cookie_reply = 0;
	(void) kdbus_cmd_send(c->conn, &cmd);
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
 * client was disconnected (a message for anyone else, a signal without
 * destination).
 */
/* monitors see what a client sends before Hello with the sender
 * ":not.active.yet", as dbus-daemon shows it */
static void client_capture_before_hello(Client *c, const WireHeader *h, const uint8_t *body) {
	static const char sender[] = ":not.active.yet";
	_cleanup_free_ uint8_t *buf = NULL;
	size_t max, hlen;

	if (!c->bus->n_monitors)
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

	if (!h->destination.s && h->type != WIRE_TYPE_SIGNAL) {
		r = driver_build_undirected_reply(c, h, &msg, &len);
	} else if (!h->destination.s || !streq(h->destination.s, DRIVER_NAME)) {
		client_capture_before_hello(c, h, body);
		client_close(c, "first message was not Hello");
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
	r = client_queue_owned(c, msg, len);
	if (r < 0)
		return r;
	r = client_write(c);
	if (r < 0)
		return r;
	client_update_events(c);
	return 0;
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

/* what became of a message, step by step */
typedef enum Dispatch {
	DISPATCH_NEXT,		/* on to the next step */
	DISPATCH_DONE,		/* forwarded, answered or dropped */
	DISPATCH_CLOSED,	/* the client was closed: touch nothing */
} Dispatch;

/* one message on its way through client_dispatch() */
typedef struct Forward {
	uint8_t *msg;
	size_t len;
	WireHeader h;
	MessageTarget t;
	MessageFds fds;
	bool is_hello;		/* the client's Hello: not subject to the send policy */
	bool to_driver;
	bool allowed;		/* else it goes to the monitors' sink, then is refused */
	bool unrequested;	/* a reply no call waits for that the policy allows */
	PolicyRefusal refusal;
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
	f->is_hello = f->to_driver = f->allowed = f->unrequested = false;
	/* (h, t and refusal are set by the steps that decide them) */
	f->hheap = NULL;
	f->hbuf = NULL;
	f->hlen = 0;
	f->bloom_size = f->n_keys = 0;
}

static void forward_done(Forward *f) {
	message_fds_close(&f->fds);
	free(f->hheap);
	f->hheap = NULL;
}

/* a step's negative errno: -ENOMEM drops the message, anything else
 * closed the client */
static Dispatch dispatch_of_errno(int r) {
	return r >= 0 || r == -ENOMEM ? DISPATCH_DONE : DISPATCH_CLOSED;
}

/* frame → validate: the header and body checked, the message's fds taken
 * from what came with the bytes */
static Dispatch forward_take(Client *c, Forward *f) {
	Bus *bus = c->bus;
	WireHeader *h = &f->h;

	if (wire_header_parse(f->msg, f->len, h) < 0) {
		client_close(c, "invalid message header");
		return DISPATCH_CLOSED;
	}
	if (wire_body_validate(h, f->msg + h->header_len, h->body_len) < 0) {
		client_close(c, "invalid message body");
		return DISPATCH_CLOSED;
	}
	if (h->unix_fds > c->n_in_fds || h->unix_fds > bus->limits.max_message_unix_fds ||
	    h->unix_fds > CLIENT_MAX_FDS_PER_READ) {
		client_close(c, "message announces more fds than were passed");
		return DISPATCH_CLOSED;
	}
	f->fds.n = h->unix_fds;
	if (f->fds.n) {
		memcpy(f->fds.v, c->in_fds, f->fds.n * sizeof(int));
		memmove(c->in_fds, c->in_fds + f->fds.n, (c->n_in_fds - f->fds.n) * sizeof(int));
		c->n_in_fds -= f->fds.n;
	}
	c->stats_in_messages++;
	bus->stats_messages++;
	return DISPATCH_NEXT;
}

/* the client's first message: Hello registers it (and may be answered
 * here), anything else is answered as dbus-daemon does */
static Dispatch forward_hello(Client *c, Forward *f) {
	Bus *bus = c->bus;
	int r;

	f->is_hello = true;
	r = client_before_hello(c, &f->h, f->msg + f->h.header_len);
	if (r <= 0)
		return dispatch_of_errno(r);
	/* as dbus-daemon: an error reply, and the connection stays until
	 * it gives up or times out */
	r = client_check_limits(c, f->h.serial);
	if (r <= 0)
		return dispatch_of_errno(r);
	r = client_register(c);
	if (r < 0) {
		client_close(c, r == -EMFILE ? "too many connections" : "cannot register");
		return DISPATCH_CLOSED;
	}
	bus->n_incomplete--;
	bus->n_complete++;
	c->state = CLIENT_ACTIVE;
	driver_stats_names(bus->driver, c, true);
	driver_names_hello(bus->driver, c);
	kdbus_conn_set_wakeup(c->conn, client_wakeup, c);
	bus_resume_listeners(bus);
	/* answered here, or else by the driver through the core */
	r = driver_hello_direct(bus->driver, c, &f->h);
	if (r < 0)
		log_debug("Cannot answer Hello of %s directly: %s", c->unique_name, strerror(-r));
	return r > 0 ? DISPATCH_DONE : DISPATCH_NEXT;
}

/* monitors may not send; dbus-daemon disconnects them */
static Dispatch forward_from_monitor(Client *c, Forward *f) {
	const WireHeader *h = &f->h;

	log_warning("Monitoring connection %s (%s) is not allowed to send messages; closing it. Please fix the "
		    "monitor to not do that. (message type=\"%s\" interface=\"%s\" member=\"%s\" error "
		    "name=\"%s\" destination=\"%s\")", c->unique_name, client_loginfo(c), policy_type_name(h->type),
		    h->interface.s ? h->interface.s : "(unset)", h->member.s ? h->member.s : "(unset)",
		    h->error_name.s ? h->error_name.s : "(unset)", h->destination.s ? h->destination.s : DRIVER_NAME);
	client_close(c, "monitor sent a message");
	return DISPATCH_CLOSED;
}

/* → target: the driver, a unique id, a well-known name or a broadcast; a
 * name that cannot exist is answered at once */
static Dispatch forward_target(Client *c, Forward *f) {
	Bus *bus = c->bus;
	int r;

	if (wire_header_is_local(&f->h)) {
		client_close(c, "message on the reserved Local interface");
		return DISPATCH_CLOSED;
	}
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

	/* as dbus-daemon, Hello is not subject to the send policy */
	f->allowed = f->is_hello || client_policy_send(c, h, &f->t, f->to_driver, &f->refusal);
	/* a reply refused as a requested one: was it asked for?  One to a
	 * name an activator holds never was (and is decided before it can
	 * start the service) */
	if (!f->to_driver && (h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR)) {
		uint64_t owner;
		if (!f->allowed)
			f->allowed = f->unrequested = client_policy_refused_reply(c, h, &f->t, &f->refusal);
		else if (f->t.dst_name && !(h->flags & WIRE_FLAG_NO_AUTO_START) &&
			 bus_name_owner(c->conn, h->destination.s, &owner) == 0 && owner == 0)
			f->allowed = f->unrequested = client_policy_unrequested(c, h, 0, &f->refusal);
	}
	if (!f->allowed && !c->bus->n_monitors) {
		client_policy_refused(c, h, &f->refusal);
		return DISPATCH_DONE;
	}
	return DISPATCH_NEXT;
}

/* → rewrite: the header the bus forwards (our sender, only known fields);
 * a message without destination gets its real target, a signal its bloom
 * filter, a refused message the monitors' sink */
static Dispatch forward_rewrite(Client *c, Forward *f) {
	Bus *bus = c->bus;
	size_t hmax = wire_header_rewrite_size(&f->h, c->unique_name_len);
	int r;

	f->hbuf = f->hstack;
	if (hmax > sizeof(f->hstack)) {
		f->hheap = malloc(hmax);
		if (!f->hheap)
			return DISPATCH_DONE;	/* dropped: out of memory */
		f->hbuf = f->hheap;
	}
	r = wire_header_rewrite(&f->h, c->unique_name, c->unique_name_len, f->hbuf, hmax, &f->hlen);
	if (r < 0) {
		client_close(c, "cannot rewrite header");
		return DISPATCH_CLOSED;
	}

	if (f->t.dst_id == KDBUS_DST_ID_BROADCAST) {
		if (f->h.type == WIRE_TYPE_METHOD_RETURN || f->h.type == WIRE_TYPE_ERROR)
			/* no destination: dbus-daemon routes a reply to nobody,
			 * and neither refuses nor answers it */
			return DISPATCH_DONE;
		if (f->h.type != WIRE_TYPE_SIGNAL) {
			/* no destination, a method call: dbus-daemon hands it to
			 * the driver, which answers only org.freedesktop.DBus.Peer */
			f->t.dst_id = driver_id(bus->driver);
			f->to_driver = true;
		} else {
			f->bloom_size = BLOOM_DEFAULT_SIZE;
			client_bloom(c, &f->h, f->hbuf, f->hlen, f->msg + f->h.header_len, f->bloom, f->keys, &f->n_keys);
		}
	}

	if (!f->allowed) {
		/* monitors see what the policy refused, as with dbus-daemon:
		 * it goes to a connection that only drops it */
		f->t = (MessageTarget) { .dst_id = monitor_sink_id(bus) };
		f->bloom_size = 0;
		f->n_keys = 0;
		f->to_driver = false;
	}
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
	if (!f->allowed || f->to_driver || f->t.dst_id == KDBUS_DST_ID_BROADCAST || !c->rbuf_handle ||
	    f->h.body_len < CLIENT_ADOPT_MIN || f->msg < c->rbuf || f->msg + f->len > c->rbuf + c->rlen)
		return NULL;
	q = f->msg + f->h.header_len - f->hlen;
	if (((uintptr_t) q & 7) != 0 || q < c->rbuf - CLIENT_RBUF_SLACK + 8)
		return NULL;
	memmove(q, f->hbuf, f->hlen);
	if (wire_header_parse(q, f->hlen + f->h.body_len, &h2) < 0) {
		client_close(c, "cannot rewrite header");
		*ret = DISPATCH_CLOSED;
		return NULL;
	}
	f->h = h2;
	if (f->t.dst_name) {
		f->t.dst_name = f->h.destination.s;
		f->t.dst_name_len = f->h.destination.len;
	}
	return q;
}

/* → SEND: the kdbus message to the core, and what dbus-daemon does where
 * the core says no (a call to the driver beyond the pending replies, a
 * reply no call waits for, fds on a broadcast).  Return: the send's
 * result; @ret_full set when the client has max_incoming_* in flight */
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
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) km };

	/* (an unrequested reply that the policy allows is an ordinary
	 * unicast: it consumes no tracker) */
	if (!f->allowed || f->unrequested) {
		km->flags &= ~(uint64_t) (KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_SIGNAL);
		km->cookie_reply = 0;
	}
	/* monitors see an ActivationRequest before the message that caused it */
	if (f->allowed && f->t.dst_name && !(h->flags & WIRE_FLAG_NO_AUTO_START))
		service_registry_before_send(bus, c, h->destination.s);
	/* ... and the errors of the activations an ActivationFailure ends
	 * before the signal itself, as dbus-daemon sends them */
	if (f->allowed && f->to_driver && h->type == WIRE_TYPE_SIGNAL && h->member.s &&
	    streq(h->member.s, "ActivationFailure") && h->interface.s &&
	    streq(h->interface.s, "org.freedesktop.systemd1.Activator"))
		service_registry_activation_failure_raw(bus, c, f->msg, f->len);
	/* (a refused message goes to the monitors' sink, if there is one) */
	if (adopt_at)
		(void) kdbus_payload_offer(c->conn, c->rbuf_handle, adopt_at);
	r = f->allowed || f->t.dst_id ? kdbus_cmd_send(c->conn, &cmd) : 0;
	if (r == -EMLINK && f->to_driver) {
		/* as dbus-daemon, calls to the driver are answered whatever
		 * the caller has pending: no reply tracker for this one (the
		 * driver's answer then goes as a plain message) */
		km->flags &= ~(uint64_t) KDBUS_MSG_EXPECT_REPLY;
		r = kdbus_cmd_send(c->conn, &cmd);
	}
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
		if (client_policy_unrequested(c, h, client_target_id(c, h, &f->t), &f->refusal)) {
			km->cookie_reply = 0;
			r = kdbus_cmd_send(c->conn, &cmd);
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
		cmd.msg_address = (uintptr_t) km;
		r = kdbus_cmd_send(c->conn, &cmd);
	} else if (r < 0 && r != -EBADSLT && f->allowed && !f->to_driver) {
		/* monitors see what could not be routed, then the error */
		client_capture_unsent(c, h, body, f->fds.v, f->fds.n);
	}
	if (adopt_at && kdbus_payload_offer(c->conn, NULL, NULL))
		c->rbuf_given = true;	/* client_process_input() moves on to a new buffer */
	*ret_full = cmd.return_flags & KDBUS_SEND_RETURN_INFLIGHT_FULL;
	return r;
}

/* → answer: what follows a SEND (monitors' captures, the refusal, the
 * driver's turn, or the error of a message that could not be routed) */
static void forward_answer(Client *c, Forward *f, int r) {
	if (r >= 0 && f->allowed && f->t.dst_id == KDBUS_DST_ID_BROADCAST)
		client_policy_broadcast_capture(c, &f->h, f->msg + f->h.header_len);
	if (!f->allowed)
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
static Dispatch client_dispatch(Client *c, uint8_t *msg, size_t len) {
	/* (not zeroed as a whole: its buffers are kilobytes, per message) */
	_cleanup_(forward_done) Forward f;
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
	if (d == DISPATCH_NEXT)
		d = forward_policy(c, &f);
	if (d == DISPATCH_NEXT)
		d = forward_rewrite(c, &f);
	if (d != DISPATCH_NEXT)
		return d;

	uint8_t *adopt_at = forward_adopt(c, &f, &d);
	if (d != DISPATCH_NEXT)
		return d;
	r = forward_send(c, &f, adopt_at, &full);
	/* as dbus-daemon: the next message waits while what this client
	 * has in flight is at max_incoming_bytes / max_incoming_unix_fds */
	if (full)
		c->input = CLIENT_INPUT_HELD;
	message_fds_close(&f.fds);
	forward_answer(c, &f, r);
	return DISPATCH_DONE;
}

static int client_process_input(Client *c) {
	size_t pos = 0;
	int r;

	while (c->input != CLIENT_INPUT_HELD &&
	       (c->state == CLIENT_AWAIT_HELLO || c->state == CLIENT_ACTIVE || c->state == CLIENT_MONITOR)) {
		size_t total;
		r = wire_frame_size(c->rbuf + pos, c->rlen - pos, c->bus->limits.max_message_size, &total);
		if (r < 0) {
			client_close(c, r == -EMSGSIZE ? "message too large" : "invalid message framing");
			return r;
		}
		if (total == 0 || total > c->rlen - pos) {
			if (total > c->rcap - pos) {
				/* make room for the whole message at once */
				memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
				c->rlen -= pos;
				pos = 0;
				r = client_reserve(c, total - c->rlen);
				if (r < 0) {
					client_close(c, "out of memory");
					return r;
				}
			}
			break;
		}
		if (client_dispatch(c, c->rbuf + pos, total) == DISPATCH_CLOSED)
			return -ECONNRESET;
		pos += total;
		if (c->rbuf_given) {
			/* the core has the buffer now: what follows the message
			 * moves to a new one, as large (the next message is
			 * likely as large) */
			c->rbuf_given = false;
			r = client_rbuf_move(c, c->rcap, pos, true);
			if (r < 0) {
				client_close(c, "out of memory");
				return r;
			}
			pos = 0;
		}
	}
	if (pos) {
		memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
		c->rlen -= pos;
	}
	if (c->state == CLIENT_ACTIVE || c->state == CLIENT_AWAIT_HELLO)
		client_update_fd_timer(c);
	/* a grown buffer shrinks back once it holds little (or stays) */
	if (c->rcap > CLIENT_RBUF_KEEP && c->rlen < CLIENT_READ_MIN)
		(void) client_rbuf_move(c, CLIENT_READ_MIN, 0, false);
	return 0;
}

void client_wakeup(KdbusConn *conn, void *userdata) {
	Client *c = userdata;
	bus_schedule_ready(c->bus, c);
}

/* a limit in ms as µs, saturating far beyond any real deadline */
static uint64_t client_ms_to_us(uint64_t ms) {
	return ms > UINT64_C(1) << 52 ? UINT64_C(1) << 62 : ms * 1000;
}

static uint64_t client_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* arm ev_timeout for the earliest deadline, or disarm it */
static void client_arm_timer(Client *c, uint64_t now) {
	uint64_t d = c->hello_deadline;

	if (c->fd_deadline && (!d || c->fd_deadline < d))
		d = c->fd_deadline;
	if (c->stall_deadline && (!d || c->stall_deadline < d))
		d = c->stall_deadline;
	if (d == c->timer_at || !c->ev_timeout)
		return;
	c->timer_at = d;
	if (!d) {
		event_del(c->ev_timeout);
		return;
	}
	if (!now)
		now = client_now();
	d = d > now ? d - now : 0;
	struct timeval tv = { .tv_sec = (time_t) (d / 1000000), .tv_usec = (suseconds_t) (d % 1000000) };
	evtimer_add(c->ev_timeout, &tv);
}

static void client_on_timeout(evutil_socket_t fd, short what, void *userdata) {
	Client *c = userdata;
	uint64_t now = client_now();

	c->timer_at = 0;
	if (c->hello_deadline && c->hello_deadline <= now) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double elapsed = (double) (ts.tv_sec - c->connect_time.tv_sec) * 1000 +
				 (double) (ts.tv_nsec - c->connect_time.tv_nsec) / 1e6;
		log_warning("Connection has not authenticated soon enough, closing it (auth_timeout=%" PRIu64
			    "ms, elapsed: %.0fms)", c->bus->limits.auth_timeout, elapsed);
		client_close(c, "authentication timed out");
		return;
	}
	if (c->fd_deadline && c->fd_deadline <= now) {
		/* dbus-daemon: a connection that keeps fds without the rest
		 * of their message for pending_fd_timeout is dropped */
		log_warning("Connection \"%s\" (%s) has had Unix fds pending for too long, closing it "
			    "(pending_fd_timeout=%" PRIu64 " ms)", c->unique_name_len ? c->unique_name : "(null)",
			    client_loginfo(c), c->bus->limits.pending_fd_timeout);
		client_close(c, "file descriptors pending for too long");
		return;
	}
	if (c->stall_deadline && c->stall_deadline <= now) {
		/* not a dbus-daemon message: debug only */
		log_debug("Connection \"%s\" (%s) has sent %zu bytes of a message and nothing "
			  "more for too long, closing it (pending_fd_timeout=%" PRIu64 " ms)", client_name(c),
			  client_loginfo(c), c->rlen, c->bus->limits.pending_fd_timeout);
		client_close(c, "partial message pending for too long");
		return;
	}
	client_arm_timer(c, now);
}

/*
 * the deadlines after the input was processed: pending fds get
 * pending_fd_timeout from when they arrived (dbus-daemon's
 * check_pending_fds_cb(): the timer starts when the count leaves 0 and
 * stops when it is 0 again; uid 0 is immune); and (an extension) a
 * partial message that makes no progress for as long is dropped, so that
 * a peer that stops in the middle of a message does not keep its buffer
 * forever.  Hello ends the auth_timeout.
 */
static void client_update_fd_timer(Client *c) {
	/* (not while held: the bus does not read, so the fds and bytes wait
	 * for it, not for the client; they start again when it reads) */
	bool held = c->input == CLIENT_INPUT_HELD;
	bool fds = c->n_in_fds > 0 && !(c->is_unix && c->creds.uid == 0) && !held;
	bool partial = c->rlen > 0 && !held;
	bool progress = partial && (c->rlen != c->stall_rlen || c->stats_in_messages != c->stall_msgs);
	uint64_t now = 0;

	if (c->hello_deadline && c->state != CLIENT_AWAIT_HELLO)
		c->hello_deadline = 0;
	if (fds && !c->fd_deadline)
		c->fd_deadline = (now = client_now()) + client_ms_to_us(c->bus->limits.pending_fd_timeout);
	else if (!fds)
		c->fd_deadline = 0;
	if (progress)
		c->stall_deadline = (now ? now : (now = client_now())) +
				   client_ms_to_us(c->bus->limits.pending_fd_timeout);
	else if (!partial)
		c->stall_deadline = 0;
	c->stall_rlen = c->rlen;
	c->stall_msgs = c->stats_in_messages;
	client_arm_timer(c, now);
}

int client_new(Client **ret, Bus *bus, int fd, bool is_unix, const uint8_t *nonce, const char *guid) {
	_cleanup_(client_freep) Client *c = NULL;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		safe_close(fd);
		return -ENOMEM;
	}
	c->bus = bus;
	c->fd = fd;
	c->is_unix = is_unix;
	c->nonce = nonce;
	c->state = nonce ? CLIENT_NONCE : CLIENT_AUTH;
	clock_gettime(CLOCK_MONOTONIC, &c->connect_time);
	list_init(&c->link);
	list_init(&c->ready_link);
	list_init(&c->matches);
	list_link_tail(&bus->clients, &c->link);
	bus->n_incomplete++;

	if (is_unix) {
		PeerCreds pc;
		r = peer_creds_get_basic(fd, &pc);
		if (r < 0)
			return r;
		c->creds.pid = pc.pid;
		c->creds.have_pid = pc.pid > 0;
		c->creds.uid = pc.uid;
		c->creds.gid = pc.gid;
		c->creds.groups = TAKE_PTR(pc.groups);
		c->creds.n_groups = pc.n_groups;
		c->creds.label = TAKE_PTR(pc.label);
		peer_creds_done(&pc);
	} else {
		c->creds.uid = (uid_t) -1;
		c->creds.gid = (gid_t) -1;
	}

	AuthConfig cfg = {
		.peer_uid = c->creds.uid,
		.peer_uid_known = is_unix,
		.unix_fd_possible = is_unix,
		.allow_anonymous = bus->allow_anonymous,
		.mechanisms = bus->auth_mechanisms,
		.guid_hex = guid,
	};
	r = auth_new(&c->auth, &cfg);
	if (r < 0)
		return r;

	c->ev = event_new(bus->base, fd, EV_READ | EV_PERSIST, client_on_event, c);
	c->want_read = true;
	c->ev_timeout = evtimer_new(bus->base, client_on_timeout, c);
	if (!c->ev || !c->ev_timeout)
		return -ENOMEM;
	event_add(c->ev, NULL);
	/* dbus-daemon closes a connection that has not said Hello
	 * auth_timeout after it was accepted */
	c->hello_deadline = client_now() + client_ms_to_us(bus->limits.auth_timeout);
	if (!c->hello_deadline)
		c->hello_deadline = 1;
	client_arm_timer(c, 0);

	*ret = TAKE_PTR(c);
	return 0;
}
