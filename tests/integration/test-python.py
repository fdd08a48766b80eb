#!/usr/bin/python3
# dbus-python (libdbus) and GLib against the bus: a service process with
# methods of every kind, name queueing and its signals, signal routing by
# match rules, unix fd passing, a 32 MiB message, NoReply, unrequested
# replies.  Prints TAP.
#
# Needs Debian's python3 (dbus-python and python3-gi); run.sh provides
# DBUS_SESSION_BUS_ADDRESS, TEST_TMP, TEST_CONFIG and BUS_DAEMON.
import os
import re
import select
import shutil
import subprocess
import sys
import time
import traceback

import dbus
import dbus.bus
import dbus.lowlevel as L
import dbus.mainloop.glib
import dbus.types
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
ADDR = os.environ['DBUS_SESSION_BUS_ADDRESS']
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = os.path.join(os.environ['TEST_TMP'], 'test-python.d')
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
DBUS = ('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus')
IFACE, PATH = 'com.example.Test', '/com/example/Test'
SVC_NAME = 'com.example.PyTest'
NO_REPLY = 'org.freedesktop.DBus.Error.NoReply'

# ---------------------------------------------------------------- TAP
_n = 0
_children = []


def tap(good, desc, diag=''):
    global _n
    _n += 1
    if good:
        print('ok %d - %s' % (_n, desc))
    else:
        print('not ok %d - %s%s' % (_n, desc, (': ' + diag) if diag else ''))
    sys.stdout.flush()


def case(desc):
    """decorator: run the function now, one TAP line; it passes unless it
    raises (AssertionError's text, or any exception, is the diagnosis)"""
    def run(func):
        try:
            func()
            tap(True, desc)
        except AssertionError as e:
            tap(False, desc, str(e))
        except Exception as e:
            tap(False, desc, '%s: %s' % (type(e).__name__, e))
            traceback.print_exc(file=sys.stderr)
        return func
    return run


def eq(got, want, what=''):
    assert got == want, '%s: got %r, want %r' % (what or 'value', got, want)


# ---------------------------------------------------------------- helpers
def spin(cond=lambda: False, timeout=5.0):
    """run the GLib main loop until cond() or the timeout; returns cond()"""
    ctx = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while True:
        while ctx.pending():
            ctx.iteration(False)
        if cond():
            return True
        if time.monotonic() >= deadline:
            return False
        GLib.timeout_add(10, lambda: False)
        ctx.iteration(True)


class Peer:
    """one connection to a bus, recording every signal, return and error it
    receives (in order) through a message filter"""

    def __init__(self, addr=ADDR):
        self.c = dbus.bus.BusConnection(addr)
        self.name = self.c.get_unique_name()
        self.log = []
        self.fences = []
        self.on_call = None
        self.c.add_message_filter(self._filter)

    def _filter(self, conn, msg):
        t = msg.get_type()
        if t == L.MESSAGE_TYPE_METHOD_CALL and msg.get_interface() == 'com.example.Fence':
            self.fences.append(msg.get_args_list()[0])
            return L.HANDLER_RESULT_HANDLED
        if t == L.MESSAGE_TYPE_METHOD_CALL and self.on_call:
            return self.on_call(msg)
        if t in (L.MESSAGE_TYPE_SIGNAL, L.MESSAGE_TYPE_METHOD_RETURN, L.MESSAGE_TYPE_ERROR):
            self.log.append((t, msg.get_sender(), msg.get_destination(), msg.get_path(),
                             msg.get_interface(), msg.get_member(), msg.get_reply_serial(),
                             msg.get_error_name(), [unwrap(a) for a in msg.get_args_list()]))
        return L.HANDLER_RESULT_NOT_YET_HANDLED

    def drv(self, method, sig='', *args):
        return self.c.call_blocking(*DBUS, method, sig, args)

    def match(self, rule):
        self.drv('AddMatch', 's', rule)

    def signals(self, member=None, iface=None):
        """[(member, args, path, sender, destination)] of the signals received"""
        return [(m, a, p, s, d) for (t, s, d, p, i, m, r, e, a) in self.log
                if t == L.MESSAGE_TYPE_SIGNAL and (member is None or m == member)
                and (iface is None or i == iface)]

    def sig_args(self, member, iface=None):
        return [a for (m, a, p, s, d) in self.signals(member, iface)]

    def send_signal(self, path, iface, member, sig='', args=(), dest=None):
        m = L.SignalMessage(path, iface, member)
        if dest:
            m.set_destination(dest)
        if sig:
            m.append(*args, signature=sig)
        self.c.send_message(m)

    def close(self):
        self.c.close()


