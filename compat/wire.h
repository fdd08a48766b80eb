/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * wire.h - the dbus1 wire format: framing, header parsing, full validation
 * of header and body (both byte orders), and the header rewrite that the
 * bus applies to every message it forwards (header filtering: unknown
 * fields dropped, a forged sender replaced by the real one).
 *
 * The body is never re-marshalled: a forwarded message is the rewritten
 * header followed by the original body bytes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	WIRE_TYPE_INVALID	= 0,
	WIRE_TYPE_METHOD_CALL	= 1,
	WIRE_TYPE_METHOD_RETURN	= 2,
	WIRE_TYPE_ERROR		= 3,
	WIRE_TYPE_SIGNAL	= 4,
};

enum {
	WIRE_FLAG_NO_REPLY_EXPECTED		= 0x1,
	WIRE_FLAG_NO_AUTO_START			= 0x2,
	WIRE_FLAG_ALLOW_INTERACTIVE_AUTHORIZATION = 0x4,
};

enum {
	WIRE_FIELD_INVALID	= 0,
	WIRE_FIELD_PATH		= 1,
	WIRE_FIELD_INTERFACE	= 2,
	WIRE_FIELD_MEMBER	= 3,
	WIRE_FIELD_ERROR_NAME	= 4,
	WIRE_FIELD_REPLY_SERIAL	= 5,
	WIRE_FIELD_DESTINATION	= 6,
	WIRE_FIELD_SENDER	= 7,
	WIRE_FIELD_SIGNATURE	= 8,
	WIRE_FIELD_UNIX_FDS	= 9,
};

#define WIRE_FIXED_HEADER_SIZE 16
#define WIRE_MAX_MESSAGE_SIZE (128u * 1024u * 1024u)	/* spec: 2^27 */
#define WIRE_MAX_ARRAY_SIZE (64u * 1024u * 1024u)	/* spec: 2^26 */
#define WIRE_MAX_NAME_LEN 255

/**
 * struct WireString - a string inside a message buffer
 * @s:		points into the message (NUL-terminated there), NULL if absent
 * @len:	length without the NUL
 */
typedef struct WireString {
	const char *s;
	uint32_t len;
} WireString;

/**
 * struct WireHeader - parsed view of a dbus1 message header
 *
 * All strings point into the buffer that was parsed; the view is valid as
 * long as that buffer is.
 */
typedef struct WireHeader {
	bool big_endian;
	uint8_t type;
	uint8_t flags;
	uint8_t version;
	uint32_t body_len;
	uint32_t serial;
	uint32_t fields_len;	/* length of the header field array */
	size_t header_len;	/* offset of the body: 16 + ALIGN8(fields_len) */
	size_t total_len;	/* header_len + body_len */
	WireString path;
	WireString interface;
	WireString member;
	WireString error_name;
	WireString destination;
	WireString sender;
	WireString signature;	/* s == NULL: no signature field (empty body) */
	uint32_t reply_serial;	/* valid if has_reply_serial */
	uint32_t unix_fds;	/* 0 if absent */
	bool has_reply_serial;
	/* the known fields (WIRE_FIELD_PATH ... WIRE_FIELD_UNIX_FDS) in the
	 * order they came in; n_order 0: none recorded, and a header written
	 * from this view has them in the order of their codes */
	uint8_t n_order;
	uint8_t order[WIRE_FIELD_UNIX_FDS];
	uint16_t fields;	/* with an order: bit N set if field N is there */
} WireHeader;

/**
 * wire_frame_size() - size of the message that starts at @data
 * @data:	buffered stream bytes
 * @len:	how many are buffered
 * @max_size:	the bus's max_message_size
 * @ret_total:	set to the whole message's size once 16 bytes are there,
 *		or 0 if fewer are buffered
 *
 * Return: 0, -EBADMSG (bad endianness byte, protocol version, overflowing
 * lengths), -EMSGSIZE (larger than @max_size or the spec's maximum).
 */
int wire_frame_size(const uint8_t *data, size_t len, size_t max_size, size_t *ret_total);

/**
 * wire_header_parse() - parse and validate the header of one message
 * @msg:	the whole message (@len == its total size)
 * @ret:	the parsed view
 *
 * Checks everything the specification requires of a header: type, version,
 * serial != 0, field codes and their signatures, each field at most once,
 * valid object path / interface / member / error / bus names / signature,
 * the fields each message type requires, zero padding, and that
 * header_len + body_len == @len.
 *
 * Return: 0, -EBADMSG.
 */
