/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * service-registry.c - bus activation, the kdbus way.
 *
 * DOC: activation
 *
 * Every activatable name (a .service file in the service directories, and
 * org.freedesktop.systemd1 itself when systemd activation is on) is held in
 * the core by an *activator* connection (HELLO with KDBUS_HELLO_ACTIVATOR
 * and the name).  A message to the name while no real connection owns it
 * is queued on the activator, with its reply tracker; the activator's
 * wakeup (its queue became non-empty) triggers the launch.  When the
 * service acquires the name, the core moves the queued messages and their
 * trackers to it in order, in one step.  When it releases the name or
 * dies, what is still queued for the name goes back to the activator,
 * whose wakeup fires again and starts the service anew: exit-on-idle
 * without a lost message.
 *
 * The registry itself does not keep messages.  It keeps one Launch per
 * activation in progress (its child, its timeout, the StartServiceByName
 * callers waiting for it) and learns that a name was taken from one
 * ordinary connection of its own, the *watcher*, which has kdbus
 * notification matches for NAME_ADD, NAME_CHANGE and NAME_REMOVE.  A
 * launch that fails (exec failure, exit before the name appears, a
 * signal, the timeout, systemd's ActivationFailure) answers every message
 * still queued on the activator with the error, as dbus-daemon does: the
 * messages are PEEKed from the activator (an activator may PEEK and DROP,
 * not RECV), answered through the driver, then DROPped.
 *
 * Callbacks from the core (activator and watcher wakeups) only set flags
 * and activate one deferred event; all the work runs from the event loop,
 * never inside a core command.  Pending launches are looked up by their
 * id after anything that may have finished them.
 *
 * Launching is dbus-daemon's bus/activation.c: direct exec (launcher.c:
 * environment, User= on the system bus, the launch helper; exit status 0
 * before the name appears is ignored because services may daemonize), or
 * with --systemd-activation
 * and SystemdService= the org.freedesktop.systemd1.Activator
 * ActivationRequest signal, sent to the name org.freedesktop.systemd1 so
 * that it waits on that name's activator until systemd is on the bus.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compat/hash-order.h"
#include "compat/kdbus-client.h"
#include "compat/message.h"
#include "compat/protocol.h"
#include "compat/service-file.h"
#include "compat/wire.h"
#include "daemon/answered-calls.h"
#include "daemon/bus-hooks.h"
#include "daemon/bus.h"
#include "daemon/client.h"
#include "daemon/driver.h"
#include "daemon/launcher.h"
#include "daemon/log.h"
#include "daemon/service-registry.h"
#include "policy/config.h"
#include "util/list.h"
#include "util/macro.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"
#define ACTIVATOR_POOL_SIZE (16ULL * 1024 * 1024)
#define WATCHER_POOL_SIZE (4ULL * 1024 * 1024)
#define WATCHER_REMOVALS_COOKIE 2	/* the ID_REMOVE match; the name matches have 1 */
/* how long a new instance waits for the previous one to go (see
 * activatable_trigger()) */
#define PREVIOUS_OWNER_GRACE_USEC (1000 * 1000)

typedef struct Launch Launch;

/* one activatable name and its activator connection */
typedef struct Activatable {
	ServiceRegistry *reg;
	List link;		/* ServiceRegistry.all */
	char *name;
	ServiceFile *file;	/* NULL: org.freedesktop.systemd1 under systemd activation */
	KdbusConn *conn;	/* the activator, NULL if the name cannot be owned */
	bool listed;		/* from a .service file: ListActivatableNames shows it */
	bool owned;		/* a real connection owns the name */
	bool triggered;		/* the activator's queue became non-empty */
	bool removed;		/* its file is gone: freed once the launch is over */
	Launch *launch;
	uint64_t previous_owner;	/* gave the name back and is still connected */
	struct event *ev_previous;	/* the grace period for @previous_owner */
} Activatable;

/* a StartServiceByName call waiting for its activation */
typedef struct Starter {
	List link;
	uint64_t client_id;
	uint32_t serial;	/* of the call */
	bool no_reply;		/* it had NO_REPLY_EXPECTED */
	char *reply_to;		/* its sender, the reply's destination, or NULL */
} Starter;

/* an activation in progress */
struct Launch {
	List link;		/* ServiceRegistry.launches */
	uint64_t id;
	Activatable *a;
	char *exec;		/* activations with the same Exec fail together */
	char *unit;		/* SystemdService= asked of systemd, or NULL */
	struct event *ev_timeout;
	List starters;		/* Starter */
	unsigned n_entries;	/* counted in ServiceRegistry.n_pending */
	LauncherChild *child;
};

struct ServiceRegistry {
	Bus *bus;
	Activatable **names;	/* sorted by name, for lookups */
	size_t n_names;
	List all;		/* every Activatable, removed ones too */
	KdbusConn *watcher;
	unsigned n_previous;	/* activatables with a previous_owner */
	bool watching_removals;	/* the watcher's ID_REMOVE match is in */
	struct event *ev_process;
	List launches;
	Launcher *launcher;
	unsigned n_pending;	/* max_pending_service_starts */
	uint64_t next_launch_id;
	bool process_pending;
	HashOrder *listed_order;	/* dbus-daemon's activation entries, for ListActivatableNames */
};

static void launch_fail(Launch *l, const char *error_name, const char *text);
static int registry_new(Bus *bus, ServiceRegistry **ret);
static bool activatable_check_file(Activatable *a);
static void activatable_set_previous(Activatable *a, uint64_t id);

/* ---- lookups ---------------------------------------------------------------- */

static int activatable_cmp(const void *a, const void *b) {
	return strcmp((*(Activatable *const *) a)->name, (*(Activatable *const *) b)->name);
}

