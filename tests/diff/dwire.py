# dwire.py - D-Bus wire format for the differential tester: a marshaller
# and an unmarshaller of every type the specification defines, driven by
# signatures, so that any message can be built and every message received
# can be compared value by value.  Pure python3, little and big endian.
import struct

METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL = 1, 2, 3, 4
TYPE_NAMES = {METHOD_CALL: 'call', METHOD_RETURN: 'return', ERROR: 'error', SIGNAL: 'signal'}
NO_REPLY_EXPECTED, NO_AUTO_START, ALLOW_INTERACTIVE_AUTHORIZATION = 1, 2, 4

PATH, INTERFACE, MEMBER, ERROR_NAME, REPLY_SERIAL, DESTINATION, SENDER, SIGNATURE, UNIX_FDS = range(1, 10)
FIELD_NAMES = {PATH: 'path', INTERFACE: 'interface', MEMBER: 'member', ERROR_NAME: 'error_name',
               REPLY_SERIAL: 'reply_serial', DESTINATION: 'destination', SENDER: 'sender',
               SIGNATURE: 'signature', UNIX_FDS: 'unix_fds'}
FIELD_SIG = {PATH: 'o', INTERFACE: 's', MEMBER: 's', ERROR_NAME: 's', REPLY_SERIAL: 'u',
             DESTINATION: 's', SENDER: 's', SIGNATURE: 'g', UNIX_FDS: 'u'}

FIXED = {'y': ('B', 1), 'b': ('I', 4), 'n': ('h', 2), 'q': ('H', 2), 'i': ('i', 4), 'u': ('I', 4),
         'x': ('q', 8), 't': ('Q', 8), 'd': ('d', 8), 'h': ('I', 4)}
ALIGN = {'y': 1, 'b': 4, 'n': 2, 'q': 2, 'i': 4, 'u': 4, 'x': 8, 't': 8, 'd': 8, 'h': 4,
         's': 4, 'o': 4, 'g': 1, 'v': 1, 'a': 4, '(': 8, '{': 8}


class Variant:
    """a value of type v: (signature, value)"""
    __slots__ = ('sig', 'value')

    def __init__(self, sig, value):
        self.sig, self.value = sig, value

    def __eq__(self, o):
        return isinstance(o, Variant) and (self.sig, self.value) == (o.sig, o.value)

    def __repr__(self):
        return 'V(%s,%r)' % (self.sig, self.value)


def split_sig(sig):
    """the complete types of a signature"""
    out, i = [], 0
    while i < len(sig):
        j = _type_end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _type_end(sig, i):
    c = sig[i]
    if c == 'a':
        return _type_end(sig, i + 1)
    if c in '({':
        close = ')' if c == '(' else '}'
        i += 1
        while sig[i] != close:
            i = _type_end(sig, i)
        return i + 1
    return i + 1


class Writer:
    def __init__(self, be=False, start=0):
        self.b = bytearray()
        self.e = '>' if be else '<'
        self.start = start

    def pad(self, a):
        n = (-(len(self.b) + self.start)) % a
        self.b += b'\0' * n

    def put(self, t, v):
        c = t[0]
        if c in FIXED:
            fmt, size = FIXED[c]
            self.pad(size)
            if c == 'b':
                v = 1 if v else 0
            self.b += struct.pack(self.e + fmt, v)
        elif c in 'so':
            s = v.encode() if isinstance(v, str) else bytes(v)
            self.pad(4)
            self.b += struct.pack(self.e + 'I', len(s)) + s + b'\0'
        elif c == 'g':
            s = v.encode() if isinstance(v, str) else bytes(v)
            self.b += bytes([len(s)]) + s + b'\0'
        elif c == 'v':
            self.put('g', v.sig)
            self.put(v.sig, v.value)
        elif c == 'a':
            et = t[1:]
            self.pad(4)
            at = len(self.b)
            self.b += b'\0\0\0\0'
            self.pad(ALIGN[et[0]])
            first = len(self.b)
            if et[0] == '{':
                kt, vt = split_sig(et[1:-1])
                items = v.items() if isinstance(v, dict) else v
                for k, val in items:
                    self.pad(8)
                    self.put(kt, k)
                    self.put(vt, val)
            else:
                for x in v:
                    self.put(et, x)
            struct.pack_into(self.e + 'I', self.b, at, len(self.b) - first)
        elif c == '(':
            self.pad(8)
            for st, x in zip(split_sig(t[1:-1]), v):
                self.put(st, x)
        else:
            raise ValueError('type %r' % t)