_fence_n = 0


def fence(sender, *receivers):
    """a method call (no reply wanted) from sender to each receiver, and wait
    until each has it: everything the sender sent before has then arrived.
    (A method call, not a unicast signal, so that the fence does not depend
    on what the signal tests test.)"""
    global _fence_n
    _fence_n += 1
    tok = 'fence-%d' % _fence_n
    for r in receivers:
        m = L.MethodCallMessage(r.name, '/com/example/Fence', 'com.example.Fence', 'Fence')
        m.set_no_reply(True)
        m.append(tok, signature='s')
        sender.c.send_message(m)
    ok = spin(lambda: all(tok in r.fences for r in receivers))
    assert ok, 'fence method call did not arrive'


def unwrap(v):
    """dbus-python values to plain python ones (for comparisons and messages)"""
    if isinstance(v, (dbus.ByteArray, bytes)):
        return bytes(v)
    if isinstance(v, dict):
        return {unwrap(k): unwrap(x) for k, x in v.items()}
    if isinstance(v, dbus.Struct):
        return tuple(unwrap(x) for x in v)
    if isinstance(v, list):
        return [unwrap(x) for x in v]
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, dbus.types.UnixFd):
        return v
    return v


def start_service(name, addr=ADDR):
    ready = os.path.join(TMP, 'ready.' + name)
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=addr, SERVICE_LIFETIME='60')
    p = subprocess.Popen([sys.executable, os.path.join(HERE, 'py-service.py'), name, ready], env=env)
    _children.append(p)
    deadline = time.monotonic() + 10
    while not os.path.exists(ready):
        if p.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError('service %s did not start' % name)
        time.sleep(0.02)
    unique, pid = open(ready).read().split()
    return p, unique, int(pid)


def start_bus(config_text, tag):
    """a bus of our own: BUS_DAEMON with config_text; returns (Popen, address)"""
    conf = os.path.join(TMP, tag + '.conf')
    with open(conf, 'w') as f:
        f.write(config_text)
    p = subprocess.Popen([os.environ['BUS_DAEMON'], '--config-file=' + conf, '--nofork', '--print-address'],
                         stdout=subprocess.PIPE, stderr=open(os.path.join(TMP, tag + '.log'), 'w'))
    _children.append(p)
    r, _, _ = select.select([p.stdout], [], [], 10)
    line = p.stdout.readline().decode().strip() if r else ''
    if not line:
        raise RuntimeError('bus %s did not start: %s' % (tag, open(os.path.join(TMP, tag + '.log')).read()))
    return p, line


def cleanup():
    for p in _children:
        if p.poll() is None:
            p.terminate()
    for p in _children:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# ================================================================ a service
client = Peer()
try:
    svc_proc, svc_unique, svc_pid = start_service(SVC_NAME)
    svc_error = None
except Exception as e:
    svc_error = str(e)


def call(method, sig='', args=(), timeout=10, **kw):
    assert svc_error is None, svc_error
    return client.c.call_blocking(SVC_NAME, PATH, IFACE, method, sig, args, timeout=timeout, **kw)


def echo(sig, *args, **kw):
    r = call('Echo', sig, args, **kw)
    return r


@case('Echo of every basic type keeps the values and the types')
def _():
    vals = (255, True, -32768, 65535, -2 ** 31, 2 ** 32 - 1, -2 ** 63, 2 ** 64 - 1, -3.25,
            'ünï cödé ☃ \u2603', '/a/b_c/D9', 'a{sv}(iu)')
    r = echo('ybnqiuxtdsog', *vals)
    types = (dbus.Byte, dbus.Boolean, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64,
             dbus.UInt64, dbus.Double, dbus.String, dbus.ObjectPath, dbus.Signature)
    eq([type(x) for x in r], list(types), 'types')
    eq([unwrap(x) for x in r], list(vals), 'values')


