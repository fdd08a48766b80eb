/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * native-stress KDBUS-BUS ADDRESS NATIVE CLASSIC CHURN SECONDS - native
 * kdbus peers and classic clients under load on busbridged's kernel bus
 * (tests/native-stress/run.sh).
 *
 * NATIVE workers speak kdbus on KDBUS-BUS (native/native-peer.h), CLASSIC
 * workers are libdbus clients of ADDRESS; worker i owns
 * org.busbridge.Stress.W<i>.  For SECONDS each worker keeps WINDOW
 * Echo(uu) calls on their way to the other workers (and now and then to
 * org.busbridge.Stress.Shared, a name the workers keep taking and giving
 * back, queued behind each other), answers the calls it gets and emits a
 * Tick(uu) signal every TICK_EVERY answered calls, which every worker
 * matches.  CHURN processes meanwhile connect, native and classic in turn,
 * send a few calls and close without waiting for the answers.
 *
 * Every call must get exactly one answer carrying its own arguments, with
 * no error (a call to Shared may find no owner: ServiceUnknown, counted
 * apart), and no call may be lost; every worker must get every Tick of
 * every other worker, once and in order.  Once every worker has stopped
 * calling, each calls every other once more: the answer comes after the
 * callee's last Tick, so the counts are final.
 *
 * Output: a line per worker and a last line "ok" or "FAILED: <why>";
 * exit status 0 when nothing failed.
 */
#include <dbus/dbus.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat/protocol.h"
#include "native/native-peer.h"

#define IFACE "org.busbridge.Stress"
#define PATH "/org/busbridge/Stress"
#define SHARED IFACE ".Shared"
#define TICK_RULE "type='signal',interface='" IFACE "',member='Tick'"
#define WINDOW 4
#define TICK_EVERY 8
#define MAX_WORKERS 16
#define CALL_TIMEOUT_MSEC 60000
#define FLUSH_MARK 0xffffffffu

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "native-stress[%d]: ", (int) getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* ---- one peer, native or classic ---------------------------------------- */

typedef struct Msg {
	int type;		/* DBUS_MESSAGE_TYPE_* */
	char sender[64];
	char member[64];
	char error[128];
	uint32_t serial, reply_serial;
	bool has_args;
	uint32_t a, b;
} Msg;

typedef struct Peer {
	bool native;
	NativePeer *np;
	DBusConnection *dc;
	char unique[64];
} Peer;

static void peer_open(Peer *p, bool native, const char *bus, const char *address) {
	memset(p, 0, sizeof(*p));
	p->native = native;
	if (native) {
		int r = native_peer_connect(bus, "native-stress", &p->np);
		if (r < 0)
			die("native connect to %s: %s", bus, strerror(-r));
		snprintf(p->unique, sizeof(p->unique), "%s", native_peer_get_unique_name(p->np));
		return;
	}
	DBusError e = DBUS_ERROR_INIT;
	p->dc = dbus_connection_open_private(address, &e);
	if (!p->dc || !dbus_bus_register(p->dc, &e))
		die("classic connect to %s: %s", address, e.message);
	dbus_connection_set_exit_on_disconnect(p->dc, false);
	snprintf(p->unique, sizeof(p->unique), "%s", dbus_bus_get_unique_name(p->dc));
}

static void peer_close(Peer *p) {
	if (p->np)
		p->np = native_peer_free(p->np);
	if (p->dc) {
		dbus_connection_close(p->dc);
		dbus_connection_unref(p->dc);
		p->dc = NULL;
	}
}

static int peer_fd(Peer *p) {
	int fd = -1;
	if (p->native)
		return native_peer_get_fd(p->np);
	dbus_connection_get_unix_fd(p->dc, &fd);
	return fd;
}

/* a native message of the Stress interface's shape: type, member, (uu) */
static int native_send(Peer *p, uint8_t type, uint8_t flags, const char *dest, const char *member,
		       const char *error, const Msg *reply_to, uint32_t a, uint32_t b, uint32_t *ret_serial) {
	WireBuilder wb;
	uint8_t *msg;
	size_t len;
	uint32_t serial = native_peer_next_serial(p->np);
	int r;

	wire_builder_init(&wb, type, flags, serial);
	if (dest)
		wire_builder_set_destination(&wb, dest);
	if (member) {
		wire_builder_set_path(&wb, PATH);
		wire_builder_set_interface(&wb, IFACE);
		wire_builder_set_member(&wb, member);
	}
	if (error)
		wire_builder_set_error_name(&wb, error);
	if (reply_to)
		wire_builder_set_reply_serial(&wb, reply_to->serial);
	wire_builder_append(&wb, "uu", a, b);
	r = wire_builder_finish(&wb, &msg, &len);
	if (r < 0) {
		wire_builder_done(&wb);
		return r;
	}
	r = native_peer_send(p->np, msg, len, NULL, 0, (uint64_t) CALL_TIMEOUT_MSEC * 1000);
	free(msg);
	if (r >= 0 && ret_serial)
		*ret_serial = serial;
	return r;
}

