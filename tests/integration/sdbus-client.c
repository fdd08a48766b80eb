/* sdbus-client: sd-bus (libsystemd) against the bus at $DBUS_SESSION_BUS_ADDRESS.
 *
 *   sdbus-client [MODE...]     MODE: hello name call signal fd creds (default: all)
 *
 * Every connection is made as sd_bus_open_user() would, but to the given
 * address: sd_bus_new + sd_bus_set_address + sd_bus_set_bus_client(1) +
 * sd_bus_start (which does Hello).  A server connection, served by a thread
 * of its own, owns a name and exports /com/example/Sdbus; a second
 * connection calls it.  Prints TAP ("ok N - ...", "not ok N - ...", "1..N").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#define SVC_NAME "com.example.Sdbus.Call"
#define SVC_PATH "/com/example/Sdbus"
#define SVC_IFACE "com.example.Sdbus"

static int tap_n;
static int tap_failed;

static void tap(bool good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(bool good, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", good ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!good)
		tap_failed++;
}

static const char *address;

static int open_bus(sd_bus **ret, const char *description)
{
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r < 0)
		return r;
	r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_set_description(bus, description);
	if (r >= 0)
		r = sd_bus_negotiate_fds(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

static sd_bus *must_open(const char *description)
{
	sd_bus *bus;
	int r = open_bus(&bus, description);

	if (r < 0) {
		tap(false, "connect %s: %s", description, strerror(-r));
		printf("1..%d\n", tap_n);
		exit(1);
	}
	return bus;
}

static const char *unique(sd_bus *bus)
{
	const char *u = NULL;

	if (sd_bus_get_unique_name(bus, &u) < 0)
		return "?";
	return u;
}

/* GetNameOwner through the driver; returns a malloc'ed string or an error name */
static char *name_owner(sd_bus *bus, const char *name)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *s;
	char *ret;

	if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "GetNameOwner", &error, &reply, "s", name) < 0) {
		ret = strdup(error.name ? error.name : "error");
		sd_bus_error_free(&error);
		return ret;
	}
	ret = sd_bus_message_read(reply, "s", &s) > 0 ? strdup(s) : strdup("?");
	sd_bus_message_unref(reply);
	return ret;
}

/* ------------------------------------------------------------ the server */
static sd_bus *server;
static atomic_bool server_stop;
static pthread_t server_thread;
static atomic_int signal_count;

static int m_echo(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *s;
	int r = sd_bus_message_read(m, "s", &s);

	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "s", s);
}

static int m_sum(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const int32_t *v;
	size_t size;
	int64_t sum = 0;
	int r = sd_bus_message_read_array(m, 'i', (const void **)&v, &size);

	if (r < 0)
		return r;
	for (size_t i = 0; i < size / sizeof(*v); i++)
		sum += v[i];
	return sd_bus_reply_method_return(m, "x", sum);
}

static int m_fail(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return sd_bus_error_set(error, "com.example.Sdbus.Error.Failed", "failed on purpose");
}

static int m_never(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return 1;	/* handled, no reply ever */
}

static int m_read_fd(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	char buf[256];
	ssize_t k, len = 0;
	int fd, r = sd_bus_message_read(m, "h", &fd);

	if (r < 0)
		return r;
	while (len < (ssize_t)sizeof(buf) - 1 && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += k;
	buf[len] = 0;
	return sd_bus_reply_method_return(m, "s", buf);
}

static int m_get_fd(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	int p[2], r;
	const char *data = "data from sd-bus";

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (write(p[1], data, strlen(data)) < 0)
		r = -errno;
	else
		r = sd_bus_reply_method_return(m, "h", p[0]);	/* the message dups the fd */
	close(p[0]);
	close(p[1]);
	return r;
}

static int m_emit(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *member, *arg;
	int r = sd_bus_message_read(m, "ss", &member, &arg);

	if (r < 0)
		return r;
	r = sd_bus_emit_signal(sd_bus_message_get_bus(m), SVC_PATH, SVC_IFACE, member, "s", arg);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "");
}

/* who called: the bus's credentials of the sender */
static int m_whoami(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	sd_bus_creds *c = NULL;
	pid_t pid = 0;
	uid_t uid = (uid_t)-1;
	const char *u = "";
	int r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_UNIQUE_NAME, &c);

	if (r < 0)
		return r;
	(void)sd_bus_creds_get_pid(c, &pid);
	(void)sd_bus_creds_get_euid(c, &uid);
	(void)sd_bus_creds_get_unique_name(c, &u);
	r = sd_bus_reply_method_return(m, "uus", (uint32_t)pid, (uint32_t)uid, u);
	sd_bus_creds_unref(c);
	return r;
}