@case('Echo of nested containers: a{sa(iv)}, aav, (i(s(ay))), a{ia{sv}}')
def _():
    a = {'one': [(1, dbus.String('x', variant_level=1)), (2, dbus.Int64(-5, variant_level=1))], 'none': []}
    b = [[dbus.Boolean(True, variant_level=1)], [], [dbus.Array([1, 2], signature='i', variant_level=1)]]
    c = (7, ('seven', (dbus.ByteArray(b'\x00\x01\xff'),)))
    d = {1: {'k': dbus.Double(0.5, variant_level=1)}, -1: {}}
    r = echo('a{sa(iv)}aav(i(s(ay)))a{ia{sv}}', a, b, c, d, byte_arrays=True)
    eq(unwrap(r[0]), {'one': [(1, 'x'), (2, -5)], 'none': []}, 'a{sa(iv)}')
    eq(unwrap(r[1]), [[True], [], [[1, 2]]], 'aav')
    eq(unwrap(r[2]), (7, ('seven', (b'\x00\x01\xff',))), '(i(s(ay)))')
    eq(unwrap(r[3]), {1: {'k': 0.5}, -1: {}}, 'a{ia{sv}}')
    eq(type(r[0]['one'][1][1]), dbus.Int64, 'type inside the variant')


@case('Echo of variants: a variant in a variant, of a struct, of a dict, av of mixed types')
def _():
    vv = dbus.String('deep', variant_level=2)
    vs = dbus.Struct((1, 'two', dbus.UInt64(3)), signature='ist', variant_level=1)
    vd = dbus.Dictionary({'a': dbus.UInt32(1, variant_level=1)}, signature='sv', variant_level=1)
    av = [dbus.Int32(1, variant_level=1), dbus.String('s', variant_level=1), dbus.Double(2.0, variant_level=1),
          dbus.Array(['x'], signature='s', variant_level=1)]
    r = echo('vvvav', vv, vs, vd, av)
    eq(r[0].variant_level, 2, 'variant level of v(v(s))')
    eq(str(r[0]), 'deep', 'v(v(s))')
    eq(unwrap(r[1]), (1, 'two', 3), 'v((ist))')
    eq(type(r[1][2]), dbus.UInt64, 'type in the struct')
    eq(unwrap(r[2]), {'a': 1}, 'v(a{sv})')
    eq(unwrap(r[3]), [1, 's', 2.0, ['x']], 'av')
    eq([type(x) for x in r[3]], [dbus.Int32, dbus.String, dbus.Double, dbus.Array], 'av types')


@case('Echo of dicts with byte, object-path, uint64 and string keys, and empty ones')
def _():
    r = echo('a{yv}a{ob}a{ts}a{s(ai)}a{sv}', {0: dbus.Byte(1, variant_level=1), 255: dbus.String('x', variant_level=1)},
             {'/a': True, '/a/b': False}, {2 ** 64 - 1: 'max', 0: ''}, {'k': ([1, 2, 3],)}, {})
    eq(unwrap(r[0]), {0: 1, 255: 'x'}, 'a{yv}')
    eq(unwrap(r[1]), {'/a': True, '/a/b': False}, 'a{ob}')
    eq(unwrap(r[2]), {2 ** 64 - 1: 'max', 0: ''}, 'a{ts}')
    eq(unwrap(r[3]), {'k': ([1, 2, 3],)}, 'a{s(ai)}')
    eq(unwrap(r[4]), {}, 'empty a{sv}')


@case('Echo of no arguments, empty strings and empty arrays')
def _():
    eq(call('Echo'), None, 'no arguments')
    r = echo('sasayg', '', [], b'', '', byte_arrays=True)
    eq([unwrap(x) for x in r], ['', [], b'', ''], 'empty values')


@case('a method raising a D-Bus error: the caller gets its name and message')
def _():
    try:
        call('Fail', 's', ('it failed on purpose',))
    except dbus.DBusException as e:
        eq(e.get_dbus_name(), 'com.example.Test.Error.Failed', 'error name')
        eq(e.get_dbus_message(), 'it failed on purpose', 'error message')
    else:
        raise AssertionError('no error')


@case('a method that sleeps 300 ms replies within the timeout')
def _():
    t = time.monotonic()
    call('Sleep', 'u', (300,), timeout=10)
    dt = time.monotonic() - t
    assert 0.29 <= dt < 5, 'took %.3f s' % dt


@case('a method that never replies: NoReply when the client timeout (0.5 s) expires')
def _():
    t = time.monotonic()
    try:
        call('NeverReply', timeout=0.5)
    except dbus.DBusException as e:
        dt = time.monotonic() - t
        eq(e.get_dbus_name(), NO_REPLY, 'error name')
        assert 0.4 <= dt < 3, 'after %.3f s' % dt
    else:
        raise AssertionError('it replied')
    # and the service is still fine
    eq(unwrap(echo('s', 'after')), 'after', 'next call')


