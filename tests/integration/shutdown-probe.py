# shutdown-probe.py SOCKET DAEMON_PID - what connections see when the bus
# gets SIGTERM (test-shutdown-diff.sh).  dbus-daemon closes its
# connections one at a time, those that have not said Hello first, then
# in the order of their Hello; those still connected see what each
# departure causes.  Connections: a (two names, a call of b's waits for
# its answer), b (one name), c (queued for a's first name), w (watches every
# signal), m (a monitor), p (no Hello), e (an eavesdropper), z (the last,
# no rules).  Every line "TITLE: RESULT" must read the same on busbridged
# and dbus-daemon.
import os
import signal
import socket
import sys
import time

import dbuswire as W

path, pid = sys.argv[1], int(sys.argv[2])
labels = {}


def request(c, name):
    b = W.Buf()
    b.string(name)
    b.u32(0)
    return c.call_driver('RequestName', 'su', bytes(b.b))


def describe(m):
    return W.brief(m, labels)


conns = {}
for label in 'abcw':
    conns[label] = W.Conn(path)
request(conns['a'], 'com.example.Shutdown.A')
request(conns['a'], 'com.example.Shutdown.A2')
request(conns['b'], 'com.example.Shutdown.B')
request(conns['c'], 'com.example.Shutdown.A')
conns['w'].call_driver('AddMatch', 's', W.body_s("type='signal'"))
m = W.Conn(path)
s = m.next_serial()
m.send(W.call(s, 'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.Monitoring',
              'BecomeMonitor', 'asu', b'\0' * 8))
m.wait_reply(s)
conns['m'] = m
conns['p'] = W.Conn(path, hello=False, auth=True)
conns['e'] = W.Conn(path)
conns['e'].call_driver('AddMatch', 's', W.body_s("eavesdrop='true',type='signal'"))
conns['z'] = W.Conn(path)
for label, c in conns.items():
    if c.unique:
        labels[c.unique] = label
# b calls a, which will not answer
b = conns['b']
b.send(W.call(b.next_serial(), conns['a'].unique, '/', 'com.example.I', 'Wait'))
for label, c in conns.items():
    if c.unique and label != 'm':   # (a monitor that sends is closed)
        c.call_driver('GetId')
time.sleep(0.2)
for c in conns.values():
    c.drain(0.1)

os.kill(pid, signal.SIGTERM)
for label, c in conns.items():
    seen = []
    try:
        while True:
            seen.append(describe(c.recv_msg(5)))
    except EOFError:
        seen.append('closed')
    except (socket.timeout, OSError) as e:
        seen.append(type(e).__name__)
    print('%s: %s' % (label, '; '.join(seen)))