/* the current entry for @name (not a removed one), or NULL */
static Activatable *registry_find(ServiceRegistry *reg, const char *name) {
	size_t lo = 0, hi = reg->n_names;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, reg->names[mid]->name);
		if (c == 0)
			return reg->names[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ... or a removed one that still has an activation in progress */
static Activatable *registry_find_any(ServiceRegistry *reg, const char *name) {
	Activatable *a = registry_find(reg, name);

	if (a)
		return a;
	list_for_each_entry(a, &reg->all, link)
		if (a->removed && streq(a->name, name))
			return a;
	return NULL;
}

static Launch *registry_find_launch(ServiceRegistry *reg, uint64_t id) {
	Launch *l;

	list_for_each_entry(l, &reg->launches, link)
		if (l->id == id)
			return l;
	return NULL;
}

/* the kdbus id of the real owner of @name, 0 if none (activators and
 * waiters are not owners) */
static uint64_t registry_owner_id(ServiceRegistry *reg, const char *name) {
	uint64_t id = 0;

	return kclient_name_owner(reg->watcher, name, &id) < 0 ? 0 : id;
}

static bool activatable_is_systemd(const Activatable *a) {
	return streq(a->name, SYSTEMD_NAME);
}

/* ---- the address activated services get (launcher.c) ----------------------- */

int service_registry_set_address(Bus *bus, const char *address) {
	ServiceRegistry *reg = bus->services;

	assert_return(address, -EINVAL);
	if (!reg) {
		int r = registry_new(bus, &reg);
		if (r < 0)
			return r;
	}
	return launcher_set_address(reg->launcher, address);
}

/* ---- answering what an activator holds ------------------------------------- */

/*
 * answer every message queued on @a's activator with @error_name, as
 * dbus-daemon answers every entry of a failed pending activation (method
 * calls, signals and unrequested replies alike), and drop it.  Messages from the bus itself
 * (ActivationRequest, SetEnvironment) are dropped.
 */
static void activatable_fail_queued(Activatable *a, const char *error_name, const char *text) {
	Bus *bus = a->reg->bus;

	if (!a->conn)
		return;
	for (unsigned n = 0; n < 1u << 20; n++) {
		KclientMsgParts parts;
		WireHeader h;
		bool have_header = false;
		uint64_t offset;

		if (kclient_recv_peek(a->conn, &offset) < 0)
			break;
		struct kdbus_msg *m = kdbus_pool_ptr(a->conn, offset);
		uint64_t src_id = m->src_id, cookie = m->cookie;
		bool expect_reply = m->flags & KDBUS_MSG_EXPECT_REPLY;
		if (m->payload_type == KDBUS_PAYLOAD_DBUS) {
			kclient_msg_read(a->conn, m, &parts);
			have_header = parts.n_iov && wire_header_parse(parts.payload.iov_base, parts.len, &h) >= 0;
		}
		kclient_free(a->conn, offset);

		/* the error first: the tracker's death (DROP) comes after it */
		Client *c = client_registry_find(&bus->registry, src_id);
		if (c && have_header) {
			(void) driver_send_error(bus->driver, c, h.serial, error_name, "%s", text);
			if (expect_reply)
				answered_calls_add(&bus->answered, src_id, cookie);
		}

		if (kclient_recv_drop(a->conn) < 0)
			break;
	}
}

/* ---- activators ------------------------------------------------------------- */

static void registry_schedule(ServiceRegistry *reg) {
	if (reg->process_pending)
		return;
	reg->process_pending = true;
	event_active(reg->ev_process, EV_TIMEOUT, 0);
}

static void activator_wakeup(KdbusConn *conn, void *userdata) {
	Activatable *a = userdata;

	a->triggered = true;
	registry_schedule(a->reg);
}

static int activatable_register(Activatable *a) {
	int r;

	/* it holds what the service would receive: the quota of a client */
	uint64_t pool = a->reg->bus->limits.max_outgoing_bytes;
	pool = pool < ACTIVATOR_POOL_SIZE ? ACTIVATOR_POOL_SIZE : pool;
	pool = pool > (1ULL << 40) ? (1ULL << 40) : pool;
	/* the caller's identity: the activator has the bus creator's, so it
	 * is the bus owner (privileged roles need that) */
	/* on kdbus.ko the activator carries its name's policy entry */
	const struct kdbus_policy_access *access;
	size_t n_access;
	(void) bus_kernel_policy_of(a->reg->bus, a->name, &access, &n_access);
	r = kclient_hello_activator_policy(a->reg->bus->kbus, a->name, access, n_access,
					   KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_HIDDEN_ID, ALIGN_TO(pool, (uint64_t) 4096),
					   &a->conn);
	if (r < 0)
		return r;
	kdbus_conn_set_wakeup(a->conn, activator_wakeup, a);
	/* a name already owned keeps its owner; the activator is its fallback */
	a->owned = registry_owner_id(a->reg, a->name) != 0;
	return 0;
}

static Activatable *activatable_free(Activatable *a) {
	if (!a)
		return NULL;
	list_unlink(&a->link);
	activatable_set_previous(a, 0);
	if (a->ev_previous)
		event_free(a->ev_previous);
	/* closing drops what is still queued: nothing should be left */
	a->conn = kdbus_conn_close(a->conn);
	service_file_free(a->file);
	free(a->name);
	free(a);
	return NULL;
}

static int activatable_new(ServiceRegistry *reg, const char *name, ServiceFile *file, Activatable **ret) {
	Activatable *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->reg = reg;
	list_init(&a->link);
	a->name = strdup(name);
	if (!a->name) {
		free(a);
		return -ENOMEM;
	}
	list_link_tail(&reg->all, &a->link);
	if ((!file || file->name_valid) && !streq(name, DRIVER_NAME)) {
		r = activatable_register(a);
		if (r == -ENOMEM) {
			activatable_free(a);
			return r;
		}
		if (r < 0)
			log_debug("Cannot register activatable name %s: %s", name, strerror(-r));
	}
	a->file = file;
	a->listed = file != NULL;
	*ret = a;
	return 0;
}

/* ---- launches --------------------------------------------------------------- */

static void starter_free(Starter *st) {
	list_unlink(&st->link);
	free(st->reply_to);
	free(st);
}

/* a reply to the StartServiceByName call of @st (an error if @error_name),
 * as libdbus makes dbus-daemon's: the call's sender as destination, the
 * error name, the reply serial, in that order */
static int starter_reply_init(Starter *st, WireBuilder *b, const char *error_name) {
	int r = wire_builder_init(b, error_name ? WIRE_TYPE_ERROR : WIRE_TYPE_METHOD_RETURN,
				  WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	if (st->reply_to)
		wire_builder_set_destination(b, st->reply_to);
	if (error_name)
		wire_builder_set_error_name(b, error_name);
	wire_builder_set_reply_serial(b, st->serial);
	return 0;
}

static void starter_reply_error(ServiceRegistry *reg, Starter *st, const char *error_name, const char *text) {
	Client *c = client_registry_find(&reg->bus->registry, st->client_id);
	WireBuilder b;

	if (!c || !c->conn || st->no_reply || starter_reply_init(st, &b, error_name) < 0)
		return;
	wire_builder_append_basic(&b, 's', text);
	(void) driver_send_message(reg->bus->driver, c, &b, st->serial, NULL, 0);
}

static void starter_reply_success(ServiceRegistry *reg, Starter *st) {
	Client *c = client_registry_find(&reg->bus->registry, st->client_id);
	uint32_t result = DBUS_START_REPLY_SUCCESS;
	WireBuilder b;

	if (!c || !c->conn || st->no_reply || starter_reply_init(st, &b, NULL) < 0)
		return;
	wire_builder_append_basic(&b, 'u', &result);
	(void) driver_send_message(reg->bus->driver, c, &b, st->serial, NULL, 0);
}

/* take @l off its activatable and the registry; the caller frees it */
static void launch_detach(Launch *l) {
	ServiceRegistry *reg = l->a->reg;

	list_unlink(&l->link);
	if (l->a->launch == l)
		l->a->launch = NULL;
	reg->n_pending -= MIN(reg->n_pending, l->n_entries);
	if (l->ev_timeout) {
		event_free(l->ev_timeout);
		l->ev_timeout = NULL;
	}
	launcher_child_detach(l->child);
	l->child = NULL;
}

static void launch_free(Launch *l) {
	while (!list_is_empty(&l->starters))
		starter_free(list_first_entry(&l->starters, Starter, link));
	free(l->exec);
	free(l->unit);
	free(l);
}

static void launch_fail(Launch *l, const char *error_name, const char *text) {
	Activatable *a = l->a;
	ServiceRegistry *reg = a->reg;
	Starter *st;

	launch_detach(l);
	list_for_each_entry(st, &l->starters, link)
		starter_reply_error(reg, st, error_name, text);
	activatable_fail_queued(a, error_name, text);
	launch_free(l);
	if (a->removed)
		activatable_free(a);
}

static void launch_succeed(Launch *l) {
	Activatable *a = l->a;
	ServiceRegistry *reg = a->reg;
	Starter *st;

	log_info("Successfully activated service '%s'", a->name);
	launch_detach(l);
	list_for_each_entry(st, &l->starters, link)
		starter_reply_success(reg, st);
	launch_free(l);
	if (a->removed)
		activatable_free(a);
}

/* fail every pending launch for which @pred(l, data) holds (collected
 * first: failing one may end others) */
static void registry_fail_launches(ServiceRegistry *reg, bool (*pred)(Launch *l, const void *data),
				   const void *data, const char *error_name, const char *text) {
	size_t n = 0, i = 0;
	uint64_t *ids;
	Launch *l;

	list_for_each_entry(l, &reg->launches, link)
		n++;
	if (n == 0)
		return;
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		return;
	list_for_each_entry(l, &reg->launches, link)
		if (pred(l, data))
			ids[i++] = l->id;
	for (size_t j = 0; j < i; j++)
		if ((l = registry_find_launch(reg, ids[j])))
			launch_fail(l, error_name, text);
	free(ids);
}

/* ---- the watcher: who owns the activatable names ------------------------- */

static void registry_name_changed(ServiceRegistry *reg, const KclientNotify *nc) {
	Activatable *a = registry_find_any(reg, nc->name);

	if (!a)
		return;
	bool was_owned = nc->old_id && !(nc->old_flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE));
	a->owned = nc->type != KCLIENT_NAME_REMOVE && nc->new_id &&
		   !(nc->new_flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE));
	/* an owner gave the name back to the activator (released it or
	 * disconnected): its connection may still answer what it was handed */
	if (was_owned && !a->owned && client_registry_find(&reg->bus->registry, nc->old_id))
		activatable_set_previous(a, nc->old_id);
	if (a->owned) {
		activatable_set_previous(a, 0);
		/* an owner that was queued for the name too */
		Client *c = client_registry_find(&reg->bus->registry, nc->new_id);
		if (c)
			client_limit_output(c);
	}
	if (a->owned && a->launch)
		launch_succeed(a->launch);
}

