# incoming-limits-probe.py SOCKET DAEMON_PID - the floods of
# test-incoming-limits.sh.  The bus runs with max_incoming_bytes 1000000
# and max_incoming_unix_fds 16.  A sender writes non-blocking to a
# recipient that does not read, until the bus stops reading it; then the
# recipient reads everything.  Lines "TITLE: RESULT" on stdout must read
# the same on busbridged and dbus-daemon; "FIG NAME VALUE" lines on stderr
# are the figures test-incoming-limits.sh compares and reports.
import fcntl
import os
import select
import socket
import struct
import sys
import termios
import time

import dbuswire as W

path, pid = sys.argv[1], int(sys.argv[2])
LIMIT_BYTES = 1000000
LIMIT_FDS = 16
NULL = os.open('/dev/null', os.O_RDONLY)
SIOCOUTQ = termios.TIOCOUTQ
SIOCINQ = termios.FIONREAD


def result(title, value):
    print('%s: %s' % (title, value))
    sys.stdout.flush()


def fig(name, value):
    sys.stderr.write('FIG %s %s\n' % (name, value))
    sys.stderr.flush()


def ioctl_int(s, req):
    return struct.unpack('i', fcntl.ioctl(s.fileno(), req, b'\0\0\0\0'))[0]


def nfds():
    return len(os.listdir('/proc/%d/fd' % pid))


def fds_back_to(base, secs=5.0):
    """whether the bus's fds come back to base within secs; how many more"""
    end = time.monotonic() + secs
    while nfds() > base and time.monotonic() < end:
        time.sleep(0.05)
    return nfds() - base


def rss_kb():
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return -1


def Peer(unix_fd=False):
    return W.Conn(path, unix_fd=unix_fd)


class Flood:
    """a sender writing whole messages non-blocking; a message counts as
    sent once its last byte is in the socket"""

    def __init__(self, peer, make, n_fds=0):
        self.p, self.make, self.n_fds = peer, make, n_fds
        self.sent_msgs = self.sent_bytes = 0
        self.pending = b''
        self.pending_fds = 0

    def run(self, max_msgs, stall_secs=1.0):
        """write until the bus has not read for stall_secs; True if it stalled"""
        s = self.p.s
        s.setblocking(False)
        try:
            while self.sent_msgs < max_msgs or self.pending:
                if not self.pending:
                    m = self.make(self.p.next_serial())
                    self.pending, self.pending_fds = m if isinstance(m, tuple) else (m, self.n_fds)
                try:
                    if self.pending_fds:
                        k = socket.send_fds(s, [self.pending], [NULL] * self.pending_fds)
                        self.pending_fds = 0
                    else:
                        k = s.send(self.pending)
                except BlockingIOError:
                    if not select.select([], [s], [], stall_secs)[1]:
                        return True
                    continue
                self.pending = self.pending[k:]
                self.sent_bytes += k
                if not self.pending:
                    self.sent_msgs += 1
            return False
        finally:
            s.setblocking(True)
            s.settimeout(10)

    def finish(self, secs=10.0):
        """the rest of a message the bus stopped reading in the middle of,
        blocking; True if it went"""
        if not self.pending:
            return True
        self.p.s.settimeout(secs)
        try:
            if self.pending_fds:
                k = socket.send_fds(self.p.s, [self.pending], [NULL] * self.pending_fds)
                self.pending = self.pending[k:]
                self.pending_fds = 0
            self.p.s.sendall(self.pending)
        except (OSError, socket.timeout):
            return False
        self.pending = b''
        self.sent_msgs += 1
        return True


def serials_in_order(msgs, n):
    got = [m[2] for m in msgs]
    return got == sorted(got) and len(got) == n and len(set(got)) == n


def control_ok():
    try:
        c = W.Conn(path, timeout=1.0)
        t = time.monotonic()
        okay = c.call_driver('GetId', timeout=1.0)[0] == W.METHOD_RETURN and time.monotonic() - t < 1.0
        c.close()
        return okay
    except (OSError, EOFError, socket.timeout):
        return False


def read_all(r, n, timeout=20.0):
    """every message recipient r gets until n arrived (or timeout)"""
    out = []
    end = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < end:
        try:
            m = r.recv_msg(max(0.05, end - time.monotonic()))
        except socket.timeout:
            break
        if m[0] in (W.METHOD_CALL, W.SIGNAL) and m[3].get(W.F_MEMBER) in ('Big', 'Fd'):
            out.append(m)
    return out


BODY = 65536
NO_REPLY = 1


def big_call(dest):
    def make(serial):
        body = struct.pack('<I', BODY) + b'x' * BODY
        return W.marshal(W.METHOD_CALL, serial, {W.F_PATH: '/x', W.F_INTERFACE: 'org.busbridge.In', W.F_MEMBER: 'Big',
                                                 W.F_DESTINATION: dest}, body, 'ay', flags=NO_REPLY)
    return make


def big_signal(serial):
    body = struct.pack('<I', BODY) + b'x' * BODY
    return W.marshal(W.SIGNAL, serial, {W.F_PATH: '/x', W.F_INTERFACE: 'org.busbridge.In', W.F_MEMBER: 'Big'}, body, 'ay')


def fd_call(dest):
    def make(serial):
        return W.marshal(W.METHOD_CALL, serial, {W.F_PATH: '/x', W.F_INTERFACE: 'org.busbridge.In', W.F_MEMBER: 'Fd',
                                                 W.F_DESTINATION: dest, W.F_UNIX_FDS: 1},
                         struct.pack('<I', 0), 'h', flags=NO_REPLY)
    return make