@case('unix fd passing: a pipe sent in a method call, the service reads from it')
def _():
    r, w = os.pipe()
    os.write(w, b'through the pipe')
    os.close(w)
    got = call('ReadFd', 'h', (dbus.types.UnixFd(r),))
    os.close(r)
    eq(str(got), 'through the pipe', 'data the service read')


@case('unix fd passing: a pipe in a reply, the client reads from it')
def _():
    fd = call('GetFd')
    assert isinstance(fd, dbus.types.UnixFd), 'got %r' % (fd,)
    f = fd.take()
    data = os.read(f, 4096)
    os.close(f)
    eq(data, b'data from the service', 'data read from the fd')


@case('a 32 MiB byte array round trip (Echo ay)')
def _():
    data = bytes(range(256)) * (32 * 1024 * 4)
    assert len(data) == 32 * 1024 * 1024
    t = time.monotonic()
    r = echo('ay', dbus.ByteArray(data), timeout=50, byte_arrays=True)
    dt = time.monotonic() - t
    assert bytes(r) == data, 'different data back (%d bytes)' % len(r)
    print('# 32 MiB round trip in %.2f s' % dt)


@case('a call to a peer that disconnects without replying: NoReply from the bus, at once')
def _():
    p, unique, pid = start_service(SVC_NAME + '.Dying')
    t = time.monotonic()
    try:
        client.c.call_blocking(SVC_NAME + '.Dying', PATH, IFACE, 'ExitWithoutReply', '', (), timeout=20)
    except dbus.DBusException as e:
        dt = time.monotonic() - t
        eq(e.get_dbus_name(), NO_REPLY, 'error name')
        assert dt < 5, 'only after %.1f s: the client timeout, not the bus' % dt
    else:
        raise AssertionError('it replied')
    p.wait(5)


@case('GetConnectionUnixProcessID and GetConnectionCredentials of the service')
def _():
    assert svc_error is None, svc_error
    eq(int(client.drv('GetConnectionUnixProcessID', 's', SVC_NAME)), svc_pid, 'pid')
    cr = client.drv('GetConnectionCredentials', 's', SVC_NAME)
    eq(int(cr['ProcessID']), svc_pid, 'ProcessID')
    eq(int(cr['UnixUserID']), os.getuid(), 'UnixUserID')


@case('GetConnectionCredentials has no ProcessFD, as dbus-daemon 1.14')
def _():
    assert svc_error is None, svc_error
    cr = client.drv('GetConnectionCredentials', 's', SVC_NAME)
    assert 'ProcessFD' not in cr, sorted(cr)

# ================================================================ name queueing
# dbus-daemon's queue: a plain request queues at the tail; a REPLACE_EXISTING
# request that cannot replace queues at the head (right after the owner); a
# replaced owner (without DO_NOT_QUEUE) goes back to the head of the queue.
Q = 'com.example.PyTest.Queue'
PRIMARY, IN_QUEUE, EXISTS, ALREADY = 1, 2, 3, 4
RELEASED, NON_EXISTENT, NOT_OWNER = 1, 2, 3
ALLOW_REPLACEMENT, REPLACE_EXISTING, DO_NOT_QUEUE = 1, 2, 4
NOC = 'NameOwnerChanged'
qa, qb, qc, qo = Peer(), Peer(), Peer(), Peer()
qo.match("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
         "member='NameOwnerChanged',arg0='%s'" % Q)
qc.match("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'" % Q)


def queue():
    try:
        return [str(x) for x in qo.drv('ListQueuedOwners', 's', Q)]
    except dbus.DBusException as e:
        return e.get_dbus_name()


def owner():
    try:
        return str(qo.drv('GetNameOwner', 's', Q))
    except dbus.DBusException as e:
        return e.get_dbus_name()


@case('after Hello: NameAcquired of the unique name from the driver, and nothing else')
def _():
    p = Peer()
    fence(qo, p)
    eq([(t, s, d, m, a) for (t, s, d, pa, i, m, r, e, a) in p.log],
       [(L.MESSAGE_TYPE_SIGNAL, 'org.freedesktop.DBus', p.name, 'NameAcquired', [p.name])], 'received')
    p.close()


# every owner the name had, in order, as observed after each step: the
# signals are checked against this history, so that they are judged on their
# own even where the queue order differs from the expected one
owners = ['']


def note():
    o = owner()
    o = '' if o.startswith('org.freedesktop.DBus.Error') else o
    if o != owners[-1]:
        owners.append(o)


