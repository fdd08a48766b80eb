/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launcher.c - starting activated services, as dbus-daemon's
 * bus/activation.c does: the command line split as an Exec= line, the
 * daemon's environment with UpdateActivationEnvironment's and the bus's
 * own variables, User= on a system bus (as root; else through the setuid
 * launch helper), the child's stdio, signals and fds reset, and an exec
 * error pipe that tells exec and setup failures apart.  Children are reaped
 * on SIGCHLD and their end reported to the registry with the error
 * dbus-daemon answers.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "compat/protocol.h"
#include "compat/service-file.h"
#include "daemon/fd-limit.h"
#include "daemon/bus.h"
#include "daemon/launch-helper.h"
#include "daemon/launcher.h"
#include "daemon/listen-socket.h"
#include "daemon/log.h"
#include "policy/config.h"
#include "util/list.h"
#include "util/macro.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

struct Launcher {
	Bus *bus;
	char *address;		/* DBUS_STARTER_ADDRESS, built on first need */
	List children;		/* LauncherChild */
	struct event *ev_sigchld;
	LauncherExitFn exited;
	void *userdata;
};

/* a process we started, until it is reaped */
struct LauncherChild {
	List link;		/* Launcher.children */
	Launcher *launcher;
	pid_t pid;
	int err_fd;		/* exec error pipe, -1 once read */
	struct event *ev_err;
	int err_stage;		/* 0: none, 1: exec failed, 2: setup failed */
	int err_errno;
	uint64_t token;		/* 0 once detached */
	char *name;
	bool helper;		/* the launch helper: its exit status says why it failed */
};

/* ---- the address and environment of activated services -------------------- */

int launcher_set_address(Launcher *l, const char *address) {
	char *s;

	assert_return(address, -EINVAL);
	s = strdup(address);
	if (!s)
		return -ENOMEM;
	free(l->address);
	l->address = s;
	return 0;
}

/* the bus's address: the one main() gave us, else built from the listeners
 * as --print-address prints it */
static const char *launcher_address(Launcher *l) {
	Bus *bus = l->bus;
	char *all = NULL;

	if (l->address)
		return l->address;
	for (size_t i = 0; i < bus->n_listeners; i++) {
		char *n;
		if (asprintf(&n, "%s%s%s,guid=%s", all ? all : "", all ? ";" : "",
			     listen_socket_address(bus->listeners[i]->socket), bus->guid) < 0) {
			free(all);
			return NULL;
		}
		free(all);
		all = n;
	}
	l->address = all;
	return l->address;
}

/* set KEY=VALUE @entry in the NULL-terminated @env of @n entries (room for
 * it is there); takes ownership of @entry */
static void env_put(char **env, size_t *n, char *entry) {
	size_t kl = strcspn(entry, "=");

	for (size_t i = 0; i < *n; i++)
		if (strncmp(env[i], entry, kl) == 0 && env[i][kl] == '=') {
			free(env[i]);
			env[i] = entry;
			return;
		}
	env[(*n)++] = entry;
	env[*n] = NULL;
}

/* variables that systemd sets for the daemon itself, not for its children
 * (dbus-daemon: populate_environment()) */
static bool env_is_daemons_own(const char *entry) {
	static const char *const own[] = { "JOURNAL_STREAM", "LISTEN_FDNAMES", "LISTEN_FDS", "LISTEN_PID",
					   "NOTIFY_SOCKET", "INVOCATION_ID", "BUSBRIDGE_KDBUS_BUS" };
	size_t kl = strcspn(entry, "=");

	for (size_t i = 0; i < ELEMENTSOF(own); i++)
		if (strlen(own[i]) == kl && strncmp(entry, own[i], kl) == 0)
			return true;
	return false;
}

/* the daemon's environment, then UpdateActivationEnvironment's, then the
 * bus's own variables (dbus-daemon: populate_environment(),
 * add_bus_environment()) */
