# write-shut-probe.py SOCKET - a connection whose peer shut its socket for
# reading (shutdown(SHUT_RD): everything written to it fails with EPIPE),
# as dbus-daemon treats it (test-write-shut-diff.sh): the connection
# stays, and everything it sends is still taken, before Hello and after.
# Connections: s (shut for reading right after BEGIN), w (watches every
# signal and calls s), m (a monitor).  Every line "TITLE: RESULT" must read
# the same on busbridged and dbus-daemon.
import socket
import sys
import time

import dbuswire as W

path = sys.argv[1]
labels = {}


def describe(m):
    f = m[3]
    out = W.brief(m, labels)
    for code, what in ((W.F_SENDER, 'from'), (W.F_DESTINATION, 'to')):
        if f.get(code):
            out += ' %s=%s' % (what, labels.get(f[code], f[code]))
    return out


w = W.Conn(path)
labels[w.unique] = 'w'
w.call_driver('AddMatch', 's', W.body_s("type='signal'"))
m = W.Conn(path)
labels[m.unique] = 'm'
serial = m.next_serial()
m.send(W.call(serial, 'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.Monitoring',
              'BecomeMonitor', 'asu', b'\0' * 8))
m.wait_reply(serial)
m.drain(0.3)

s = W.Conn(path, hello=False, auth=True)
s.s.shutdown(socket.SHUT_RD)
serial = 100
steps = []


def send(title, data):
    s.send(data)
    time.sleep(0.3)
    steps.append(title)


# before Hello: answered (with an error) though the answer cannot be written
send('getid-1', W.driver_call(1, 'GetId'))
send('getid-2', W.driver_call(2, 'GetId'))
send('ping-undirected', W.call(3, None, '/', 'org.freedesktop.DBus.Peer', 'Ping'))
send('hello', W.driver_call(4, 'Hello'))
# the bus gave s the next unique name: the one after w's and m's
names = w.call_driver('ListNames')
unique = sorted((n for n in W.unmarshal_body('as', names[4])[0] if n.startswith(':') and n not in labels),
                key=lambda n: int(n.split('.')[1]))
if unique:
    labels[unique[-1]] = 's'
send('request-name', W.driver_call(5, 'RequestName', 'su', W.marshal_body('su', ['com.example.Shut', 0])))
send('signal', W.message(W.SIGNAL, 6, {W.F_PATH: '/com/example/Shut', W.F_INTERFACE: 'com.example.Shut',
                                         W.F_MEMBER: 'Tick'}, 's', ('tick',)))
# a call to s: delivered (nobody reads it) and never answered
serial = w.next_serial()
w.send(W.call(serial, 'com.example.Shut', '/com/example/Shut', 'com.example.Shut', 'Poke'))
time.sleep(0.3)
owner = w.call_driver('GetNameOwner', 's', W.body_s('com.example.Shut'))
print('w owner of com.example.Shut: %s' % describe(owner))
for i, line in enumerate(describe(x) for x in w.drain(0.5)):
    print('w seen %d: %s' % (i, line))
s.s.close()
time.sleep(0.5)
for i, line in enumerate(describe(x) for x in w.drain(0.5)):
    print('w seen after s closed %d: %s' % (i, line))
for i, line in enumerate(describe(x) for x in m.drain(0.5)):
    print('m seen %d: %s' % (i, line))
print('steps: %s' % ' '.join(steps))
