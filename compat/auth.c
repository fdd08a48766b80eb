/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * auth.c - server side of the D-Bus SASL handshake.
 *
 * DOC: states and replies
 *
 * The conversation follows dbus-daemon's (libdbus dbus-auth.c) server:
 *
 *   WAIT_NUL ── '\0' ──▶ WAIT_AUTH ── AUTH mech ──▶ WAIT_DATA (challenge sent)
 *                           ▲   │                      │
 *                           │   └──── mech succeeds ───┴──▶ WAIT_BEGIN (OK sent)
 *                           └─ REJECTED (CANCEL, ERROR, failure)   │
 *                                                                  └─ BEGIN ─▶ DONE
 *
 * Every complete line gets exactly one reply (REJECTED, OK, DATA, ERROR or
 * AGREE_UNIX_FD), except BEGIN, which gets none.  Commands that make no
 * sense in a state are answered with ERROR and change nothing; only BEGIN
 * before OK, a missing NUL byte, an overlong line, unread output and the
 * AUTH_MAX_FAILURES-th REJECTED end the conversation.
 */

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/auth.h"
#include "compat/keyring.h"
#include "compat/wire.h"
#include "util/macro.h"
#include "util/strutil.h"

typedef enum {
	STATE_WAIT_NUL,
	STATE_WAIT_AUTH,
	STATE_WAIT_DATA,
	STATE_WAIT_BEGIN,
	STATE_DONE,
	STATE_FAILED,
} AuthState;

/* in order of preference: the order of the REJECTED list */
typedef enum {
	MECH_EXTERNAL,
	MECH_COOKIE_SHA1,
	MECH_ANONYMOUS,
	_MECH_MAX,
	MECH_NONE = -1,
} Mech;

static const char *const mech_names[_MECH_MAX] = {
	[MECH_EXTERNAL]		= "EXTERNAL",
	[MECH_COOKIE_SHA1]	= "DBUS_COOKIE_SHA1",
	[MECH_ANONYMOUS]	= "ANONYMOUS",
};

typedef enum {
	CMD_AUTH,
	CMD_CANCEL,
	CMD_DATA,
	CMD_BEGIN,
	CMD_REJECTED,
	CMD_OK,
	CMD_ERROR,
	CMD_NEGOTIATE_UNIX_FD,
	CMD_AGREE_UNIX_FD,
	CMD_UNKNOWN,
} Command;

static const struct {
	const char *name;
	Command cmd;
} command_table[] = {
	{ "AUTH",		CMD_AUTH },
	{ "CANCEL",		CMD_CANCEL },
	{ "DATA",		CMD_DATA },
	{ "BEGIN",		CMD_BEGIN },
	{ "REJECTED",		CMD_REJECTED },
	{ "OK",			CMD_OK },
	{ "ERROR",		CMD_ERROR },
	{ "NEGOTIATE_UNIX_FD",	CMD_NEGOTIATE_UNIX_FD },
	{ "AGREE_UNIX_FD",	CMD_AGREE_UNIX_FD },
};

/* 128 bits of challenge, as libdbus */
#define COOKIE_CHALLENGE_BYTES 16

struct Auth {
	AuthState state;
	int error;			/* with STATE_FAILED */

	/* configuration */
	uid_t peer_uid;
	bool peer_uid_known;
	bool unix_fd_possible;
	bool allowed[_MECH_MAX];
	bool allow_anonymous;	/* <allow_anonymous/>: else ANONYMOUS ends at BEGIN */
	char guid[33];
	char *keyring_dir;

	/* the line being received, without its terminator */
	char *line;
	size_t line_len;
	size_t line_alloc;

	/* queued output: bytes [out_start, out_len) */
	char *out;
	size_t out_start;
	size_t out_len;
	size_t out_alloc;

	/* the mechanism in progress */
	Mech mech;
	bool asked_initial_response;	/* EXTERNAL: empty DATA challenge sent */
	bool have_identity;		/* EXTERNAL: authorization identity given */
	uid_t identity_uid;

	/* DBUS_COOKIE_SHA1 */
	Keyring *keyring;
	int32_t cookie_id;		/* -1: first response not seen yet */
	uid_t cookie_uid;
	char challenge_hex[COOKIE_CHALLENGE_BYTES * 2 + 1];

