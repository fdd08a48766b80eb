#!/usr/bin/python3
# service.py NAME - an activatable service for tests/diff: connects to
# DBUS_STARTER_ADDRESS, says Hello, requests NAME, answers every method call
# with a return carrying its member, and exits after Exit or when the bus
# goes away.  The same on both daemons, so what it sends can be compared.
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import dbuswire as W  # noqa: E402

name = sys.argv[1]
path = os.environ['DBUS_STARTER_ADDRESS'].split('path=')[1].split(',')[0]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(b'\0AUTH EXTERNAL ' + str(os.geteuid()).encode().hex().encode() + b'\r\nBEGIN\r\n')
buf = b''
while b'\r\n' not in buf:
    buf += s.recv(4096)
buf = buf.split(b'\r\n', 1)[1]
D = {W.F_DESTINATION: 'org.freedesktop.DBus', W.F_PATH: '/org/freedesktop/DBus', W.F_INTERFACE: 'org.freedesktop.DBus'}
s.sendall(W.message(W.METHOD_CALL, 1, {**D, W.F_MEMBER: 'Hello'}) +
          W.message(W.METHOD_CALL, 2, {**D, W.F_MEMBER: 'RequestName'}, 'su', (name, 0)))
serial = 2
while True:
    n = W.msg_size(buf)
    if n is None or len(buf) < n:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        continue
    m, buf = W.parse_values(buf[:n]), buf[n:]
    typ, flags, ser, f = m[0], m[1], m[2], m[3]
    if typ != W.METHOD_CALL:
        continue
    serial += 1
    if not flags & W.NO_REPLY_EXPECTED:
        s.sendall(W.message(W.METHOD_RETURN, serial, {W.F_DESTINATION: f.get(W.F_SENDER), W.F_REPLY_SERIAL: ser},
                            's', (f.get(W.F_MEMBER, ''),)))
    if f.get(W.F_MEMBER) == 'Exit':
        break
