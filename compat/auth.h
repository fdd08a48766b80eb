/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * auth.h - the server side of the D-Bus SASL handshake, as dbus-daemon
 * does it.
 *
 * A pure state machine: no sockets, no event loop.  The caller feeds the
 * bytes it read from the client with auth_feed() and sends whatever
 * auth_output() returns.  Once auth_feed() returns AUTH_DONE, the bytes
 * that followed "BEGIN\r\n" in the same input (reported through
 * @ret_consumed) are the start of the dbus1 message stream.
 *
 * Mechanisms: EXTERNAL (socket credentials), DBUS_COOKIE_SHA1 (the
 * keyring in ~/.dbus-keyrings of the server's user, see keyring.h) and
 * ANONYMOUS (offered and accepted always, as by dbus-daemon; without
 * <allow_anonymous/> a connection that used it fails at BEGIN).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/macro.h"

typedef struct Auth Auth;
typedef struct AuthConfig AuthConfig;

/* return values of auth_feed() */
enum {
	AUTH_CONTINUE	= 0,	/* need more input */
	AUTH_DONE	= 1,	/* BEGIN seen: the dbus1 stream starts */
};

/* longest command line accepted, without its "\r\n" (dbus: 16 KiB buffer) */
#define AUTH_LINE_MAX 16384
/* most output bytes buffered before the client is considered broken */
#define AUTH_OUTPUT_MAX 16384
/* REJECTED replies before the conversation is given up (dbus: 6) */
#define AUTH_MAX_FAILURES 6

/**
 * struct AuthConfig - what the server knows about the connection
 * @peer_uid:		uid from SO_PEERCRED
 * @peer_uid_known:	false where the transport has no credentials (TCP);
 *			EXTERNAL is then always rejected
 * @unix_fd_possible:	the transport can pass fds (AF_UNIX): answer
 *			NEGOTIATE_UNIX_FD with AGREE_UNIX_FD
 * @allow_anonymous:	<allow_anonymous/>: a connection authenticated with
 *			ANONYMOUS may go on past BEGIN (without it
 *			ANONYMOUS is still offered and accepted, as by
 *			dbus-daemon, and the connection fails at BEGIN)
 * @mechanisms:		NULL-terminated list of allowed mechanism names from
 *			<auth> elements, or NULL for all supported ones
 * @guid_hex:		the server GUID, 32 hex characters, sent with OK
 * @keyring_dir:	DBUS_COOKIE_SHA1 keyring directory; NULL means
 *			~/.dbus-keyrings of the server's effective user
 */
struct AuthConfig {
	uid_t peer_uid;
	bool peer_uid_known;
	bool unix_fd_possible;
	bool allow_anonymous;
	char **mechanisms;
	const char *guid_hex;
	const char *keyring_dir;
};

/**
 * auth_new() - start the server side of a SASL conversation
 * @ret:	the new conversation
 * @cfg:	configuration; copied, need not outlive the call
 *
 * The first byte expected is the NUL credentials byte.
 *
 * Return: 0, -EINVAL for a malformed @cfg (guid not 32 hex characters),
 * -ENOMEM.
 */
int auth_new(Auth **ret, const AuthConfig *cfg);

/**
 * auth_free() - free a conversation
 * @a:	the conversation, or NULL
 *
 * Return: NULL.
 */
Auth *auth_free(Auth *a);

/**
 * auth_feed() - process bytes received from the client
 * @a:			the conversation
 * @in:			received bytes
 * @len:		number of bytes at @in
 * @ret_consumed:	how many bytes of @in belong to the handshake; with
 *			AUTH_DONE, the bytes after them are dbus1 data.
 *			Written only on success.  May be NULL.
 *
 * Processes complete "\r\n"-terminated lines one by one, queueing each
 * reply for auth_output(); a partial line is kept until the rest arrives,
 * so input may be fed in pieces of any size, including one byte at a time.
 * Processing stops right after "BEGIN\r\n".  After AUTH_DONE, further
 * calls consume nothing and return AUTH_DONE again.
 *
 * On -EPERM the output may still hold a last REJECTED line, which the
 * caller may try to send before closing, as dbus-daemon does.  Once a
 * negative value was returned, every later call returns it again.
 *
 * Return: AUTH_CONTINUE, AUTH_DONE, -EPERM (too many failed attempts: give
 * up and close), -EBADMSG (protocol violation: first byte not NUL, line
 * longer than AUTH_LINE_MAX, BEGIN before OK, more than AUTH_OUTPUT_MAX
 * unsent output; close), -EACCES (BEGIN after ANONYMOUS that the
 * configuration does not allow; close), -ENOMEM, -EINVAL for bad arguments.
 */
int auth_feed(Auth *a, const uint8_t *in, size_t len, size_t *ret_consumed);

/**
 * auth_output() - bytes waiting to be sent to the client
 * @a:		the conversation
 * @ret_len:	number of bytes
 *
 * Return: the bytes, valid until the next auth_feed() or
 * auth_output_consume(); NULL when there is nothing to send.
 */
const void *auth_output(Auth *a, size_t *ret_len);

/**
 * auth_output_consume() - drop bytes that have been sent
 * @a:	the conversation
 * @n:	number of bytes sent (clamped to what is queued)
 */
void auth_output_consume(Auth *a, size_t n);

/**
 * auth_is_done() - whether BEGIN has been processed
 * @a:	the conversation
 *
 * Return: true after auth_feed() returned AUTH_DONE.
 */
bool auth_is_done(const Auth *a);

/**
 * auth_unix_fd_negotiated() - whether AGREE_UNIX_FD was sent
 * @a:	the conversation
 *
 * Return: true if fd passing was agreed (and not cancelled since).
 */
bool auth_unix_fd_negotiated(const Auth *a);

/**
 * auth_get_uid() - the uid the client authenticated as
 * @a:	the conversation
 *
 * Return: the uid (the peer's uid for EXTERNAL, the server's for
 * DBUS_COOKIE_SHA1), or (uid_t)-1 when not authenticated or anonymous.
 */
uid_t auth_get_uid(const Auth *a);

/**
 * auth_is_anonymous() - whether the client authenticated with ANONYMOUS
 * @a:	the conversation
 *
 * Return: true for ANONYMOUS.
 */
bool auth_is_anonymous(const Auth *a);

/**
 * auth_mechanism() - the mechanism that succeeded
 * @a:	the conversation
 *
 * Return: "EXTERNAL", "DBUS_COOKIE_SHA1", "ANONYMOUS", or NULL before OK.
 */
const char *auth_mechanism(const Auth *a);

DEFINE_CLEANUP(Auth *, auth_free);
