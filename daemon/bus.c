/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus.c - the bus as the daemon runs it: one libevent loop, one kdbus bus,
 * the driver, the listeners, the clients.
 *
 * Dispatch order: client input is handled as it is read (each message is
 * SENT to the core right away); the core's wakeups only put clients on the
 * ready list, and one event drains that list after the readable sockets of
 * this loop iteration were served, so output to each client is written in
 * batches.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "daemon/address.h"
#include "daemon/bus.h"
#include "daemon/bus-hooks.h"
#include "daemon/bus-schedule.h"
#include "daemon/call-overflow.h"
#include "daemon/dir-watch.h"
#include "daemon/fd-limit.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/kernel-peers.h"
#include "daemon/listen-socket.h"
#include "daemon/log.h"
#include "daemon/selinux.h"
#include "compat/bloom.h"
#include "compat/kdbus-client.h"
#include "daemon/monitor.h"
#include "daemon/monitor-sink.h"
#include "daemon/service-registry.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"

/* the structs of the clients closed since (client_close()) go */
static void bus_release_closed(Bus *bus) {
	Client *c;

	while ((c = bus_schedule_next_closed(&bus->schedule)))
		client_release(c);
}

static void bus_on_ready(evutil_socket_t fd, short what, void *userdata);

/* the clients that yielded their input (client_yield_input()) go on after
 * the poll: a zero timeout runs after the events the poll returned */
static void bus_on_yield(evutil_socket_t fd, short what, void *userdata) {
	Bus *bus = userdata;
	List now = LIST_INIT(now);

	/* the receivers the poll woke flush first: their wakeups queued
	 * bus_on_ready() behind this timeout, which would come too late */
	bus_on_ready(fd, what, bus);
	bus_schedule_take_yielded(&bus->schedule, &now);
	while (!list_is_empty(&now))
		client_resume_yielded(container_of(now.next, Client, yield_link));
}

static void bus_on_ready(evutil_socket_t fd, short what, void *userdata) {
	Bus *bus = userdata;
	Client *c;

	if (bus_schedule_take_driver(&bus->schedule))
		driver_dispatch(bus->driver);

	/* client_flush() may close clients and wake others: always take the head */
	for (unsigned n = 0; n < 100000 && (c = bus_schedule_next_ready(&bus->schedule)); n++)
		client_flush(c);
	bus_release_closed(bus);
}

static void bus_on_timeout(evutil_socket_t fd, short what, void *userdata) {
	Bus *bus = userdata;
	uint64_t next;

	bus->timeout_deadline = 0;
	next = kdbus_bus_dispatch_timeouts(bus->kbus, bus_now_ns() + 1000000);
	if (next) {
		uint64_t now = bus_now_ns();
		uint64_t d = next > now ? next - now : 0;
		struct timeval tv = { .tv_sec = d / 1000000000ULL, .tv_usec = (d % 1000000000ULL) / 1000 };
		bus->timeout_deadline = next;
		evtimer_add(bus->ev_timeout, &tv);
	}
}

static void bus_set_timer(KdbusBus *kbus, uint64_t deadline, void *userdata) {
	Bus *bus = userdata;

	if (deadline == 0 || deadline == UINT64_MAX)
		return;
	if (bus->timeout_deadline && bus->timeout_deadline <= deadline)
		return;
	uint64_t now = bus_now_ns();
	uint64_t d = deadline > now ? deadline - now : 0;
	struct timeval tv = { .tv_sec = d / 1000000000ULL, .tv_usec = (d % 1000000000ULL) / 1000 + 1000 };
	bus->timeout_deadline = deadline;
	evtimer_add(bus->ev_timeout, &tv);
}

/*
 * After a flood of connections or of queued messages is gone, malloc keeps
 * the freed pages in its heap: the bus would stay at its peak size.  A
 * second after clients went away (coalesced: at most once a second while
 * they keep going), the free memory goes back to the system.
 */