static const sd_bus_vtable vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("Echo", "s", "s", m_echo, 0),
	SD_BUS_METHOD("Sum", "ai", "x", m_sum, 0),
	SD_BUS_METHOD("Fail", "", "", m_fail, 0),
	SD_BUS_METHOD("NeverReply", "", "", m_never, 0),
	SD_BUS_METHOD("ReadFd", "h", "s", m_read_fd, 0),
	SD_BUS_METHOD("GetFd", "", "h", m_get_fd, 0),
	SD_BUS_METHOD("Emit", "ss", "", m_emit, 0),
	SD_BUS_METHOD("WhoAmI", "", "uus", m_whoami, 0),
	SD_BUS_SIGNAL("Hello", "s", 0),
	SD_BUS_VTABLE_END
};

static void *serve(void *arg)
{
	while (!atomic_load(&server_stop)) {
		int r = sd_bus_process(server, NULL);

		if (r < 0)
			break;
		if (r == 0)
			sd_bus_wait(server, 100 * 1000);
	}
	return NULL;
}

static bool start_server(void)
{
	int r;

	atomic_store(&server_stop, false);
	server = must_open("server");
	r = sd_bus_add_object_vtable(server, NULL, SVC_PATH, SVC_IFACE, vtable, NULL);
	if (r >= 0)
		r = sd_bus_request_name(server, SVC_NAME, 0);
	if (r < 0) {
		tap(false, "server: export and own " SVC_NAME ": %s", strerror(-r));
		return false;
	}
	return pthread_create(&server_thread, NULL, serve, NULL) == 0;
}

static void stop_server(void)
{
	if (!server)
		return;
	atomic_store(&server_stop, true);
	pthread_join(server_thread, NULL);
	sd_bus_flush_close_unref(server);
	server = NULL;
}

/* ------------------------------------------------------------ modes */
static void mode_hello(void)
{
	sd_bus *bus = must_open("hello");
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_id128_t id;
	const char *u = unique(bus), *s = NULL, *g;
	char want[33] = "", got[33];
	int r;

	tap(strncmp(u, ":1.", 3) == 0 && strlen(u) > 3, "Hello: the unique name %s is :1.N", u);
	tap(sd_bus_is_bus_client(bus) > 0, "sd_bus_is_bus_client");
	r = sd_bus_get_bus_id(bus, &id);
	g = strstr(address, "guid=");
	if (g)
		snprintf(want, sizeof(want), "%.32s", g + 5);
	tap(r >= 0 && (!g || strcmp(sd_id128_to_string(id, got), want) == 0),
	    "sd_bus_get_bus_id is the server GUID of the address (%s)", r >= 0 ? sd_id128_to_string(id, got) : strerror(-r));
	r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "GetId", &error, &reply, "");
	if (r >= 0)
		r = sd_bus_message_read(reply, "s", &s);
	tap(r > 0 && s && strlen(s) == 32, "driver GetId: %s", s ? s : error.message ? error.message : strerror(-r));
	sd_bus_message_unref(reply);
	sd_bus_error_free(&error);
	r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.Peer",
			       "Ping", &error, NULL, "");
	tap(r >= 0, "driver Peer.Ping%s%s", r < 0 ? ": " : "", r < 0 ? (error.name ? error.name : strerror(-r)) : "");
	sd_bus_error_free(&error);
	r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "NoSuchMethod", &error, NULL, "");
	tap(r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.UnknownMethod"),
	    "an unknown driver method: UnknownMethod (%s)", error.name ? error.name : "no error");
	sd_bus_error_free(&error);
	sd_bus_flush_close_unref(bus);
}

