/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * native-peer.c - a kdbus connection that speaks dbus1 messages
 * (native-peer.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "compat/bloom.h"
#include "compat/kdbus-client.h"
#include "compat/match-rule.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "kdbus/ioctl.h"
#include "native/native-peer.h"
#include "util/macro.h"

#define NATIVE_POOL_SIZE (16u * 1024 * 1024)
#define NATIVE_DEFAULT_TIMEOUT_USEC (25u * 1000 * 1000)
/* the cookie of the matches that bring NameAcquired and NameLost */
#define NATIVE_OWN_NAMES_COOKIE 1

typedef struct NativeMatch {
	MatchRule *rule;
	uint64_t cookie;
} NativeMatch;

struct NativePeer {
	KdbusBus *bus;
	KdbusConn *conn;
	uint64_t id;
	char unique_name[24];
	uint32_t serial;
	uint64_t bloom_size;
	uint64_t bloom_n_hash;
	NativeMatch *matches;
	size_t n_matches;
	uint64_t next_match_cookie;
	/* what waits to be received: messages built here (from the kernel's
	 * notifications) and those read while a call waited for its answer;
	 * a FIFO: [pending_head, n_pending) */
	NativeMessage *pending;
	size_t n_pending, pending_head;
};

static uint64_t monotonic_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pool_free(NativePeer *p, uint64_t offset) {
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

	(void) kdbus_cmd_free(p->conn, &f);
}

/* the bus's bloom parameters, from the items HELLO left in the pool */
static void read_bloom_parameters(NativePeer *p, uint64_t offset, uint64_t size) {
	const uint8_t *base = kdbus_pool_ptr(p->conn, offset);
	const struct kdbus_item *it;

	for (uint64_t pos = 0; pos + KDBUS_ITEM_HEADER_SIZE <= size; pos += KDBUS_ALIGN8(it->size)) {
		it = (const void *) (base + pos);
		if (it->size < KDBUS_ITEM_HEADER_SIZE || pos + it->size > size)
			break;
		if (it->type == KDBUS_ITEM_BLOOM_PARAMETER &&
		    it->size >= KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter)) {
			p->bloom_size = it->bloom_parameter.size;
			p->bloom_n_hash = it->bloom_parameter.n_hash;
		}
	}
}

int native_peer_connect(const char *bus_path, const char *description, NativePeer **ret) {
	_cleanup_(native_peer_freep) NativePeer *p = NULL;
	struct {
		struct kdbus_cmd_hello cmd;
		uint8_t items[KDBUS_ITEM_SIZE(256)];
	} h = {};
	size_t dlen = description ? strlen(description) : 0;
	int r;

	*ret = NULL;
	if (dlen >= 256)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = kdbus_ioctl_bus_open(bus_path, &p->bus);
	if (r < 0)
		return r;
	h.cmd.size = sizeof(h.cmd);
	if (description) {
		struct kdbus_item *it = h.cmd.items;
		it->size = KDBUS_ITEM_HEADER_SIZE + dlen + 1;
		it->type = KDBUS_ITEM_CONN_DESCRIPTION;
		memcpy(it->str, description, dlen + 1);
		h.cmd.size += KDBUS_ALIGN8(it->size);
	}
	h.cmd.flags = KDBUS_HELLO_ACCEPT_FD;
	h.cmd.attach_flags_send = _KDBUS_ATTACH_ALL;
	h.cmd.pool_size = NATIVE_POOL_SIZE;
	r = kdbus_cmd_hello(p->bus, &h.cmd, &p->conn);
	if (r < 0)
		return r;
	p->id = h.cmd.id;
	message_unique_name_format(p->unique_name, p->id);
	/* HELLO's answer in the new pool is at offset 0; it stays there, so
	 * that no message is ever at 0, which NativeMessage.slice takes as
	 * "none" */
	if (h.cmd.items_size) {
		read_bloom_parameters(p, h.cmd.offset, h.cmd.items_size);
		if (h.cmd.offset)
			pool_free(p, h.cmd.offset);
	}
	if (!bloom_parameters_valid(p->bloom_size, (unsigned) p->bloom_n_hash))
		return -EPROTO;

	/* NameAcquired and NameLost: the notifications of our own names */
	static const struct {
		KclientNotifyType type;
		bool old_is_us;
	} own[] = {
		{ KCLIENT_NAME_ADD, false },
		{ KCLIENT_NAME_CHANGE, false },
		{ KCLIENT_NAME_CHANGE, true },
		{ KCLIENT_NAME_REMOVE, true },
	};
	for (size_t i = 0; i < ELEMENTSOF(own); i++) {
		r = kclient_match_name_change(p->conn, NATIVE_OWN_NAMES_COOKIE, own[i].type,
					      own[i].old_is_us ? p->id : KDBUS_MATCH_ID_ANY,
					      own[i].old_is_us ? KDBUS_MATCH_ID_ANY : p->id);
		if (r < 0)
			return r;
	}
	p->next_match_cookie = NATIVE_OWN_NAMES_COOKIE + 1;
	*ret = TAKE_PTR(p);
	return 0;
}

