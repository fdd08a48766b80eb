/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * busbridge-native - a native kdbus peer on busbridged's kernel bus, from
 * the command line (doc/busbridge-native.1)
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <unistd.h>

#include "compat/protocol.h"
#include "native/native-peer.h"
#include "util/macro.h"

#define SERVICE_INTERFACE "org.busbridge.Native"
#define SERVICE_PATH "/org/busbridge/Native"

#define EMPTY_XML DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE "<node/>\n"
#define SERVICE_XML                                                                            \
	DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE                                              \
	"<node>\n"                                                                             \
	" <interface name=\"" SERVICE_INTERFACE "\">\n"                                        \
	"  <method name=\"Echo\"/>\n"                                                          \
	"  <method name=\"Fail\"/>\n"                                                          \
	"  <method name=\"ReadFd\"><arg type=\"h\" direction=\"in\"/>"                         \
	"<arg type=\"s\" direction=\"out\"/></method>\n"                                      \
	"  <method name=\"SendFd\"><arg type=\"s\" direction=\"in\"/>"                         \
	"<arg type=\"h\" direction=\"out\"/></method>\n"                                      \
	"  <method name=\"Emit\"><arg type=\"s\" direction=\"in\"/></method>\n"               \
	"  <method name=\"Quit\"/>\n"                                                          \
	"  <signal name=\"Pinged\"><arg type=\"s\"/></signal>\n"                               \
	" </interface>\n"                                                                      \
	"</node>\n"

static const char *arg_bus;
static long arg_count = -1;
static long arg_repeat = 1;
static int arg_timeout_msec = 25000;

/* ---- finding the bus ------------------------------------------------------ */

/* the endpoint: --bus, $BUSBRIDGE_KDBUS_BUS, or the one busbridged bus */
static int find_bus(char **ret) {
	const char *e = arg_bus ? arg_bus : getenv("BUSBRIDGE_KDBUS_BUS");
	glob_t g = {};
	int r;

	if (e && *e) {
		*ret = strdup(e);
		return *ret ? 0 : -ENOMEM;
	}
	r = glob("/sys/fs/kdbus/*-busbridge-*/bus", 0, NULL, &g);
	if (r != 0 || g.gl_pathc != 1) {
		fprintf(stderr, "busbridge-native: %s; say which with --bus PATH\n",
			r == 0 ? "more than one busbridged bus on /sys/fs/kdbus" : "no busbridged bus on /sys/fs/kdbus");
		globfree(&g);
		return -ENOENT;
	}
	*ret = strdup(g.gl_pathv[0]);
	globfree(&g);
	return *ret ? 0 : -ENOMEM;
}

static int connect_peer(NativePeer **ret) {
	_cleanup_free_ char *path = NULL;
	int r = find_bus(&path);

	if (r < 0)
		return r;
	r = native_peer_connect(path, "busbridge-native", ret);
	if (r < 0)
		fprintf(stderr, "busbridge-native: cannot connect to %s: %s\n", path, strerror(-r));
	return r;
}

/* ---- printing a message --------------------------------------------------- */

