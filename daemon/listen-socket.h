/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * listen-socket.h - listening sockets for D-Bus server addresses, as
 * dbus-daemon 1.14 opens them for <listen> and --address:
 *
 *   unix:path=P         P (a stale socket at P is unlinked first)
 *   unix:dir=D          D/dbus-XXXXXXXXXX, random name, filesystem socket
 *   unix:tmpdir=D       same as dir= (dbus >= 1.13.x no longer makes an
 *                       abstract socket for tmpdir on Linux)
 *   unix:runtime=yes    $XDG_RUNTIME_DIR/bus
 *   unix:abstract=N     abstract socket N
 *   tcp:host=,bind=,port=,family=     (port 0 or none: the kernel picks)
 *   nonce-tcp:...       tcp plus a 16-byte nonce in a private noncefile
 *   systemd:            the sockets passed by systemd (sd_listen_fds)
 *   launchd:            refused: macOS only
 *
 * Sockets are non-blocking and close-on-exec.  Filesystem sockets get mode
 * 0777 (access is decided by the directory and the bus policy, as in
 * dbus-daemon).
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

typedef struct ListenSocket ListenSocket;

#define LISTEN_NONCE_SIZE 16
/* longest unix socket path (and abstract name + 1) accepted, as libdbus */
#define LISTEN_MAX_SUN_PATH 99

/**
 * struct ListenSocket - one listening socket
 * @fd:			the listening socket
 * @address:		connectable address, without ",guid=" (what
 *			--print-address prints before the guid)
 * @is_unix:		AF_UNIX: peers have credentials and can pass fds
 * @needs_nonce:	nonce-tcp: a client must send @nonce before SASL
 *			(see listen_socket_check_nonce())
 * @nonce_file:		nonce-tcp: path of the noncefile
 * @nonce:		nonce-tcp: the nonce
 * @unlink_path:	socket file created here; listen_socket_free()
 *			unlinks it.  Clear it (free and set NULL) to keep the
 *			file, e.g. in a parent process after fork.
 * @nonce_dir:		private directory holding @nonce_file, removed with it
 *			by listen_socket_free(); set on one socket only when
 *			several share a nonce
 * @from_systemd:	passed in by systemd: not ours to unlink
 */
struct ListenSocket {
	int fd;
	char *address;
	bool is_unix;
	bool needs_nonce;
	char *nonce_file;
	uint8_t nonce[LISTEN_NONCE_SIZE];
	char *unlink_path;
	char *nonce_dir;
	bool from_systemd;
};

/**
 * listen_address_open() - create the listening sockets of an address
 * @address:	server address, possibly several ';'-separated entries
 * @ret:	array of sockets; free with listen_sockets_free()
 * @ret_n:	number of sockets (1, or more for tcp on several addresses
 *		and for systemd:)
 * @ret_error:	on failure, a message worded as dbus-daemon words it; free()
 *		it.  May be NULL.
 *
 * As dbus_server_listen(), tries the entries in order and stops at the
 * first one that works.  An unknown transport is skipped; a malformed
 * entry stops the search; an entry that could not be opened is skipped,
 * and its error is the one reported if no entry works.
 *
 * Return: 0, or the first failure: -EINVAL (malformed or unknown address),
 * -EOPNOTSUPP (launchd:), -ENXIO (runtime=yes without XDG_RUNTIME_DIR),
 * -ENAMETOOLONG (unix path longer than LISTEN_MAX_SUN_PATH), -ENOENT
 * (systemd: passed no socket), -ENOTSOCK (systemd: passed something else
 * than a listening stream socket), -EADDRNOTAVAIL (host not resolvable),
 * a negative errno from socket(), bind() or listen(), -ENOMEM.
 */
int listen_address_open(const char *address, ListenSocket ***ret, size_t *ret_n, char **ret_error);

/**
 * listen_socket_free() - close a socket and remove what it created
 * @s:	the socket, or NULL
 *
 * Unlinks @s->unlink_path and removes the noncefile and its directory
 * (@s->nonce_dir).
 *
 * Return: NULL.
 */
ListenSocket *listen_socket_free(ListenSocket *s);

/**
 * listen_sockets_free() - free an array from listen_address_open()
 * @l:	the array, or NULL
 * @n:	number of sockets in it
 *
 * Return: NULL.
 */
ListenSocket **listen_sockets_free(ListenSocket **l, size_t n);