	unsigned failures;

	/* the outcome, valid from OK on */
	Mech authorized_mech;
	uid_t authorized_uid;
	bool unix_fd_negotiated;
};

static bool is_blank(char c) {
	return c == ' ' || c == '\t';
}

/*
 * a uid as libdbus reads one (_dbus_is_a_number()): the whole string is a
 * number for strtoul() in base 0, so "+0", " 0", "00" and "0x0" are uid 0,
 * "-0" too; not (uid_t)-1 or beyond
 */
static bool parse_uid(const uint8_t *s, size_t len, uid_t *ret) {
	_cleanup_free_ char *str = NULL;
	unsigned long v;
	char *end = NULL;

	if (len == 0 || memchr(s, 0, len))
		return false;
	str = strndup((const char *) s, len);
	if (!str)
		return false;
	errno = 0;
	v = strtoul(str, &end, 0);
	if (errno != 0 || end == str || *end != 0)
		return false;
	if (v >= (uid_t)-1)
		return false;
	*ret = (uid_t)v;
	return true;
}

static bool memeq_const_time(const void *a, const void *b, size_t n) {
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static void explicit_zero(void *p, size_t n) {
	if (p && n)
		explicit_bzero(p, n);
}

static int out_append(Auth *a, const char *s, size_t n) {
	if (a->out_start > 0 && a->out_start == a->out_len)
		a->out_start = a->out_len = 0;
	if (a->out_len + n > a->out_alloc) {
		size_t m;
		char *p;

		if (a->out_start > 0) {
			memmove(a->out, a->out + a->out_start, a->out_len - a->out_start);
			a->out_len -= a->out_start;
			a->out_start = 0;
		}
		m = MAX(a->out_alloc * 2, a->out_len + n);
		m = MAX(m, (size_t)256);
		p = realloc(a->out, m);
		if (!p)
			return -ENOMEM;
		a->out = p;
		a->out_alloc = m;
	}
	memcpy(a->out + a->out_len, s, n);
	a->out_len += n;
	return 0;
}

static int out_str(Auth *a, const char *s) {
	return out_append(a, s, strlen(s));
}

static int send_error(Auth *a, const char *msg) {
	int r;

	r = out_str(a, "ERROR \"");
	if (r < 0)
		return r;
	r = out_str(a, msg);
	if (r < 0)
		return r;
	return out_str(a, "\"\r\n");
}

/* DATA with @data hex-encoded, or an empty DATA line for @len 0 */
static int send_data(Auth *a, const void *data, size_t len) {
	_cleanup_free_ char *hex = NULL;
	int r;

	if (len == 0)
		return out_str(a, "DATA\r\n");
	hex = malloc(len * 2 + 1);
	if (!hex)
		return -ENOMEM;
	hex_encode(data, len, hex);
	r = out_str(a, "DATA ");
	if (r < 0)
		return r;
	r = out_str(a, hex);
	if (r < 0)
		return r;
	return out_str(a, "\r\n");
}

static void shutdown_mech(Auth *a) {
	a->mech = MECH_NONE;
	a->asked_initial_response = false;
	a->have_identity = false;
	a->identity_uid = (uid_t)-1;
	a->cookie_id = -1;
	a->cookie_uid = (uid_t)-1;
	explicit_zero(a->challenge_hex, sizeof(a->challenge_hex));
	a->authorized_mech = MECH_NONE;
	a->authorized_uid = (uid_t)-1;
	a->unix_fd_negotiated = false;
}

static void fail(Auth *a, int error) {
	a->state = STATE_FAILED;
	a->error = error;
}

static int send_rejected(Auth *a) {
	int r;

	r = out_str(a, "REJECTED");
	if (r < 0)
		return r;
	for (Mech m = 0; m < _MECH_MAX; m++) {
		if (!a->allowed[m])
			continue;
		r = out_str(a, " ");
		if (r < 0)
			return r;
		r = out_str(a, mech_names[m]);
		if (r < 0)
			return r;
	}
	r = out_str(a, "\r\n");
	if (r < 0)
		return r;

	shutdown_mech(a);
	a->failures++;
	if (a->failures >= AUTH_MAX_FAILURES)
		fail(a, -EPERM);
	else
		a->state = STATE_WAIT_AUTH;
	return 0;
}

static int send_ok(Auth *a, Mech mech, uid_t uid) {
	int r;

	r = out_str(a, "OK ");
	if (r < 0)
		return r;
	r = out_str(a, a->guid);
	if (r < 0)
		return r;
	r = out_str(a, "\r\n");
	if (r < 0)
		return r;
	a->authorized_mech = mech;
	a->authorized_uid = uid;
	a->state = STATE_WAIT_BEGIN;
	return 0;
}

/* EXTERNAL: the identity must be the uid the socket reports */
static int mech_external_data(Auth *a, const uint8_t *data, size_t len) {
	uid_t uid;

	if (!a->peer_uid_known)
		return send_rejected(a);

	if (len > 0) {
		if (a->have_identity)
			return send_rejected(a);
		if (!parse_uid(data, len, &uid))
			return send_rejected(a);
		a->have_identity = true;
		a->identity_uid = uid;
	}

	/* no identity yet: ask for one with an empty challenge, once */
	if (!a->have_identity && !a->asked_initial_response) {
		int r = send_data(a, NULL, 0);

		if (r < 0)
			return r;
		a->asked_initial_response = true;
		a->state = STATE_WAIT_DATA;
		return 0;
	}

	/* still none after asking: the identity is the socket's */
	uid = a->have_identity ? a->identity_uid : a->peer_uid;
	if (uid == (uid_t)-1 || uid != a->peer_uid)
		return send_rejected(a);
	return send_ok(a, MECH_EXTERNAL, uid);
}

/* ANONYMOUS: optional trace string, which must be UTF-8 */
static int mech_anonymous_data(Auth *a, const uint8_t *data, size_t len) {
	if (len > 0 && !wire_utf8_is_valid((const char *) data, len))
		return send_rejected(a);
	return send_ok(a, MECH_ANONYMOUS, (uid_t)-1);
}

/* the user name or uid a DBUS_COOKIE_SHA1 client claims */
static bool resolve_user(const uint8_t *data, size_t len, uid_t *ret) {
	_cleanup_free_ char *buf = NULL;
	struct passwd pw, *res = NULL;
	_cleanup_free_ char *name = NULL;
	long sz;

	if (parse_uid(data, len, ret))
		return true;
	if (len == 0 || memchr(data, 0, len))
		return false;
	name = strndup((const char *)data, len);
	if (!name)
		return false;
	sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	if (sz <= 0)
		sz = 16384;
	buf = malloc(sz);
	if (!buf)
		return false;
	if (getpwnam_r(name, &pw, buf, sz, &res) != 0 || !res)
		return false;
	*ret = pw.pw_uid;
	return true;
}

static int cookie_first(Auth *a, const uint8_t *data, size_t len) {
	uint8_t challenge[COOKIE_CHALLENGE_BYTES];
	char msg[sizeof(KEYRING_CONTEXT_DEFAULT) + 16 + sizeof(a->challenge_hex)];
	int32_t id;
	uid_t uid;
	int r, n;

	/*
	 * DBUS_COOKIE_SHA1 only proves that the client can read our home
	 * directory: it authenticates the server's own user and nobody else.
	 */
	if (!resolve_user(data, len, &uid) || uid != geteuid())
		return send_rejected(a);

	if (!a->keyring) {
		r = keyring_new(&a->keyring, a->keyring_dir, KEYRING_CONTEXT_DEFAULT);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return send_rejected(a);
	}

	r = keyring_get_best_key(a->keyring, &id);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return send_rejected(a);

	r = keyring_random_bytes(challenge, sizeof(challenge));
	if (r < 0)
		return send_rejected(a);
	hex_encode(challenge, sizeof(challenge), a->challenge_hex);
	explicit_zero(challenge, sizeof(challenge));

	n = snprintf(msg, sizeof(msg), "%s %" PRIi32 " %s",
		     KEYRING_CONTEXT_DEFAULT, id, a->challenge_hex);
	assert(n > 0 && (size_t)n < sizeof(msg));
	r = send_data(a, msg, n);
	if (r < 0)
		return r;

	a->cookie_id = id;
	a->cookie_uid = uid;
	a->state = STATE_WAIT_DATA;
	return 0;
}

static int cookie_second(Auth *a, const uint8_t *data, size_t len) {
	_cleanup_free_ char *cookie = NULL, *to_hash = NULL;
	const uint8_t *client_challenge, *client_hash;
	size_t challenge_len, hash_len, i, n;
	char hash[41];
	bool ok;
	int r;

	/* "<client challenge> <sha1(server challenge:client challenge:cookie)>" */
	for (i = 0; i < len && !is_blank(data[i]); i++)
		;
	if (i == len)
		return send_rejected(a);
	client_challenge = data;
	challenge_len = i;
	while (i < len && is_blank(data[i]))
		i++;
	client_hash = data + i;
	hash_len = len - i;
	if (challenge_len == 0 || hash_len == 0)
		return send_rejected(a);

	r = keyring_get_hex_key(a->keyring, a->cookie_id, &cookie);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return send_rejected(a);

	n = strlen(a->challenge_hex) + 1 + challenge_len + 1 + strlen(cookie);
	to_hash = malloc(n + 1);
	if (!to_hash) {
		explicit_zero(cookie, strlen(cookie));
		return -ENOMEM;
	}
	memcpy(to_hash, a->challenge_hex, strlen(a->challenge_hex));
	i = strlen(a->challenge_hex);
	to_hash[i++] = ':';
	memcpy(to_hash + i, client_challenge, challenge_len);
	i += challenge_len;
	to_hash[i++] = ':';
	memcpy(to_hash + i, cookie, strlen(cookie));
	i += strlen(cookie);
	to_hash[i] = 0;

	keyring_sha1_hex(to_hash, n, hash);
	explicit_zero(to_hash, n);
	explicit_zero(cookie, strlen(cookie));

	ok = hash_len == 40 && memeq_const_time(hash, client_hash, 40);
	explicit_zero(hash, sizeof(hash));
	if (!ok)
		return send_rejected(a);
	return send_ok(a, MECH_COOKIE_SHA1, a->cookie_uid);
}

static int mech_cookie_data(Auth *a, const uint8_t *data, size_t len) {
	if (a->cookie_id < 0)
		return cookie_first(a, data, len);
	return cookie_second(a, data, len);
}

static int mech_data(Auth *a, Mech m, const uint8_t *data, size_t len) {
	switch (m) {
	case MECH_EXTERNAL:
		return mech_external_data(a, data, len);
	case MECH_COOKIE_SHA1:
		return mech_cookie_data(a, data, len);
	case MECH_ANONYMOUS:
		return mech_anonymous_data(a, data, len);
	default:
		assert(false);
		return -EINVAL;
	}
}

/* hex-decode @args and hand them to mechanism @m */
static int process_data(Auth *a, Mech m, const char *args, size_t len) {
	_cleanup_free_ uint8_t *data = NULL;
	ssize_t n;
	int r;

	n = hex_decode(args, len, &data);
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n < 0)
		return send_error(a, "Invalid hex encoding");

	a->mech = m;
	r = mech_data(a, m, data, n);
	explicit_zero(data, n);
	return r;
}

