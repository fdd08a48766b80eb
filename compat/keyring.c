/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyring.c - the DBUS_COOKIE_SHA1 keyring, compatible with libdbus's
 * dbus-keyring.c: same directory, file format, lifetimes and lock file, so
 * that libdbus, sd-bus and GDBus clients find the cookies we create.
 *
 * DOC: locking
 *
 * As in libdbus, the lock is a "<file>.lock" created with O_EXCL.  A lock
 * still present after the configured number of attempts is assumed stale
 * and removed.  Only writers (a server adding a key) take the lock;
 * readers rely on the file being replaced atomically by rename().
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compat/keyring.h"
#include "util/macro.h"
#include "util/strutil.h"

/* larger keyring files are ignored as corrupt */
#define KEYRING_FILE_MAX (1024 * 1024)

typedef struct {
	int32_t id;
	int64_t creation_time;
	uint8_t secret[KEYRING_KEY_BYTES * 2];	/* a file may hold longer keys */
	size_t secret_len;
} Key;

struct Keyring {
	char *directory;
	char *filename;
	char *filename_lock;
	Key *keys;
	size_t n_keys;
	unsigned lock_attempts;
	unsigned lock_wait_ms;
};

/* ---- SHA-1 (FIPS 180-4) ---- */

typedef struct {
	uint32_t h[5];
	uint64_t len;
	uint8_t buf[64];
	size_t buf_len;
} Sha1;

static uint32_t rol32(uint32_t x, unsigned n) {
	return (x << n) | (x >> (32 - n));
}

static void sha1_block(Sha1 *s, const uint8_t *p) {
	uint32_t w[80], a, b, c, d, e;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rol32(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rol32(b, 30), b = a, a = t;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
	explicit_bzero(w, sizeof(w));
}

static void sha1_init(Sha1 *s) {
	*s = (Sha1) { .h = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 } };
}

static void sha1_update(Sha1 *s, const uint8_t *p, size_t n) {
	s->len += n;
	while (n > 0) {
		size_t m = MIN(n, 64 - s->buf_len);

		memcpy(s->buf + s->buf_len, p, m);
		s->buf_len += m;
		p += m;
		n -= m;
		if (s->buf_len == 64) {
			sha1_block(s, s->buf);
			s->buf_len = 0;
		}
	}
}

static void sha1_final(Sha1 *s, uint8_t out[20]) {
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, lenbuf[8];

	sha1_update(s, &pad, 1);
	while (s->buf_len != 56)
		sha1_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenbuf[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_update(s, lenbuf, 8);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
	explicit_bzero(s, sizeof(*s));
}

void keyring_sha1_hex(const void *data, size_t len, char ret[static 41]) {
	uint8_t digest[20];
	Sha1 s;

	sha1_init(&s);
	sha1_update(&s, data, len);
	sha1_final(&s, digest);
	hex_encode(digest, sizeof(digest), ret);
	explicit_bzero(digest, sizeof(digest));
}

int keyring_random_bytes(void *buf, size_t n) {
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t k = getrandom(p, n, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---- helpers ---- */

static bool is_blank(char c) {
	return c == ' ' || c == '\t';
}

static int64_t now_sec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

bool keyring_validate_context(const char *context) {
	if (!context || !*context)
		return false;
	for (const char *p = context; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c >= 0x80 || c == '/' || c == '\\' || c == '.' ||
		    is_blank(c) || c == '\n' || c == '\r')
			return false;
	}
	return true;
}

int keyring_default_directory(char **ret) {
	_cleanup_free_ char *buf = NULL;
	struct passwd pw, *res = NULL;
	const char *home = NULL;
	uid_t euid = geteuid();
	char *p;
	long sz;

	assert_return(ret, -EINVAL);

	if (getuid() == euid) {
		home = getenv("HOME");
		if (home && !*home)
			home = NULL;
	}
	if (!home) {
		sz = sysconf(_SC_GETPW_R_SIZE_MAX);
		if (sz <= 0)
			sz = 16384;
		buf = malloc(sz);
		if (!buf)
			return -ENOMEM;
		if (getpwuid_r(euid, &pw, buf, sz, &res) != 0 || !res ||
		    !pw.pw_dir || !*pw.pw_dir)
			return -ENOENT;
		home = pw.pw_dir;
	}

	p = path_join(home, KEYRING_DIRECTORY_NAME);
	if (!p)
		return -ENOMEM;
	*ret = p;
	return 0;
}

/* the directory must belong to us and be closed to group and others */
static int check_dir_private(const char *dir) {
	struct stat st;

	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	if (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH))
		return -EPERM;
	return 0;
}

static void sleep_ms(unsigned ms) {
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int create_exclusively(const char *path) {
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	safe_close(fd);
	return 0;
}

static int keyring_lock(Keyring *k) {
	for (unsigned i = 0; i < k->lock_attempts; i++) {
		if (create_exclusively(k->filename_lock) == 0)
			return 0;
		sleep_ms(k->lock_wait_ms);
	}

	/* assume a stale lock left by a crashed writer */
	if (unlink(k->filename_lock) < 0 && errno != ENOENT)
		return -EBUSY;
	if (create_exclusively(k->filename_lock) < 0)
		return -EBUSY;
	return 0;
}

static void keyring_unlock(Keyring *k) {
	(void)unlink(k->filename_lock);
}

static Key *find_key(Key *keys, size_t n, int32_t id) {
	for (size_t i = 0; i < n; i++)
		if (keys[i].id == id)
			return &keys[i];
	return NULL;
}

static void keys_free(Key *keys, size_t n) {
	if (keys)
		explicit_bzero(keys, n * sizeof(Key));
	free(keys);
}

/* read the file; missing, unreadable, oversized or non-ASCII means empty */
static char *read_contents(const char *path) {
	_cleanup_close_ int fd = -1;
	struct stat st;
	char *buf;
	size_t len = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strdup("");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KEYRING_FILE_MAX)
		return strdup("");
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == 0 || (unsigned char)buf[i] >= 0x80) {
			buf[0] = 0;
			break;
		}
	return buf;
}