def qcase(desc):
    def deco(f):
        def g():
            try:
                f()
            finally:
                note()
        return case(desc)(g)
    return deco


def transitions(upto=None):
    h = owners[:upto] if upto else owners
    return list(zip(h, h[1:]))


def expected_owner_signals(name, upto=None):
    r = []
    for old, new in transitions(upto):
        if old == name:
            r.append('NameLost')
        if new == name:
            r.append('NameAcquired')
    return r


def owner_signals(p):
    return [m for (m, a, pa, s, d) in p.signals() if m in ('NameAcquired', 'NameLost') and a == [Q]]


@qcase('RequestName ALLOW_REPLACEMENT of a free name: primary owner')
def _():
    eq(qa.drv('RequestName', 'su', Q, ALLOW_REPLACEMENT), PRIMARY, 'reply')
    eq(owner(), qa.name, 'GetNameOwner')
    eq(queue(), [qa.name], 'ListQueuedOwners')


@qcase('RequestName by a second connection: in queue; ListQueuedOwners is [owner, queued]')
def _():
    eq(qb.drv('RequestName', 'su', Q, 0), IN_QUEUE, 'reply')
    eq(queue(), [qa.name, qb.name], 'ListQueuedOwners')
    eq(owner(), qa.name, 'GetNameOwner')


@qcase('RequestName DO_NOT_QUEUE of an owned name: exists, not queued')
def _():
    eq(qc.drv('RequestName', 'su', Q, DO_NOT_QUEUE), EXISTS, 'reply')
    eq(queue(), [qa.name, qb.name], 'ListQueuedOwners')


@qcase('RequestName REPLACE_EXISTING when the owner allows replacement: primary; the old owner queued first')
def _():
    eq(qc.drv('RequestName', 'su', Q, REPLACE_EXISTING | DO_NOT_QUEUE), PRIMARY, 'reply')
    eq(owner(), qc.name, 'GetNameOwner')
    eq(queue(), [qc.name, qa.name, qb.name], 'ListQueuedOwners')


@qcase('RequestName by the primary owner: already owner')
def _():
    eq(qc.drv('RequestName', 'su', Q, 0), ALREADY, 'reply')


@qcase('RequestName DO_NOT_QUEUE by a queued connection: exists, and it leaves the queue')
def _():
    eq(qb.drv('RequestName', 'su', Q, DO_NOT_QUEUE), EXISTS, 'reply')
    eq(queue(), [qc.name, qa.name], 'ListQueuedOwners')


@qcase('RequestName REPLACE_EXISTING when the owner does not allow replacement: in queue, at its head')
def _():
    eq(qb.drv('RequestName', 'su', Q, REPLACE_EXISTING), IN_QUEUE, 'reply')
    eq(owner(), qc.name, 'GetNameOwner')
    eq(queue(), [qc.name, qb.name, qa.name], 'ListQueuedOwners')


@qcase('ReleaseName by the owner: released; the first queued connection owns the name')
def _():
    eq(qc.drv('ReleaseName', 's', Q), RELEASED, 'reply')
    eq(owner(), qb.name, 'GetNameOwner')
    eq(queue(), [qb.name, qa.name], 'ListQueuedOwners')


@qcase('ReleaseName by a queued connection: released, it leaves the queue, the owner stays')
def _():
    eq(qa.drv('ReleaseName', 's', Q), RELEASED, 'reply')
    eq(queue(), [qb.name], 'ListQueuedOwners')
    eq(owner(), qb.name, 'GetNameOwner')


@qcase('ReleaseName by a connection neither owner nor queued: not owner; of a name nobody has: non-existent')
def _():
    eq(qc.drv('ReleaseName', 's', Q), NOT_OWNER, 'not owner')
    eq(qc.drv('ReleaseName', 's', Q + '.Nobody'), NON_EXISTENT, 'non-existent')


b_name = qb.name
b_signals = None
b_upto = None


@qcase('a queued connection that disconnects leaves the queue; the owner disconnects: the next one owns the name')
def _():
    global b_signals, b_upto
    eq(qa.drv('RequestName', 'su', Q, 0), IN_QUEUE, 'a queued again')
    qd = Peer()
    eq(qd.drv('RequestName', 'su', Q, 0), IN_QUEUE, 'd queued')
    eq(queue(), [qb.name, qa.name, qd.name], 'queue before')
    qd.close()
    assert spin(lambda: queue() == [qb.name, qa.name]), 'after d left: %r' % queue()
    fence(qo, qb)          # b has its signals before it goes
    b_signals = owner_signals(qb)
    note()
    b_upto = len(owners)
    qb.close()
    assert spin(lambda: queue() == [qa.name]), 'after the owner left: %r' % queue()
    eq(owner(), qa.name, 'GetNameOwner')


