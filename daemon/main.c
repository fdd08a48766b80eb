/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - busbridged: dbus-daemon's command line, and the startup order
 * dbus-daemon uses: read the configuration, listen, fork, write the
 * pidfile, drop privileges, print the address and pid, serve.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "config.h"
#include "daemon/bus.h"
#include "daemon/driver.h"
#include "daemon/log.h"
#include "daemon/apparmor.h"
#include "daemon/audit.h"
#include "daemon/lsm.h"
#include "daemon/selinux.h"
#include "daemon/service-registry.h"
#include "policy/config.h"
#include "util/macro.h"

typedef struct Options {
	const char *config_file;
	bool session, system;
	const char *address;
	bool print_address;
	int print_address_fd;
	bool print_pid;
	int print_pid_fd;
	int fork;		/* -1 unset, 0 --nofork, 1 --fork */
	bool nopidfile;
	bool systemd_activation;
	bool introspect;
	bool kdbus;		/* --kdbus: the bus on kdbus.ko, as <kdbus/> */
	int syslog;		/* -1 unset, 0 no, 1 yes, 2 only */
} Options;

static void usage(FILE *f) {
	fputs("busbridged [--version] [--session] [--system] [--config-file=FILE] [--print-address[=DESCRIPTOR]] "
	      "[--print-pid[=DESCRIPTOR]] [--introspect] [--address=ADDRESS] [--nopidfile] [--nosyslog] [--syslog] "
	      "[--syslog-only] [--nofork] [--fork] [--systemd-activation] [--kdbus]\n",
	      f);
}

static bool parse_fd(const char *s, int *ret) {
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 65535)
		return false;
	*ret = (int) v;
	return true;
}

/* --print-address and --print-pid: an optional descriptor, after '=' or as
 * the next argument if that is a number */
static int parse_print_fd(int argc, char **argv, int *i, const char *v, int *ret_fd) {
	if (v) {
		if (!parse_fd(v, ret_fd)) {
			fprintf(stderr, "Invalid file descriptor: \"%s\"\n", v);
			return -EINVAL;
		}
	} else if (*i + 1 < argc && parse_fd(argv[*i + 1], ret_fd))
		(*i)++;
	return 0;
}

static void print_version(void) {
	printf("D-Bus Message Bus Daemon (busbridge) %s\n"
	       "A D-Bus message bus with kdbus semantics, compatible with dbus-daemon 1.14\n",
	       PACKAGE_VERSION);
}

/* dbus-daemon's argument forms: --opt=VAL and --opt VAL; --print-address
 * and --print-pid take an optional descriptor (the next argument if it is
 * a number) */
static int parse_args(int argc, char **argv, Options *o) {
	*o = (Options) { .print_address_fd = 1, .print_pid_fd = 1, .fork = -1, .syslog = -1 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = NULL;
		size_t n = strcspn(a, "=");
		if (a[n] == '=')
			v = a + n + 1;
#define OPT(name) (strlen(name) == n && strncmp(a, name, n) == 0)
#define NEED_VALUE()                                                                   \
	do {                                                                           \
		if (!v) {                                                              \
			if (i + 1 >= argc) {                                           \
				fprintf(stderr, "%s requires an argument\n", a);       \
				return -EINVAL;                                        \
			}                                                              \
			v = argv[++i];                                                 \
		}                                                                      \
	} while (0)

		if (OPT("--help") || OPT("-h")) {
			usage(stdout);
			exit(0);
		} else if (OPT("--version")) {
			print_version();
			exit(0);
		} else if (OPT("--session")) {
			o->session = true;
		} else if (OPT("--system")) {
			o->system = true;
		} else if (OPT("--config-file")) {
			NEED_VALUE();
			o->config_file = v;
		} else if (OPT("--address")) {
			NEED_VALUE();
			o->address = v;
		} else if (OPT("--print-address")) {
			o->print_address = true;
			if (parse_print_fd(argc, argv, &i, v, &o->print_address_fd) < 0)
				return -EINVAL;
		} else if (OPT("--print-pid")) {
			o->print_pid = true;
			if (parse_print_fd(argc, argv, &i, v, &o->print_pid_fd) < 0)
				return -EINVAL;
		} else if (OPT("--nofork")) {
			o->fork = 0;
		} else if (OPT("--fork")) {
			o->fork = 1;
		} else if (OPT("--nopidfile")) {
			o->nopidfile = true;
		} else if (OPT("--systemd-activation")) {
			o->systemd_activation = true;
		} else if (OPT("--introspect")) {
			o->introspect = true;
		} else if (OPT("--kdbus")) {
			o->kdbus = true;
		} else if (OPT("--nosyslog")) {
			o->syslog = 0;
		} else if (OPT("--syslog")) {
			o->syslog = 1;
		} else if (OPT("--syslog-only")) {
			o->syslog = 2;
		} else {
			fprintf(stderr, "Unknown command line argument: %s\n", a);
			usage(stderr);
			return -EINVAL;
		}
#undef OPT
#undef NEED_VALUE
	}
	if ((o->session + o->system + !!o->config_file) > 1) {
		fprintf(stderr, "--session, --system and --config-file are mutually exclusive\n");
		return -EINVAL;
	}
	return 0;
}

