/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * peer-creds.h - credentials of the process at the other end of an
 * AF_UNIX socket, as the kernel recorded them at connect() time:
 * SO_PEERCRED, SO_PEERGROUPS, SO_PEERSEC and SO_PEERPIDFD.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/macro.h"

typedef struct PeerCreds PeerCreds;

/**
 * struct PeerCreds - what GetConnectionCredentials reports
 * @pid:	ProcessID
 * @uid:	UnixUserID
 * @gid:	primary gid
 * @groups:	UnixGroupIDs: supplementary groups (SO_PEERGROUPS), sorted by
 *		the kernel; NULL with @n_groups 0 if the kernel lacks it
 * @n_groups:	number of @groups
 * @have_groups: SO_PEERGROUPS was available (Linux >= 4.13)
 * @label:	LinuxSecurityLabel (SO_PEERSEC), without trailing NUL; NULL
 *		when no LSM labels sockets
 * @pidfd:	ProcessFD (SO_PEERPIDFD, Linux >= 6.5), close-on-exec; -1 on
 *		older kernels
 */
struct PeerCreds {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	bool have_groups;
	char *label;
	int pidfd;
};

/**
 * peer_creds_new() - read all credentials of a connected AF_UNIX socket
 * @ret:	the credentials; free with peer_creds_free()
 * @fd:		an accepted (or socketpair) AF_UNIX stream socket
 *
 * SO_PEERCRED is required; SO_PEERGROUPS, SO_PEERSEC and SO_PEERPIDFD are
 * taken when the kernel and LSM provide them.
 *
 * Return: 0, -EAFNOSUPPORT for a socket that is not AF_UNIX, -ENOMEM,
 * another negative errno from getsockopt().
 */
int peer_creds_new(PeerCreds **ret, int fd);

/**
 * peer_creds_free() - free credentials, closing the pidfd
 * @c:	the credentials, or NULL
 *
 * Return: NULL.
 */
PeerCreds *peer_creds_free(PeerCreds *c);

/**
 * peer_creds_get_ucred() - SO_PEERCRED
 * @fd:		the socket
 * @ret_pid:	peer pid (may be NULL)
 * @ret_uid:	peer uid (may be NULL)
 * @ret_gid:	peer gid (may be NULL)
 *
 * Return: 0, -ENODATA if the kernel has no credentials for the peer (uid
 * reported as -1), another negative errno from getsockopt().
 */
int peer_creds_get_ucred(int fd, pid_t *ret_pid, uid_t *ret_uid, gid_t *ret_gid);

/**
 * peer_creds_get_groups() - SO_PEERGROUPS
 * @fd:		the socket
 * @ret:	the supplementary groups (NULL when there are none)
 * @ret_n:	their number
 *
 * Retries with a larger buffer on -ERANGE.
 *
 * Return: 0, -ENOPROTOOPT on kernels without SO_PEERGROUPS, -ENOMEM,
 * another negative errno from getsockopt().
 */
int peer_creds_get_groups(int fd, gid_t **ret, size_t *ret_n);

/**
 * peer_creds_get_label() - SO_PEERSEC
 * @fd:		the socket
 * @ret:	the security label, without trailing NUL or newline
 *
 * Return: 0, -ENOPROTOOPT when no LSM provides a label, -ENOMEM, another
 * negative errno from getsockopt().
 */
int peer_creds_get_label(int fd, char **ret);

/**
 * peer_creds_get_pidfd() - SO_PEERPIDFD
 * @fd:		the socket
 * @ret:	a pidfd for the peer process, close-on-exec
 *
 * Return: 0, -EOPNOTSUPP on kernels without SO_PEERPIDFD (they answer
 * ENOPROTOOPT or EINVAL), another negative errno from getsockopt() (e.g.
 * -ESRCH when the peer is gone).
 */
int peer_creds_get_pidfd(int fd, int *ret);

/**
 * peer_creds_get() - like peer_creds_new(), into a caller's struct
 * @fd:		the socket
 * @ret:	filled in on success; release with peer_creds_done().  Members
 *		may be taken over (TAKE_PTR/TAKE_FD) before that.
 *
 * Return: as peer_creds_new().
 */
int peer_creds_get(int fd, PeerCreds *ret);
/* peer_creds_get() without the pidfd (pidfd -1: for peer_creds_get_pidfd()
 * later), of a socket the caller knows to be AF_UNIX */
int peer_creds_get_basic(int fd, PeerCreds *ret);

/**
 * peer_creds_done() - release the members of a struct filled by peer_creds_get()
 * @c:	the credentials; reset to empty (pidfd -1)
 */
void peer_creds_done(PeerCreds *c);

/* the most peer_command_read() reads */
#define PEER_COMMAND_MAX 50

/**
 * peer_command_read() - the start of a process's command line as
 * dbus-daemon reads it for comm="..." (_dbus_command_for_pid()): one read of
 * at most PEER_COMMAND_MAX bytes of /proc/@pid/cmdline, raw
 * @pid:	the process
 * @buf:	PEER_COMMAND_MAX bytes
 *
 * Return: the number of bytes read, 0 when the file cannot be read.
 */
size_t peer_command_read(pid_t pid, char *buf);

/**
 * peer_command_show() - what peer_command_read() got, as dbus-daemon shows
 * it: less a NUL that ends it, each NUL a space, other bytes below 0x20 or
 * above 0x7f a '?'
 * @buf:	the bytes, rewritten in place and NUL-terminated (n + 1 bytes)
 * @n:		how many
 *
 * Return: the length of the string.
 */
size_t peer_command_show(char *buf, size_t n);

DEFINE_CLEANUP(PeerCreds *, peer_creds_free);
