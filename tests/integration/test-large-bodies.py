#!/usr/bin/python3
# Large bodies arrive intact and in order: a burst of unicast signals with
# bodies from 0 to 1 MiB (the bus hands bodies of 16 KiB and more to its
# core by reference, from its read buffer), mixed with small ones, sent
# back to back so that several share one read; then the same as method
# calls answered with a digest.  Prints TAP.
import hashlib
import os
import sys

import dbus
import dbus.lowlevel as L
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
ADDR = os.environ['DBUS_SESSION_BUS_ADDRESS']
IFACE, PATH = 'com.example.Large', '/com/example/Large'
_n = 0


def tap(good, desc, diag=''):
    global _n
    _n += 1
    print('%s %d - %s%s' % ('ok' if good else 'not ok', _n, desc, (': ' + diag) if diag and not good else ''))
    sys.stdout.flush()


def body(i, size):
    seed = hashlib.sha256(b'%d' % i).digest()
    return (seed * (size // len(seed) + 1))[:size]


sizes = [16384, 5, 65536, 100, 16383, 65537, 0, 300000, 1 << 20, 7, 20000, 131072, 16384, 3, 1 << 20]
sender = dbus.bus.BusConnection(ADDR)
receiver = dbus.bus.BusConnection(ADDR)
got = []
loop = GLib.MainLoop()


def on_message(conn, msg):
    if msg.get_interface() == IFACE and msg.get_member() == 'Blob':
        got.append(bytes(msg.get_args_list(byte_arrays=True)[1]))
        if len(got) == len(sizes):
            loop.quit()
    elif msg.get_interface() == IFACE and msg.get_member() == 'Digest' and isinstance(msg, L.MethodCallMessage):
        data = bytes(msg.get_args_list(byte_arrays=True)[0])
        reply = L.MethodReturnMessage(msg)
        reply.append(hashlib.sha256(data).hexdigest(), len(data), signature='su')
        conn.send_message(reply)


receiver.add_message_filter(on_message)
dest = receiver.get_unique_name()
for i, s in enumerate(sizes):
    m = L.SignalMessage(PATH, IFACE, 'Blob')
    m.set_destination(dest)
    m.append(dbus.UInt32(i), dbus.ByteArray(body(i, s)), signature='uay')
    sender.send_message(m)
sender.flush()
GLib.timeout_add(20000, loop.quit)
loop.run()
tap(len(got) == len(sizes), 'every large and small signal arrives', '%d of %d' % (len(got), len(sizes)))
bad = [i for i, g in enumerate(got) if g != body(i, sizes[i])]
tap(not bad and len(got) == len(sizes), 'in order and byte for byte', 'differ: %s' % bad)


def bus_side_sndbuf(conn):
    """the send buffer (ss -xm 'tb') of the bus's end of conn's socket"""
    import re
    import subprocess
    ino = os.fstat(conn.get_unix_fd()).st_ino
    try:
        out = subprocess.run(['ss', '-xmH'], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for local, peer, mem in re.findall(r'\s(\d+)\s+\*\s+(\d+)\s+skmem:\(([^)]*)\)', out):
        if int(peer) == ino:
            m = re.search(r'\btb(\d+)', mem)
            return int(m.group(1)) if m else None
    return None


# a connection sent large messages gets a larger socket buffer from the bus,
# one that got only small ones keeps the default
if os.path.basename(os.environ.get('BUS_DAEMON', '')).startswith('busbridged'):
    big, small = bus_side_sndbuf(receiver), bus_side_sndbuf(sender)
    if big is None or small is None:
        print('ok %d # SKIP ss -xm shows no send buffers here' % (_n + 1))
        _n += 1
    else:
        tap(big > small, 'the receiver of large messages has a larger socket buffer', 'tb %d, small %d' % (big, small))

# calls answered with a digest, pipelined
replies = {}


def call(i, s):
    def ok(h, n):
        replies[i] = (str(h), int(n))
        if len(replies) == len(sizes):
            loop.quit()

    def err(e):
        replies[i] = ('error', str(e))
        if len(replies) == len(sizes):
            loop.quit()

    sender.call_async(dest, PATH, IFACE, 'Digest', 'ay', (dbus.ByteArray(body(100 + i, s)),), ok, err,
                      byte_arrays=True)


for i, s in enumerate(sizes):
    call(i, s)
GLib.timeout_add(20000, loop.quit)
loop.run()
want = {i: (hashlib.sha256(body(100 + i, s)).hexdigest(), s) for i, s in enumerate(sizes)}
tap(replies == want, 'pipelined large calls reach the callee intact',
    'wrong: %s' % [i for i in want if replies.get(i) != want[i]])
print('1..%d' % _n)