NativePeer *native_peer_free(NativePeer *p) {
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_matches; i++)
		match_rule_free(p->matches[i].rule);
	free(p->matches);
	for (size_t i = p->pending_head; i < p->n_pending; i++)
		native_message_clear(p, &p->pending[i]);
	free(p->pending);
	if (p->conn)
		kdbus_conn_close(p->conn);
	kdbus_bus_close(p->bus);
	free(p);
	return NULL;
}

int native_peer_get_fd(const NativePeer *p) {
	return kdbus_conn_get_fd(p->conn);
}

const char *native_peer_get_unique_name(const NativePeer *p) {
	return p->unique_name;
}

uint64_t native_peer_get_id(const NativePeer *p) {
	return p->id;
}

uint32_t native_peer_next_serial(NativePeer *p) {
	if (++p->serial == 0)
		p->serial = 1;
	return p->serial;
}

int native_peer_wait(NativePeer *p, int timeout_msec) {
	struct pollfd pfd = { .fd = native_peer_get_fd(p), .events = POLLIN };

	if (p->pending_head < p->n_pending)
		return 1;
	for (;;) {
		int r = poll(&pfd, 1, timeout_msec);
		if (r >= 0)
			return r > 0;
		if (errno != EINTR)
			return -errno;
	}
}

/* ---- names -------------------------------------------------------------- */

int native_peer_request_name(NativePeer *p, const char *name, uint32_t flags, uint32_t *ret_reply) {
	uint64_t kflags = 0, rflags = 0;
	int r;

	if (!wire_well_known_name_is_valid(name, strlen(name)) || streq(name, DRIVER_NAME))
		return -EINVAL;
	if (flags & DBUS_NAME_FLAG_ALLOW_REPLACEMENT)
		kflags |= KDBUS_NAME_ALLOW_REPLACEMENT;
	if (flags & DBUS_NAME_FLAG_REPLACE_EXISTING)
		kflags |= KDBUS_NAME_REPLACE_EXISTING;
	if (!(flags & DBUS_NAME_FLAG_DO_NOT_QUEUE))
		kflags |= KDBUS_NAME_QUEUE;
	r = kclient_name_acquire(p->conn, name, kflags, &rflags);
	if (r == -EEXIST) {
		*ret_reply = DBUS_REQUEST_NAME_REPLY_EXISTS;
		return 0;
	}
	if (r < 0)
		return r;
	if (rflags & KDBUS_NAME_IN_QUEUE)
		*ret_reply = DBUS_REQUEST_NAME_REPLY_IN_QUEUE;
	else if (rflags & KDBUS_NAME_ACQUIRED)
		*ret_reply = DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER;
	else
		*ret_reply = DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER;
	return 0;
}