/**
 * listen_sockets_address() - the address --print-address prints
 * @l:		sockets of one listen address
 * @n:		number of sockets
 * @guid_hex:	the server GUID, or NULL for none
 *
 * @ret: the distinct connectable addresses joined with ';', each followed
 * by ",guid=@guid_hex", e.g. "unix:path=/tmp/dbus-AbCdEf1234,guid=…".
 *
 * Return: 0, -EINVAL for an empty list or a bad GUID, -ENOMEM.
 */
int listen_sockets_address(ListenSocket *const *l, size_t n, const char *guid_hex, char **ret);

/**
 * listen_socket_accept() - accept one connection
 * @s:		the listening socket
 * @ret_fd:	the connection, non-blocking and close-on-exec
 *
 * Return: 0, -EAGAIN when no connection is pending, another negative
 * errno from accept4() (-EMFILE, -ENFILE: pause accepting, do not exit).
 */
int listen_socket_accept(const ListenSocket *s, int *ret_fd);

/**
 * listen_socket_nonce_equal() - compare a received nonce
 * @s:		a nonce-tcp socket
 * @nonce:	LISTEN_NONCE_SIZE received bytes
 *
 * Constant-time comparison.
 *
 * Return: true if @nonce is @s's nonce; false also when @s has none.
 */
bool listen_socket_nonce_equal(const ListenSocket *s, const uint8_t nonce[static LISTEN_NONCE_SIZE]);

/**
 * listen_socket_check_nonce() - read and check the nonce of a nonce-tcp client
 * @s:		the nonce-tcp listening socket the client came from
 * @fd:		the accepted connection (non-blocking)
 * @buf:	LISTEN_NONCE_SIZE bytes of per-connection state
 * @filled:	per-connection state, 0 at first; bytes of @buf received
 *
 * Call when @fd is readable, before any SASL: it reads at most the missing
 * nonce bytes, never beyond them, so the handshake stays in the socket.
 *
 * Return: 1 when the whole nonce arrived and matches (go on with SASL), 0
 * when more bytes are needed (wait for readability), -EACCES on a wrong
 * nonce, -ECONNRESET when the client hung up first, another negative errno
 * from recv(); on any negative value close the connection.
 */
int listen_socket_check_nonce(const ListenSocket *s, int fd, uint8_t buf[static LISTEN_NONCE_SIZE], size_t *filled);

/**
 * listen_socket_from_fd() - adopt a listening socket passed in by systemd
 * @fd:		a bound, listening SOCK_STREAM socket (AF_UNIX, AF_INET or
 *		AF_INET6); owned by the result on success
 * @ret:	the socket; from_systemd is set, nothing will be unlinked
 *
 * Makes @fd non-blocking and close-on-exec and derives its connectable
 * address from getsockname() as libdbus does ("unix:path=...",
 * "unix:abstract=...", "tcp:family=ipv4,port=N,host=A").
 *
 * Return: 0, -ENOTSOCK if @fd is not a listening stream socket,
 * -EAFNOSUPPORT for another address family, -ENOMEM, another negative
 * errno.
 */
int listen_socket_from_fd(int fd, ListenSocket **ret);

/**
 * listen_socket_fd() - the listening fd
 * @s:	the socket
 *
 * Return: @s->fd, or -EBADF for NULL.
 */
static inline int listen_socket_fd(const ListenSocket *s) {
	return s ? s->fd : -EBADF;
}

/**
 * listen_socket_address() - the connectable address, without guid
 * @s:	the socket
 *
 * Return: @s->address (owned by @s), or NULL for NULL.
 */
static inline const char *listen_socket_address(const ListenSocket *s) {
	return s ? s->address : NULL;
}

/**
 * listen_socket_is_unix() - whether peers have credentials and can pass fds
 * @s:	the socket
 *
 * Return: @s->is_unix.
 */
static inline bool listen_socket_is_unix(const ListenSocket *s) {
	return s && s->is_unix;
}

/**
 * listen_socket_nonce() - the nonce a client must send first
 * @s:	the socket
 *
 * Return: LISTEN_NONCE_SIZE bytes owned by @s for nonce-tcp, else NULL.
 */
static inline const uint8_t *listen_socket_nonce(const ListenSocket *s) {
	return s && s->needs_nonce ? s->nonce : NULL;
}

DEFINE_CLEANUP(ListenSocket *, listen_socket_free);
