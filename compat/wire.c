/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wire.c - the dbus1 wire format: framing, header parsing and validation,
 * body validation, the forwarded-header rewrite, argument extraction for
 * match rules and bloom filters, and a small message builder.
 *
 * DOC: validation rules
 *
 * The rules are the D-Bus specification's, implemented as libdbus 1.14
 * implements them (dbus-marshal-validate.c, dbus-marshal-header.c), so that
 * the bus accepts what dbus-daemon accepts.  Where libdbus is laxer than the
 * specification and the laxness can hurt receivers, we follow the
 * specification; the differences are listed here and tested in
 * tests/unit/test-wire.c:
 *
 *  - bus names in DESTINATION and SENDER: libdbus accepts unique names
 *    without a dot (":", ":1") and with empty elements (":.a"); we require
 *    the specification's syntax.
 *  - PATH /org/freedesktop/DBus/Local and INTERFACE org.freedesktop.DBus.Local:
 *    libdbus refuses to load them; we parse them and let the daemon decide
 *    (wire_header_is_local()).
 *
 * (dbus_message_demarshal() also refuses every message with UNIX_FDS > 0,
 * because it has no fds to attach; that is a property of the API, not of
 * the format.)
 *
 * libdbus's own rules that we mirror although the specification is silent
 * or different: signatures allow at most 32 *consecutive* 'a' codes (nesting
 * through structs or dict entries is bounded by their own 32 limits and by
 * the 64-level value depth), unknown message types are accepted with no
 * required fields, and header field 10 (CONTAINER_INSTANCE) must be an
 * object path and appear at most once.
 *
 * Everything is single pass over the bytes and allocation free.  Recursion
 * depth is bounded by WIRE_MAX_DEPTH (+ a small constant).
 */

#include <stdarg.h>

#include "compat/protocol.h"
#include "compat/wire.h"
#include "util/macro.h"

#ifndef _fallthrough_
#define _fallthrough_ __attribute__((__fallthrough__))
#endif

/* ------------------------------------------------------------------------ */
/* byte order */

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BE true
#else
#define HOST_BE false
#endif

static inline uint32_t rd32(const uint8_t *p, bool be) {
	uint32_t v;
	memcpy(&v, p, 4);
	return be == HOST_BE ? v : __builtin_bswap32(v);
}

static inline void wr32(uint8_t *p, uint32_t v, bool be) {
	if (be != HOST_BE)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

static inline void wr16(uint8_t *p, uint16_t v, bool be) {
	if (be != HOST_BE)
		v = __builtin_bswap16(v);
	memcpy(p, &v, 2);
}

static inline void wr64(uint8_t *p, uint64_t v, bool be) {
	if (be != HOST_BE)
		v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* ------------------------------------------------------------------------ */
/* character classes */

enum {
	CC_INITIAL = 1,		/* [A-Za-z_]: first char of a name element */
	CC_NAME = 2,		/* [A-Za-z0-9_] */
	CC_BUS = 4,		/* [A-Za-z0-9_-] */
	CC_BUS_INITIAL = 8,	/* [A-Za-z_-] */
};

static const uint8_t cclass[256] = {
#define R(lo, hi, v) [lo ... hi] = v
	R('A', 'Z', CC_INITIAL | CC_NAME | CC_BUS | CC_BUS_INITIAL),
	R('a', 'z', CC_INITIAL | CC_NAME | CC_BUS | CC_BUS_INITIAL),
	['_'] = CC_INITIAL | CC_NAME | CC_BUS | CC_BUS_INITIAL,
	R('0', '9', CC_NAME | CC_BUS),
	['-'] = CC_BUS | CC_BUS_INITIAL,
#undef R
};

#define IS(c, cl) (cclass[(uint8_t)(c)] & (cl))

/* ------------------------------------------------------------------------ */
/* names */

bool wire_object_path_is_valid(const char *p, size_t len) {
	size_t last_slash = 0;

	if (len == 0 || p[0] != '/')
		return false;
	for (size_t i = 1; i < len; i++) {
		if (p[i] == '/') {
			if (i - last_slash < 2)
				return false;	/* empty element */
			last_slash = i;
		} else if (!IS(p[i], CC_NAME))
			return false;
	}
	/* no trailing slash unless the path is "/" */
	return len == 1 || len - last_slash >= 2;
}

/* interface and error names: >= 2 dot-separated [A-Za-z_][A-Za-z0-9_]* */
bool wire_interface_is_valid(const char *p, size_t len) {
	bool dot = false;

	if (len == 0 || len > WIRE_MAX_NAME_LEN || !IS(p[0], CC_INITIAL))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (p[i] == '.') {
			if (i + 1 == len || !IS(p[i + 1], CC_INITIAL))
				return false;
			dot = true;
			i++;
		} else if (!IS(p[i], CC_NAME))
			return false;
	}
	return dot;
}

bool wire_error_name_is_valid(const char *p, size_t len) {
	return wire_interface_is_valid(p, len);
}

bool wire_member_is_valid(const char *p, size_t len) {
	if (len == 0 || len > WIRE_MAX_NAME_LEN || !IS(p[0], CC_INITIAL))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!IS(p[i], CC_NAME))
			return false;
	return true;
}

/* ":" then >= 2 non-empty dot-separated elements of [A-Za-z0-9_-] */
bool wire_unique_name_is_valid(const char *p, size_t len) {
	bool dot = false;

	if (len < 2 || len > WIRE_MAX_NAME_LEN || p[0] != ':' || !IS(p[1], CC_BUS))
		return false;
	for (size_t i = 2; i < len; i++) {
		if (p[i] == '.') {
			if (i + 1 == len || !IS(p[i + 1], CC_BUS))
				return false;
			dot = true;
			i++;
		} else if (!IS(p[i], CC_BUS))
			return false;
	}
	return dot;
}

/* >= 2 dot-separated elements of [A-Za-z_-][A-Za-z0-9_-]* */
bool wire_well_known_name_is_valid(const char *p, size_t len) {
	bool dot = false;

	if (len == 0 || len > WIRE_MAX_NAME_LEN || !IS(p[0], CC_BUS_INITIAL))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (p[i] == '.') {
			if (i + 1 == len || !IS(p[i + 1], CC_BUS_INITIAL))
				return false;
			dot = true;
			i++;
		} else if (!IS(p[i], CC_BUS))
			return false;
	}
	return dot;
}

bool wire_bus_name_is_valid_libdbus(const char *p, size_t len, bool is_namespace) {
	bool dot = false;

	if (len == 0 || len > WIRE_MAX_NAME_LEN)
		return false;
	if (p[0] == ':') {
		for (size_t i = 1; i < len; i++) {
			if (p[i] == '.') {
				if (i + 1 == len || !IS(p[i + 1], CC_BUS))
					return false;
				i++;
			} else if (!IS(p[i], CC_BUS))
				return false;
		}
		return true;
	}
	if (!IS(p[0], CC_BUS_INITIAL))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (p[i] == '.') {
			if (i + 1 == len || !IS(p[i + 1], CC_BUS_INITIAL))
				return false;
			dot = true;
			i++;
		} else if (!IS(p[i], CC_BUS))
			return false;
	}
	return dot || is_namespace;
}

static bool libdbus_compat;

void wire_set_libdbus_compat(bool enable) {
	libdbus_compat = enable;
}

bool wire_bus_name_is_valid(const char *p, size_t len) {
	if (len > 0 && p[0] == ':')
		return wire_unique_name_is_valid(p, len);
	return wire_well_known_name_is_valid(p, len);
}