static int handle_auth(Auth *a, const char *args, size_t len) {
	size_t i, j;

	if (len == 0)
		return send_rejected(a);

	for (i = 0; i < len && !is_blank(args[i]); i++)
		;
	for (j = i; j < len && is_blank(args[j]); j++)
		;

	for (Mech m = 0; m < _MECH_MAX; m++)
		if (a->allowed[m] && strlen(mech_names[m]) == i &&
		    memcmp(mech_names[m], args, i) == 0)
			return process_data(a, m, args + j, len - j);

	return send_rejected(a);
}

static Command lookup_command(const char *s, size_t len) {
	for (size_t i = 0; i < ELEMENTSOF(command_table); i++)
		if (strlen(command_table[i].name) == len &&
		    memcmp(command_table[i].name, s, len) == 0)
			return command_table[i].cmd;
	return CMD_UNKNOWN;
}

static int handle_command(Auth *a, Command cmd, const char *args, size_t len) {
	switch (a->state) {
	case STATE_WAIT_AUTH:
		switch (cmd) {
		case CMD_AUTH:
			return handle_auth(a, args, len);
		case CMD_CANCEL:
		case CMD_DATA:
			return send_error(a, "Not currently in an auth conversation");
		case CMD_BEGIN:
			fail(a, -EBADMSG);
			return 0;
		case CMD_ERROR:
			return send_rejected(a);
		case CMD_NEGOTIATE_UNIX_FD:
			return send_error(a, "Need to authenticate first");
		default:
			return send_error(a, "Unknown command");
		}

	case STATE_WAIT_DATA:
		switch (cmd) {
		case CMD_AUTH:
			return send_error(a, "Sent AUTH while another AUTH in progress");
		case CMD_CANCEL:
		case CMD_ERROR:
			return send_rejected(a);
		case CMD_DATA:
			return process_data(a, a->mech, args, len);
		case CMD_BEGIN:
			fail(a, -EBADMSG);
			return 0;
		case CMD_NEGOTIATE_UNIX_FD:
			return send_error(a, "Need to authenticate first");
		default:
			return send_error(a, "Unknown command");
		}

	case STATE_WAIT_BEGIN:
		switch (cmd) {
		case CMD_AUTH:
			return send_error(a, "Sent AUTH while expecting BEGIN");
		case CMD_DATA:
			return send_error(a, "Sent DATA while expecting BEGIN");
		case CMD_BEGIN:
			/* as libdbus's transport: ANONYMOUS is offered and
			 * accepted whatever the configuration says, and a
			 * connection that used it without <allow_anonymous/>
			 * is dropped at BEGIN */
			if (a->authorized_mech == MECH_ANONYMOUS && !a->allow_anonymous) {
				fail(a, -EACCES);
				return 0;
			}
			a->state = STATE_DONE;
			return 0;
		case CMD_NEGOTIATE_UNIX_FD:
			if (!a->unix_fd_possible)
				return send_error(a, "Unix FD passing not supported, not authenticated or otherwise not possible");
			a->unix_fd_negotiated = true;
			return out_str(a, "AGREE_UNIX_FD\r\n");
		case CMD_CANCEL:
		case CMD_ERROR:
			return send_rejected(a);
		default:
			return send_error(a, "Unknown command");
		}

	default:
		assert(false);
		return -EINVAL;
	}
}