static int launcher_build_env(Launcher *l, char ***ret) {
	Bus *bus = l->bus;
	const char *address = launcher_address(l);
	const char *type = bus->config ? bus->config->type : NULL;
	size_t n_environ = 0, n_act = 0, n = 0;
	_cleanup_strv_free_ char **env = NULL;
	char *e;

	for (char **p = environ; p && *p; p++)
		n_environ++;
	for (char **p = bus->activation_env; p && *p; p++)
		n_act++;
	env = calloc(n_environ + n_act + 5, sizeof(char *));
	if (!env)
		return -ENOMEM;
	for (char **p = environ; p && *p; p++) {
		if (!strchr(*p, '=') || env_is_daemons_own(*p))
			continue;
		if (!(e = strdup(*p)))
			return -ENOMEM;
		env_put(env, &n, e);
	}
	for (char **p = bus->activation_env; p && *p; p++) {
		if (!(e = strdup(*p)))
			return -ENOMEM;
		env_put(env, &n, e);
	}
	if (address) {
		if (asprintf(&e, "DBUS_STARTER_ADDRESS=%s", address) < 0)
			return -ENOMEM;
		env_put(env, &n, e);
	}
	/* where a native peer finds the kernel bus (busbridge-native(1)) */
	const char *endpoint = kdbus_bus_endpoint_path(bus->kbus);
	if (endpoint) {
		if (asprintf(&e, "BUSBRIDGE_KDBUS_BUS=%s", endpoint) < 0)
			return -ENOMEM;
		env_put(env, &n, e);
	}
	if (type) {
		if (asprintf(&e, "DBUS_STARTER_BUS_TYPE=%s", type) < 0)
			return -ENOMEM;
		env_put(env, &n, e);
		if (address && (streq(type, "session") || streq(type, "system"))) {
			if (asprintf(&e, "%s=%s", streq(type, "session") ? "DBUS_SESSION_BUS_ADDRESS" :
					 "DBUS_SYSTEM_BUS_ADDRESS", address) < 0)
				return -ENOMEM;
			env_put(env, &n, e);
		}
	}
	*ret = TAKE_PTR(env);
	return 0;
}

int launcher_setenv(Bus *bus, const char *key, const char *value) {
	size_t kl = strlen(key), n = 0;
	char *entry;

	if (asprintf(&entry, "%s=%s", key, value) < 0)
		return -ENOMEM;
	for (char **e = bus->activation_env; e && *e; e++, n++)
		if (strncmp(*e, key, kl) == 0 && (*e)[kl] == '=') {
			free(*e);
			*e = entry;
			return 0;
		}
	char **l = realloc(bus->activation_env, (n + 2) * sizeof(char *));
	if (!l) {
		free(entry);
		return -ENOMEM;
	}
	l[n] = entry;
	l[n + 1] = NULL;
	bus->activation_env = l;
	return 0;
}

/* ---- exec ------------------------------------------------------------------- */

typedef struct ChildReport {
	int stage;
	int err;
} ChildReport;

/* in the forked child: never returns.  @stdout_fd and @stderr_fd (or -1:
 * the daemon's own) become its stdout and stderr; @err_fd reports a failure */
static _noreturn_ void child_exec(char **argv, char **envp, const char *user, uid_t uid, gid_t gid, int stdout_fd,
				  int stderr_fd, int err_fd) {
	ChildReport rep = { .stage = 2 };
	sigset_t ss;

	sigemptyset(&ss);
	(void) sigprocmask(SIG_SETMASK, &ss, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void) signal(sig, SIG_DFL);
	(void) setsid();
	fd_limit_restore();

	/* as dbus-daemon (dbus-spawn-unix.c): the daemon's stdin (/dev/null,
	 * main.c), stdout and stderr, or the journal's streams */
	if (stdout_fd >= 0)
		(void) dup2(stdout_fd, STDOUT_FILENO);
	if (stderr_fd >= 0)
		(void) dup2(stderr_fd, STDERR_FILENO);
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		long max = sysconf(_SC_OPEN_MAX);
		if (max < 0 || max > 65536)
			max = 65536;
		for (int fd = 3; fd < max; fd++)
			if (fd != err_fd)
				(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
	}

	if (user) {
		if (initgroups(user, gid) < 0 || setgid(gid) < 0 || setuid(uid) < 0) {
			rep.err = errno;
			(void) !write(err_fd, &rep, sizeof(rep));
			_exit(1);
		}
	}

	execve(argv[0], argv, envp);
	rep.stage = 1;
	rep.err = errno;
	(void) !write(err_fd, &rep, sizeof(rep));
	_exit(1);
}