try:
    fence(qo, qa, qc)
    qfence = None
except AssertionError as e:
    qfence = str(e)


@case('the owner history was as expected: a, c (replacing a), b (queued at the head), a')
def _():
    eq(owners, ['', qa.name, qc.name, b_name, qa.name], 'owners')


@case('NameOwnerChanged: seen by the subscriber once per owner change, in order, nothing for queue changes')
def _():
    assert qfence is None, qfence
    eq(qo.sig_args(NOC), [[Q, old, new] for old, new in transitions()], 'NameOwnerChanged')
    for (m, a, p, s, d) in qo.signals(NOC):
        eq((s, d, p), ('org.freedesktop.DBus', None, '/org/freedesktop/DBus'), 'sender, destination, path')


@case('NameAcquired and NameLost: to each owner in turn, in order (the replaced owner: acquired, lost, acquired)')
def _():
    assert qfence is None, qfence
    eq(owner_signals(qa), expected_owner_signals(qa.name), 'a')
    eq(b_signals, expected_owner_signals(b_name, b_upto), 'b')
    eq(owner_signals(qc), expected_owner_signals(qc.name), 'c')
    eq(owner_signals(qo), [], 'the observer')
    for (m, a, p, s, d) in qc.signals('NameAcquired') + qc.signals('NameLost'):
        eq((s, d, p), ('org.freedesktop.DBus', qc.name, '/org/freedesktop/DBus'), 'sender, destination, path')


@case('the driver\'s broadcasts reach only subscribers: no NameOwnerChanged without a match rule')
def _():
    assert qfence is None, qfence
    eq(qa.signals(NOC), [], 'a has no rule')


@case('one connection watching its own name: NameOwnerChanged before NameAcquired, NameLost before NameOwnerChanged')
def _():
    assert qfence is None, qfence
    seq = [(m, a) for (m, a, p, s, d) in qc.signals() if m in (NOC, 'NameAcquired', 'NameLost') and a[0] == Q]
    want = []
    for old, new in transitions():
        if new == qc.name:
            want += [(NOC, [Q, old, new]), ('NameAcquired', [Q])]
        elif old == qc.name:
            want += [('NameLost', [Q]), (NOC, [Q, old, new])]
        else:
            want.append((NOC, [Q, old, new]))
    eq(seq, want, 'c')

for p in (qa, qc, qo):
    p.close()

# ================================================================ signal routing
S = Peer()
SIG = 'com.example.PyTest.Sig'
m_yes, m_no, m_none = Peer(), Peer(), Peer()
m_yes.match("type='signal',interface='%s'" % SIG)
m_no.match("type='signal',interface='com.example.PyTest.Other'")
S.send_signal('/com/example/sig', SIG, 'Ping', 's', ('broadcast',))
S.send_signal('/com/example/sig', SIG, 'Direct', 's', ('unicast',), dest=m_none.name)
try:
    fence(S, m_yes, m_no, m_none)
    sfence = None
except AssertionError as e:
    sfence = str(e)


@case('a broadcast signal reaches the connection whose match rule matches it, with sender and path')
def _():
    assert sfence is None, sfence
    eq([(m, a, p, s, d) for (m, a, p, s, d) in m_yes.signals(iface=SIG)],
       [('Ping', ['broadcast'], '/com/example/sig', S.name, None)], 'signals')


@case('a broadcast signal does not reach a connection whose rule does not match, nor one without rules')
def _():
    assert sfence is None, sfence
    eq(m_no.signals(iface=SIG), [], 'non-matching rule')
    eq(m_none.sig_args('Ping'), [], 'no rules')


@case('a unicast signal reaches its destination (without a match rule) and nobody else')
def _():
    assert sfence is None, sfence
    eq([(m, a, d) for (m, a, p, s, d) in m_none.signals(iface=SIG)], [('Direct', ['unicast'], m_none.name)], 'destination')
    eq(m_yes.sig_args('Direct'), [], 'a connection whose rule matches the interface')