bool service_registry_is_activatable(Bus *bus, const char *name) {
	return bus->services && registry_find_any(bus->services, name);
}

/* bus_kernel_policy_install()'s names to skip: those of a service file */
static bool service_registry_has_file(const char *name, void *userdata) {
	return service_registry_is_activatable(userdata, name);
}

const char *service_registry_assumed_apparmor_label(Bus *bus, const char *name) {
	Activatable *a = bus->services ? registry_find_any(bus->services, name) : NULL;

	return a && a->file ? a->file->assumed_apparmor_label : NULL;
}

/* connection @id is gone: the activations that waited for it may start */
static void registry_id_removed(ServiceRegistry *reg, uint64_t id) {
	Activatable *a;

	list_for_each_entry(a, &reg->all, link)
		if (a->previous_owner == id) {
			activatable_set_previous(a, 0);
			if (a->ev_previous)
				evtimer_del(a->ev_previous);
			a->triggered = true;
			registry_schedule(reg);
		}
}

/*
 * The watcher hears of disconnections (ID_REMOVE) only while a previous
 * owner is awaited: every connection's goodbye would otherwise cost a
 * notification built, queued and read here.  The match goes in while the
 * previous owner is still connected (activatable_set_previous() is called
 * with a connected client's id), so its ID_REMOVE cannot be missed.
 */
static void registry_watch_removals(ServiceRegistry *reg, bool on) {
	if (!reg->watcher || on == reg->watching_removals)
		return;
	if (!on) {
		(void) kclient_match_remove(reg->watcher, WATCHER_REMOVALS_COOKIE);
		reg->watching_removals = false;
		return;
	}
	if (kclient_match_id_change(reg->watcher, WATCHER_REMOVALS_COOKIE, KCLIENT_ID_REMOVE, KDBUS_MATCH_ID_ANY) < 0) {
		/* without it the next instance starts after the grace period */
		log_debug("Cannot watch disconnections for activation");
		return;
	}
	reg->watching_removals = true;
}

/* @a's previous owner is @id (0: none) */
static void activatable_set_previous(Activatable *a, uint64_t id) {
	ServiceRegistry *reg = a->reg;

	if (!a->previous_owner == !id) {
		a->previous_owner = id;
		return;
	}
	a->previous_owner = id;
	if (id)
		reg->n_previous++;
	else
		reg->n_previous--;
	registry_watch_removals(reg, reg->n_previous > 0);
}

