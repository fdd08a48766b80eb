/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stress-client ADDRESS NAME CLIENTS CALLS WINDOW SECONDS - the callers of
 * tests/activation-stress/run.sh.
 *
 * CLIENTS processes connect to ADDRESS; each sends CALLS auto-starting
 * com.example.Stress.Echo(uu) calls to NAME, pipelined: WINDOW calls are on
 * their way at any time, a new one is sent as soon as one is answered.  It
 * stops when every call has its reply or SECONDS have passed since the
 * start; calls not sent or not answered by then count as lost.  Every reply is checked: a method return must carry the
 * call's own arguments, and a call must get exactly one reply.
 *
 * Output, one line (the sums over the clients):
 *   calls=N replies=N errors=N noreply=N other=N lost=N duplicate=N bad=N disorder=N ms=N
 * errors = noreply + other; lost: no reply by the deadline; disorder: a
 * reply that arrived before the reply of an earlier call of the same
 * client.  The first few "other" error names are printed to stderr.
 * Exit status 0 when every call was answered, exactly once.
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IFACE "com.example.Stress"

enum { CALLS, REPLIES, ERRORS, NOREPLY, OTHER, LOST, DUPLICATE, BAD, DISORDER, N_COUNTERS };
static const char *const counter_names[N_COUNTERS] = {
	"calls", "replies", "errors", "noreply", "other", "lost", "duplicate", "bad", "disorder",
};

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct Client {
	unsigned id, n_calls;
	unsigned n_sent;
	dbus_uint32_t *serials;	/* serial of call i */
	unsigned char *answered;
	unsigned last_seq;	/* highest call index answered so far, +1 */
	unsigned n_open;
	unsigned long c[N_COUNTERS];
	unsigned n_other_printed;
} Client;

static int seq_of(Client *cl, dbus_uint32_t serial) {
	/* the serials of the calls sent so far are increasing: binary search */
	unsigned lo = 0, hi = cl->n_sent;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (cl->serials[mid] == serial)
			return (int) mid;
		if (cl->serials[mid] < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void take(Client *cl, DBusMessage *m) {
	int type = dbus_message_get_type(m);
	int seq;

	if (type != DBUS_MESSAGE_TYPE_METHOD_RETURN && type != DBUS_MESSAGE_TYPE_ERROR)
		return;
	seq = seq_of(cl, dbus_message_get_reply_serial(m));
	if (seq < 0)
		return;	/* a reply to Hello or another bus call */
	if (cl->answered[seq]) {
		cl->c[DUPLICATE]++;
		return;
	}
	cl->answered[seq] = 1;
	cl->n_open--;
	if ((unsigned) seq + 1 < cl->last_seq)
		cl->c[DISORDER]++;
	else
		cl->last_seq = (unsigned) seq + 1;
	if (type == DBUS_MESSAGE_TYPE_ERROR) {
		const char *name = dbus_message_get_error_name(m);
		cl->c[ERRORS]++;
		if (name && strcmp(name, DBUS_ERROR_NO_REPLY) == 0)
			cl->c[NOREPLY]++;
		else {
			const char *text = NULL;
			cl->c[OTHER]++;
			dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID);
			if (cl->n_other_printed++ < 3)
				fprintf(stderr, "# client %u call %d: %s: %s\n", cl->id, seq, name ? name : "?",
					text ? text : "");
		}
		return;
	}
	dbus_uint32_t a = 0, b = 0;
	if (!dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &a, DBUS_TYPE_UINT32, &b, DBUS_TYPE_INVALID) ||
	    a != cl->id || b != (dbus_uint32_t) seq)
		cl->c[BAD]++;
	else
		cl->c[REPLIES]++;
}

static int run_client(Client *cl, const char *addr, const char *name, unsigned window, double deadline, int out) {
	DBusError err = DBUS_ERROR_INIT;
	DBusConnection *conn = dbus_connection_open_private(addr, &err);
	DBusMessage *m;

	if (!conn || !dbus_bus_register(conn, &err)) {
		fprintf(stderr, "stress-client: %s\n", err.message);
		return 1;
	}
	dbus_connection_set_exit_on_disconnect(conn, FALSE);
	cl->serials = calloc(cl->n_calls, sizeof(*cl->serials));
	cl->answered = calloc(cl->n_calls, 1);
	if (!cl->serials || !cl->answered)
		return 1;

	unsigned sent = 0;
	while ((sent < cl->n_calls || cl->n_open > 0) && now() < deadline) {
		cl->n_sent = sent;
		/* keep @window calls on their way, without waiting for any */
		while (sent < cl->n_calls && cl->n_open < window) {
			dbus_uint32_t id = cl->id, seq = sent;
			m = dbus_message_new_method_call(name, "/com/example/Stress", IFACE, "Echo");
			if (!m ||
			    !dbus_message_append_args(m, DBUS_TYPE_UINT32, &id, DBUS_TYPE_UINT32, &seq, DBUS_TYPE_INVALID) ||
			    !dbus_connection_send(conn, m, &cl->serials[sent]))
				return 1;
			dbus_message_unref(m);
			cl->c[CALLS]++;
			cl->n_open++;
			cl->n_sent = ++sent;
		}
		if (!dbus_connection_read_write(conn, 100))
			break;
		while ((m = dbus_connection_pop_message(conn))) {
			take(cl, m);
			dbus_message_unref(m);
		}
	}
	cl->c[LOST] = cl->n_calls - (sent - cl->n_open);
	if (write(out, cl->c, sizeof(cl->c)) != sizeof(cl->c))
		return 1;
	return 0;
}

int main(int argc, char **argv) {
	unsigned long sum[N_COUNTERS] = {};
	double start = now();
	int fds[2], failed = 0;

	if (argc != 7) {
		fprintf(stderr, "usage: stress-client ADDRESS NAME CLIENTS CALLS WINDOW SECONDS\n");
		return 2;
	}
	const char *addr = argv[1], *name = argv[2];
	unsigned n_clients = (unsigned) strtoul(argv[3], NULL, 10);
	unsigned n_calls = (unsigned) strtoul(argv[4], NULL, 10);
	unsigned window = (unsigned) strtoul(argv[5], NULL, 10);
	double deadline = start + strtod(argv[6], NULL);
	if (!window)
		window = 1;
	if (pipe(fds) < 0)
		return 2;

	for (unsigned k = 0; k < n_clients; k++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			Client cl = { .id = k, .n_calls = n_calls };
			close(fds[0]);
			_exit(run_client(&cl, addr, name, window, deadline, fds[1]));
		}
	}
	close(fds[1]);
	for (unsigned k = 0; k < n_clients; k++) {
		unsigned long c[N_COUNTERS];
		if (read(fds[0], c, sizeof(c)) != sizeof(c)) {
			failed = 1;
			sum[LOST] += n_calls;	/* a client that failed: all its calls count as lost */
			sum[CALLS] += n_calls;
			continue;
		}
		for (int i = 0; i < N_COUNTERS; i++)
			sum[i] += c[i];
	}
	while (wait(NULL) > 0)
		;
	for (int i = 0; i < N_COUNTERS; i++)
		printf("%s=%lu ", counter_names[i], sum[i]);
	printf("ms=%.0f\n", (now() - start) * 1000);
	return failed || sum[LOST] || sum[DUPLICATE] || sum[BAD] ? 1 : 0;
}