/* Return: 0, or -errno when the message could not be sent at all */
static int peer_call(Peer *p, const char *dest, uint32_t a, uint32_t b, uint32_t *ret_serial) {
	if (p->native)
		return native_send(p, DBUS_MESSAGE_TYPE_METHOD_CALL, 0, dest, "Echo", NULL, NULL, a, b, ret_serial);
	DBusMessage *m = dbus_message_new_method_call(dest, PATH, IFACE, "Echo");
	dbus_uint32_t serial;
	if (!m || !dbus_message_append_args(m, DBUS_TYPE_UINT32, &a, DBUS_TYPE_UINT32, &b, DBUS_TYPE_INVALID))
		die("out of memory");
	bool sent = dbus_connection_send(p->dc, m, &serial);
	dbus_message_unref(m);
	*ret_serial = serial;
	return sent ? 0 : -ENOMEM;
}

static int peer_reply(Peer *p, const Msg *call) {
	if (p->native) {
		int r = native_send(p, DBUS_MESSAGE_TYPE_METHOD_RETURN, DBUS_HEADER_FLAG_NO_REPLY_EXPECTED,
				    call->sender, NULL, NULL, call, call->a, call->b, NULL);
		/* the caller is gone or going (a churn process): nobody to answer */
		return r == -ESRCH || r == -ENXIO || r == -ECONNRESET ? 0 : r;
	}
	DBusMessage *m = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN);
	if (!m || !dbus_message_set_destination(m, call->sender) || !dbus_message_set_reply_serial(m, call->serial) ||
	    !dbus_message_append_args(m, DBUS_TYPE_UINT32, &call->a, DBUS_TYPE_UINT32, &call->b, DBUS_TYPE_INVALID))
		die("out of memory");
	dbus_message_set_no_reply(m, true);
	bool sent = dbus_connection_send(p->dc, m, NULL);
	dbus_message_unref(m);
	return sent ? 0 : -ENOMEM;
}

static int peer_emit(Peer *p, uint32_t a, uint32_t b) {
	if (p->native)
		return native_send(p, DBUS_MESSAGE_TYPE_SIGNAL, DBUS_HEADER_FLAG_NO_REPLY_EXPECTED, NULL, "Tick", NULL,
				   NULL, a, b, NULL);
	DBusMessage *m = dbus_message_new_signal(PATH, IFACE, "Tick");
	if (!m || !dbus_message_append_args(m, DBUS_TYPE_UINT32, &a, DBUS_TYPE_UINT32, &b, DBUS_TYPE_INVALID))
		die("out of memory");
	bool sent = dbus_connection_send(p->dc, m, NULL);
	dbus_message_unref(m);
	return sent ? 0 : -ENOMEM;
}

static void copy_str(char *dst, size_t size, const char *s) {
	snprintf(dst, size, "%s", s ? s : "");
}

static bool native_next(Peer *p, Msg *out) {
	NativeMessage m;
	if (native_peer_receive(p->np, &m) < 0)
		return false;
	const WireHeader *h = &m.h;
	memset(out, 0, sizeof(*out));
	out->type = h->type;
	out->serial = h->serial;
	out->reply_serial = h->has_reply_serial ? h->reply_serial : 0;
	copy_str(out->sender, sizeof(out->sender), h->sender.s);
	copy_str(out->member, sizeof(out->member), h->member.s);
	copy_str(out->error, sizeof(out->error), h->error_name.s);
	if (h->signature.s && strcmp(h->signature.s, "uu") == 0) {
		WireReader r;
		wire_reader_init(&r, h, m.data + h->header_len);
		out->has_args = wire_reader_read_basic(&r, 'u', &out->a) >= 0 &&
				wire_reader_read_basic(&r, 'u', &out->b) >= 0;
	}
	if (h->interface.s && strcmp(h->interface.s, IFACE) != 0 && h->type != DBUS_MESSAGE_TYPE_ERROR)
		out->member[0] = 0;	/* not ours: NameAcquired and the like */
	native_message_clear(p->np, &m);
	return true;
}

