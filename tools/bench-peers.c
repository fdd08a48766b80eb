/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-peers - idle bus peers for tools/bench-scale.sh
 *
 *   bench-peers ADDRESS N [RULE]
 *
 * Opens N connections to ADDRESS (sd-bus: SASL EXTERNAL, Hello), and with
 * RULE an AddMatch on each, where "%d" in RULE becomes the connection's
 * index.  Then prints "ready N" on stdout and waits for SIGTERM without
 * reading anything: the peers are idle.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: %s ADDRESS N [RULE]\n", argv[0]);
		return 2;
	}
	const char *address = argv[1], *rule = argc > 3 ? argv[3] : NULL;
	long n = strtol(argv[2], NULL, 10);
	sd_bus **buses = calloc(n > 0 ? n : 1, sizeof(*buses));
	struct rlimit rl = { .rlim_cur = n + 256, .rlim_max = n + 256 };
	int r;

	if (!buses)
		return 1;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < (rlim_t) n + 64)
			fprintf(stderr, "bench-peers: RLIMIT_NOFILE %lu < %ld\n", (unsigned long) rl.rlim_cur, n);
	}
	for (long i = 0; i < n; i++) {
		sd_bus *b;

		if ((r = sd_bus_new(&b)) < 0 || (r = sd_bus_set_address(b, address)) < 0 ||
		    (r = sd_bus_set_bus_client(b, 1)) < 0 || (r = sd_bus_start(b)) < 0) {
			fprintf(stderr, "bench-peers: connection %ld: %s\n", i, strerror(-r));
			return 1;
		}
		if (rule) {
			char buf[512];
			sd_bus_error err = SD_BUS_ERROR_NULL;

			snprintf(buf, sizeof(buf), rule, (int) i);
			r = sd_bus_call_method(b, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
					       "AddMatch", &err, NULL, "s", buf);
			if (r < 0) {
				fprintf(stderr, "bench-peers: AddMatch %ld: %s\n", i, err.message ? err.message : strerror(-r));
				return 1;
			}
		} else {
			const char *unique;
			/* wait for the Hello reply */
			if ((r = sd_bus_get_unique_name(b, &unique)) < 0) {
				fprintf(stderr, "bench-peers: Hello %ld: %s\n", i, strerror(-r));
				return 1;
			}
		}
		buses[i] = b;
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	sigset_t ss;
	int sig;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	sigwait(&ss, &sig);
	/* exit without closing: the kernel closes the sockets */
	_exit(0);
}