static int registry_watcher_message(KdbusConn *conn, struct kdbus_msg *m, void *userdata) {
	ServiceRegistry *reg = userdata;
	const struct kdbus_item *cursor = NULL;
	KclientNotify nc;

	if (m->payload_type != KDBUS_PAYLOAD_KERNEL)
		return 0;
	while (kclient_notify_next(m, &cursor, &nc)) {
		if (nc.type == KCLIENT_NAME_ADD || nc.type == KCLIENT_NAME_CHANGE || nc.type == KCLIENT_NAME_REMOVE)
			registry_name_changed(reg, &nc);
		else if (nc.type == KCLIENT_ID_REMOVE)
			registry_id_removed(reg, nc.id);
	}
	return 0;
}

/* read every notification queued on the watcher */
static void registry_drain_watcher(ServiceRegistry *reg) {
	if (reg->watcher)
		(void) kclient_recv_each(reg->watcher, registry_watcher_message, reg);
}

static void watcher_wakeup(KdbusConn *conn, void *userdata) {
	registry_schedule(userdata);
}

static int registry_make_watcher(ServiceRegistry *reg) {
	static const KclientNotifyType types[] = { KCLIENT_NAME_ADD, KCLIENT_NAME_CHANGE, KCLIENT_NAME_REMOVE };
	int r;

	r = kclient_hello(reg->bus->kbus, KDBUS_HELLO_HIDDEN_ID, WATCHER_POOL_SIZE, NULL, &reg->watcher, NULL);
	if (r < 0)
		return r;
	/* no NameOwnerChanged for our unique name */
	r = client_registry_internal_add(&reg->bus->registry, reg->watcher);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		r = kclient_match_name_change(reg->watcher, 1, types[i], KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY);
		if (r < 0)
			return r;
	}
	kdbus_conn_set_wakeup(reg->watcher, watcher_wakeup, reg);
	return 0;
}

/* ---- exec: launcher.c ------------------------------------------------------ */

static bool launch_same_exec(Launch *l, const void *data) {
	return l->exec && streq(l->exec, (const char *) data);
}

/* a child started for launch @id was reaped: a failure fails the launch
 * and every other with the same Exec, as dbus-daemon does */
static void registry_child_exited(void *userdata, uint64_t id, const char *error_name, const char *text) {
	ServiceRegistry *reg = userdata;
	_cleanup_free_ char *exec = NULL;
	Launch *l = registry_find_launch(reg, id);

	if (!l)
		return;
	l->child = NULL;
	/* the name may have been taken just before the exit */
	registry_drain_watcher(reg);
	l = registry_find_launch(reg, id);
	if (!l || !error_name)
		return;
	if (!text) {
		launch_fail(l, DBUS_ERR("NoMemory"), "Not enough memory");
		return;
	}
	/* only this one is logged */
	log_info("Activated service '%s' failed: %s", l->a->name, text);
	exec = l->exec ? strdup(l->exec) : NULL;
	launch_fail(l, error_name, text);
	if (exec)
		registry_fail_launches(reg, launch_same_exec, exec, error_name, text);
}

/* ---- starting an activation ------------------------------------------------ */

static void launch_on_timeout(evutil_socket_t fd, short what, void *userdata) {
	Launch *l = userdata;
	ServiceRegistry *reg = l->a->reg;
	uint64_t id = l->id;
	_cleanup_free_ char *text = NULL;

	/* did the name appear meanwhile? */
	registry_drain_watcher(reg);
	l = registry_find_launch(reg, id);
	if (!l)
		return;
	/* the service had its chance (dbus-daemon kills it, too) */
	launcher_child_kill(l->child);
	if (asprintf(&text, "Failed to activate service '%s': timed out (service_start_timeout=%" PRIu64 "ms)",
		     l->a->name, reg->bus->limits.service_start_timeout) < 0)
		text = NULL;
	log_warning("%s", text ? text : "Activation timed out");
	launch_fail(l, DBUS_ERR("TimedOut"), text ? text : "Activation timed out");
}

static bool registry_over_limit(ServiceRegistry *reg, const char *name, char **ret_text) {
	uint64_t limit = reg->bus->limits.max_pending_service_starts;

	if (reg->n_pending < limit)
		return false;
	if (asprintf(ret_text, "The maximum number of pending activations has been reached, activation of %s "
		     "failed (max_pending_service_starts=%" PRIu64 ")", name, limit) < 0)
		*ret_text = NULL;
	return true;
}

/* the unique name of the sender of the first message queued on @a, for the log */
static void activatable_first_sender(Activatable *a, char buf[static 24]) {
	uint64_t offset;

	snprintf(buf, 24, "(unknown)");
	if (!a->conn || kclient_recv_peek(a->conn, &offset) < 0)
		return;
	struct kdbus_msg *m = kdbus_pool_ptr(a->conn, offset);
	Client *c = client_registry_find(&a->reg->bus->registry, m->src_id);
	if (c)
		snprintf(buf, 24, "%s", c->unique_name);
	else if (m->src_id == driver_id(a->reg->bus->driver))
		snprintf(buf, 24, "%s", DRIVER_NAME);
	kclient_free(a->conn, offset);
}

/* the loginfo of the connection named @unique, as in dbus-daemon's
 * "requested by ':1.N' (uid=...)" */
static const char *registry_loginfo(ServiceRegistry *reg, const char *unique) {
	uint64_t id;
	Client *c;

	if (!message_unique_name_to_id(unique, strlen(unique), &id) || !(c = client_registry_find(&reg->bus->registry, id)))
		return "inactive";
	return client_loginfo(c);
}

static int send_activation_request(ServiceRegistry *reg, const char *unit) {
	WireBuilder b;
	int r;

	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return r;
	wire_builder_set_path(&b, DRIVER_PATH);
	wire_builder_set_interface(&b, "org.freedesktop.systemd1.Activator");
	wire_builder_set_member(&b, "ActivationRequest");
	wire_builder_append_basic(&b, 's', unit);
	return driver_send_message_to_name(reg->bus->driver, SYSTEMD_NAME, &b);
}

/*
 * start activating @a (no launch may be pending); @st, if any, is the
 * StartServiceByName call waiting for it (taken over).  A failure is
 * reported to everyone waiting before this returns.
 */
