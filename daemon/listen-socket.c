/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * listen-socket.c - listening sockets for server addresses, following
 * libdbus 1.14: dbus-server.c (dbus_server_listen: try entries in order),
 * dbus-server-unix.c (unix:, systemd:), dbus-server-socket.c and
 * dbus-sysdeps-unix.c (tcp:, nonce-tcp:, the unix socket itself) and
 * dbus-nonce.c (noncefile).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon/address.h"
#include "daemon/listen-socket.h"
#include "util/macro.h"
#include "util/strutil.h"

/* outcome of one address entry, as DBusServerListenResult */
enum {
	LISTEN_OK,
	LISTEN_NOT_HANDLED,
	LISTEN_BAD_ADDRESS,		/* stop trying further entries */
	LISTEN_DID_NOT_CONNECT,		/* try the next entry */
};

typedef struct {
	ListenSocket **l;
	size_t n;
} SockList;

static void socklist_done(SockList *s) {
	listen_sockets_free(s->l, s->n);
	s->l = NULL;
	s->n = 0;
}

static ListenSocket *listen_socket_new(void) {
	ListenSocket *s = calloc(1, sizeof(*s));

	if (s)
		s->fd = -1;
	return s;
}

static int socklist_add(SockList *s, ListenSocket *sock) {
	ListenSocket **n = realloc(s->l, (s->n + 1) * sizeof(ListenSocket *));

	if (!n)
		return -ENOMEM;
	s->l = n;
	s->l[s->n++] = sock;
	return 0;
}

ListenSocket *listen_socket_free(ListenSocket *s) {
	if (!s)
		return NULL;
	safe_close(s->fd);
	if (s->unlink_path)
		(void)unlink(s->unlink_path);
	if (s->nonce_dir) {
		if (s->nonce_file)
			(void)unlink(s->nonce_file);
		(void)rmdir(s->nonce_dir);
	}
	free(s->address);
	free(s->nonce_file);
	free(s->unlink_path);
	free(s->nonce_dir);
	explicit_bzero(s->nonce, sizeof(s->nonce));
	free(s);
	return NULL;
}

ListenSocket **listen_sockets_free(ListenSocket **l, size_t n) {
	if (!l)
		return NULL;
	for (size_t i = 0; i < n; i++)
		listen_socket_free(l[i]);
	free(l);
	return NULL;
}

/* set *err (first message wins) and return @r */
_printf_(3, 4)
static int set_err(char **err, int r, const char *fmt, ...) {
	va_list ap;

	if (!err || *err)
		return r;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return r;
}

