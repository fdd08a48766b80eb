# engine.py - the differential tester's engine: starts a bus daemon on a
# configuration, drives raw wire clients (any message, any uid/gid, fds)
# through a script, and writes down everything every connection receives,
# step by step, in a form that can be compared between two daemons: unique
# names are mapped to the labels of the connections that own them, bus ids
# to <guid>, statistics to their types; serials, flags, every header field,
# every body value, fds and closed connections are kept.
import errno
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import dbuswire as W  # noqa: E402

DRIVER = 'org.freedesktop.DBus'
DRIVER_PATH = '/org/freedesktop/DBus'
SYNC_SERIAL = 0x70000000          # serials of the tester's own GetId calls
START_TIMEOUT = 15.0
SYNC_TIMEOUT = 1.0
IDLE = 0.04                       # quiet time that ends a drain without a sentinel
UNIQUE_RE = re.compile(r':[0-9]+\.[0-9]+')
EXACT_NAMES = True                # compare the unique names themselves, not only who has which
GUID_RE = re.compile(r'\b[0-9a-f]{32}\b')


# --------------------------------------------------------------------------
# configurations and daemons

def prepare_config(text, sock, servicedir=None, base=None, keep_user=False):
    """a configuration on a private socket: no <user>, <fork>, <pidfile>,
    <syslog>, activation helper or standard service directories; relative
    <include> and <includedir> made absolute against base"""
    t = text
    if base:
        t = re.sub(r'(<include(?:dir)?\b[^>]*>)\s*([^<\s/][^<]*?)\s*(</include)',
                   lambda m: m.group(1) + os.path.join(base, m.group(2)) + m.group(3), t)
    for pat in ((() if keep_user else (r'<user>[^<]*</user>',)) + (r'<fork\s*/>', r'<pidfile>[^<]*</pidfile>', r'<syslog\s*/>',
                r'<servicehelper>[^<]*</servicehelper>', r'<standard_system_servicedirs\s*/>',
                r'<standard_session_servicedirs\s*/>', r'<servicedir>[^<]*</servicedir>',
                r'<listen>[^<]*</listen>')):
        t = re.sub(pat, '', t)
    extra = '\n  <listen>unix:path=%s</listen>' % sock
    if servicedir:
        extra += '\n  <servicedir>%s</servicedir>' % servicedir
    return re.sub(r'(<busconfig[^>]*>)', lambda m: m.group(1) + extra, t, count=1)


def late_config(text, late):
    """text with directories that do not exist yet under late: two service
    directories, the standard session ones (of a session bus: XDG_DATA_HOME
    and XDG_DATA_DIRS are under late, late_env()) and, last, an includedir"""
    extra = ''.join('\n  <servicedir>%s</servicedir>' % os.path.join(late, d) for d in ('services-a', 'services-b'))
    if '<type>session</type>' in text:
        extra += '\n  <standard_session_servicedirs/>'
    t = re.sub(r'(<busconfig[^>]*>)', lambda m: m.group(1) + extra, text, count=1)
    return t.replace('</busconfig>', '  <includedir>%s</includedir>\n</busconfig>' % os.path.join(late, 'conf.d'))


def late_env(late):
    """the environment of a daemon whose directories appear late: XDG
    directories under late, the runtime one there already"""
    run = os.path.join(late, 'run')
    os.makedirs(run, mode=0o700, exist_ok=True)
    return dict(os.environ, XDG_DATA_HOME=os.path.join(late, 'xdg-data'), XDG_DATA_DIRS=os.path.join(late, 'xdg-dirs'),
                XDG_RUNTIME_DIR=run)


