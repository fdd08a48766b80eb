# burst-probe.py SOCKET - a burst of messages, written at once, to
# receivers that read only afterwards (test-burst.sh): on kdbus.ko a
# receiver's queue takes at most 256 messages of one user, so the bus must
# empty the queues while it dispatches the burst.  Every line "TITLE:
# RESULT" must read the same on busbridged and dbus-daemon (which keeps
# everything up to max_outgoing_bytes).
import sys

import dbuswire as W

path = sys.argv[1]
N = 1500
IFACE = 'com.example.Burst'


def say(title, result):
    print('%s: %s' % (title, result))
    sys.stdout.flush()


def count(c, member):
    n = 0
    s = c.next_serial()
    c.send(W.driver_call(s, 'GetId'))
    while True:
        m = c.recv_msg(60)
        if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == s:
            return n
        if m[3].get(W.F_MEMBER) == member:
            n += 1


sender = W.Conn(path)
subs = [W.Conn(path) for _ in range(3)]
for s in subs:
    s.call_driver('AddMatch', 's', W.marshal_body('s', ["type='signal',interface='%s'" % IFACE]))
target = subs[0]

burst = b''.join(W.marshal(W.SIGNAL, sender.next_serial(),
                           [(W.F_PATH, 'o', '/'), (W.F_INTERFACE, 's', IFACE), (W.F_MEMBER, 's', 'Tick')])
                 for _ in range(N))
sender.send(burst)
sender.call_driver('GetId')	# routed once this returns
for i, s in enumerate(subs):
    say('subscriber %d got the broadcasts' % i, count(s, 'Tick'))

burst = b''.join(W.marshal(W.METHOD_CALL, sender.next_serial(),
                           [(W.F_PATH, 'o', '/'), (W.F_INTERFACE, 's', IFACE), (W.F_MEMBER, 's', 'Poke'),
                            (W.F_DESTINATION, 's', target.unique)], flags=W.NO_REPLY_EXPECTED)
                 for _ in range(N))
sender.send(burst)
sender.call_driver('GetId')
say('the target got the calls', count(target, 'Poke'))
say('the sender was told nothing', len([m for m in sender.drain(0.5) if m[0] == W.ERROR]))