static void launch_start(Activatable *a, Starter *st, const char *requested_by) {
	ServiceRegistry *reg = a->reg;
	Bus *bus = reg->bus;
	const char *error_name = NULL;
	_cleanup_free_ char *text = NULL;
	char who[24];
	Launch *l;
	int r;

	if (!requested_by) {
		activatable_first_sender(a, who);
		requested_by = who;
	}

	l = calloc(1, sizeof(*l));
	if (!l) {
		if (st)
			starter_free(st);
		activatable_fail_queued(a, DBUS_ERR("NoMemory"), "Not enough memory");
		return;
	}
	l->id = ++reg->next_launch_id;
	l->a = a;
	list_init(&l->starters);
	if (st)
		list_link_tail(&l->starters, &st->link);
	list_link_tail(&reg->launches, &l->link);
	a->launch = l;
	l->n_entries = 1;
	reg->n_pending++;

	uint64_t ms = bus->limits.service_start_timeout;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	l->ev_timeout = evtimer_new(bus->base, launch_on_timeout, l);
	if (!l->ev_timeout) {
		launch_fail(l, DBUS_ERR("NoMemory"), "Not enough memory");
		return;
	}
	evtimer_add(l->ev_timeout, &tv);

	if (bus->systemd_activation && activatable_is_systemd(a)) {
		/* systemd is not on the bus yet: wait for it to connect */
		log_debug("Waiting for systemd to connect to the bus (requested by '%s')", requested_by);
		return;
	}

	if (bus->systemd_activation && a->file && a->file->systemd_service) {
		if (!(l->unit = strdup(a->file->systemd_service)) || !(l->exec = strdup(a->file->exec))) {
			launch_fail(l, DBUS_ERR("NoMemory"), "Not enough memory");
			return;
		}
		bool systemd_there = registry_owner_id(reg, SYSTEMD_NAME) != 0;
		log_info("%s: service name='%s' unit='%s' requested by '%s' (%s)",
			 systemd_there ? "Activating via systemd" : "Activating systemd to hand-off", a->name,
			 l->unit, requested_by, registry_loginfo(reg, requested_by));
		r = send_activation_request(reg, l->unit);
		if (r < 0) {
			log_info("Failed to activate via systemd: service name='%s' unit='%s'", a->name, l->unit);
			if (asprintf(&text, "Failed to activate via systemd: service name='%s' unit='%s': %s", a->name,
				     l->unit, strerror(-r)) < 0)
				text = NULL;
			launch_fail(l, DBUS_ERR("Failed"), text ? text : "Failed to activate via systemd");
		}
		return;
	}

	if (!a->file) {
		launch_fail(l, DBUS_ERR("ServiceUnknown"), "The name was not provided by any .service files");
		return;
	}
	if (!(l->exec = strdup(a->file->exec))) {
		launch_fail(l, DBUS_ERR("NoMemory"), "Not enough memory");
		return;
	}
	const char *helper = launcher_helper(reg->launcher, a->file->user);
	if (helper && !a->file->user) {
		launch_fail(l, DBUS_ERR("Spawn.FileInvalid"), "Cannot do system-bus activation with no user\n");
		return;
	}
	log_info("Activating service name='%s' requested by '%s' (%s)%s", a->name, requested_by,
		 registry_loginfo(reg, requested_by), helper ? " (using servicehelper)" : "");
	r = launcher_spawn(reg->launcher, a->name, l->exec, a->file->user, l->id, &l->child, &error_name, &text);
	if (r < 0) {
		if (!error_name || !text) {
			error_name = r == -ENOMEM ? DBUS_ERR("NoMemory") : DBUS_ERR("Spawn.Failed");
			free(text);
			if (asprintf(&text, "Failed to activate service %s: %s", a->name, strerror(-r)) < 0)
				text = NULL;
		}
		log_info("Failed to activate service %s: %s", a->name, text ? text : strerror(-r));
		launch_fail(l, error_name, text ? text : strerror(-r));
	}
}

/* @a's activator has messages: start the service unless it is starting */
static void activatable_previous_timeout(evutil_socket_t fd, short what, void *userdata) {
	Activatable *a = userdata;

	activatable_set_previous(a, 0);
	a->triggered = true;
	registry_schedule(a->reg);
}

static void activatable_trigger(Activatable *a) {
	_cleanup_free_ char *text = NULL;

	if (a->launch || !a->conn || !kdbus_conn_has_messages(a->conn))
		return;
	/*
	 * The previous instance gave the name back and is still connected:
	 * it is answering what it was handed before it exits (the exit-on-idle
	 * protocol of doc/activation.md).  The next instance is started once
	 * it is gone, or after a grace period, so that the callers get their
	 * replies in the order of their calls.
	 */
	if (a->previous_owner && !a->removed) {
		if (!client_registry_find(&a->reg->bus->registry, a->previous_owner)) {
			activatable_set_previous(a, 0);
		} else {
			if (!a->ev_previous)
				a->ev_previous = evtimer_new(a->reg->bus->base, activatable_previous_timeout, a);
			if (a->ev_previous && !evtimer_pending(a->ev_previous, NULL)) {
				struct timeval tv = { PREVIOUS_OWNER_GRACE_USEC / 1000000, PREVIOUS_OWNER_GRACE_USEC % 1000000 };
				evtimer_add(a->ev_previous, &tv);
			}
			if (a->ev_previous)
				return;
			activatable_set_previous(a, 0);
		}
	}
	if (a->removed) {
		if (asprintf(&text, "The name %s was not provided by any .service files", a->name) < 0)
			text = NULL;
		activatable_fail_queued(a, DBUS_ERR("ServiceUnknown"), text ? text : "");
		return;
	}
	if (!activatable_check_file(a))
		return;	/* its file is gone: what was queued got ServiceUnknown */
	if (registry_over_limit(a->reg, a->name, &text)) {
		activatable_fail_queued(a, DBUS_ERR("LimitsExceeded"), text ? text : "");
		return;
	}
	launch_start(a, NULL, NULL);
}

static void registry_on_process(evutil_socket_t fd, short what, void *userdata) {
	ServiceRegistry *reg = userdata;

	reg->process_pending = false;
	/* first who took a name (a moved queue is empty), then the triggers */
	registry_drain_watcher(reg);
	for (;;) {
		Activatable *a, *found = NULL;
		list_for_each_entry(a, &reg->all, link)
			if (a->triggered) {
				found = a;
				break;
			}
		if (!found)
			break;
		found->triggered = false;
		activatable_trigger(found);
	}
}

/* ---- loading ---------------------------------------------------------------- */