def rule_case(desc, rule, member, emits, want, path='/com/example/sig', sig='s'):
    @case(desc)
    def _():
        p = Peer()
        try:
            p.match(rule)
            for e in emits:
                if isinstance(e, tuple) and e and e[0] == '@path':
                    S.send_signal(e[1], SIG, member, sig, ('x',))
                else:
                    S.send_signal(path, SIG, member, sig, e if isinstance(e, tuple) else (e,))
            fence(S, p)
            if emits and isinstance(emits[0], tuple) and emits[0][0] == '@path':
                got = [pp for (m, a, pp, s, d) in p.signals(member, SIG)]
            else:
                got = [a if len(a) > 1 else a[0] for a in p.sig_args(member, SIG)]
            eq(got, want, 'received')
        finally:
            p.close()


rule_case("arg1='two' matches the second string argument only",
          "type='signal',interface='%s',member='Args',arg1='two'" % SIG, 'Args',
          [('one', 'two'), ('one', 'three'), ('two', 'one'), ('x', 'two')], [['one', 'two'], ['x', 'two']], sig='ss')
rule_case("arg0='a' with arg2='c' (both must match)",
          "type='signal',interface='%s',member='Args3',arg0='a',arg2='c'" % SIG, 'Args3',
          [('a', 'b', 'c'), ('a', 'b', 'd'), ('z', 'b', 'c')], [['a', 'b', 'c']], sig='sss')
rule_case("path_namespace='/com/example/ns' matches the path and below, not siblings",
          "type='signal',interface='%s',member='Path',path_namespace='/com/example/ns'" % SIG, 'Path',
          [('@path', p) for p in ('/com/example/ns', '/com/example/ns/a/b', '/com/example/nsx', '/com/example', '/')],
          ['/com/example/ns', '/com/example/ns/a/b'])
rule_case("path='/com/example/exact' matches that path only",
          "type='signal',interface='%s',member='Exact',path='/com/example/exact'" % SIG, 'Exact',
          [('@path', p) for p in ('/com/example/exact', '/com/example/exact/sub', '/com/example')],
          ['/com/example/exact'])
rule_case("arg0namespace='com.example.ns' matches the name and below, not a longer sibling",
          "type='signal',interface='%s',member='Ns',arg0namespace='com.example.ns'" % SIG, 'Ns',
          ['com.example.ns', 'com.example.ns.sub.x', 'com.example.nsx', 'com.example', 'org.other'],
          ['com.example.ns', 'com.example.ns.sub.x'])
rule_case("arg0path='/aa/bb/' matches the arguments that are a /-ended prefix of it or that it is a prefix of",
          "type='signal',interface='%s',member='ArgPath',arg0path='/aa/bb/'" % SIG, 'ArgPath',
          ['/aa/bb/', '/aa/bb/cc', '/aa/', '/', '/aa', '/aa/b', '/aa/bbc', '/aa/bb'],
          ['/aa/bb/', '/aa/bb/cc', '/aa/', '/'])


@case("sender='a well-known name' matches the signals of its owner only")
def _():
    p, other = Peer(), Peer()
    try:
        eq(S.drv('RequestName', 'su', 'com.example.PyTest.SigSender', DO_NOT_QUEUE), PRIMARY, 'RequestName')
        p.match("type='signal',sender='com.example.PyTest.SigSender',member='Snd'")
        S.send_signal('/s', SIG, 'Snd', 's', ('owner',))
        other.send_signal('/s', SIG, 'Snd', 's', ('someone else',))
        fence(other, p)
        fence(S, p)
        eq(p.sig_args('Snd'), [['owner']], 'received')
    finally:
        p.close()
        other.close()


@case('after RemoveMatch the signals no longer arrive')
def _():
    p = Peer()
    try:
        rule = "type='signal',interface='%s',member='Removed'" % SIG
        p.match(rule)
        S.send_signal('/s', SIG, 'Removed', 's', ('first',))
        fence(S, p)
        p.drv('RemoveMatch', 's', rule)
        S.send_signal('/s', SIG, 'Removed', 's', ('second',))
        fence(S, p)
        eq(p.sig_args('Removed'), [['first']], 'received')
    finally:
        p.close()

for p in (m_yes, m_no, m_none):
    p.close()


