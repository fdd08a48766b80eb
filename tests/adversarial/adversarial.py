#!/usr/bin/python3
# adversarial.py DAEMON: hostile clients against a running bus daemon
# (busbridged, or /usr/bin/dbus-daemon for comparison), while a control
# client keeps asking the driver GetId and must get every answer within
# 1 s.  Phases: malformed messages of every kind the specification
# forbids, SASL garbage, connect floods (max_incomplete_connections,
# auth_timeout), 5,000 simultaneous connections, a signal flood to a
# reader that never reads, spoofed replies and forged senders, fds beyond
# the limit, a peer that sends 10 MB of a message and stops, SIGPIPE
# (peers that go away before their reply), then EMFILE (a daemon with 64
# fds), fds parked unread until the kernel refuses the bus any more in
# flight (a daemon running as nobody with 240 fds) and injected ENOMEM
# (an LD_PRELOAD malloc shim, busbridged only).  The daemon's RSS must
# come back to within 2x of its start.  Prints one line of figures per
# phase; the last line is "N passed, N failed, N skipped"; exit status 1 if
# any bound is violated.
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import faulthandler
import time

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import dbuswire as W  # noqa: E402

DAEMON = sys.argv[1] if len(sys.argv) > 1 else 'busbridged'
IS_DBUS_DAEMON = os.path.basename(DAEMON).startswith('dbus-daemon')
HERE = os.path.dirname(os.path.abspath(__file__))
AUTH_TIMEOUT_MS = 3000
PENDING_TIMEOUT_MS = 2000
MAX_INCOMPLETE = 64
LATENCY_BOUND = 1.0
T_START = time.monotonic()
N_ENOMEM = 20

n_pass = n_fail = n_skip = 0
results = []


def ok(cond, what, figures=''):
    global n_pass, n_fail
    if cond:
        n_pass += 1
        print('ok - %s%s' % (what, ' (%s)' % figures if figures else ''))
    else:
        n_fail += 1
        print('not ok - %s%s' % (what, ' (%s)' % figures if figures else ''))
    sys.stdout.flush()


def skip(what):
    global n_skip
    n_skip += 1
    print('ok - # SKIP %s' % what)


CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%(sock)s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <!-- replies nobody asked for are refused, as on a system bus (the
         eavesdrop rules above would let them through, as session.conf's do) -->
    <deny send_type="method_return" send_requested_reply="false"/>
    <deny send_type="error" send_requested_reply="false"/>
  </policy>
  <limit name="max_incoming_bytes">100000000</limit>
  <limit name="max_outgoing_bytes">8000000</limit>
  <limit name="max_message_size">33554432</limit>
  <limit name="max_message_unix_fds">16</limit>
  <limit name="auth_timeout">%(auth)d</limit>
  <limit name="pending_fd_timeout">%(pending)d</limit>
  <limit name="max_completed_connections">100000</limit>
  <limit name="max_incomplete_connections">%(incomplete)d</limit>
  <limit name="max_connections_per_user">100000</limit>
  <limit name="max_names_per_connection">1000</limit>
  <limit name="max_match_rules_per_connection">1000</limit>
  <limit name="max_replies_per_connection">1000</limit>
  <limit name="reply_timeout">5000</limit>
</busconfig>
'''


def rss_kb(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
    except OSError:
        return -1
    return -1


class Daemon:
    def __init__(self, tmp, name, prefix=(), env=None):
        self.sock = os.path.join(tmp, name + '.sock')
        self.conf = os.path.join(tmp, name + '.conf')
        self.log = os.path.join(tmp, name + '.log')
        with open(self.conf, 'w') as f:
            f.write(CONFIG % {'sock': self.sock, 'auth': AUTH_TIMEOUT_MS, 'pending': PENDING_TIMEOUT_MS,
                              'incomplete': MAX_INCOMPLETE})
        r, w = os.pipe()
        self.logf = open(self.log, 'w')
        self.p = subprocess.Popen(list(prefix) + [DAEMON, '--config-file=' + self.conf, '--nofork',
                                                  '--print-address=%d' % w],
                                  pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=self.logf,
                                  stderr=self.logf, env=env)
        os.close(w)
        with os.fdopen(r) as rf:
            self.addr = rf.readline().strip()
        if not self.addr:
            raise RuntimeError('daemon did not start: ' + open(self.log).read()[:500])
        self.path = W.parse_address(self.addr)

    def alive(self):
        return self.p.poll() is None

    def log_text(self):
        with open(self.log, errors='replace') as f:
            return f.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.logf.close()


class Control(threading.Thread):
    """asks GetId every 20 ms; records the worst latency per phase"""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.c = W.Conn(path)
        self.phase = 'start'
        self.worst = {}
        self.errors = []
        self.stopping = False
        self.lock = threading.Lock()

    def set_phase(self, p):
        with self.lock:
            self.phase = p
            self.worst[p] = 0.0

    def run(self):
        while not self.stopping:
            t = time.monotonic()
            try:
                m = self.c.call_driver('GetId', timeout=5.0)
                if m[0] != W.METHOD_RETURN:
                    self.errors.append('GetId failed: %r' % (m[3],))
            except Exception as e:  # noqa: BLE001
                self.errors.append('%s: %s' % (type(e).__name__, e))
                d = 99.0
            else:
                d = time.monotonic() - t
            with self.lock:
                self.worst[self.phase] = max(self.worst.get(self.phase, 0.0), d)
            if self.errors and d == 99.0:
                time.sleep(0.2)
                try:
                    self.c.close()
                    self.c = W.Conn(self.path_)
                except Exception:  # noqa: BLE001
                    pass
            time.sleep(0.02)


def phase(ctl, d, name):
    ctl.set_phase(name)
    return time.monotonic(), rss_kb(d.p.pid)


def end_phase(ctl, d, name, t0, figures):
    time.sleep(0.1)
    worst = ctl.worst.get(name, 0.0)
    ok(d.alive(), '%s: the daemon is alive' % name)
    ok(worst < LATENCY_BOUND, '%s: the control client is answered within 1 s' % name,
       'worst %.0f ms, %.1f s, %s, RSS %d KiB' % (worst * 1000, time.monotonic() - t0, figures, rss_kb(d.p.pid)))
    results.append((name, worst, figures))


# ---------------------------------------------------------------------------
# malformed messages


def m_ok_fields():
    return {W.F_PATH: '/org/freedesktop/DBus', W.F_MEMBER: 'GetId', W.F_DESTINATION: 'org.freedesktop.DBus'}


def m(typ=W.METHOD_CALL, fields=None, **kw):
    return W.marshal(typ, kw.pop('serial', 7), m_ok_fields() if fields is None else fields, **kw)


def f_(**over):
    f = m_ok_fields()
    for k, v in over.items():
        code = {'path': W.F_PATH, 'iface': W.F_INTERFACE, 'member': W.F_MEMBER, 'dest': W.F_DESTINATION,
                'error': W.F_ERROR_NAME, 'reply': W.F_REPLY_SERIAL, 'fds': W.F_UNIX_FDS}[k]
        if v is None:
            f.pop(code, None)
        else:
            f[code] = v
    return f


def body_with(sig, raw):
    return m(sig=sig, body=raw)


def u32(v):
    return struct.pack('<I', v)


def malformed_cases():
    sig_local = {W.F_PATH: '/org/freedesktop/DBus/Local', W.F_INTERFACE: 'org.example.I', W.F_MEMBER: 'S'}
    nested_v = b'\x01v\x00' * 100 + b'\x01y\x00\x05'
    cases = [
        ('endianness marker', m(endian=b'x')),
        ('protocol version 2', m(version=2)),
        ('message type 0', m(typ=0)),
        ('serial 0', m(serial=0)),
        ('body longer than the maximum', m(body_len=0x7ffffff0)),
        ('header field array of 64 MiB + 1', m(fields_len=0x4000001)),
        ('header field array longer than the message', m(fields_len=4000)),
        ('PATH with signature s', m(fields=[(W.F_PATH, 's', '/x'), (W.F_MEMBER, 's', 'GetId')])),
        ('REPLY_SERIAL with signature s', m(typ=W.METHOD_RETURN, fields=[(W.F_REPLY_SERIAL, 's', 'x')])),
        ('object path with //', m(fields=f_(path='/a//b'))),
        ('object path with a trailing /', m(fields=f_(path='/a/'))),
        ('object path not starting with /', m(fields=f_(path='a/b'))),
        ('interface without a dot', m(fields=f_(iface='nodots'))),
        ('interface with an empty element', m(fields=f_(iface='a..b'))),
        ('member starting with a digit', m(fields=f_(member='1abc'))),
        ('member with a dot', m(fields=f_(member='Get.Id'))),
        ('member with a NUL byte', m(fields=f_(member='Get\0Id'))),
        ('destination with a NUL byte', m(fields=f_(dest='org.free\0desktop.DBus'))),
        ('bus name with invalid characters', m(fields=f_(dest='org.$$.x'))),
        ('error name invalid', m(typ=W.ERROR, fields={W.F_ERROR_NAME: 'bad', W.F_REPLY_SERIAL: 1})),
        ('method call without member', m(fields=f_(member=None))),
        ('method call without path', m(fields=f_(path=None))),
        ('signal without interface', m(typ=W.SIGNAL, fields={W.F_PATH: '/', W.F_MEMBER: 'S'})),
        ('error without error name', m(typ=W.ERROR, fields={W.F_REPLY_SERIAL: 1})),
        ('method return without reply serial', m(typ=W.METHOD_RETURN, fields={})),
        ('reply serial 0', m(typ=W.METHOD_RETURN, fields={W.F_REPLY_SERIAL: 0})),
        ('header field code 0', m(fields=list(m_ok_fields().items()) and
                                  [(0, 's', 'x')] + [(k, W.FIELD_SIG[k], v) for k, v in m_ok_fields().items()])),
        ('header field given twice', m(fields=[(W.F_PATH, 'o', '/'), (W.F_PATH, 'o', '/a'),
                                               (W.F_MEMBER, 's', 'GetId')])),
        ('the local path', m(typ=W.SIGNAL, fields=sig_local)),
        ('the local interface', m(typ=W.SIGNAL, fields={W.F_PATH: '/', W.F_INTERFACE: 'org.freedesktop.DBus.Local',
                                                        W.F_MEMBER: 'S'})),
        ('unbalanced signature', body_with('(i', u32(1))),
        ('unknown type code in the signature', body_with('Z', b'\0')),
        ('NUL byte in the signature', body_with('y\0y', b'\0\0')),
        ('array nesting 33', body_with('a' * 33 + 'y', u32(0))),
        ('struct nesting 33', body_with('(' * 33 + 'y' + ')' * 33, b'\0')),
        ('dict entry outside an array', body_with('{sy}', u32(0) + b'\0\0')),
        ('empty struct', body_with('()', b'')),
        ('body shorter than its signature', body_with('u', b'')),
        ('bytes after the last argument', body_with('y', b'\x01\x02')),
        ('boolean 2', body_with('b', u32(2))),
        ('string without its NUL', body_with('s', u32(3) + b'abcd')),
        ('string with a NUL inside', body_with('s', u32(3) + b'a\0c\0')),
        ('string not UTF-8', body_with('s', u32(2) + b'\xff\xfe\0')),
        ('string length past the end', body_with('s', u32(1000) + b'ab\0')),
        ('array of 64 MiB + 1', body_with('ay', u32(0x4000001))),
        ('array length not a multiple of its elements', body_with('au', u32(5) + b'\0' * 12)),
        ('non-zero padding', body_with('yu', b'\x01\xff\xff\xff' + u32(1))),
        ('object path argument invalid', body_with('o', u32(2) + b'//\0')),
        ('signature argument invalid', body_with('g', b'\x02(i\0')),
        ('variant with an invalid signature', body_with('v', b'\x01Z\0\0')),
        ('variant with two types', body_with('v', b'\x02yy\0\x01\x01')),
        ('variants nested 100 deep', body_with('v', nested_v)),
        ('UNIX_FDS without fds', m(fields=f_(fds=3))),
        ('garbage after the fixed header', b'l\x01\x00\x01' + os.urandom(60)),
    ]
    return cases


def run_malformed(d):
    dropped, alive_after = 0, []
    conns = []
    for name, data in malformed_cases():
        try:
            c = W.Conn(d.path)
            c.send(data)
            conns.append((name, c))
        except (OSError, EOFError) as e:
            alive_after.append('%s: setup %s' % (name, e))
    # (a message cut short, such as a header field array longer than the
    # message, is dropped when it made no progress for pending_fd_timeout)
    for name, c in conns:
        if c.closed_within(PENDING_TIMEOUT_MS / 1000 + 1.5):
            dropped += 1
        else:
            alive_after.append(name)
        c.close()
    return len(conns), dropped, alive_after


# ---------------------------------------------------------------------------
# SASL garbage


def sasl_cases():
    return [
        ('random bytes', os.urandom(4096)),
        ('no leading NUL', b'AUTH EXTERNAL 30\r\n'),
        ('NUL inside a line', b'\0AUTH EXT\0ERNAL 30\r\n'),
        ('a line of 20000 bytes', b'\0' + b'A' * 20000),
        ('BEGIN first', b'\0BEGIN\r\n'),
        ('unknown mechanism x20', b'\0' + b'AUTH FOO\r\n' * 20),
        ('DATA without AUTH', b'\0DATA 4142\r\nERROR\r\nCANCEL\r\n'),
        ('EXTERNAL with a foreign uid', b'\0AUTH EXTERNAL ' + b'12345'.hex().encode() + b'\r\n'),
        ('EXTERNAL with bad hex', b'\0AUTH EXTERNAL zz\r\n'),
        ('high-bit bytes', b'\0' + bytes(range(128, 256)) + b'\r\n'),
        ('only a NUL, then silence', b'\0'),
        ('nothing at all', b''),
        ('NEGOTIATE_UNIX_FD before OK', b'\0NEGOTIATE_UNIX_FD\r\n'),
        ('a million CRLFs', b'\0' + b'\r\n' * 100000),
    ]


def run_sasl(d):
    socks = []
    for name, data in sasl_cases():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.path)
        try:
            s.sendall(data)
        except OSError:
            pass
        socks.append((name, s))
    end = time.monotonic() + AUTH_TIMEOUT_MS / 1000 + 3
    left = [n for n, s in socks]
    closed_at = {}
    sel = selectors.DefaultSelector()
    for name, s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, name)
    t0 = time.monotonic()
    while left and time.monotonic() < end:
        for key, _ in sel.select(0.1):
            try:
                data = key.fileobj.recv(65536)
            except (ConnectionResetError, BlockingIOError):
                data = b'' if not isinstance(sys.exc_info()[1], BlockingIOError) else None
            if data == b'':
                closed_at[key.data] = time.monotonic() - t0
                sel.unregister(key.fileobj)
                left.remove(key.data)
    for _, s in socks:
        s.close()
    return len(socks), closed_at, left


# ---------------------------------------------------------------------------
# connection floods


def run_incomplete_flood(d, n=600):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.path)
        socks.append(s)
    time.sleep(1.0)
    open_after = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b'':
                continue
        except BlockingIOError:
            pass
        except OSError:
            continue
        open_after += 1
    time.sleep(AUTH_TIMEOUT_MS / 1000 + 1.0)
    open_late = 0
    for s in socks:
        try:
            if s.recv(1) != b'':
                open_late += 1
        except BlockingIOError:
            open_late += 1
        except OSError:
            pass
        s.close()
    return open_after, open_late


def hello_pipelined():
    return (b'\0AUTH EXTERNAL ' + str(os.getuid()).encode().hex().encode() + b'\r\nBEGIN\r\n' +
            W.driver_call(1, 'Hello'))


def run_many(d, n=5000, batch=50):
    conns = []
    failed = 0
    hello = hello_pipelined()
    sel = selectors.DefaultSelector()
    t0 = time.monotonic()
    for i in range(0, n, batch):
        pending = {}
        for _ in range(min(batch, n - i)):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(d.path)
                s.sendall(hello)
            except OSError:
                failed += 1
                s.close()
                continue
            s.setblocking(False)
            pending[s] = b''
            sel.register(s, selectors.EVENT_READ)
        end = time.monotonic() + 10
        while pending and time.monotonic() < end:
            for key, _ in sel.select(0.5):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b''
                if not data:
                    failed += 1
                    sel.unregister(s)
                    del pending[s]
                    s.close()
                    continue
                pending[s] += data
                buf = pending[s]
                if b'\r\n' in buf:
                    rest = buf.split(b'\r\n', 1)[1]
                    n_ = W.msg_size(rest)
                    if n_ is not None and len(rest) >= n_:
                        sel.unregister(s)
                        del pending[s]
                        conns.append(s)
        for s in pending:
            sel.unregister(s)
            s.close()
            failed += 1
    t_setup = time.monotonic() - t0
    return conns, failed, t_setup


# ---------------------------------------------------------------------------


def run_fd_inflight(tmp, limit=240, parkers=16):
    """fds parked unread: a daemon running as nobody with RLIMIT_NOFILE
    LIMIT; PARKERS connections that never read are each sent LIMIT/PARKERS+1
    fds, so that the kernel refuses the bus's user any more fds in flight
    (ETOOMANYREFS).  Then a victim is sent fds 200 times: it must stay
    connected (the bus drops what it cannot pass, as libdbus does), a
    control client must be answered within 1 s, and the parkers cannot
    make the bus grow"""
    if os.geteuid() != 0 or not shutil.which('setpriv') or not shutil.which('prlimit'):
        skip('fd-inflight: needs root, setpriv and prlimit')
        return
    run = os.path.join(tmp, 'inflight')
    os.mkdir(run)
    os.chmod(run, 0o1777)
    d = Daemon(run, 'inflight', prefix=('prlimit', '--nofile=%d:%d' % (limit, limit), '--', 'setpriv',
                                        '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--'))
    null = os.open('/dev/null', os.O_RDONLY)
    conns = []
    try:
        ctl = Control(d.path)
        ctl.path_ = d.path
        ctl.start()
        t0 = time.monotonic()
        rss0 = rss_kb(d.p.pid)
        ctl.set_phase('fd-inflight')

        def fds_msg(c, dest, n):
            body = b''.join(struct.pack('<I', i) for i in range(n))
            return W.marshal(W.SIGNAL, c.next_serial(), {W.F_PATH: '/', W.F_INTERFACE: 'org.busbridge.Fds',
                                                         W.F_MEMBER: 'F', W.F_DESTINATION: dest,
                                                         W.F_UNIX_FDS: n}, body, 'h' * n)
        victim = W.Conn(d.path, unix_fd=True)
        sender = W.Conn(d.path, unix_fd=True)
        conns += [victim, sender]
        per = limit // parkers + 1
        for _ in range(parkers):
            p = W.Conn(d.path, unix_fd=True)
            conns.append(p)
            sender.send_fds(fds_msg(sender, p.unique, per), [null] * per)
        sender.call_driver('GetId')
        rss_parked = rss_kb(d.p.pid)
        n_sent = 200
        for _ in range(n_sent):
            sender.send_fds(fds_msg(sender, victim.unique, 1), [null])
        sender.call_driver('GetId')
        try:
            got = victim.call_driver('GetId', timeout=5)[0] == W.METHOD_RETURN
        except (OSError, EOFError, socket.timeout):
            got = False
        ok(got, 'fd-inflight: a receiver the bus cannot pass fds to stays connected',
           '%d parkers x %d fds unread, %d messages with an fd to the victim, RLIMIT_NOFILE %d' %
           (parkers, per, n_sent, limit))
        rss1 = rss_kb(d.p.pid)
        ok(rss1 - rss0 < 16 * 1024, 'fd-inflight: the bus does not grow', 'RSS %d KiB at start, %d parked, %d after' %
           (rss0, rss_parked, rss1))
        end_phase(ctl, d, 'fd-inflight', t0, '%d fds parked' % (parkers * per))
        ctl.stopping = True
        ctl.join(3)
    finally:
        for c in conns:
            c.close()
        os.close(null)
        d.stop()


def main():
    global n_fail
    faulthandler.register(signal.SIGUSR1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 12000
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))
        except (ValueError, OSError):
            pass
    n_many = min(5000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 1000)

    tmp = tempfile.mkdtemp(prefix='bb-adversarial.')
    os.chmod(tmp, 0o755)
    d = Daemon(tmp, 'bus')
    ctl = None
    try:
        ctl = Control(d.path)
        ctl.path_ = d.path
        ctl.start()
        time.sleep(0.3)
        rss0 = rss_kb(d.p.pid)
        print('# daemon %s, pid %d, RSS at start %d KiB' % (DAEMON, d.p.pid, rss0))

        # -- malformed messages
        t0, _ = phase(ctl, d, 'malformed')
        n, dropped, kept = run_malformed(d)
        ok(dropped == n, 'malformed: every connection sending a forbidden message is dropped',
           '%d/%d dropped%s' % (dropped, n, '; kept: ' + ', '.join(kept) if kept else ''))
        end_phase(ctl, d, 'malformed', t0, '%d kinds' % n)

        # -- SASL garbage
        t0, _ = phase(ctl, d, 'sasl')
        n, closed, left = run_sasl(d)
        ok(not left, 'sasl: every garbage conversation ends by auth_timeout (+3 s)',
           '%d cases, last closed after %.1f s%s' % (n, max(closed.values() or [0]),
                                                      '; still open: ' + ', '.join(left) if left else ''))
        end_phase(ctl, d, 'sasl', t0, '%d cases' % n)

        # -- connect flood
        t0, _ = phase(ctl, d, 'connect-flood')
        open_after, open_late = run_incomplete_flood(d)
        ok(open_after <= MAX_INCOMPLETE + 8, 'connect-flood: at most max_incomplete_connections stay open',
           '600 connected, %d open after 1 s (max_incomplete_connections=%d)' % (open_after, MAX_INCOMPLETE))
        ok(open_late == 0, 'connect-flood: none is left after auth_timeout', '%d left' % open_late)
        end_phase(ctl, d, 'connect-flood', t0, '600 unauthenticated')

        # -- 5000 simultaneous connections
        t0, _ = phase(ctl, d, 'connections')
        conns, failed, t_setup = run_many(d, n_many)
        rss_peak = rss_kb(d.p.pid)
        ok(len(conns) == n_many, 'connections: %d simultaneous connections get their Hello answered' % n_many,
           '%d ok, %d failed, set up in %.1f s, RSS %d KiB' % (len(conns), failed, t_setup, rss_peak))
        time.sleep(1.0)
        for s in conns:
            s.close()
        time.sleep(1.0)
        end_phase(ctl, d, 'connections', t0, '%d connections, peak RSS %d KiB' % (len(conns), rss_peak))

        # -- signal flood to a reader that never reads
        t0, _ = phase(ctl, d, 'signal-flood')
        reader = W.Conn(d.path)
        reader.call_driver('AddMatch', 's', W.body_s("type='signal',interface='org.busbridge.Flood'"))
        flooder = W.Conn(d.path)
        payload = W.Buf()
        payload.string('x' * 4000)
        sig = W.marshal(W.SIGNAL, 1, {W.F_PATH: '/f', W.F_INTERFACE: 'org.busbridge.Flood', W.F_MEMBER: 'S'},
                        bytes(payload.b), 's')
        n_sig = 20000
        rss_max = 0
        for i in range(n_sig):
            flooder.send(sig)
            if i % 2000 == 0:
                rss_max = max(rss_max, rss_kb(d.p.pid))
        # the flooder still gets answers: nothing it sent was refused
        m_ = flooder.call_driver('GetId', timeout=10)
        rss_max = max(rss_max, rss_kb(d.p.pid))
        ok(m_[0] == W.METHOD_RETURN, 'signal-flood: the flooder is not disconnected')
        ok(rss_max - rss0 < 64 * 1024, 'signal-flood: the bus does not grow without bound',
           '%d signals of 4 KiB (%d MiB) to a reader that never reads, RSS at most %d KiB' %
           (n_sig, n_sig * 4 // 1024, rss_max))
        reader.close()
        flooder.close()
        end_phase(ctl, d, 'signal-flood', t0, '%d signals' % n_sig)

        # -- spoofed replies and forged senders
        t0, _ = phase(ctl, d, 'spoofing')
        victim = W.Conn(d.path)
        attacker = W.Conn(d.path)
        service = W.Conn(d.path)
        victim.call_driver('AddMatch', 's', W.body_s("type='signal',interface='org.busbridge.Forged'"))
        # the victim calls the service, which never answers; the attacker
        # answers in its place, and also answers serials never sent
        s_call = victim.next_serial()
        victim.send(W.call(s_call, service.unique, '/', 'org.busbridge.Svc', 'Wait'))
        for rs, typ in ((s_call, W.METHOD_RETURN), (s_call, W.ERROR), (4242, W.METHOD_RETURN), (77777, W.ERROR)):
            f = {W.F_REPLY_SERIAL: rs, W.F_DESTINATION: victim.unique}
            if typ == W.ERROR:
                f[W.F_ERROR_NAME] = 'org.busbridge.Spoofed'
            attacker.send(W.marshal(typ, attacker.next_serial(), f))
        # forged senders, unicast and broadcast
        for forged in (':1.1', 'org.freedesktop.DBus', service.unique):
            attacker.send(W.marshal(W.SIGNAL, attacker.next_serial(),
                                    {W.F_PATH: '/', W.F_INTERFACE: 'org.busbridge.Forged', W.F_MEMBER: 'U',
                                     W.F_DESTINATION: victim.unique, W.F_SENDER: forged}))
            attacker.send(W.marshal(W.SIGNAL, attacker.next_serial(),
                                    {W.F_PATH: '/', W.F_INTERFACE: 'org.busbridge.Forged', W.F_MEMBER: 'B',
                                     W.F_SENDER: forged}))
        attacker.call_driver('GetId')   # everything above was processed
        spoofed, senders = 0, []
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                typ, _, _, f, _ = victim.recv_msg(max(0.01, end - time.monotonic()))
            except (socket.timeout, TimeoutError):
                break
            if typ in (W.METHOD_RETURN, W.ERROR) and f.get(W.F_SENDER) != 'org.freedesktop.DBus':
                spoofed += 1
            if typ == W.SIGNAL and f.get(W.F_INTERFACE) == 'org.busbridge.Forged':
                senders.append(f.get(W.F_SENDER))
        ok(spoofed == 0, 'spoofing: replies from a peer that was not called are not delivered',
           '%d of 4 delivered' % spoofed)
        ok(len(senders) == 6 and all(s == attacker.unique for s in senders),
           'spoofing: forged SENDER fields are replaced', 'senders seen: %s' % sorted(set(map(str, senders))))
        for c in (victim, attacker, service):
            c.close()
        end_phase(ctl, d, 'spoofing', t0, '4 spoofed replies, 6 forged senders')

        # -- fds beyond the limit
        t0, _ = phase(ctl, d, 'fds')
        c = W.Conn(d.path, unix_fd=True, timeout=5)
        fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(20)]
        msg = W.marshal(W.METHOD_CALL, 2, {W.F_PATH: '/', W.F_MEMBER: 'X', W.F_DESTINATION: 'org.freedesktop.DBus',
                                           W.F_UNIX_FDS: 20}, b'')
        try:
            c.send_fds(msg, fds)
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        ok(c.closed_within(3.0), 'fds: a message with 20 fds (max_message_unix_fds=16) drops its sender')
        c.close()
        end_phase(ctl, d, 'fds', t0, '20 fds')

        # -- a peer that sends 10 MB of a message and stops
        t0, _ = phase(ctl, d, 'partial-10MB')
        p = W.Conn(d.path)
        body_len = 12 * 1024 * 1024
        head = W.marshal(W.METHOD_CALL, 9, {W.F_PATH: '/', W.F_MEMBER: 'Big', W.F_DESTINATION: p.unique},
                         b'', 'ay', body_len=body_len)
        p.send(head + struct.pack('<I', body_len - 4))
        chunk = b'\0' * 65536
        for _ in range(10 * 16):
            p.send(chunk)
        t_sent = time.monotonic()
        rss_partial = rss_kb(d.p.pid)
        dropped = p.closed_within(PENDING_TIMEOUT_MS / 1000 + 2.0)
        t_drop = time.monotonic() - t_sent
        if IS_DBUS_DAEMON:
            print('# partial-10MB: dbus-daemon %s the peer (%.1f s)' % ('dropped' if dropped else 'kept', t_drop))
            skip('partial-10MB: dbus-daemon has no timeout for a stalled message')
        else:
            ok(dropped, 'partial-10MB: dropped at the timeout (pending_fd_timeout=%d ms)' % PENDING_TIMEOUT_MS,
               'dropped after %.1f s, RSS while pending %d KiB' % (t_drop, rss_partial))
        p.close()
        end_phase(ctl, d, 'partial-10MB', t0, 'RSS while pending %d KiB' % rss_partial)

        # -- SIGPIPE: peers that go away before their replies
        t0, _ = phase(ctl, d, 'sigpipe')
        for i in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(d.path)
            s.sendall(hello_pipelined() + W.driver_call(2, 'ListNames') * 20)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            s.close()
        time.sleep(0.5)
        ign = 0
        with open('/proc/%d/status' % d.p.pid) as f:
            for line in f:
                if line.startswith('SigIgn:'):
                    ign = int(line.split()[1], 16)
        if IS_DBUS_DAEMON:   # it sends with MSG_NOSIGNAL instead
            ok(d.alive(), 'sigpipe: 300 peers gone before their replies')
        else:
            ok(d.alive() and ign & (1 << (signal.SIGPIPE - 1)),
               'sigpipe: 300 peers gone before their replies; SIGPIPE is ignored')
        end_phase(ctl, d, 'sigpipe', t0, '300 peers')

        # -- RSS afterwards
        ctl.set_phase('settle')
        time.sleep(1.5)
        rss1 = rss_kb(d.p.pid)
        ok(0 < rss1 <= 2 * rss0, 'RSS returns to within 2x of its start', 'start %d KiB, end %d KiB' % (rss0, rss1))
        ok(not ctl.errors, 'the control client never failed', '; '.join(ctl.errors[:3]))
        ctl.stopping = True
        ctl.join(3)
        results.append(('rss', rss0, rss1))
    finally:
        if ctl:
            ctl.stopping = True
        log = d.log_text()
        d.stop()

    print('# main phases done after %.1f s' % (time.monotonic() - T_START))
    # -- EMFILE: a daemon with 64 fds
    d2 = Daemon(tmp, 'emfile', prefix=('prlimit', '--nofile=64:64', '--'))
    try:
        held, failed = [], 0
        for _ in range(100):
            try:
                c = W.Conn(d2.path, timeout=0.5)
                held.append(c)
            except (OSError, EOFError, socket.timeout):
                failed += 1
                if failed >= 10:
                    break
        alive = d2.alive()
        for c in held:
            c.close()
        time.sleep(0.5)
        try:
            c = W.Conn(d2.path, timeout=5.0)
            again = c.call_driver('GetId')[0] == W.METHOD_RETURN
            c.close()
        except (OSError, EOFError, socket.timeout):
            again = False
        logged = re.search(r'Too many open files|EMFILE|open files', d2.log_text())
        ok(alive and again, 'emfile: with RLIMIT_NOFILE 64 the daemon survives 100 connections and serves again',
           '%d connected, %d refused, logged: %s' % (len(held), failed, 'yes' if logged else 'no'))
        ok(failed == 0 or logged, 'emfile: running out of fds is logged')
    finally:
        d2.stop()

    run_fd_inflight(tmp)

    # -- ENOMEM: an LD_PRELOAD shim (busbridged without ASan only)
    if IS_DBUS_DAEMON:
        skip('enomem: the malloc shim is for busbridged')
    elif b'__asan_init' in open(DAEMON, 'rb').read():
        skip('enomem: the malloc shim needs busbridged without AddressSanitizer')
    elif not shutil.which('cc'):
        skip('enomem: no C compiler for the shim')
    else:
        shim = os.path.join(tmp, 'failmalloc.so')
        r = subprocess.run(['cc', '-shared', '-fPIC', '-O1', '-o', shim, os.path.join(HERE, 'failmalloc.c')],
                           capture_output=True)
        if r.returncode != 0:
            skip('enomem: cannot build the shim: %s' % r.stderr[:200])
        else:
            env = dict(os.environ, LD_PRELOAD=shim, BUSBRIDGE_DEBUG='1', FAILMALLOC_FILE=os.path.join(tmp, 'failmalloc.on'),
                       FAILMALLOC_EVERY='97', FAILMALLOC_LOG=os.path.join(tmp, 'failmalloc.count'))
            d3 = Daemon(tmp, 'enomem', env=env)
            try:
                open(env['FAILMALLOC_FILE'], 'w').close()
                t_enomem = time.monotonic()
                survived = 0
                # calls the bus cannot serve for lack of memory are dropped
                # (logged): the client times out, so keep the timeouts short
                for i in range(N_ENOMEM):
                    try:
                        c = W.Conn(d3.path, timeout=0.5)
                        c.call_driver('AddMatch', 's', W.body_s("type='signal',member='M%d'" % i), timeout=0.5)
                        c.call_driver('RequestName', 'su', W.body_s('org.busbridge.N%d' % i) + struct.pack('<I', 0),
                                      timeout=0.5)
                        c.call_driver('ListNames', timeout=0.5)
                        survived += 1
                        c.close()
                    except (OSError, EOFError, socket.timeout, IndexError, struct.error):
                        pass
                os.unlink(env['FAILMALLOC_FILE'])
                time.sleep(0.5)
                again = False
                for _ in range(5):   # the shim looks at its file every 16 calls
                    try:
                        c = W.Conn(d3.path, timeout=2.0)
                        again = c.call_driver('GetId')[0] == W.METHOD_RETURN
                        c.close()
                        break
                    except (OSError, EOFError, socket.timeout, IndexError, struct.error):
                        time.sleep(0.2)
                n_failed = 0
                try:
                    n_failed = int(open(env['FAILMALLOC_LOG']).read().split()[0])
                except (OSError, ValueError, IndexError):
                    pass
                logtext = d3.log_text()
                logged = len(re.findall(r'(?i)out of memory|not enough memory|cannot allocate|NoMemory|ENOMEM', logtext))
                print('# enomem: alive %s, serving again %s, %.1f s' % (d3.alive(), again, time.monotonic() - t_enomem))
                ok(d3.alive() and again, 'enomem: the daemon survives injected malloc failures and serves again',
                   '%d allocations failed, %d/%d clients completed, %d log lines' % (n_failed, survived, N_ENOMEM, logged))
                ok(n_failed == 0 or logged > 0, 'enomem: the failures are logged')
                if not d3.alive():
                    print('# enomem: daemon exit status %s; log tail:\n# ' % d3.p.returncode +
                          '\n# '.join(logtext.splitlines()[-10:]))
            finally:
                d3.stop()

    if n_fail:
        print('# daemon log tail:\n# ' + '\n# '.join(log.splitlines()[-15:]))
    shutil.rmtree(tmp, ignore_errors=True)
    print('%d passed, %d failed, %d skipped' % (n_pass, n_fail, n_skip))
    return 1 if n_fail else 0


if __name__ == '__main__':
    sys.exit(main())
