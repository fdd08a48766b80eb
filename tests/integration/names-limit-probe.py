# names-limit-probe.py SOCKET - RequestName against max_names_per_connection
# (4, the unique name counted) (test-names-limit.sh).  dbus-daemon refuses
# every RequestName of a connection at the limit, even of a name it owns
# or waits for already, and the policy's refusal comes first.  Every line
# "TITLE: RESULT" must read the same on busbridged and dbus-daemon.
import sys

import dbuswire as W

path = sys.argv[1]


def say(title, result):
    print('%s: %s' % (title, result))
    sys.stdout.flush()


def answer(m):
    if m[0] == W.ERROR:
        return m[3].get(W.F_ERROR_NAME)
    return 'reply %s' % W.unmarshal_body(m[3].get(W.F_SIGNATURE, ''), m[4])


def request(c, name, flags=0):
    return answer(c.call_driver('RequestName', 'su', W.marshal_body('su', [name, flags])))


def release(c, name):
    return answer(c.call_driver('ReleaseName', 's', W.marshal_body('s', [name])))


c = W.Conn(path)
other = W.Conn(path)
STEPS = [
    ('the other takes com.example.Queued', other, request, 'com.example.Queued'),
    ('one', c, request, 'com.example.One'),
    ('two', c, request, 'com.example.Two'),
    ('queued behind the other', c, request, 'com.example.Queued'),
    ('at the limit, two again', c, request, 'com.example.Two'),
    ('at the limit, the queued name again', c, request, 'com.example.Queued'),
    ('at the limit, a new name', c, request, 'com.example.Three'),
    ('at the limit, a name the policy refuses', c, request, 'com.example.Denied'),
    ('release two', c, release, 'com.example.Two'),
    ('below the limit, three', c, request, 'com.example.Three'),
    ('the other leaves the queued name', other, release, 'com.example.Queued'),
    ('at the limit again, the name it now owns', c, request, 'com.example.Queued'),
    ('release the queued name', c, release, 'com.example.Queued'),
]
for title, conn, action, name in STEPS:
    say(title, action(conn, name))
say('below the limit, two with DO_NOT_QUEUE', request(c, 'com.example.Two', 4))
other.close()
c.close()