/* one line, without its "\r\n" */
static int process_line(Auth *a, const char *line, size_t len) {
	size_t i, j;

	for (i = 0; i < len; i++)
		if (line[i] == 0 || (uint8_t)line[i] >= 0x80)
			return send_error(a, "Command contained non-ASCII");

	for (i = 0; i < len && !is_blank(line[i]); i++)
		;
	for (j = i; j < len && is_blank(line[j]); j++)
		;
	return handle_command(a, lookup_command(line, i), line + j, len - j);
}

static bool valid_guid(const char *g) {
	if (!g || strlen(g) != 32)
		return false;
	for (size_t i = 0; i < 32; i++)
		if (hexval(g[i]) < 0)
			return false;
	return true;
}

int auth_new(Auth **ret, const AuthConfig *cfg) {
	_cleanup_(auth_freep) Auth *a = NULL;

	assert_return(ret, -EINVAL);
	assert_return(cfg, -EINVAL);
	assert_return(valid_guid(cfg->guid_hex), -EINVAL);

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;

	a->state = STATE_WAIT_NUL;
	a->peer_uid = cfg->peer_uid;
	a->peer_uid_known = cfg->peer_uid_known;
	a->unix_fd_possible = cfg->unix_fd_possible;
	a->allow_anonymous = cfg->allow_anonymous;
	memcpy(a->guid, cfg->guid_hex, 32);
	a->guid[32] = 0;
	if (cfg->keyring_dir) {
		a->keyring_dir = strdup(cfg->keyring_dir);
		if (!a->keyring_dir)
			return -ENOMEM;
	}

	for (Mech m = 0; m < _MECH_MAX; m++) {
		bool allowed = !cfg->mechanisms;

		if (cfg->mechanisms)
			for (char **i = cfg->mechanisms; *i; i++)
				if (streq(*i, mech_names[m]))
					allowed = true;
		a->allowed[m] = allowed;
	}

	shutdown_mech(a);
	*ret = TAKE_PTR(a);
	return 0;
}