int native_peer_release_name(NativePeer *p, const char *name, uint32_t *ret_reply) {
	int r;

	if (!wire_well_known_name_is_valid(name, strlen(name)))
		return -EINVAL;
	r = kclient_name_release(p->conn, name, 0, NULL);
	switch (r) {
	case 0:
		*ret_reply = DBUS_RELEASE_NAME_REPLY_RELEASED;
		return 0;
	case -ESRCH:
		*ret_reply = DBUS_RELEASE_NAME_REPLY_NON_EXISTENT;
		return 0;
	case -EADDRINUSE:
		*ret_reply = DBUS_RELEASE_NAME_REPLY_NOT_OWNER;
		return 0;
	default:
		return r;
	}
}

/* ---- matches ------------------------------------------------------------ */

static int match_install(NativePeer *p, const MatchRule *rule, uint64_t cookie) {
	uint64_t mask[KCLIENT_BLOOM_MAX_SIZE / sizeof(uint64_t)] = {};
	int r;

	bloom_add_rule_mask(mask, p->bloom_size, (unsigned) p->bloom_n_hash, rule);
	r = kclient_match_bloom(p->conn, cookie, mask, p->bloom_size, NULL, 0);
	if (r < 0 || !match_rule_may_match_name_owner_changed(rule))
		return r;
	static const KclientNotifyType types[] = { KCLIENT_NAME_ADD, KCLIENT_NAME_REMOVE, KCLIENT_NAME_CHANGE };
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		r = kclient_match_name_change(p->conn, cookie, types[i], KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY);
		if (r < 0)
			return r;
	}
	r = kclient_match_id_change(p->conn, cookie, KCLIENT_ID_ADD, KDBUS_MATCH_ID_ANY);
	if (r < 0)
		return r;
	return kclient_match_id_change(p->conn, cookie, KCLIENT_ID_REMOVE, KDBUS_MATCH_ID_ANY);
}

/* @text as a rule: -EBADMSG when it is none, -ENOMEM */
static int parse_rule(const char *text, MatchRule **ret) {
	int r = match_rule_parse(text, strlen(text), ret, NULL);

	return r < 0 && r != -ENOMEM ? -EBADMSG : r;
}

