/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-peer-creds.c - SO_PEERCRED, SO_PEERGROUPS (with the ERANGE retry),
 * SO_PEERSEC and SO_PEERPIDFD through daemon/peer-creds.c, on socketpairs
 * and on connections accepted from a listening socket.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/peer-creds.h"
#include "util/macro.h"
#include "tests/unit/test.h"



static int cmp_gid(const void *a, const void *b) {
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;
	return x < y ? -1 : x > y;
}

/* the pid a pidfd refers to, from /proc/self/fdinfo */
static pid_t pidfd_pid(int pidfd) {
	char path[64], line[256];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid:\t%d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

static void check_own_groups(const PeerCreds *c) {
	int n = getgroups(0, NULL);
	gid_t *mine = calloc((size_t)n + 1, sizeof(gid_t)), *theirs;

	assert(n >= 0 && mine);
	assert(getgroups(n, mine) == n);
	assert(c->have_groups);
	assert(c->n_groups == (size_t)n);
	theirs = calloc(c->n_groups + 1, sizeof(gid_t));
	if (c->n_groups)
		memcpy(theirs, c->groups, c->n_groups * sizeof(gid_t));
	qsort(mine, (size_t)n, sizeof(gid_t), cmp_gid);
	qsort(theirs, c->n_groups, sizeof(gid_t), cmp_gid);
	assert(n == 0 || memcmp(mine, theirs, c->n_groups * sizeof(gid_t)) == 0);
	free(mine);
	free(theirs);
}

TEST(socketpair_creds) {
	_cleanup_(peer_creds_freep) PeerCreds *c = NULL;
	int sp[2];

	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	assert(peer_creds_new(&c, sp[0]) == 0);
	assert(c->pid == getpid());
	assert(c->uid == getuid());
	assert(c->gid == getgid());
	check_own_groups(c);

	if (c->label) {
		size_t l = strlen(c->label);
		printf("# label: %s\n", c->label);
		assert(l > 0 && c->label[l - 1] != '\n');
	} else
		printf("# no LSM label\n");

	if (c->pidfd >= 0) {
		assert(fcntl(c->pidfd, F_GETFD) & FD_CLOEXEC);
		assert(pidfd_pid(c->pidfd) == getpid());
	} else
		printf("# kernel without SO_PEERPIDFD\n");

	close(sp[0]);
	close(sp[1]);
}

TEST(helpers) {
	_cleanup_free_ gid_t *g = NULL;
	_cleanup_free_ char *label = NULL;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	size_t n;
	int sp[2], pidfd = -1, r;

	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	assert(peer_creds_get_ucred(sp[1], &pid, &uid, &gid) == 0);
	assert(pid == getpid() && uid == getuid() && gid == getgid());
	assert(peer_creds_get_ucred(sp[1], NULL, NULL, NULL) == 0);
	r = peer_creds_get_groups(sp[1], &g, &n);
	assert(r == 0 || r == -ENOPROTOOPT);
	r = peer_creds_get_label(sp[1], &label);
	assert(r == 0 || r == -ENOPROTOOPT);
	r = peer_creds_get_pidfd(sp[1], &pidfd);
	assert(r == 0 || r == -EOPNOTSUPP);
	if (r == 0) {
		assert(pidfd >= 0);
		close(pidfd);
	}
	close(sp[0]);
	close(sp[1]);

	/* errors */
	assert(peer_creds_get_ucred(-1, NULL, NULL, NULL) == -EBADF);
	assert(peer_creds_get_ucred(999, NULL, NULL, NULL) == -EBADF);
	int pipefd[2];
	assert(pipe(pipefd) == 0);
	assert(peer_creds_get_ucred(pipefd[0], NULL, NULL, NULL) == -ENOTSOCK);
	PeerCreds *c = NULL;
	assert(peer_creds_new(&c, pipefd[0]) == -ENOTSOCK);
	close(pipefd[0]);
	close(pipefd[1]);
	assert(peer_creds_free(NULL) == NULL);
}

TEST(not_unix) {
	PeerCreds *c = NULL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd >= 0);
	assert(peer_creds_new(&c, fd) == -EAFNOSUPPORT);
	close(fd);
}

/*
 * A child with another uid and more groups than the first buffer holds
 * (exercising the ERANGE retry) connects to a listening socket; the
 * credentials of the accepted connection are the child's.  Needs root.
 */
TEST(other_process) {
	char path[] = "/tmp/test-peer-creds-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_(peer_creds_freep) PeerCreds *c = NULL;
	int lfd, fd, status, ready[2];
	gid_t groups[100];
	char b;
	pid_t pid;

	if (geteuid() != 0) {
		test_skip("not root");
		return;
	}

	assert(mkdtemp(path));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 1) == 0);
	assert(chmod(sa.sun_path, 0777) == 0 && chmod(path, 0755) == 0);
	for (int i = 0; i < 100; i++)
		groups[i] = (gid_t)(20000 + i);
	assert(pipe(ready) == 0);

	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		int cfd;

		close(ready[0]);
		if (setgroups(100, groups) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		cfd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(3);
		/* stay alive until the parent has read the credentials */
		(void)!write(ready[1], "x", 1);
		(void)!read(cfd, &b, 1);
		_exit(0);
	}
	close(ready[1]);
	assert(read(ready[0], &b, 1) == 1);
	close(ready[0]);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert(fd >= 0);

	assert(peer_creds_new(&c, fd) == 0);
	assert(c->pid == pid);
	assert(c->uid == 65534);
	assert(c->gid == 65534);
	assert(c->have_groups);
	assert(c->n_groups == 100);
	for (int i = 0; i < 100; i++)
		assert(c->groups[i] == (gid_t)(20000 + i));
	if (c->pidfd >= 0)
		assert(pidfd_pid(c->pidfd) == pid);

	close(fd);
	assert(waitpid(pid, &status, 0) == pid);
	assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(lfd);
	unlink(sa.sun_path);
	rmdir(path);
}

TEST(embedded) {
	PeerCreds c = { .pidfd = -1 };
	int sp[2];

	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	assert(peer_creds_get(sp[0], &c) == 0);
	assert(c.pid == getpid() && c.uid == getuid() && c.gid == getgid());
	check_own_groups(&c);
	/* members may be taken over before peer_creds_done() */
	gid_t *g = TAKE_PTR(c.groups);
	int pidfd = TAKE_FD(c.pidfd);
	peer_creds_done(&c);
	assert(c.pidfd == -1 && !c.groups && !c.label && c.n_groups == 0);
	peer_creds_done(&c);
	free(g);
	safe_close(pidfd);
	close(sp[0]);
	close(sp[1]);

	assert(peer_creds_get(-1, &c) == -EBADF);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(peer_creds_get(fd, &c) == -EAFNOSUPPORT);
	close(fd);
}

int main(void) {
	RUN(socketpair_creds);
	RUN(helpers);
	RUN(not_unix);
	RUN(other_process);
	RUN(embedded);

	return test_done();
}