static int random_alnum(char *out, size_t n) {
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t b[64];

	assert(n <= sizeof(b));
	for (size_t got = 0; got < n;) {
		ssize_t k = getrandom(b + got, n - got, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)k;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = alnum[b[i] % (sizeof(alnum) - 1)];
	out[n] = 0;
	return 0;
}

static int fd_set_nonblock_cloexec(int fd) {
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* ---- unix ---- */

static int listen_unix_socket(const char *path, bool abstract, int *ret_fd, char **err) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	size_t len = strlen(path);
	socklen_t salen;

	if (abstract) {
		if (len + 1 > LISTEN_MAX_SUN_PATH)
			return set_err(err, -ENAMETOOLONG, "Abstract socket name too long");
		memcpy(sa.sun_path + 1, path, len);
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
	} else {
		struct stat st;

		if (len > LISTEN_MAX_SUN_PATH)
			return set_err(err, -ENAMETOOLONG, "Socket name too long");
		if (len == 0)
			return set_err(err, -EINVAL, "Socket name is empty");
		/*
		 * As dbus-daemon: remove a leftover socket, but never any other
		 * kind of file.  Note that this also takes the path over from a
		 * bus that is still running there.
		 */
		if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			(void)unlink(path);
		memcpy(sa.sun_path, path, len);
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_err(err, -errno, "Failed to create socket \"%s\": %m", path);
	if (bind(fd, (struct sockaddr *)&sa, salen) < 0)
		return set_err(err, -errno, "Failed to bind socket \"%s\": %m", path);
	if (listen(fd, SOMAXCONN) < 0)
		return set_err(err, -errno, "Failed to listen on socket \"%s\": %m", path);
	/* access is up to the directory and the bus policy, as in dbus-daemon */
	if (!abstract)
		(void)chmod(path, 0777);

	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int open_unix_path(const char *path, bool abstract, SockList *out, char **err) {
	_cleanup_(listen_socket_freep) ListenSocket *s = NULL;
	_cleanup_free_ char *esc = NULL;
	int r;

	s = listen_socket_new();
	if (!s)
		return -ENOMEM;
	r = address_escape(path, &esc);
	if (r < 0)
		return r;
	if (asprintf(&s->address, "unix:%s=%s", abstract ? "abstract" : "path", esc) < 0) {
		s->address = NULL;
		return -ENOMEM;
	}
	r = listen_unix_socket(path, abstract, &s->fd, err);
	if (r < 0)
		return r;
	s->is_unix = true;
	if (!abstract) {
		s->unlink_path = strdup(path);
		if (!s->unlink_path)
			return -ENOMEM;
	}
	r = socklist_add(out, s);
	if (r < 0)
		return r;
	s = NULL;
	return 0;
}

static int open_unix(const AddressEntry *e, SockList *out, char **err, int *result) {
	const char *path = address_entry_get(e, "path");
	const char *dir = address_entry_get(e, "dir");
	const char *tmpdir = address_entry_get(e, "tmpdir");
	const char *abstract = address_entry_get(e, "abstract");
	const char *runtime = address_entry_get(e, "runtime");
	int modes = !!path + !!dir + !!tmpdir + !!abstract + !!runtime;
	_cleanup_free_ char *full = NULL;
	int r;

	*result = LISTEN_BAD_ADDRESS;
	if (modes < 1)
		return set_err(err, -EINVAL, "Server address of type unix was missing argument path or tmpdir or abstract or runtime or dir");
	if (modes > 1)
		return set_err(err, -EINVAL, "Could not parse server address: cannot specify two of \"path\", \"tmpdir\", \"abstract\", \"runtime\" and \"dir\" at the same time");

	*result = LISTEN_DID_NOT_CONNECT;
	if (runtime) {
		const char *rd;

		if (!streq(runtime, "yes")) {
			*result = LISTEN_BAD_ADDRESS;
			return set_err(err, -EINVAL, "Could not parse server address: if given, the only value allowed for \"runtime\" is \"yes\"");
		}
		rd = secure_getenv("XDG_RUNTIME_DIR");
		if (!rd || !*rd)
			return set_err(err, -ENXIO, "\"XDG_RUNTIME_DIR\" is not set");
		full = path_join(rd, "bus");
		if (!full)
			return -ENOMEM;
		r = open_unix_path(full, false, out, err);
	} else if (dir || tmpdir) {
		/* dbus >= 1.13.x: tmpdir= is dir=, a filesystem socket with a random name */
		char name[sizeof("dbus-") + 10];

		memcpy(name, "dbus-", 5);
		r = random_alnum(name + 5, 10);
		if (r < 0)
			return set_err(err, r, "Failed to generate random socket name: %s", strerror(-r));
		full = path_join(dir ? dir : tmpdir, name);
		if (!full)
			return -ENOMEM;
		r = open_unix_path(full, false, out, err);
	} else if (path)
		r = open_unix_path(path, false, out, err);
	else
		r = open_unix_path(abstract, true, out, err);
	if (r < 0)
		return r;

	*result = LISTEN_OK;
	return 0;
}

/* ---- tcp and nonce-tcp ---- */

static const char *get_tmpdir(void) {
	static const char *const vars[] = { "TMPDIR", "TMP", "TEMP" };

	for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
		const char *v = secure_getenv(vars[i]);

		if (v && *v)
			return v;
	}
	return "/tmp";
}

/* a private directory with a file "nonce" holding LISTEN_NONCE_SIZE random bytes */
static int noncefile_create(char **ret_dir, char **ret_file, uint8_t nonce[static LISTEN_NONCE_SIZE], char **err) {
	_cleanup_free_ char *dir = NULL, *file = NULL;
	_cleanup_close_ int fd = -1;
	char rnd[9], name[sizeof("dbus_nonce-") + 8];
	size_t done = 0;
	int r;

	r = random_alnum(rnd, 8);
	if (r < 0)
		return set_err(err, r, "Failed to generate nonce: %s", strerror(-r));
	snprintf(name, sizeof(name), "dbus_nonce-%s", rnd);
	dir = path_join(get_tmpdir(), name);
	if (!dir)
		return -ENOMEM;
	file = path_join(dir, "nonce");
	if (!file)
		return -ENOMEM;
	if (mkdir(dir, 0700) < 0)
		return set_err(err, -errno, "Failed to create directory %s: %m", dir);

	for (size_t got = 0; got < LISTEN_NONCE_SIZE;) {
		ssize_t k = getrandom(nonce + got, LISTEN_NONCE_SIZE - got, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = set_err(err, -errno, "Failed to generate nonce: %m");
			goto fail;
		}
		got += (size_t)k;
	}

	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = set_err(err, -errno, "Failed to create nonce file %s: %m", file);
		goto fail;
	}
	while (done < LISTEN_NONCE_SIZE) {
		ssize_t k = write(fd, nonce + done, LISTEN_NONCE_SIZE - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = set_err(err, -errno, "Failed to write nonce file %s: %m", file);
			goto fail;
		}
		done += (size_t)k;
	}
	r = close_nointr(TAKE_FD(fd));
	if (r < 0) {
		set_err(err, r, "Failed to write nonce file %s: %s", file, strerror(-r));
		goto fail;
	}

	*ret_dir = TAKE_PTR(dir);
	*ret_file = TAKE_PTR(file);
	return 0;

fail:
	(void)unlink(file);
	(void)rmdir(dir);
	explicit_bzero(nonce, LISTEN_NONCE_SIZE);
	return r;
}

static int gai_to_errno(int gai, int saved_errno) {
	switch (gai) {
	case EAI_SYSTEM:
		return saved_errno > 0 ? -saved_errno : -EIO;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_FAMILY:
	case EAI_SOCKTYPE:
	case EAI_SERVICE:
		return -EINVAL;
	default:
		return -EADDRNOTAVAIL;
	}
}

static bool all_digits(const char *s) {
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* the sockets tcp_listen_all() has bound so far */
typedef struct {
	int *fds;
	size_t n;
	bool have4, have6;
	int first_bind_errno;
	char *port; /* the numeric port of the first socket */
} TcpSockets;

static void tcp_sockets_done(TcpSockets *t) {
	for (size_t i = 0; i < t->n; i++)
		safe_close(t->fds[i]);
	free(t->fds);
	free(t->port);
}

/* the numeric port @fd is bound to */
static int tcp_socket_port(int fd, const char *bind_host, const char *port, char **ret, char **err) {
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char buf[NI_MAXSERV];
	int gai;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return set_err(err, -errno, "Failed to retrieve socket name for \"%s:%s\": %m",
			       bind_host ? bind_host : "*", port);
	gai = getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, buf, sizeof(buf), NI_NUMERICHOST | NI_NUMERICSERV);
	if (gai != 0)
		return set_err(err, gai_to_errno(gai, errno), "Failed to resolve port \"%s:%s\": %s (%d)",
			       bind_host ? bind_host : "*", port, gai_strerror(gai), gai);
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

/* a listening socket on @a, added to @t: 1, or 0 when it could not be
 * bound (the first such errno is kept) */
static int tcp_listen_one(const struct addrinfo *a, const char *bind_host, const char *port, TcpSockets *t,
			  char **err) {
	_cleanup_close_ int fd = -1;
	int one = 1;
	int *nf;

	fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_err(err, -errno, "Failed to open socket: %m");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Nagle delays the small messages of the handshake */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	if (bind(fd, a->ai_addr, a->ai_addrlen) < 0) {
		if (!t->first_bind_errno)
			t->first_bind_errno = errno;
		return 0;
	}
	if (listen(fd, SOMAXCONN) < 0)
		return set_err(err, -errno, "Failed to listen on socket \"%s:%s\": %m", bind_host ? bind_host : "*",
			       port);

	nf = realloc(t->fds, (t->n + 1) * sizeof(int));
	if (!nf)
		return -ENOMEM;
	t->fds = nf;
	t->fds[t->n++] = TAKE_FD(fd);
	if (a->ai_family == AF_INET)
		t->have4 = true;
	else if (a->ai_family == AF_INET6)
		t->have6 = true;
	return 1;
}

/* listen on every address @bind_host and @port resolve to; *@ret_redo when
 * the kernel chose the port of the first socket and the lookup is to be
 * redone with it */
static int tcp_listen_resolved(const char *bind_host, const char *port, const struct addrinfo *hints,
			       TcpSockets *t, bool *ret_redo, char **err) {
	struct addrinfo *ai = NULL;
	int gai = getaddrinfo(bind_host, port, hints, &ai);
	int r = 0;

	*ret_redo = false;
	if (gai != 0 || !ai) {
		int saved = errno;

		return set_err(err, gai_to_errno(gai, saved), "Failed to lookup host/port: \"%s:%s\": %s (%d)",
			       bind_host ? bind_host : "*", port, gai_strerror(gai), gai);
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		r = tcp_listen_one(a, bind_host, port, t, err);
		if (r < 0)
			break;
		if (r == 0 || t->port)
			continue;
		r = tcp_socket_port(t->fds[t->n - 1], bind_host, port, &t->port, err);
		if (r < 0)
			break;
		if (streq(port, "0")) {
			/* the kernel chose: bind the others to the same port */
			*ret_redo = true;
			break;
		}
	}
	freeaddrinfo(ai);
	return r < 0 ? r : 0;
}

/*
 * Bind every address @bind resolves to, as _dbus_listen_tcp_socket(): bind
 * failures are skipped (an IPv6 wildcard may already cover IPv4, IPv6 may
 * be disabled), and after the kernel picked a port for the first socket the
 * lookup is redone with that port so that all sockets share it.
 */
static int tcp_listen_all(const char *bind_host, const char *host, const char *port, int family,
			  int **ret_fds, size_t *ret_n, char **ret_port, const char **ret_family, char **err) {
	struct addrinfo hints = {
		.ai_family = family,
		.ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP,
		.ai_flags = AI_ADDRCONFIG | AI_PASSIVE,
	};
	_cleanup_(tcp_sockets_done) TcpSockets t = {};
	const char *cur_port = port;
	bool redo;
	int r;

	for (;;) {
		r = tcp_listen_resolved(bind_host, cur_port, &hints, &t, &redo, err);
		if (r < 0)
			return r;
		if (!redo)
			break;
		cur_port = t.port;
	}
	if (t.n == 0) {
		int e = t.first_bind_errno ? t.first_bind_errno : EADDRNOTAVAIL;

		return set_err(err, -e, "Failed to bind socket \"%s:%s\": %s", bind_host ? bind_host : host, port,
			       strerror(e));
	}

	*ret_family = t.have4 && !t.have6 ? "ipv4" : !t.have4 && t.have6 ? "ipv6" : NULL;
	*ret_fds = TAKE_PTR(t.fds);
	*ret_n = t.n;
	t.n = 0;
	*ret_port = TAKE_PTR(t.port);
	return 0;
}

/* the keys of a tcp: or nonce-tcp: entry, defaults applied */
typedef struct {
	const char *host;
	const char *bind_host; /* NULL: any */
	const char *port;
	int family;
} TcpParams;

static int tcp_params(const AddressEntry *e, TcpParams *p, char **err) {
	const char *family = address_entry_get(e, "family");

	p->host = address_entry_get(e, "host");
	p->bind_host = address_entry_get(e, "bind");
	p->port = address_entry_get(e, "port");
	if (!p->host)
		p->host = "localhost";
	if (!p->port)
		p->port = "0";
	if (!p->bind_host)
		p->bind_host = p->host;
	else if (streq(p->bind_host, "*"))
		p->bind_host = NULL;

	if (!family)
		p->family = AF_UNSPEC;
	else if (streq(family, "ipv4"))
		p->family = AF_INET;
	else if (streq(family, "ipv6"))
		p->family = AF_INET6;
	else
		return set_err(err, -EINVAL, "Unknown address family %s", family);

	/* getaddrinfo() would silently truncate a port number beyond 16 bits */
	if (all_digits(p->port) && (strlen(p->port) > 5 || atoi(p->port) > 65535))
		return set_err(err, -EINVAL, "Invalid port number \"%s\"", p->port);
	return 0;
}

/* the address clients are given, without its noncefile */
static int tcp_format_address(bool use_nonce, const char *host, const char *port, const char *family,
			      char **ret) {
	_cleanup_free_ char *esc_host = NULL;
	int r = address_escape(host, &esc_host);

	if (r < 0)
		return r;
	if (asprintf(ret, "%s:host=%s,port=%s%s%s", use_nonce ? "nonce-tcp" : "tcp", esc_host, port,
		     family ? ",family=" : "", strempty(family)) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int address_append_noncefile(char **address, const char *nonce_file) {
	_cleanup_free_ char *esc_file = NULL;
	char *a;
	int r = address_escape(nonce_file, &esc_file);

	if (r < 0)
		return r;
	if (asprintf(&a, "%s,noncefile=%s", *address, esc_file) < 0)
		return -ENOMEM;
	free(*address);
	*address = a;
	return 0;
}

/* a ListenSocket in @out for each of @fds (taken from it); with a nonce,
 * the first socket owns the noncefile (*@nonce_dir is taken) */
static int tcp_add_sockets(SockList *out, int *fds, size_t n, const char *address, bool use_nonce,
			   const uint8_t nonce[static LISTEN_NONCE_SIZE], const char *nonce_file, char **nonce_dir) {
	for (size_t i = 0; i < n; i++) {
		ListenSocket *s = listen_socket_new();
		int r;

		if (!s)
			return -ENOMEM;
		s->fd = fds[i];
		fds[i] = -1;
		s->address = strdup(address);
		if (use_nonce) {
			s->needs_nonce = true;
			memcpy(s->nonce, nonce, LISTEN_NONCE_SIZE);
			s->nonce_file = strdup(nonce_file);
			if (i == 0)
				s->nonce_dir = TAKE_PTR(*nonce_dir);
		}
		r = socklist_add(out, s);
		if (r < 0) {
			listen_socket_free(s);
			return r;
		}
		if (!s->address || (use_nonce && !s->nonce_file))
			return -ENOMEM;
	}
	return 0;
}

static int open_tcp(const AddressEntry *e, bool use_nonce, SockList *out, char **err, int *result) {
	_cleanup_free_ char *address = NULL, *bound_port = NULL, *nonce_dir = NULL, *nonce_file = NULL;
	_cleanup_free_ int *fds = NULL;
	uint8_t nonce[LISTEN_NONCE_SIZE] = {};
	const char *family_used = NULL;
	TcpParams p = {};
	size_t n = 0;
	int r;

	*result = LISTEN_DID_NOT_CONNECT;
	r = tcp_params(e, &p, err);
	if (r < 0)
		return r;
	r = tcp_listen_all(p.bind_host, p.host, p.port, p.family, &fds, &n, &bound_port, &family_used, err);
	if (r < 0)
		return r;

	r = tcp_format_address(use_nonce, p.host, bound_port, family_used, &address);
	if (r < 0)
		goto fail;
	if (use_nonce) {
		r = noncefile_create(&nonce_dir, &nonce_file, nonce, err);
		if (r < 0)
			goto fail;
		r = address_append_noncefile(&address, nonce_file);
		if (r < 0)
			goto fail;
	}
	r = tcp_add_sockets(out, fds, n, address, use_nonce, nonce, nonce_file, &nonce_dir);
	if (r < 0)
		goto fail;

	explicit_bzero(nonce, sizeof(nonce));
	*result = LISTEN_OK;
	return 0;

fail:
	/* sockets already handed to @out are freed by the caller with it */
	for (size_t i = 0; i < n; i++)
		safe_close(fds[i]);
	if (nonce_dir) {
		(void)unlink(nonce_file);
		(void)rmdir(nonce_dir);
	}
	explicit_bzero(nonce, sizeof(nonce));
	return r;
}

/* ---- systemd ---- */

/* the address of a socket systemd passed, as _dbus_append_address_from_socket() */
static int address_from_socket(int fd, char **ret, bool *ret_is_unix) {
	union {
		struct sockaddr sa;
		struct sockaddr_storage ss;
		struct sockaddr_un un;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} u = {};
	socklen_t sl = sizeof(u);
	_cleanup_free_ char *esc = NULL;
	char ip[INET6_ADDRSTRLEN];
	int r;

	if (getsockname(fd, &u.sa, &sl) < 0)
		return -errno;

	switch (u.sa.sa_family) {
	case AF_UNIX: {
		bool abstract = sl > offsetof(struct sockaddr_un, sun_path) && u.un.sun_path[0] == 0;
		size_t off = offsetof(struct sockaddr_un, sun_path) + (abstract ? 1 : 0);
		_cleanup_free_ char *name = NULL;

		name = strndup(u.un.sun_path + (abstract ? 1 : 0), sl > off ? sl - off : 0);
		if (!name)
			return -ENOMEM;
		r = address_escape(name, &esc);
		if (r < 0)
			return r;
		if (asprintf(ret, "unix:%s=%s", abstract ? "abstract" : "path", esc) < 0)
			return -ENOMEM;
		*ret_is_unix = true;
		return 0;
	}
	case AF_INET:
	case AF_INET6: {
		bool v4 = u.sa.sa_family == AF_INET;

		if (!inet_ntop(u.sa.sa_family, v4 ? (void *)&u.in.sin_addr : (void *)&u.in6.sin6_addr, ip, sizeof(ip)))
			return -errno;
		r = address_escape(ip, &esc);
		if (r < 0)
			return r;
		if (asprintf(ret, "tcp:family=%s,port=%u,host=%s", v4 ? "ipv4" : "ipv6",
			     ntohs(v4 ? u.in.sin_port : u.in6.sin6_port), esc) < 0)
			return -ENOMEM;
		*ret_is_unix = false;
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

int listen_socket_from_fd(int fd, ListenSocket **ret) {
	_cleanup_(listen_socket_freep) ListenSocket *s = NULL;
	int r;

	assert_return(fd >= 0, -EBADF);
	assert_return(ret, -EINVAL);

	r = sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1);
	if (r < 0)
		return r;
	if (r == 0)
		return -ENOTSOCK;

	s = listen_socket_new();
	if (!s)
		return -ENOMEM;
	r = address_from_socket(fd, &s->address, &s->is_unix);
	if (r < 0)
		return r;
	r = fd_set_nonblock_cloexec(fd);
	if (r < 0)
		return r;
	s->fd = fd;
	s->from_systemd = true;
	*ret = TAKE_PTR(s);
	return 0;
}

static int open_systemd(SockList *out, char **err, int *result) {
	int n, r;

	*result = LISTEN_DID_NOT_CONNECT;
	n = sd_listen_fds(1);
	if (n < 0)
		return set_err(err, n, "Failed to acquire systemd socket: %s", strerror(-n));
	if (n == 0)
		return set_err(err, -ENOENT, "No socket received.");

	/* check them all before taking any, as libdbus */
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		r = sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1);
		if (r < 0)
			return set_err(err, r, "Failed to verify systemd socket type: %s", strerror(-r));
		if (r == 0)
			return set_err(err, -ENOTSOCK, "Passed socket has wrong type.");
	}

	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		ListenSocket *s = NULL;

		r = listen_socket_from_fd(fd, &s);
		if (r < 0)
			return set_err(err, r, "Failed to use socket %d passed by systemd: %s", fd, strerror(-r));
		r = socklist_add(out, s);
		if (r < 0) {
			s->fd = -1;
			listen_socket_free(s);
			return r;
		}
	}

	*result = LISTEN_OK;
	return 0;
}

/* ---- the address list ---- */

static int open_entry(const AddressEntry *e, SockList *out, char **err, int *result) {
	*result = LISTEN_NOT_HANDLED;

	if (streq(e->transport, "unix"))
		return open_unix(e, out, err, result);
	if (streq(e->transport, "tcp"))
		return open_tcp(e, false, out, err, result);
	if (streq(e->transport, "nonce-tcp"))
		return open_tcp(e, true, out, err, result);
	if (streq(e->transport, "systemd"))
		return open_systemd(out, err, result);
	if (streq(e->transport, "launchd")) {
		*result = LISTEN_DID_NOT_CONNECT;
		return set_err(err, -EOPNOTSUPP, "Address type 'launchd' is only supported on macOS");
	}
	return 0;
}

int listen_address_open(const char *address, ListenSocket ***ret, size_t *ret_n, char **ret_error) {
	_cleanup_(address_entries_freep) AddressEntry **entries = NULL;
	_cleanup_free_ char *first_error = NULL;
	int first_r = 0, r;
	bool handled = false;
	size_t n = 0;

	assert_return(address, -EINVAL);
	assert_return(ret, -EINVAL);

	r = address_parse(address, &entries, &n, ret_error);
	if (r < 0)
		return r;

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *err = NULL;
		SockList out = {};
		int result;

		r = open_entry(entries[i], &out, &err, &result);
		if (r == -ENOMEM) {
			socklist_done(&out);
			return r;
		}
		switch (result) {
		case LISTEN_OK:
			assert(r >= 0 && out.n > 0);
			*ret = out.l;
			if (ret_n)
				*ret_n = out.n;
			return 0;
		case LISTEN_NOT_HANDLED:
			socklist_done(&out);
			continue;
		case LISTEN_BAD_ADDRESS:
			socklist_done(&out);
			if (ret_error)
				*ret_error = TAKE_PTR(err);
			return r < 0 ? r : -EINVAL;
		default:
			socklist_done(&out);
			handled = true;
			if (!first_r) {
				first_r = r < 0 ? r : -EIO;
				first_error = TAKE_PTR(err);
			}
			continue;
		}
	}

	if (!handled) {
		if (ret_error && asprintf(ret_error, "Unknown address type '%s'", entries[0]->transport) < 0)
			*ret_error = NULL;
		return -EINVAL;
	}
	if (ret_error)
		*ret_error = TAKE_PTR(first_error);
	return first_r;
}

int listen_sockets_address(ListenSocket *const *l, size_t n, const char *guid_hex, char **ret) {
	_cleanup_free_ char *joined = NULL;
	size_t len = 0;

	assert_return(l && n > 0, -EINVAL);
	assert_return(ret, -EINVAL);
	assert_return(!guid_hex || address_guid_valid(guid_hex), -EINVAL);

	for (size_t i = 0; i < n; i++)
		len += strlen(l[i]->address) + 1;
	joined = malloc(len + 1);
	if (!joined)
		return -ENOMEM;
	joined[0] = 0;

	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			if (streq(l[i]->address, l[j]->address))
				dup = true;
		if (dup)
			continue;
		if (joined[0])
			strcat(joined, ";");
		strcat(joined, l[i]->address);
	}

	if (!guid_hex) {
		*ret = TAKE_PTR(joined);
		return 0;
	}
	return address_append_guid(joined, guid_hex, ret);
}

int listen_socket_accept(const ListenSocket *s, int *ret_fd) {
	int fd;

	assert_return(s && s->fd >= 0, -EINVAL);
	assert_return(ret_fd, -EINVAL);

	do
		fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	*ret_fd = fd;
	return 0;
}

bool listen_socket_nonce_equal(const ListenSocket *s, const uint8_t nonce[static LISTEN_NONCE_SIZE]) {
	uint8_t d = 0;

	if (!s || !s->needs_nonce || !nonce)
		return false;
	for (size_t i = 0; i < LISTEN_NONCE_SIZE; i++)
		d |= s->nonce[i] ^ nonce[i];
	return d == 0;
}

int listen_socket_check_nonce(const ListenSocket *s, int fd, uint8_t buf[static LISTEN_NONCE_SIZE], size_t *filled) {
	assert_return(s && s->needs_nonce, -EINVAL);
	assert_return(fd >= 0 && buf && filled, -EINVAL);
	assert_return(*filled <= LISTEN_NONCE_SIZE, -EINVAL);

	while (*filled < LISTEN_NONCE_SIZE) {
		ssize_t k = recv(fd, buf + *filled, LISTEN_NONCE_SIZE - *filled, MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		if (k == 0)
			return -ECONNRESET;
		*filled += (size_t)k;
	}
	return listen_socket_nonce_equal(s, buf) ? 1 : -EACCES;
}