static bool classic_next(Peer *p, Msg *out) {
	DBusMessage *m = dbus_connection_pop_message(p->dc);
	if (!m)
		return false;
	memset(out, 0, sizeof(*out));
	out->type = dbus_message_get_type(m);
	out->serial = dbus_message_get_serial(m);
	out->reply_serial = dbus_message_get_reply_serial(m);
	copy_str(out->sender, sizeof(out->sender), dbus_message_get_sender(m));
	if (!dbus_message_get_interface(m) || strcmp(dbus_message_get_interface(m), IFACE) == 0)
		copy_str(out->member, sizeof(out->member), dbus_message_get_member(m));
	copy_str(out->error, sizeof(out->error), dbus_message_get_error_name(m));
	dbus_uint32_t a, b;
	if (strcmp(dbus_message_get_signature(m), "uu") == 0 &&
	    dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &a, DBUS_TYPE_UINT32, &b, DBUS_TYPE_INVALID)) {
		out->has_args = true;
		out->a = a;
		out->b = b;
	}
	if (out->type == DBUS_MESSAGE_TYPE_SIGNAL && dbus_message_is_signal(m, DBUS_INTERFACE_LOCAL, "Disconnected"))
		die("disconnected from the bus");
	dbus_message_unref(m);
	return true;
}

/* the next message, waiting up to @timeout_msec for one; @ctl (or -1) is
 * polled too: Return 1 with *out, 0 on timeout, -1 when @ctl is readable */
static int peer_next(Peer *p, Msg *out, int ctl, int timeout_msec) {
	if (p->native ? native_next(p, out) : classic_next(p, out))
		return 1;
	if (!p->native)
		dbus_connection_flush(p->dc);
	struct pollfd fds[2] = { { .fd = peer_fd(p), .events = POLLIN }, { .fd = ctl, .events = POLLIN } };
	if (poll(fds, ctl >= 0 ? 2 : 1, timeout_msec) < 0 && errno != EINTR)
		die("poll: %m");
	if (!p->native)
		dbus_connection_read_write(p->dc, 0);
	if (p->native ? native_next(p, out) : classic_next(p, out))
		return 1;
	return ctl >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) ? -1 : 0;
}

/* Return: the DBUS_REQUEST_NAME_REPLY_* or DBUS_RELEASE_NAME_REPLY_* */
static int peer_own(Peer *p, const char *name, bool take) {
	uint32_t reply = 0;
	int r;
	if (p->native) {
		r = take ? native_peer_request_name(p->np, name, 0, &reply) : native_peer_release_name(p->np, name, &reply);
		if (r < 0)
			die("%s %s: %s", take ? "RequestName" : "ReleaseName", name, strerror(-r));
		return (int) reply;
	}
	DBusError e = DBUS_ERROR_INIT;
	r = take ? dbus_bus_request_name(p->dc, name, 0, &e) : dbus_bus_release_name(p->dc, name, &e);
	if (r < 0)
		die("%s %s: %s", take ? "RequestName" : "ReleaseName", name, e.message);
	return r;
}

static void peer_add_match(Peer *p, const char *rule) {
	if (p->native) {
		int r = native_peer_add_match(p->np, rule);
		if (r < 0)
			die("AddMatch: %s", strerror(-r));
		return;
	}
	DBusError e = DBUS_ERROR_INIT;
	dbus_bus_add_match(p->dc, rule, &e);
	if (dbus_error_is_set(&e))
		die("AddMatch: %s", e.message);
}

/* ---- a worker ------------------------------------------------------------- */

enum { CALLS, REPLIES, ERRORS, SHARED_UNKNOWN, SHARED_OWNED, LOST, DUPLICATE, BAD, SERVED, TICKS_SENT,
       TICKS_GOT, TICK_DISORDER, N_COUNTERS };
static const char *const counter_names[N_COUNTERS] = {
	"calls", "replies", "errors", "shared_unknown", "shared_owned", "lost", "duplicate", "bad", "served",
	"ticks_sent", "ticks_got", "tick_disorder",
};

typedef struct Call {
	uint32_t serial, a, b;
	bool shared;
} Call;

