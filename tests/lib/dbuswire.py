# dbuswire.py - the D-Bus wire format for the tests (tests/adversarial,
# tests/diff, tests/integration): a marshaller and an unmarshaller of every
# type the specification defines, driven by signatures; raw builders that can
# also make what the specification forbids; and a blocking client connection
# with SASL EXTERNAL, NEGOTIATE_UNIX_FD, Hello and fd passing.  Pure python3,
# little and big endian.
import array
import os
import socket
import struct
import time

METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL = 1, 2, 3, 4
TYPE_NAMES = {METHOD_CALL: 'call', METHOD_RETURN: 'return', ERROR: 'error', SIGNAL: 'signal'}
NO_REPLY_EXPECTED, NO_AUTO_START, ALLOW_INTERACTIVE_AUTHORIZATION = 1, 2, 4

F_PATH, F_INTERFACE, F_MEMBER, F_ERROR_NAME, F_REPLY_SERIAL, F_DESTINATION, F_SENDER, F_SIGNATURE, F_UNIX_FDS = range(1, 10)
FIELD_NAMES = {F_PATH: 'path', F_INTERFACE: 'interface', F_MEMBER: 'member', F_ERROR_NAME: 'error_name',
               F_REPLY_SERIAL: 'reply_serial', F_DESTINATION: 'destination', F_SENDER: 'sender',
               F_SIGNATURE: 'signature', F_UNIX_FDS: 'unix_fds'}
FIELD_SIG = {F_PATH: 'o', F_INTERFACE: 's', F_MEMBER: 's', F_ERROR_NAME: 's', F_REPLY_SERIAL: 'u',
             F_DESTINATION: 's', F_SENDER: 's', F_SIGNATURE: 'g', F_UNIX_FDS: 'u'}
DRIVER = ('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus')


def parse_address(addr):
    for part in addr.split(';'):
        kind, _, rest = part.partition(':')
        kv = dict(x.split('=', 1) for x in rest.split(',') if '=' in x)
        if kind == 'unix' and 'path' in kv:
            return kv['path']
    raise ValueError('no unix:path= in ' + addr)


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


class Buf:
    """a marshalling buffer, little endian (big endian with be=True): raw
    pieces (u8, u32, string with any length...) or values of a type (put)"""

    def __init__(self, be=False, start=0):
        self.b = bytearray()
        self.e = '>' if be else '<'
        self.start = start

    def pad(self, a):
        self.b += b'\0' * ((-(len(self.b) + self.start)) % a)

    def u8(self, v):
        self.b.append(v & 0xff)

    def u32(self, v):
        self.pad(4)
        self.b += struct.pack(self.e + 'I', v & 0xffffffff)

    def u64(self, v):
        self.pad(8)
        self.b += struct.pack(self.e + 'Q', v)

    def string(self, s, nul=True, length=None):
        if isinstance(s, str):
            s = s.encode()
        self.u32(len(s) if length is None else length)
        self.b += s
        if nul:
            self.b.append(0)

    def sig(self, s, length=None):
        if isinstance(s, str):
            s = s.encode()
        self.u8(len(s) if length is None else length)
        self.b += s + b'\0'

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
    w = Buf(be)
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


def marshal(typ, serial, fields, body=b'', sig=None, flags=0, be=False, version=1, endian=None,
            body_len=None, fields_len=None, raw_fields=None):
    """a message; every part can be overridden to build invalid ones.
    fields: list of (code, sigchar, value) or dict code -> value"""
    if isinstance(fields, dict):
        fields = [(k, FIELD_SIG.get(k, 's'), v) for k, v in fields.items()]
    fields = list(fields)
    if sig is not None:
        fields.append((F_SIGNATURE, 'g', sig))
    h = Buf(be, start=16)
    if raw_fields is not None:
        h.b += raw_fields
    else:
        for code, sc, val in fields:
            h.pad(8)
            h.u8(code)
            h.sig(sc)
            if sc in 'so':
                h.string(val)
            elif sc == 'g':
                h.sig(val)
            elif sc == 'u':
                h.u32(val)
            elif sc == 'y':
                h.u8(val)
            else:
                raise ValueError(sc)
    e = '>' if be else '<'
    fl = len(h.b) if fields_len is None else fields_len
    bl = len(body) if body_len is None else body_len
    head = struct.pack(e + 'cBBBIII', endian or (b'B' if be else b'l'), typ, flags, version, bl, serial, fl) + bytes(h.b)
    head += b'\0' * ((-len(head)) % 8)
    return head + body