class Daemon:
    def __init__(self, binary, conf_text, tmp, label, servicedir=None, base=None, keep_user=False, late=None):
        self.binary, self.label, self.tmp = binary, label, tmp
        self.sock = os.path.join(tmp, label + '.sock')
        self.conf = os.path.join(tmp, label + '.conf')
        text = prepare_config(conf_text, self.sock, servicedir, base, keep_user)
        env = None
        if late:
            # the same paths for both daemons: what was made for one goes
            import shutil
            shutil.rmtree(late, ignore_errors=True)
            os.makedirs(late)
            text, env = late_config(text, late), late_env(late)
        with open(self.conf, 'w') as f:
            f.write(text)
        self.log = os.path.join(tmp, label + '.log')
        logf = open(self.log, 'wb')
        r, w = os.pipe()
        self.p = subprocess.Popen([binary, '--config-file=' + self.conf, '--nofork', '--print-address=%d' % w],
                                  stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, pass_fds=(w,), env=env)
        os.close(w)
        logf.close()
        buf = b''
        end = time.monotonic() + START_TIMEOUT
        try:
            while b'\n' not in buf:
                left = end - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    raise RuntimeError('%s did not start: %s' % (binary, self.log_tail()))
                if select.select([r], [], [], left)[0]:
                    d = os.read(r, 4096)
                    if not d:
                        if self.p.poll() is None:
                            time.sleep(0.01)
                            continue
                    buf += d
        finally:
            os.close(r)
        self.address = buf.split(b'\n')[0].decode().strip()

    def log_tail(self, n=600):
        try:
            with open(self.log, 'rb') as f:
                return f.read()[-n:].decode(errors='replace')
        except OSError:
            return ''

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


# --------------------------------------------------------------------------
# identities

class Identity:
    """who a client connects as: uid, gid and supplementary groups, taken
    for connect() only (SO_PEERCRED and SO_PEERGROUPS are read then)"""

    def __init__(self, name):
        import pwd
        import grp
        self.name = name
        pw = pwd.getpwnam(name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.groups = sorted({pw.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem})


def connect_as(path, ident):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if ident is None or ident.uid == os.geteuid():
        s.connect(path)
        return s
    saved = os.getgroups()
    os.setgroups(ident.groups)
    os.setegid(ident.gid)
    os.seteuid(ident.uid)
    try:
        s.connect(path)
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(saved)
    return s


# --------------------------------------------------------------------------
# clients

class Client:
    def __init__(self, session, label, ident):
        self.session, self.label, self.ident = session, label, ident
        self.s = connect_as(session.path, ident)
        self.s.setblocking(False)
        self.rbuf = bytearray()
        self.fds = []
        self.closed = False
        self.unique = None
        self.hello_serial = None
        self.wrote = False            # sent something since the last sync
        self.monitor = False
        self.monitor_all = False      # a monitor that sees the sync pings
        self.authed = False
        self.serial = 0

    # raw I/O ------------------------------------------------------------
    def write(self, data, fds=(), sync=False):
        if self.closed:
            return
        if not sync:
            self.wrote = True
        try:
            if fds:
                self.s.setblocking(True)
                self.s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack('%di' % len(fds), *fds))])
                self.s.setblocking(False)
            else:
                self.s.setblocking(True)
                self.s.sendall(data)
                self.s.setblocking(False)
        except (BrokenPipeError, ConnectionResetError):
            self.s.setblocking(False)
            self.closed = True
            self.session.note(self, 'closed')

    def _fill(self, timeout):
        """read what is there, waiting up to timeout; False at EOF"""
        if self.closed:
            return False
        if not select.select([self.s], [], [], timeout)[0]:
            return True
        try:
            data, anc, _, _ = self.s.recvmsg(1 << 16, socket.CMSG_SPACE(253 * 4))
        except (BlockingIOError, InterruptedError):
            return True
        except (ConnectionResetError, OSError):
            data, anc = b'', []
        for level, typ, cdata in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                n = len(cdata) // 4
                self.fds += struct.unpack('%di' % n, cdata[:n * 4])
        if not data:
            self.closed = True
            self.session.note(self, 'closed')
            return False
        self.rbuf += data
        return True

    def readline(self, timeout=SYNC_TIMEOUT):
        end = time.monotonic() + timeout
        while b'\r\n' not in self.rbuf:
            left = end - time.monotonic()
            if left <= 0 or not self._fill(left):
                return None
        i = self.rbuf.index(b'\r\n')
        line = bytes(self.rbuf[:i])
        del self.rbuf[:i + 2]
        return line

    def messages(self):
        """complete messages in the buffer, parsed"""
        out = []
        while True:
            n = W.msg_size(self.rbuf)
            if n is None or len(self.rbuf) < n:
                return out
            raw = bytes(self.rbuf[:n])
            del self.rbuf[:n]
            m = W.parse_values(raw)
            nfds = m[3].get(W.F_UNIX_FDS, 0)
            fds, self.fds = self.fds[:nfds], self.fds[nfds:]
            out.append((m, fds))

    # SASL ---------------------------------------------------------------
    def auth(self, negotiate_fds=True):
        uid = self.ident.uid if self.ident else os.geteuid()
        self.write(b'\0AUTH EXTERNAL ' + str(uid).encode().hex().encode() + b'\r\n')
        line = self.readline()
        self.session.note(self, 'sasl %s' % (line.split(b' ')[0].decode() if line else 'none'))
        if not line or not line.startswith(b'OK'):
            return False
        if negotiate_fds:
            self.write(b'NEGOTIATE_UNIX_FD\r\n')
            line = self.readline()
            self.session.note(self, 'sasl %s' % (line.decode() if line else 'none'))
        self.write(b'BEGIN\r\n')
        self.authed = True
        return True

    def next_serial(self):
        self.serial += 1
        return self.serial