typedef struct Worker {
	unsigned index, n_workers;
	Peer peer;
	Call pending[WINDOW + MAX_WORKERS];
	unsigned n_pending;
	uint32_t next_b;
	unsigned long c[N_COUNTERS];
	bool ticking;			/* in the load phase: serving emits Ticks */
	uint32_t tick_seq;		/* Ticks emitted so far */
	uint32_t ticks_from[MAX_WORKERS];	/* highest Tick seq seen from each, + 1 */
	char first_error[160];
} Worker;

static void note_error(Worker *w, const char *what) {
	w->c[ERRORS]++;
	if (!w->first_error[0])
		copy_str(w->first_error, sizeof(w->first_error), what);
}

static void worker_call(Worker *w, const char *dest, uint32_t a, bool shared) {
	uint32_t serial, b = w->next_b++;
	int r = peer_call(&w->peer, dest, a, b, &serial);

	w->c[CALLS]++;
	if (r == -ESRCH || r == -ENXIO) {
		if (shared)
			w->c[SHARED_UNKNOWN]++;
		else
			note_error(w, "a worker's name has no owner");
		return;
	}
	if (r < 0)
		die("send: %s", strerror(-r));
	w->pending[w->n_pending++] = (Call) { serial, a, b, shared };
}

static void worker_take(Worker *w, const Msg *m) {
	switch (m->type) {
	case DBUS_MESSAGE_TYPE_METHOD_CALL:
		if (strcmp(m->member, "Echo") == 0 && m->has_args) {
			int r;
			/* a Tick goes before the answer that follows it */
			if (++w->c[SERVED] % TICK_EVERY == 0 && w->ticking) {
				if ((r = peer_emit(&w->peer, w->index, w->tick_seq++)) < 0)
					die("emit: %s", strerror(-r));
				w->c[TICKS_SENT]++;
			}
			if ((r = peer_reply(&w->peer, m)) < 0)
				die("reply: %s", strerror(-r));
		}
		return;
	case DBUS_MESSAGE_TYPE_SIGNAL:
		if (strcmp(m->member, "Tick") == 0 && m->has_args && m->a < w->n_workers) {
			w->c[TICKS_GOT]++;
			if (m->b != w->ticks_from[m->a])
				w->c[TICK_DISORDER]++;
			w->ticks_from[m->a] = m->b + 1;
		}
		return;
	case DBUS_MESSAGE_TYPE_METHOD_RETURN:
	case DBUS_MESSAGE_TYPE_ERROR:
		break;
	default:
		return;
	}
	unsigned i;
	for (i = 0; i < w->n_pending && w->pending[i].serial != m->reply_serial; i++)
		;
	if (i == w->n_pending) {
		/* a reply to the bus's own calls (RequestName, AddMatch), or a second one */
		if (m->sender[0] != ':' || strcmp(m->sender, DBUS_SERVICE_DBUS) == 0)
			return;
		w->c[DUPLICATE]++;
		return;
	}
	Call call = w->pending[i];
	w->pending[i] = w->pending[--w->n_pending];
	if (m->type == DBUS_MESSAGE_TYPE_ERROR) {
		if (call.shared && (strcmp(m->error, DBUS_ERROR_SERVICE_UNKNOWN) == 0 ||
				    strcmp(m->error, DBUS_ERROR_NAME_HAS_NO_OWNER) == 0))
			w->c[SHARED_UNKNOWN]++;
		else
			note_error(w, m->error);
		return;
	}
	w->c[REPLIES]++;
	if (!m->has_args || m->a != call.a || m->b != call.b)
		w->c[BAD]++;
}

static void worker_name(unsigned i, char *buf, size_t size) {
	snprintf(buf, size, IFACE ".W%u", i);
}

/* serve and take answers until nothing is pending or @deadline */
static void worker_drain(Worker *w, double deadline) {
	Msg m;
	while (w->n_pending > 0 && now() < deadline)
		if (peer_next(&w->peer, &m, -1, 100) > 0)
			worker_take(w, &m);
}

/* wait for the byte @want from the parent, serving meanwhile */
static void worker_wait_for(Worker *w, int ctl, char want) {
	Msg m;
	for (;;) {
		int r = peer_next(&w->peer, &m, ctl, 1000);
		if (r > 0)
			worker_take(w, &m);
		else if (r < 0) {
			char c;
			if (read(ctl, &c, 1) != 1)
				exit(0);	/* the parent is gone */
			if (c == want)
				return;
		}
	}
}