static int write_all(int fd, const char *s) {
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t k = write(fd, s, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += k;
		n -= k;
	}
	return 0;
}

/* dbus-daemon's words when it cannot start, after "Failed to start message
 * bus: " (written as it writes them: without the bus's log prefix) */
_printf_(1, 2)
static int start_failed(const char *fmt, ...) {
	_cleanup_free_ char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	log_unprefixed(LOG_ERR, "Failed to start message bus: %s", text ? text : "Not enough memory");
	return -EINVAL;
}

/* <user>, looked up before anything else happens, as dbus-daemon does */
static int lookup_user(const char *user, uid_t *ret_uid, gid_t *ret_gid) {
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(user);
	if (!pw)
		return start_failed("Could not get UID and GID for username \"%s\"", user);
	*ret_uid = pw->pw_uid;
	*ret_gid = pw->pw_gid;
	return 0;
}

/*
 * Become <user> (its uid and gid, no supplementary groups), keeping what
 * dbus-daemon keeps and what the kernel bus needs, and nothing else:
 *   - CAP_AUDIT_WRITE, if the bus had it (dbus-daemon's
 *     _dbus_change_to_daemon_user(): the security modules' denials go to
 *     the audit log, which takes them only from a process that holds it);
 *   - on kdbus.ko, CAP_IPC_OWNER: its clients' connections are opened after
 *     this, stand for them with their credentials and must stay
 *     privileged, so that the daemon, which enforces the XML policy for
 *     them, is not bound by the kernel's (as systemd's bus-proxyd kept it).
 */
static int drop_privileges(const char *user, uid_t uid, gid_t gid, bool keep_ipc_owner) {
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2] = {};
	bool keep_audit_write;

	if (geteuid() == uid)
		return 0;
	if (syscall(SYS_capget, &hdr, caps) < 0)
		return start_failed("Failed to read the capabilities: %s", strerror(errno));
	keep_audit_write = caps[CAP_TO_INDEX(CAP_AUDIT_WRITE)].permitted & CAP_TO_MASK(CAP_AUDIT_WRITE);
	memset(caps, 0, sizeof(caps));
	if (keep_audit_write) {
		caps[CAP_TO_INDEX(CAP_AUDIT_WRITE)].effective |= CAP_TO_MASK(CAP_AUDIT_WRITE);
		caps[CAP_TO_INDEX(CAP_AUDIT_WRITE)].permitted |= CAP_TO_MASK(CAP_AUDIT_WRITE);
	}
	if (keep_ipc_owner) {
		caps[CAP_TO_INDEX(CAP_IPC_OWNER)].effective |= CAP_TO_MASK(CAP_IPC_OWNER);
		caps[CAP_TO_INDEX(CAP_IPC_OWNER)].permitted |= CAP_TO_MASK(CAP_IPC_OWNER);
	}
	bool keep = keep_audit_write || keep_ipc_owner;
	if (keep && prctl(PR_SET_KEEPCAPS, 1) < 0)
		return start_failed("Failed to keep capabilities: %s", strerror(errno));
	/* (no supplementary groups, as dbus-daemon's capng_change_id() with
	 * CAPNG_DROP_SUPP_GRP) */
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
		return start_failed("Failed to drop privileges to %s: %s", user, strerror(errno));
	if (keep && (syscall(SYS_capset, &hdr, caps) < 0 || prctl(PR_SET_KEEPCAPS, 0) < 0))
		return start_failed("Failed to keep capabilities: %s", strerror(errno));
	return 0;
}