static int registry_new(Bus *bus, ServiceRegistry **ret) {
	ServiceRegistry *reg = calloc(1, sizeof(*reg));
	int r;

	if (!reg)
		return -ENOMEM;
	reg->bus = bus;
	list_init(&reg->all);
	list_init(&reg->launches);
	bus->services = reg;
	r = hash_order_new(&reg->listed_order);
	if (r < 0) {
		service_registry_free(bus);
		return r;
	}
	reg->ev_process = event_new(bus->base, -1, 0, registry_on_process, reg);
	if (!reg->ev_process) {
		service_registry_free(bus);
		return -ENOMEM;
	}
	r = launcher_new(bus, registry_child_exited, reg, &reg->launcher);
	if (r < 0) {
		service_registry_free(bus);
		return r;
	}
	r = registry_make_watcher(reg);
	if (r < 0) {
		service_registry_free(bus);
		return log_error_errno(r, "Cannot set up the activation watcher: %m");
	}
	*ret = reg;
	return 0;
}

/* remove @a from the lookup table's future: close it now, or once its
 * activation is over */
static void activatable_remove(Activatable *a) {
	_cleanup_free_ char *text = NULL;

	a->removed = true;
	a->listed = false;
	if (a->launch)
		return;
	if (a->conn && kdbus_conn_has_messages(a->conn)) {
		if (asprintf(&text, "The name %s was not provided by any .service files", a->name) < 0)
			text = NULL;
		activatable_fail_queued(a, DBUS_ERR("ServiceUnknown"), text ? text : "");
	}
	activatable_free(a);
}

/*
 * ListActivatableNames lists dbus-daemon's activation entries (a libdbus
 * hash table, bus/activation.c) in that table's iteration order, which
 * reg->listed_order replays (compat/hash-order.h).  A load (startup,
 * ReloadConfig, a change in a watched directory) makes a new table and
 * adds the names in the order of the scan, as bus_activation_reload()
 * does; the rescan of an activation for an unknown name updates it, as
 * update_service_cache() does: a new name goes in, a file modified since
 * it was read (mtime, in seconds) is taken out and put back.
 */
static void registry_order_listed(ServiceRegistry *reg, const Activatable *a, const ServiceFile *old,
				  bool rescan) {
	if (!a->listed)
		return;
	if (rescan && old && hash_order_contains(reg->listed_order, a->name)) {
		if (!streq(old->path, a->file->path) || a->file->mtime_usec / 1000000 <= old->mtime_usec / 1000000)
			return;
		hash_order_remove(reg->listed_order, a->name);
	}
	if (hash_order_insert(reg->listed_order, a->name) < 0)
		log_debug("Out of memory: ListActivatableNames may list %s out of order", a->name);
}

/* a rescan does not read again a file it knows as it is: the file of the
 * name its file name says, unmodified since (seconds, as dbus-daemon) */
static bool registry_knows_file(const char *path, const char *filename, int64_t mtime_sec, void *userdata) {
	ServiceRegistry *reg = userdata;
	size_t l = strlen(filename);
	char name[256];

	if (l <= 8 || l - 8 >= sizeof(name))
		return false;
	memcpy(name, filename, l - 8);	/* less ".service" */
	name[l - 8] = '\0';
	Activatable *a = registry_find(reg, name);
	return a && a->file && !a->removed && streq(a->file->path, path) && mtime_sec <= a->file->mtime_usec / 1000000;
}

/* the service files of the configured directories (on a rescan, only those
 * new or modified); the scan's warnings are logged */
static int registry_scan(ServiceRegistry *reg, bool rescan, ServiceFile ***ret_files, size_t *ret_n) {
	const BusConfig *c = reg->bus->config;
	char **warnings = NULL;
	int r;

	/* a NULL-terminated copy: the scan wants one */
	_cleanup_free_ char **dirs = calloc(c->n_servicedirs + 1, sizeof(char *));
	if (!dirs)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_servicedirs; i++)
		dirs[i] = c->servicedirs[i];
	r = service_dir_scan_known(dirs, c->servicedir_flags, c->servicehelper ? SERVICE_SCAN_SERVICEHELPER : 0,
				   rescan ? registry_knows_file : NULL, reg, ret_files, ret_n, &warnings);
	if (r < 0)
		return r;
	for (char **w = warnings; w && *w; w++)
		log_warning("%s", *w);
	strv_free(warnings);
	return 0;
}

/*
 * the entry for @f (taken): the one of its name, kept (a removed name
 * still activating comes back as it is), or a new one.  A rescan changes
 * a name it knows only as dbus-daemon's update_directory() does: its own
 * file is read again if modified since (mtime, in seconds), another file
 * for it is ignored.
 */
static int registry_take_file(ServiceRegistry *reg, ServiceFile *f, bool rescan, Activatable **ret) {
	Activatable *a = registry_find_any(reg, f->name);
	int r;

	if (a && rescan && !a->removed && a->file &&
	    (!streq(a->file->path, f->path) || f->mtime_usec / 1000000 <= a->file->mtime_usec / 1000000)) {
		service_file_free(f);
		*ret = a;
		return 0;
	}
	if (a) {
		_cleanup_(service_file_freep) ServiceFile *old = a->removed ? NULL : a->file;
		if (a->removed)
			service_file_free(a->file);
		a->removed = false;
		a->file = f;
		a->listed = true;
		registry_order_listed(reg, a, old, rescan);
	} else {
		r = activatable_new(reg, f->name, f, &a);
		if (r < 0) {
			service_file_free(f);
			return r;
		}
		registry_order_listed(reg, a, NULL, rescan);
	}
	*ret = a;
	return 0;
}

/* systemd activation: org.freedesktop.systemd1 is activatable (not
 * listed) so what is sent to it waits until systemd connects */
static Activatable *registry_systemd_activatable(ServiceRegistry *reg) {
	Activatable *a = registry_find_any(reg, SYSTEMD_NAME);

	if (a) {
		a->removed = false;
		service_file_free(a->file);
		a->file = NULL;
		a->listed = false;
		hash_order_remove(reg->listed_order, SYSTEMD_NAME);
		return a;
	}
	return activatable_new(reg, SYSTEMD_NAME, NULL, &a) >= 0 ? a : NULL;
}

/* @names (taken) become the table; the ones no longer provided go */
static void registry_replace_names(ServiceRegistry *reg, Activatable **names, size_t n_new) {
	Activatable **old = reg->names;
	size_t n_old = reg->n_names;

	for (size_t i = 0; i < n_old; i++) {
		bool kept = false;
		for (size_t j = 0; j < n_new && !kept; j++)
			kept = names[j] == old[i];
		if (kept)
			old[i] = NULL;
	}
	qsort(names, n_new, sizeof(*names), activatable_cmp);
	reg->names = names;
	reg->n_names = n_new;
	for (size_t i = 0; i < n_old; i++)
		if (old[i]) {
			hash_order_remove(reg->listed_order, old[i]->name);
			activatable_remove(old[i]);
		}
	free(old);
}

