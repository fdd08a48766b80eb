/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * peer-creds.c - SO_PEERCRED, SO_PEERGROUPS, SO_PEERSEC, SO_PEERPIDFD.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/peer-creds.h"
#include "util/format.h"
#include "util/macro.h"

/* older headers lack these; the numbers are the same on every architecture
 * but a few (alpha, mips, parisc, sparc), which define them themselves */
#ifndef SO_PEERSEC
#define SO_PEERSEC 31
#endif
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int peer_creds_get_ucred(int fd, pid_t *ret_pid, uid_t *ret_uid, gid_t *ret_gid) {
	struct ucred uc = {};
	socklen_t sl = sizeof(uc);

	assert_return(fd >= 0, -EBADF);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &sl) < 0)
		return -errno;
	if (sl != sizeof(uc))
		return -EIO;
	/* the kernel reports -1 where the peer has no credentials */
	if (uc.uid == (uid_t)-1 || uc.gid == (gid_t)-1)
		return -ENODATA;
	if (ret_pid)
		*ret_pid = uc.pid;
	if (ret_uid)
		*ret_uid = uc.uid;
	if (ret_gid)
		*ret_gid = uc.gid;
	return 0;
}

int peer_creds_get_groups(int fd, gid_t **ret, size_t *ret_n) {
	_cleanup_free_ gid_t *g = NULL;
	size_t n = 16;

	assert_return(fd >= 0, -EBADF);
	assert_return(ret && ret_n, -EINVAL);

	for (;;) {
		socklen_t sl = (socklen_t)(n * sizeof(gid_t));
		gid_t *ng = realloc(g, MAX(sl, (socklen_t)sizeof(gid_t)));

		if (!ng)
			return -ENOMEM;
		g = ng;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &sl) >= 0) {
			n = sl / sizeof(gid_t);
			break;
		}
		if (errno != ERANGE)
			return -errno;
		/* the kernel wrote the size it needs into sl */
		if (sl / sizeof(gid_t) <= n)
			n *= 2;
		else
			n = sl / sizeof(gid_t);
		if (n > 65536 * 2)
			return -E2BIG;
	}

	if (n == 0) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	*ret = TAKE_PTR(g);
	*ret_n = n;
	return 0;
}

int peer_creds_get_label(int fd, char **ret) {
	_cleanup_free_ char *l = NULL;
	size_t n = 256;

	assert_return(fd >= 0, -EBADF);
	assert_return(ret, -EINVAL);

	for (;;) {
		socklen_t sl = (socklen_t)n;
		char *nl = realloc(l, n + 1);

		if (!nl)
			return -ENOMEM;
		l = nl;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERSEC, l, &sl) >= 0) {
			n = sl;
			break;
		}
		if (errno != ERANGE)
			return -errno;
		n = sl > n ? sl : n * 2;
		if (n > 65536)
			return -E2BIG;
	}

	l[n] = 0;
	/* some LSMs count a trailing NUL, AppArmor may add a newline */
	while (n > 0 && (l[n - 1] == 0 || l[n - 1] == '\n'))
		l[--n] = 0;
	if (n == 0 || memchr(l, 0, n))
		return -ENOPROTOOPT;
	*ret = TAKE_PTR(l);
	return 0;
}

int peer_creds_get_pidfd(int fd, int *ret) {
	socklen_t sl = sizeof(int);
	int pidfd = -1;

	assert_return(fd >= 0, -EBADF);
	assert_return(ret, -EINVAL);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &sl) < 0) {
		if (errno == ENOPROTOOPT || errno == EINVAL)
			return -EOPNOTSUPP;
		return -errno;
	}
	if (pidfd < 0)
		return -EOPNOTSUPP;
	*ret = pidfd;
	return 0;
}

void peer_creds_done(PeerCreds *c) {
	if (!c)
		return;
	safe_close(c->pidfd);
	free(c->groups);
	free(c->label);
	*c = (PeerCreds) { .pidfd = -1 };
}

/*
 * Only SELinux, Smack and AppArmor label sockets (SO_PEERSEC), and each of
 * them labels processes too: where /proc/self/attr/current cannot be read
 * (EINVAL: no such LSM), no socket has a label and SO_PEERSEC is not asked
 * of every connection.  Looked at once; the LSMs are chosen at boot.
 */
static bool peer_creds_lsm_labels_sockets(void) {
	static int labels = -1;

	if (labels < 0) {
		int fd = open("/proc/self/attr/current", O_RDONLY | O_CLOEXEC);
		char buf[256];

		labels = 1;
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0 && errno == EINVAL)
				labels = 0;
			close(fd);
		}
	}
	return labels;
}

static int peer_creds_get_full(int fd, PeerCreds *ret, bool want_pidfd, bool check_family) {
	PeerCreds c = { .pidfd = -1 };
	int r;

	assert_return(ret, -EINVAL);
	assert_return(fd >= 0, -EBADF);

	if (check_family) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
			return -errno;
		if (ss.ss_family != AF_UNIX)
			return -EAFNOSUPPORT;
	}

	r = peer_creds_get_ucred(fd, &c.pid, &c.uid, &c.gid);
	if (r < 0)
		goto fail;

	r = peer_creds_get_groups(fd, &c.groups, &c.n_groups);
	if (r == -ENOPROTOOPT)
		c.have_groups = false;
	else if (r < 0)
		goto fail;
	else
		c.have_groups = true;

	r = peer_creds_lsm_labels_sockets() ? peer_creds_get_label(fd, &c.label) : -ENOPROTOOPT;
	if (r < 0 && r != -ENOPROTOOPT && r != -EOPNOTSUPP && r != -EINVAL)
		goto fail;

	/* -ESRCH: the peer already exited; no pidfd then */
	r = want_pidfd ? peer_creds_get_pidfd(fd, &c.pidfd) : 0;
	if (r < 0 && r != -EOPNOTSUPP && r != -ESRCH)
		goto fail;

	*ret = c;
	return 0;

fail:
	peer_creds_done(&c);
	return r;
}

int peer_creds_get(int fd, PeerCreds *ret) {
	return peer_creds_get_full(fd, ret, true, true);
}

int peer_creds_get_basic(int fd, PeerCreds *ret) {
	return peer_creds_get_full(fd, ret, false, false);
}

int peer_creds_new(PeerCreds **ret, int fd) {
	_cleanup_(peer_creds_freep) PeerCreds *c = NULL;
	int r;

	assert_return(ret, -EINVAL);

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = peer_creds_get(fd, c);
	if (r < 0) {
		c->pidfd = -1;
		return r;
	}
	*ret = TAKE_PTR(c);
	return 0;
}

PeerCreds *peer_creds_free(PeerCreds *c) {
	if (!c)
		return NULL;
	peer_creds_done(c);
	free(c);
	return NULL;
}

size_t peer_command_read(pid_t pid, char *buf) {
	char path[sizeof("/proc//cmdline") + 20];
	ssize_t n;
	int fd;

	strcpy(format_decimal(stpcpy(path, "/proc/"), (uint64_t) (unsigned) pid), "/cmdline");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	/* one read(), as dbus-daemon's: the kernel gives the whole start */
	do
		n = read(fd, buf, PEER_COMMAND_MAX);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n > 0 ? (size_t) n : 0;
}

size_t peer_command_show(char *buf, size_t n) {
	if (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char) buf[i];
		if (c == '\0')
			buf[i] = ' ';
		else if (c < 0x20 || c > 127)
			buf[i] = '?';
	}
	buf[n] = '\0';
	return n;
}
