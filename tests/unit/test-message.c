/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "compat/message.h"
#include "kdbus/bus.h"
#include "tests/unit/test.h"

static void test_unique_names(void) {
	uint64_t id;
	char buf[24];

	/* as dbus-daemon's, the first connection's name is :1.0 */
	assert(message_unique_name_to_id(":1.0", 4, &id) && id == 1);
	assert(message_unique_name_to_id(":1.1", 4, &id) && id == 2);
	assert(message_unique_name_to_id(":1.4611686018427387902", 22, &id) && id == KDBUS_ID_HIDDEN_BASE - 1);
	assert(!message_unique_name_to_id(":1.4611686018427387903", 22, &id));	/* the bus's helpers */
	assert(!message_unique_name_to_id(":1.18446744073709551614", 23, &id));
	assert(!message_unique_name_to_id(":1.18446744073709551615", 23, &id));
	assert(!message_unique_name_to_id(":1.18446744073709551616", 23, &id));	/* overflow */
	assert(!message_unique_name_to_id(":1.01", 5, &id));
	assert(!message_unique_name_to_id(":2.1", 4, &id));
	assert(!message_unique_name_to_id(":1.", 3, &id));
	assert(!message_unique_name_to_id(":1.1a", 5, &id));
	assert(message_unique_name_format(buf, 1) == 4 && strcmp(buf, ":1.0") == 0);
	assert(message_unique_name_format(buf, 43) == 5 && strcmp(buf, ":1.42") == 0);
	assert(message_unique_name_format(buf, 18446744073709551614ULL) == 23);
	assert(message_unique_name_format(buf, KDBUS_ID_HIDDEN_BASE - 1) == 22);
	assert(message_unique_name_to_id(buf, strlen(buf), &id) && id == KDBUS_ID_HIDDEN_BASE - 1);
}

static void test_target(void) {
	WireHeader h = {};
	MessageTarget t;

	assert(message_target(&h, &t) == 0 && t.dst_id == KDBUS_DST_ID_BROADCAST && !t.dst_name);
	h.destination = (WireString) { ":1.9", 4 };
	assert(message_target(&h, &t) == 0 && t.dst_id == 10);
	h.destination = (WireString) { ":1.x", 4 };
	assert(message_target(&h, &t) == -ENXIO);
	h.destination = (WireString) { "org.example.Foo", 15 };
	assert(message_target(&h, &t) == 0 && t.dst_id == KDBUS_DST_ID_NAME && t.dst_name_len == 15);
}

static void test_kmsg_build(void) {
	uint8_t hdr[16] = { 'l' }, body[5] = "abcd";
	int fds[2] = { 3, 4 };
	uint64_t bloom[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t buf[MESSAGE_KMSG_BASE_SIZE] __attribute__((aligned(8)));
	WireHeader h = { .type = WIRE_TYPE_METHOD_CALL, .serial = 77, .destination = { "a.b", 3 } };
	MessageTarget t;
	MessageSendParts p = {
		.header = hdr, .header_len = 16, .body = body, .body_len = 4, .fds = fds, .n_fds = 2, .timeout_ns = 12345,
	};
	struct kdbus_msg *m;
	struct kdbus_item *it;
	int n_items = 0;

	assert(message_target(&h, &t) == 0);
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->size <= message_kmsg_size(&t, 2, 0));
	assert(m->flags == KDBUS_MSG_EXPECT_REPLY && m->timeout_ns == 12345 && m->cookie == 77);
	assert(m->dst_id == KDBUS_DST_ID_NAME && m->payload_type == KDBUS_PAYLOAD_DBUS);
	KDBUS_ITEM_FOREACH(it, m, items) {
		n_items++;
		if (it->type == KDBUS_ITEM_DST_NAME)
			assert(strcmp(it->str, "a.b") == 0);
		if (it->type == KDBUS_ITEM_FDS)
			assert(it->size == 16 + 8 && it->fds[1] == 4);
	}
	assert(n_items == 4);

	/* no reply expected: no EXPECT_REPLY, no deadline */
	h.flags = WIRE_FLAG_NO_REPLY_EXPECTED | WIRE_FLAG_NO_AUTO_START;
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->flags == KDBUS_MSG_NO_AUTO_START && m->timeout_ns == 0);

	/* a reply carries the cookie it answers */
	h = (WireHeader) { .type = WIRE_TYPE_ERROR, .serial = 5, .reply_serial = 4, .has_reply_serial = true,
			   .destination = { ":1.3", 4 } };
	assert(message_target(&h, &t) == 0);
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->cookie_reply == 4 && m->dst_id == 4 && m->flags == 0);

	/* a signal with a destination is a plain unicast for the core */
	h = (WireHeader) { .type = WIRE_TYPE_SIGNAL, .serial = 7, .destination = { ":1.3", 4 } };
	assert(message_target(&h, &t) == 0);
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->flags == 0 && m->dst_id == 4);

	/* a broadcast signal with its bloom filter */
	h = (WireHeader) { .type = WIRE_TYPE_SIGNAL, .serial = 6 };
	p.n_fds = 0;
	p.bloom = bloom;
	p.bloom_size = sizeof(bloom);
	assert(message_target(&h, &t) == 0);
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->flags == KDBUS_MSG_SIGNAL && m->dst_id == KDBUS_DST_ID_BROADCAST);
	bool seen = false;
	KDBUS_ITEM_FOREACH(it, m, items)
		if (it->type == KDBUS_ITEM_BLOOM_FILTER) {
			seen = true;
			assert(it->bloom_filter.data[7] == 8);
		}
	assert(seen);

	/* with its match keys, within message_kmsg_size() */
	uint64_t keys[3] = { 11, 22, 33 };
	p.keys = keys;
	p.n_keys = 3;
	m = message_kmsg_build(&h, &t, &p, buf);
	assert(m->size <= message_kmsg_size(&t, 0, sizeof(bloom)));
	seen = false;
	KDBUS_ITEM_FOREACH(it, m, items)
		if (it->type == KDBUS_ITEM_MATCH_KEYS) {
			seen = true;
			assert(it->size == KDBUS_ITEM_HEADER_SIZE + 24 && it->data64[2] == 33);
		}
	assert(seen);
}

int main(void) {
	RUN(unique_names);
	RUN(target);
	RUN(kmsg_build);
	return test_done();
}