int native_peer_add_match(NativePeer *p, const char *text) {
	_cleanup_(match_rule_freep) MatchRule *rule = NULL;
	NativeMatch *m;
	int r;

	r = parse_rule(text, &rule);
	if (r < 0)
		return r;
	m = realloc(p->matches, (p->n_matches + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->matches = m;
	uint64_t cookie = p->next_match_cookie++;
	r = match_install(p, rule, cookie);
	if (r < 0) {
		(void) kclient_match_remove(p->conn, cookie);
		return r;
	}
	p->matches[p->n_matches++] = (NativeMatch) { .rule = TAKE_PTR(rule), .cookie = cookie };
	return 0;
}

int native_peer_remove_match(NativePeer *p, const char *text) {
	_cleanup_(match_rule_freep) MatchRule *rule = NULL;
	int r;

	r = parse_rule(text, &rule);
	if (r < 0)
		return r;
	/* the last one added, as dbus-daemon removes */
	for (size_t i = p->n_matches; i-- > 0;) {
		if (!match_rule_equal(p->matches[i].rule, rule))
			continue;
		(void) kclient_match_remove(p->conn, p->matches[i].cookie);
		match_rule_free(p->matches[i].rule);
		memmove(p->matches + i, p->matches + i + 1, (p->n_matches - i - 1) * sizeof(*p->matches));
		p->n_matches--;
		return 0;
	}
	return -ENOENT;
}

/* whether a broadcast (or a notification turned into one) is for us */
static bool matches_any(NativePeer *p, const WireHeader *h, const uint8_t *body, const char *sender) {
	MatchContext ctx = { .sender = sender };

	for (size_t i = 0; i < p->n_matches; i++)
		if (match_rule_matches(p->matches[i].rule, h, body, &ctx))
			return true;
	return false;
}

/* ---- sending ------------------------------------------------------------ */

/* one outgoing message: the kdbus_msg and what its items point at */
typedef struct NativeOut {
	uint8_t *header;	/* the rewritten header */
	uint64_t *bloom;
	struct kdbus_msg *kmsg;
} NativeOut;

static void native_out_done(NativeOut *o) {
	free(o->header);
	free(o->bloom);
	free(o->kmsg);
}

/* the kdbus_msg of dbus1 message @msg from @p */
static int native_out_build(NativePeer *p, const uint8_t *msg, size_t len, const int *fds, size_t n_fds,
			    uint64_t timeout_usec, NativeOut *o) {
	WireHeader h;
	MessageTarget t;
	size_t hcap, hlen, nlen = strlen(p->unique_name);
	int r;

	if (wire_header_parse(msg, len, &h) < 0 || h.total_len != len ||
	    wire_body_validate(&h, msg + h.header_len, h.body_len) < 0 || h.unix_fds != n_fds || h.serial == 0)
		return -EBADMSG;
	if (h.destination.s && streq(h.destination.s, DRIVER_NAME))
		return -EOPNOTSUPP;
	if (h.type != WIRE_TYPE_SIGNAL && !h.destination.s)
		return -EBADMSG;	/* nobody to send it to */
	r = message_target(&h, &t);
	if (r < 0)
		return r;
	hcap = wire_header_rewrite_size(&h, nlen);
	o->header = malloc(hcap);
	if (!o->header)
		return -ENOMEM;
	r = wire_header_rewrite(&h, p->unique_name, nlen, o->header, hcap, &hlen);
	if (r < 0)
		return r;
	MessageSendParts parts = {
		.header = o->header,
		.header_len = hlen,
		.body = msg + h.header_len,
		.body_len = h.body_len,
		.fds = fds,
		.n_fds = n_fds,
		.timeout_ns = monotonic_ns() + (timeout_usec ? timeout_usec : NATIVE_DEFAULT_TIMEOUT_USEC) * 1000ULL,
	};
	if (t.dst_id == KDBUS_DST_ID_BROADCAST) {
		o->bloom = calloc(1, p->bloom_size);
		if (!o->bloom)
			return -ENOMEM;
		bloom_add_message(o->bloom, p->bloom_size, (unsigned) p->bloom_n_hash, &h, msg + h.header_len);
		parts.bloom = o->bloom;
		parts.bloom_size = p->bloom_size;
	}
	o->kmsg = aligned_alloc(8, KDBUS_ALIGN8(message_kmsg_size(&t, n_fds, parts.bloom_size)));
	if (!o->kmsg)
		return -ENOMEM;
	message_kmsg_build(&h, &t, &parts, o->kmsg);
	return 0;
}

int native_peer_send(NativePeer *p, const uint8_t *msg, size_t len, const int *fds, size_t n_fds,
		     uint64_t timeout_usec) {
	_cleanup_(native_out_done) NativeOut o = {};
	int r;

	r = native_out_build(p, msg, len, fds, n_fds, timeout_usec, &o);
	if (r < 0)
		return r;
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) o.kmsg };
	return kdbus_cmd_send(p->conn, &cmd);
}


/* ---- receiving ---------------------------------------------------------- */

/* @m waits to be received (the FIFO takes it over) */
static int native_pending_push(NativePeer *p, NativeMessage *m) {
	if (p->pending_head == p->n_pending)
		p->pending_head = p->n_pending = 0;
	NativeMessage *v = realloc(p->pending, (p->n_pending + 1) * sizeof(*v));
	if (!v) {
		native_message_clear(p, m);
		return -ENOMEM;
	}
	p->pending = v;
	p->pending[p->n_pending++] = *m;
	*m = (NativeMessage) {};
	return 0;
}

/* a message built here, @len bytes of malloc()ed @msg */
static int native_built_push(NativePeer *p, uint8_t *msg, size_t len) {
	NativeMessage m = { .data = msg, .len = len, .owned = msg };

	if (wire_header_parse(msg, len, &m.h) < 0) {
		free(msg);
		return -EPROTO;
	}
	m.cookie = m.h.serial;
	return native_pending_push(p, &m);
}