static int write_pidfile(const char *path) {
	char buf[32];
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return start_failed("Failed to open \"%s\": %s", path, strerror(errno));
	snprintf(buf, sizeof(buf), "%d\n", (int) getpid());
	return write_all(fd, buf);
}

/* daemonize: the parent exits once the child is serving (or fails) */
static int become_daemon(int *ret_notify_fd, bool keep_umask) {
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		ssize_t k;
		do
			k = read(p[0], &c, 1);
		while (k < 0 && errno == EINTR);
		_exit(k == 1 ? 0 : 1);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	if (!keep_umask)
		umask(022);
	if (chdir("/") < 0)
		return -errno;
	/* stdio to /dev/null, unless it is closed or used for printing */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		(void) dup2(null, 0);
		if (null > 2)
			close(null);
	}
	*ret_notify_fd = p[1];
	return 0;
}

/*
 * libevent keeps a small slot per fd number it ever watched (its io map)
 * until the base goes away.  Allocated in between the clients' memory,
 * those slots pin the heap's pages once a flood of connections is gone,
 * and malloc_trim() cannot give them back.  libevent's small allocations
 * get pages of their own (never unmapped; a few hundred KiB for thousands
 * of fds).  libevent is only used from the main thread.
 */
#define EVMEM_CELL 64
#define EVMEM_SLAB (256 * 1024)

static struct {
	uint8_t *slabs[64];
	size_t n_slabs;
	uint8_t *cur, *end;	/* the unused rest of the last slab */
	void *free;		/* freed cells */
} evmem;

static bool evmem_owns(const void *p) {
	for (size_t i = 0; i < evmem.n_slabs; i++)
		if ((const uint8_t *) p >= evmem.slabs[i] && (const uint8_t *) p < evmem.slabs[i] + EVMEM_SLAB)
			return true;
	return false;
}

static void *evmem_malloc(size_t n) {
	void **c;

	if (n > EVMEM_CELL)
		return malloc(n);
	if (evmem.free) {
		c = evmem.free;
		evmem.free = *c;
		return c;
	}
	if (evmem.cur == evmem.end) {
		uint8_t *s;

		if (evmem.n_slabs == ELEMENTSOF(evmem.slabs))
			return malloc(n);
		s = mmap(NULL, EVMEM_SLAB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s == MAP_FAILED)
			return malloc(n);
		evmem.slabs[evmem.n_slabs++] = s;
		evmem.cur = s;
		evmem.end = s + EVMEM_SLAB;
	}
	c = (void **) evmem.cur;
	evmem.cur += EVMEM_CELL;
	return c;
}

static void evmem_free(void *p) {
	if (p && evmem_owns(p)) {
		*(void **) p = evmem.free;
		evmem.free = p;
		return;
	}
	free(p);
}

static void *evmem_realloc(void *p, size_t n) {
	void *q;

	if (!p)
		return evmem_malloc(n);
	if (!evmem_owns(p))
		return realloc(p, n);
	if (n <= EVMEM_CELL)
		return p;
	q = malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, EVMEM_CELL);
	evmem_free(p);
	return q;
}

/* fds 0-2 must be taken before any socket is made, or a socket could
 * become "stdout" (test-dbus-daemon-fork.sh closes all three) */
/* as dbus-daemon (_dbus_ensure_standard_fds(DBUS_FORCE_STDIN_NULL)): stdin
 * is /dev/null, stdout and stderr are opened on it if closed; the services
 * the bus starts inherit them */
static void take_stdio(void) {
	int in = open("/dev/null", O_RDONLY);

	if (in > 0) {
		(void) dup2(in, 0);
		close(in);
	}
	for (int fd = 1; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0 && null != fd) {
				dup2(null, fd);
				close(null);
			}
		}
}