static void print_string(const char *s) {
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char) *s < 0x20)
			printf("\\x%02x", (unsigned char) *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* the first bytes of what @fd reads: a file from its start (it is left
 * where it was), a pipe or socket what comes */
static ssize_t read_fd_start(int fd, char *buf, size_t size) {
	ssize_t n = pread(fd, buf, size, 0);

	if (n < 0 && errno == ESPIPE)
		n = read(fd, buf, size);
	return n;
}

/* an fd shows the first line of what it reads */
static void print_fd(int fd) {
	char buf[257];
	ssize_t n = fd >= 0 ? read_fd_start(fd, buf, sizeof(buf) - 1) : -1;

	if (n < 0) {
		printf("fd:?");
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	printf("fd:");
	print_string(buf);
}

static int print_values(WireReader *r, const NativeMessage *m, const char *sep);

static int print_value(WireReader *r, const NativeMessage *m) {
	char t = wire_reader_peek(r);
	union {
		uint8_t y;
		bool b;
		int16_t n;
		uint16_t q;
		int32_t i;
		uint32_t u;
		int64_t x;
		uint64_t t;
		double d;
		const char *s;
	} v;
	int e;

	switch (t) {
	case 'a':
	case '(':
	case '{':
	case 'v':
		if ((e = wire_reader_enter(r, t)) < 0)
			return e;
		fputs(t == 'a' ? "[" : t == '(' ? "(" : t == '{' ? "{" : "<", stdout);
		if ((e = print_values(r, m, t == '{' ? ": " : ", ")) < 0)
			return e;
		fputs(t == 'a' ? "]" : t == '(' ? ")" : t == '{' ? "}" : ">", stdout);
		return wire_reader_exit(r);
	}
	if ((e = wire_reader_read_basic(r, t, &v)) < 0)
		return e;
	switch (t) {
	case 'y': printf("%u", v.y); break;
	case 'b': fputs(v.b ? "true" : "false", stdout); break;
	case 'n': printf("%d", v.n); break;
	case 'q': printf("%u", v.q); break;
	case 'i': printf("%d", v.i); break;
	case 'u': printf("%u", v.u); break;
	case 'x': printf("%" PRId64, v.x); break;
	case 't': printf("%" PRIu64, v.t); break;
	case 'd': printf("%g", v.d); break;
	case 'h': print_fd(v.u < m->n_fds ? m->fds[v.u] : -1); break;
	default: print_string(v.s); break;
	}
	return 0;
}

static int print_values(WireReader *r, const NativeMessage *m, const char *sep) {
	for (bool first = true; wire_reader_peek(r); first = false) {
		if (!first)
			fputs(sep, stdout);
		int e = print_value(r, m);
		if (e < 0)
			return e;
	}
	return 0;
}

/* "TYPE SENDER [PATH INTERFACE.MEMBER | ERROR-NAME] ARGS" on one line */
static void print_message(const NativeMessage *m) {
	const WireHeader *h = &m->h;
	WireReader r;

	printf("%s %s", wire_type_to_string(h->type), h->sender.s ? h->sender.s : "-");
	if (h->type == WIRE_TYPE_ERROR)
		printf(" %s", h->error_name.s);
	else if (h->type != WIRE_TYPE_METHOD_RETURN)
		printf(" %s %s.%s", h->path.s, h->interface.s ? h->interface.s : "", h->member.s);
	putchar(' ');
	wire_reader_init(&r, h, m->data + h->header_len);
	if (print_values(&r, m, " ") < 0)
		fputs("<malformed>", stdout);
	putchar('\n');
	fflush(stdout);
}

/* ---- building a message --------------------------------------------------- */

/* ARG: TYPE:VALUE, h:FILE an fd of FILE */
static int append_arg(WireBuilder *b, const char *arg, int *fds, size_t *n_fds) {
	char t = arg[0];
	const char *v = arg + 2;
	char *end = NULL;

	if (!t || arg[1] != ':')
		return -EINVAL;
	errno = 0;
	switch (t) {
	case 's':
	case 'o':
	case 'g':
		return wire_builder_append_basic(b, t, v);
	case 'b': {
		bool x = streq(v, "true") || streq(v, "1");
		return wire_builder_append_basic(b, 'b', &x);
	}
	case 'h': {
		if (*n_fds >= 16)
			return -EMFILE;
		int fd = open(v, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		uint32_t idx = (uint32_t) *n_fds;
		fds[(*n_fds)++] = fd;
		return wire_builder_append_basic(b, 'h', &idx);
	}
	case 'd': {
		double d = strtod(v, &end);
		return *end || errno ? -EINVAL : wire_builder_append_basic(b, 'd', &d);
	}
	case 'y': case 'n': case 'q': case 'i': case 'u': case 'x': case 't': {
		long long x = strtoll(v, &end, 0);
		if (*end || errno || !*v)
			return -EINVAL;
		union { uint8_t y; int16_t n; uint16_t q; int32_t i; uint32_t u; int64_t x; uint64_t t; } u;
		switch (t) {
		case 'y': u.y = (uint8_t) x; break;
		case 'n': u.n = (int16_t) x; break;
		case 'q': u.q = (uint16_t) x; break;
		case 'i': u.i = (int32_t) x; break;
		case 'u': u.u = (uint32_t) x; break;
		case 'x': u.x = x; break;
		default: u.t = (uint64_t) x; break;
		}
		return wire_builder_append_basic(b, t, &u);
	}
	default:
		return -EINVAL;
	}
}

static int build_args(WireBuilder *b, char **args, int n, int *fds, size_t *n_fds) {
	for (int i = 0; i < n; i++) {
		int r = append_arg(b, args[i], fds, n_fds);
		if (r < 0) {
			fprintf(stderr, "busbridge-native: bad argument \"%s\": %s\n", args[i], strerror(-r));
			return r;
		}
	}
	return wire_builder_set_unix_fds(b, (uint32_t) *n_fds);
}

static void close_fds(int *fds, size_t n) {
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* ---- commands --------------------------------------------------------------- */

static int cmd_find(void) {
	_cleanup_free_ char *path = NULL;
	int r = find_bus(&path);

	if (r < 0)
		return r;
	puts(path);
	return 0;
}

/* a message of @type to @dest (NULL: none) from PATH INTERFACE MEMBER
 * [ARG...] in @argv; its fds (16 at most) in @fds, which the caller closes
 * once it has gone (on failure they are closed here) */
static int build_message(NativePeer *p, uint8_t type, uint8_t flags, const char *dest, char **argv, int argc,
			 int *fds, size_t *n_fds, uint8_t **ret, size_t *ret_len) {
	WireBuilder b;
	int r;

	wire_builder_init(&b, type, flags, native_peer_next_serial(p));
	if (dest)
		wire_builder_set_destination(&b, dest);
	wire_builder_set_path(&b, argv[0]);
	wire_builder_set_interface(&b, argv[1]);
	wire_builder_set_member(&b, argv[2]);
	r = build_args(&b, argv + 3, argc - 3, fds, n_fds);
	if (r >= 0)
		r = wire_builder_finish(&b, ret, ret_len);
	if (r < 0) {
		wire_builder_done(&b);
		close_fds(fds, *n_fds);
	}
	return r;
}

/* call DEST PATH INTERFACE MEMBER [ARG...]: prints the answer, exit 1 on
 * an error answer */
static int cmd_call(char **argv, int argc) {
	_cleanup_(native_peer_freep) NativePeer *p = NULL;
	uint8_t *msg = NULL;
	size_t len, n_fds = 0;
	int fds[16];
	NativeMessage reply;
	int r;

	if (argc < 4)
		return -EINVAL;
	r = connect_peer(&p);
	if (r < 0)
		return r;
	r = build_message(p, WIRE_TYPE_METHOD_CALL, 0, argv[0], argv + 1, argc - 1, fds, &n_fds, &msg, &len);
	if (r < 0)
		return r;
	/* --repeat: the same call again, each with a serial of its own (the
	 * serial is at offset 8 of the header, in the message's byte order) */
	for (long i = 0;; i++) {
		r = native_peer_call(p, msg, len, fds, n_fds, (uint64_t) arg_timeout_msec * 1000, &reply);
		if (r < 0 || i + 1 >= arg_repeat)
			break;
		native_message_clear(p, &reply);
		uint32_t serial = native_peer_next_serial(p);
		if (msg[0] == 'B')
			serial = htobe32(serial);
		else
			serial = htole32(serial);
		memcpy(msg + 8, &serial, 4);
	}
	free(msg);
	close_fds(fds, n_fds);
	if (r < 0) {
		fprintf(stderr, "busbridge-native: call failed: %s\n", strerror(-r));
		return r;
	}
	print_message(&reply);
	bool failed = reply.h.type == WIRE_TYPE_ERROR;
	native_message_clear(p, &reply);
	return failed ? 1 : 0;
}

/* emit PATH INTERFACE MEMBER [ARG...] */
static int cmd_emit(char **argv, int argc) {
	_cleanup_(native_peer_freep) NativePeer *p = NULL;
	uint8_t *msg = NULL;
	size_t len, n_fds = 0;
	int fds[16];
	int r;

	if (argc < 3)
		return -EINVAL;
	r = connect_peer(&p);
	if (r < 0)
		return r;
	r = build_message(p, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, NULL, argv, argc, fds, &n_fds, &msg, &len);
	if (r < 0)
		return r;
	r = native_peer_send(p, msg, len, fds, n_fds, 0);
	free(msg);
	close_fds(fds, n_fds);
	if (r < 0)
		fprintf(stderr, "busbridge-native: emit failed: %s\n", strerror(-r));
	return r;
}

/* the reader's next value appended to the builder (Echo) */
static int copy_value(WireReader *r, WireBuilder *b) {
	char t = wire_reader_peek(r);
	size_t sl;
	const char *sig = wire_reader_signature(r, &sl);
	char inner[256];
	union {
		uint64_t t;
		double d;
		const char *s;
		bool b;
	} v;
	int e;

	if (!sig || sl >= sizeof(inner))
		return -EBADMSG;
	switch (t) {
	case 'a':
	case '(':
	case '{':
		/* the contents: after 'a', inside the brackets */
		if (t == 'a')
			snprintf(inner, sizeof(inner), "%.*s", (int) sl - 1, sig + 1);
		else
			snprintf(inner, sizeof(inner), "%.*s", (int) sl - 2, sig + 1);
		if ((e = wire_reader_enter(r, t)) < 0 || (e = wire_builder_open_container(b, t, inner)) < 0)
			return e;
		while (wire_reader_peek(r))
			if ((e = copy_value(r, b)) < 0)
				return e;
		if ((e = wire_reader_exit(r)) < 0)
			return e;
		return wire_builder_close_container(b);
	case 'v':
		if ((e = wire_reader_enter(r, 'v')) < 0)
			return e;
		sig = wire_reader_signature(r, &sl);
		if (!sig || sl >= sizeof(inner))
			return -EBADMSG;
		snprintf(inner, sizeof(inner), "%.*s", (int) sl, sig);
		if ((e = wire_builder_open_container(b, 'v', inner)) < 0 || (e = copy_value(r, b)) < 0)
			return e;
		if ((e = wire_reader_exit(r)) < 0)
			return e;
		return wire_builder_close_container(b);
	}
	memset(&v, 0, sizeof(v));
	if ((e = wire_reader_read_basic(r, t, &v)) < 0)
		return e;
	return wire_builder_append_basic(b, t, t == 's' || t == 'o' || t == 'g' ? (const void *) v.s : (const void *) &v);
}

static int send_built(NativePeer *p, WireBuilder *b, const int *fds, size_t n_fds) {
	uint8_t *msg;
	size_t len;
	int r = wire_builder_finish(b, &msg, &len);

	if (r < 0) {
		wire_builder_done(b);
		return r;
	}
	r = native_peer_send(p, msg, len, fds, n_fds, 0);
	free(msg);
	return r;
}

static void reply_start(NativePeer *p, WireBuilder *b, const NativeMessage *call, uint8_t type) {
	wire_builder_init(b, type, WIRE_FLAG_NO_REPLY_EXPECTED, native_peer_next_serial(p));
	wire_builder_set_destination(b, call->h.sender.s);
	wire_builder_set_reply_serial(b, call->h.serial);
}

/* one method call of the service; *quit set by Quit */
static int serve_call(NativePeer *p, NativeMessage *m, bool *quit) {
	const WireHeader *h = &m->h;
	const char *member = h->member.s;
	WireBuilder b;
	WireReader rd;
	int fds[16];
	size_t n_fds = 0;
	int r = 0;

	wire_reader_init(&rd, h, m->data + h->header_len);
	if (h->interface.s && streq(h->interface.s, "org.freedesktop.DBus.Introspectable") &&
	    streq(member, "Introspect")) {
		reply_start(p, &b, m, WIRE_TYPE_METHOD_RETURN);
		wire_builder_append(&b, "s", streq(h->path.s, SERVICE_PATH) ? SERVICE_XML : EMPTY_XML);
	} else if (streq(member, "Ping")) {
		/* org.freedesktop.DBus.Peer's, and any interface's (benchmarks) */
		reply_start(p, &b, m, WIRE_TYPE_METHOD_RETURN);
	} else if (h->interface.s && !streq(h->interface.s, SERVICE_INTERFACE)) {
		reply_start(p, &b, m, WIRE_TYPE_ERROR);
		wire_builder_set_error_name(&b, DBUS_ERR("UnknownInterface"));
		wire_builder_append(&b, "s", "No such interface");
	} else if (streq(member, "Echo")) {
		reply_start(p, &b, m, WIRE_TYPE_METHOD_RETURN);
		while (r >= 0 && wire_reader_peek(&rd))
			r = copy_value(&rd, &b);
		/* the fds go back with it */
		for (size_t i = 0; i < m->n_fds && i < 16; i++)
			fds[n_fds++] = m->fds[i];
		wire_builder_set_unix_fds(&b, (uint32_t) n_fds);
	} else if (streq(member, "Fail")) {
		reply_start(p, &b, m, WIRE_TYPE_ERROR);
		wire_builder_set_error_name(&b, SERVICE_INTERFACE ".Error.Failed");
		wire_builder_append(&b, "s", "failed as asked");
	} else if (streq(member, "ReadFd")) {
		uint32_t idx = 0;
		char buf[257] = "";
		ssize_t n = -1;
		if (wire_reader_read_basic(&rd, 'h', &idx) == 0 && idx < m->n_fds)
			n = read_fd_start(m->fds[idx], buf, sizeof(buf) - 1);
		reply_start(p, &b, m, n < 0 ? WIRE_TYPE_ERROR : WIRE_TYPE_METHOD_RETURN);
		if (n < 0) {
			wire_builder_set_error_name(&b, DBUS_ERR("InvalidArgs"));
			wire_builder_append(&b, "s", "no readable fd");
		} else {
			buf[n] = 0;
			wire_builder_append(&b, "s", buf);
		}
	} else if (streq(member, "SendFd")) {
		const char *path = NULL;
		int fd = -1;
		if (wire_reader_read_basic(&rd, 's', &path) == 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		reply_start(p, &b, m, fd < 0 ? WIRE_TYPE_ERROR : WIRE_TYPE_METHOD_RETURN);
		if (fd < 0) {
			wire_builder_set_error_name(&b, DBUS_ERR("FileNotFound"));
			wire_builder_append(&b, "s", "cannot open it");
		} else {
			fds[n_fds++] = fd;
			wire_builder_append(&b, "h", 0);
			wire_builder_set_unix_fds(&b, 1);
		}
	} else if (streq(member, "Emit")) {
		const char *text = "";
		(void) wire_reader_read_basic(&rd, 's', &text);
		WireBuilder sig;
		wire_builder_init(&sig, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, native_peer_next_serial(p));
		wire_builder_set_path(&sig, SERVICE_PATH);
		wire_builder_set_interface(&sig, SERVICE_INTERFACE);
		wire_builder_set_member(&sig, "Pinged");
		wire_builder_append(&sig, "s", text);
		r = send_built(p, &sig, NULL, 0);
		reply_start(p, &b, m, WIRE_TYPE_METHOD_RETURN);
	} else if (streq(member, "Quit")) {
		*quit = true;
		reply_start(p, &b, m, WIRE_TYPE_METHOD_RETURN);
	} else {
		reply_start(p, &b, m, WIRE_TYPE_ERROR);
		wire_builder_set_error_name(&b, DBUS_ERR("UnknownMethod"));
		wire_builder_append(&b, "s", "No such method");
	}
	if (r < 0) {
		wire_builder_done(&b);
		return r;
	}
	if (h->flags & WIRE_FLAG_NO_REPLY_EXPECTED) {
		wire_builder_done(&b);
		r = 0;
	} else {
		r = send_built(p, &b, fds, n_fds);
	}
	if (streq(member, "SendFd"))
		close_fds(fds, n_fds);
	return r;
}

/* serve NAME [RULE...]: own NAME and answer calls; print every signal the
 * rules take and every other message that is not a call */
static int cmd_serve(char **argv, int argc) {
	_cleanup_(native_peer_freep) NativePeer *p = NULL;
	uint32_t reply;
	bool quit = false;
	int r;

	if (argc < 1)
		return -EINVAL;
	r = connect_peer(&p);
	if (r < 0)
		return r;
	for (int i = 1; i < argc; i++) {
		r = native_peer_add_match(p, argv[i]);
		if (r < 0) {
			fprintf(stderr, "busbridge-native: bad match rule \"%s\": %s\n", argv[i], strerror(-r));
			return r;
		}
	}
	r = native_peer_request_name(p, argv[0], DBUS_NAME_FLAG_DO_NOT_QUEUE, &reply);
	if (r < 0 || reply != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
		fprintf(stderr, "busbridge-native: cannot own %s: %s\n", argv[0], r < 0 ? strerror(-r) : "taken");
		return r < 0 ? r : -EEXIST;
	}
	printf("ready %s\n", native_peer_get_unique_name(p));
	fflush(stdout);
	while (!quit && arg_count != 0) {
		NativeMessage m;
		r = native_peer_wait(p, arg_timeout_msec);
		if (r <= 0)
			return r < 0 ? r : -ETIMEDOUT;
		r = native_peer_receive(p, &m);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		if (m.h.type == WIRE_TYPE_METHOD_CALL)
			r = serve_call(p, &m, &quit);
		else
			print_message(&m);
		native_message_clear(p, &m);
		if (r < 0)
			fprintf(stderr, "busbridge-native: cannot answer: %s\n", strerror(-r));
		if (arg_count > 0)
			arg_count--;
	}
	return 0;
}

/* listen RULE...: print what the rules take, --count messages */
static int cmd_listen(char **argv, int argc) {
	_cleanup_(native_peer_freep) NativePeer *p = NULL;
	int r;

	r = connect_peer(&p);
	if (r < 0)
		return r;
	for (int i = 0; i < argc; i++) {
		r = native_peer_add_match(p, argv[i]);
		if (r < 0) {
			fprintf(stderr, "busbridge-native: bad match rule \"%s\": %s\n", argv[i], strerror(-r));
			return r;
		}
	}
	printf("ready %s\n", native_peer_get_unique_name(p));
	fflush(stdout);
	while (arg_count != 0) {
		NativeMessage m;
		r = native_peer_wait(p, arg_timeout_msec);
		if (r <= 0)
			return r < 0 ? r : -ETIMEDOUT;
		r = native_peer_receive(p, &m);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		print_message(&m);
		native_message_clear(p, &m);
		if (arg_count > 0)
			arg_count--;
	}
	return 0;
}

static void usage(FILE *f) {
	fputs("Usage: busbridge-native [OPTION...] COMMAND [ARG...]\n"
	      "A native kdbus peer on busbridged's kernel bus (busbridged --kdbus).\n\n"
	      "  find                        print the bus's endpoint file\n"
	      "  call DEST PATH IFACE MEMBER [ARG...]\n"
	      "                              call a method, print its answer\n"
	      "  emit PATH IFACE MEMBER [ARG...]\n"
	      "                              send a signal\n"
	      "  listen RULE...              print what the match rules take\n"
	      "  serve NAME [RULE...]        own NAME, answer " SERVICE_INTERFACE "'s Echo, Fail,\n"
	      "                              ReadFd, SendFd, Emit and Quit\n\n"
	      "ARG is TYPE:VALUE (TYPE one of s o g b y n q i u x t d), or h:FILE for an fd\n"
	      "of FILE opened for reading.\n\n"
	      "  --bus PATH      the endpoint (default: $BUSBRIDGE_KDBUS_BUS, or the one\n"
	      "                  busbridged bus in /sys/fs/kdbus)\n"
	      "  --count N       listen, serve: stop after N messages\n"
	      "  --repeat N      call: N times, one after the other (the last answer\n"
	      "                  is printed)\n"
	      "  --timeout MSEC  call: the answer; listen, serve: the wait for the next\n"
	      "                  message (default 25000)\n",
	      f);
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{ "bus", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
		switch (c) {
		case 'b':
			arg_bus = optarg;
			break;
		case 'c':
			arg_count = strtol(optarg, NULL, 10);
			break;
		case 'r':
			arg_repeat = strtol(optarg, NULL, 10);
			break;
		case 't':
			arg_timeout_msec = (int) strtol(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[optind];
	char **args = argv + optind + 1;
	int n = argc - optind - 1;
	if (streq(cmd, "find"))
		r = cmd_find();
	else if (streq(cmd, "call"))
		r = cmd_call(args, n);
	else if (streq(cmd, "emit"))
		r = cmd_emit(args, n);
	else if (streq(cmd, "listen"))
		r = cmd_listen(args, n);
	else if (streq(cmd, "serve"))
		r = cmd_serve(args, n);
	else
		r = -EINVAL;
	if (r == -EINVAL) {
		usage(stderr);
		return 2;
	}
	return r == 0 ? 0 : 1;
}