class Session:
    """one run of a script against one daemon: the clients, the names and
    the transcript"""

    def __init__(self, daemon):
        self.daemon = daemon
        self.path = W.parse_address(daemon.address)
        self.clients = {}
        self.lines = []
        self.names = {}               # unique name -> label
        self.unknown = {}
        self.step_no = 0
        self.calls = {}               # (label, serial) -> member, for what a reply answers
        self.ping_no = 0
        self.fd_names = {}            # (st_dev, st_ino) -> name of a file the script sent
        self.exchanges = 0
        self.last_actor = None


    # the transcript --------------------------------------------------------
    def note(self, client, text):
        self.lines.append('%s: %s' % (client.label, text))

    def norm_str(self, s):
        def uniq(m):
            u = m.group(0)
            if u in self.names:
                return '<%s>' % self.names[u]
            if u not in self.unknown:
                self.unknown[u] = '<?%d>' % len(self.unknown)
            return self.unknown[u]
        s = UNIQUE_RE.sub(uniq, s)
        s = GUID_RE.sub('<guid>', s)
        s = re.sub(r'pid=\d+', 'pid=P', s)
        return s

    def norm_value(self, v):
        if isinstance(v, str):
            return self.norm_str(v)
        if isinstance(v, W.Variant):
            return W.Variant(v.sig, self.norm_value(v.value))
        if isinstance(v, list):
            return [self.norm_value(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self.norm_value(x) for x in v)
        return v

    def mask_pid(self, v):
        """the bus daemon's own pid (asked of the driver) differs per run,
        and so does the tester's, whose clients are the connections: the
        two runs of a script are two processes (run_pair())"""
        if isinstance(v, int) and not isinstance(v, bool):
            if v == self.daemon.p.pid:
                return 'DAEMON_PID'
            if v == os.getpid():
                return 'TESTER_PID'
        if isinstance(v, W.Variant):
            return W.Variant(v.sig, self.mask_pid(v.value))
        if isinstance(v, (list, tuple)):
            return type(v)(self.mask_pid(x) for x in v)
        return v

    def describe(self, client, m, fds):
        typ, flags, serial, f, values, body = m
        member = None
        if typ in (W.METHOD_RETURN, W.ERROR):
            # what the reply answers: the call of its destination (a monitor
            # sees replies to others)
            caller = self.names.get(f.get(W.F_DESTINATION), client.label)
            member = self.calls.get((caller, f.get(W.F_REPLY_SERIAL)))
        values = self.mask_pid(values)
        if member == 'ListNames' and not EXACT_NAMES and values and isinstance(values[0], list):
            # dbus-daemon's order is its hash table's, of the names
            # themselves: other unique names, another order
            values = [sorted(self.norm_value(values[0]))]
        if member in ('GetStats', 'GetConnectionStats', 'GetAllMatchRules'):
            values = ['<%s>' % f.get(W.F_SIGNATURE, '')] + sorted(k for k, _ in values[0]) if values and \
                isinstance(values[0], list) else values
        parts = [W.TYPE_NAMES.get(typ, 'type%d' % typ), 'flags=%d' % flags]
        # the serials a bus daemon chooses for its own messages are counted per
        # receiver; the others are the sender's
        if f.get(W.F_SENDER) in (DRIVER, None) and serial:
            # the driver's serials (and those of the bus's answers without a
            # sender, to calls without a destination) come from dbus-daemon's
            # per-connection counters, which other traffic also advances:
            # only that one is set is compared
            serial = 'D'
        parts.append('serial=%s' % serial)
        # the fields in the order they came: dbus-daemon's order is part
        # of what it sends
        for code in f:
            v = f[code]
            parts.append('%s=%s' % (W.FIELD_NAMES.get(code, str(code)), self.norm_value(v) if isinstance(v, str) else v))
        parts.append('body=%r' % (self.norm_value(values),))
        for fd in fds:
            try:
                st = os.fstat(fd)
                parts.append('fd=%s' % self.fd_names.get((st.st_dev, st.st_ino), 'other'))
            finally:
                os.close(fd)
        return ' '.join(parts)

    # receiving ---------------------------------------------------------------
    def _take(self, client, stop=None):
        """note the complete messages of client; True once stop(m) said so"""
        hit = False
        for m, fds in client.messages():
            f = m[3]
            if m[0] == W.METHOD_RETURN and f.get(W.F_REPLY_SERIAL) == client.hello_serial and m[4] \
                    and isinstance(m[4][0], str) and client.unique is None:
                client.unique = m[4][0]
                self.names[client.unique] = client.label
            # the tester's own GetId calls and their replies, wherever they
            # are seen (eavesdroppers, monitors), are not the script's doing
            own_sync = (m[0] == W.METHOD_CALL and m[2] >= SYNC_SERIAL and f.get(W.F_MEMBER) == 'GetId') or \
                (m[0] in (W.METHOD_RETURN, W.ERROR) and f.get(W.F_REPLY_SERIAL, 0) >= SYNC_SERIAL)
            if stop and stop(m):
                hit = True
            if own_sync:
                for fd in fds:
                    os.close(fd)
                continue
            self.exchanges += 1
            self.lines.append('%s: %s' % (client.label, self.describe(client, m, fds)))
        return hit

    def drain_until(self, client, stop, timeout=SYNC_TIMEOUT):
        end = time.monotonic() + timeout
        while True:
            if self._take(client, stop):
                return True
            left = end - time.monotonic()
            if left <= 0:
                self.note(client, 'timeout')
                return False
            if not client._fill(left):
                self._take(client)
                return False

    def drain_idle(self, client, idle=IDLE):
        while not client.closed:
            before = len(client.rbuf)
            client._fill(idle)
            if len(client.rbuf) == before:
                break
        self._take(client)

    def _ping(self, c):
        """a GetId of c's own, read up to its reply: the daemon has handled
        everything c sent before, and c has read everything queued for it
        before the reply"""
        self.ping_no += 1
        serial = SYNC_SERIAL + self.ping_no
        c.write(W.message(W.METHOD_CALL, serial, {W.F_PATH: DRIVER_PATH, W.F_INTERFACE: DRIVER,
                                                   W.F_MEMBER: 'GetId', W.F_DESTINATION: DRIVER}), sync=True)
        self.drain_until(c, lambda m, s=serial: m[3].get(W.F_REPLY_SERIAL) == s)
        return (c.unique, serial)

    def sync(self):
        """every message that the steps so far caused, on every connection:
        first the connections that sent something ping (their messages have
        been handled once the replies are there), then every connection"""
        last = None
        pingable = [c for c in self.clients.values() if not c.closed and not c.monitor and c.unique is not None]
        for c in pingable:
            if c.wrote:
                self._ping(c)
        for c in pingable:
            if not c.closed:
                last = self._ping(c)
        for c in self.clients.values():
            c.wrote = False
            if c.closed:
                continue
            if c.monitor and c.monitor_all and last:
                self.drain_until(c, lambda m: m[0] in (W.METHOD_RETURN, W.ERROR) and
                                 m[3].get(W.F_REPLY_SERIAL) == last[1] and m[3].get(W.F_DESTINATION) == last[0])
            elif c.unique is None or c.monitor:
                self.drain_idle(c)

    # script verbs ----------------------------------------------------------
    def step(self, what):
        self.sync()
        self.step_no += 1
        # (with mapped names, a step that names a connection by its unique
        # name names it by its label)
        self.lines.append('== %d %s' % (self.step_no, what if EXACT_NAMES else self.norm_str(what)))

    def connect(self, label, ident=None, hello=True, auth=True, negotiate_fds=True):
        self.serialize(label)
        c = Client(self, label, ident)
        self.clients[label] = c
        if auth and not c.auth(negotiate_fds):
            return c
        if hello:
            self.hello(label)
        return c

    def hello(self, label, flags=0):
        c = self.clients[label]
        c.hello_serial = c.next_serial()
        self.send(label, W.METHOD_CALL, dest=DRIVER, path=DRIVER_PATH, iface=DRIVER, member='Hello',
                  flags=flags, serial=c.hello_serial)
        self.drain_until(c, lambda m: m[3].get(W.F_REPLY_SERIAL) == c.hello_serial, timeout=SYNC_TIMEOUT)

    def serialize(self, label):
        """what two connections do in one step is ordered: before label acts,
        what another connection sent has been handled"""
        if self.last_actor not in (None, label) and any(c.wrote for c in self.clients.values()):
            self.sync()
        self.last_actor = label

    def send(self, label, typ, dest=None, path=None, iface=None, member=None, sig='', body=(), flags=0,
             error_name=None, reply_serial=None, serial=None, fds=(), unix_fds=None, sender=None, raw_body=None):
        self.serialize(label)
        c = self.clients[label]
        if serial is None:
            serial = c.next_serial()
        f = {}
        for code, v in ((W.F_PATH, path), (W.F_INTERFACE, iface), (W.F_MEMBER, member), (W.F_ERROR_NAME, error_name),
                        (W.F_REPLY_SERIAL, reply_serial), (W.F_DESTINATION, self.resolve(dest)),
                        (W.F_SENDER, self.resolve(sender))):
            if v is not None:
                f[code] = v
        n = len(fds) if unix_fds is None else unix_fds
        if n:
            f[W.F_UNIX_FDS] = n
        if typ == W.METHOD_CALL and member:
            self.calls[(label, serial)] = member
        c.write(W.message(typ, serial, f, sig, body, flags, raw_body=raw_body), fds)
        return serial

    def call_driver(self, label, member, sig='', body=(), iface=DRIVER, flags=0, dest=DRIVER, path=DRIVER_PATH):
        return self.send(label, W.METHOD_CALL, dest=dest, path=path, iface=iface, member=member, sig=sig,
                         body=body, flags=flags)

    def become_monitor(self, label, rules=(), ident=None):
        """connect label and make it a monitor with rules"""
        c = self.connect(label, ident)
        serial = self.call_driver(label, 'BecomeMonitor', 'asu', (list(rules), 0),
                                  iface='org.freedesktop.DBus.Monitoring')
        got = []
        self.drain_until(c, lambda m: m[3].get(W.F_REPLY_SERIAL) == serial and got.append(m[0]) is None)
        c.monitor = got == [W.METHOD_RETURN]
        c.monitor_all = not rules
        return c

    def wait_reply(self, label, serial, timeout=10.0):
        """read label's messages until the reply to serial (activation)"""
        c = self.clients[label]
        return self.drain_until(c, lambda m: m[0] in (W.METHOD_RETURN, W.ERROR)
                                and m[3].get(W.F_REPLY_SERIAL) == serial, timeout)

    def pause(self, secs):
        """let something outside the script happen (a service exiting)"""
        time.sleep(secs)

    def resolve(self, name):
        """@label stands for the unique name of that client on this daemon"""
        if isinstance(name, str) and name.startswith('@'):
            c = self.clients.get(name[1:])
            return c.unique if c and c.unique else ':1.999999'
        return name

    def register_fd(self, fd, name):
        st = os.fstat(fd)
        self.fd_names[(st.st_dev, st.st_ino)] = name

    def disconnect(self, label):
        self.serialize(label)
        c = self.clients[label]
        if not c.closed:
            c.s.close()
            c.closed = True
            # the daemon notices the hang-up in its own time
            time.sleep(0.05)
        for fd in c.fds:
            os.close(fd)
        c.fds = []

    def stop_daemon(self):
        """SIGTERM to the daemon, then every connection read until the
        daemon has closed it (what each sees of the others going)"""
        self.sync()
        self.daemon.p.send_signal(signal.SIGTERM)
        end = time.monotonic() + START_TIMEOUT
        for c in self.clients.values():
            while not c.closed and time.monotonic() < end:
                c._fill(0.5)
            self._take(c)
        try:
            self.daemon.p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass

    def finish(self):
        self.step('end')
        for label in list(self.clients):
            self.disconnect(label)
        if not self.daemon.alive():
            self.lines.append('daemon: exited %s' % self.daemon.p.returncode)


def run_script(binary, conf_text, tmp, label, script, servicedir=None, base=None, keep_user=False, late=None):
    """the transcript of script run against one daemon; with late, a
    directory for what the script makes appear while the daemon runs
    (late_config(): service directories, an includedir, XDG directories),
    as Session.late"""
    d = Daemon(binary, conf_text, tmp, label, servicedir, base, keep_user, late)
    try:
        s = Session(d)
        s.late = late
        script(s)
        s.finish()
        if EXACT_NAMES:
            s.lines.append('names: ' + ' '.join('%s=%s' % (c.label, c.unique) for c in s.clients.values()))
        return s.lines, s.exchanges
    finally:
        d.stop()


# the reference and busbridged run each script side by side (run_pair());
# BUSDIFF_SIDE_BY_SIDE=0 runs them one after the other
SIDE_BY_SIDE = os.environ.get('BUSDIFF_SIDE_BY_SIDE', '1') != '0'


def run_pair(ref_binary, binary, conf_text, tmp, labels, script, servicedir=None, base=None, keep_user=False,
             late=None):
    """run_script() against the reference and against busbridged: the
    transcripts and the reference's count of exchanges.  The reference runs
    in a child process while busbridged runs here: each daemon has its own
    socket, configuration and log (labels), and nothing of one run reaches
    the other.  A script with late directories runs them one after the
    other: both daemons watch the same paths there.  An exception of
    either run is raised here, the reference's first"""
    ref_label, label = labels
    if late or not SIDE_BY_SIDE:
        ref, n = run_script(ref_binary, conf_text, tmp, ref_label, script, servicedir, base, keep_user, late)
        got, _ = run_script(binary, conf_text, tmp, label, script, servicedir, base, keep_user, late)
        return ref, got, n
    import pickle
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = ('ok', run_script(ref_binary, conf_text, tmp, ref_label, script, servicedir, base, keep_user))
        except BaseException as exc:   # noqa: B902 (the parent raises it)
            out = ('error', '%s: %s' % (type(exc).__name__, exc))
        try:
            with os.fdopen(w, 'wb') as f:
                f.write(pickle.dumps(out))
        finally:
            os._exit(0)
    os.close(w)
    got = err = None
    try:
        got, _ = run_script(binary, conf_text, tmp, label, script, servicedir, base, keep_user)
    except Exception as exc:
        err = exc
    finally:
        with os.fdopen(r, 'rb') as f:
            data = f.read()
        os.waitpid(pid, 0)
    status, ref = pickle.loads(data) if data else ('error', 'the reference run ended without a result')
    if status != 'ok':
        raise RuntimeError(ref)
    if err is not None:
        raise err
    return ref[0], got, ref[1]


def canonical(lines):
    """a transcript with the lines of each step ordered by connection (the
    order of one connection's lines is kept): which connection a test
    client happens to read first is not the daemon's doing"""
    out, block = [], []

    def flush():
        block.sort(key=lambda x: x.split(':', 1)[0])
        out.extend(block)
        del block[:]
    for line in lines:
        if line.startswith('== ') or line.startswith('names: '):
            flush()
            out.append(line)
        else:
            block.append(line)
    flush()
    return out


def compare(a, b):
    """the first differing lines of two transcripts, with context"""
    import difflib
    a, b = canonical(a), canonical(b)
    if a == b:
        return None
    return '\n'.join(list(difflib.unified_diff(a, b, 'dbus-daemon', 'busbridged', n=3, lineterm=''))[:80])