/* parse one "<id> <time> <hex>" line into @key; false to skip it */
static bool parse_line(char *line, int64_t now, Key *key) {
	char *p = line, *end;
	size_t hexlen;
	long long v;

	errno = 0;
	v = strtoll(p, &end, 10);
	if (end == p || errno != 0 || v < 0 || v > INT32_MAX)
		return false;
	key->id = (int32_t)v;
	p = end;
	while (is_blank(*p))
		p++;

	errno = 0;
	v = strtoll(p, &end, 10);
	if (end == p || errno != 0)
		return false;
	if (v < 0 || now + KEYRING_MAX_TIME_TRAVEL_SEC < v ||
	    now - KEYRING_EXPIRE_KEYS_TIMEOUT_SEC > v)
		return false;
	key->creation_time = v;
	p = end;
	while (is_blank(*p))
		p++;

	hexlen = strlen(p);
	if (hexlen == 0 || hexlen % 2 || hexlen / 2 > sizeof(key->secret))
		return false;
	for (size_t i = 0; i < hexlen; i += 2) {
		int hi = hexval(p[i]), lo = hexval(p[i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		key->secret[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	key->secret_len = hexlen / 2;
	return true;
}

static int add_new_key(Key **keys, size_t *n_keys, int64_t now) {
	uint8_t b[4];
	Key *n, *key;
	int32_t id;
	int r;

	do {
		r = keyring_random_bytes(b, sizeof(b));
		if (r < 0)
			return r;
		id = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 |
			       (uint32_t)b[2] << 16 | (uint32_t)(b[3] & 0x7f) << 24);
	} while (find_key(*keys, *n_keys, id));

	n = realloc(*keys, (*n_keys + 1) * sizeof(Key));
	if (!n)
		return -ENOMEM;
	*keys = n;
	key = &n[*n_keys];
	*key = (Key) { .id = id, .creation_time = now, .secret_len = KEYRING_KEY_BYTES };
	r = keyring_random_bytes(key->secret, KEYRING_KEY_BYTES);
	if (r < 0)
		return r;
	(*n_keys)++;
	return 0;
}

/* write @contents to a temporary file beside @path, then rename it over */
static int save_atomically(const char *path, const char *contents) {
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = strlen(contents), done = 0;
	uint8_t rnd[10];
	char suffix[11];
	int r;

	r = keyring_random_bytes(rnd, sizeof(rnd));
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(rnd); i++)
		suffix[i] = alnum[rnd[i] % (sizeof(alnum) - 1)];
	suffix[10] = 0;
	if (asprintf(&tmp, "%s.%s", path, suffix) < 0) {
		tmp = NULL;
		return -ENOMEM;
	}

	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, contents + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto fail;
		}
		done += (size_t)n;
	}
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	r = close_nointr(TAKE_FD(fd));
	if (r < 0)
		goto fail;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;

fail:
	(void)unlink(tmp);
	return r;
}

static char *format_keys(const Key *keys, size_t n) {
	size_t sz = n * (12 + 21 + sizeof(keys[0].secret) * 2 + 3) + 1, len = 0;
	char *buf = malloc(sz);

	if (!buf)
		return NULL;
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		char hex[sizeof(keys[0].secret) * 2 + 1];

		hex_encode(keys[i].secret, keys[i].secret_len, hex);
		len += (size_t)snprintf(buf + len, sz - len, "%" PRIi32 " %" PRIi64 " %s\n",
					keys[i].id, keys[i].creation_time, hex);
		explicit_bzero(hex, sizeof(hex));
	}
	return buf;
}