int wire_header_parse(const uint8_t *msg, size_t len, WireHeader *ret);
/*
 * wire_header_parse_trusted() - wire_header_parse() of a message that
 * passed wire_header_parse() before or was built by wire_builder_finish():
 * the same structure checks (bounds, field codes and signatures, padding,
 * required fields) without validating the strings again (UTF-8, object
 * paths, names, the signature).  Never for bytes from a peer.
 */
int wire_header_parse_trusted(const uint8_t *msg, size_t len, WireHeader *ret);

/**
 * wire_body_validate() - validate the body against the signature
 *
 * Full marshalling rules: alignment and zero padding, booleans 0/1, string
 * lengths with NUL and valid UTF-8 (no embedded NUL), object paths,
 * signatures, array lengths (<= 64 MiB, element alignment), nesting depth
 * (32 arrays, 32 structs, 64 total), variants (one complete type),
 * dict entries, and no trailing bytes (as libdbus, UNIX_FD values are not
 * checked against h->unix_fds).
 *
 * Return: 0, -EBADMSG.
 */
int wire_body_validate(const WireHeader *h, const uint8_t *body, size_t body_len);

/**
 * wire_header_rewrite_size() - upper bound of the rewritten header (the
 * header's own fields and a SENDER field: for a parsed header it does not
 * look at the fields)
 */
size_t wire_header_rewrite_size(const WireHeader *h, size_t sender_len);

/**
 * wire_header_rewrite() - build the header the bus forwards
 * @h:		parsed header of the original message
 * @sender:	the sender's unique name (or "org.freedesktop.DBus")
 * @out:	buffer of at least wire_header_rewrite_size() bytes
 * @ret_len:	bytes written, a multiple of 8 (the body follows directly)
 *
 * Writes the fixed header (in the message's byte order) and the known fields
 * PATH, INTERFACE, MEMBER, ERROR_NAME, REPLY_SERIAL, DESTINATION, SENDER,
 * SIGNATURE and UNIX_FDS in the order the message had them, as dbus-daemon
 * forwards a message: SENDER = @sender, in the place of a forged one or else
 * last; fields with unknown codes (and CONTAINER_INSTANCE) are dropped.
 *
 * Return: 0, -ENOBUFS if @out is too small.
 */
int wire_header_rewrite(const WireHeader *h, const char *sender, size_t sender_len,
			uint8_t *out, size_t out_size, size_t *ret_len);

/* name and path syntax (D-Bus specification, "Valid names") */
bool wire_object_path_is_valid(const char *p, size_t len);
bool wire_interface_is_valid(const char *p, size_t len);
bool wire_member_is_valid(const char *p, size_t len);
bool wire_error_name_is_valid(const char *p, size_t len);
bool wire_bus_name_is_valid(const char *p, size_t len);	/* unique or well-known */
bool wire_unique_name_is_valid(const char *p, size_t len);
bool wire_well_known_name_is_valid(const char *p, size_t len);
bool wire_signature_is_valid(const char *p, size_t len);
bool wire_utf8_is_valid(const char *p, size_t len);

/**
 * wire_body_string_args() - the leading string-like arguments of a body
 * @h, @body:	a validated message
 * @args:	out: argument N if it is of type s, o or g (else .s == NULL)
 * @types:	out: the type code of argument N ('s', 'o', 'g', 'a' for as/ao
 *		with the array's element strings not returned, 0 otherwise)
 * @n:		how many arguments to look at (match rules use up to 64)
 *
 * Used by match rules (argN, argNpath, arg0namespace) and by bloom filters.
 *
 * Return: the number of arguments examined.
 */
unsigned wire_body_string_args(const WireHeader *h, const uint8_t *body,
			       WireString *args, char *types, unsigned n);

/* ------------------------------------------------------------------------ */
/* additions (compat/wire.c) */

#define WIRE_PATH_LOCAL "/org/freedesktop/DBus/Local"
#define WIRE_INTERFACE_LOCAL "org.freedesktop.DBus.Local"
#define WIRE_MAX_DEPTH 64		/* total container nesting of a value */
#define WIRE_MAX_SIGNATURE_LEN 255

