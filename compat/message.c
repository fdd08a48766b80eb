/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>

#include "compat/message.h"
#include "kdbus/bus.h"
#include "util/macro.h"

#define UNIQUE_PREFIX ":1."

bool message_unique_name_to_id(const char *s, size_t len, uint64_t *ret_id) {
	uint64_t id = 0;

	if (len < 4 || memcmp(s, UNIQUE_PREFIX, 3) != 0)
		return false;
	if (s[3] == '0' && len > 4)
		return false;	/* no leading zeros: ":1.01" is not ":1.1" */
	for (size_t i = 3; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (MUL_OVERFLOW(id, 10, &id) || ADD_OVERFLOW(id, (uint64_t) (s[i] - '0'), &id))
			return false;
	}
	/* ":1.N" is connection N + 1 (kdbus ids start at 1, dbus-daemon's
	 * names at :1.0); the bus's own helpers have no name */
	if (id >= KDBUS_ID_HIDDEN_BASE - 1)
		return false;
	*ret_id = id + 1;
	return true;
}

size_t message_unique_name_format(char *buf, uint64_t id) {
	char tmp[21];
	size_t n = 0;

	id--;
	do {
		tmp[n++] = '0' + id % 10;
		id /= 10;
	} while (id);
	memcpy(buf, UNIQUE_PREFIX, 3);
	for (size_t i = 0; i < n; i++)
		buf[3 + i] = tmp[n - 1 - i];
	buf[3 + n] = 0;
	return 3 + n;
}

int message_target(const WireHeader *h, MessageTarget *ret) {
	*ret = (MessageTarget) {};
	if (!h->destination.s) {
		ret->dst_id = KDBUS_DST_ID_BROADCAST;
		return 0;
	}
	if (h->destination.s[0] == ':') {
		if (!message_unique_name_to_id(h->destination.s, h->destination.len, &ret->dst_id))
			return -ENXIO;
		return 0;
	}
	ret->dst_id = KDBUS_DST_ID_NAME;
	ret->dst_name = h->destination.s;
	ret->dst_name_len = h->destination.len;
	return 0;
}

size_t message_kmsg_size(const MessageTarget *t, size_t n_fds, size_t bloom_size) {
	size_t sz = sizeof(struct kdbus_msg) + 2 * KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec));

	if (n_fds)
		sz += KDBUS_ITEM_SIZE(n_fds * sizeof(int));
	if (t->dst_name)
		sz += KDBUS_ITEM_SIZE(t->dst_name_len + 1);
	if (bloom_size)
		sz += KDBUS_ITEM_SIZE(sizeof(struct kdbus_bloom_filter) + bloom_size) +
		      KDBUS_ITEM_SIZE(KDBUS_MATCH_KEYS_MAX * sizeof(uint64_t));
	return sz;
}

static struct kdbus_item *item_vec(struct kdbus_item *it, const void *p, size_t n) {
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
	it->type = KDBUS_ITEM_PAYLOAD_VEC;
	it->vec.address = (uintptr_t) p;
	it->vec.size = n;
	return KDBUS_ITEM_NEXT(it);
}

struct kdbus_msg *message_kmsg_bytes(void *buf, uint64_t dst_id, uint64_t cookie, uint64_t cookie_reply,
				     const void *msg, size_t len) {
	struct kdbus_msg *m = buf;

	memset(m, 0, sizeof(*m));
	m->payload_type = KDBUS_PAYLOAD_DBUS;
	m->dst_id = dst_id;
	m->cookie = cookie;
	m->cookie_reply = cookie_reply;
	m->size = (uint8_t *) item_vec(m->items, msg, len) - (uint8_t *) m;
	return m;
}

struct kdbus_msg *message_kmsg_build(const WireHeader *h, const MessageTarget *t,
				     const MessageSendParts *p, void *buf) {
	struct kdbus_msg *m = buf;
	struct kdbus_item *it;

	memset(m, 0, sizeof(*m));
	m->payload_type = KDBUS_PAYLOAD_DBUS;
	m->cookie = h->serial;
	m->dst_id = t->dst_id;

	switch (h->type) {
	case WIRE_TYPE_METHOD_CALL:
		if (!(h->flags & WIRE_FLAG_NO_REPLY_EXPECTED) && t->dst_id != KDBUS_DST_ID_BROADCAST) {
			m->flags |= KDBUS_MSG_EXPECT_REPLY;
			m->timeout_ns = p->timeout_ns;
		}
		break;
	case WIRE_TYPE_METHOD_RETURN:
	case WIRE_TYPE_ERROR:
		m->cookie_reply = h->reply_serial;
		break;
	case WIRE_TYPE_SIGNAL:
		/* a kdbus signal is matched against the receiver's bloom
		 * masks; a dbus1 signal with a destination reaches it
		 * unconditionally, so it travels as a plain unicast */
		if (t->dst_id == KDBUS_DST_ID_BROADCAST)
			m->flags |= KDBUS_MSG_SIGNAL;
		break;
	}
	if (h->flags & WIRE_FLAG_NO_AUTO_START)
		m->flags |= KDBUS_MSG_NO_AUTO_START;

	it = m->items;
	it = item_vec(it, p->header, p->header_len);
	if (p->body_len)
		it = item_vec(it, p->body, p->body_len);
	if (p->n_fds) {
		it->size = KDBUS_ITEM_HEADER_SIZE + p->n_fds * sizeof(int);
		it->type = KDBUS_ITEM_FDS;
		memcpy(it->fds, p->fds, p->n_fds * sizeof(int));
		it = KDBUS_ITEM_NEXT(it);
	}
	if (t->dst_name) {
		it->size = KDBUS_ITEM_HEADER_SIZE + t->dst_name_len + 1;
		it->type = KDBUS_ITEM_DST_NAME;
		memcpy(it->str, t->dst_name, t->dst_name_len);
		it->str[t->dst_name_len] = 0;
		it = KDBUS_ITEM_NEXT(it);
	}
	if (p->bloom_size) {
		it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_filter) + p->bloom_size;
		it->type = KDBUS_ITEM_BLOOM_FILTER;
		it->bloom_filter.generation = 0;
		memcpy(it->bloom_filter.data, p->bloom, p->bloom_size);
		it = KDBUS_ITEM_NEXT(it);
	}
	if (p->n_keys) {
		it->size = KDBUS_ITEM_HEADER_SIZE + p->n_keys * sizeof(uint64_t);
		it->type = KDBUS_ITEM_MATCH_KEYS;
		memcpy(it->data64, p->keys, p->n_keys * sizeof(uint64_t));
		it = KDBUS_ITEM_NEXT(it);
	}
	m->size = (uint8_t *) it - (uint8_t *) m;
	return m;
}
