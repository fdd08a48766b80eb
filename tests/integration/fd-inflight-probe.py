# fd-inflight-probe.py SOCKET LIMIT - the bus cannot pass an fd to a
# receiver (test-fd-inflight.sh).  The bus runs as an unprivileged user
# whose RLIMIT_NOFILE is LIMIT: once more fds than that sit unread in
# sockets the bus wrote to, the kernel refuses to pass it any other
# (sendmsg() fails with ETOOMANYREFS).  Sixteen connections that never
# read park a little more than LIMIT fds; then a sender gives the victim
# fds by unicast signal, method call and broadcast, and messages without.
# Every line "TITLE: RESULT" must read the same on busbridged and
# dbus-daemon (which drops the message and keeps the connection).
import os
import socket
import sys

import dbuswire as W

path, limit = sys.argv[1], int(sys.argv[2])
PARKERS = 16
IFACE = 'com.example.Inflight'
NULL = os.open('/dev/null', os.O_RDONLY)


def say(title, result):
    print('%s: %s' % (title, result))
    sys.stdout.flush()


def msg(c, typ, dest, member, n_fds, flags=0):
    f = {W.F_PATH: '/', W.F_INTERFACE: IFACE, W.F_MEMBER: member}
    if dest:
        f[W.F_DESTINATION] = dest
    if n_fds:
        f[W.F_UNIX_FDS] = n_fds
    body = W.Buf()
    for i in range(n_fds):
        body.u32(i)
    return W.marshal(typ, c.next_serial(), f, bytes(body.b), 'h' * n_fds if n_fds else None, flags)


def send(c, typ, dest, member, n_fds, flags=0):
    c.send_fds(msg(c, typ, dest, member, n_fds, flags), [NULL] * n_fds)
    # the bus has routed it (and written what it could) once this returns
    c.call_driver('GetId')


def received(c):
    """the members of our interface that reached c before the reply to a
    GetId of its own, and the fds with them; 'closed' if the bus hung up"""
    s = c.next_serial()
    try:
        c.send(W.driver_call(s, 'GetId'))
        got = []
        while True:
            m = c.recv_msg(10)
            if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == s:
                break
            if m[3].get(W.F_INTERFACE) == IFACE:
                got.append('%s(%d fds)' % (m[3].get(W.F_MEMBER), m[3].get(W.F_UNIX_FDS, 0)))
        n = c.take_fds()
        return '%s, %d fds' % (' '.join(got) or 'nothing', n)
    except (EOFError, OSError) as e:
        return 'closed (%s)' % type(e).__name__


victim = W.Conn(path, unix_fd=True, keep_fds=True)
victim.call_driver('AddMatch', 's', W.body_s("type='signal',interface='%s'" % IFACE))
b = W.Buf()
b.string('com.example.Victim')
b.u32(0)
victim.call_driver('RequestName', 'su', bytes(b.b))
sender = W.Conn(path, unix_fd=True)
watcher = W.Conn(path)
send(sender, W.SIGNAL, victim.unique, 'Before', 1)
say('before: an fd', received(victim))

# the parkers read nothing after Hello; their fds stay in flight
parkers = [W.Conn(path, unix_fd=True) for _ in range(PARKERS)]
per = limit // PARKERS + 1
# one message each, of at most 16 fds (max_message_unix_fds): the last
# one is sent while no more than LIMIT are in flight, and makes it more
assert per <= 16
for p in parkers:
    send(sender, W.SIGNAL, p.unique, 'Park', per)
say('parked', '%d connections, %d fds each (RLIMIT_NOFILE %d)' % (PARKERS, per, limit))

send(sender, W.SIGNAL, victim.unique, 'Unicast', 1)
say('a unicast signal with an fd', received(victim))
send(sender, W.SIGNAL, victim.unique, 'Plain', 0)
say('then one without fds', received(victim))
send(sender, W.METHOD_CALL, 'com.example.Victim', 'Call', 2, W.NO_REPLY_EXPECTED)
say('a call with two fds to its name', received(victim))
send(sender, W.SIGNAL, None, 'Broadcast', 1)
say('a broadcast with an fd', received(victim))
send(sender, W.SIGNAL, victim.unique, 'Mixed', 1)
send(sender, W.SIGNAL, victim.unique, 'After', 0)
say('an fd, then a message without, in a row', received(victim))
owner = watcher.call_driver('GetNameOwner', 's', W.body_s('com.example.Victim'))
say('the victim still owns its name', 'yes' if owner[0] == W.METHOD_RETURN and
    W.first_string(owner[4]) == victim.unique else 'no')
alive = sum(1 for p in parkers
            if watcher.call_driver('GetNameOwner', 's', W.body_s(p.unique))[0] == W.METHOD_RETURN)
say('parkers still connected', '%d of %d' % (alive, PARKERS))

for p in parkers:
    p.close()
# the bus's fds left the parkers' sockets
watcher.call_driver('GetId')
send(sender, W.SIGNAL, victim.unique, 'Later', 1)
say('once the parkers are gone, an fd', received(victim))