/*
 * Field 10 is CONTAINER_INSTANCE (type 'o') in libdbus >= 1.13.  It is not in
 * the specification, but dbus-daemon 1.14 rejects a message whose field 10 is
 * not an object path or appears twice, and so do we.  It is never forwarded.
 */
#define WIRE_FIELD_CONTAINER_INSTANCE 10

/**
 * wire_bus_name_is_valid_libdbus() - libdbus's bus name syntax
 * @p, @len:	the name
 * @is_namespace: false: _dbus_validate_bus_name(); true:
 *		_dbus_validate_bus_namespace() (a single element is enough)
 *
 * Laxer than the specification for unique names: ":" followed by any
 * (possibly empty, dot-less) sequence of [A-Za-z0-9_-] elements is accepted.
 * dbus-daemon uses it for the sender=, destination= and arg0namespace= keys
 * of match rules, which is why match-rule.c needs it.
 *
 * Return: true if valid.
 */
bool wire_bus_name_is_valid_libdbus(const char *p, size_t len, bool is_namespace);

/**
 * wire_set_libdbus_compat() - test hook: emulate libdbus's laxness
 * @enable:	true to accept what libdbus 1.14 accepts although the
 *		specification does not (see "DOC: validation rules" in wire.c:
 *		dot-less unique names in DESTINATION/SENDER)
 *
 * Only for differential tests against libdbus; the daemon never calls it.
 * Process-global, not thread safe.
 */
void wire_set_libdbus_compat(bool enable);

/**
 * wire_header_is_local() - does the message use the reserved local path or
 *			    interface?
 * @h:		a parsed header
 *
 * libdbus refuses to load a message with PATH /org/freedesktop/DBus/Local or
 * INTERFACE org.freedesktop.DBus.Local (dbus-daemon thereby disconnects the
 * client, as for any invalid message).  wire_header_parse() accepts them so
 * that the daemon can decide.
 *
 * Return: true if either field is the local one.
 */
bool wire_header_is_local(const WireHeader *h);

/**
 * wire_type_to_string() - "method_call", "method_return", "error", "signal"
 * @type:	a message type
 *
 * Return: the name used by match rules and bloom filters, NULL for others.
 */
const char *wire_type_to_string(uint8_t type);

/**
 * wire_type_from_string() - inverse of wire_type_to_string()
 * @s:		a type name (exact, case sensitive)
 *
 * Return: the type, or WIRE_TYPE_INVALID.
 */
uint8_t wire_type_from_string(const char *s);

/**
 * struct WireArg - one top-level argument of a body, as seen by match rules
 * @type:	's', 'o', 'g'; 'a' for as, ao, ag; 0 for any other type
 * @elem:	for 'a': the element type ('s', 'o' or 'g')
 * @str:	for 's', 'o', 'g': the value
 * @array_pos:	for 'a': body offset of the element data
 * @array_len:	for 'a': length of the element data in bytes
 */
typedef struct WireArg {
	char type;
	char elem;
	WireString str;
	uint32_t array_pos;
	uint32_t array_len;
} WireArg;

/**
 * wire_body_args() - the first @n top-level arguments of a validated body
 * @h:		the parsed header
 * @body:	the body (h->body_len bytes, validated)
 * @args:	out: one entry per argument examined
 * @n:		how many arguments to look at
 *
 * Non-string arguments are skipped without being decoded (arrays by their
 * length), so this is cheap even for large bodies.
 *
 * Return: the number of arguments examined (<= @n).
 */
unsigned wire_body_args(const WireHeader *h, const uint8_t *body, WireArg *args, unsigned n);

/**
 * wire_arg_array_next() - iterate the strings of an as/ao/ag argument
 * @h:		the parsed header
 * @body:	the validated body
 * @a:		an argument with type 'a' from wire_body_args()
 * @cursor:	iteration state, 0 before the first call
 * @ret:	out: the next element
 *
 * Return: true if @ret was set, false at the end.
 */
bool wire_arg_array_next(const WireHeader *h, const uint8_t *body, const WireArg *a,
			 uint32_t *cursor, WireString *ret);