/* @a leaves the table at once (the others stay as they are) */
static void registry_forget(ServiceRegistry *reg, Activatable *a) {
	for (size_t i = 0; i < reg->n_names; i++)
		if (reg->names[i] == a) {
			memmove(reg->names + i, reg->names + i + 1, (reg->n_names - i - 1) * sizeof(*reg->names));
			reg->n_names--;
			break;
		}
	hash_order_remove(reg->listed_order, a->name);
	activatable_remove(a);
}

/*
 * As dbus-daemon's check_service_file(), whenever a name it knows is
 * looked up to be started (an activation, StartServiceByName): a .service
 * file that is gone takes its name with it (what waits on the activator
 * is answered ServiceUnknown); one modified since it was read (mtime, in
 * seconds) is read again, and stays as it was if it no longer loads or
 * names another service.  Return: whether the name is still provided.
 */
static bool activatable_check_file(Activatable *a) {
	ServiceFile *f = NULL;
	struct stat st;

	if (!a->file || a->removed)
		return true;	/* systemd's own name; or being started as it is */
	if (stat(a->file->path, &st) < 0) {
		log_debug("%s is gone: %s is no longer activatable", a->file->path, a->name);
		registry_forget(a->reg, a);
		return false;
	}
	if ((int64_t) st.st_mtime <= a->file->mtime_usec / 1000000)
		return true;
	if (service_file_load(a->file->path, &f, NULL) < 0 || !f->name || !streq(f->name, a->name)) {
		service_file_free(f);
		return true;
	}
	_cleanup_(service_file_freep) ServiceFile *old = a->file;
	a->file = f;
	registry_order_listed(a->reg, a, old, true);
	return true;
}

static int registry_load(Bus *bus, bool rescan) {
	ServiceRegistry *reg = bus->services;
	ServiceFile **files = NULL;
	size_t n_files = 0, n_new = 0;
	Activatable **names = NULL;
	bool have_systemd = false;
	int r;

	if (!reg) {
		r = registry_new(bus, &reg);
		if (r < 0)
			return r;
	}
	r = registry_scan(reg, rescan, &files, &n_files);
	if (r < 0)
		return r;
	/* on kdbus.ko a new activator carries its name's policy entry: the
	 * holders' entries go first (bus_kernel_policy_install() below) */
	bus_kernel_policy_uninstall(bus);

	names = calloc(n_files + 2 + reg->n_names, sizeof(*names));
	if (!names) {
		service_files_free(files, n_files);
		return -ENOMEM;
	}
	/* activators are core connections of the daemon's uid: they must not
	 * take the places of clients of that uid (max_connections_per_user) */
	if (n_files + 1 > bus->activator_reserve) {
		bus->activator_reserve = n_files + 1;
		(void) bus->hooks->apply_core_limits(bus);
	}

	if (!rescan)
		hash_order_reset(reg->listed_order);
	/* keep the entries whose name is still provided, add the new ones */
	for (size_t i = 0; i < n_files; i++) {
		Activatable *a;

		if (registry_take_file(reg, TAKE_PTR(files[i]), rescan, &a) < 0)
			continue;
		names[n_new++] = a;
		if (activatable_is_systemd(a))
			have_systemd = true;
	}
	free(files);

	if (bus->systemd_activation && !have_systemd) {
		Activatable *a = registry_systemd_activatable(reg);
		if (a)
			names[n_new++] = a;
	}
	/* a rescan forgets nothing: a name whose file is gone goes when it is
	 * looked up (activatable_check_file()), as with dbus-daemon */
	for (size_t i = 0; rescan && i < reg->n_names; i++) {
		bool kept = false;
		for (size_t j = 0; j < n_new && !kept; j++)
			kept = names[j] == reg->names[i];
		if (!kept)
			names[n_new++] = reg->names[i];
	}

	registry_replace_names(reg, names, n_new);
	/* on kdbus.ko the policy holders take the entries of the names that
	 * have no activator now */
	bus_kernel_policy_install(bus, service_registry_has_file, bus);
	return 0;
}

int service_registry_load(Bus *bus) {
	return registry_load(bus, false);
}

void service_registry_free(Bus *bus) {
	ServiceRegistry *reg = bus->services;

	if (!reg)
		return;
	while (!list_is_empty(&reg->launches)) {
		Launch *l = list_first_entry(&reg->launches, Launch, link);
		launch_detach(l);
		launch_free(l);
	}
	while (!list_is_empty(&reg->all))
		activatable_free(list_first_entry(&reg->all, Activatable, link));
	/* the services we started keep running: just forget them */
	reg->launcher = launcher_free(reg->launcher);
	client_registry_internal_remove(&bus->registry, reg->watcher);
	reg->watcher = kdbus_conn_close(reg->watcher);
	if (reg->ev_process)
		event_free(reg->ev_process);
	free(reg->names);
	hash_order_free(reg->listed_order);
	free(reg);
	bus->services = NULL;
}

/* ---- driver methods --------------------------------------------------------- */

int service_registry_list(Bus *bus, char ***ret, size_t *ret_n) {
	ServiceRegistry *reg = bus->services;
	size_t n = 0;
	char **l = calloc((reg ? reg->n_names : 0) + 1, sizeof(char *));

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; reg && i < reg->n_names; i++) {
		if (!reg->names[i]->listed)
			continue;
		if (!(l[n++] = strdup(reg->names[i]->name))) {
			strv_free(l);
			return -ENOMEM;
		}
	}
	if (reg && hash_order_sort(reg->listed_order, l, n) < 0) {
		strv_free(l);
		return -ENOMEM;
	}
	*ret = l;
	*ret_n = n;
	return 0;
}

bool service_registry_rescan(Bus *bus, const char *name) {
	ServiceRegistry *reg = bus->services;
	Activatable *a;

	if (!reg)
		return false;
	(void) registry_load(bus, true);
	a = registry_find(reg, name);
	return a && a->conn;
}