/* the answer to our call @serial, if it waits in the FIFO: taken out */
static bool native_pending_take_reply(NativePeer *p, uint32_t serial, NativeMessage *ret) {
	for (size_t i = p->pending_head; i < p->n_pending; i++) {
		const WireHeader *h = &p->pending[i].h;
		if ((h->type == WIRE_TYPE_METHOD_RETURN || h->type == WIRE_TYPE_ERROR) && h->has_reply_serial &&
		    h->reply_serial == serial) {
			*ret = p->pending[i];
			memmove(p->pending + i, p->pending + i + 1, (p->n_pending - i - 1) * sizeof(*p->pending));
			p->n_pending--;
			return true;
		}
	}
	return false;
}

/* a signal of the bus driver to us (NameAcquired, NameLost) or to
 * everyone (NameOwnerChanged), with string arguments */
static int native_driver_signal(NativePeer *p, const char *member, const char *const *args, size_t n_args) {
	WireBuilder b;
	uint8_t *msg;
	size_t len;
	bool unicast = n_args == 1;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, native_peer_next_serial(p));
	if (r < 0)
		return r;
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, DRIVER_INTERFACE);
	wire_builder_set_member(&b, member);
	if (unicast)
		wire_builder_set_destination(&b, p->unique_name);
	wire_builder_set_sender(&b, DRIVER_NAME);
	for (size_t i = 0; i < n_args; i++)
		wire_builder_append_string(&b, 's', args[i], strlen(args[i]));
	r = wire_builder_finish(&b, &msg, &len);
	if (r < 0) {
		wire_builder_done(&b);
		return r;
	}
	if (!unicast) {
		WireHeader h;
		if (wire_header_parse(msg, len, &h) < 0 || !matches_any(p, &h, msg + h.header_len, DRIVER_NAME)) {
			free(msg);
			return 0;
		}
	}
	return native_built_push(p, msg, len);
}

/* the NoReply error of a call the kernel answered for its callee, in
 * *@ret_msg (free() it) */
static int native_build_no_reply(NativePeer *p, uint64_t cookie, bool dead, uint8_t **ret_msg, size_t *ret_len) {
	WireBuilder b;
	const char *text = dead ? "Message recipient disconnected from message bus without replying" :
		"Did not receive a reply. Possible causes include: the remote application did not send a reply, "
		"the message bus security policy blocked the reply, the reply timeout expired, or the network "
		"connection was broken.";
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_ERROR, WIRE_FLAG_NO_REPLY_EXPECTED, native_peer_next_serial(p));
	if (r < 0)
		return r;
	wire_builder_set_error_name(&b, DBUS_ERR("NoReply"));
	wire_builder_set_reply_serial(&b, (uint32_t) cookie);
	wire_builder_set_destination(&b, p->unique_name);
	wire_builder_set_sender(&b, DRIVER_NAME);
	wire_builder_append_string(&b, 's', text, strlen(text));
	r = wire_builder_finish(&b, ret_msg, ret_len);
	if (r < 0)
		wire_builder_done(&b);
	return r;
}

static int native_no_reply(NativePeer *p, uint64_t cookie, bool dead) {
	uint8_t *msg;
	size_t len;
	int r = native_build_no_reply(p, cookie, dead, &msg, &len);

	return r < 0 ? r : native_built_push(p, msg, len);
}

/* ":1.N" of @id, or "" for none and for a name's activator (an activatable
 * name nobody runs has no owner in dbus1) */
static const char *owner_name(char buf[static 24], uint64_t id, uint64_t flags) {
	if (!id || (flags & KDBUS_NAME_ACTIVATOR))
		return "";
	message_unique_name_format(buf, id);
	return buf;
}