/*
 * Message builder for messages the bus itself originates (driver replies,
 * errors, NameOwnerChanged, NameAcquired ...): always little endian.
 *
 * Usage:
 *	WireBuilder b;
 *	r = wire_builder_init(&b, WIRE_TYPE_SIGNAL, WIRE_FLAG_NO_REPLY_EXPECTED, serial);
 *	wire_builder_set_path(&b, "/org/freedesktop/DBus");
 *	...
 *	wire_builder_append(&b, "sss", name, old_owner, new_owner);
 *	r = wire_builder_finish(&b, &msg, &len);	(msg is malloc'd: free() it)
 *
 * Errors are sticky: once a call failed, every later call (and finish)
 * returns the same error, so a sequence of appends can be checked once at
 * wire_builder_finish().  On failure, or to abandon a message, call
 * wire_builder_done().
 *
 * The header setters keep the string pointers (they are not copied): the
 * strings must stay valid until wire_builder_finish().
 *
 * The body is type-checked as it is built: every append must match the
 * signature of the container it goes into, and the output of a successful
 * wire_builder_finish() always passes wire_header_parse() and
 * wire_body_validate() (UNIX_FD values are not checked against unix_fds).
 */

#define WIRE_BUILDER_MAX_DEPTH WIRE_MAX_DEPTH

/* one open container, private to wire.c */
typedef struct WireBuilderFrame {
	char type;		/* 'a', 'v', '(', '{' */
	bool sig_in_buf;	/* contents signature lives in buf (variants) */
	uint8_t sig_len;	/* length of the contents signature */
	uint32_t sig_off;	/* offset of the contents signature */
	uint32_t sig_pos;	/* struct/dict: how much of it is filled */
	uint32_t n_items;	/* array: elements; variant: values */
	uint32_t len_off;	/* array: offset of the length word */
	uint32_t start;		/* array: offset of the first element */
} WireBuilderFrame;

typedef struct WireBuilder {
	uint8_t *buf;		/* body while building; the message after finish */
	size_t len;
	size_t cap;
	bool fixed;		/* caller's buffer: never reallocated or freed */
	int error;		/* sticky error */
	uint8_t type;
	uint8_t flags;
	uint32_t serial;
	uint32_t reply_serial;
	bool has_reply_serial;
	uint32_t unix_fds;
	WireString path, interface, member, error_name, destination, sender;
	/* the fields in the order they were first set, as libdbus appends
	 * them (SIGNATURE with the first value of the body); bit N of
	 * order_set: field N is in order[] */
	uint8_t n_order;
	uint8_t order[WIRE_FIELD_UNIX_FDS];
	uint16_t order_set;
	char sig[WIRE_MAX_SIGNATURE_LEN + 1];	/* body signature, NUL-terminated */
	uint8_t sig_len;
	unsigned depth;
	WireBuilderFrame stack[WIRE_BUILDER_MAX_DEPTH];
} WireBuilder;

/**
 * wire_builder_init() - start a message with a growable heap buffer
 * @b:		the builder (caller's storage)
 * @type:	WIRE_TYPE_*
 * @flags:	WIRE_FLAG_*
 * @serial:	the serial, != 0
 *
 * Return: 0, -EINVAL.
 */
int wire_builder_init(WireBuilder *b, uint8_t type, uint8_t flags, uint32_t serial);

/**
 * wire_builder_init_buffer() - start a message in a caller-provided buffer
 * @b:		the builder
 * @buf:	storage for the whole message (header and body), 8-aligned
 * @size:	its size
 * @type, @flags, @serial: as for wire_builder_init()
 *
 * Nothing is allocated; a message that does not fit fails with -ENOBUFS.
 * wire_builder_finish() then returns @buf itself.
 *
 * Return: 0, -EINVAL.
 */
int wire_builder_init_buffer(WireBuilder *b, void *buf, size_t size,
			     uint8_t type, uint8_t flags, uint32_t serial);

/**
 * wire_builder_done() - release the builder's heap buffer (not needed after
 *			 a successful wire_builder_finish(); harmless then)
 * @b:		the builder
 */
void wire_builder_done(WireBuilder *b);

/*
 * Header setters.  Each validates its argument (object path, interface,
 * member, error name, bus name) and returns 0 or -EINVAL; a NULL string
 * removes the field.  unix_fds == 0 removes the field.
 *
 * The header has its fields in the order they were first set (a field set
 * again keeps its place), and SIGNATURE where the first value of the body
 * was appended: as libdbus writes a message, so that the bus's messages
 * are byte for byte dbus-daemon's when they are built in dbus-daemon's
 * order.
 */