static void worker_run(Worker *w, bool native, const char *bus, const char *address, double seconds, int ctl,
		       int report) {
	char name[128];
	Msg m;

	peer_open(&w->peer, native, bus, address);
	worker_name(w->index, name, sizeof(name));
	if (peer_own(&w->peer, name, true) != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
		die("%s is taken", name);
	peer_add_match(&w->peer, TICK_RULE);
	dprintf(report, "ready\n");
	worker_wait_for(w, ctl, 'g');

	/* the load */
	srand(w->index * 7919 + 1);
	double end = now() + seconds, next_toggle = now() + 0.2;
	bool in_queue = false;
	w->ticking = true;
	while (now() < end) {
		while (w->n_pending < WINDOW) {
			unsigned to = (unsigned) rand() % w->n_workers;
			if (to == w->index || rand() % 16 == 0)
				worker_call(w, SHARED, w->index, true);
			else {
				worker_name(to, name, sizeof(name));
				worker_call(w, name, w->index, false);
			}
		}
		if (now() >= next_toggle) {
			int r = peer_own(&w->peer, SHARED, !in_queue);
			if (!in_queue && r == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
				w->c[SHARED_OWNED]++;
			in_queue = !in_queue;
			next_toggle = now() + 0.1 + (rand() % 300) / 1000.0;
		}
		if (peer_next(&w->peer, &m, -1, 50) > 0)
			worker_take(w, &m);
	}
	w->ticking = false;	/* no Tick after "stopped": the counts can be final */
	if (in_queue)
		peer_own(&w->peer, SHARED, false);
	worker_drain(w, now() + CALL_TIMEOUT_MSEC / 1000.0 + 10);
	w->c[LOST] += w->n_pending;
	w->n_pending = 0;
	dprintf(report, "stopped\n");

	/* everyone has stopped: a last call to each worker comes back after its last Tick */
	worker_wait_for(w, ctl, 'f');
	for (unsigned i = 0; i < w->n_workers; i++)
		if (i != w->index) {
			worker_name(i, name, sizeof(name));
			worker_call(w, name, FLUSH_MARK, false);
		}
	worker_drain(w, now() + CALL_TIMEOUT_MSEC / 1000.0 + 10);
	w->c[LOST] += w->n_pending;

	char line[2048];
	int n = snprintf(line, sizeof(line), "worker %u %s %s:", w->index, native ? "native" : "classic", w->peer.unique);
	for (unsigned i = 0; i < N_COUNTERS; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%lu", counter_names[i], w->c[i]);
	n += snprintf(line + n, sizeof(line) - n, " ticks_from=");
	for (unsigned i = 0; i < w->n_workers; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%u", i ? "," : "", w->ticks_from[i]);
	if (w->first_error[0])
		n += snprintf(line + n, sizeof(line) - n, " first_error=%s", w->first_error);
	dprintf(report, "%s\n", line);
	worker_wait_for(w, ctl, 'q');
	peer_close(&w->peer);
	exit(0);
}

/* connect, send a few calls, close without waiting for their answers */
static void churn_run(unsigned index, unsigned n_workers, const char *bus, const char *address, double seconds) {
	unsigned long connects = 0;
	double end = now() + seconds;
	srand(index * 104729 + 3);
	while (now() < end) {
		Peer p;
		char name[128];
		uint32_t serial;
		peer_open(&p, connects % 2 == 0, bus, address);
		for (unsigned i = 0; i < 3; i++) {
			worker_name((unsigned) rand() % n_workers, name, sizeof(name));
			peer_call(&p, name, 0, i, &serial);
		}
		if (!p.native)
			dbus_connection_flush(p.dc);
		peer_close(&p);
		connects++;
		usleep(20000);
	}
	printf("churn %u: %lu connections\n", index, connects);
	exit(0);
}

/* ---- the parent ------------------------------------------------------------ */

static unsigned long field(const char *line, const char *key) {
	char k[64];
	snprintf(k, sizeof(k), " %s=", key);
	const char *s = strstr(line, k);
	return s ? strtoul(s + strlen(k), NULL, 10) : 0;
}

/* a line from @fd (blocking) */
static bool read_line(int fd, char *buf, size_t size) {
	size_t n = 0;
	while (n + 1 < size) {
		ssize_t k = read(fd, buf + n, 1);
		if (k <= 0)
			return false;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return true;
}

int main(int argc, char **argv) {
	if (argc != 7) {
		fprintf(stderr, "usage: %s KDBUS-BUS ADDRESS NATIVE CLASSIC CHURN SECONDS\n", argv[0]);
		return 2;
	}
	const char *bus = argv[1], *address = argv[2];
	unsigned n_native = (unsigned) atoi(argv[3]), n_classic = (unsigned) atoi(argv[4]);
	unsigned n_churn = (unsigned) atoi(argv[5]), n = n_native + n_classic;
	double seconds = atof(argv[6]);
	if (n < 2 || n > MAX_WORKERS)
		die("2 to %d workers", MAX_WORKERS);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	int ctl[MAX_WORKERS], report[MAX_WORKERS];
	pid_t pids[MAX_WORKERS];
	for (unsigned i = 0; i < n; i++) {
		int c[2], r[2];
		if (pipe(c) < 0 || pipe(r) < 0)
			die("pipe: %m");
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %m");
		if (pids[i] == 0) {
			close(c[1]);
			close(r[0]);
			for (unsigned j = 0; j < i; j++) {
				close(ctl[j]);
				close(report[j]);
			}
			static Worker w;
			w.index = i;
			w.n_workers = n;
			worker_run(&w, i < n_native, bus, address, seconds, c[0], r[1]);
		}
		close(c[0]);
		close(r[1]);
		ctl[i] = c[1];
		report[i] = r[0];
	}

	char line[2048];
	bool failed = false;
	char why[512] = "";
#define FAIL(...) do { if (!failed) snprintf(why, sizeof(why), __VA_ARGS__); failed = true; } while (0)
	for (unsigned i = 0; i < n; i++)
		if (!read_line(report[i], line, sizeof(line)) || strcmp(line, "ready") != 0)
			FAIL("worker %u did not start", i);
	if (!failed) {
		double t0 = now();
		for (unsigned i = 0; i < n; i++)
			(void) !write(ctl[i], "g", 1);
		for (unsigned i = 0; i < n_churn; i++)
			if (fork() == 0) {
				for (unsigned j = 0; j < n; j++) {
					close(ctl[j]);
					close(report[j]);
				}
				churn_run(i, n, bus, address, seconds);
			}
		for (unsigned i = 0; i < n; i++)
			if (!read_line(report[i], line, sizeof(line)) || strcmp(line, "stopped") != 0)
				FAIL("worker %u did not stop", i);
		for (unsigned i = 0; i < n; i++)
			(void) !write(ctl[i], "f", 1);
		unsigned long sent[MAX_WORKERS] = { 0 }, calls = 0, served = 0, ticks = 0;
		char lines[MAX_WORKERS][2048];
		for (unsigned i = 0; i < n; i++) {
			if (!read_line(report[i], lines[i], sizeof(lines[i]))) {
				FAIL("worker %u gave no figures", i);
				lines[i][0] = 0;
				continue;
			}
			printf("%s\n", lines[i]);
			sent[i] = field(lines[i], "ticks_sent");
		}
		for (unsigned i = 0; i < n && lines[i][0]; i++) {
			calls += field(lines[i], "calls");
			served += field(lines[i], "served");
			ticks += field(lines[i], "ticks_got");
			static const char *const must_be_zero[] = { "errors", "lost", "duplicate", "bad", "tick_disorder" };
			for (unsigned k = 0; k < sizeof(must_be_zero) / sizeof(*must_be_zero); k++)
				if (field(lines[i], must_be_zero[k]))
					FAIL("worker %u: %s=%lu", i, must_be_zero[k], field(lines[i], must_be_zero[k]));
			if (field(lines[i], "replies") + field(lines[i], "shared_unknown") != field(lines[i], "calls"))
				FAIL("worker %u: calls and answers do not add up", i);
			const char *s = strstr(lines[i], " ticks_from=");
			for (unsigned j = 0; s && j < n; j++) {
				unsigned long got = strtoul(s + (j ? 1 : 12), (char **) &s, 10);
				if (j != i && got != sent[j])
					FAIL("worker %u got %lu of worker %u's %lu Ticks", i, got, j, sent[j]);
			}
		}
		printf("%u workers (%u native, %u classic), %u churning, %.1f s: %lu calls, %lu served, %lu Ticks delivered\n",
		       n, n_native, n_classic, n_churn, now() - t0, calls, served, ticks);
		if (calls < n)
			FAIL("fewer calls than workers");
	}
	for (unsigned i = 0; i < n; i++)
		close(ctl[i]);	/* 'q' or EOF: the workers exit */
	int status;
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL("a process exited with status %d", status);
	if (failed)
		printf("FAILED: %s\n", why);
	else
		printf("ok\n");
	return failed ? 1 : 0;
}