/* what the kernel tells us in @m, as the messages dbus-daemon would send */
static int native_notifications(NativePeer *p, const struct kdbus_msg *m) {
	const struct kdbus_item *cursor = NULL;
	KclientNotify n;
	int r = 0;

	while (r >= 0 && kclient_notify_next(m, &cursor, &n)) {
		char old_buf[24], new_buf[24];

		switch (n.type) {
		case KCLIENT_NAME_ADD:
		case KCLIENT_NAME_REMOVE:
		case KCLIENT_NAME_CHANGE: {
			const char *old = owner_name(old_buf, n.old_id, n.old_flags);
			const char *new = owner_name(new_buf, n.new_id, n.new_flags);
			if (streq(old, new))
				break;
			if (n.old_id == p->id && old[0])
				r = native_driver_signal(p, "NameLost", (const char *[]) { n.name }, 1);
			if (r >= 0)
				r = native_driver_signal(p, "NameOwnerChanged", (const char *[]) { n.name, old, new }, 3);
			if (r >= 0 && n.new_id == p->id && new[0])
				r = native_driver_signal(p, "NameAcquired", (const char *[]) { n.name }, 1);
			break;
		}
		case KCLIENT_ID_ADD:
		case KCLIENT_ID_REMOVE: {
			if (n.flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER | KDBUS_HELLO_MONITOR))
				break;
			const char *u = owner_name(old_buf, n.id, 0);
			bool add = n.type == KCLIENT_ID_ADD;
			r = native_driver_signal(p, "NameOwnerChanged", (const char *[]) { u, add ? "" : u, add ? u : "" },
						 3);
			break;
		}
		case KCLIENT_REPLY_TIMEOUT:
		case KCLIENT_REPLY_DEAD:
			r = native_no_reply(p, m->cookie_reply, n.type == KCLIENT_REPLY_DEAD);
			break;
		}
	}
	return r;
}

/* whether a dbus1 message from connection @src says who sent it */
static bool sender_is_true(const WireHeader *h, uint64_t src, uint64_t cookie_reply) {
	char name[24];

	if (!h->sender.s)
		return false;
	/* the bus's own answers (AccessDenied, ...) come from the callee's
	 * connection: the kernel lets only it answer this call */
	if (cookie_reply && streq(h->sender.s, DRIVER_NAME))
		return true;
	message_unique_name_format(name, src);
	return streq(h->sender.s, name);
}

/* the message in the slice at @offset; -EAGAIN when it is none of ours
 * (the slice is given back) */
static int native_take(NativePeer *p, uint64_t offset, NativeMessage *ret) {
	struct kdbus_msg *m = kdbus_pool_ptr(p->conn, offset);
	struct iovec iov[8];
	unsigned n_iov;
	size_t len;
	uint64_t first;
	int *fds;
	size_t n_fds;
	int r;

	*ret = (NativeMessage) { .slice = offset, .cookie = m->cookie };
	KCLIENT_MSG_PARTS(p->conn, m, iov, ELEMENTSOF(iov), n_iov, len, first, fds, n_fds);
	(void) first;
	if (n_fds) {
		ret->fds = malloc(n_fds * sizeof(int));
		if (!ret->fds) {
			for (size_t i = 0; i < n_fds; i++)
				close(fds[i]);
			pool_free(p, offset);
			*ret = (NativeMessage) {};
			return -ENOMEM;
		}
		memcpy(ret->fds, fds, n_fds * sizeof(int));
		ret->n_fds = n_fds;
	}
	if (m->payload_type == KDBUS_PAYLOAD_KERNEL) {
		r = native_notifications(p, m);
		native_message_clear(p, ret);
		return r < 0 ? r : -EAGAIN;
	}
	if (n_iov == 1) {
		ret->data = iov[0].iov_base;
	} else if (n_iov > 1) {
		ret->owned = malloc(len);
		if (!ret->owned) {
			native_message_clear(p, ret);
			return -ENOMEM;
		}
		for (unsigned i = 0, pos = 0; i < n_iov; pos += iov[i].iov_len, i++)
			memcpy(ret->owned + pos, iov[i].iov_base, iov[i].iov_len);
		ret->data = ret->owned;
	}
	ret->len = len;
	if (m->payload_type != KDBUS_PAYLOAD_DBUS || !ret->data || wire_header_parse(ret->data, len, &ret->h) < 0 ||
	    ret->h.total_len != len || wire_body_validate(&ret->h, ret->data + ret->h.header_len, ret->h.body_len) < 0 ||
	    !sender_is_true(&ret->h, m->src_id, m->cookie_reply) ||
	    (m->dst_id == KDBUS_DST_ID_BROADCAST && !matches_any(p, &ret->h, ret->data + ret->h.header_len, NULL))) {
		native_message_clear(p, ret);
		return -EAGAIN;
	}
	return 0;
}

