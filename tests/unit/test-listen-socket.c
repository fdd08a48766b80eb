/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-listen-socket.c - every transport of daemon/listen-socket.c
 * actually listening and accepting a connection; stale sockets, abstract
 * sockets, runtime=yes with and without XDG_RUNTIME_DIR, nonce-tcp and its
 * nonce check, systemd socket passing, address lists and error wording.
 * All traffic stays on the loopback interface.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#undef NDEBUG
#include <arpa/inet.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/address.h"
#include "daemon/listen-socket.h"
#include "util/macro.h"
#include "tests/unit/test.h"

static char tmp_root[] = "/tmp/test-listen-XXXXXX";


typedef struct {
	ListenSocket **l;
	size_t n;
} Opened;

static void opened_done(Opened *o) {
	o->l = listen_sockets_free(o->l, o->n);
	o->n = 0;
}
#define _cleanup_opened_ _cleanup_(opened_done)

static Opened open_ok(const char *address) {
	Opened o = {};
	char *err = NULL;
	int r;

	r = listen_address_open(address, &o.l, &o.n, &err);
	if (r < 0) {
		fprintf(stderr, "listen on '%s' failed: %d %s\n", address, r, strempty(err));
		assert(false);
	}
	assert(o.n >= 1);
	for (size_t i = 0; i < o.n; i++) {
		int fl = fcntl(o.l[i]->fd, F_GETFL), fd = fcntl(o.l[i]->fd, F_GETFD);

		assert(fl >= 0 && (fl & O_NONBLOCK));
		assert(fd >= 0 && (fd & FD_CLOEXEC));
		assert(o.l[i]->address);
	}
	return o;
}

static void open_fails(const char *address, int want_r, const char *want_error) {
	_cleanup_free_ char *err = NULL;
	ListenSocket **l = NULL;
	size_t n = 0;
	int r;

	r = listen_address_open(address, &l, &n, &err);
	if (r != want_r || (want_error && (!err || !streq(err, want_error)))) {
		fprintf(stderr, "'%s': got %d '%s', want %d '%s'\n", address, r, strempty(err), want_r, strempty(want_error));
		assert(false);
	}
	assert(!l);
}

static char *tmp_path(const char *name) {
	char *p;

	assert(asprintf(&p, "%s/%s", tmp_root, name) > 0);
	return p;
}