int wire_builder_set_path(WireBuilder *b, const char *path);
int wire_builder_set_interface(WireBuilder *b, const char *interface);
int wire_builder_set_member(WireBuilder *b, const char *member);
int wire_builder_set_error_name(WireBuilder *b, const char *error_name);
int wire_builder_set_destination(WireBuilder *b, const char *destination);
int wire_builder_set_sender(WireBuilder *b, const char *sender);
int wire_builder_set_reply_serial(WireBuilder *b, uint32_t reply_serial);
int wire_builder_set_unix_fds(WireBuilder *b, uint32_t unix_fds);

/**
 * wire_builder_append_basic() - append one basic value
 * @b:		the builder
 * @type:	'y' (uint8_t), 'b' (bool), 'n' (int16_t), 'q' (uint16_t),
 *		'i' (int32_t), 'u' (uint32_t), 'x' (int64_t), 't' (uint64_t),
 *		'd' (double), 'h' (uint32_t index into the fds);
 *		's', 'o', 'g': @value is the NUL-terminated string itself
 * @value:	points to a value of the C type named above
 *
 * Return: 0, -EINVAL (wrong type for this position, invalid string, object
 * path or signature), -ENOMEM, -ENOBUFS, -EMSGSIZE.
 */
int wire_builder_append_basic(WireBuilder *b, char type, const void *value);

/**
 * wire_builder_append_string() - append a string-like value with a length
 * @b:		the builder
 * @type:	's', 'o' or 'g'
 * @s:		the value (need not be NUL-terminated; must not contain NUL)
 * @len:	its length
 *
 * Return: as wire_builder_append_basic().
 */
int wire_builder_append_string(WireBuilder *b, char type, const char *s, size_t len);

/**
 * wire_builder_append() - append several basic values
 * @b:		the builder
 * @types:	a string of basic type codes, e.g. "sus"
 * @...:	one argument per code: y b n q i h as int, u as unsigned,
 *		x as int64_t, t as uint64_t, d as double, s o g as const char *
 *
 * Return: as wire_builder_append_basic().
 */
int wire_builder_append(WireBuilder *b, const char *types, ...);

/**
 * wire_builder_open_container() - open an array, variant, struct or dict entry
 * @b:		the builder
 * @type:	'a', 'v', '(' or 'r' (struct), '{' or 'e' (dict entry)
 * @contents:	'a': the element type ("s", "{sv}"); 'v': the contained type;
 *		struct / dict entry: the member types without brackets ("sv")
 *
 * Return: 0, -EINVAL (wrong type here, invalid signature), -E2BIG (nested
 * too deeply), -ENOMEM, -ENOBUFS, -EMSGSIZE.
 */
int wire_builder_open_container(WireBuilder *b, char type, const char *contents);

/**
 * wire_builder_close_container() - close the innermost container
 * @b:		the builder
 *
 * Fills in an array's length.
 *
 * Return: 0, -EINVAL (nothing open, struct or dict entry incomplete, variant
 * without value), -EMSGSIZE (array larger than 64 MiB).
 */
int wire_builder_close_container(WireBuilder *b);

/**
 * wire_builder_finish() - write the header and return the message
 * @b:		the builder
 * @ret_msg:	out: the message (heap: free() it; with
 *		wire_builder_init_buffer(): the caller's buffer)
 * @ret_len:	out: its length
 *
 * Checks that all containers are closed and that the fields the message
 * type requires are set, then fills in the SIGNATURE field and the body
 * length.  On success the builder no longer owns the buffer.
 *
 * Return: 0, -EINVAL (open container, missing required field), any sticky
 * error, -ENOMEM, -ENOBUFS, -EMSGSIZE.
 */
int wire_builder_finish(WireBuilder *b, uint8_t **ret_msg, size_t *ret_len);

static inline void wire_builder_donep(WireBuilder **b) {
	if (*b)
		wire_builder_done(*b);
}