int native_peer_receive(NativePeer *p, NativeMessage *ret) {
	int r;

	*ret = (NativeMessage) {};
	for (;;) {
		if (p->pending_head < p->n_pending) {
			*ret = p->pending[p->pending_head++];
			return 0;
		}
		struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
		r = kdbus_cmd_recv(p->conn, &recv);
		if (r == -EINTR || r == -EOVERFLOW)
			continue;	/* (EOVERFLOW: some were lost, the next is there) */
		if (r < 0)
			return r;
		r = native_take(p, recv.msg.offset, ret);
		if (r != -EAGAIN)
			return r;
	}
}

void native_message_clear(NativePeer *p, NativeMessage *m) {
	for (size_t i = 0; i < m->n_fds; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	free(m->fds);
	if (m->slice)
		pool_free(p, m->slice);
	free(m->owned);
	*m = (NativeMessage) {};
}

/* ---- calls ------------------------------------------------------------- */

/*
 * A call and its answer: sent as any call (the kernel tracks it, and tells
 * REPLY_TIMEOUT or REPLY_DEAD when no answer comes), then what arrives is
 * read until the answer is there; the rest waits for native_peer_receive().
 * (Not the kernel's synchronous call: the answer may carry fds, which
 * the kernel installs only at RECV.)
 */
int native_peer_call(NativePeer *p, const uint8_t *msg, size_t len, const int *fds, size_t n_fds,
		     uint64_t timeout_usec, NativeMessage *ret_reply) {
	_cleanup_(native_out_done) NativeOut o = {};
	uint64_t deadline;
	int r;

	*ret_reply = (NativeMessage) {};
	r = native_out_build(p, msg, len, fds, n_fds, timeout_usec, &o);
	if (r < 0)
		return r;
	if (!(o.kmsg->flags & KDBUS_MSG_EXPECT_REPLY))
		return -EINVAL;	/* not a call that is answered */
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) o.kmsg };
	r = kdbus_cmd_send(p->conn, &cmd);
	if (r < 0)
		return r;
	uint32_t serial = (uint32_t) o.kmsg->cookie;
	/* the kernel's REPLY_TIMEOUT comes at the deadline; a second more
	 * before the answer is made up here */
	deadline = o.kmsg->timeout_ns + 1000000000ULL;
	for (;;) {
		NativeMessage m;

		if (native_pending_take_reply(p, serial, ret_reply))
			return 0;
		uint64_t now = monotonic_ns();
		if (now >= deadline)
			break;
		struct pollfd pfd = { .fd = native_peer_get_fd(p), .events = POLLIN };
		uint64_t left_ms = (deadline - now) / 1000000 + 1;
		r = poll(&pfd, 1, left_ms > INT32_MAX ? INT32_MAX : (int) left_ms);
		if (r < 0 && errno != EINTR)
			return -errno;
		for (;;) {
			struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
			r = kdbus_cmd_recv(p->conn, &recv);
			if (r == -EINTR || r == -EOVERFLOW)
				continue;
			if (r == -EAGAIN)
				break;
			if (r < 0)
				return r;
			r = native_take(p, recv.msg.offset, &m);
			if (r == -EAGAIN)
				continue;	/* none of ours, or a notification */
			if (r < 0)
				return r;
			if ((m.h.type == WIRE_TYPE_METHOD_RETURN || m.h.type == WIRE_TYPE_ERROR) &&
			    m.h.has_reply_serial && m.h.reply_serial == serial) {
				*ret_reply = m;
				return 0;
			}
			r = native_pending_push(p, &m);
			if (r < 0)
				return r;
		}
	}
	uint8_t *err;
	size_t elen;
	r = native_build_no_reply(p, serial, false, &err, &elen);
	if (r < 0)
		return r;
	*ret_reply = (NativeMessage) { .data = err, .len = elen, .owned = err };
	if (wire_header_parse(err, elen, &ret_reply->h) < 0) {
		native_message_clear(p, ret_reply);
		return -EPROTO;
	}
	ret_reply->cookie = ret_reply->h.serial;
	return 0;
}
