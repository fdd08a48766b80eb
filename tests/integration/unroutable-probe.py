# unroutable-probe.py ADDRESS PART[,PART...]: what the bus does with messages it
# cannot simply deliver, one line "TITLE: what each connection received"
# per case (run by test-unroutable.sh against busbridged and dbus-daemon).
#   names    every message type, with and without NO_REPLY_EXPECTED and
#            NO_AUTO_START, to a well-known name nobody holds and to a
#            unique name that does not exist; a monitor watches
#   replies  replies nobody asked for, a reply that was asked for, and the
#            same reply again (the configuration decides)
#   activation  every message type to a name only a service file provides
#            (the service exits at once), with and without NO_AUTO_START
#   fds      signals and calls with fds to receivers that take fds and to
#            one that does not, an eavesdropper, monitors, UNIX_FD values beyond
#            UNIX_FDS, and a message announcing more fds than it carries
import os
import re
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import dbuswire as W  # noqa: E402

path = W.parse_address(sys.argv[1])


def FdConn(fds=True):
    """a connection that may negotiate fd passing and counts the fds it gets"""
    return W.Conn(path, unix_fd=fds, keep_fds=True)


names = {}
sync_serials = set()     # (unique name, serial) of the calls of sync()


def is_sync(m):
    """a call of sync() or its reply (which monitors see)"""
    f = m[3]
    if m[0] == W.METHOD_CALL:
        return (f.get(W.F_SENDER), m[2]) in sync_serials and f.get(W.F_MEMBER) == 'GetId'
    return m[0] in (W.METHOD_RETURN, W.ERROR) and f.get(W.F_SENDER) == W.DRIVER[0] and \
        (f.get(W.F_DESTINATION), f.get(W.F_REPLY_SERIAL)) in sync_serials


def describe(m):
    typ, flags, serial, f, body = m
    kind = {W.METHOD_CALL: 'call', W.METHOD_RETURN: 'return', W.ERROR: 'error', W.SIGNAL: 'signal'}[typ]
    what = f.get(W.F_MEMBER) or f.get(W.F_ERROR_NAME) or ''
    arg = W.first_string(body) if body and f.get(W.F_SIGNATURE, '').startswith('s') else ''
    # (each run has its own python process)
    arg = re.sub(r'pid=\d+', 'pid=P', arg or '')
    s = '%s %s flags=%d reply_serial=%s sender=%s dest=%s unix_fds=%s arg=%s' % (
        kind, what, flags, f.get(W.F_REPLY_SERIAL), f.get(W.F_SENDER), f.get(W.F_DESTINATION),
        f.get(W.F_UNIX_FDS), arg)
    for k, v in names.items():
        if v:
            s = s.replace(v, k)
    return s


def sync(c):
    """what @c received until the bus answered a call sent now: all that
    the bus did with what @c sent before"""
    s = c.next_serial()
    sync_serials.add((c.unique, s))
    c.send(W.driver_call(s, 'GetId'))
    out = []
    while True:
        m = c.recv_msg(10)
        if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == s \
                and m[3].get(W.F_SENDER) == W.DRIVER[0]:
            return out
        out.append(m)


def until_sync_seen(mon, c):
    """what monitor @mon sees up to the reply to @c's last sync()"""
    last = max(x for x in sync_serials if x[0] == c.unique)
    out = []
    while True:
        m = mon.recv_msg(10)
        out.append(m)
        f = m[3]
        if m[0] in (W.METHOD_RETURN, W.ERROR) and f.get(W.F_SENDER) == W.DRIVER[0] and \
                (f.get(W.F_DESTINATION), f.get(W.F_REPLY_SERIAL)) == last:
            return out + mon.drain(0.01)


def sort_error_runs(lines):
    """the bus's errors one after the other in name order: dbus-daemon shows
    monitors those of a broadcast's receivers in the order of its match
    rule buckets, busbridged in connection order (doc/deviations.md)"""
    out, run = [], []
    for x in lines + [None]:
        if x is not None and x.startswith('error ') and 'sender=org.freedesktop.DBus ' in x:
            run.append(x)
            continue
        out += sorted(run)
        run = []
        if x is not None:
            out.append(x)
    return out


