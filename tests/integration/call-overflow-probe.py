# call-overflow-probe.py SOCKET - more calls waiting for replies than
# kdbus.ko keeps trackers for (128 per connection), with
# max_replies_per_connection above that (test-call-overflow.sh): they all
# get their replies; unanswered, they all get NoReply when reply_timeout
# passes or when the callee leaves; an unrequested reply that the policy
# refuses is still refused.  Every line "TITLE: RESULT" must read the
# same on busbridged (in-process core or kernel bus) and dbus-daemon.
import sys
import time

import dbuswire as W

path = sys.argv[1]
N = 300


def say(title, result):
    print('%s: %s' % (title, result))
    sys.stdout.flush()


def calls(caller, callee, n):
    serials = []
    for _ in range(n):
        s = caller.next_serial()
        caller.send(W.call(s, callee.unique, '/', 'com.example.Overflow', 'Hold'))
        serials.append(s)
    return serials


def take_calls(callee, n):
    got = []
    while len(got) < n:
        m = callee.recv_msg(30)
        if m[0] == W.METHOD_CALL and m[3].get(W.F_MEMBER) == 'Hold':
            got.append(m)
    return got


def answers(caller, serials, timeout):
    """what came back for serials, counted by kind"""
    want = set(serials)
    kinds = {}
    end = time.monotonic() + timeout
    while want and time.monotonic() < end:
        try:
            m = caller.recv_msg(max(0.1, end - time.monotonic()))
        except OSError:
            break
        rs = m[3].get(W.F_REPLY_SERIAL)
        if m[0] in (W.METHOD_RETURN, W.ERROR) and rs in want:
            want.discard(rs)
            k = 'reply' if m[0] == W.METHOD_RETURN else '%s (%s)' % (m[3].get(W.F_ERROR_NAME), W.first_string(m[4]))
            kinds[k] = kinds.get(k, 0) + 1
    res = ', '.join('%d %s' % (v, k) for k, v in sorted(kinds.items()))
    return res + (', %d without answer' % len(want) if want else '')


caller = W.Conn(path)
callee = W.Conn(path)

# answered: every call gets its reply
serials = calls(caller, callee, N)
for m in take_calls(callee, N):
    callee.send(W.marshal(W.METHOD_RETURN, callee.next_serial(),
                          [(W.F_REPLY_SERIAL, 'u', m[2]), (W.F_DESTINATION, 's', caller.unique)]))
say('%d calls answered' % N, answers(caller, serials, 60))

# a reply nobody asked for (the serial of a call already answered) is
# refused by the test configuration's policy, as before
callee.send(W.marshal(W.METHOD_RETURN, callee.next_serial(),
                      [(W.F_REPLY_SERIAL, 'u', serials[-1]), (W.F_DESTINATION, 's', caller.unique)]))
caller.call_driver('GetId')
say('a reply to an answered call', 'reaches the caller' if any(
    m[3].get(W.F_REPLY_SERIAL) == serials[-1] for m in caller.drain(0.5)) else 'refused')

# unanswered: reply_timeout (3 s) ends them all
serials = calls(caller, callee, N)
take_calls(callee, N)
say('%d calls unanswered' % N, answers(caller, serials, 30))

# the callee leaves: NoReply for each
serials = calls(caller, callee, N)
take_calls(callee, N)
callee.close()
say('%d calls, the callee leaves' % N, answers(caller, serials, 30))
caller.close()