/*
 * Body reader: the values of a body, one at a time, in signature order.
 *
 * Made for bodies that passed wire_body_validate() against their
 * signature (the driver reads only calls whose signature it checked); on
 * anything else it is still bounds-safe: it never reads outside the body or
 * the signature, and a value that does not fit, a wrong type, a malformed
 * signature or nesting deeper than WIRE_MAX_DEPTH fails with -EBADMSG, but
 * what it returns from an unvalidated body (string contents, booleans other
 * than 0/1) is unchecked.
 *
 * Usage (a{ss}):
 *	WireReader r;
 *	wire_reader_init(&r, h, body);
 *	wire_reader_enter(&r, 'a');
 *	while (wire_reader_peek(&r) == '{') {
 *		const char *k, *v;
 *		wire_reader_enter(&r, '{');
 *		wire_reader_read_basic(&r, 's', &k);
 *		wire_reader_read_basic(&r, 's', &v);
 *		wire_reader_exit(&r);
 *	}
 *	wire_reader_exit(&r);
 *
 * Strings point into the body (NUL-terminated there).
 */

/* one open container, private to wire.c */
typedef struct WireReaderFrame {
	char type;		/* 0 (the body), 'a', 'v', '(', '{' */
	const char *sig;	/* contents signature (array: element type) */
	const char *sig_end;
	const char *saved_sig;	/* the parent's cursor past this container */
	size_t end;		/* array: offset past its last element; else the parent's */
} WireReaderFrame;

typedef struct WireReader {
	const uint8_t *body;
	size_t body_len;
	bool big_endian;
	size_t pos;		/* offset of the next value (before alignment) */
	const char *sig;	/* type of the next value */
	unsigned depth;		/* open containers */
	WireReaderFrame stack[WIRE_MAX_DEPTH + 1];
} WireReader;

/**
 * wire_reader_init() - start reading a body
 * @r:		the reader (caller's storage)
 * @h:		the message's header (signature and byte order)
 * @body:	its body, h->body_len bytes
 */
void wire_reader_init(WireReader *r, const WireHeader *h, const uint8_t *body);

/**
 * wire_reader_init_raw() - start reading values of @sig (@sig_len bytes)
 * in @body (@body_len bytes, offset 0 is 8-aligned) of byte order @big_endian
 */
void wire_reader_init_raw(WireReader *r, const char *sig, size_t sig_len, bool big_endian,
			  const uint8_t *body, size_t body_len);

/**
 * wire_reader_peek() - type code of the next value
 *
 * Return: 'y' ... 'g', 'a', 'v', '(' (struct), '{' (dict entry), or 0 at
 * the end of the body or of the current container (an array's last element
 * was read; a struct's, dict entry's or variant's members were read).
 */
char wire_reader_peek(const WireReader *r);

/**
 * wire_reader_read_basic() - read the next value, of basic type @type
 * @out:	'y' uint8_t, 'b' bool, 'n' int16_t, 'q' uint16_t, 'i' int32_t,
 *		'u' uint32_t, 'h' uint32_t (an index into the fds), 'x' int64_t,
 *		't' uint64_t, 'd' double, 's' 'o' 'g' const char *; may be NULL
 *
 * Return: 0, -EBADMSG (the next value is not of @type, or does not fit).
 */
int wire_reader_read_basic(WireReader *r, char type, void *out);

/**
 * wire_reader_enter() - open the next value, a container of @type
 * @type:	'a', 'v', '(' or '{'
 *
 * Return: 0, -EBADMSG (not of @type, does not fit, nested too deeply).
 */
int wire_reader_enter(WireReader *r, char type);

/**
 * wire_reader_exit() - close the innermost container, skipping what was
 * not read of it
 *
 * Return: 0, -EBADMSG (nothing open, or what is skipped is malformed).
 */
int wire_reader_exit(WireReader *r);

/**
 * wire_reader_skip() - step over the next value, whatever its type
 *
 * Return: 0, -EBADMSG (nothing left here, or the value is malformed).
 */
int wire_reader_skip(WireReader *r);

/**
 * wire_reader_signature() - the signature of the next complete value
 * @ret_len:	out: its length
 *
 * Return: a pointer into the body's signature (not NUL-terminated there),
 * or NULL when wire_reader_peek() returns 0 or the signature is malformed.
 */
const char *wire_reader_signature(const WireReader *r, size_t *ret_len);

/**
 * wire_signature_next_len() - length of the first complete type of a
 * signature, e.g. 5 for "a{sv}u", 1 for "su"
 * @s, @len:	the signature (need not be valid; never read past @len)
 *
 * Return: the length, or 0 if @s is empty or does not start with a
 * well-formed complete type (unbalanced brackets, an empty struct, an array
 * without element type, an unknown code).
 */
size_t wire_signature_next_len(const char *s, size_t len);