static void child_read_report(LauncherChild *ch) {
	ChildReport rep;
	ssize_t n;

	if (ch->err_fd < 0)
		return;
	do
		n = read(ch->err_fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n == sizeof(rep)) {
		ch->err_stage = rep.stage;
		ch->err_errno = rep.err;
	}
	/* EOF (exec succeeded), a report, or an error: done with the pipe */
	if (ch->ev_err) {
		event_free(ch->ev_err);
		ch->ev_err = NULL;
	}
	ch->err_fd = safe_close(ch->err_fd);
}

static void child_on_err(evutil_socket_t fd, short what, void *userdata) {
	LauncherChild *ch = userdata;

	child_read_report(ch);
	if (ch->err_fd >= 0 && ch->ev_err)
		event_add(ch->ev_err, NULL);
}

static LauncherChild *child_free(LauncherChild *ch) {
	if (!ch)
		return NULL;
	list_unlink(&ch->link);
	if (ch->ev_err)
		event_free(ch->ev_err);
	safe_close(ch->err_fd);
	free(ch->name);
	free(ch);
	return NULL;
}

/* a child of ours was reaped: tell the registry how it ended */
static void child_exited(LauncherChild *ch, int status) {
	Launcher *l = ch->launcher;
	_cleanup_free_ char *text = NULL;
	const char *error_name = NULL;
	uint64_t token = ch->token;

	child_read_report(ch);
	int stage = ch->err_stage, err = ch->err_errno;
	bool helper = ch->helper;
	_cleanup_free_ char *name = TAKE_PTR(ch->name);
	child_free(ch);
	if (!token)
		return;

	if (stage == 1) {
		error_name = DBUS_ERR("Spawn.ExecFailed");
		if (asprintf(&text, "Failed to execute program %s: %s", name, strerror(err)) < 0)
			text = NULL;
	} else if (stage == 2) {
		error_name = DBUS_ERR("Spawn.SetupFailed");
		if (asprintf(&text, "Failed to setup environment correctly: %s", strerror(err)) < 0)
			text = NULL;
	} else if (WIFEXITED(status)) {
		/* a service may daemonize: its parent exiting 0 is no failure */
		if (WEXITSTATUS(status) != 0 && helper) {
			const char *t;
			char buf[80];
			launch_helper_exit_error(WEXITSTATUS(status), &error_name, &t, buf, sizeof(buf));
			text = strdup(t);
		} else if (WEXITSTATUS(status) != 0) {
			error_name = DBUS_ERR("Spawn.ChildExited");
			if (asprintf(&text, "Process %s exited with status %d", name, WEXITSTATUS(status)) < 0)
				text = NULL;
		}
	} else if (WIFSIGNALED(status)) {
		error_name = DBUS_ERR("Spawn.ChildSignaled");
		if (asprintf(&text, "Process %s received signal %d", name, WTERMSIG(status)) < 0)
			text = NULL;
	} else {
		error_name = DBUS_ERR("Failed");
		if (asprintf(&text, "Process %s exited abnormally", name) < 0)
			text = NULL;
	}
	l->exited(l->userdata, token, error_name, text);
}

