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
say('the other takes com.example.Queued', request(other, 'com.example.Queued'))
say('one', request(c, 'com.example.One'))
say('two', request(c, 'com.example.Two'))
say('queued behind the other', request(c, 'com.example.Queued'))
say('at the limit, two again', request(c, 'com.example.Two'))
say('at the limit, the queued name again', request(c, 'com.example.Queued'))
say('at the limit, a new name', request(c, 'com.example.Three'))
say('at the limit, a name the policy refuses', request(c, 'com.example.Denied'))
say('release two', release(c, 'com.example.Two'))
say('below the limit, three', request(c, 'com.example.Three'))
say('the other leaves the queued name', release(other, 'com.example.Queued'))
say('at the limit again, the name it now owns', request(c, 'com.example.Queued'))
say('release the queued name', release(c, 'com.example.Queued'))
say('below the limit, two with DO_NOT_QUEUE', request(c, 'com.example.Two', 4))
other.close()
c.close()