static void mode_name(void)
{
	sd_bus *a = must_open("name-a"), *b = must_open("name-b");
	const char *name = "com.example.Sdbus.Name";
	char **names = NULL, *o;
	bool listed = false;
	int r;

	r = sd_bus_request_name(a, name, 0);
	tap(r > 0, "sd_bus_request_name of a free name: acquired (%d)", r);
	o = name_owner(b, name);
	tap(strcmp(o, unique(a)) == 0, "GetNameOwner is the requester (%s)", o);
	free(o);
	r = sd_bus_request_name(a, name, 0);
	tap(r == 0 || r == -EALREADY, "requesting it again: already owner (%d)", r);
	r = sd_bus_request_name(b, name, 0);
	tap(r == -EEXIST, "sd_bus_request_name by another connection without QUEUE: -EEXIST (%s)", strerror(-r));
	r = sd_bus_request_name(b, name, SD_BUS_NAME_QUEUE);
	tap(r == 0, "sd_bus_request_name with SD_BUS_NAME_QUEUE: queued (%d)", r);
	r = sd_bus_list_names(b, &names, NULL);
	for (char **n = names; r >= 0 && n && *n; n++)
		listed |= strcmp(*n, name) == 0;
	tap(r >= 0 && listed, "sd_bus_list_names has the name");
	for (char **n = names; n && *n; n++)
		free(*n);
	free(names);
	r = sd_bus_release_name(a, name);
	tap(r >= 0, "sd_bus_release_name by the owner (%d)", r);
	o = name_owner(a, name);
	tap(strcmp(o, unique(b)) == 0, "the queued connection owns the name now (%s)", o);
	free(o);
	r = sd_bus_release_name(a, name);
	tap(r == -ESRCH || r == -EADDRINUSE, "releasing a name one does not own: -ESRCH/-EADDRINUSE (%s)", strerror(-r));
	sd_bus_flush_close_unref(a);
	sd_bus_flush_close_unref(b);
}

static void mode_call(void)
{
	sd_bus *c;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	const char *s = NULL;
	int64_t sum = 0;
	uint64_t t0;
	struct timespec ts;
	int r;

	if (!start_server())
		return;
	c = must_open("client");
	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "Echo", &error, &reply, "s", "héllo wörld");
	if (r >= 0)
		r = sd_bus_message_read(reply, "s", &s);
	tap(r > 0 && strcmp(s, "héllo wörld") == 0, "call the other connection's name: Echo (%s)",
	    r > 0 ? s : error.name ? error.name : strerror(-r));
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);

	r = sd_bus_message_new_method_call(c, &m, SVC_NAME, SVC_PATH, SVC_IFACE, "Sum");
	if (r >= 0) {
		int32_t v[1000];

		for (int i = 0; i < 1000; i++)
			v[i] = i * 1000;
		r = sd_bus_message_append_array(m, 'i', v, sizeof(v));
	}
	if (r >= 0)
		r = sd_bus_call(c, m, 0, &error, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "x", &sum);
	tap(r > 0 && sum == 499500000LL, "Sum of an array of 1000 int32: %lld", (long long)sum);
	m = sd_bus_message_unref(m);
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, unique(server), SVC_PATH, SVC_IFACE, "Echo", &error, &reply, "s", "by unique name");
	tap(r >= 0, "call by the unique name %s", unique(server));
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "Fail", &error, NULL, "");
	tap(r < 0 && sd_bus_error_has_name(&error, "com.example.Sdbus.Error.Failed") &&
	    error.message && strcmp(error.message, "failed on purpose") == 0,
	    "a method error comes back with its name and message (%s)", error.name ? error.name : "none");
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "NoSuch", &error, NULL, "");
	tap(r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.UnknownMethod"),
	    "an unknown method of the server: UnknownMethod (%s)", error.name ? error.name : "none");
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, "com.example.Sdbus.Nobody", "/", "com.example.X", "Y", &error, NULL, "");
	tap(r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.ServiceUnknown"),
	    "a call to a name nobody owns: ServiceUnknown (%s)", error.name ? error.name : "none");
	sd_bus_error_free(&error);

	r = sd_bus_message_new_method_call(c, &m, SVC_NAME, SVC_PATH, SVC_IFACE, "NeverReply");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	if (r >= 0)
		r = sd_bus_call(c, m, 300 * 1000, &error, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000 - t0;
	tap(r == -ETIMEDOUT && t0 >= 250000 && t0 < 5000000, "a call that is never answered times out after 300 ms (%s, %llu ms)",
	    strerror(-r), (unsigned long long)t0 / 1000);
	m = sd_bus_message_unref(m);
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "Echo", &error, &reply, "s", "still there");
	tap(r >= 0, "the server still answers after that");
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);

	sd_bus_flush_close_unref(c);
	stop_server();
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *s;

	if (sd_bus_message_read(m, "s", &s) > 0 && strcmp(s, userdata) == 0)
		atomic_fetch_add(&signal_count, 1);
	else
		atomic_fetch_add(&signal_count, 1000);	/* anything else is wrong */
	return 0;
}

static int on_fence(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	*(bool *)userdata = true;
	return 0;
}

/* process c until *flag or 5 s */
static bool process_until(sd_bus *c, bool *flag)
{
	for (int i = 0; i < 500 && !*flag; i++) {
		int r = sd_bus_process(c, NULL);

		if (r < 0)
			return false;
		if (r == 0)
			sd_bus_wait(c, 10 * 1000);
	}
	return *flag;
}