Auth *auth_free(Auth *a) {
	if (!a)
		return NULL;
	explicit_zero(a->line, a->line_alloc);
	free(a->line);
	free(a->out);
	free(a->keyring_dir);
	keyring_free(a->keyring);
	explicit_zero(a, sizeof(*a));
	free(a);
	return NULL;
}

static int line_append(Auth *a, const uint8_t *s, size_t n) {
	if (a->line_len + n > a->line_alloc) {
		size_t m = MAX(a->line_alloc * 2, a->line_len + n);
		char *p;

		m = MIN(MAX(m, (size_t)128), (size_t)AUTH_LINE_MAX + 2);
		p = realloc(a->line, m);
		if (!p)
			return -ENOMEM;
		a->line = p;
		a->line_alloc = m;
	}
	memcpy(a->line + a->line_len, s, n);
	a->line_len += n;
	return 0;
}

int auth_feed(Auth *a, const uint8_t *in, size_t len, size_t *ret_consumed) {
	size_t pos = 0;
	int r;

	assert_return(a, -EINVAL);
	assert_return(in || len == 0, -EINVAL);

	if (a->state == STATE_FAILED)
		return a->error;
	if (a->state == STATE_DONE) {
		if (ret_consumed)
			*ret_consumed = 0;
		return AUTH_DONE;
	}

	while (pos < len) {
		const uint8_t *nl;
		size_t chunk;

		if (a->state == STATE_WAIT_NUL) {
			if (in[pos] != 0) {
				fail(a, -EBADMSG);
				return a->error;
			}
			pos++;
			a->state = STATE_WAIT_AUTH;
			continue;
		}

		nl = memchr(in + pos, '\n', len - pos);
		chunk = nl ? (size_t)(nl - (in + pos)) + 1 : len - pos;
		if (a->line_len + chunk > (size_t)AUTH_LINE_MAX + 2) {
			fail(a, -EBADMSG);
			return a->error;
		}
		r = line_append(a, in + pos, chunk);
		if (r < 0) {
			fail(a, r);
			return r;
		}
		pos += chunk;

		if (!nl || a->line_len < 2 || a->line[a->line_len - 2] != '\r') {
			/* no "\r\n" yet; a bare '\n' is part of the line */
			if (a->line_len > (size_t)AUTH_LINE_MAX + 1) {
				fail(a, -EBADMSG);
				return a->error;
			}
			continue;
		}

		r = process_line(a, a->line, a->line_len - 2);
		explicit_zero(a->line, a->line_len);
		a->line_len = 0;
		if (r < 0) {
			fail(a, r);
			return r;
		}
		if (a->state == STATE_FAILED)
			return a->error;
		if (a->out_len - a->out_start > AUTH_OUTPUT_MAX) {
			fail(a, -EBADMSG);
			return a->error;
		}
		if (a->state == STATE_DONE) {
			if (ret_consumed)
				*ret_consumed = pos;
			return AUTH_DONE;
		}
	}

	if (ret_consumed)
		*ret_consumed = pos;
	return AUTH_CONTINUE;
}

