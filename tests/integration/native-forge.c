/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * native-forge MODE DEST: a native peer that sends DEST (a well-known
 * name) a method call busbridged must not pass on to its client, with the
 * kernel's ioctl itself (native_peer_send() would not build it):
 *   sender	SENDER is another connection's unique name
 *   no-sender	no SENDER field
 *   body	the body does not match its signature
 *   fds	UNIX_FDS says 1, no fd is sent
 *   good	a correct call (the control: it is answered)
 * Prints "answered TYPE" or "no answer" (the kernel's REPLY_TIMEOUT, 2 s).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "compat/wire.h"
#include "kdbus/kdbus.h"
#include "native/native-peer.h"

static uint64_t now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv) {
	NativePeer *p = NULL;
	const char *bus = getenv("BUSBRIDGE_KDBUS_BUS");
	WireBuilder b;
	uint8_t *msg;
	size_t len;
	int r;

	if (argc != 3 || !bus) {
		fprintf(stderr, "usage: BUSBRIDGE_KDBUS_BUS=PATH native-forge MODE DEST\n");
		return 2;
	}
	const char *mode = argv[1], *dest = argv[2];
	r = native_peer_connect(bus, "native-forge", &p);
	if (r < 0) {
		fprintf(stderr, "connect: %s\n", strerror(-r));
		return 1;
	}
	uint32_t serial = native_peer_next_serial(p);
	wire_builder_init(&b, WIRE_TYPE_METHOD_CALL, 0, serial);
	wire_builder_set_path(&b, "/com/example/Test");
	wire_builder_set_interface(&b, "com.example.Test");
	wire_builder_set_member(&b, "Echo");
	wire_builder_set_destination(&b, dest);
	if (strcmp(mode, "sender") == 0)
		wire_builder_set_sender(&b, ":1.0");
	else if (strcmp(mode, "no-sender") != 0)
		wire_builder_set_sender(&b, native_peer_get_unique_name(p));
	if (strcmp(mode, "fds") == 0)
		wire_builder_set_unix_fds(&b, 1);
	wire_builder_append(&b, "s", "forged");
	if (wire_builder_finish(&b, &msg, &len) < 0)
		return 1;
	if (strcmp(mode, "body") == 0)
		memset(msg + len - 11, 0xff, 4);	/* the string's length: past the body */

	struct {
		struct kdbus_msg m;
		uint8_t items[KDBUS_ITEM_SIZE(sizeof(struct kdbus_vec)) + KDBUS_ITEM_SIZE(256)];
	} k = {};
	struct kdbus_item *it = k.m.items;
	it->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
	it->type = KDBUS_ITEM_PAYLOAD_VEC;
	it->vec.address = (uintptr_t) msg;
	it->vec.size = len;
	it = KDBUS_ITEM_NEXT(it);
	it->size = KDBUS_ITEM_HEADER_SIZE + strlen(dest) + 1;
	it->type = KDBUS_ITEM_DST_NAME;
	strcpy(it->str, dest);
	it = KDBUS_ITEM_NEXT(it);
	k.m.size = (uint8_t *) it - (uint8_t *) &k.m;
	k.m.payload_type = KDBUS_PAYLOAD_DBUS;
	k.m.dst_id = KDBUS_DST_ID_NAME;
	k.m.cookie = serial;
	k.m.flags = KDBUS_MSG_EXPECT_REPLY;
	k.m.timeout_ns = now_ns() + 2000000000ULL;
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd), .msg_address = (uintptr_t) &k.m };
	if (ioctl(native_peer_get_fd(p), KDBUS_CMD_SEND, &cmd) < 0) {
		fprintf(stderr, "send: %m\n");
		return 1;
	}
	for (;;) {
		NativeMessage m;
		if (native_peer_wait(p, 5000) <= 0) {
			puts("nothing at all");
			break;
		}
		r = native_peer_receive(p, &m);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return 1;
		if (m.h.has_reply_serial && m.h.reply_serial == serial) {
			if (m.h.type == WIRE_TYPE_ERROR && m.h.sender.s && strcmp(m.h.sender.s, "org.freedesktop.DBus") == 0 &&
			    strcmp(m.h.error_name.s, "org.freedesktop.DBus.Error.NoReply") == 0)
				puts("no answer");
			else
				printf("answered %s\n", wire_type_to_string(m.h.type));
			native_message_clear(p, &m);
			break;
		}
		native_message_clear(p, &m);
	}
	free(msg);
	native_peer_free(p);
	return 0;
}