/* a filter sees every message the bus delivers, whatever the local matches */
static int seen_wanted, seen_other_member, seen_other_sender;

static int count_filter(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *s = NULL;

	if (!sd_bus_message_is_signal(m, SVC_IFACE, NULL))
		return 0;
	(void)sd_bus_message_read(m, "s", &s);
	(void)sd_bus_message_rewind(m, true);
	if (s && strcmp(s, "wanted") == 0)
		seen_wanted++;
	else if (s && strcmp(s, "other member") == 0)
		seen_other_member++;
	else if (s && strcmp(s, "from another sender") == 0)
		seen_other_sender++;
	return 0;
}

static void mode_signal(void)
{
	sd_bus *c, *other;
	sd_bus_slot *slot = NULL, *fence_slot = NULL, *filter = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	bool fenced = false;
	int r;

	if (!start_server())
		return;
	c = must_open("subscriber");
	other = must_open("other-sender");
	atomic_store(&signal_count, 0);
	r = sd_bus_add_filter(c, &filter, count_filter, NULL);
	if (r >= 0)
		r = sd_bus_match_signal(c, &slot, SVC_NAME, SVC_PATH, SVC_IFACE, "Hello", on_signal, (void *)"wanted");
	tap(r >= 0, "sd_bus_match_signal (sender, path, interface, member)%s%s", r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
	if (r >= 0)
		r = sd_bus_match_signal(c, &fence_slot, NULL, "/fence", "com.example.Fence", "Fence", on_fence, &fenced);
	/* the same signal from another sender, then a fence from it: once the
	 * fence is here, the other sender's signal would be too */
	sd_bus_emit_signal(other, SVC_PATH, SVC_IFACE, "Hello", "s", "from another sender");
	sd_bus_emit_signal(other, "/fence", "com.example.Fence", "Fence", "");
	sd_bus_flush(other);
	/* the server emits a signal of another member, then the matching one;
	 * each before its method return, so they are here when the call returns */
	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "Emit", &error, NULL, "ss", "Other", "other member");
	sd_bus_error_free(&error);
	if (r >= 0)
		r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "Emit", &error, NULL, "ss", "Hello", "wanted");
	tap(r >= 0, "the server emits its signals%s%s", r < 0 ? ": " : "", r < 0 ? (error.name ? error.name : strerror(-r)) : "");
	sd_bus_error_free(&error);
	tap(process_until(c, &fenced), "the other sender's fence signal arrives");
	while (sd_bus_process(c, NULL) > 0)
		;
	tap(atomic_load(&signal_count) == 1 && seen_wanted == 1,
	    "the matching signal reaches the subscriber once (callback %d, filter %d)", atomic_load(&signal_count), seen_wanted);
	tap(seen_other_member == 0, "a signal of another member is not delivered (%d)", seen_other_member);
	tap(seen_other_sender == 0, "the same signal from another sender is not delivered (%d)", seen_other_sender);
	sd_bus_slot_unref(slot);
	sd_bus_slot_unref(fence_slot);
	sd_bus_slot_unref(filter);
	sd_bus_flush_close_unref(other);
	sd_bus_flush_close_unref(c);
	stop_server();
}

static void mode_fd(void)
{
	sd_bus *c;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *s = NULL;
	char buf[64] = "";
	int p[2], fd, r;
	ssize_t k;

	if (!start_server())
		return;
	c = must_open("fd-client");
	tap(sd_bus_can_send(c, SD_BUS_TYPE_UNIX_FD) > 0, "sd_bus_can_send(UNIX_FD): the bus negotiated fd passing");
	if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "through a pipe", 14) != 14)
		abort();
	close(p[1]);
	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "ReadFd", &error, &reply, "h", p[0]);
	close(p[0]);
	if (r >= 0)
		r = sd_bus_message_read(reply, "s", &s);
	tap(r > 0 && strcmp(s, "through a pipe") == 0, "an fd in a method call: the server read \"%s\"",
	    r > 0 ? s : error.name ? error.name : strerror(-r));
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);

	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "GetFd", &error, &reply, "");
	if (r >= 0)
		r = sd_bus_message_read(reply, "h", &fd);
	k = r > 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (k > 0)
		buf[k] = 0;
	tap(k > 0 && strcmp(buf, "data from sd-bus") == 0, "an fd in a reply: read \"%s\"", buf);
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);
	sd_bus_flush_close_unref(c);
	stop_server();
}

static const char *self_comm(void)
{
	static char comm[64];
	FILE *f = fopen("/proc/self/comm", "re");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	return comm;
}