def show(title, conns):
    got = []
    first_closed = False
    for i, (who, c) in enumerate(conns):
        try:
            # the bus handles a connection's messages in order: what the
            # case caused reached the others before their own sync() ends
            # (a monitor cannot call: it waits); the first connection sent
            # the messages of the case
            if who.startswith('monitor'):
                # it sees the first connection's sync() last
                msgs = c.drain(0.2) if first_closed else until_sync_seen(c, conns[0][1])
            else:
                msgs = sync(c) + c.drain(0.02 if i == 0 else 0.05)
        except (EOFError, ConnectionError):
            got.append('%s closed' % who)
            first_closed = first_closed or i == 0
            continue
        lines = [describe(m) for m in msgs if not is_sync(m)]
        if who.startswith('monitor'):
            lines = sort_error_runs(lines)
        got += ['%s got %s' % (who, x) for x in lines]
        n = c.take_fds() if c.got_fds is not None else 0
        if n:
            got.append('%s got %d fds' % (who, n))
    print('%s, %s: %s' % (current, title, ' | '.join(got) if got else '(nothing)'))


def become_monitor(fds=None):
    mon = W.Conn(path) if fds is None else FdConn(fds)
    s = mon.next_serial()
    mon.send(W.call(s, W.DRIVER[0], W.DRIVER[1], 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu',
                    bytes(8)))
    mon.wait_reply(s)
    mon.drain(0.05)
    return mon


