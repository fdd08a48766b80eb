/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stress-service NAME MODE MIN MAX - the activatable service of
 * tests/activation-stress/run.sh (libdbus, started by the bus through its
 * .service file).
 *
 * It connects to $DBUS_STARTER_ADDRESS, owns NAME and answers
 * com.example.Stress.Echo(uu) with its arguments, and after a random number
 * of calls between MIN and MAX it goes away:
 *
 *   MODE "idle":  exits on idle the race-free way of doc/activation.md:
 *                 ReleaseName, answer every call delivered before the
 *                 ReleaseName reply, exit.
 *   MODE "crash": answers the call, then dies of SIGKILL with whatever else
 *                 was already delivered to it unanswered.
 *
 * With $STRESS_LOG set, it appends "start NAME PID" to that file first.
 * With no call for 30 s it exits.  Exit status 2: it could not own NAME.
 */
#include <dbus/dbus.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IFACE "com.example.Stress"

static DBusConnection *conn;
static unsigned n_answered;

/* answer one message; true if it was an Echo call */
static int handle(DBusMessage *m) {
	dbus_uint32_t client = 0, seq = 0;
	DBusMessage *reply;

	if (dbus_message_is_signal(m, DBUS_INTERFACE_LOCAL, "Disconnected"))
		_exit(0);
	if (!dbus_message_is_method_call(m, IFACE, "Echo"))
		return 0;
	if (!dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &client, DBUS_TYPE_UINT32, &seq, DBUS_TYPE_INVALID))
		reply = dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "Echo takes (uu)");
	else {
		reply = dbus_message_new_method_return(m);
		if (reply && !dbus_message_append_args(reply, DBUS_TYPE_UINT32, &client, DBUS_TYPE_UINT32, &seq,
						       DBUS_TYPE_INVALID)) {
			dbus_message_unref(reply);
			reply = NULL;
		}
	}
	if (!reply)
		_exit(3);
	if (!dbus_message_get_no_reply(m))
		dbus_connection_send(conn, reply, NULL);
	dbus_message_unref(reply);
	n_answered++;
	return 1;
}

int main(int argc, char **argv) {
	const char *name, *mode, *addr = getenv("DBUS_STARTER_ADDRESS");
	unsigned min, max, limit, n_calls = 0;
	DBusError err = DBUS_ERROR_INIT;
	DBusMessage *m;
	time_t last = time(NULL);

	if (argc != 5 || !addr) {
		fprintf(stderr, "usage: stress-service NAME idle|crash MIN MAX (started by the bus)\n");
		return 1;
	}
	name = argv[1];
	mode = argv[2];
	min = (unsigned) strtoul(argv[3], NULL, 10);
	max = (unsigned) strtoul(argv[4], NULL, 10);
	srand((unsigned) getpid() ^ (unsigned) time(NULL));
	limit = min + (max > min ? (unsigned) rand() % (max - min + 1) : 0);

	const char *log = getenv("STRESS_LOG");
	if (log) {
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "start %s %d\n", name, (int) getpid());
			fclose(f);
		}
	}

	conn = dbus_connection_open_private(addr, &err);
	if (!conn || !dbus_bus_register(conn, &err)) {
		fprintf(stderr, "stress-service: %s\n", err.message);
		return 1;
	}
	dbus_connection_set_exit_on_disconnect(conn, FALSE);
	if (dbus_bus_request_name(conn, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err) !=
	    DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
		fprintf(stderr, "stress-service: cannot own %s: %s\n", name, err.message ? err.message : "in use");
		return 2;
	}

	for (;;) {
		/* what came with the RequestName reply is queued already */
		while ((m = dbus_connection_pop_message(conn))) {
			n_calls += handle(m);
			dbus_message_unref(m);
			last = time(NULL);
			if (n_calls < limit)
				continue;
			if (strcmp(mode, "crash") == 0) {
				dbus_connection_flush(conn);
				kill(getpid(), SIGKILL);
			}
			/* 1. release the name: the bus keeps what it did not deliver */
			dbus_bus_release_name(conn, name, NULL);
			/* 2. everything delivered before the reply is queued in
			 *    libdbus by now: answer it */
			while ((m = dbus_connection_pop_message(conn))) {
				handle(m);
				dbus_message_unref(m);
			}
			dbus_connection_flush(conn);
			/* 3. exit */
			dbus_connection_close(conn);
			return 0;
		}
		if (time(NULL) - last > 30)
			return 0;
		if (!dbus_connection_read_write(conn, 1000))
			return 0;
	}
}