static void bus_on_trim(evutil_socket_t fd, short what, void *userdata) {
	Bus *bus = userdata;
	struct timeval tv = { .tv_sec = 1 };

	bus_release_closed(bus);
	kdbus_bus_trim(bus->kbus);
	(void) malloc_trim(0);
	/* what went away since refilled the caches: once more, later */
	if (bus->trim_again) {
		bus->trim_again = false;
		evtimer_add(bus->ev_trim, &tv);
	}
}

static void bus_trim_soon(Bus *bus) {
	struct timeval tv = { .tv_sec = 1 };

	if (!bus->ev_trim)
		return;
	if (evtimer_pending(bus->ev_trim, NULL))
		bus->trim_again = true;
	else
		evtimer_add(bus->ev_trim, &tv);
}

/* ---- listeners ------------------------------------------------------------ */

static void bus_pause_listeners(Bus *bus) {
	for (size_t i = 0; i < bus->n_listeners; i++)
		if (!bus->listeners[i]->paused) {
			event_del(bus->listeners[i]->ev);
			bus->listeners[i]->paused = true;
		}
}

static void bus_resume_listeners(Bus *bus) {
	for (size_t i = 0; i < bus->n_listeners; i++)
		if (bus->listeners[i]->paused) {
			event_add(bus->listeners[i]->ev, NULL);
			bus->listeners[i]->paused = false;
		}
}

static void bus_expire_oldest_incomplete(Bus *bus) {
	Client *c;

	list_for_each_entry(c, &bus->registry.all, link) {
		if (c->state == CLIENT_NONCE || c->state == CLIENT_AUTH || c->state == CLIENT_AWAIT_HELLO) {
			log_debug("Connection has not authenticated soon enough, closing it "
				  "(max_incomplete_connections=%" PRIu64 ")",
				  bus->limits.max_incomplete_connections);
			client_close(c, "too many incomplete connections");
			return;
		}
	}
}

/* ---- file descriptors ------------------------------------------------------ */

/* _dbus_rlimit_save_fd_limit() and _dbus_rlimit_raise_fd_limit(), then
 * the reserve moves with the limit */
static void bus_fd_reserve_compute(Bus *bus);

void bus_raise_fd_limit(Bus *bus) {
	fd_limit_raise();
	bus_fd_reserve_compute(bus);
}

/* the reserve: the last sixteenth of the table, 16 to 1024 fds */
static void bus_fd_reserve_init(Bus *bus) {
	bus->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	bus_fd_reserve_compute(bus);
}

/* where the reserve starts, for the RLIMIT_NOFILE of now */
static void bus_fd_reserve_compute(Bus *bus) {
	struct rlimit lim;
	rlim_t n, reserve;

	bus->fd_reserve_start = INT_MAX;
	if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
		return;
	n = lim.rlim_cur < INT_MAX ? lim.rlim_cur : INT_MAX;
	reserve = n / 16 < 16 ? 16 : n / 16 > 1024 ? 1024 : n / 16;
	bus->fd_reserve_start = n > reserve ? (int) (n - reserve) : 0;
}

/*
 * accept() failed for want of fds: the reserve fd makes room to accept
 * one waiting connection and close it, so that the listener does not
 * spin or leave connections waiting in the backlog.  Return: true if one
 * was refused.
 */
static bool bus_refuse_one(Bus *bus, int listen_fd) {
	int cfd;

	if (bus->reserve_fd < 0)
		return false;
	bus->reserve_fd = safe_close(bus->reserve_fd);
	cfd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd >= 0) {
		log_warning("Cannot accept connection: too many open files; refusing it");
		safe_close(cfd);
	}
	bus->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return cfd >= 0;
}