static void launcher_on_sigchld(evutil_socket_t sig, short what, void *userdata) {
	Launcher *l = userdata;
	bool again = true;

	/* only our own children: nothing else in the daemon forks */
	while (again) {
		LauncherChild *ch;
		again = false;
		list_for_each_entry(ch, &l->children, link) {
			int status;
			pid_t p = waitpid(ch->pid, &status, WNOHANG);
			if (p == ch->pid || (p < 0 && errno == ECHILD)) {
				if (p < 0)
					status = 0;
				child_exited(ch, status);
				again = true;	/* the list changed */
				break;
			}
		}
	}
}

/*
 * the launch helper that starts a service of User= @user, or NULL to exec
 * it ourselves: the
 * configured <servicehelper> (dbus-daemon's, which the stock system.conf
 * names, is replaced by ours when it is not installed); else, on a system
 * bus whose daemon is not root, ours for a service whose User= is not the
 * daemon's user, when it is installed setuid root
 */
const char *launcher_helper(Launcher *l, const char *user) {
	const BusConfig *c = l->bus->config;
	struct passwd *pw;
	struct stat st;

	if (c && c->servicehelper) {
		if (streq(c->servicehelper, DBUS_DAEMON_LAUNCH_HELPER) && access(c->servicehelper, X_OK) < 0)
			return LAUNCH_HELPER_PATH;
		return c->servicehelper;
	}
	if (!l->bus->is_system || geteuid() == 0 || !user)
		return NULL;
	pw = getpwnam(user);
	if (pw && pw->pw_uid == geteuid())
		return NULL;
	if (stat(LAUNCH_HELPER_PATH, &st) < 0 || st.st_uid != 0 || !(st.st_mode & S_ISUID))
		return NULL;
	return LAUNCH_HELPER_PATH;
}

/* the argv to execute: the Exec line, or "HELPER NAME" (as dbus-daemon
 * runs it), split as an Exec line */
static int launcher_argv(const char *helper, const char *name, const char *exec, char ***ret_argv,
			 const char **ret_error, char **ret_text) {
	_cleanup_free_ char *command = NULL;
	int r;

	if (helper && asprintf(&command, "%s %s", helper, name) < 0) {
		command = NULL;
		return -ENOMEM;
	}
	r = service_exec_split(command ? command : exec, ret_argv);
	if (r == -EINVAL) {
		*ret_error = DBUS_ERR("InvalidArgs");
		*ret_text = strdup("Unclosed quotes in command line");
		return r;
	}
	if (r < 0)
		return r;
	if (!(*ret_argv)[0]) {
		*ret_error = DBUS_ERR("Spawn.ExecFailed");
		(void) !asprintf(ret_text, "Failed to execute program %s: %s", name, strerror(ENOENT));
		return -ENOENT;
	}
	return 0;
}

/* User= is for system bus activation; only root can become someone:
 * *@ret_as_user stays NULL when the service runs as the daemon's user */
static int launcher_service_user(const char *name, const char *user, char **ret_as_user, uid_t *ret_uid,
				 gid_t *ret_gid, const char **ret_error, char **ret_text) {
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		*ret_error = DBUS_ERR("Spawn.SetupFailed");
		(void) !asprintf(ret_text, "Failed to setup environment correctly: user \"%s\" does not exist", user);
		return -ESRCH;
	}
	if (geteuid() == 0) {
		if (!(*ret_as_user = strdup(pw->pw_name)))
			return -ENOMEM;
		*ret_uid = pw->pw_uid;
		*ret_gid = pw->pw_gid;
	} else if (pw->pw_uid != geteuid())
		log_debug("Not running as root: activating %s as uid %u, not as user %s", name, (unsigned) geteuid(),
			  user);
	return 0;
}

static LauncherChild *child_new(Launcher *l, const char *name, bool helper) {
	LauncherChild *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->launcher = l;
	ch->err_fd = -1;
	ch->helper = helper;
	list_init(&ch->link);
	if (!(ch->name = strdup(name))) {
		free(ch);
		return NULL;
	}
	return ch;
}