@case('BecomeMonitor with rules without eavesdrop=true sees unicast messages (eavesdropping is implied; busctl monitor relies on it)')
def _():
    mon, a, b = Peer(), Peer(), Peer()
    try:
        eq(b.drv('RequestName', 'su', 'com.example.PyTest.MonTarget', DO_NOT_QUEUE), PRIMARY, 'RequestName')
        calls = []

        def on_call(msg):
            calls.append((msg.get_member(), msg.get_destination()))
            return L.HANDLER_RESULT_HANDLED
        mon.on_call = on_call
        mon.c.call_blocking(*DBUS[:2], 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu',
                            (["destination='com.example.PyTest.MonTarget'", "type='method_call',member='Probe'"], 0))
        for member in ('Probe', 'ToTarget'):
            m = L.MethodCallMessage('com.example.PyTest.MonTarget', '/x', 'com.example.X', member)
            m.set_no_reply(True)
            a.c.send_message(m)
        fence(a, b)
        spin(lambda: len(calls) >= 2, 2)
        eq(sorted(calls), [('Probe', 'com.example.PyTest.MonTarget'), ('ToTarget', 'com.example.PyTest.MonTarget')],
           'what the monitor saw')
    finally:
        for p in (mon, a, b):
            p.close()

# ================================================================ unrequested replies
# On the session config (eavesdrop="true" on the allow rules, as in Debian's
# session.conf) dbus-daemon delivers unrequested replies; with a policy
# that allows sending without eavesdropping it drops them.  That bus is ours.
try:
    text = open(os.environ['TEST_CONFIG']).read()
    sock = os.path.join(TMP, 'strict-bus')
    text = re.sub(r'<listen>.*?</listen>', '<listen>unix:path=%s</listen>' % sock, text)
    text = re.sub(r'<policy context="default">.*?</policy>',
                  '<policy context="default"><allow send_destination="*"/><allow receive_sender="*"/>'
                  '<allow own="*"/></policy>', text, flags=re.S)
    strict_proc, strict_addr = start_bus(text, 'strict')
    strict_error = None
except Exception as e:
    strict_error = str(e)


@case('replies and errors to serials never sent, and to a NO_REPLY_EXPECTED call, are not delivered')
def _():
    assert strict_error is None, strict_error
    a, b = Peer(strict_addr), Peer(strict_addr)
    # a's serials run far ahead of b's, so a message of a's carries a serial
    # b never used
    for i in range(300):
        m = L.MethodCallMessage('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetId')
        m.set_no_reply(True)
        a.c.send_message(m)
    assert m.get_serial() > 300, 'serial %d' % m.get_serial()
    r = L.MethodReturnMessage(m)
    r.set_destination(b.name)
    r.append('unrequested return', signature='s')
    a.c.send_message(r)
    e = L.ErrorMessage(m, 'com.example.Test.Error.Unrequested', 'unrequested error')
    e.set_destination(b.name)
    a.c.send_message(e)
    # b calls a without expecting a reply; a replies anyway
    got = []

    def on_call(msg):
        got.append(msg.get_member())
        rr = L.MethodReturnMessage(msg)
        rr.append('reply to a no-reply call', signature='s')
        a.c.send_message(rr)
        return L.HANDLER_RESULT_HANDLED
    a.on_call = on_call
    c = L.MethodCallMessage(a.name, '/x', 'com.example.X', 'NoReplyWanted')
    c.set_no_reply(True)
    b.c.send_message(c)
    assert spin(lambda: got), 'a never got the call'
    fence(a, b)
    eq([x for x in b.log if x[0] != L.MESSAGE_TYPE_SIGNAL and x[1] == a.name], [], 'replies from a that reached b')
    a.close()
    b.close()


@case('a second reply to an answered call is not delivered; the first one is')
def _():
    assert strict_error is None, strict_error
    a, b = Peer(strict_addr), Peer(strict_addr)

    def on_call(msg):
        for text in ('first', 'second'):
            rr = L.MethodReturnMessage(msg)
            rr.append(text, signature='s')
            a.c.send_message(rr)
        return L.HANDLER_RESULT_HANDLED
    a.on_call = on_call
    replies = []
    c = L.MethodCallMessage(a.name, '/x', 'com.example.X', 'Twice')
    b.c.send_message_with_reply(c, lambda msg: replies.append(msg.get_args_list()), 5)
    assert spin(lambda: replies), 'no reply'
    fence(a, b)
    eq([unwrap(x) for x in replies], [['first']], 'the pending call\'s reply')
    eq([x for x in b.log if x[0] != L.MESSAGE_TYPE_SIGNAL and x[1] == a.name], [], 'other replies from a that reached b')
    a.close()
    b.close()


cleanup()
print('1..%d' % _n)
