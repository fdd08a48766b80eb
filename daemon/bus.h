/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus.h - the bus as the daemon runs it: the libevent loop, the kdbus bus
 * it routes through, the driver's connection, the listeners and every
 * client.  One Bus per process.
 */

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "compat/kdbus-client.h"
#include "compat/wire.h"
#include "daemon/answered-calls.h"
#include "daemon/bus-policy.h"
#include "daemon/bus-schedule.h"
#include "daemon/bus-stats.h"
#include "daemon/client-registry.h"
#include "util/idmap.h"
#include "util/list.h"

typedef struct BusConfig BusConfig;
typedef struct Client Client;
typedef struct Driver Driver;
typedef struct KernelPeers KernelPeers;
typedef struct ListenSocket ListenSocket;
typedef struct Policy Policy;

/**
 * struct BusLimits - dbus-daemon's <limit>s, in the units dbus-daemon uses
 * (bytes, counts, milliseconds); copied from the config at start and reload.
 */
typedef struct BusLimits {
	uint64_t max_incoming_bytes;
	uint64_t max_incoming_unix_fds;
	uint64_t max_outgoing_bytes;
	uint64_t max_outgoing_unix_fds;
	uint64_t max_message_size;
	uint64_t max_message_unix_fds;
	uint64_t service_start_timeout;
	uint64_t auth_timeout;
	uint64_t pending_fd_timeout;
	uint64_t max_completed_connections;
	uint64_t max_incomplete_connections;
	uint64_t max_connections_per_user;
	uint64_t max_pending_service_starts;
	uint64_t max_names_per_connection;
	uint64_t max_match_rules_per_connection;
	uint64_t max_replies_per_connection;
	int64_t reply_timeout;	/* < 0: none */
} BusLimits;

typedef struct Listener {
	struct Bus *bus;
	ListenSocket *socket;
	struct event *ev;
	bool paused;		/* accept() paused on EMFILE/ENFILE or by limits */
	char guid[33];		/* the server's GUID, shared by the sockets of one <listen> */
} Listener;

typedef struct Bus {
	struct event_base *base;
	const struct BusHooks *hooks;	/* the ways up the layers (bus-hooks.h) */
	BusConfig *config;
	char *config_file;
	BusLimits limits;
	bool is_system;
	bool systemd_activation;
	bool allow_anonymous;
	char **auth_mechanisms;	/* <auth>, NULL = every mechanism */
	char guid[33];		/* the bus's id (GetId), 32 hex digits */
	char machine_id[33];

	KdbusBus *kbus;
	Driver *driver;
	BusPolicy policy;		/* the policy and what derives from it (bus-policy.h) */
	uid_t creator_uid;		/* the euid the core's bus was made with */
	uid_t euid;			/* ours now (after a privilege drop too) */

	Listener **listeners;
	size_t n_listeners;

	ClientRegistry registry;	/* every client, by id, and their counts */
	KernelPeers *kernel_peers;	/* the native peers seen (kernel bus only) */
	BusSchedule schedule;	/* the ready and yielded clients, the driver's turn (bus-schedule.h) */
	struct event *ev_timeout;	/* kdbus reply deadlines */
	struct event *ev_trim;		/* malloc_trim() a second after clients went away */
	bool trim_again;		/* more went away while ev_trim was pending */
	uint64_t timeout_deadline;
	struct event *ev_sigterm, *ev_sigint, *ev_sighup;

	/* fds at or above fd_reserve_start come out of the last part of
	 * RLIMIT_NOFILE, kept for accept(), the driver and activation: a
	 * client other than root may not leave its fds there; and one fd on
	 * /dev/null, closed to accept (and refuse) a connection on EMFILE */
	int fd_reserve_start;
	int reserve_fd;

	char **activation_env;	/* UpdateActivationEnvironment */

	struct Eavesdrop *eavesdrop;	/* shared monitor for eavesdrop=true rules */
	KdbusConn *sink;		/* refused messages go here, for monitors */
	struct ServiceRegistry *services;
	AnsweredCalls answered;		/* calls the bus answered, whose trackers the core reports dead */
	struct DirWatch *dir_watch;	/* the directories whose changes reload the configuration */
	size_t activator_reserve;	/* core connections kept for activators */
	bool exiting;			/* bus_disconnect_all() closes everyone */
	bool on_kernel;			/* the bus is on kdbus.ko (<kdbus/>) */
	struct CallOverflow *call_overflow;	/* on kdbus.ko: calls past its pending-reply limit */

	struct ClientHeaderCache *header_cache;	/* headers parsed once for their receivers (client-header.c) */
	struct ClientRbufPool *rbuf_pool;	/* read buffers no client holds (client-io.c) */


	BusStats stats;		/* Debug.Stats (bus-stats.h) */
} Bus;

/* bus_new() - the bus of @config, which it takes (and frees if it fails) */
int bus_new(Bus **ret, struct event_base *base, BusConfig *config, const char *config_file);
Bus *bus_free(Bus *bus);
int bus_listen(Bus *bus, char **addresses, const char *fallback_address, char **ret_address, char **ret_error);
int bus_adopt_systemd_sockets(Bus *bus, char **ret_address, char **ret_error);
int bus_reload(Bus *bus, char **ret_error);
/**
 * bus_reload_signalled() - bus_reload() as SIGHUP asks for it (and a
 * change in a watched directory, for which dbus-daemon sends itself
 * SIGHUP): a failure is logged, twice, as dbus-daemon logs it
 * @bus:	the bus
 */
void bus_reload_signalled(Bus *bus);
/**
 * bus_watch_dirs() - watch the directories of the configuration now in
 * use (daemon/dir-watch.h); once it is loaded, and after each reload
 * @bus:	the bus
 */
void bus_watch_dirs(Bus *bus);

/* bus_config_load() with its warnings logged as they come, as dbus-daemon
 * logs them while it reads the files */
int bus_config_read(const char *path, BusConfig **ret, char **ret_error);
int bus_run(Bus *bus);
/**
 * bus_disconnect_all() - close every connection, as dbus-daemon does when
 * it exits (bus_connections_unref()): those that have not said Hello
 * first, then the others one at a time in the order of their Hello, and
 * those still connected are sent what each departure causes (the
 * NameOwnerChanged of its names, the NameAcquired of the next owner, the
 * NoReply of calls it did not answer) before the next goes
 * @bus:	the bus, its loop no longer running
 */
void bus_disconnect_all(Bus *bus);

/* as dbus-daemon at startup (after listening, the pidfile and a fork, before
 * the switch to <user>): RLIMIT_NOFILE raised (fd_limit_raise()), the fd
 * reserve moved */
void bus_raise_fd_limit(Bus *bus);

DEFINE_CLEANUP(Bus *, bus_free);