/* --config-file, or the default of --system or --session; NULL (and said
 * why) when there is none */
static const char *config_file_path(const Options *o, char *buf, size_t size) {
	if (o->config_file)
		return o->config_file;
	if (o->system || o->session) {
		snprintf(buf, size, "%s/dbus-1/%s.conf", DBUS_DATADIR, o->system ? "system" : "session");
		return buf;
	}
	fprintf(stderr, "No configuration file specified.\n");
	usage(stderr);
	return NULL;
}

static void setup_log(const Options *o, const BusConfig *config) {
	log_set_ident("dbus-daemon");
	/* as dbus-daemon: always stderr, syslog too with --syslog or
	 * <syslog/> (unless --nosyslog), only syslog with --syslog-only */
	if (o->syslog == 2)
		log_set_target(LOG_TARGET_SYSLOG);
	else if (o->syslog == 1 || (o->syslog < 0 && config->syslog))
		log_set_target(LOG_TARGET_STDERR | LOG_TARGET_SYSLOG);
	log_set_bus_type(config->type);
	/* lines dbus-daemon does not write (why a connection was closed, what
	 * failed under memory pressure) only when asked for */
	if (secure_getenv("BUSBRIDGE_DEBUG"))
		log_set_max_level(LOG_DEBUG);
}

/* --address (systemd: for the sockets systemd passed), else the <listen>
 * addresses of the configuration */
static int listen_all(Bus *bus, const Options *o, const BusConfig *config, char **ret_address, char **ret_error) {
	free(*ret_error);
	*ret_error = NULL;
	if (o->address && streq(o->address, "systemd:"))
		return bus_adopt_systemd_sockets(bus, ret_address, ret_error);
	if (o->address) {
		char *one[2] = { (char *) o->address, NULL };
		return bus_listen(bus, one, NULL, ret_address, ret_error);
	}
	return bus_listen(bus, config->listen, NULL, ret_address, ret_error);
}

/* as dbus-daemon once it listens: <user> looked up, fork (as configured
 * or asked), the pidfile, RLIMIT_NOFILE raised, privileges dropped;
 * *@notify_fd tells the parent of a fork when the daemon is ready */
static int detach(Bus *bus, struct event_base *base, const Options *o, const BusConfig *config, int *notify_fd) {
	bool switch_user = config->user && geteuid() == 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int r;

	if (config->user) {
		r = lookup_user(config->user, &uid, &gid);
		if (r < 0)
			return r;
	}

	if (o->fork == 1 || (o->fork < 0 && config->fork)) {
		r = become_daemon(notify_fd, config->keep_umask);
		if (r < 0)
			return start_failed("Failed to fork daemon: %s", strerror(-r));
		if (event_reinit(base) < 0) {
			log_error("Cannot reinitialise the event loop after fork");
			return -EIO;
		}
	}

	if (config->pidfile && !o->nopidfile) {
		r = write_pidfile(config->pidfile);
		if (r < 0)
			return r;
	}

	bus_raise_fd_limit(bus);

	if (switch_user) {
		r = drop_privileges(config->user, uid, gid, config->kdbus);
		if (r < 0)
			return r;
		bus->euid = geteuid();
	}
	return 0;
}

/* --print-address and --print-pid */
static int print_address_and_pid(const Options *o, const char *address) {
	if (o->print_address) {
		_cleanup_free_ char *line = NULL;
		if (asprintf(&line, "%s\n", address) < 0 || write_all(o->print_address_fd, line) < 0) {
			log_error("Failed to print address to fd %d", o->print_address_fd);
			return -EIO;
		}
	}
	if (o->print_pid) {
		char line[32];
		snprintf(line, sizeof(line), "%d\n", (int) getpid());
		if (write_all(o->print_pid_fd, line) < 0) {
			log_error("Failed to print pid to fd %d", o->print_pid_fd);
			return -EIO;
		}
	}
	/* as dbus-daemon: descriptors other than stdio are closed once
	 * printed to, so readers waiting for EOF (dbus-launch) go on */
	if (o->print_address && o->print_address_fd > 2)
		close(o->print_address_fd);
	if (o->print_pid && o->print_pid_fd > 2 && o->print_pid_fd != o->print_address_fd)
		close(o->print_pid_fd);
	return 0;
}

