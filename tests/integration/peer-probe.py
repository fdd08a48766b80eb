# peer-probe.py SOCKET - messages of org.freedesktop.DBus.Peer without a
# destination (test-peer-diff.sh): every type, member and flag set, from a
# registered connection, one before Hello and a monitor; what the sender
# gets back, and whether a subscriber to every signal (and eavesdropper)
# or a monitor sees anything.  Every line "TITLE: RESULT" must read the
# same on busbridged and dbus-daemon, whose end of each connection
# (libdbus's peer filter) answers these messages before the bus sees them.
import socket
import sys

import dbuswire as W

path = sys.argv[1]
PEER = 'org.freedesktop.DBus.Peer'
TYPES = ((W.METHOD_CALL, 'call'), (W.SIGNAL, 'signal'), (W.METHOD_RETURN, 'return'), (W.ERROR, 'error'))
FLAGS = ((0, ''), (W.NO_REPLY_EXPECTED, ' NO_REPLY_EXPECTED'), (W.NO_AUTO_START, ' NO_AUTO_START'))


def say(title, result):
    print('%s: %s' % (title, result))
    sys.stdout.flush()


def describe(m, own=None):
    typ, flags, serial, f, body = m
    out = {W.METHOD_CALL: 'call', W.METHOD_RETURN: 'return', W.ERROR: 'error', W.SIGNAL: 'signal'}[typ]
    if f.get(W.F_ERROR_NAME):
        out += ' ' + f[W.F_ERROR_NAME].rsplit('.', 1)[-1]
    if f.get(W.F_MEMBER):
        out += ' ' + f[W.F_MEMBER]
    out += ' from %s' % ('the bus' if f.get(W.F_SENDER) == 'org.freedesktop.DBus' else
                         'nobody' if not f.get(W.F_SENDER) else 'a client')
    if f.get(W.F_DESTINATION):
        out += ' to %s' % ('itself' if f[W.F_DESTINATION] == own else 'another')
    if f.get(W.F_SIGNATURE) == 's':
        s = W.first_string(body)
        out += ' "%s"' % ('<machine id>' if len(s) == 32 and s.isalnum() else s.strip())
    return out


def got(c, own=None):
    """what reached c before the reply to a GetId of its own; 'closed'"""
    s = c.next_serial()
    out = []
    try:
        c.send(W.driver_call(s, 'GetId'))
        while True:
            m = c.recv_msg(5)
            if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == s:
                break
            # (others' GetId calls and their replies, eavesdropped)
            if m[3].get(W.F_MEMBER) == 'GetId' or (m[0] == W.METHOD_RETURN and
                                                    m[3].get(W.F_SENDER) == 'org.freedesktop.DBus'):
                continue
            out.append(describe(m, own))
    except (EOFError, OSError):
        out.append('closed')
    return '; '.join(out) or 'nothing'


def monitor_saw(mon):
    """what the monitor saw but the probe's own GetId calls and replies"""
    out = []
    for m in mon.drain(0.15):
        f = m[3]
        if f.get(W.F_MEMBER) == 'GetId' or (m[0] == W.METHOD_RETURN and f.get(W.F_SENDER) == 'org.freedesktop.DBus'):
            continue
        out.append(describe(m))
    return '; '.join(out) or 'nothing'


def become_monitor(c):
    s = c.next_serial()
    c.send(W.call(s, 'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.Monitoring',
                  'BecomeMonitor', 'asu', b'\0' * 8))
    assert c.wait_reply(s)[0] == W.METHOD_RETURN
    c.drain(0.2)


def hello_less(path):
    """a connection that authenticated and never says Hello"""
    return W.Conn(path, hello=False, auth=True)


def msg(c, typ, member, flags=0, iface=PEER, sender=None):
    f = {W.F_PATH: '/', W.F_INTERFACE: iface}
    if member:
        f[W.F_MEMBER] = member
    if typ == W.ERROR:
        f[W.F_ERROR_NAME] = 'com.example.Error.Failed'
    if typ in (W.METHOD_RETURN, W.ERROR):
        f[W.F_REPLY_SERIAL] = 4242
    if sender:
        f[W.F_SENDER] = sender
    return W.marshal(typ, c.next_serial(), f, b'', None, flags)


a = W.Conn(path)
sub = W.Conn(path)
sub.call_driver('AddMatch', 's', W.body_s("type='signal'"))
sub.call_driver('AddMatch', 's', W.body_s("eavesdrop='true'"))
mon = W.Conn(path)
become_monitor(mon)

for typ, tname in TYPES:
    for member in ('Ping', 'GetMachineId', 'Other'):
        for flags, fname in FLAGS:
            a.send(msg(a, typ, member, flags))
            title = 'Peer %s %s%s' % (tname, member, fname)
            say(title, got(a, a.unique))
            say(title + ', others', 'subscriber %s, monitor %s' % (got(sub), monitor_saw(mon)))

a.send(msg(a, W.METHOD_CALL, 'Ping', sender=sub.unique))
say('Peer call Ping with a forged sender', got(a, a.unique))
a.send(msg(a, W.SIGNAL, 'Other', sender=sub.unique))
say('Peer signal Other with a forged sender', got(a, a.unique))
a.send(msg(a, W.METHOD_CALL, 'Introspect', iface='org.freedesktop.DBus.Introspectable', sender=sub.unique))
say('Introspect with a forged sender', got(a, a.unique).replace('\n', ' ')[:60])

pre = hello_less(path)
for typ, tname in TYPES:
    pre.send(msg(pre, typ, 'Ping'))
    say('before Hello, Peer %s Ping' % tname, got(pre))
say('before Hello, others', 'subscriber %s, monitor %s' % (got(sub), monitor_saw(mon)))

mon2 = W.Conn(path)
become_monitor(mon2)
for typ, tname in ((W.METHOD_CALL, 'call'), (W.SIGNAL, 'signal')):
    for member in ('Ping', 'Other'):
        mon2.send(msg(mon2, typ, member))
        try:
            say('a monitor sends Peer %s %s' % (tname, member), describe(mon2.recv_msg(5)))
        except (EOFError, OSError, socket.timeout) as e:
            say('a monitor sends Peer %s %s' % (tname, member), 'closed' if isinstance(e, EOFError) else type(e).__name__)
mon2.send(msg(mon2, W.SIGNAL, 'Other', iface='com.example.NotPeer'))
say('a monitor sends another signal', 'closed' if mon2.closed_within(3) else 'kept')