const void *auth_output(Auth *a, size_t *ret_len) {
	size_t n;

	if (!a) {
		if (ret_len)
			*ret_len = 0;
		return NULL;
	}
	n = a->out_len - a->out_start;
	if (ret_len)
		*ret_len = n;
	return n > 0 ? a->out + a->out_start : NULL;
}

void auth_output_consume(Auth *a, size_t n) {
	if (!a)
		return;
	n = MIN(n, a->out_len - a->out_start);
	a->out_start += n;
	if (a->out_start == a->out_len)
		a->out_start = a->out_len = 0;
}

bool auth_is_done(const Auth *a) {
	return a && a->state == STATE_DONE;
}

bool auth_unix_fd_negotiated(const Auth *a) {
	return a && a->unix_fd_negotiated;
}

uid_t auth_get_uid(const Auth *a) {
	if (!a || (a->state != STATE_WAIT_BEGIN && a->state != STATE_DONE))
		return (uid_t)-1;
	return a->authorized_uid;
}

bool auth_is_anonymous(const Auth *a) {
	if (!a || (a->state != STATE_WAIT_BEGIN && a->state != STATE_DONE))
		return false;
	return a->authorized_mech == MECH_ANONYMOUS;
}

const char *auth_mechanism(const Auth *a) {
	if (!a || (a->state != STATE_WAIT_BEGIN && a->state != STATE_DONE))
		return NULL;
	if (a->authorized_mech == MECH_NONE)
		return NULL;
	return mech_names[a->authorized_mech];
}