def run(part):
    global names, current
    names = {}
    current = part
    if part == 'names':
        mon = become_monitor()
        a = W.Conn(path)
        sync(a)
        mon.drain(0.05)
        names[':A'] = a.unique
        conns = (('A', a), ('monitor', mon))
        for dest in ('no.such.Name', ':1.9999'):
            for typ in (W.METHOD_CALL, W.SIGNAL, W.METHOD_RETURN, W.ERROR):
                for flags, fname in ((0, ''), (1, ' NO_REPLY_EXPECTED'), (2, ' NO_AUTO_START'), (3, ' both flags')):
                    f = {W.F_DESTINATION: dest}
                    if typ in (W.METHOD_CALL, W.SIGNAL):
                        f.update({W.F_PATH: '/x', W.F_INTERFACE: 'x.y', W.F_MEMBER: 'M'})
                    else:
                        f[W.F_REPLY_SERIAL] = 77
                    if typ == W.ERROR:
                        f[W.F_ERROR_NAME] = 'x.y.Err'
                    a.send(W.marshal(typ, a.next_serial(), f, flags=flags))
                    show('type %d%s to %s' % (typ, fname, dest), conns)

    elif part == 'activation':
        a = W.Conn(path)
        sync(a)
        names[':A'] = a.unique
        for typ in (W.METHOD_CALL, W.SIGNAL, W.METHOD_RETURN, W.ERROR):
            for flags, fname in ((0, ''), (1, ' NO_REPLY_EXPECTED'), (2, ' NO_AUTO_START')):
                f = {W.F_DESTINATION: 'org.example.Unroutable.Exits'}
                if typ in (W.METHOD_CALL, W.SIGNAL):
                    f.update({W.F_PATH: '/x', W.F_INTERFACE: 'x.y', W.F_MEMBER: 'M'})
                else:
                    f[W.F_REPLY_SERIAL] = 77
                if typ == W.ERROR:
                    f[W.F_ERROR_NAME] = 'x.y.Err'
                a.send(W.marshal(typ, a.next_serial(), f, flags=flags))
                # the activation's error comes once the service exited
                got = []
                try:
                    while True:
                        m = a.recv_msg(5)
                        if m[0] == W.SIGNAL:
                            continue
                        got.append('A got ' + describe(m))
                        break
                except socket.timeout:
                    pass
                got += ['A got ' + describe(m) for m in a.drain(0.1) if m[0] != W.SIGNAL]
                print('%s, type %d%s to an activatable name: %s' % (current, typ, fname, ' | '.join(got) or '(nothing)'))

    elif part == 'replies':
        a = W.Conn(path)
        b = W.Conn(path)
        sync(a)
        sync(b)
        names.update({':A': a.unique, ':B': b.unique})
        conns = (('A', a), ('B', b))
        for typ in (W.METHOD_RETURN, W.ERROR):
            f = {W.F_DESTINATION: b.unique, W.F_REPLY_SERIAL: 77}
            if typ == W.ERROR:
                f[W.F_ERROR_NAME] = 'x.y.Err'
            a.send(W.marshal(typ, a.next_serial(), f))
            show('unrequested %s' % ('method return' if typ == W.METHOD_RETURN else 'error'), conns)
            # to the driver, which never calls anyone: unrequested,
            # refused where the send rules refuse those; and without a
            # destination: routed to nobody, neither refused nor answered
            f[W.F_DESTINATION] = 'org.freedesktop.DBus'
            a.send(W.marshal(typ, a.next_serial(), f))
            show('unrequested %s to the driver' % ('method return' if typ == W.METHOD_RETURN else 'error'), conns)
            del f[W.F_DESTINATION]
            a.send(W.marshal(typ, a.next_serial(), f))
            show('%s without a destination' % ('method return' if typ == W.METHOD_RETURN else 'error'), conns)
        s = b.next_serial()
        b.send(W.call(s, a.unique, '/x', 'x.y', 'M'))
        show('B calls A', conns)
        a.send(W.marshal(W.METHOD_RETURN, a.next_serial(), {W.F_DESTINATION: b.unique, W.F_REPLY_SERIAL: s}))
        show('A replies', conns)
        a.send(W.marshal(W.METHOD_RETURN, a.next_serial(), {W.F_DESTINATION: b.unique, W.F_REPLY_SERIAL: s}))
        show('A replies again', conns)
        # with a monitor watching
        mon = become_monitor()
        conns = (('A', a), ('B', b), ('monitor', mon))
        a.send(W.marshal(W.ERROR, a.next_serial(), {W.F_DESTINATION: b.unique, W.F_REPLY_SERIAL: 78,
                                                     W.F_ERROR_NAME: 'x.y.Err'}))
        show('unrequested error, monitored', conns)

    elif part == 'fds':
        # monitors that take fds and that do not see everything, and
        # what the bus could not deliver
        m1, m2 = become_monitor(True), become_monitor(False)
        # E and F eavesdrop, F takes no fds
        a, b, c, e, g = FdConn(), FdConn(), FdConn(fds=False), FdConn(), FdConn(fds=False)
        conns = (('A', a), ('B', b), ('C', c), ('E', e), ('F', g), ('monitor with fds', m1),
                 ('monitor without fds', m2))
        names.update({':A': a.unique, ':B': b.unique, ':C': c.unique, ':E': e.unique, ':F': g.unique})
        for x in (b, c):
            x.call_driver('AddMatch', 's', W.body_s("type='signal',interface='x.y'"))
        for x in (e, g):
            x.call_driver('AddMatch', 's', W.body_s("eavesdrop=true,interface='x.y'"))
        for who, x in conns:
            if who.startswith('monitor'):
                x.drain(0.1)
            else:
                sync(x)
            x.take_fds()
        r, w = os.pipe()
        sig = {W.F_PATH: '/x', W.F_INTERFACE: 'x.y', W.F_MEMBER: 'S'}

        def send(title, typ, fields, index, unix_fds, fds, flags=0, to=None):
            f = [(k, W.FIELD_SIG.get(k, 's'), v) for k, v in fields.items()]
            if unix_fds is not None:
                f.append((W.F_UNIX_FDS, 'u', unix_fds))
            a.send_fds(W.marshal(typ, a.next_serial(), f, struct.pack('<I', index), 'h', flags=flags), fds)
            show(title, to or conns)

        send('broadcast signal with an fd', W.SIGNAL, sig, 0, 1, [r])
        send('broadcast signal with an fd, NO_REPLY_EXPECTED', W.SIGNAL, sig, 0, 1, [r], flags=1)
        send('broadcast signal with two fds', W.SIGNAL, sig, 1, 2, [r, w])
        send('unicast signal with an fd to B', W.SIGNAL, {**sig, W.F_DESTINATION: b.unique}, 0, 1, [r])
        send('unicast signal with an fd to C (no fds)', W.SIGNAL, {**sig, W.F_DESTINATION: c.unique}, 0, 1, [r])
        send('method call with an fd to C (no fds)', W.METHOD_CALL, {**sig, W.F_DESTINATION: c.unique}, 0, 1, [r])
        send('method call with an fd to B', W.METHOD_CALL, {**sig, W.F_DESTINATION: b.unique}, 0, 1, [r])
        send('method call with h=5 and one fd to B', W.METHOD_CALL, {**sig, W.F_DESTINATION: b.unique}, 5, 1, [r])
        send('method call with h=0 and no fds to B', W.METHOD_CALL, {**sig, W.F_DESTINATION: b.unique}, 0, None, [])
        send('broadcast signal with h=3 and no fds', W.SIGNAL, sig, 3, None, [])
        # (not shown to monitors: what they see of a disconnection is
        # not this test's)
        send('method call announcing two fds with one', W.METHOD_CALL, {**sig, W.F_DESTINATION: b.unique}, 0, 2, [r],
             to=conns[:5])
        os.close(r)
        os.close(w)


for p in sys.argv[2].split(','):
    run(p)
