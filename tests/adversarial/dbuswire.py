# dbuswire.py - a minimal D-Bus client for tests/adversarial: raw sockets,
# SASL EXTERNAL, a marshaller that can also build what the specification
# forbids, and a message reader.  No dependencies beyond python3.
import os
import socket
import struct
import time

METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL = 1, 2, 3, 4
F_PATH, F_INTERFACE, F_MEMBER, F_ERROR_NAME, F_REPLY_SERIAL, F_DESTINATION, F_SENDER, F_SIGNATURE, F_UNIX_FDS = range(1, 10)
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


class Buf:
    """little-endian marshalling buffer (big-endian with be=True)"""

    def __init__(self, be=False, start=0):
        self.b = bytearray()
        self.e = '>' if be else '<'
        self.start = start

    def pad(self, a):
        while (len(self.b) + self.start) % a:
            self.b.append(0)

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


def parse(data):
    """(type, flags, serial, fields dict, body) of one complete message"""
    e = '>' if data[0:1] == b'B' else '<'
    typ, flags = data[1], data[2]
    bl, serial, fl = struct.unpack(e + 'III', data[4:16])
    fields = {}
    p = 16
    end = 16 + fl
    while p < end:
        p += (-p) % 8
        if p >= end:
            break
        code = data[p]
        sl = data[p + 1]
        sc = data[p + 2:p + 2 + sl].decode()
        p += 3 + sl
        if sc in 'so':
            p += (-p) % 4
            n = struct.unpack(e + 'I', data[p:p + 4])[0]
            fields[code] = data[p + 4:p + 4 + n].decode(errors='replace')
            p += 5 + n
        elif sc == 'g':
            n = data[p]
            fields[code] = data[p + 1:p + 1 + n].decode()
            p += 2 + n
        elif sc == 'u':
            p += (-p) % 4
            fields[code] = struct.unpack(e + 'I', data[p:p + 4])[0]
            p += 4
        else:
            break
    hl = end + (-end) % 8
    return typ, flags, serial, fields, data[hl:hl + bl]


def first_string(body):
    if len(body) < 4:
        return None
    n = struct.unpack('<I', body[:4])[0]
    return body[4:4 + n].decode(errors='replace')


class Conn:
    """a blocking client connection with a receive buffer"""

    def __init__(self, path, hello=True, timeout=10.0, uid=None):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.rbuf = b''
        self.serial = 0
        self.unique = None
        if hello:
            self.auth(uid)
            self.unique = self.call_driver('Hello', timeout=timeout)[4]
            self.unique = first_string(self.unique)

    def auth(self, uid=None):
        uid = os.getuid() if uid is None else uid
        self.s.sendall(b'\0AUTH EXTERNAL ' + str(uid).encode().hex().encode() + b'\r\n')
        line = self.readline()
        if not line.startswith(b'OK'):
            raise IOError('auth: %r' % line)
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

    def recv_msg(self, timeout=None):
        if timeout is not None:
            self.s.settimeout(timeout)
        while True:
            n = msg_size(self.rbuf)
            if n is not None and len(self.rbuf) >= n:
                m, self.rbuf = self.rbuf[:n], self.rbuf[n:]
                return parse(m)
            d = self.s.recv(1 << 16)
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