def bytes_flood(name, broadcast):
    """64 KiB messages to a recipient that does not read, then it reads"""
    rss0 = rss_kb()
    r = Peer()
    if broadcast:
        r.call_driver('AddMatch', 's', W.body_s("type='signal',interface='org.busbridge.In'"))
    s = Peer()
    f = Flood(s, big_signal if broadcast else big_call(r.unique))
    cap = 16 * 1024 * 1024 // BODY
    stalled = f.run(cap)
    time.sleep(0.3)
    held = f.sent_bytes - ioctl_int(s.s, SIOCOUTQ) - ioctl_int(r.s, SIOCINQ)
    rss = rss_kb()
    fig(name + '-accepted-bytes', f.sent_bytes)
    fig(name + '-held-bytes', held)
    fig(name + '-rss-growth-kb', rss - rss0)
    result('%s, the bus stops reading the sender' % name, 'yes' if stalled else 'no (%d bytes taken)' % f.sent_bytes)
    result('%s, what the bus holds stays near max_incoming_bytes' % name,
           'yes' if held < 2 * LIMIT_BYTES else 'no (%d bytes)' % held)
    result('%s, the bus serves others meanwhile' % name, 'yes' if control_ok() else 'no')
    # the recipient reads; the sender goes on with what is left
    first = read_all(r, f.sent_msgs, timeout=1.0)
    more = f.sent_msgs + 8
    stalled_again = f.run(more, stall_secs=5.0)
    got = first + read_all(r, more - len(first))
    result('%s, once the recipient reads, the sender is read again' % name, 'yes' if not stalled_again else 'no')
    result('%s, every message arrives, in order' % name,
           'yes' if serials_in_order(got, more) else 'no (%d of %d)' % (len(got), more))
    s.close()
    r.close()


def fds_flood():
    """one fd per message to a recipient that does not read"""
    time.sleep(0.3)
    base = nfds()
    r = Peer(unix_fd=True)
    s = Peer(unix_fd=True)
    f = Flood(s, fd_call(r.unique), n_fds=1)
    stalled = f.run(2000)
    time.sleep(0.3)
    held = nfds() - base - 2     # the two connections
    fig('fds-sent-msgs', f.sent_msgs)
    fig('fds-held', held)
    result('fds, the bus stops reading the sender', 'yes' if stalled else 'no (%d fds taken)' % f.sent_msgs)
    result('fds, the fds the bus holds stay near max_incoming_unix_fds', 'yes' if held <= 2 * LIMIT_FDS else
           'no (%d)' % held)
    result('fds, the bus serves others meanwhile', 'yes' if control_ok() else 'no')
    # the recipient reads (and closes what it gets)
    got = []
    end = time.monotonic() + 20
    more = f.sent_msgs + 4
    while len(got) < more and time.monotonic() < end:
        r.s.settimeout(0.2)
        try:
            data, fds, _, _ = socket.recv_fds(r.s, 1 << 16, 64)
        except socket.timeout:
            f.run(more, stall_secs=0.2)
            continue
        for x in fds:
            os.close(x)
        if not data:
            break
        r.rbuf += data
        while True:
            n = W.msg_size(r.rbuf)
            if n is None or len(r.rbuf) < n:
                break
            m, r.rbuf = W.parse(r.rbuf[:n]), r.rbuf[n:]
            if m[3].get(W.F_MEMBER) == 'Fd':
                got.append(m)
        f.run(more, stall_secs=0.05)
    result('fds, every message arrives, in order', 'yes' if serials_in_order(got, more) else
           'no (%d of %d)' % (len(got), more))
    s.close()
    r.close()
    left = fds_back_to(base)
    result('fds, none is left once both are gone', 'yes' if left <= 0 else 'no (%d more)' % left)


def gone_while_held(who):
    """sender or recipient disconnects while the sender is held"""
    time.sleep(0.3)
    base = nfds()
    r = Peer(unix_fd=True)
    s = Peer(unix_fd=True)
    # 64 KiB calls and calls with an fd, in turns (one flood: a message the
    # bus stops reading in the middle of is finished before the next)
    big, fd = big_call(r.unique), fd_call(r.unique)
    ff = Flood(s, lambda serial: big(serial) if serial % 2 else (fd(serial), 1))
    ff.run(128)
    if who == 'sender':
        s.close()
        time.sleep(0.3)
        r.close()
        title = 'sender gone while held'
        res = 'yes'
    else:
        r.close()
        # the sender is read again: what it wrote is taken (and dropped)
        ff.run(ff.sent_msgs + 4, stall_secs=5.0)
        try:
            res = 'yes' if ff.finish() and s.call_driver('GetId', timeout=10.0)[0] == W.METHOD_RETURN else 'no'
        except (OSError, EOFError, socket.timeout):
            res = 'no (no answer)'
        s.close()
        title = 'recipient gone while the sender is held'
    left = fds_back_to(base)
    result('%s, the sender is answered again' % title if who != 'sender' else '%s, the bus carries on' % title,
           res if control_ok() else 'no (bus not answering)')
    result('%s, no fd is left' % title, 'yes' if left <= 0 else 'no (%d more)' % left)


PHASES = {
    'unicast': lambda: bytes_flood('unicast', False),
    'broadcast': lambda: bytes_flood('broadcast', True),
    'fds': fds_flood,
    'sender-gone': lambda: gone_while_held('sender'),
    'recipient-gone': lambda: gone_while_held('recipient'),
}
for p in sys.argv[3:] or PHASES:
    PHASES[p]()