def message(typ, serial, fields, sig='', values=(), flags=0, be=False, raw_body=None):
    """a valid message: fields dict code -> value (SIGNATURE is added from
    sig) in the order of their codes, the body marshalled from values of
    sig (or raw_body as it is)"""
    f = dict(fields)
    if sig:
        f[F_SIGNATURE] = sig
    body = raw_body if raw_body is not None else marshal_body(sig, values, be)
    return marshal(typ, serial, [(code, FIELD_SIG.get(code, 's'), f[code]) for code in sorted(f)], body,
                   flags=flags, be=be)


def call(serial, dest, path, iface, member, sig=None, body=b'', flags=0):
    f = {F_PATH: path, F_MEMBER: member}
    if iface:
        f[F_INTERFACE] = iface
    if dest:
        f[F_DESTINATION] = dest
    return marshal(METHOD_CALL, serial, f, body, sig, flags)


def driver_call(serial, member, sig=None, body=b''):
    return call(serial, DRIVER[0], DRIVER[1], DRIVER[2], member, sig, body)


def body_s(*strings):
    b = Buf()
    for s in strings:
        b.string(s)
    return bytes(b.b)


def msg_size(data):
    """total size of the message at the start of data, or None if the fixed
    header is incomplete"""
    if len(data) < 16:
        return None
    e = '>' if data[0:1] == b'B' else '<'
    bl, _, fl = struct.unpack(e + 'III', data[4:16])
    hl = 16 + fl
    hl += (-hl) % 8
    return hl + bl


def _header(data):
    be = data[0:1] == b'B'
    body_len, serial, _ = struct.unpack_from(('>' if be else '<') + 'III', data, 4)
    r = Reader(data, be)
    r.i = 12
    fields = {code: var.value for code, var in r.get('a(yv)')}
    r.align(8)
    return be, (data[1], data[2], serial, fields, bytes(data[r.i:r.i + body_len]))


def parse(data):
    """(type, flags, serial, {field: value}, raw body) of one complete message"""
    return _header(data)[1]


def parse_values(data):
    """(type, flags, serial, {field: value}, body values, raw body)"""
    be, (typ, flags, serial, fields, body) = _header(data)
    try:
        values = unmarshal_body(fields.get(F_SIGNATURE, ''), body, be)
    except Exception as exc:  # a body that does not match its signature
        values = ['<undecodable: %s>' % exc]
    return typ, flags, serial, fields, values, body


def brief(m, labels=None):
    """a parsed message (parse()) in a line: its kind, its error name's
    last part or its member, and its arguments (a string as labels names
    it)"""
    labels = labels or {}
    typ, flags, serial, f, body = m
    out = {METHOD_CALL: 'call', METHOD_RETURN: 'return', ERROR: 'error', SIGNAL: 'signal'}[typ]
    out += ' ' + (f.get(F_ERROR_NAME, '').rsplit('.', 1)[-1] or f.get(F_MEMBER) or '')
    if f.get(F_SIGNATURE):
        try:
            args = unmarshal_body(f[F_SIGNATURE], body)
            out += ' ' + ','.join(labels.get(a, a) if isinstance(a, str) else str(a) for a in args)
        except Exception:  # noqa: BLE001
            pass
    return out.strip()


def first_string(body):
    if len(body) < 4:
        return None
    n = struct.unpack('<I', body[:4])[0]
    return body[4:4 + n].decode(errors='replace')