static void bus_on_accept(evutil_socket_t fd, short what, void *userdata) {
	Listener *l = userdata;
	Bus *bus = l->bus;

	for (int i = 0; i < 64; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return;
			if ((errno == EMFILE || errno == ENFILE) && bus_refuse_one(bus, fd))
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				log_debug("Cannot accept connection: %s; pausing until a connection closes",
					  strerror(errno));
				bus_pause_listeners(bus);
				return;
			}
			log_debug("accept() failed: %m");
			return;
		}
		if (bus->registry.n_incomplete >= bus->limits.max_incomplete_connections)
			bus_expire_oldest_incomplete(bus);

		Client *c;
		int r = client_new(&c, bus, cfd, listen_socket_is_unix(l->socket),
				   listen_socket_nonce(l->socket), l->guid);
		if (r == -ENOMEM)
			log_warning("No memory to set up new connection");
		else if (r < 0)
			log_debug("Cannot set up new connection: %s", strerror(-r));
		else
			client_start(c);
	}
}

static int bus_add_listener(Bus *bus, ListenSocket *s, const char *guid) {
	Listener **n = realloc(bus->listeners, (bus->n_listeners + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	bus->listeners = n;
	Listener *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->bus = bus;
	l->socket = s;
	memcpy(l->guid, guid, sizeof(l->guid));
	l->ev = event_new(bus->base, listen_socket_fd(s), EV_READ | EV_PERSIST, bus_on_accept, l);
	if (!l->ev) {
		free(l);
		return -ENOMEM;
	}
	event_add(l->ev, NULL);
	bus->listeners[bus->n_listeners++] = l;
	return 0;
}

/* dbus-daemon lists the addresses of its listeners last one first */
static int strv_append_address(char **acc, const char *addr, const char *guid) {
	char *n;
	if (asprintf(&n, "%s,guid=%s%s%s", addr, guid, *acc ? ";" : "", *acc ? *acc : "") < 0)
		return -ENOMEM;
	free(*acc);
	*acc = n;
	return 0;
}

/**
 * bus_listen() - open every listen address
 * @addresses:	the config's <listen> entries (or the --address list)
 * @ret_address: the connectable addresses with guid, ';'-separated
 * @ret_error:	on failure, what dbus-daemon says after "Failed to start
 *		message bus: ", or NULL (out of memory)
 *
 * Each <listen> is one server, as a DBusServer of dbus-daemon: its sockets
 * share a GUID of their own (sent with SASL's OK and printed in the
 * address), which is not the bus's (GetId).
 */
int bus_listen(Bus *bus, char **addresses, const char *fallback_address, char **ret_address, char **ret_error) {
	_cleanup_free_ char *all = NULL;
	char *fallback[2] = { (char *) fallback_address, NULL };
	int r;

	*ret_error = NULL;
	if (!addresses || !addresses[0])
		addresses = fallback;
	if (!addresses[0]) {
		*ret_error = strdup("No addresses to listen on");
		return -EINVAL;
	}

	for (char **a = addresses; *a; a++) {
		ListenSocket **socks = NULL;
		size_t n = 0;
		_cleanup_free_ char *error = NULL;
		char guid[ADDRESS_GUID_HEX_LEN + 1];

		r = listen_address_open(*a, &socks, &n, &error);
		if (r < 0) {
			if (!error && r != -ENOMEM && asprintf(&error, "Failed to listen on \"%s\": %s", *a, strerror(-r)) < 0)
				error = NULL;
			*ret_error = TAKE_PTR(error);
			return r;
		}
		r = address_guid_generate(guid);
		for (size_t i = 0; i < n; i++) {
			if (r >= 0)
				r = strv_append_address(&all, listen_socket_address(socks[i]), guid);
			if (r >= 0)
				r = bus_add_listener(bus, socks[i], guid);
			if (r < 0) {
				for (size_t j = i; j < n; j++)
					listen_socket_free(socks[j]);
				free(socks);
				return r;
			}
		}
		free(socks);
	}
	*ret_address = TAKE_PTR(all);
	return 0;
}

int bus_adopt_systemd_sockets(Bus *bus, char **ret_address, char **ret_error) {
	_cleanup_free_ char *all = NULL;
	char guid[ADDRESS_GUID_HEX_LEN + 1];
	int n = sd_listen_fds(true);
	int r;

	*ret_error = NULL;
	/* the sockets systemd passes are one server, as in dbus-daemon */
	r = address_guid_generate(guid);
	if (r < 0)
		return r;
	if (n <= 0) {
		/* dbus-daemon's words for both */
		*ret_error = strdup("No socket received.");
		return n < 0 ? n : -ENOENT;
	}
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		ListenSocket *s;
		r = listen_socket_from_fd(fd, &s);
		if (r < 0) {
			if (asprintf(ret_error, "Socket %d passed by systemd is not usable: %s", fd, strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		r = strv_append_address(&all, listen_socket_address(s), guid);
		if (r >= 0)
			r = bus_add_listener(bus, s, guid);
		if (r < 0) {
			listen_socket_free(s);
			return r;
		}
	}
	*ret_address = TAKE_PTR(all);
	return 0;
}

static void bus_config_warn(const char *message, void *userdata) {
	/* dbus-daemon names itself "dbus-daemon" from its first error in an
	 * <includedir> file on (it was "dbus" before) */
	if (strncmp(message, "Encountered error '", 19) == 0)
		log_set_ident("dbus-daemon");
	log_unprefixed(LOG_WARNING, "%s", message);
}

int bus_config_read(const char *path, BusConfig **ret, char **ret_error) {
	static const BusConfigLoadOptions opts = { .warn = bus_config_warn };

	return bus_config_load_full(path, &opts, ret, ret_error);
}

/* ---- setup ---------------------------------------------------------------- */

/* a watched directory changed (dir-watch.c) */
static void bus_reload_on_change(void *userdata);

void bus_reload_signalled(Bus *bus) {
	_cleanup_free_ char *error = NULL;
	int r = bus_reload(bus, &error);

	/* as dbus-daemon: bus_context_reload_config() logs, and then its
	 * SIGHUP handler warns once more, without the prefix */
	if (r < 0) {
		log_info("Unable to reload configuration: %s", error ? error : strerror(-r));
		log_unprefixed(LOG_WARNING, "Unable to reload configuration: %s", error ? error : strerror(-r));
	}
}

static void bus_reload_on_change(void *userdata) {
	bus_reload_signalled(userdata);
}

void bus_watch_dirs(Bus *bus) {
	if (!bus->dir_watch) {
		int r = dir_watch_new(bus, bus_reload_on_change, bus, &bus->dir_watch);
		if (r < 0) {
			log_debug("Cannot watch the configuration's directories: %s", strerror(-r));
			return;
		}
	}
	dir_watch_update(bus->dir_watch);
}

static void bus_on_signal(evutil_socket_t sig, short what, void *userdata) {
	Bus *bus = userdata;

	if (sig == SIGHUP) {
		bus_reload_signalled(bus);
		return;
	}
	log_debug("Exiting on signal %d", (int) sig);
	event_base_loopbreak(bus->base);
}

static void bus_limits_from_config(BusLimits *l, const BusConfig *c) {
	const BusConfigLimits *cl = &c->limits;

	*l = (BusLimits) {
		.max_incoming_bytes = cl->max_incoming_bytes,
		.max_incoming_unix_fds = cl->max_incoming_unix_fds,
		.max_outgoing_bytes = cl->max_outgoing_bytes,
		.max_outgoing_unix_fds = cl->max_outgoing_unix_fds,
		.max_message_size = cl->max_message_size,
		.max_message_unix_fds = cl->max_message_unix_fds,
		.service_start_timeout = cl->service_start_timeout,
		.auth_timeout = cl->auth_timeout,
		.pending_fd_timeout = cl->pending_fd_timeout,
		.max_completed_connections = cl->max_completed_connections,
		.max_incomplete_connections = cl->max_incomplete_connections,
		.max_connections_per_user = cl->max_connections_per_user,
		.max_pending_service_starts = cl->max_pending_service_starts,
		.max_names_per_connection = cl->max_names_per_connection,
		.max_match_rules_per_connection = cl->max_match_rules_per_connection,
		.max_replies_per_connection = cl->max_replies_per_connection,
		.reply_timeout = cl->reply_timeout,
	};
}

static int bus_apply_limits(Bus *bus) {
	const BusLimits *l = &bus->limits;
	KdbusLimits kl = {
		/* dbus-daemon counts the unique name as one of the names */
		.max_names_per_conn = l->max_names_per_connection > 1 ? l->max_names_per_connection - 1 : 1,
		/* one dbus1 rule takes at most six kdbus matches under one cookie */
		.max_matches_per_conn = l->max_match_rules_per_connection * 6 + 16,
		.max_requests_pending = l->max_replies_per_connection,
		.max_msgs_per_conn = 1u << 22,
		/* the exact per-user check is the daemon's (at Hello); the core
		 * also counts the daemon's own connections, one activator per
		 * activatable name among them */
		.max_conns_per_user = l->max_connections_per_user + 64 + bus->activator_reserve,
		.max_fds_per_msg = l->max_message_unix_fds,
		.max_payload_size = l->max_message_size,
		.max_msg_size = 16 * 1024,
		/*
		 * Per-user budgets (kdbus/user.h): what one uid's connections
		 * may have queued together, four connections' worth of
		 * max_outgoing_bytes / max_outgoing_unix_fds (each connection's
		 * pool already holds at most max_outgoing_bytes).  A sender of
		 * another uid gets a share of the receiving connection's pool
		 * and of its user's budget; over it, a method call fails with
		 * LimitsExceeded and a signal is dropped for that receiver.
		 * Names, matches and pending replies: 64 connections' worth of
		 * the per-connection limits (the core's default).
		 */
		.max_bytes_per_user = 4 * (l->max_outgoing_bytes > 16 * 1024 * 1024 ? l->max_outgoing_bytes
										  : 16 * 1024 * 1024),
		.max_fds_per_user = 4 * (l->max_outgoing_unix_fds > l->max_message_unix_fds ? l->max_outgoing_unix_fds
											     : l->max_message_unix_fds),
		.max_msgs_per_user = 1u << 18,
	};
	if (!kl.max_requests_pending)
		kl.max_requests_pending = 1;
	return kdbus_bus_set_limits(bus->kbus, &kl);
}

/* ---- the bus on kdbus.ko: its connections' fds in the event loop ------------ */

static void bus_on_kdbus_fd(evutil_socket_t fd, short what, void *userdata) {
	kdbus_conn_fd_ready(userdata);
}

/* edge-triggered: a wakeup when a message comes; a first one at once, for
 * what was queued before the watch */
static void *bus_fd_watch_add(void *userdata, int fd, KdbusConn *conn) {
	Bus *bus = userdata;
	struct event *ev = event_new(bus->base, fd, EV_READ | EV_PERSIST | EV_ET, bus_on_kdbus_fd, conn);

	if (!ev)
		return NULL;
	if (event_add(ev, NULL) < 0) {
		event_free(ev);
		return NULL;
	}
	event_active(ev, EV_READ, 1);
	return ev;
}

static void bus_fd_watch_remove(void *userdata, void *handle) {
	event_free(handle);
}

/*
 * The bus: the in-process core, or with <kdbus/> (--kdbus) a bus on
 * kdbusfs, "<euid>-busbridge-<pid>", whose connections the event loop
 * watches.
 */
static int bus_make_kdbus(Bus *bus) {
	KdbusBackend backend = bus->config->kdbus ? KDBUS_BACKEND_IOCTL : KDBUS_BACKEND_USERSPACE;
	char name[64];
	int r;

	bus->creator_uid = bus->euid = geteuid();
	if (backend == KDBUS_BACKEND_IOCTL && !kdbus_kernel_available()) {
		log_error("Cannot create the bus on kdbus: /sys/fs/kdbus/control does not exist "
			  "(load kdbus.ko and mount kdbusfs on /sys/fs/kdbus)");
		return -ENOENT;
	}
	snprintf(name, sizeof(name), "%u-busbridge-%d", (unsigned) geteuid(), (int) getpid());
	r = kclient_bus_make(backend, name, BLOOM_DEFAULT_SIZE, BLOOM_DEFAULT_N_HASH, KDBUS_MAKE_ACCESS_WORLD,
			     &bus->kbus);
	if (r < 0)
		return r;
	bus->on_kernel = backend == KDBUS_BACKEND_IOCTL;
	kdbus_bus_set_fd_watch(bus->kbus, &(KdbusFdWatch) {
		.add = bus_fd_watch_add,
		.remove = bus_fd_watch_remove,
		.userdata = bus,
	});
	return 0;
}

/* a setting the kernel's bus does not have (EOPNOTSUPP there): fine */
static int bus_kernel_may_lack(int r) {
	return r == -EOPNOTSUPP ? 0 : r;
}

static void bus_read_machine_id(Bus *bus) {
	_cleanup_fclose_ FILE *f = fopen("/etc/machine-id", "re");
	if (!f)
		f = fopen("/var/lib/dbus/machine-id", "re");
	if (f && fgets(bus->machine_id, sizeof(bus->machine_id), f) && strlen(bus->machine_id) == 32)
		return;
	/* no machine id: a stable one is better than none */
	snprintf(bus->machine_id, sizeof(bus->machine_id), "%s", bus->guid);
}

/* ---- the ways up (bus-hooks.h) ---------------------------------------------- */

static void bus_client_forget(Client *c) {
	Bus *bus = c->bus;

	if (bus->driver)
		driver_forget_client(bus->driver, c);
	monitor_forget_client(bus, c);
	if (c->id)
		call_overflow_peer_gone(bus->call_overflow, c->id);
	client_forward_done(c);
}

static void bus_client_gone(Bus *bus) {
	bus_resume_listeners(bus);
	bus_trim_soon(bus);
}

static const BusHooks bus_hooks = {
	.nonce_accepted = client_nonce_accepted,
	.auth_step = client_auth_step,
	.dispatch = client_dispatch,
	.deliver = deliver_slice,
	.close = client_close,
	.client_forget = bus_client_forget,
	.client_registered = bus_resume_listeners,
	.client_gone = bus_client_gone,
	.apply_core_limits = bus_apply_limits,
	.reload = bus_reload,
};

int bus_new(Bus **ret, struct event_base *base, BusConfig *config, const char *config_file) {
	_cleanup_(bus_freep) Bus *bus = NULL;
	int r;

	bus = calloc(1, sizeof(*bus));
	if (!bus) {
		bus_config_free(config);
		return -ENOMEM;
	}
	/* the configuration is the bus's from here on, whatever happens */
	bus->config = config;
	bus->hooks = &bus_hooks;
	bus->reserve_fd = -1;
	bus->base = base;
	client_registry_init(&bus->registry);
	answered_calls_init(&bus->answered);
	r = bus_schedule_init(&bus->schedule, base, bus_on_ready, bus_on_yield, bus);
	if (r < 0)
		return r;
	r = client_rbuf_pool_new(bus);
	if (r < 0)
		return r;
	r = client_header_cache_new(bus);
	if (r < 0)
		return r;
	bus->is_system = config->type && streq(config->type, "system");
	bus->allow_anonymous = config->allow_anonymous;
	bus->auth_mechanisms = config->auth && config->auth[0] ? config->auth : NULL;
	if (config_file && !(bus->config_file = strdup(config_file)))
		return -ENOMEM;
	bus_limits_from_config(&bus->limits, config);
	bus_fd_reserve_init(bus);

	/* the bus's id (GetId), a UUID as libdbus makes them */
	r = address_guid_generate(bus->guid);
	if (r < 0)
		return r;
	bus_read_machine_id(bus);

	r = bus_make_kdbus(bus);
	if (r < 0)
		return log_error_errno(r, "Cannot create the bus: %m");
	if (bus->on_kernel) {
		r = call_overflow_new(bus, &bus->call_overflow);
		if (r < 0)
			return r;
	}
	r = bus_kernel_may_lack(bus_apply_limits(bus));
	if (r < 0)
		return r;
	kdbus_bus_set_timer(bus->kbus, bus_set_timer, bus);
	/* dbus-daemon's XML policy is enforced by the daemon; the core lets
	 * what no policy entry covers through */
	r = bus_kernel_may_lack(kdbus_bus_set_policy_fallback(bus->kbus, KDBUS_POLICY_OWN));
	if (r < 0)
		return r;
	/* dbus1 signals may carry fds (the ioctl backend refuses them:
	 * client_dispatch() then sends them without) */
	(void) kdbus_bus_set_broadcast_fds(bus->kbus, true);

	bus->ev_timeout = evtimer_new(base, bus_on_timeout, bus);
	bus->ev_trim = evtimer_new(base, bus_on_trim, bus);
	bus->ev_sigterm = evsignal_new(base, SIGTERM, bus_on_signal, bus);
	bus->ev_sigint = evsignal_new(base, SIGINT, bus_on_signal, bus);
	bus->ev_sighup = evsignal_new(base, SIGHUP, bus_on_signal, bus);
	if (!bus->ev_timeout || !bus->ev_sigterm || !bus->ev_sigint || !bus->ev_sighup)
		return -ENOMEM;
	event_add(bus->ev_sigterm, NULL);
	event_add(bus->ev_sigint, NULL);
	event_add(bus->ev_sighup, NULL);

	Policy *p = NULL;
	r = policy_new(&p, config, NULL);
	if (r < 0)
		return log_error_errno(r, "Cannot compile the bus policy: %m");
	bus_policy_set(bus, p, config);

	r = driver_new(&bus->driver, bus);
	if (r < 0)
		return log_error_errno(r, "Cannot set up the bus driver: %m");

	*ret = TAKE_PTR(bus);
	return 0;
}

Bus *bus_free(Bus *bus) {
	if (!bus)
		return NULL;
	while (!list_is_empty(&bus->registry.all))
		client_free(list_first_entry(&bus->registry.all, Client, link));
	bus_release_closed(bus);
	bus->call_overflow = call_overflow_free(bus->call_overflow);
	bus->kernel_peers = kernel_peers_free(bus->kernel_peers);
	client_rbuf_pool_free(bus);
	client_header_cache_free(bus);
	monitor_free(bus);
	bus->dir_watch = dir_watch_free(bus->dir_watch);
	service_registry_free(bus);
	answered_calls_done(&bus->answered);
	monitor_sink_close(bus);
	bus_policy_close_holders(bus);
	bus->driver = driver_free(bus->driver);
	for (size_t i = 0; i < bus->n_listeners; i++) {
		event_free(bus->listeners[i]->ev);
		listen_socket_free(bus->listeners[i]->socket);
		free(bus->listeners[i]);
	}
	free(bus->listeners);
	bus->kbus = kdbus_bus_close(bus->kbus);
	client_registry_done(&bus->registry);
	bus_schedule_done(&bus->schedule);
	if (bus->ev_timeout)
		event_free(bus->ev_timeout);
	if (bus->ev_trim)
		event_free(bus->ev_trim);
	if (bus->ev_sigterm)
		event_free(bus->ev_sigterm);
	if (bus->ev_sigint)
		event_free(bus->ev_sigint);
	if (bus->ev_sighup)
		event_free(bus->ev_sighup);
	strv_free(bus->activation_env);
	bus_policy_done(bus);
	bus_config_free(bus->config);
	free(bus->config_file);
	safe_close(bus->reserve_fd);
	free(bus);
	return NULL;
}

/**
 * bus_reload() - re-read the configuration file.  The new configuration is
 * loaded aside and swapped in only if it is valid; a broken file keeps the
 * running configuration and reports the error.
 */
int bus_reload(Bus *bus, char **ret_error) {
	BusConfig *c = NULL;
	int r;

	if (!bus->config_file)
		return 0;
	r = bus_config_read(bus->config_file, &c, ret_error);
	if (r < 0)
		return r;

	/* the user database may have changed too */
	bus_groups_flush(bus);

	/* compile aside, then swap everything in one step */
	_cleanup_(policy_unrefp) Policy *p = NULL;
	r = policy_new(&p, c, NULL);
	if (r < 0) {
		bus_config_free(c);
		if (ret_error && !*ret_error)
			*ret_error = strdup("Cannot compile the new policy");
		return r;
	}
	size_t n = 0, i = 0;
	Client *cl;
	list_for_each_entry(cl, &bus->registry.all, link)
		n++;
	_cleanup_free_ PolicySnapshot **snaps = calloc(n + 1, sizeof(*snaps));
	if (!snaps) {
		bus_config_free(c);
		return -ENOMEM;
	}
	list_for_each_entry(cl, &bus->registry.all, link) {
		if (cl->policy.snapshot && (r = client_policy_snapshot(cl, p, &snaps[i])) < 0) {
			for (size_t k = 0; k < i; k++)
				policy_snapshot_free(snaps[k]);
			bus_config_free(c);
			return r;
		}
		i++;
	}
	i = 0;
	list_for_each_entry(cl, &bus->registry.all, link) {
		if (cl->policy.snapshot)
			client_set_policy(cl, snaps[i]);
		i++;
	}
	bus_policy_set(bus, TAKE_PTR(p), c);

	bus_config_free(bus->config);
	bus->config = c;
	bus->allow_anonymous = c->allow_anonymous;
	bus->auth_mechanisms = c->auth && c->auth[0] ? c->auth : NULL;
	bus_limits_from_config(&bus->limits, c);
	(void) bus_apply_limits(bus);
	(void) bus_selinux_set_associations(c);
	(void) service_registry_load(bus);
	bus_watch_dirs(bus);
	if (bus->driver)
		driver_broadcast_activatable_services_changed(bus->driver);
	log_info("Reloaded configuration");
	return 0;
}

static int bus_id_cmp(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* a connection that said Hello, by its id (a monitor's stays the id of its
 * Hello); NULL if it is gone */
static Client *bus_find_complete(Bus *bus, uint64_t id) {
	Client *c = client_registry_find(&bus->registry, id);

	if (c || !bus->registry.n_monitors)
		return c;
	list_for_each_entry(c, &bus->registry.all, link)
		if (c->state == CLIENT_MONITOR && c->id == id)
			return c;
	return NULL;
}

void bus_disconnect_all(Bus *bus) {
	_cleanup_free_ uint64_t *ids = NULL;
	size_t n = 0, i = 0;
	Client *c, *next;

	bus->exiting = true;
	list_for_each_entry_safe(c, next, &bus->registry.all, link) {
		if (c->state == CLIENT_ACTIVE || c->state == CLIENT_MONITOR) {
			n++;
			continue;
		}
		log_debug("Closing connection %s (%s): the bus exits", client_name(c), client_loginfo(c));
		client_free(c);
	}
	/* (ids are given at Hello, in order; without memory they all go at
	 * once, in bus_free()) */
	ids = malloc(MAX(n, (size_t) 1) * sizeof(*ids));
	if (!ids)
		return;
	list_for_each_entry(c, &bus->registry.all, link)
		ids[i++] = c->id;
	qsort(ids, n, sizeof(*ids), bus_id_cmp);
	for (i = 0; i < n; i++) {
		c = bus_find_complete(bus, ids[i]);
		if (!c)
			continue;	/* it went while others were written to */
		log_debug("Closing connection %s (%s): the bus exits", client_name(c), client_loginfo(c));
		client_free(c);
		/* what its departure sent the others, written now (on
		 * kdbus.ko it waits in their kernel queues, which no event
		 * will read any more) */
		for (size_t j = i + 1; bus->on_kernel && j < n; j++) {
			Client *o = bus_find_complete(bus, ids[j]);
			if (o && o->conn)
				client_flush(o);
		}
		bus_on_ready(-1, 0, bus);
	}
}

int bus_run(Bus *bus) {
	int r = event_base_dispatch(bus->base);
	return r < 0 ? -EIO : 0;
}