int service_registry_start(Bus *bus, Client *caller, const char *name, const WireHeader *call, BusError *error) {
	ServiceRegistry *reg = bus->services;
	_cleanup_free_ char *text = NULL;
	Activatable *a;
	Starter *st;

	/* as dbus-daemon's activation_find_entry(): a known name whose file
	 * is gone is unknown now; an unknown one makes us look at the
	 * directories again */
	a = reg ? registry_find(reg, name) : NULL;
	if (a && !activatable_check_file(a))
		a = NULL;
	else if (reg && !a && service_registry_rescan(bus, name))
		a = registry_find(reg, name);
	if (!a || (!a->file && !(bus->systemd_activation && activatable_is_systemd(a)))) {
		return bus_error_set(error, DBUS_ERR("ServiceUnknown"),
				     "The name %s was not provided by any .service files", name);
	}
	/* as dbus-daemon: a name is "already running" only if it is
	 * activatable; one without a .service file is unknown, owned or not */
	if (registry_owner_id(reg, name))
		return 1;
	if (registry_over_limit(reg, name, &text)) {
		return bus_error_set(error, DBUS_ERR("LimitsExceeded"), "%s", text ? text : "");
	}

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	list_init(&st->link);
	st->client_id = caller->id;
	st->serial = call->serial;
	st->no_reply = call->flags & WIRE_FLAG_NO_REPLY_EXPECTED;
	if (call->sender.s && !(st->reply_to = strdup(call->sender.s))) {
		free(st);
		return -ENOMEM;
	}
	if (a->launch) {
		list_link_tail(&a->launch->starters, &st->link);
		a->launch->n_entries++;
		reg->n_pending++;
		return 0;
	}
	launch_start(a, st, caller->unique_name);
	return 0;
}

void service_registry_forward_environment(Bus *bus, const WireHeader *h, const uint8_t *body) {
	ServiceRegistry *reg = bus->services;
	WireReader rd;
	WireBuilder m;
	int r;

	if (!reg)
		return;
	r = wire_builder_init(&m, WIRE_TYPE_METHOD_CALL, WIRE_FLAG_NO_REPLY_EXPECTED, 1);
	if (r < 0)
		return;
	wire_builder_set_path(&m, "/org/freedesktop/systemd1");
	wire_builder_set_interface(&m, "org.freedesktop.systemd1.Manager");
	wire_builder_set_member(&m, "SetEnvironment");
	wire_builder_open_container(&m, 'a', "s");
	/* a{ss}, as the driver checked */
	wire_reader_init(&rd, h, body);
	if (wire_reader_enter(&rd, 'a') == 0) {
		while (wire_reader_peek(&rd) == '{') {
			const char *key = NULL, *value = NULL;
			_cleanup_free_ char *kv = NULL;
			if (wire_reader_enter(&rd, '{') < 0 || wire_reader_read_basic(&rd, 's', &key) < 0 ||
			    wire_reader_read_basic(&rd, 's', &value) < 0 || wire_reader_exit(&rd) < 0 ||
			    asprintf(&kv, "%s=%s", key, value) < 0) {
				wire_builder_done(&m);
				return;
			}
			wire_builder_append_basic(&m, 's', kv);
		}
	}
	wire_builder_close_container(&m);

	/* systemd on the bus: to its unique name; else to the name, where
	 * the activator keeps it until systemd comes */
	uint64_t owner = registry_owner_id(reg, SYSTEMD_NAME);
	Client *c = owner ? client_registry_find(&bus->registry, owner) : NULL;
	if (c)
		r = driver_send_message(bus->driver, c, &m, 0, NULL, 0);
	else
		r = driver_send_message_to_name(bus->driver, SYSTEMD_NAME, &m);
	if (r < 0)
		log_debug("Cannot forward the activation environment to systemd: %s", strerror(-r));
}

static bool launch_has_unit(Launch *l, const void *data) {
	return l->unit && streq(l->unit, (const char *) data);
}

/* systemd's org.freedesktop.systemd1.Activator.ActivationFailure(s unit,
 * s error_name, s error_message): fails the activations of that unit;
 * ignored unless @sender owns org.freedesktop.systemd1 and is privileged */
static void registry_activation_failure(Bus *bus, Client *sender, const WireHeader *h, const uint8_t *body) {
	ServiceRegistry *reg = bus->services;
	const char *unit = NULL, *code = NULL, *str = NULL;

	if (!reg || !sender)
		return;
	if (!client_is_privileged(sender)) {
		char uid[24] = "unknown uid";
		if (sender->is_unix && sender->creds.uid != (uid_t) -1)
			snprintf(uid, sizeof(uid), "uid %u", (unsigned) sender->creds.uid);
		log_security("rejected attempt to call ActivationFailure by connection %s (%s) with %s",
			     sender->unique_name, client_loginfo(sender), uid);
		return;
	}
	if (registry_owner_id(reg, SYSTEMD_NAME) != sender->id) {
		log_security("Ignoring forged ActivationFailure message from connection %s (%s)", sender->unique_name,
			     client_loginfo(sender));
		return;
	}
	/* its first three arguments must be strings */
	WireReader rd;
	wire_reader_init(&rd, h, body);
	if (wire_reader_read_basic(&rd, 's', &unit) < 0 || wire_reader_read_basic(&rd, 's', &code) < 0 ||
	    wire_reader_read_basic(&rd, 's', &str) < 0)
		return;
	if (!wire_error_name_is_valid(code, strlen(code)))
		code = DBUS_ERR("Failed");
	log_info("Activation via systemd failed for unit '%s': %s", unit, str);
	registry_fail_launches(reg, launch_has_unit, unit, code, str);
}

void service_registry_activation_failure_raw(Bus *bus, Client *sender, const uint8_t *msg, size_t len) {
	WireHeader h;

	/* validated by @sender's client when it came in */
	if (!bus->services || wire_header_parse_trusted(msg, len, &h) < 0)
		return;
	registry_activation_failure(bus, sender, &h, msg + h.header_len);
}

void service_registry_name_taken(Bus *bus) {
	if (bus->services)
		registry_drain_watcher(bus->services);
}

void service_registry_before_send(Bus *bus, Client *sender, const char *name) {
	ServiceRegistry *reg = bus->services;
	_cleanup_free_ char *text = NULL;
	Activatable *a;

	if (!reg || !bus->systemd_activation || !name)
		return;
	a = registry_find(reg, name);
	if (!a || a->launch || !a->conn || !a->file || !a->file->systemd_service)
		return;
	/* the watcher's news first: is the name owned right now? */
	if (kdbus_conn_has_messages(reg->watcher))
		registry_drain_watcher(reg);
	if (a->owned || a->launch || registry_over_limit(reg, name, &text))
		return;
	launch_start(a, NULL, sender ? sender->unique_name : NULL);
}