class Conn:
    """a blocking client connection with a receive buffer.  Connects to the
    socket at path (or takes sock, already connected), authenticates with
    EXTERNAL as uid (ours by default) when auth or hello, negotiates fd
    passing when unix_fd, and says Hello when hello (self.unique).  With
    keep_fds the fds that arrive are collected in got_fds (take_fds)."""

    def __init__(self, path=None, hello=True, timeout=10.0, uid=None, auth=False, unix_fd=False, sock=None,
                 keep_fds=False):
        if sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(path)
        else:
            sock.settimeout(timeout)
        self.s = sock
        self.rbuf = b''
        self.serial = 0
        self.unique = None
        self.got_fds = [] if keep_fds else None
        if auth or hello:
            self.auth(uid, unix_fd)
        if hello:
            self.unique = first_string(self.call_driver('Hello', timeout=timeout)[4])

    def auth(self, uid=None, unix_fd=False):
        uid = os.getuid() if uid is None else uid
        self.s.sendall(b'\0AUTH EXTERNAL ' + str(uid).encode().hex().encode() + b'\r\n')
        line = self.readline()
        if not line.startswith(b'OK'):
            raise IOError('auth: %r' % line)
        if unix_fd:
            self.s.sendall(b'NEGOTIATE_UNIX_FD\r\n')
            line = self.readline()
            if not line.startswith(b'AGREE_UNIX_FD'):
                raise IOError('negotiate: %r' % line)
        self.s.sendall(b'BEGIN\r\n')

    def readline(self):
        while b'\r\n' not in self.rbuf:
            d = self.s.recv(4096)
            if not d:
                raise EOFError('closed')
            self.rbuf += d
        line, _, self.rbuf = self.rbuf.partition(b'\r\n')
        return line

    def next_serial(self):
        self.serial += 1
        return self.serial

    def send(self, data):
        self.s.sendall(data)

    def send_fds(self, data, fds):
        """data with the fds (a list) in one sendmsg; the bytes written"""
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else []
        return self.s.sendmsg([data], anc)

    def _recv(self):
        if self.got_fds is None:
            return self.s.recv(1 << 16)
        fds = array.array('i')
        d, anc, _, _ = self.s.recvmsg(1 << 16, socket.CMSG_SPACE(64 * fds.itemsize))
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
        self.got_fds.extend(fds)
        return d

    def take_fds(self):
        """closes the fds received so far; how many there were"""
        n = len(self.got_fds)
        for fd in self.got_fds:
            os.close(fd)
        self.got_fds = []
        return n

    def recv_msg(self, timeout=None):
        if timeout is not None:
            self.s.settimeout(timeout)
        while True:
            n = msg_size(self.rbuf)
            if n is not None and len(self.rbuf) >= n:
                m, self.rbuf = self.rbuf[:n], self.rbuf[n:]
                return parse(m)
            d = self._recv()
            if not d:
                raise EOFError('closed')
            self.rbuf += d

    def drain(self, secs=0.3):
        """every message that arrives until none came for secs"""
        out = []
        try:
            while True:
                out.append(self.recv_msg(secs))
        except socket.timeout:
            pass
        return out

    def wait_reply(self, serial, timeout=10.0):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout('no reply to %d' % serial)
            m = self.recv_msg(left)
            if m[0] in (METHOD_RETURN, ERROR) and m[3].get(F_REPLY_SERIAL) == serial:
                return m

    def call_driver(self, member, sig=None, body=b'', timeout=10.0):
        s = self.next_serial()
        self.send(driver_call(s, member, sig, body))
        return self.wait_reply(s, timeout)

    def closed_within(self, secs):
        """True if the peer closes the connection within secs (reading and
        dropping whatever arrives)"""
        end = time.monotonic() + secs
        try:
            while time.monotonic() < end:
                self.s.settimeout(max(0.01, end - time.monotonic()))
                d = self.s.recv(1 << 16)
                if not d:
                    return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
        return False

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass
