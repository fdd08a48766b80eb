/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * keyring.h - the DBUS_COOKIE_SHA1 cookie keyring, as libdbus keeps it.
 *
 * A keyring is one file, named after its context, in a private directory
 * (by default ~/.dbus-keyrings of the server's effective user).  Each line
 * is "<id> <creation time> <hex secret>".  Only servers write the file:
 * when no key is younger than KEYRING_NEW_KEY_TIMEOUT_SEC, a new key is
 * added, expired keys are dropped, and the file is rewritten atomically
 * under a "<file>.lock" lock file.  Clients (and servers checking a reply)
 * only read it.
 *
 * File I/O is synchronous, as in libdbus.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

typedef struct Keyring Keyring;

#define KEYRING_CONTEXT_DEFAULT		"org_freedesktop_general"
#define KEYRING_DIRECTORY_NAME		".dbus-keyrings"
/* a key older than this is not handed out for new challenges */
#define KEYRING_NEW_KEY_TIMEOUT_SEC	(60 * 5)
/* a key older than this is dropped from the file */
#define KEYRING_EXPIRE_KEYS_TIMEOUT_SEC	(KEYRING_NEW_KEY_TIMEOUT_SEC + 60 * 2)
/* a key dated further in the future than this is ignored */
#define KEYRING_MAX_TIME_TRAVEL_SEC	(60 * 5)
/* keys loaded from one file at most */
#define KEYRING_MAX_KEYS		256
/* bytes of secret in a new key */
#define KEYRING_KEY_BYTES		24
/* lock file: attempts and the wait between them before it is deemed stale */
#define KEYRING_LOCK_ATTEMPTS		32
#define KEYRING_LOCK_WAIT_MS		250

/**
 * keyring_validate_context() - check a cookie context name
 * @context:	the name
 *
 * A context names a file: it must be non-empty ASCII without NUL, '/',
 * '\\', '.', blanks, '\r' or '\n'.
 *
 * Return: true if valid.
 */
bool keyring_validate_context(const char *context);

/**
 * keyring_default_directory() - ~/.dbus-keyrings of the effective user
 * @ret:	the path
 *
 * The home directory is $HOME when the real and effective uid agree and
 * $HOME is set (as libdbus does), else the user database entry.
 *
 * Return: 0, -ENOENT if the user has no home directory, -ENOMEM.
 */
int keyring_default_directory(char **ret);

/**
 * keyring_new() - open a keyring
 * @ret:	the keyring
 * @directory:	the keyring directory, or NULL for keyring_default_directory()
 * @context:	the context, or NULL for KEYRING_CONTEXT_DEFAULT
 *
 * Loads the existing keys (a missing or unreadable file is an empty
 * keyring) and creates @directory with mode 0700 if it is missing.
 *
 * Return: 0, -EINVAL for an invalid @context, -EPERM in a setuid process,
 * -ENOENT (see keyring_default_directory()), -ENOMEM.
 */
int keyring_new(Keyring **ret, const char *directory, const char *context);

/**
 * keyring_free() - free a keyring (the file stays)
 * @k:	the keyring, or NULL
 *
 * Return: NULL.
 */
Keyring *keyring_free(Keyring *k);

/**
 * keyring_set_lock_timeout() - change how long to wait for the lock file
 * @k:		the keyring
 * @attempts:	number of tries before the lock is deemed stale and removed
 * @wait_ms:	wait between tries
 *
 * The default is KEYRING_LOCK_ATTEMPTS tries KEYRING_LOCK_WAIT_MS apart.
 */
void keyring_set_lock_timeout(Keyring *k, unsigned attempts, unsigned wait_ms);

/**
 * keyring_reload() - reread the keyring file
 * @k:		the keyring
 * @add_new:	also add a fresh key, drop expired keys and rewrite the file
 *
 * Return: 0, -EPERM if the directory is not owned by the effective user or
 * is accessible to group or others, -ENOENT if it does not exist, -EBUSY
 * if the lock could not be taken, another negative errno from writing the
 * file, -ENOMEM.
 */
int keyring_reload(Keyring *k, bool add_new);

/**
 * keyring_get_best_key() - a key recent enough for a new challenge
 * @k:		the keyring
 * @ret_id:	its id (>= 0)
 *
 * Creates (and saves) a new key when every loaded key is older than
 * KEYRING_NEW_KEY_TIMEOUT_SEC.
 *
 * Return: 0, or an error of keyring_reload().
 */
int keyring_get_best_key(Keyring *k, int32_t *ret_id);

/**
 * keyring_get_hex_key() - the secret of a key, hex-encoded
 * @k:		the keyring
 * @id:		key id
 * @ret_hex:	the lower-case hex secret; free() it (after zeroing)
 *
 * Return: 0, -ENOENT for an unknown id, -ENOMEM.
 */
int keyring_get_hex_key(Keyring *k, int32_t id, char **ret_hex);

/**
 * keyring_n_keys() - number of keys loaded
 * @k:	the keyring
 *
 * Return: the number.
 */
size_t keyring_n_keys(const Keyring *k);

/**
 * keyring_get_filename() - path of the keyring file
 * @k:	the keyring
 *
 * Return: the path, owned by @k.
 */
const char *keyring_get_filename(const Keyring *k);

/**
 * keyring_sha1_hex() - SHA-1 of a buffer, as 40 lower-case hex digits
 * @data:	input
 * @len:	input length
 * @ret:	41 bytes: the digest and a NUL
 */
void keyring_sha1_hex(const void *data, size_t len, char ret[static 41]);

/**
 * keyring_random_bytes() - fill a buffer from the kernel's CSPRNG
 * @buf:	the buffer
 * @n:		its size
 *
 * Return: 0 or a negative errno from getrandom().
 */
int keyring_random_bytes(void *buf, size_t n);

DEFINE_CLEANUP(Keyring *, keyring_free);