int keyring_reload(Keyring *k, bool add_new) {
	_cleanup_free_ char *contents = NULL;
	bool locked = false;
	Key *keys = NULL;
	size_t n_keys = 0;
	int64_t now;
	char *line;
	int r;

	assert_return(k, -EINVAL);

	r = check_dir_private(k->directory);
	if (r < 0)
		return r;

	now = now_sec();

	if (add_new) {
		r = keyring_lock(k);
		if (r < 0)
			return r;
		locked = true;
	}

	contents = read_contents(k->filename);
	if (!contents) {
		r = -ENOMEM;
		goto out;
	}

	line = contents;
	while (*line) {
		char *nl = strchr(line, '\n'), *next;
		size_t l;
		Key key;

		if (nl) {
			*nl = 0;
			next = nl + 1;
		} else
			next = line + strlen(line);
		l = strlen(line);
		if (l > 0 && line[l - 1] == '\r')
			line[l - 1] = 0;

		if (n_keys >= (add_new ? KEYRING_MAX_KEYS - 1 : KEYRING_MAX_KEYS))
			break;

		if (parse_line(line, now, &key)) {
			Key *n = realloc(keys, (n_keys + 1) * sizeof(Key));

			if (!n) {
				explicit_bzero(&key, sizeof(key));
				r = -ENOMEM;
				goto out;
			}
			keys = n;
			keys[n_keys++] = key;
		}
		explicit_bzero(&key, sizeof(key));
		line = next;
	}

	if (add_new) {
		_cleanup_free_ char *out = NULL;

		r = add_new_key(&keys, &n_keys, now);
		if (r < 0)
			goto out;
		out = format_keys(keys, n_keys);
		if (!out) {
			r = -ENOMEM;
			goto out;
		}
		r = save_atomically(k->filename, out);
		explicit_bzero(out, strlen(out));
		if (r < 0)
			goto out;
	}

	keys_free(k->keys, k->n_keys);
	k->keys = TAKE_PTR(keys);
	k->n_keys = n_keys;
	n_keys = 0;
	r = 0;

out:
	if (locked)
		keyring_unlock(k);
	if (contents)
		explicit_bzero(contents, strlen(contents));
	keys_free(keys, n_keys);
	return r;
}

int keyring_new(Keyring **ret, const char *directory, const char *context) {
	_cleanup_(keyring_freep) Keyring *k = NULL;
	int r;

	assert_return(ret, -EINVAL);

	if (!context)
		context = KEYRING_CONTEXT_DEFAULT;
	if (!keyring_validate_context(context))
		return -EINVAL;
	/* like libdbus: never touch a home directory on behalf of a setuid caller */
	if (getauxval(AT_SECURE))
		return -EPERM;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->lock_attempts = KEYRING_LOCK_ATTEMPTS;
	k->lock_wait_ms = KEYRING_LOCK_WAIT_MS;

	if (directory) {
		k->directory = strdup(directory);
		if (!k->directory)
			return -ENOMEM;
	} else {
		r = keyring_default_directory(&k->directory);
		if (r < 0)
			return r;
	}
	k->filename = path_join(k->directory, context);
	if (!k->filename)
		return -ENOMEM;
	if (asprintf(&k->filename_lock, "%s.lock", k->filename) < 0) {
		k->filename_lock = NULL;
		return -ENOMEM;
	}

	/* as libdbus: failing to load or to create the directory is not fatal */
	r = keyring_reload(k, false);
	if (r == -ENOMEM)
		return r;
	(void)mkdir(k->directory, 0700);

	*ret = TAKE_PTR(k);
	return 0;
}

Keyring *keyring_free(Keyring *k) {
	if (!k)
		return NULL;
	keys_free(k->keys, k->n_keys);
	free(k->directory);
	free(k->filename);
	free(k->filename_lock);
	free(k);
	return NULL;
}

void keyring_set_lock_timeout(Keyring *k, unsigned attempts, unsigned wait_ms) {
	if (!k)
		return;
	k->lock_attempts = attempts;
	k->lock_wait_ms = wait_ms;
}

static Key *find_recent_key(Keyring *k) {
	int64_t now = now_sec();

	for (size_t i = 0; i < k->n_keys; i++)
		if (now - KEYRING_NEW_KEY_TIMEOUT_SEC < k->keys[i].creation_time)
			return &k->keys[i];
	return NULL;
}

int keyring_get_best_key(Keyring *k, int32_t *ret_id) {
	Key *key;
	int r;

	assert_return(k, -EINVAL);
	assert_return(ret_id, -EINVAL);

	key = find_recent_key(k);
	if (!key) {
		r = keyring_reload(k, true);
		if (r < 0)
			return r;
		key = find_recent_key(k);
		if (!key)
			return -ENOENT;
	}
	*ret_id = key->id;
	return 0;
}

int keyring_get_hex_key(Keyring *k, int32_t id, char **ret_hex) {
	Key *key;
	char *hex;

	assert_return(k, -EINVAL);
	assert_return(ret_hex, -EINVAL);

	key = find_key(k->keys, k->n_keys, id);
	if (!key)
		return -ENOENT;
	hex = malloc(key->secret_len * 2 + 1);
	if (!hex)
		return -ENOMEM;
	hex_encode(key->secret, key->secret_len, hex);
	*ret_hex = hex;
	return 0;
}

size_t keyring_n_keys(const Keyring *k) {
	return k ? k->n_keys : 0;
}

const char *keyring_get_filename(const Keyring *k) {
	return k ? k->filename : NULL;
}