def marshal_body(sig, values, be=False):
    w = Writer(be)
    for t, v in zip(split_sig(sig), values):
        w.put(t, v)
    return bytes(w.b)


class Reader:
    def __init__(self, data, be=False, start=0):
        self.d = data
        self.e = '>' if be else '<'
        self.start = start
        self.i = 0

    def align(self, a):
        self.i += (-(self.i + self.start)) % a

    def get(self, t):
        c = t[0]
        if c in FIXED:
            fmt, size = FIXED[c]
            self.align(size)
            v = struct.unpack_from(self.e + fmt, self.d, self.i)[0]
            self.i += size
            return bool(v) if c == 'b' else v
        if c in 'so':
            self.align(4)
            n = struct.unpack_from(self.e + 'I', self.d, self.i)[0]
            s = bytes(self.d[self.i + 4:self.i + 4 + n])
            self.i += 4 + n + 1
            return s.decode(errors='replace')
        if c == 'g':
            n = self.d[self.i]
            s = bytes(self.d[self.i + 1:self.i + 1 + n])
            self.i += n + 2
            return s.decode(errors='replace')
        if c == 'v':
            sig = self.get('g')
            return Variant(sig, self.get(sig))
        if c == 'a':
            et = t[1:]
            self.align(4)
            n = struct.unpack_from(self.e + 'I', self.d, self.i)[0]
            self.i += 4
            self.align(ALIGN[et[0]])
            end = self.i + n
            out = []
            if et[0] == '{':
                kt, vt = split_sig(et[1:-1])
                while self.i < end:
                    self.align(8)
                    k = self.get(kt)
                    out.append((k, self.get(vt)))
                return out
            while self.i < end:
                out.append(self.get(et))
            return out
        if c == '(':
            self.align(8)
            return tuple(self.get(st) for st in split_sig(t[1:-1]))
        raise ValueError('type %r' % t)


def unmarshal_body(sig, data, be=False):
    r = Reader(data, be)
    return [r.get(t) for t in split_sig(sig or '')]


def marshal(typ, serial, fields, sig='', body=(), flags=0, be=False, raw_body=None):
    """a message; fields: dict code -> value (SIGNATURE is added from sig)"""
    f = dict(fields)
    if sig:
        f[SIGNATURE] = sig
    bb = raw_body if raw_body is not None else marshal_body(sig, body, be)
    h = Writer(be, start=0)
    h.b += bytes([ord('B' if be else 'l'), typ, flags, 1])
    h.b += struct.pack(h.e + 'II', len(bb), serial)
    arr = []
    for code in sorted(f):
        arr.append((code, Variant(FIELD_SIG.get(code, 's'), f[code])))
    h.put('a(yv)', arr)
    h.pad(8)
    return bytes(h.b) + bb


def message_size(data):
    """the size of the message at the start of data, or None if the fixed
    header is not complete"""
    if len(data) < 16:
        return None
    e = '>' if data[0:1] == b'B' else '<'
    body_len, _, flen = struct.unpack_from(e + 'III', data, 4)
    return 16 + flen + (-(16 + flen)) % 8 + body_len


def parse(data):
    """(type, flags, serial, {field: value}, body values, raw body)"""
    be = data[0:1] == b'B'
    e = '>' if be else '<'
    typ, flags = data[1], data[2]
    body_len, serial, flen = struct.unpack_from(e + 'III', data, 4)
    r = Reader(data, be)
    r.i = 12
    fields = {}
    for code, var in r.get('a(yv)'):
        fields[code] = var.value
    r.align(8)
    body = bytes(data[r.i:r.i + body_len])
    try:
        values = unmarshal_body(fields.get(SIGNATURE, ''), body, be)
    except Exception as exc:  # a body that does not match its signature
        values = ['<undecodable: %s>' % exc]
    return typ, flags, serial, fields, values, body