bool wire_utf8_is_valid(const char *str, size_t len) {
	const uint8_t *s = (const uint8_t *)str, *end = s + len;

	while (s < end) {
		/* fast path: 8 ASCII bytes without NUL */
		while (end - s >= 8) {
			uint64_t w;

			memcpy(&w, s, 8);
			if ((w & 0x8080808080808080ULL) ||
			    ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL))
				break;
			s += 8;
		}
		if (s >= end)
			break;

		uint8_t c = *s;
		if (c < 0x80) {
			if (c == 0)
				return false;
			s++;
			continue;
		}
		if (c < 0xc2)		/* continuation byte, or overlong */
			return false;
		if (c < 0xe0) {
			if (end - s < 2 || (s[1] & 0xc0) != 0x80)
				return false;
			s += 2;
		} else if (c < 0xf0) {
			uint8_t lo = c == 0xe0 ? 0xa0 : 0x80;	/* overlong */
			uint8_t hi = c == 0xed ? 0x9f : 0xbf;	/* surrogates */

			if (end - s < 3 || s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
				return false;
			s += 3;
		} else if (c < 0xf5) {
			uint8_t lo = c == 0xf0 ? 0x90 : 0x80;	/* overlong */
			uint8_t hi = c == 0xf4 ? 0x8f : 0xbf;	/* > U+10FFFF */

			if (end - s < 4 || s[1] < lo || s[1] > hi ||
			    (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
				return false;
			s += 4;
		} else
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* signatures */

static inline bool type_is_basic(char c) {
	switch (c) {
	case 'y': case 'b': case 'n': case 'q': case 'i': case 'u': case 'x':
	case 't': case 'd': case 'h': case 's': case 'o': case 'g':
		return true;
	default:
		return false;
	}
}

/* size == alignment of the fixed types, 0 for the others */
static inline unsigned type_fixed_size(char c) {
	switch (c) {
	case 'y':
		return 1;
	case 'n': case 'q':
		return 2;
	case 'b': case 'i': case 'u': case 'h':
		return 4;
	case 'x': case 't': case 'd':
		return 8;
	default:
		return 0;
	}
}

static inline unsigned type_alignment(char c) {
	switch (c) {
	case 'y': case 'g': case 'v':
		return 1;
	case 'n': case 'q':
		return 2;
	case 'b': case 'i': case 'u': case 'h': case 's': case 'o': case 'a':
		return 4;
	case 'x': case 't': case 'd': case '(': case '{':
		return 8;
	default:
		return 1;
	}
}

/*
 * Exactly _dbus_validate_signature_with_reason(): at most 255 codes, at most
 * 32 consecutive 'a', 32 nested structs, 32 nested dict entries; structs not
 * empty; dict entries only directly in an array, with a basic key and
 * exactly two members; every array has an element type.
 */
bool wire_signature_is_valid(const char *p, size_t len) {
	unsigned struct_depth = 0, array_depth = 0, dict_depth = 0;
	unsigned counts[2 * 32 + 2];
	unsigned top = 0;
	char last = 0;

	if (len > WIRE_MAX_SIGNATURE_LEN)
		return false;

	counts[0] = 0;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		switch (c) {
		case 'y': case 'b': case 'n': case 'q': case 'i': case 'u': case 'h':
		case 'x': case 't': case 'd': case 's': case 'o': case 'g': case 'v':
			break;
		case 'a':
			if (++array_depth > 32)
				return false;
			break;
		case '(':
			if (++struct_depth > 32)
				return false;
			counts[++top] = 0;
			break;
		case ')':
			if (struct_depth == 0 || last == '(')
				return false;
			top--;
			struct_depth--;
			break;
		case '{':
			if (last != 'a' || ++dict_depth > 32)
				return false;
			counts[++top] = 0;
			break;
		case '}':
			if (dict_depth == 0)
				return false;
			dict_depth--;
			if (counts[top--] != 2)
				return false;
			break;
		default:
			return false;
		}

		if (c != 'a' && c != '{' && c != '(')
			counts[top]++;

		if (array_depth > 0) {
			if (c == 'a') {
				if (i + 1 < len && (p[i + 1] == ')' || p[i + 1] == '}'))
					return false;
			} else
				array_depth = 0;
		}

		if (last == '{' && !type_is_basic(c))
			return false;

		last = c;
	}

	return array_depth == 0 && struct_depth == 0 && dict_depth == 0;
}

/* length of the complete type at the start of a valid signature */
static size_t sig_complete_len(const char *s, size_t len) {
	size_t i = 0;
	unsigned depth = 0;

	while (i < len && s[i] == 'a')
		i++;
	if (i >= len)
		return len;
	if (s[i] != '(' && s[i] != '{')
		return i + 1;
	for (; i < len; i++) {
		if (s[i] == '(' || s[i] == '{')
			depth++;
		else if (s[i] == ')' || s[i] == '}') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return len;
}

/* a valid signature that is exactly one complete type */
static bool sig_is_single(const char *s, size_t len) {
	if (len == 1)		/* the common case: fast path */
		return type_is_basic(s[0]) || s[0] == 'v';
	return len > 0 && wire_signature_is_valid(s, len) && sig_complete_len(s, len) == len;
}

/* ------------------------------------------------------------------------ */
/* values */

typedef struct Validator {
	const uint8_t *base;	/* alignment is relative to this (8-aligned in the message) */
	size_t end;		/* offset of the end of the data */
	bool be;
	bool trusted;		/* strings were validated before: structure only */
} Validator;

/* skip zero padding up to alignment @a; fail if it would pass @end */
static inline bool pad(const Validator *v, size_t *pos, unsigned a, size_t end) {
	size_t p = *pos, n = ALIGN_TO(p, (size_t)a);

	if (n > end)
		return false;
	for (; p < n; p++)
		if (v->base[p] != 0)
			return false;
	*pos = n;
	return true;
}

static int validate_one(const Validator *v, const char **sig, const char *sig_end,
			size_t *pos, size_t end, unsigned depth);

/* string or object path: u32 length, bytes, NUL */
static int validate_string(const Validator *v, size_t *pos, size_t end, char type,
			   WireString *ret) {
	size_t p = *pos;
	uint32_t len;

	if (!pad(v, &p, 4, end) || end - p < 4)
		return -EBADMSG;
	len = rd32(v->base + p, v->be);
	p += 4;
	if (len >= end - p)	/* room for the NUL */
		return -EBADMSG;

	const char *s = (const char *)v->base + p;
	if (v->trusted) {
		/* structure only */
	} else if (type == 'o') {
		if (!wire_object_path_is_valid(s, len))
			return -EBADMSG;
	} else if (!wire_utf8_is_valid(s, len))
		return -EBADMSG;
	if (v->base[p + len] != 0)
		return -EBADMSG;
	if (ret) {
		ret->s = s;
		ret->len = len;
	}
	*pos = p + len + 1;
	return 0;
}

static int validate_signature_value(const Validator *v, size_t *pos, size_t end,
				    WireString *ret) {
	size_t p = *pos;
	uint8_t len;

	if (p >= end)
		return -EBADMSG;
	len = v->base[p++];
	if ((size_t)len + 1 > end - p)
		return -EBADMSG;
	if ((!v->trusted && !wire_signature_is_valid((const char *)v->base + p, len)) || v->base[p + len] != 0)
		return -EBADMSG;
	if (ret) {
		ret->s = (const char *)v->base + p;
		ret->len = len;
	}
	*pos = p + len + 1;
	return 0;
}

static int validate_fixed(const Validator *v, char type, size_t *pos, size_t end) {
	unsigned size = type_fixed_size(type);
	size_t p = *pos;

	if (!pad(v, &p, size, end) || end - p < size)
		return -EBADMSG;
	if (type == 'b' && rd32(v->base + p, v->be) > 1)
		return -EBADMSG;
	/* as libdbus, a UNIX_FD value is not checked against UNIX_FDS: the
	 * receiver finds out when it uses the index */
	*pos = p + size;
	return 0;
}

static int validate_array(const Validator *v, const char **sig, const char *sig_end,
			  size_t *pos, size_t end, unsigned depth) {
	const char *elem = *sig + 1;
	size_t elem_len = sig_complete_len(elem, sig_end - elem);
	size_t p = *pos, array_end;
	uint32_t len;
	unsigned size;

	if (!pad(v, &p, 4, end) || end - p < 4)
		return -EBADMSG;
	len = rd32(v->base + p, v->be);
	p += 4;
	/* the padding to the first element is there even if the array is empty */
	if (!pad(v, &p, type_alignment(*elem), end))
		return -EBADMSG;
	if (len > end - p)
		return -EBADMSG;
	if (len > WIRE_MAX_ARRAY_SIZE)
		return -EBADMSG;
	array_end = p + len;

	size = type_fixed_size(*elem);
	if (size > 0) {
		if (len % size != 0)
			return -EBADMSG;
		if (*elem == 'b') {
			for (; p < array_end; p += 4)
				if (rd32(v->base + p, v->be) > 1)
					return -EBADMSG;
		}
		p = array_end;
	} else if (len > 0) {
		if (depth + 1 > WIRE_MAX_DEPTH)
			return -EBADMSG;
		while (p < array_end) {
			const char *s = elem;
			int r = validate_one(v, &s, elem + elem_len, &p, array_end, depth + 1);
			if (r < 0)
				return r;
		}
	}

	*sig = elem + elem_len;
	*pos = p;
	return 0;
}

static int validate_variant(const Validator *v, size_t *pos, size_t end, unsigned depth) {
	size_t p = *pos;
	uint8_t len;
	const char *s;
	int r;

	if (p >= end)
		return -EBADMSG;
	len = v->base[p++];
	if ((size_t)len + 1 > end - p)
		return -EBADMSG;
	s = (const char *)v->base + p;
	if (!sig_is_single(s, len) || v->base[p + len] != 0)
		return -EBADMSG;
	p += len + 1;
	if (depth + 1 > WIRE_MAX_DEPTH)
		return -EBADMSG;
	r = validate_one(v, &s, s + len, &p, end, depth + 1);
	if (r < 0)
		return r;
	*pos = p;
	return 0;
}

static int validate_struct(const Validator *v, const char **sig, const char *sig_end,
			   size_t *pos, size_t end, unsigned depth) {
	char close = **sig == '(' ? ')' : '}';
	const char *s = *sig + 1;
	size_t p = *pos;

	if (!pad(v, &p, 8, end))
		return -EBADMSG;
	if (depth + 1 > WIRE_MAX_DEPTH)
		return -EBADMSG;
	while (*s != close) {
		int r = validate_one(v, &s, sig_end, &p, end, depth + 1);
		if (r < 0)
			return r;
	}
	*sig = s + 1;
	*pos = p;
	return 0;
}

/*
 * validate_one() - validate the value of the complete type at *@sig
 * @depth:	the nesting level of this value (0 for a body's arguments);
 *		each container's contents are one level deeper, and no level
 *		may exceed WIRE_MAX_DEPTH (libdbus's "total_depth")
 */
static int validate_one(const Validator *v, const char **sig, const char *sig_end,
			size_t *pos, size_t end, unsigned depth) {
	char t = **sig;
	int r;

	if (*pos >= end)
		return -EBADMSG;

	switch (t) {
	case 'y':
		(*pos)++;
		break;
	case 'b': case 'n': case 'q': case 'i': case 'u': case 'h':
	case 'x': case 't': case 'd':
		r = validate_fixed(v, t, pos, end);
		if (r < 0)
			return r;
		break;
	case 's': case 'o':
		r = validate_string(v, pos, end, t, NULL);
		if (r < 0)
			return r;
		break;
	case 'g':
		r = validate_signature_value(v, pos, end, NULL);
		if (r < 0)
			return r;
		break;
	case 'v':
		r = validate_variant(v, pos, end, depth);
		if (r < 0)
			return r;
		break;
	case 'a':
		return validate_array(v, sig, sig_end, pos, end, depth);
	case '(': case '{':
		return validate_struct(v, sig, sig_end, pos, end, depth);
	default:
		return -EBADMSG;
	}
	(*sig)++;
	return 0;
}

int wire_body_validate(const WireHeader *h, const uint8_t *body, size_t body_len) {
	Validator v;
	const char *s, *e;
	size_t pos = 0;

	assert_return(h, -EINVAL);
	assert_return(body || body_len == 0, -EINVAL);

	v = (Validator) {
		.base = body,
		.end = body_len,
		.be = h->big_endian,
	};

	if (!h->signature.s)
		return body_len == 0 ? 0 : -EBADMSG;

	s = h->signature.s;
	e = s + h->signature.len;
	while (s < e) {
		int r = validate_one(&v, &s, e, &pos, body_len, 0);
		if (r < 0)
			return r;
	}
	return pos == body_len ? 0 : -EBADMSG;
}

/* ------------------------------------------------------------------------ */
/* framing and header */

int wire_frame_size(const uint8_t *data, size_t len, size_t max_size, size_t *ret_total) {
	uint32_t body_len, fields_len;
	uint64_t total;
	bool be;

	assert_return(data || len == 0, -EINVAL);
	assert_return(ret_total, -EINVAL);

	*ret_total = 0;
	if (len >= 1 && data[0] != 'l' && data[0] != 'B')
		return -EBADMSG;
	if (len >= 4 && data[3] != 1)
		return -EBADMSG;
	if (len < WIRE_FIXED_HEADER_SIZE)
		return 0;

	be = data[0] == 'B';
	body_len = rd32(data + 4, be);
	fields_len = rd32(data + 12, be);
	if (fields_len > WIRE_MAX_ARRAY_SIZE)
		return -EBADMSG;

	total = ALIGN8((uint64_t)WIRE_FIXED_HEADER_SIZE + fields_len) + body_len;
	if (total > WIRE_MAX_MESSAGE_SIZE || total > max_size)
		return -EMSGSIZE;

	*ret_total = (size_t)total;
	return 0;
}

static const char field_types[] = {
	[WIRE_FIELD_PATH] = 'o',
	[WIRE_FIELD_INTERFACE] = 's',
	[WIRE_FIELD_MEMBER] = 's',
	[WIRE_FIELD_ERROR_NAME] = 's',
	[WIRE_FIELD_REPLY_SERIAL] = 'u',
	[WIRE_FIELD_DESTINATION] = 's',
	[WIRE_FIELD_SENDER] = 's',
	[WIRE_FIELD_SIGNATURE] = 'g',
	[WIRE_FIELD_UNIX_FDS] = 'u',
	[WIRE_FIELD_CONTAINER_INSTANCE] = 'o',
};

static int header_parse(const uint8_t *msg, size_t len, WireHeader *ret, bool trusted) {
	/* UNIX_FD values in unknown fields are not checked: they are dropped */
	Validator v = { .base = msg, .trusted = trusted };
	WireHeader h = {};
	size_t total, pos, fend;
	unsigned seen = 0;
	int r;

	assert_return(msg || len == 0, -EINVAL);
	assert_return(ret, -EINVAL);

	r = wire_frame_size(msg, len, WIRE_MAX_MESSAGE_SIZE, &total);
	if (r < 0)
		return -EBADMSG;
	if (total == 0 || total != len)
		return -EBADMSG;

	h.big_endian = v.be = msg[0] == 'B';
	h.type = msg[1];
	h.flags = msg[2];
	h.version = msg[3];
	h.body_len = rd32(msg + 4, h.big_endian);
	h.serial = rd32(msg + 8, h.big_endian);
	h.fields_len = rd32(msg + 12, h.big_endian);
	h.header_len = ALIGN8(WIRE_FIXED_HEADER_SIZE + (size_t)h.fields_len);
	h.total_len = total;

	if (h.type == WIRE_TYPE_INVALID || h.serial == 0)
		return -EBADMSG;

	pos = WIRE_FIXED_HEADER_SIZE;
	fend = pos + h.fields_len;
	v.end = fend;
	while (pos < fend) {
		uint8_t code, siglen;
		const char *sig;
		WireString *str = NULL;

		if (!pad(&v, &pos, 8, fend) || pos >= fend)
			return -EBADMSG;
		code = msg[pos++];

		/* the variant's signature */
		if (pos >= fend)
			return -EBADMSG;
		siglen = msg[pos++];
		if ((size_t)siglen + 1 > fend - pos)
			return -EBADMSG;
		sig = (const char *)msg + pos;
		if (!sig_is_single(sig, siglen) || msg[pos + siglen] != 0)
			return -EBADMSG;
		pos += siglen + 1;

		if (code == WIRE_FIELD_INVALID)
			return -EBADMSG;

		if (code >= ELEMENTSOF(field_types)) {
			/* unknown: skipped, but must be a valid value; the
			 * variant's contents are at level 3 (array, struct,
			 * variant) as in libdbus */
			r = validate_one(&v, &sig, sig + siglen, &pos, fend, 3);
			if (r < 0)
				return r;
			continue;
		}

		if (siglen != 1 || sig[0] != field_types[code])
			return -EBADMSG;
		if (seen & (1u << code))
			return -EBADMSG;
		seen |= 1u << code;
		if (code <= WIRE_FIELD_UNIX_FDS)
			h.order[h.n_order++] = code;
		h.fields = (uint16_t) seen;

		switch (code) {
		case WIRE_FIELD_REPLY_SERIAL:
		case WIRE_FIELD_UNIX_FDS: {
			uint32_t x;

			if (!pad(&v, &pos, 4, fend) || fend - pos < 4)
				return -EBADMSG;
			x = rd32(msg + pos, v.be);
			pos += 4;
			if (code == WIRE_FIELD_UNIX_FDS)
				h.unix_fds = x;
			else {
				if (x == 0)
					return -EBADMSG;
				h.reply_serial = x;
				h.has_reply_serial = true;
			}
			continue;
		}
		case WIRE_FIELD_SIGNATURE:
			r = validate_signature_value(&v, &pos, fend, &h.signature);
			if (r < 0)
				return r;
			continue;
		case WIRE_FIELD_CONTAINER_INSTANCE: {
			WireString dummy;

			r = validate_string(&v, &pos, fend, 'o', &dummy);
			if (r < 0)
				return r;
			continue;
		}
		case WIRE_FIELD_PATH:
			str = &h.path;
			break;
		case WIRE_FIELD_INTERFACE:
			str = &h.interface;
			break;
		case WIRE_FIELD_MEMBER:
			str = &h.member;
			break;
		case WIRE_FIELD_ERROR_NAME:
			str = &h.error_name;
			break;
		case WIRE_FIELD_DESTINATION:
			str = &h.destination;
			break;
		case WIRE_FIELD_SENDER:
			str = &h.sender;
			break;
		}

		r = validate_string(&v, &pos, fend, field_types[code], str);
		if (r < 0)
			return r;
		if (trusted)
			continue;

		switch (code) {
		case WIRE_FIELD_INTERFACE:
			if (!wire_interface_is_valid(str->s, str->len))
				return -EBADMSG;
			break;
		case WIRE_FIELD_MEMBER:
			if (!wire_member_is_valid(str->s, str->len))
				return -EBADMSG;
			break;
		case WIRE_FIELD_ERROR_NAME:
			if (!wire_error_name_is_valid(str->s, str->len))
				return -EBADMSG;
			break;
		case WIRE_FIELD_DESTINATION:
		case WIRE_FIELD_SENDER:
			if (libdbus_compat ? !wire_bus_name_is_valid_libdbus(str->s, str->len, false)
					   : !wire_bus_name_is_valid(str->s, str->len))
				return -EBADMSG;
			break;
		}
	}

	/* padding after the fields */
	v.end = h.header_len;
	if (!pad(&v, &pos, 8, h.header_len))
		return -EBADMSG;

	switch (h.type) {
	case WIRE_TYPE_SIGNAL:
		if (!h.interface.s)
			return -EBADMSG;
		_fallthrough_;
	case WIRE_TYPE_METHOD_CALL:
		if (!h.path.s || !h.member.s)
			return -EBADMSG;
		break;
	case WIRE_TYPE_ERROR:
		if (!h.error_name.s)
			return -EBADMSG;
		_fallthrough_;
	case WIRE_TYPE_METHOD_RETURN:
		if (!h.has_reply_serial)
			return -EBADMSG;
		break;
	default:
		/* unknown types are allowed and carry no requirements */
		break;
	}

	*ret = h;
	return 0;
}

int wire_header_parse(const uint8_t *msg, size_t len, WireHeader *ret) {
	return header_parse(msg, len, ret, false);
}

int wire_header_parse_trusted(const uint8_t *msg, size_t len, WireHeader *ret) {
	return header_parse(msg, len, ret, true);
}

bool wire_header_is_local(const WireHeader *h) {
	return (h->path.s && h->path.len == sizeof(WIRE_PATH_LOCAL) - 1 &&
		memcmp(h->path.s, WIRE_PATH_LOCAL, h->path.len) == 0) ||
	       (h->interface.s && h->interface.len == sizeof(WIRE_INTERFACE_LOCAL) - 1 &&
		memcmp(h->interface.s, WIRE_INTERFACE_LOCAL, h->interface.len) == 0);
}

const char *wire_type_to_string(uint8_t type) {
	switch (type) {
	case WIRE_TYPE_METHOD_CALL:
		return "method_call";
	case WIRE_TYPE_METHOD_RETURN:
		return "method_return";
	case WIRE_TYPE_ERROR:
		return "error";
	case WIRE_TYPE_SIGNAL:
		return "signal";
	default:
		return NULL;
	}
}

uint8_t wire_type_from_string(const char *s) {
	for (uint8_t t = WIRE_TYPE_METHOD_CALL; t <= WIRE_TYPE_SIGNAL; t++)
		if (streq(s, wire_type_to_string(t)))
			return t;
	return WIRE_TYPE_INVALID;
}

/* ------------------------------------------------------------------------ */
/* header writer (rewrite and builder) */

static inline size_t str_field_size(const WireString *s) {
	return s->s ? ALIGN8(8 + (size_t)s->len + 1) : 0;
}

/* the fields of @h in the order they are written: as recorded, else by code */
static size_t header_order(const WireHeader *h, uint8_t order[static WIRE_FIELD_UNIX_FDS]) {
	static const uint8_t by_code[] = {
		WIRE_FIELD_PATH, WIRE_FIELD_INTERFACE, WIRE_FIELD_MEMBER, WIRE_FIELD_ERROR_NAME,
		WIRE_FIELD_REPLY_SERIAL, WIRE_FIELD_DESTINATION, WIRE_FIELD_SENDER,
		WIRE_FIELD_SIGNATURE, WIRE_FIELD_UNIX_FDS,
	};
	size_t n = 0;

	if (h->n_order == 0) {
		/* a view made by hand: the fields that are set, by code */
		for (size_t i = 0; i < ELEMENTSOF(by_code); i++)
			if (by_code[i] != WIRE_FIELD_SENDER)
				order[n++] = by_code[i];
		return n;
	}
	for (size_t i = 0; i < h->n_order; i++)
		if (h->order[i] != WIRE_FIELD_SENDER)
			order[n++] = h->order[i];
	return n;
}

static bool header_has_field(const WireHeader *h, uint8_t code) {
	return h->n_order > 0 && (h->fields & (1u << code));
}

static size_t header_size(const WireHeader *h, WireString sender) {
	size_t n = WIRE_FIXED_HEADER_SIZE;

	n += str_field_size(&h->path);
	n += str_field_size(&h->interface);
	n += str_field_size(&h->member);
	n += str_field_size(&h->error_name);
	n += h->has_reply_serial ? 8 : 0;
	n += str_field_size(&h->destination);
	n += str_field_size(&sender);
	/* SIGNATURE and UNIX_FDS as put_field() writes them */
	if (h->signature.s && (h->signature.len > 0 || header_has_field(h, WIRE_FIELD_SIGNATURE)))
		n += ALIGN8(6 + (size_t)h->signature.len);
	if (h->unix_fds > 0 || header_has_field(h, WIRE_FIELD_UNIX_FDS))
		n += 8;
	return n;
}

static size_t put_field_start(uint8_t *out, size_t pos, uint8_t code, char type) {
	while (pos & 7)
		out[pos++] = 0;
	out[pos] = code;
	out[pos + 1] = 1;
	out[pos + 2] = type;
	out[pos + 3] = 0;
	return pos + 4;
}

static size_t put_str_field(uint8_t *out, size_t pos, bool be, uint8_t code, char type, WireString s) {
	if (!s.s)
		return pos;
	pos = put_field_start(out, pos, code, type);
	wr32(out + pos, s.len, be);
	memcpy(out + pos + 4, s.s, s.len);
	out[pos + 4 + s.len] = 0;
	return pos + 4 + s.len + 1;
}

static size_t put_u32_field(uint8_t *out, size_t pos, bool be, uint8_t code, uint32_t x) {
	pos = put_field_start(out, pos, code, 'u');
	wr32(out + pos, x, be);
	return pos + 4;
}

/* field @code of @h; @sender for SENDER */
static inline __attribute__((always_inline)) size_t put_field(const WireHeader *h, WireString sender, uint8_t code, bool recorded,
			uint8_t *out, size_t pos) {
	bool be = h->big_endian;

	switch (code) {
	case WIRE_FIELD_PATH:
		return put_str_field(out, pos, be, code, 'o', h->path);
	case WIRE_FIELD_INTERFACE:
		return put_str_field(out, pos, be, code, 's', h->interface);
	case WIRE_FIELD_MEMBER:
		return put_str_field(out, pos, be, code, 's', h->member);
	case WIRE_FIELD_ERROR_NAME:
		return put_str_field(out, pos, be, code, 's', h->error_name);
	case WIRE_FIELD_DESTINATION:
		return put_str_field(out, pos, be, code, 's', h->destination);
	case WIRE_FIELD_SENDER:
		return put_str_field(out, pos, be, code, 's', sender);
	case WIRE_FIELD_REPLY_SERIAL:
		return h->has_reply_serial ? put_u32_field(out, pos, be, code, h->reply_serial) : pos;
	case WIRE_FIELD_UNIX_FDS:
		/* a recorded UNIX_FDS stays, even 0, as libdbus forwards it */
		return recorded || h->unix_fds > 0 ? put_u32_field(out, pos, be, code, h->unix_fds) : pos;
	case WIRE_FIELD_SIGNATURE:
		if (!h->signature.s || (!recorded && h->signature.len == 0))
			return pos;
		pos = put_field_start(out, pos, WIRE_FIELD_SIGNATURE, 'g');
		out[pos] = (uint8_t)h->signature.len;
		memcpy(out + pos + 1, h->signature.s, h->signature.len);
		out[pos + 1 + h->signature.len] = 0;
		return pos + 1 + h->signature.len + 1;
	default:
		return pos;
	}
}

/*
 * writes the header of @h with @sender; returns its length (8-aligned).
 * The fields go in the recorded order with SENDER in its place, or last
 * if it had none (a view without an order: by code, SENDER last).
 */
/* the fields of a view without a recorded order, by code (out of line:
 * its array would cost every header written a stack canary) */
static __attribute__((noinline)) size_t header_write_by_code(const WireHeader *h, WireString sender, uint8_t *out,
							      size_t pos) {
	uint8_t order[WIRE_FIELD_UNIX_FDS];
	size_t n = header_order(h, order);

	for (size_t i = 0; i < n; i++)
		pos = put_field(h, sender, order[i], false, out, pos);
	return pos;
}

/* (@sender by value: an address of the caller's would cost it a stack canary) */
static size_t header_write(const WireHeader *h, WireString sender, uint8_t *out) {
	bool be = h->big_endian, recorded = h->n_order > 0, sender_done = false;
	size_t pos = WIRE_FIXED_HEADER_SIZE;

	out[0] = be ? 'B' : 'l';
	out[1] = h->type;
	out[2] = h->flags;
	out[3] = 1;
	wr32(out + 4, h->body_len, be);
	wr32(out + 8, h->serial, be);

	if (recorded) {
		for (size_t i = 0; i < h->n_order; i++) {
			pos = put_field(h, sender, h->order[i], true, out, pos);
			sender_done |= h->order[i] == WIRE_FIELD_SENDER;
		}
	} else {
		pos = header_write_by_code(h, sender, out, pos);
	}
	if (!sender_done)
		pos = put_field(h, sender, WIRE_FIELD_SENDER, recorded, out, pos);

	wr32(out + 12, (uint32_t)(pos - WIRE_FIXED_HEADER_SIZE), be);
	while (pos & 7)
		out[pos++] = 0;
	return pos;
}

/*
 * The rewritten header of a parsed message is never longer than its fields
 * (the known ones keep their bytes and 8-aligned starts, some are dropped)
 * and a new SENDER field: a bound without a look at the fields.
 */
static size_t rewrite_bound(const WireHeader *h, size_t sender_len) {
	return WIRE_FIXED_HEADER_SIZE + ALIGN8((size_t)h->fields_len) + ALIGN8(9 + sender_len) + 8;
}

size_t wire_header_rewrite_size(const WireHeader *h, size_t sender_len) {
	WireString s = { .s = "", .len = (uint32_t)sender_len };

	return h->n_order > 0 ? rewrite_bound(h, sender_len) : header_size(h, s);
}

int wire_header_rewrite(const WireHeader *h, const char *sender, size_t sender_len,
			uint8_t *out, size_t out_size, size_t *ret_len) {
	WireString s = { .s = sender, .len = (uint32_t)sender_len };

	assert_return(h && out && ret_len, -EINVAL);
	assert_return(sender || sender_len == 0, -EINVAL);
	assert_return(sender_len <= WIRE_MAX_NAME_LEN, -EINVAL);

	if (out_size < (h->n_order > 0 ? rewrite_bound(h, sender_len) : header_size(h, s)))
		return -ENOBUFS;
	*ret_len = header_write(h, s, out);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* arguments of a validated body */

typedef struct Walker {
	const uint8_t *body;
	size_t end;
	bool be;
} Walker;

/* skip the value of the complete type at *sig; false if inconsistent */
static bool skip_one(const Walker *w, const char **sig, const char *sig_end, size_t *pos,
		     unsigned depth) {
	char t = **sig;
	size_t p = *pos;

	if (depth > WIRE_MAX_DEPTH + 1)
		return false;

	switch (t) {
	case 'y': case 'b': case 'n': case 'q': case 'i': case 'u': case 'h':
	case 'x': case 't': case 'd': {
		unsigned size = type_fixed_size(t);

		p = ALIGN_TO(p, (size_t)size) + size;
		break;
	}
	case 's': case 'o':
		p = ALIGN_TO(p, (size_t)4);
		if (p + 4 > w->end)
			return false;
		p += 4 + (size_t)rd32(w->body + p, w->be) + 1;
		break;
	case 'g':
		if (p >= w->end)
			return false;
		p += (size_t)w->body[p] + 2;
		break;
	case 'v': {
		const char *s;
		uint8_t len;

		if (p >= w->end)
			return false;
		len = w->body[p];
		if (p + 1 + len >= w->end)
			return false;
		s = (const char *)w->body + p + 1;
		p += (size_t)len + 2;
		if (len == 0 || !skip_one(w, &s, s + len, &p, depth + 1))
			return false;
		break;
	}
	case 'a': {
		const char *elem = *sig + 1;
		uint32_t len;

		p = ALIGN_TO(p, (size_t)4);
		if (p + 4 > w->end)
			return false;
		len = rd32(w->body + p, w->be);
		p = ALIGN_TO(p + 4, (size_t)type_alignment(*elem)) + len;
		*sig = elem + sig_complete_len(elem, sig_end - elem);
		*pos = p;
		return p <= w->end;
	}
	case '(': case '{': {
		char close = t == '(' ? ')' : '}';
		const char *s = *sig + 1;

		p = ALIGN8(p);
		while (s < sig_end && *s != close)
			if (!skip_one(w, &s, sig_end, &p, depth + 1))
				return false;
		if (s >= sig_end)
			return false;
		*sig = s + 1;
		*pos = p;
		return p <= w->end;
	}
	default:
		return false;
	}
	(*sig)++;
	*pos = p;
	return p <= w->end;
}

unsigned wire_body_args(const WireHeader *h, const uint8_t *body, WireArg *args, unsigned n) {
	Walker w = { .body = body, .end = h->body_len, .be = h->big_endian };
	const char *s, *e;
	size_t pos = 0;
	unsigned i = 0;

	if (!h->signature.s || !body)
		return 0;
	s = h->signature.s;
	e = s + h->signature.len;

	for (; s < e && i < n; i++) {
		WireArg *a = &args[i];
		char t = *s;

		*a = (WireArg) {};
		if (t == 's' || t == 'o') {
			size_t p = ALIGN_TO(pos, (size_t)4);
			uint32_t len;

			if (p + 4 > w.end)
				break;
			len = rd32(body + p, w.be);
			if (p + 4 + (size_t)len >= w.end)
				break;
			a->type = t;
			a->str.s = (const char *)body + p + 4;
			a->str.len = len;
			pos = p + 4 + len + 1;
			s++;
		} else if (t == 'g') {
			uint8_t len;

			if (pos >= w.end)
				break;
			len = body[pos];
			if (pos + 1 + len >= w.end)
				break;
			a->type = 'g';
			a->str.s = (const char *)body + pos + 1;
			a->str.len = len;
			pos += (size_t)len + 2;
			s++;
		} else if (t == 'a' && s + 1 < e && (s[1] == 's' || s[1] == 'o' || s[1] == 'g')) {
			size_t p = ALIGN_TO(pos, (size_t)4);
			uint32_t len;

			if (p + 4 > w.end)
				break;
			len = rd32(body + p, w.be);
			if (p + 4 + (size_t)len > w.end)
				break;
			a->type = 'a';
			a->elem = s[1];
			a->array_pos = (uint32_t)(p + 4);
			a->array_len = len;
			pos = p + 4 + len;
			s += 2;
		} else if (!skip_one(&w, &s, e, &pos, 0))
			break;
	}
	return i;
}

bool wire_arg_array_next(const WireHeader *h, const uint8_t *body, const WireArg *a,
			 uint32_t *cursor, WireString *ret) {
	size_t end = (size_t)a->array_pos + a->array_len;
	size_t p = (size_t)a->array_pos + *cursor;
	uint32_t len;

	if (a->type != 'a' || end > h->body_len)
		return false;
	if (a->elem == 'g') {
		if (p >= end)
			return false;
		len = body[p];
		if (p + 1 + len >= end)
			return false;
		ret->s = (const char *)body + p + 1;
		ret->len = len;
		*cursor = (uint32_t)(p + len + 2 - a->array_pos);
		return true;
	}
	p = ALIGN_TO(p, (size_t)4);
	if (p + 4 > end)
		return false;
	len = rd32(body + p, h->big_endian);
	if (p + 4 + (size_t)len >= end)
		return false;
	ret->s = (const char *)body + p + 4;
	ret->len = len;
	*cursor = (uint32_t)(p + 4 + len + 1 - a->array_pos);
	return true;
}

unsigned wire_body_string_args(const WireHeader *h, const uint8_t *body,
			       WireString *args, char *types, unsigned n) {
	WireArg a[64];
	unsigned k;

	if (n > ELEMENTSOF(a))
		n = ELEMENTSOF(a);
	k = wire_body_args(h, body, a, n);
	for (unsigned i = 0; i < k; i++) {
		types[i] = a[i].type;
		args[i] = a[i].type == 'a' ? (WireString) {} : a[i].str;
	}
	return k;
}

/* ------------------------------------------------------------------------ */
/* builder */

static int builder_fail(WireBuilder *b, int r) {
	if (b->error == 0)
		b->error = r;
	return r;
}

/* field @code was set (@present) or removed: its place in the header */
static inline void builder_note_field(WireBuilder *b, uint8_t code, bool present) {
	uint16_t bit = (uint16_t) (1u << code);
	size_t i;

	if (present == !!(b->order_set & bit))
		return;		/* set again: it keeps its place */
	if (present) {
		b->order[b->n_order++] = code;
		b->order_set |= bit;
		return;
	}
	for (i = 0; b->order[i] != code; i++)
		;
	memmove(b->order + i, b->order + i + 1, b->n_order - i - 1);
	b->n_order--;
	b->order_set &= (uint16_t) ~bit;
}

static int builder_common_init(WireBuilder *b, uint8_t type, uint8_t flags, uint32_t serial) {
	assert_return(b, -EINVAL);
	*b = (WireBuilder) {};
	assert_return(type != WIRE_TYPE_INVALID, -EINVAL);
	assert_return(serial != 0, -EINVAL);
	b->type = type;
	b->flags = flags;
	b->serial = serial;
	return 0;
}

int wire_builder_init(WireBuilder *b, uint8_t type, uint8_t flags, uint32_t serial) {
	return builder_common_init(b, type, flags, serial);
}

int wire_builder_init_buffer(WireBuilder *b, void *buf, size_t size,
			     uint8_t type, uint8_t flags, uint32_t serial) {
	int r = builder_common_init(b, type, flags, serial);
	if (r < 0)
		return r;
	assert_return(buf, -EINVAL);
	assert_return(((uintptr_t)buf & 7) == 0, -EINVAL);
	b->buf = buf;
	b->cap = size;
	b->fixed = true;
	return 0;
}

void wire_builder_done(WireBuilder *b) {
	if (!b)
		return;
	if (!b->fixed)
		free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

static int builder_reserve(WireBuilder *b, size_t need) {
	size_t cap;
	uint8_t *n;

	if (need <= b->cap)
		return 0;
	if (need > WIRE_MAX_MESSAGE_SIZE)
		return builder_fail(b, -EMSGSIZE);
	if (b->fixed)
		return builder_fail(b, -ENOBUFS);
	cap = MAX(b->cap * 2, (size_t)256);
	while (cap < need)
		cap *= 2;
	n = realloc(b->buf, cap);
	if (!n)
		return builder_fail(b, -ENOMEM);
	b->buf = n;
	b->cap = cap;
	return 0;
}

/* append @n bytes aligned to @align; returns the offset, or < 0 */
static int64_t builder_put(WireBuilder *b, unsigned align, const void *data, size_t n) {
	size_t start = ALIGN_TO(b->len, (size_t)align);
	int r;

	if (start + n == b->len)
		return (int64_t)start;	/* nothing to write (buf may still be NULL) */
	r = builder_reserve(b, start + n);
	if (r < 0)
		return r;
	memset(b->buf + b->len, 0, start - b->len);
	if (data)
		memcpy(b->buf + start, data, n);
	else
		memset(b->buf + start, 0, n);
	b->len = start + n;
	return (int64_t)start;
}

static const char *frame_sig(const WireBuilder *b, const WireBuilderFrame *f) {
	return f->sig_in_buf ? (const char *)b->buf + f->sig_off : b->sig + f->sig_off;
}

/*
 * builder_expect() - check that a value of complete type @t may go here and
 * account for it; for containers, also return where its contents signature
 * is (to be referenced by the new frame).
 */
static int builder_expect(WireBuilder *b, const char *t, size_t tlen,
			  bool *ret_in_buf, uint32_t *ret_off) {
	if (b->depth == 0) {
		if (b->sig_len + tlen > WIRE_MAX_SIGNATURE_LEN)
			return builder_fail(b, -EINVAL);
		if (b->sig_len == 0)
			builder_note_field(b, WIRE_FIELD_SIGNATURE, true);
		memcpy(b->sig + b->sig_len, t, tlen);
		if (ret_in_buf) {
			*ret_in_buf = false;
			*ret_off = b->sig_len;
		}
		b->sig_len += (uint8_t)tlen;
		b->sig[b->sig_len] = 0;
		return 0;
	}

	WireBuilderFrame *f = &b->stack[b->depth - 1];
	const char *s = frame_sig(b, f);
	uint32_t at;

	switch (f->type) {
	case 'a':
		if (tlen != f->sig_len || memcmp(s, t, tlen) != 0)
			return builder_fail(b, -EINVAL);
		at = 0;
		f->n_items++;
		break;
	case 'v':
		if (f->n_items > 0 || tlen != f->sig_len || memcmp(s, t, tlen) != 0)
			return builder_fail(b, -EINVAL);
		at = 0;
		f->n_items++;
		break;
	default:
		if (f->sig_pos + tlen > f->sig_len || memcmp(s + f->sig_pos, t, tlen) != 0)
			return builder_fail(b, -EINVAL);
		at = f->sig_pos;
		f->sig_pos += (uint32_t)tlen;
		break;
	}
	if (ret_in_buf) {
		*ret_in_buf = f->sig_in_buf;
		*ret_off = f->sig_off + at;
	}
	return 0;
}

int wire_builder_append_string(WireBuilder *b, char type, const char *s, size_t len) {
	int64_t off;
	int r;

	assert_return(b, -EINVAL);
	if (b->error)
		return b->error;
	if (!s && len > 0)
		return builder_fail(b, -EINVAL);
	if (!s)
		s = "";

	switch (type) {
	case 's':
		if (len > UINT32_MAX || !wire_utf8_is_valid(s, len))
			return builder_fail(b, -EINVAL);
		break;
	case 'o':
		if (!wire_object_path_is_valid(s, len))
			return builder_fail(b, -EINVAL);
		break;
	case 'g':
		if (!wire_signature_is_valid(s, len))
			return builder_fail(b, -EINVAL);
		break;
	default:
		return builder_fail(b, -EINVAL);
	}

	r = builder_expect(b, &type, 1, NULL, NULL);
	if (r < 0)
		return r;

	if (type == 'g') {
		uint8_t l = (uint8_t)len;

		off = builder_put(b, 1, &l, 1);
	} else {
		uint8_t l[4];

		wr32(l, (uint32_t)len, false);
		off = builder_put(b, 4, l, 4);
	}
	if (off < 0)
		return (int)off;
	off = builder_put(b, 1, s, len);
	if (off < 0)
		return (int)off;
	off = builder_put(b, 1, NULL, 1);
	return off < 0 ? (int)off : 0;
}

int wire_builder_append_basic(WireBuilder *b, char type, const void *value) {
	uint8_t v[8];
	unsigned size;
	int64_t off;
	int r;

	assert_return(b, -EINVAL);
	if (b->error)
		return b->error;
	if (!value)
		return builder_fail(b, -EINVAL);

	switch (type) {
	case 's': case 'o': case 'g':
		return wire_builder_append_string(b, type, value, strlen(value));
	case 'y':
		v[0] = *(const uint8_t *)value;
		break;
	case 'b':
		wr32(v, *(const bool *)value ? 1 : 0, false);
		break;
	case 'n': case 'q':
		wr16(v, *(const uint16_t *)value, false);
		break;
	case 'i': case 'u': case 'h':
		wr32(v, *(const uint32_t *)value, false);
		break;
	case 'x': case 't':
		wr64(v, *(const uint64_t *)value, false);
		break;
	case 'd': {
		uint64_t x;

		memcpy(&x, value, 8);
		wr64(v, x, false);
		break;
	}
	default:
		return builder_fail(b, -EINVAL);
	}

	r = builder_expect(b, &type, 1, NULL, NULL);
	if (r < 0)
		return r;
	size = type_fixed_size(type);
	off = builder_put(b, size, v, size);
	return off < 0 ? (int)off : 0;
}

int wire_builder_append(WireBuilder *b, const char *types, ...) {
	va_list ap;
	int r = 0;

	assert_return(b && types, -EINVAL);

	va_start(ap, types);
	for (const char *t = types; *t && r >= 0; t++) {
		switch (*t) {
		case 'y': {
			uint8_t x = (uint8_t)va_arg(ap, int);
			r = wire_builder_append_basic(b, 'y', &x);
			break;
		}
		case 'b': {
			bool x = va_arg(ap, int) != 0;
			r = wire_builder_append_basic(b, 'b', &x);
			break;
		}
		case 'n': case 'q': {
			uint16_t x = (uint16_t)va_arg(ap, int);
			r = wire_builder_append_basic(b, *t, &x);
			break;
		}
		case 'i': case 'h': {
			int32_t x = va_arg(ap, int);
			r = wire_builder_append_basic(b, *t, &x);
			break;
		}
		case 'u': {
			uint32_t x = va_arg(ap, unsigned);
			r = wire_builder_append_basic(b, 'u', &x);
			break;
		}
		case 'x': {
			int64_t x = va_arg(ap, int64_t);
			r = wire_builder_append_basic(b, 'x', &x);
			break;
		}
		case 't': {
			uint64_t x = va_arg(ap, uint64_t);
			r = wire_builder_append_basic(b, 't', &x);
			break;
		}
		case 'd': {
			double x = va_arg(ap, double);
			r = wire_builder_append_basic(b, 'd', &x);
			break;
		}
		case 's': case 'o': case 'g': {
			const char *x = va_arg(ap, const char *);
			r = x ? wire_builder_append_basic(b, *t, x) : builder_fail(b, -EINVAL);
			break;
		}
		default:
			r = builder_fail(b, -EINVAL);
			break;
		}
	}
	va_end(ap);
	return r < 0 ? r : 0;
}

int wire_builder_open_container(WireBuilder *b, char type, const char *contents) {
	char t[WIRE_MAX_SIGNATURE_LEN + 3];
	size_t clen, tlen;
	WireBuilderFrame *f;
	bool in_buf = false;
	uint32_t off = 0;
	int64_t o;
	int r;

	assert_return(b, -EINVAL);
	if (b->error)
		return b->error;
	if (!contents)
		return builder_fail(b, -EINVAL);
	if (b->depth >= WIRE_BUILDER_MAX_DEPTH)
		return builder_fail(b, -E2BIG);
	if (type == 'r')
		type = '(';
	else if (type == 'e')
		type = '{';

	clen = strlen(contents);
	if (clen > WIRE_MAX_SIGNATURE_LEN)
		return builder_fail(b, -EINVAL);

	/* the complete type of the container */
	switch (type) {
	case 'a':
		t[0] = 'a';
		memcpy(t + 1, contents, clen);
		tlen = clen + 1;
		break;
	case 'v':
		if (!sig_is_single(contents, clen))
			return builder_fail(b, -EINVAL);
		t[0] = 'v';
		tlen = 1;
		break;
	case '(': case '{':
		t[0] = type;
		memcpy(t + 1, contents, clen);
		t[clen + 1] = type == '(' ? ')' : '}';
		tlen = clen + 2;
		break;
	default:
		return builder_fail(b, -EINVAL);
	}

	if (b->depth == 0) {
		/* a new top-level type: must be valid on its own */
		if (type == '{' || !sig_is_single(t, tlen))
			return builder_fail(b, -EINVAL);
	}
	/* inside a container the parent's (valid) signature must match */
	r = builder_expect(b, t, tlen, &in_buf, &off);
	if (r < 0)
		return r;

	f = &b->stack[b->depth];
	*f = (WireBuilderFrame) { .type = type };

	switch (type) {
	case 'a': {
		uint8_t zero[4] = {};

		o = builder_put(b, 4, zero, 4);
		if (o < 0)
			return (int)o;
		f->len_off = (uint32_t)o;
		o = builder_put(b, type_alignment(contents[0]), NULL, 0);
		if (o < 0)
			return (int)o;
		f->start = (uint32_t)o;
		f->sig_in_buf = in_buf;
		f->sig_off = off + 1;
		f->sig_len = (uint8_t)clen;
		break;
	}
	case 'v': {
		uint8_t l = (uint8_t)clen;

		o = builder_put(b, 1, &l, 1);
		if (o < 0)
			return (int)o;
		o = builder_put(b, 1, contents, clen + 1);
		if (o < 0)
			return (int)o;
		f->sig_in_buf = true;
		f->sig_off = (uint32_t)o;
		f->sig_len = (uint8_t)clen;
		break;
	}
	default:
		o = builder_put(b, 8, NULL, 0);
		if (o < 0)
			return (int)o;
		f->sig_in_buf = in_buf;
		f->sig_off = off + 1;
		f->sig_len = (uint8_t)clen;
		break;
	}

	b->depth++;
	return 0;
}

int wire_builder_close_container(WireBuilder *b) {
	WireBuilderFrame *f;

	assert_return(b, -EINVAL);
	if (b->error)
		return b->error;
	if (b->depth == 0)
		return builder_fail(b, -EINVAL);

	f = &b->stack[b->depth - 1];
	switch (f->type) {
	case 'a': {
		size_t len = b->len - f->start;

		if (f->n_items == 0)
			len = 0;
		if (len > WIRE_MAX_ARRAY_SIZE)
			return builder_fail(b, -EMSGSIZE);
		wr32(b->buf + f->len_off, (uint32_t)len, false);
		break;
	}
	case 'v':
		if (f->n_items != 1)
			return builder_fail(b, -EINVAL);
		break;
	default:
		if (f->sig_pos != f->sig_len)
			return builder_fail(b, -EINVAL);
		break;
	}
	b->depth--;
	return 0;
}

int wire_builder_set_path(WireBuilder *b, const char *path) {
	assert_return(b, -EINVAL);
	if (path && !wire_object_path_is_valid(path, strlen(path)))
		return builder_fail(b, -EINVAL);
	b->path = (WireString) { path, path ? (uint32_t)strlen(path) : 0 };
	builder_note_field(b, WIRE_FIELD_PATH, path);
	return 0;
}

int wire_builder_set_interface(WireBuilder *b, const char *interface) {
	assert_return(b, -EINVAL);
	if (interface && !wire_interface_is_valid(interface, strlen(interface)))
		return builder_fail(b, -EINVAL);
	b->interface = (WireString) { interface, interface ? (uint32_t)strlen(interface) : 0 };
	builder_note_field(b, WIRE_FIELD_INTERFACE, interface);
	return 0;
}

int wire_builder_set_member(WireBuilder *b, const char *member) {
	assert_return(b, -EINVAL);
	if (member && !wire_member_is_valid(member, strlen(member)))
		return builder_fail(b, -EINVAL);
	b->member = (WireString) { member, member ? (uint32_t)strlen(member) : 0 };
	builder_note_field(b, WIRE_FIELD_MEMBER, member);
	return 0;
}

int wire_builder_set_error_name(WireBuilder *b, const char *error_name) {
	assert_return(b, -EINVAL);
	if (error_name && !wire_error_name_is_valid(error_name, strlen(error_name)))
		return builder_fail(b, -EINVAL);
	b->error_name = (WireString) { error_name, error_name ? (uint32_t)strlen(error_name) : 0 };
	builder_note_field(b, WIRE_FIELD_ERROR_NAME, error_name);
	return 0;
}

/* a name the builder is given: the bus's own, which every message the bus
 * writes carries as its sender, is known to be valid */
static bool builder_name_is_valid(const char *name, size_t len) {
	return (len == sizeof(DRIVER_NAME) - 1 && memcmp(name, DRIVER_NAME, len) == 0) ||
	       wire_bus_name_is_valid(name, len);
}

int wire_builder_set_destination(WireBuilder *b, const char *destination) {
	size_t len = destination ? strlen(destination) : 0;

	assert_return(b, -EINVAL);
	if (destination && !builder_name_is_valid(destination, len))
		return builder_fail(b, -EINVAL);
	b->destination = (WireString) { destination, (uint32_t)len };
	builder_note_field(b, WIRE_FIELD_DESTINATION, destination);
	return 0;
}

int wire_builder_set_sender(WireBuilder *b, const char *sender) {
	size_t len = sender ? strlen(sender) : 0;

	assert_return(b, -EINVAL);
	if (sender && !builder_name_is_valid(sender, len))
		return builder_fail(b, -EINVAL);
	b->sender = (WireString) { sender, (uint32_t)len };
	builder_note_field(b, WIRE_FIELD_SENDER, sender);
	return 0;
}

int wire_builder_set_reply_serial(WireBuilder *b, uint32_t reply_serial) {
	assert_return(b, -EINVAL);
	b->reply_serial = reply_serial;
	b->has_reply_serial = reply_serial != 0;
	builder_note_field(b, WIRE_FIELD_REPLY_SERIAL, reply_serial != 0);
	return 0;
}

int wire_builder_set_unix_fds(WireBuilder *b, uint32_t unix_fds) {
	assert_return(b, -EINVAL);
	b->unix_fds = unix_fds;
	builder_note_field(b, WIRE_FIELD_UNIX_FDS, unix_fds != 0);
	return 0;
}

int wire_builder_finish(WireBuilder *b, uint8_t **ret_msg, size_t *ret_len) {
	WireHeader h;
	size_t hlen, body_len;
	int r;

	assert_return(b && ret_msg && ret_len, -EINVAL);
	if (b->error)
		return b->error;
	if (b->depth > 0)
		return builder_fail(b, -EINVAL);

	switch (b->type) {
	case WIRE_TYPE_SIGNAL:
		if (!b->interface.s)
			return builder_fail(b, -EINVAL);
		_fallthrough_;
	case WIRE_TYPE_METHOD_CALL:
		if (!b->path.s || !b->member.s)
			return builder_fail(b, -EINVAL);
		break;
	case WIRE_TYPE_ERROR:
		if (!b->error_name.s)
			return builder_fail(b, -EINVAL);
		_fallthrough_;
	case WIRE_TYPE_METHOD_RETURN:
		if (!b->has_reply_serial)
			return builder_fail(b, -EINVAL);
		break;
	}

	body_len = b->len;
	h = (WireHeader) {
		.big_endian = false,
		.type = b->type,
		.flags = b->flags,
		.version = 1,
		.body_len = (uint32_t)body_len,
		.serial = b->serial,
		.path = b->path,
		.interface = b->interface,
		.member = b->member,
		.error_name = b->error_name,
		.destination = b->destination,
		.signature = { b->sig_len > 0 ? b->sig : NULL, b->sig_len },
		.reply_serial = b->reply_serial,
		.has_reply_serial = b->has_reply_serial,
		.unix_fds = b->unix_fds,
		.n_order = b->n_order,
	};
	memcpy(h.order, b->order, sizeof(h.order));
	h.fields = b->order_set;
	hlen = header_size(&h, b->sender);
	if (hlen + body_len > WIRE_MAX_MESSAGE_SIZE)
		return builder_fail(b, -EMSGSIZE);
	r = builder_reserve(b, hlen + body_len);
	if (r < 0)
		return r;
	if (body_len > 0)
		memmove(b->buf + hlen, b->buf, body_len);
	header_write(&h, b->sender, b->buf);

	*ret_msg = b->buf;
	*ret_len = hlen + body_len;
	b->buf = NULL;
	b->len = b->cap = 0;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* body reader (wire.h: "Body reader") */

size_t wire_signature_next_len(const char *s, size_t len) {
	uint64_t dict_bits = 0;	/* bit N: the container at depth N+1 is a dict entry */
	unsigned depth = 0;
	size_t i = 0;

	while (i < len && s[i] == 'a')
		i++;
	if (i >= len)
		return 0;
	if (type_is_basic(s[i]) || s[i] == 'v')
		return i + 1;
	for (; i < len; i++) {
		char c = s[i];

		switch (c) {
		case '(':
		case '{':
			if (depth >= 64 || i + 1 >= len || s[i + 1] == ')' || s[i + 1] == '}')
				return 0;
			if (c == '{')
				dict_bits |= UINT64_C(1) << depth;
			else
				dict_bits &= ~(UINT64_C(1) << depth);
			depth++;
			break;
		case ')':
		case '}':
			if (depth == 0 || (c == '}') != !!(dict_bits & (UINT64_C(1) << (depth - 1))))
				return 0;
			if (--depth == 0)
				return i + 1;
			break;
		case 'a':
			if (i + 1 >= len || s[i + 1] == ')' || s[i + 1] == '}')
				return 0;
			break;
		default:
			if (!type_is_basic(c) && c != 'v')
				return 0;
			break;
		}
		if (depth == 0)	/* an array of basic type at top level was handled above */
			return 0;
	}
	return 0;
}

void wire_reader_init_raw(WireReader *r, const char *sig, size_t sig_len, bool big_endian,
			  const uint8_t *body, size_t body_len) {
	*r = (WireReader) {
		.body = body,
		.body_len = body_len,
		.big_endian = big_endian,
		.sig = sig ? sig : "",
	};
	r->stack[0] = (WireReaderFrame) {
		.sig = r->sig,
		.sig_end = r->sig + (sig ? sig_len : 0),
		.saved_sig = r->sig,
		.end = body_len,
	};
}

void wire_reader_init(WireReader *r, const WireHeader *h, const uint8_t *body) {
	wire_reader_init_raw(r, h->signature.s, h->signature.len, h->big_endian, body, h->body_len);
}

/* the type of the next value (an array starts its next element), NULL at the end */
static const char *reader_next(const WireReader *r) {
	const WireReaderFrame *f = &r->stack[r->depth];
	const char *s = r->sig;

	if (f->type == 'a') {
		if (r->pos >= f->end)
			return NULL;
		if (s >= f->sig_end)
			s = f->sig;
	}
	return s < f->sig_end ? s : NULL;
}

char wire_reader_peek(const WireReader *r) {
	const char *s = reader_next(r);
	return s && *s != ')' && *s != '}' ? *s : 0;
}

const char *wire_reader_signature(const WireReader *r, size_t *ret_len) {
	const char *s = reader_next(r);
	size_t n = s ? wire_signature_next_len(s, (size_t) (r->stack[r->depth].sig_end - s)) : 0;

	*ret_len = n;
	return n ? s : NULL;
}

static inline size_t reader_align(size_t pos, unsigned a) {
	return (pos + a - 1) & ~(size_t) (a - 1);
}

int wire_reader_read_basic(WireReader *r, char type, void *out) {
	const char *s = reader_next(r);
	size_t end = r->stack[r->depth].end, pos;
	unsigned n = type_fixed_size(type);
	bool be = r->big_endian;

	if (!s || *s != type || !type_is_basic(type))
		return -EBADMSG;
	pos = reader_align(r->pos, type_alignment(type));
	if (pos > end)
		return -EBADMSG;
	if (n) {
		const uint8_t *p = r->body + pos;
		uint64_t v;

		if (end - pos < n)
			return -EBADMSG;
		switch (n) {
		case 1:
			v = p[0];
			break;
		case 2:
			v = be ? (uint16_t) (p[0] << 8 | p[1]) : (uint16_t) (p[1] << 8 | p[0]);
			break;
		case 4:
			v = rd32(p, be);
			break;
		default:
			v = be ? (uint64_t) rd32(p, true) << 32 | rd32(p + 4, true)
			       : (uint64_t) rd32(p + 4, false) << 32 | rd32(p, false);
			break;
		}
		if (out) {
			switch (type) {
			case 'y': *(uint8_t *) out = (uint8_t) v; break;
			case 'b': *(bool *) out = v != 0; break;
			case 'n': *(int16_t *) out = (int16_t) (uint16_t) v; break;
			case 'q': *(uint16_t *) out = (uint16_t) v; break;
			case 'i': *(int32_t *) out = (int32_t) (uint32_t) v; break;
			case 'u': case 'h': *(uint32_t *) out = (uint32_t) v; break;
			case 'x': *(int64_t *) out = (int64_t) v; break;
			case 't': *(uint64_t *) out = v; break;
			case 'd': memcpy(out, &v, sizeof(double)); break;
			}
		}
		pos += n;
	} else {
		size_t l;

		if (type == 'g') {
			if (pos >= end)
				return -EBADMSG;
			l = r->body[pos++];
		} else {
			if (end - pos < 4)
				return -EBADMSG;
			l = rd32(r->body + pos, be);
			pos += 4;
		}
		if (end - pos < l + 1 || r->body[pos + l] != 0)
			return -EBADMSG;
		if (out)
			*(const char **) out = (const char *) r->body + pos;
		pos += l + 1;
	}
	r->pos = pos;
	r->sig = s + 1;
	return 0;
}

int wire_reader_enter(WireReader *r, char type) {
	const char *s = reader_next(r);
	const WireReaderFrame *f = &r->stack[r->depth];
	size_t end = f->end, pos = r->pos, n;
	WireReaderFrame nf = { .type = type, .end = end };

	if (!s || *s != type || r->depth >= WIRE_MAX_DEPTH)
		return -EBADMSG;
	switch (type) {
	case 'a': {
		size_t len;

		n = wire_signature_next_len(s + 1, (size_t) (f->sig_end - s - 1));
		if (n == 0)
			return -EBADMSG;
		pos = reader_align(pos, 4);
		if (pos > end || end - pos < 4)
			return -EBADMSG;
		len = rd32(r->body + pos, r->big_endian);
		pos = reader_align(pos + 4, type_alignment(s[1]));
		if (pos > end || end - pos < len)
			return -EBADMSG;
		nf.sig = s + 1;
		nf.sig_end = s + 1 + n;
		nf.saved_sig = s + 1 + n;
		nf.end = pos + len;
		break;
	}
	case 'v': {
		size_t l;

		if (pos >= end)
			return -EBADMSG;
		l = r->body[pos++];
		if (end - pos < l + 1 || r->body[pos + l] != 0)
			return -EBADMSG;
		nf.sig = (const char *) r->body + pos;
		nf.sig_end = nf.sig + l;
		nf.saved_sig = s + 1;
		pos += l + 1;
		break;
	}
	case '(':
	case '{':
		n = wire_signature_next_len(s, (size_t) (f->sig_end - s));
		if (n < 3)
			return -EBADMSG;
		pos = reader_align(pos, 8);
		if (pos > end)
			return -EBADMSG;
		nf.sig = s + 1;
		nf.sig_end = s + n - 1;
		nf.saved_sig = s + n;
		break;
	default:
		return -EBADMSG;
	}
	r->stack[++r->depth] = nf;
	r->pos = pos;
	r->sig = nf.sig;
	return 0;
}

int wire_reader_exit(WireReader *r) {
	WireReaderFrame *f;
	int ret;

	if (r->depth == 0)
		return -EBADMSG;
	f = &r->stack[r->depth];
	if (f->type == 'a')
		r->pos = f->end;
	else
		while (wire_reader_peek(r))
			if ((ret = wire_reader_skip(r)) < 0)
				return ret;
	r->sig = f->saved_sig;
	r->depth--;
	return 0;
}

int wire_reader_skip(WireReader *r) {
	char t = wire_reader_peek(r);
	int ret;

	if (type_is_basic(t))
		return wire_reader_read_basic(r, t, NULL);
	if (t != 'a' && t != 'v' && t != '(' && t != '{')
		return -EBADMSG;
	ret = wire_reader_enter(r, t);
	return ret < 0 ? ret : wire_reader_exit(r);
}