/* the parent's side of a fork: @err_fd is where the child says why its
 * exec failed */
static void child_started(LauncherChild *ch, pid_t pid, int err_fd, uint64_t token) {
	Launcher *l = ch->launcher;

	ch->pid = pid;
	ch->err_fd = err_fd;
	ch->token = token;
	(void) fcntl(ch->err_fd, F_SETFL, O_NONBLOCK);
	ch->ev_err = event_new(l->bus->base, ch->err_fd, EV_READ, child_on_err, ch);
	if (ch->ev_err)
		event_add(ch->ev_err, NULL);
	list_link_tail(&l->children, &ch->link);
}

int launcher_spawn(Launcher *l, const char *name, const char *exec, const char *user, uint64_t token,
		   LauncherChild **ret_child, const char **ret_error, char **ret_text) {
	const char *helper = launcher_helper(l, user);
	_cleanup_strv_free_ char **argv = NULL, **envp = NULL;
	_cleanup_free_ char *as_user = NULL;
	LauncherChild *ch;
	uid_t uid = 0;
	gid_t gid = 0;
	int p[2];
	pid_t pid;
	int r;

	r = launcher_argv(helper, name, exec, &argv, ret_error, ret_text);
	if (r < 0)
		return r;
	if (!helper && l->bus->is_system && user) {
		r = launcher_service_user(name, user, &as_user, &uid, &gid, ret_error, ret_text);
		if (r < 0)
			return r;
	}
	r = launcher_build_env(l, &envp);
	if (r < 0)
		return r;

	ch = child_new(l, name, helper != NULL);
	if (!ch)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		child_free(ch);
		return r;
	}
	/* as dbus-daemon when it logs to syslog (DBUS_SPAWN_REDIRECT_OUTPUT):
	 * the service's stdout and stderr go to the journal under its name,
	 * where there is one; else it keeps the daemon's */
	_cleanup_close_ int stdout_fd = -1, stderr_fd = -1;
	if (log_get_target() & LOG_TARGET_SYSLOG) {
		stdout_fd = sd_journal_stream_fd(name, LOG_INFO, false);
		stderr_fd = sd_journal_stream_fd(name, LOG_WARNING, false);
	}

	pid = fork();
	if (pid < 0) {
		r = -errno;
		safe_close(p[0]);
		safe_close(p[1]);
		child_free(ch);
		*ret_error = DBUS_ERR("NoMemory");
		(void) !asprintf(ret_text, "Failed to fork a new process %s: %s", name, strerror(-r));
		return r;
	}
	if (pid == 0) {
		safe_close(p[0]);
		child_exec(argv, envp, as_user, uid, gid, stdout_fd, stderr_fd, p[1]);
	}

	safe_close(p[1]);
	child_started(ch, pid, p[0], token);
	*ret_child = ch;
	return 0;
}

void launcher_child_detach(LauncherChild *ch) {
	if (ch)
		ch->token = 0;
}

void launcher_child_kill(LauncherChild *ch) {
	if (ch)
		(void) kill(ch->pid, SIGKILL);
}

/* ---- the launcher ------------------------------------------------------------ */

int launcher_new(Bus *bus, LauncherExitFn exited, void *userdata, Launcher **ret) {
	Launcher *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->bus = bus;
	l->exited = exited;
	l->userdata = userdata;
	list_init(&l->children);
	l->ev_sigchld = evsignal_new(bus->base, SIGCHLD, launcher_on_sigchld, l);
	if (!l->ev_sigchld) {
		free(l);
		return -ENOMEM;
	}
	event_add(l->ev_sigchld, NULL);
	*ret = l;
	return 0;
}

Launcher *launcher_free(Launcher *l) {
	if (!l)
		return NULL;
	while (!list_is_empty(&l->children))
		child_free(list_first_entry(&l->children, LauncherChild, link));
	if (l->ev_sigchld)
		event_free(l->ev_sigchld);
	free(l->address);
	free(l);
	return NULL;
}