/* in a forked daemon, once the address and pid are out: tell the parent */
static void notify_parent(int notify_fd) {
	/* a daemon holds no terminal: stdout and stderr go to /dev/null and
	 * the log to syslog */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		(void) dup2(null, 1);
		(void) dup2(null, 2);
		if (null > 2)
			close(null);
	}
	/* what dbus-daemon logs to stderr is lost after it forks */
	log_set_target(log_get_target() & ~LOG_TARGET_STDERR);
	(void) !write(notify_fd, "", 1);
	close(notify_fd);
}

static void event_base_freep(struct event_base **base) {
	if (*base)
		event_base_free(*base);
}

int main(int argc, char **argv) {
	/* the base is freed after the bus, whose events are on it */
	_cleanup_(event_base_freep) struct event_base *base = NULL;
	_cleanup_(bus_freep) Bus *bus = NULL;
	_cleanup_free_ char *address = NULL;
	_cleanup_free_ char *error = NULL;
	BusConfig *config = NULL;
	Options o;
	const char *config_file;
	char default_conf[256];
	int notify_fd = -1;
	int r;

	signal(SIGPIPE, SIG_IGN);
	event_set_mem_functions(evmem_malloc, evmem_realloc, evmem_free);
	take_stdio();
	r = parse_args(argc, argv, &o);
	if (r < 0)
		return 1;

	if (o.introspect) {
		_cleanup_free_ char *xml = driver_introspect_string();
		if (!xml)
			return 1;
		/* dbus-daemon ends it with an empty line */
		fputs(xml, stdout);
		fputs("\n", stdout);
		return 0;
	}

	config_file = config_file_path(&o, default_conf, sizeof(default_conf));
	if (!config_file)
		return 1;
	/* dbus-daemon's name in its messages before the configuration is read */
	log_set_ident("dbus");
	r = bus_config_read(config_file, &config, &error);
	if (r < 0) {
		start_failed("%s", error ? error : strerror(-r));
		return 1;
	}
	setup_log(&o, config);
	if (o.kdbus)
		config->kdbus = true;

	base = event_base_new();
	if (!base)
		return 1;

	r = bus_new(&bus, base, config, config_file);
	if (r < 0) {
		/* bus_new() freed the configuration */
		start_failed("%s", strerror(-r));
		return 1;
	}
	bus->systemd_activation = o.systemd_activation;

	r = listen_all(bus, &o, config, &address, &error);
	if (r < 0) {
		start_failed("%s", error ? error : strerror(-r));
		return 1;
	}

	(void) service_registry_set_address(bus, address);
	r = service_registry_load(bus);
	if (r < 0)
		log_warning_errno(r, "Failed to read service directories: %m");
	bus_watch_dirs(bus);

	if (detach(bus, base, &o, config, &notify_fd) < 0 || print_address_and_pid(&o, address) < 0)
		return 1;
	/* where dbus-daemon initializes its LSMs (after the address) */
	free(error);
	error = NULL;
	r = bus_selinux_start(bus, config, &error);
	if (r < 0) {
		start_failed("%s", error ? error : strerror(-r));
		return 1;
	}
	r = bus_apparmor_start(config, &lsm_system_paths, &error);
	if (r < 0) {
		start_failed("%s", error ? error : strerror(-r));
		return 1;
	}
	if (bus_selinux_enabled() && config->syslog)
		log_info("SELinux support is enabled");
	if (bus_apparmor_enabled() && config->syslog)
		log_info("AppArmor D-Bus mediation is enabled");
	if (notify_fd >= 0)
		notify_parent(notify_fd);

	(void) sd_notifyf(false, "READY=1\nSTATUS=Serving %s\nMAINPID=%d", address, (int) getpid());
	r = bus_run(bus);
	(void) sd_notify(false, "STOPPING=1");
	bus_disconnect_all(bus);
	bus = bus_free(bus);
	bus_selinux_stop();	/* (its watch is on the loop, freed after this) */
	bus_apparmor_stop();
	bus_audit_close();
	return r < 0 ? 1 : 0;
}