static void mode_creds(void)
{
	sd_bus *c;
	sd_bus_creds *cr = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	pid_t pid = 0;
	uid_t uid = (uid_t)-1, euid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	const char *u = NULL, *comm = NULL, *bus_pid = getenv("BUS_PID");
	uint32_t wpid = 0, wuid = 0;
	int r;

	if (!start_server())
		return;
	c = must_open("creds-client");
	/* what the bus itself knows (GetConnectionCredentials: ProcessID,
	 * UnixUserID, which sd-bus reports as the EUID), no /proc */
	r = sd_bus_get_name_creds(c, SVC_NAME, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_UNIQUE_NAME, &cr);
	tap(r >= 0, "sd_bus_get_name_creds(PID|EUID|UNIQUE_NAME)%s%s", r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
	if (r >= 0) {
		r = sd_bus_creds_get_pid(cr, &pid);
		tap(r >= 0 && pid == getpid(), "creds: the pid of the owner (%d, want %d)", (int)pid, (int)getpid());
		r = sd_bus_creds_get_euid(cr, &euid);
		tap(r >= 0 && euid == geteuid(), "creds: the uid of the owner (%d)", (int)euid);
		r = sd_bus_creds_get_unique_name(cr, &u);
		tap(r >= 0 && strcmp(u, unique(server)) == 0, "creds: the unique name of the owner (%s)", r >= 0 ? u : "none");
		cr = sd_bus_creds_unref(cr);
	}
	/* with AUGMENT sd-bus completes them from /proc/PID */
	euid = (uid_t)-1;
	r = sd_bus_get_name_creds(c, SVC_NAME, SD_BUS_CREDS_PID | SD_BUS_CREDS_UID | SD_BUS_CREDS_GID |
				  SD_BUS_CREDS_COMM | SD_BUS_CREDS_AUGMENT, &cr);
	if (r >= 0) {
		(void)sd_bus_creds_get_uid(cr, &uid);
		(void)sd_bus_creds_get_gid(cr, &gid);
		(void)sd_bus_creds_get_comm(cr, &comm);
	}
	tap(r >= 0 && uid == getuid() && gid == getgid() && comm && strcmp(comm, self_comm()) == 0,
	    "creds with AUGMENT (from /proc of the bus's pid): uid %d, gid %d, comm %s", (int)uid, (int)gid, comm ? comm : "none");
	cr = sd_bus_creds_unref(cr);

	r = sd_bus_get_owner_creds(c, SD_BUS_CREDS_PID | SD_BUS_CREDS_UID, &cr);
	if (r >= 0)
		r = sd_bus_creds_get_pid(cr, &pid);
	tap(r >= 0 && (!bus_pid || pid == atoi(bus_pid)), "sd_bus_get_owner_creds: the bus daemon's pid (%d, BUS_PID %s)",
	    r >= 0 ? (int)pid : r, bus_pid ? bus_pid : "unset");
	cr = sd_bus_creds_unref(cr);

	/* and the server asking the bus who called it */
	r = sd_bus_call_method(c, SVC_NAME, SVC_PATH, SVC_IFACE, "WhoAmI", &error, &reply, "");
	if (r >= 0)
		r = sd_bus_message_read(reply, "uus", &wpid, &wuid, &u);
	tap(r > 0 && wpid == (uint32_t)getpid() && wuid == getuid() && strcmp(u, unique(c)) == 0,
	    "sd_bus_query_sender_creds in a method: the caller's pid %u, uid %u, name %s", wpid, wuid, r > 0 ? u : "?");
	reply = sd_bus_message_unref(reply);
	sd_bus_error_free(&error);
	sd_bus_flush_close_unref(c);
	stop_server();
}

static const struct {
	const char *name;
	void (*run)(void);
} modes[] = {
	{ "hello", mode_hello }, { "name", mode_name }, { "call", mode_call },
	{ "signal", mode_signal }, { "fd", mode_fd }, { "creds", mode_creds },
};

int main(int argc, char **argv)
{
	address = getenv("DBUS_SESSION_BUS_ADDRESS");
	if (!address) {
		fprintf(stderr, "sdbus-client: DBUS_SESSION_BUS_ADDRESS is not set\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		bool want = argc < 2;

		for (int j = 1; j < argc; j++)
			want |= strcmp(argv[j], modes[i].name) == 0;
		if (want) {
			printf("# %s\n", modes[i].name);
			modes[i].run();
		}
	}
	for (int j = 1; j < argc; j++) {
		bool known = false;

		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			known |= strcmp(argv[j], modes[i].name) == 0;
		if (!known)
			tap(false, "unknown mode %s", argv[j]);
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