static int connect_unix(const char *path, bool abstract) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	socklen_t sl;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd >= 0);
	if (abstract) {
		memcpy(sa.sun_path + 1, path, len);
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
	} else {
		memcpy(sa.sun_path, path, len);
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	if (connect(fd, (struct sockaddr *)&sa, sl) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int connect_tcp(int family, const char *ip, unsigned port) {
	struct sockaddr_storage ss = {};
	socklen_t sl;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd >= 0);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		assert(inet_pton(AF_INET, ip, &in->sin_addr) == 1);
		sl = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		assert(inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1);
		sl = sizeof(*in6);
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* a client connects and sends a byte; the server side accepts and reads it */
static void check_accepts(const ListenSocket *s, int client) {
	_cleanup_close_ int c = client, a = -1;
	char b = 0;
	int fl;

	assert(c >= 0);
	assert(write(c, "x", 1) == 1);
	/* the connection is queued by the time connect() returned */
	assert(listen_socket_accept(s, &a) == 0);
	fl = fcntl(a, F_GETFL);
	assert(fl >= 0 && (fl & O_NONBLOCK));
	assert(fcntl(a, F_GETFD) & FD_CLOEXEC);
	for (int i = 0; i < 100 && read(a, &b, 1) != 1; i++)
		usleep(10000);
	assert(b == 'x');
	/* nothing else is pending */
	int a2 = -1;
	assert(listen_socket_accept(s, &a2) == -EAGAIN);
}

static unsigned port_of(const char *address) {
	const char *p = strstr(address, "port=");
	assert(p);
	return (unsigned)atoi(p + 5);
}

TEST(unix_path) {
	_cleanup_free_ char *path = tmp_path("sock a"), *addr = NULL, *esc = NULL, *printed = NULL;
	_cleanup_opened_ Opened o = {};
	struct stat st;

	assert(address_escape(path, &esc) == 0);
	assert(asprintf(&addr, "unix:path=%s", esc) > 0);
	o = open_ok(addr);
	assert(o.n == 1);
	assert(streq(o.l[0]->address, addr));
	assert(o.l[0]->is_unix && !o.l[0]->needs_nonce && !o.l[0]->from_systemd);
	assert(streq(o.l[0]->unlink_path, path));
	assert(stat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	assert((st.st_mode & 0777) == 0777);
	check_accepts(o.l[0], connect_unix(path, false));

	char guid[33];
	assert(address_guid_generate(guid) == 0);
	assert(listen_sockets_address(o.l, o.n, guid, &printed) == 0);
	_cleanup_free_ char *want = NULL;
	assert(asprintf(&want, "%s,guid=%s", addr, guid) > 0);
	assert(streq(printed, want));

	/* freeing unlinks the socket */
	opened_done(&o);
	assert(stat(path, &st) < 0 && errno == ENOENT);
}

TEST(unix_stale_socket) {
	_cleanup_free_ char *path = tmp_path("stale"), *addr = NULL, *err = NULL;
	_cleanup_opened_ Opened o = {};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ListenSocket **l = NULL;
	size_t n;
	int fd;

	/* a socket left by a dead server is replaced */
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(fd);
	assert(connect_unix(path, false) == -ECONNREFUSED);
	assert(asprintf(&addr, "unix:path=%s", path) > 0);
	o = open_ok(addr);
	check_accepts(o.l[0], connect_unix(path, false));
	opened_done(&o);

	/* any other file is left alone */
	FILE *f = fopen(path, "w");
	assert(f && fputs("keep", f) >= 0 && fclose(f) == 0);
	assert(listen_address_open(addr, &l, &n, &err) == -EADDRINUSE);
	_cleanup_free_ char *want = NULL;
	assert(asprintf(&want, "Failed to bind socket \"%s\": Address already in use", path) > 0);
	assert(streq(err, want));
	struct stat st;
	assert(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
	unlink(path);

	/* a missing directory */
	free(TAKE_PTR(err));
	assert(listen_address_open("unix:path=/nonexistent/dir/sock", &l, &n, &err) == -ENOENT);
	assert(streq(err, "Failed to bind socket \"/nonexistent/dir/sock\": No such file or directory"));
}

static void check_random_name(const char *dir, const ListenSocket *s) {
	const char *p = s->unlink_path;
	size_t dl = strlen(dir);

	assert(p && strncmp(p, dir, dl) == 0);
	if (dir[dl - 1] != '/')
		assert(p[dl++] == '/');
	assert(strncmp(p + dl, "dbus-", 5) == 0);
	assert(strlen(p + dl + 5) == 10);
	for (const char *c = p + dl + 5; *c; c++)
		assert((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'));
	assert(strncmp(s->address, "unix:path=", 10) == 0);
}

TEST(unix_dir_and_tmpdir) {
	_cleanup_free_ char *a1 = NULL, *a2 = NULL, *a3 = NULL, *slash = NULL;

	assert(asprintf(&a1, "unix:dir=%s", tmp_root) > 0);
	assert(asprintf(&a2, "unix:tmpdir=%s", tmp_root) > 0);
	assert(asprintf(&slash, "%s/", tmp_root) > 0);
	assert(asprintf(&a3, "unix:tmpdir=%s", slash) > 0);

	_cleanup_opened_ Opened o1 = open_ok(a1), o2 = open_ok(a2), o3 = open_ok(a3);
	check_random_name(tmp_root, o1.l[0]);
	check_random_name(tmp_root, o2.l[0]);	/* a filesystem socket, as dbus 1.14 */
	check_random_name(slash, o3.l[0]);
	assert(!streq(o1.l[0]->unlink_path, o2.l[0]->unlink_path));
	check_accepts(o1.l[0], connect_unix(o1.l[0]->unlink_path, false));
	check_accepts(o2.l[0], connect_unix(o2.l[0]->unlink_path, false));

	open_fails("unix:dir=/nonexistent", -ENOENT, NULL);
}

TEST(unix_runtime) {
	_cleanup_free_ char *rd = tmp_path("runtime"), *bus = NULL;
	const char *saved = getenv("XDG_RUNTIME_DIR");
	_cleanup_free_ char *saved_copy = saved ? strdup(saved) : NULL;

	assert(mkdir(rd, 0700) == 0);
	assert(asprintf(&bus, "%s/bus", rd) > 0);

	assert(unsetenv("XDG_RUNTIME_DIR") == 0);
	open_fails("unix:runtime=yes", -ENXIO, "\"XDG_RUNTIME_DIR\" is not set");
	assert(setenv("XDG_RUNTIME_DIR", "", 1) == 0);
	open_fails("unix:runtime=yes", -ENXIO, "\"XDG_RUNTIME_DIR\" is not set");

	assert(setenv("XDG_RUNTIME_DIR", rd, 1) == 0);
	{
		_cleanup_opened_ Opened o = open_ok("unix:runtime=yes");
		_cleanup_free_ char *want = NULL, *esc = NULL;

		assert(address_escape(bus, &esc) == 0);
		assert(asprintf(&want, "unix:path=%s", esc) > 0);
		assert(streq(o.l[0]->address, want));
		assert(streq(o.l[0]->unlink_path, bus));
		check_accepts(o.l[0], connect_unix(bus, false));
	}
	assert(access(bus, F_OK) < 0);

	open_fails("unix:runtime=no", -EINVAL,
		   "Could not parse server address: if given, the only value allowed for \"runtime\" is \"yes\"");
	/* a bad address stops the list; one that did not connect does not */
	open_fails("unix:runtime=no;unix:abstract=x", -EINVAL, NULL);

	if (saved_copy)
		setenv("XDG_RUNTIME_DIR", saved_copy, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	rmdir(rd);
}

TEST(unix_abstract) {
	_cleanup_free_ char *name = NULL, *addr = NULL, *esc = NULL;

	assert(asprintf(&name, "busbridge-test/%d x", (int)getpid()) > 0);
	assert(address_escape(name, &esc) == 0);
	assert(asprintf(&addr, "unix:abstract=%s", esc) > 0);
	{
		_cleanup_opened_ Opened o = open_ok(addr);

		assert(streq(o.l[0]->address, addr));
		assert(o.l[0]->is_unix);
		assert(!o.l[0]->unlink_path);
		check_accepts(o.l[0], connect_unix(name, true));
		/* the name is exact: no trailing NULs */
		_cleanup_free_ char *longer = NULL;
		assert(asprintf(&longer, "%s ", name) > 0);
		assert(connect_unix(longer, true) == -ECONNREFUSED);

		/* the name is taken */
		open_fails(addr, -EADDRINUSE, NULL);
	}
	/* and free again */
	_cleanup_opened_ Opened o2 = open_ok(addr);
	assert(o2.n == 1);
}

TEST(unix_errors) {
	char longname[200];

	open_fails("unix:", -EINVAL, "Server address of type unix was missing argument path or tmpdir or abstract or runtime or dir");
	open_fails("unix:guid=0123456789abcdef0123456789abcdef", -EINVAL,
		   "Server address of type unix was missing argument path or tmpdir or abstract or runtime or dir");
	open_fails("unix:path=/tmp/x,abstract=y", -EINVAL,
		   "Could not parse server address: cannot specify two of \"path\", \"tmpdir\", \"abstract\", \"runtime\" and \"dir\" at the same time");
	open_fails("unix:dir=/tmp,tmpdir=/tmp", -EINVAL, NULL);

	char a100[LISTEN_MAX_SUN_PATH + 2];

	memset(a100, 'a', sizeof(a100));
	a100[LISTEN_MAX_SUN_PATH + 1] = 0;		/* 100 characters */
	snprintf(longname, sizeof(longname), "unix:path=/%.*s", LISTEN_MAX_SUN_PATH, a100);	/* "/" + 99 */
	open_fails(longname, -ENAMETOOLONG, "Socket name too long");
	snprintf(longname, sizeof(longname), "unix:abstract=%.*s", LISTEN_MAX_SUN_PATH, a100);	/* 99 + the leading NUL */
	open_fails(longname, -ENAMETOOLONG, "Abstract socket name too long");
	snprintf(longname, sizeof(longname), "unix:abstract=%.*s", LISTEN_MAX_SUN_PATH - 1, a100);
	_cleanup_opened_ Opened o = open_ok(longname);
	assert(o.n == 1 && !o.l[0]->unlink_path);
}

TEST(unknown_and_launchd) {
	open_fails("foo:bar=baz", -EINVAL, "Unknown address type 'foo'");
	open_fails("UNIX:path=/tmp/x7", -EINVAL, "Unknown address type 'UNIX'");
	open_fails("launchd:env=FOO", -EOPNOTSUPP, "Address type 'launchd' is only supported on macOS");
	open_fails("", -EINVAL, "Empty address ''");
	open_fails("nocolon", -EINVAL, "Address does not contain a colon");
	open_fails("unix:path=/tmp/a b", -EINVAL, "In D-Bus address, character ' ' should have been escaped");
}

TEST(address_lists) {
	_cleanup_free_ char *p = tmp_path("list"), *a = NULL, *b = NULL, *c = NULL;

	/* the first entry that works wins; unknown ones are skipped */
	assert(asprintf(&a, "nonexist:;unix:path=%s;unix:path=/nonexistent/x", p) > 0);
	{
		_cleanup_opened_ Opened o = open_ok(a);
		assert(o.n == 1 && streq(o.l[0]->unlink_path, p));
	}
	/* entries that fail to open are skipped too */
	assert(asprintf(&b, "unix:path=/nonexistent/x;launchd:env=X;unix:path=%s", p) > 0);
	{
		_cleanup_opened_ Opened o = open_ok(b);
		assert(streq(o.l[0]->unlink_path, p));
	}
	/* if none works, the first failure is reported */
	open_fails("unix:path=/nonexistent/x;launchd:env=X", -ENOENT,
		   "Failed to bind socket \"/nonexistent/x\": No such file or directory");
	open_fails("launchd:env=X;unix:path=/nonexistent/x", -EOPNOTSUPP, NULL);
	/* but a malformed entry ends the search */
	assert(asprintf(&c, "unix:;unix:path=%s", p) > 0);
	open_fails(c, -EINVAL, NULL);
	assert(access(p, F_OK) < 0);
}

TEST(tcp_ipv4) {
	_cleanup_opened_ Opened o = open_ok("tcp:host=127.0.0.1");
	unsigned port;

	assert(o.n == 1);
	port = port_of(o.l[0]->address);
	assert(port > 0 && port < 65536);
	_cleanup_free_ char *want = NULL;
	assert(asprintf(&want, "tcp:host=127.0.0.1,port=%u,family=ipv4", port) > 0);
	assert(streq(o.l[0]->address, want));
	assert(!o.l[0]->is_unix && !o.l[0]->needs_nonce && !o.l[0]->unlink_path);
	check_accepts(o.l[0], connect_tcp(AF_INET, "127.0.0.1", port));

	/* host is what is printed, bind is where we listen; an explicit port */
	_cleanup_free_ char *addr = NULL;
	opened_done(&o);
	{
		_cleanup_opened_ Opened tmp = open_ok("tcp:host=127.0.0.1,port=0");
		port = port_of(tmp.l[0]->address);
	}
	assert(asprintf(&addr, "tcp:host=localhost,bind=127.0.0.1,port=%u,family=ipv4", port) > 0);
	_cleanup_opened_ Opened o2 = open_ok(addr);
	_cleanup_free_ char *want2 = NULL;
	assert(asprintf(&want2, "tcp:host=localhost,port=%u,family=ipv4", port) > 0);
	assert(streq(o2.l[0]->address, want2));
	check_accepts(o2.l[0], connect_tcp(AF_INET, "127.0.0.1", port));
	/* the port is taken now */
	open_fails(addr, -EADDRINUSE, NULL);
}

TEST(tcp_localhost) {
	/* the default host: localhost, every address it resolves to, one port */
	_cleanup_opened_ Opened o = open_ok("tcp:");
	unsigned port = port_of(o.l[0]->address);

	assert(strncmp(o.l[0]->address, "tcp:host=localhost,port=", 24) == 0);
	for (size_t i = 0; i < o.n; i++)
		assert(streq(o.l[i]->address, o.l[0]->address));
	_cleanup_free_ char *printed = NULL;
	assert(listen_sockets_address(o.l, o.n, NULL, &printed) == 0);
	assert(streq(printed, o.l[0]->address));

	/* whichever address family came first, IPv4 loopback must be served */
	int c = connect_tcp(AF_INET, "127.0.0.1", port);
	if (c >= 0) {
		bool accepted = false;
		for (size_t i = 0; i < o.n && !accepted; i++) {
			int a = -1;
			for (int k = 0; k < 50 && listen_socket_accept(o.l[i], &a) == -EAGAIN; k++)
				usleep(2000);
			if (a >= 0) {
				accepted = true;
				close(a);
			}
		}
		assert(accepted);
		close(c);
	}
}

TEST(tcp_ipv6) {
	ListenSocket **l = NULL;
	size_t n = 0;
	char *err = NULL;

	/* only where the machine has IPv6 loopback */
	if (listen_address_open("tcp:host=%3a%3a1,family=ipv6", &l, &n, &err) < 0) {
		test_skip("no IPv6 loopback: %s", strempty(err));
		free(err);
		return;
	}
	unsigned port = port_of(l[0]->address);
	assert(strstr(l[0]->address, "tcp:host=%3a%3a1,port=") == l[0]->address);
	assert(strstr(l[0]->address, ",family=ipv6"));
	check_accepts(l[0], connect_tcp(AF_INET6, "::1", port));
	listen_sockets_free(l, n);
}

TEST(tcp_errors) {
	open_fails("tcp:host=localhost,family=ipv7", -EINVAL, "Unknown address family ipv7");
	open_fails("tcp:host=localhost,port=99999", -EINVAL, "Invalid port number \"99999\"");
	open_fails("tcp:host=127.0.0.1,port=abc", -EINVAL,
		   "Failed to lookup host/port: \"127.0.0.1:abc\": Servname not supported for ai_socktype (-8)");
}

static void read_file(const char *path, uint8_t *buf, size_t want) {
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t tmp[64];

	assert(fd >= 0 && want < sizeof(tmp));
	assert(read(fd, tmp, sizeof(tmp)) == (ssize_t)want);
	memcpy(buf, tmp, want);
}

TEST(nonce_tcp) {
	_cleanup_free_ char *td = tmp_path("noncetmp"), *nonce_file = NULL, *nonce_dir = NULL;
	const char *saved = getenv("TMPDIR");
	_cleanup_free_ char *saved_copy = saved ? strdup(saved) : NULL;
	uint8_t file_nonce[LISTEN_NONCE_SIZE], buf[LISTEN_NONCE_SIZE];
	struct stat st;
	unsigned port;
	size_t filled;

	assert(mkdir(td, 0755) == 0);
	assert(setenv("TMPDIR", td, 1) == 0);
	{
		_cleanup_opened_ Opened o = open_ok("nonce-tcp:host=127.0.0.1");
		ListenSocket *s = o.l[0];
		_cleanup_free_ char *want = NULL, *esc = NULL;

		assert(s->needs_nonce && s->nonce_file && s->nonce_dir);
		nonce_file = strdup(s->nonce_file);
		nonce_dir = strdup(s->nonce_dir);
		port = port_of(s->address);
		/* the noncefile sits in a private directory in $TMPDIR */
		assert(strncmp(s->nonce_dir, td, strlen(td)) == 0);
		assert(strncmp(s->nonce_dir + strlen(td), "/dbus_nonce-", 12) == 0);
		assert(strlen(s->nonce_dir + strlen(td) + 12) == 8);
		assert(stat(s->nonce_dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
		assert(stat(s->nonce_file, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == LISTEN_NONCE_SIZE);
		read_file(s->nonce_file, file_nonce, LISTEN_NONCE_SIZE);
		assert(memcmp(file_nonce, s->nonce, LISTEN_NONCE_SIZE) == 0);
		assert(listen_socket_nonce_equal(s, file_nonce));
		assert(address_escape(s->nonce_file, &esc) == 0);
		assert(asprintf(&want, "nonce-tcp:host=127.0.0.1,port=%u,family=ipv4,noncefile=%s", port, esc) > 0);
		assert(streq(s->address, want));

		/* the right nonce, followed by the SASL handshake in the same write */
		{
			_cleanup_close_ int c = connect_tcp(AF_INET, "127.0.0.1", port), a = -1;
			char rest[8] = {};

			assert(c >= 0);
			assert(listen_socket_accept(s, &a) == 0);
			filled = 0;
			assert(listen_socket_check_nonce(s, a, buf, &filled) == 0);	/* nothing yet */
			assert(write(c, file_nonce, 5) == 5);
			usleep(20000);
			assert(listen_socket_check_nonce(s, a, buf, &filled) == 0);
			assert(filled == 5);
			uint8_t more[LISTEN_NONCE_SIZE - 5 + 5];
			memcpy(more, file_nonce + 5, LISTEN_NONCE_SIZE - 5);
			memcpy(more + LISTEN_NONCE_SIZE - 5, "\0AUTH", 5);
			assert(write(c, more, sizeof(more)) == (ssize_t)sizeof(more));
			usleep(20000);
			assert(listen_socket_check_nonce(s, a, buf, &filled) == 1);
			assert(filled == LISTEN_NONCE_SIZE);
			/* the handshake was not read */
			assert(recv(a, rest, sizeof(rest), MSG_DONTWAIT) == 5);
			assert(memcmp(rest, "\0AUTH", 5) == 0);
		}
		/* a wrong nonce */
		{
			_cleanup_close_ int c = connect_tcp(AF_INET, "127.0.0.1", port), a = -1;
			uint8_t bad[LISTEN_NONCE_SIZE];

			memcpy(bad, file_nonce, sizeof(bad));
			bad[15] ^= 1;
			assert(write(c, bad, sizeof(bad)) == (ssize_t)sizeof(bad));
			usleep(20000);
			assert(listen_socket_accept(s, &a) == 0);
			filled = 0;
			assert(listen_socket_check_nonce(s, a, buf, &filled) == -EACCES);
		}
		/* a client that hangs up early */
		{
			_cleanup_close_ int a = -1;
			int c = connect_tcp(AF_INET, "127.0.0.1", port);

			assert(write(c, file_nonce, 3) == 3);
			close(c);
			usleep(20000);
			assert(listen_socket_accept(s, &a) == 0);
			filled = 0;
			assert(listen_socket_check_nonce(s, a, buf, &filled) == -ECONNRESET);
		}
		assert(!listen_socket_nonce_equal(NULL, file_nonce));
	}
	/* freeing removes the noncefile and its directory */
	assert(access(nonce_file, F_OK) < 0 && errno == ENOENT);
	assert(access(nonce_dir, F_OK) < 0 && errno == ENOENT);

	/* plain tcp sockets have no nonce */
	{
		_cleanup_opened_ Opened o = open_ok("tcp:host=127.0.0.1");
		filled = 0;
		assert(!listen_socket_nonce_equal(o.l[0], file_nonce));
		assert(listen_socket_check_nonce(o.l[0], 0, buf, &filled) == -EINVAL);
	}

	if (saved_copy)
		setenv("TMPDIR", saved_copy, 1);
	else
		unsetenv("TMPDIR");
	rmdir(td);
}

/* systemd socket passing, in a child: LISTEN_FDS refers to fds 3.. */
static int systemd_child(int mode) {
	_cleanup_free_ char *path = tmp_path("systemd-sock"), *err = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ListenSocket **l = NULL;
	char pid[32];
	size_t n = 0;
	int fd, fd2, r;

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return 10;
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 11;
	if (mode != 2 && listen(fd, 5) < 0)
		return 12;
	if (fd != 3) {
		if (dup2(fd, 3) != 3)
			return 13;
		close(fd);
	}
	fd2 = socket(AF_INET, SOCK_STREAM, 0);
	if (mode == 1) {
		struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t sl = sizeof(in);

		if (bind(fd2, (struct sockaddr *)&in, sizeof(in)) < 0 || listen(fd2, 5) < 0)
			return 14;
		if (fd2 != 4 && dup2(fd2, 4) != 4)
			return 15;
		if (getsockname(4, (struct sockaddr *)&in, &sl) < 0)
			return 16;
		snprintf(pid, sizeof(pid), "%u", ntohs(in.sin_port));
		setenv("TEST_PORT", pid, 1);
	}
	if (fd2 != 4)
		close(fd2);

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", mode == 1 ? "2" : "1", 1);

	r = listen_address_open("systemd:", &l, &n, &err);
	if (mode == 2)
		return (r == -ENOTSOCK && streq(err, "Passed socket has wrong type.")) ? 0 : 20;
	if (r < 0 || n != (mode == 1 ? 2u : 1u)) {
		fprintf(stderr, "systemd: %d %zu %s\n", r, n, strempty(err));
		return 21;
	}
	/* LISTEN_FDS is consumed */
	if (getenv("LISTEN_FDS"))
		return 22;

	_cleanup_free_ char *want = NULL;
	if (asprintf(&want, "unix:path=%s", path) < 0)
		return 23;
	if (l[0]->fd != 3 || !l[0]->from_systemd || !l[0]->is_unix || !streq(l[0]->address, want) || l[0]->unlink_path)
		return 24;
	if (!(fcntl(3, F_GETFL) & O_NONBLOCK) || !(fcntl(3, F_GETFD) & FD_CLOEXEC))
		return 25;
	{
		int c = connect_unix(path, false), a = -1;

		if (c < 0 || listen_socket_accept(l[0], &a) < 0)
			return 26;
		close(a);
		close(c);
	}
	if (mode == 1) {
		_cleanup_free_ char *want4 = NULL;

		if (asprintf(&want4, "tcp:family=ipv4,port=%s,host=127.0.0.1", getenv("TEST_PORT")) < 0)
			return 27;
		if (l[1]->is_unix || !streq(l[1]->address, want4))
			return 28;
	}
	listen_sockets_free(l, n);
	/* systemd's socket file is not ours to remove */
	if (access(path, F_OK) < 0)
		return 29;
	unlink(path);

	/* a second time, nothing is passed any more */
	free(TAKE_PTR(err));
	r = listen_address_open("systemd:", &l, &n, &err);
	if (r != -ENOENT || !streq(err, "No socket received."))
		return 30;
	return 0;
}

TEST(systemd) {
	for (int mode = 0; mode < 3; mode++) {
		int status;
		pid_t pid = fork();

		assert(pid >= 0);
		if (pid == 0)
			_exit(systemd_child(mode));
		assert(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "systemd mode %d: status 0x%x\n", mode, status);
			assert(false);
		}
	}
	/* without LISTEN_FDS */
	unsetenv("LISTEN_FDS");
	open_fails("systemd:", -ENOENT, "No socket received.");
}

TEST(format_address) {
	_cleanup_free_ char *p1 = tmp_path("fa1"), *p2 = tmp_path("fa2"), *a1 = NULL, *a2 = NULL, *out = NULL;
	ListenSocket *both[2];

	assert(asprintf(&a1, "unix:path=%s", p1) > 0);
	assert(asprintf(&a2, "unix:path=%s", p2) > 0);
	_cleanup_opened_ Opened o1 = open_ok(a1), o2 = open_ok(a2);
	both[0] = o1.l[0];
	both[1] = o2.l[0];
	assert(listen_sockets_address(both, 2, "0123456789abcdef0123456789abcdef", &out) == 0);
	_cleanup_free_ char *want = NULL;
	assert(asprintf(&want, "%s,guid=0123456789abcdef0123456789abcdef;%s,guid=0123456789abcdef0123456789abcdef", a1, a2) > 0);
	assert(streq(out, want));
	assert(listen_sockets_address(both, 0, NULL, &out) == -EINVAL);
	assert(listen_sockets_address(both, 2, "nope", &out) == -EINVAL);
}

TEST(from_fd) {
	_cleanup_free_ char *path = tmp_path("fromfd");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ListenSocket *s = NULL;
	int fd, fl;

	/* a listening unix socket is adopted; the file is not ours */
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 1) == 0);
	assert(listen_socket_from_fd(fd, &s) == 0);
	assert(listen_socket_fd(s) == fd);
	assert(listen_socket_is_unix(s));
	assert(!listen_socket_nonce(s));
	_cleanup_free_ char *want = NULL;
	assert(asprintf(&want, "unix:path=%s", path) > 0);
	assert(streq(listen_socket_address(s), want));
	fl = fcntl(fd, F_GETFL);
	assert((fl & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
	check_accepts(s, connect_unix(path, false));
	listen_socket_free(s);
	assert(access(path, F_OK) == 0);
	assert(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
	unlink(path);

	/* an abstract one */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(sa.sun_path, 0, sizeof(sa.sun_path));
	memcpy(sa.sun_path + 1, "bb-fromfd", 9);
	assert(bind(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 10) == 0 && listen(fd, 1) == 0);
	assert(listen_socket_from_fd(fd, &s) == 0);
	assert(streq(listen_socket_address(s), "unix:abstract=bb-fromfd"));
	listen_socket_free(s);

	/* not listening, not a stream socket, not a socket */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert(listen_socket_from_fd(fd, &s) == -ENOTSOCK);
	close(fd);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert(listen_socket_from_fd(fd, &s) == -ENOTSOCK);
	close(fd);
	int p[2];
	assert(pipe(p) == 0);
	assert(listen_socket_from_fd(p[0], &s) == -ENOTSOCK);
	close(p[0]);
	close(p[1]);
	assert(listen_socket_fd(NULL) == -EBADF && !listen_socket_address(NULL));
}

static void rm_rf(const char *path) {
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d) {
		unlink(path);
		return;
	}
	while ((de = readdir(d))) {
		char *p;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		assert(asprintf(&p, "%s/%s", path, de->d_name) > 0);
		rm_rf(p);
		free(p);
	}
	closedir(d);
	rmdir(path);
}

int main(void) {
	signal(SIGPIPE, SIG_IGN);
	assert(mkdtemp(tmp_root));

	RUN(unix_path);
	RUN(unix_stale_socket);
	RUN(unix_dir_and_tmpdir);
	RUN(unix_runtime);
	RUN(unix_abstract);
	RUN(unix_errors);
	RUN(unknown_and_launchd);
	RUN(address_lists);
	RUN(tcp_ipv4);
	RUN(tcp_localhost);
	RUN(tcp_ipv6);
	RUN(tcp_errors);
	RUN(nonce_tcp);
	RUN(systemd);
	RUN(format_address);
	RUN(from_fd);

	rm_rf(tmp_root);
	return test_done();
}
