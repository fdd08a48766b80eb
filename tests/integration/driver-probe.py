#!/usr/bin/env python3
# driver-probe.py ADDRESS [SERVICEDIR [SECTION]]: raw conversations with the bus driver, printed
# as "TITLE: RESULT" lines; test-driver-diff.sh runs it against busbridged
# and dbus-daemon and compares.  Unique names are printed as they are (both
# buses number their clients the same way); what differs by nature (the
# bus id, pids, memory sizes) is masked.
import os
import re
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import dbuswire as W  # noqa: E402

path = W.parse_address(sys.argv[1])
servicedir = sys.argv[2] if len(sys.argv) > 2 else None   # the bus's <servicedir>
only = sys.argv[3] if len(sys.argv) > 3 else None
DBUS, DPATH, DIFACE = W.DRIVER
MASK_KEYS = {'ListMemPoolUsedBytes', 'ListMemPoolCachedBytes', 'ListMemPoolAllocatedBytes', 'IncomingBytes', 'OutgoingBytes', 'PeakIncomingBytes',
             'PeakOutgoingBytes', 'ListenerCount', 'ProcessID'}


# ---- bodies ---------------------------------------------------------------

def native(t, v):
    """a value of dbuswire's reader as this probe prints it: variants as
    (signature, value), dict arrays as dicts"""
    c = t[0]
    if c == 'v':
        return (v.sig, native(v.sig, v.value))
    if c == 'a' and t[1] == '{':
        kt, vt = W.split_sig(t[2:-1])
        return {k: native(vt, x) for k, x in v}
    if c == 'a':
        return [native(t[1:], x) for x in v]
    if c == '(':
        return tuple(native(st, x) for st, x in zip(W.split_sig(t[1:-1]), v))
    return v


def decode(sig, body):
    if not sig:
        return []
    try:
        return [native(t, v) for t, v in zip(W.split_sig(sig), W.unmarshal_body(sig, body))]
    except Exception as e:  # noqa: BLE001
        return ['<undecodable %s: %s>' % (sig, e)]


def fmt(v, key=None):
    if key in MASK_KEYS:
        return '<%s>' % type(v[1] if isinstance(v, tuple) and len(v) == 2 else v).__name__
    if isinstance(v, dict):
        return '{' + ', '.join('%s: %s' % (k, fmt(v[k], k)) for k in sorted(v)) + '}'
    if isinstance(v, list):
        return '[' + ', '.join(fmt(x) for x in v) + ']'
    if isinstance(v, tuple):
        return '(' + ', '.join(fmt(x) for x in v) + ')'
    if isinstance(v, str):
        # the probe's pid as a number of its own (not the digits of
        # another number that happen to contain it)
        v = re.sub(r'(?<![0-9])%d(?![0-9])' % os.getpid(), 'PID', v)
        if BUS_ID[0]:
            v = v.replace(BUS_ID[0], 'BUSID')
        return repr(v)
    return repr(v)


# ---- conversations -----------------------------------------------------------

def describe(m):
    typ, flags, serial, f, body = m
    kind = {W.METHOD_CALL: 'call', W.METHOD_RETURN: 'return', W.ERROR: 'error', W.SIGNAL: 'signal'}[typ]
    what = f.get(W.F_MEMBER) or f.get(W.F_ERROR_NAME) or ''
    parts = [kind, what]
    if typ == W.SIGNAL:
        parts.append('%s.%s' % (f.get(W.F_PATH), f.get(W.F_INTERFACE)))
    parts.append('from=%s to=%s' % (f.get(W.F_SENDER), f.get(W.F_DESTINATION)))
    if f.get(W.F_REPLY_SERIAL) is not None:
        parts.append('re=%d' % f[W.F_REPLY_SERIAL])
    if flags:
        parts.append('flags=%d' % flags)
    sig = f.get(W.F_SIGNATURE, '')
    parts.append('sig=%r' % sig)
    vals = decode(sig, body)
    if vals:
        parts.append(' '.join(fmt(v) for v in vals))
    return ' '.join(parts)


def drain(c, secs=0.1):
    out = []
    try:
        while True:
            out.append(c.recv_msg(secs))
    except socket.timeout:
        pass
    except (EOFError, OSError):
        out.append(('closed',))
    return out


_titles = set()


def show(title, msgs, c=None):
    while title in _titles:   # the same exchange again: its own title
        title += ' again'
    _titles.add(title)
    lines = []
    for m in msgs:
        lines.append('CLOSED' if m[0] == 'closed' else describe(m))
    print('%s: %s' % (title, ' | '.join(lines) if lines else '(nothing)'))
    sys.stdout.flush()


def connect(hello=True):
    c = W.Conn(path, auth=True, hello=False, timeout=5)
    if hello:
        s = c.next_serial()
        c.send(W.driver_call(s, 'Hello'))
        c.unique = W.first_string(c.wait_reply(s)[4])
        drain(c, 0.1)
    return c


def send(c, typ=W.METHOD_CALL, dest=DBUS, path=DPATH, iface=DIFACE, member=None, sig=None, body=b'', flags=0,
         extra=None):
    f = {}
    if path:
        f[W.F_PATH] = path
    if iface:
        f[W.F_INTERFACE] = iface
    if member:
        f[W.F_MEMBER] = member
    if dest:
        f[W.F_DESTINATION] = dest
    if extra:
        f.update(extra)
    try:
        c.send(W.marshal(typ, c.next_serial(), f, body, sig, flags))
    except OSError:
        pass


def ask(title, c, member, sig=None, body=b'', **kw):
    send(c, member=member, sig=sig, body=body, **kw)
    show(title, drain(c))


def wire(t, v):
    """native()'s inverse: (signature, value) variants as dbuswire's"""
    c = t[0]
    if c == 'v':
        return W.Variant(v[0], wire(v[0], v[1]))
    if c == 'a' and t[1] != '{':
        return [wire(t[1:], x) for x in v]
    return v


def enc(sig, *vals):
    return W.marshal_body(sig, [wire(t, v) for t, v in zip(W.split_sig(sig), vals)])


sections = []
BUS_ID = [None]

def section(f):
    sections.append(f)
    return f


@section
def pre_hello():
    # a first message other than Hello, then Hello, then Hello again
    c = connect(hello=False)
    ask('prehello GetId', c, 'GetId')
    ask('prehello then Hello', c, 'Hello')
    ask('prehello second Hello', c, 'Hello')
    ask('prehello GetId after', c, 'GetId')
    c.close()
    for title, kw in (('prehello call to a name', dict(dest='com.example.Nobody', member='Foo', iface='com.example.I')),
                      ('prehello call to a unique name', dict(dest=':1.0', member='Foo', iface='com.example.I')),
                      ('prehello call no-reply', dict(member='GetId', flags=1)),
                      ('prehello Peer.Ping', dict(member='Ping', iface='org.freedesktop.DBus.Peer')),
                      ('prehello Ping no destination', dict(dest=None, member='Ping', iface='org.freedesktop.DBus.Peer')),
                      ('prehello Hello no destination', dict(dest=None, member='Hello')),
                      ('prehello Hello no interface', dict(iface=None, member='Hello')),
                      ('prehello Hello wrong interface', dict(iface='org.freedesktop.DBus.Peer', member='Hello')),
                      ('prehello Hello with an argument', dict(member='Hello', sig='s', body=W.body_s('x'))),
                      ('prehello signal', dict(typ=W.SIGNAL, dest=None, member='Sig', iface='com.example.I')),
                      ('prehello signal to the driver', dict(typ=W.SIGNAL, member='Sig', iface='com.example.I')),
                      ('prehello reply', dict(typ=W.METHOD_RETURN, member=None, iface=None, path=None,
                                              extra={W.F_REPLY_SERIAL: 1})),
                      ('prehello error', dict(typ=W.ERROR, member=None, iface=None, path=None,
                                              extra={W.F_REPLY_SERIAL: 1, W.F_ERROR_NAME: 'a.b'})),
                      ):
        c = connect(hello=False)
        send(c, **kw)
        got = drain(c)
        if got and got[-1][0] == 'closed':
            show(title, got)
            continue
        send(c, member='Hello')
        show(title, got + drain(c))
        c.close()


@section
def unique_names():
    cs = [connect() for _ in range(3)]
    print('unique names: %s' % ' '.join(c.unique for c in cs))
    cs[1].close()
    c = connect()
    print('unique name after a close: %s' % c.unique)
    c.close()
    for x in cs:
        x.close()


@section
def no_destination():
    c = connect()
    r = connect()
    send(r, member='AddMatch', sig='s', body=W.body_s("type='signal',interface='com.example.I'"))
    drain(r)
    send(r, member='AddMatch', sig='s', body=W.body_s("type='method_call'"))
    drain(r)
    for title, kw in (('nodest GetId', dict(dest=None, member='GetId')),
                      ('nodest ListNames', dict(dest=None, member='ListNames')),
                      ('nodest Ping', dict(dest=None, member='Ping', iface='org.freedesktop.DBus.Peer')),
                      ('nodest GetMachineId', dict(dest=None, member='GetMachineId', iface='org.freedesktop.DBus.Peer')),
                      ('nodest Peer.Foo', dict(dest=None, member='Foo', iface='org.freedesktop.DBus.Peer')),
                      ('nodest Ping no interface', dict(dest=None, member='Ping', iface=None)),
                      ('nodest GetId no interface', dict(dest=None, member='GetId', iface=None)),
                      ('nodest Introspect', dict(dest=None, member='Introspect', iface='org.freedesktop.DBus.Introspectable')),
                      ('nodest other interface', dict(dest=None, member='Foo', iface='com.example.I')),
                      ('nodest other path Ping', dict(dest=None, path='/x', member='Ping', iface='org.freedesktop.DBus.Peer')),
                      ('nodest Ping no-reply', dict(dest=None, member='Ping', iface='org.freedesktop.DBus.Peer', flags=1)),
                      ('nodest GetId no-reply', dict(dest=None, member='GetId', flags=1)),
                      ('nodest Ping with args', dict(dest=None, member='Ping', iface='org.freedesktop.DBus.Peer', sig='s', body=W.body_s('x'))),
                      ('nodest signal', dict(typ=W.SIGNAL, dest=None, member='Sig', iface='com.example.I')),
                      ('nodest signal driver iface', dict(typ=W.SIGNAL, dest=None, member='NameOwnerChanged', iface=DIFACE)),
                      ('nodest reply', dict(typ=W.METHOD_RETURN, dest=None, member=None, iface=None, path=None, extra={W.F_REPLY_SERIAL: 1})),
                      ('nodest error', dict(typ=W.ERROR, dest=None, member=None, iface=None, path=None, extra={W.F_REPLY_SERIAL: 1, W.F_ERROR_NAME: 'a.b'})),
                      ('driver Peer.Ping', dict(member='Ping', iface='org.freedesktop.DBus.Peer')),
                      ('driver Ping no interface', dict(member='Ping', iface=None)),
                      ('driver GetMachineId', dict(member='GetMachineId', iface='org.freedesktop.DBus.Peer')),
                      ('driver GetId no interface', dict(member='GetId', iface=None)),
                      ('driver Foo no interface', dict(member='Foo', iface=None)),
                      ('driver other path', dict(path='/foo', member='GetId')),
                      ('driver root path', dict(path='/', member='GetId')),
                      ('driver other interface', dict(member='GetId', iface='com.example.I')),
                      ('driver signal', dict(typ=W.SIGNAL, member='Sig', iface='com.example.I')),
                      ('driver reply', dict(typ=W.METHOD_RETURN, member=None, iface=None, path=None, extra={W.F_REPLY_SERIAL: 1})),
                      ):
        send(c, **kw)
        got = drain(c)
        seen = drain(r, 0.05)
        show(title, got + [m for m in seen if m[0] != 'closed' and m[0] != W.SIGNAL or
                           (m[0] == W.SIGNAL and m[3].get(W.F_INTERFACE) != DIFACE)])
    c.close()
    r.close()


@section
def routing_errors():
    c = connect()
    for title, kw in (('call unowned name', dict(dest='com.example.Nobody', member='Foo', iface='com.example.I')),
                      ('call unowned name no-auto-start', dict(dest='com.example.Nobody', member='Foo', iface='com.example.I', flags=2)),
                      ('call unowned name no-reply', dict(dest='com.example.Nobody', member='Foo', iface='com.example.I', flags=1)),
                      ('call unknown unique', dict(dest=':1.999', member='Foo', iface='com.example.I')),
                      ('call unknown unique no-auto-start', dict(dest=':1.999', member='Foo', iface='com.example.I', flags=2)),
                      ('call odd unique', dict(dest=':2.5', member='Foo', iface='com.example.I')),
                      ('call unique of the driver?', dict(dest=':1.0', member='Foo', iface='com.example.I')),
                      ('signal to unowned name', dict(typ=W.SIGNAL, dest='com.example.Nobody', member='Foo', iface='com.example.I')),
                      ('signal to unknown unique', dict(typ=W.SIGNAL, dest=':1.999', member='Foo', iface='com.example.I')),
                      ('reply to unknown unique', dict(typ=W.METHOD_RETURN, dest=':1.999', member=None, iface=None, path=None, extra={W.F_REPLY_SERIAL: 1})),
                      ):
        send(c, **kw)
        show(title, drain(c))
    c.close()


RNAME = 'com.example.Probe'


@section
def driver_methods():
    c = connect()
    o = connect()
    send(o, member='RequestName', sig='su', body=enc('su', RNAME, 0))
    send(o, member='RequestName', sig='su', body=enc('su', RNAME + '2', 0))
    drain(o)
    u = c.unique
    calls = [
        ('Hello', None, ()),
        ('RequestName', 'su', ('com.example.Mine', 0)), ('RequestName', 'su', ('com.example.Mine', 0)),
        ('RequestName', 'su', (RNAME, 0)), ('RequestName', 'su', (RNAME, 4)), ('RequestName', 'su', (RNAME, 2)),
        ('RequestName', 'su', ('com.example.Flags', 8)), ('RequestName', 'su', ('com.example.Flags2', 0xffffffff)),
        ('RequestName', 'su', (':1.99', 0)), ('RequestName', 'su', ('org.freedesktop.DBus', 0)),
        ('RequestName', 'su', ('bad..name', 0)), ('RequestName', 'su', ('', 0)), ('RequestName', 'su', ('a', 0)),
        ('RequestName', 'su', ('com.example.1x', 0)), ('RequestName', 's', ('com.example.X',)),
        ('RequestName', 'us', None), ('RequestName', None, ()), ('RequestName', 'sus', ('a.b', 0, 'x')),
        ('ReleaseName', 's', ('com.example.Mine',)), ('ReleaseName', 's', ('com.example.Mine',)),
        ('ReleaseName', 's', (RNAME,)), ('ReleaseName', 's', (':1.99',)), ('ReleaseName', 's', ('bad..name',)),
        ('ReleaseName', 's', ('org.freedesktop.DBus',)), ('ReleaseName', 'u', None), ('ReleaseName', None, ()),
        ('StartServiceByName', 'su', ('com.example.NoSuch', 0)), ('StartServiceByName', 'su', (RNAME, 0)),
        ('StartServiceByName', 'su', ('org.freedesktop.DBus', 0)), ('StartServiceByName', 'su', (':1.1', 0)),
        ('StartServiceByName', 'su', ('bad..name', 0)), ('StartServiceByName', 's', ('a.b',)),
        ('UpdateActivationEnvironment', 'a{ss}', ({'FOO': 'bar'},)), ('UpdateActivationEnvironment', 'a{ss}', ({},)),
        ('UpdateActivationEnvironment', 'a{ss}', ({'A=B': 'c'},)), ('UpdateActivationEnvironment', 's', ('x',)),
        ('NameHasOwner', 's', (RNAME,)), ('NameHasOwner', 's', ('com.example.Nobody',)),
        ('NameHasOwner', 's', ('org.freedesktop.DBus',)), ('NameHasOwner', 's', (u,)), ('NameHasOwner', 's', (':1.999',)),
        ('NameHasOwner', 's', ('bad..name',)), ('NameHasOwner', 's', ('',)), ('NameHasOwner', 'u', None),
        ('NameHasOwner', None, ()),
        ('ListNames', None, ()), ('ListNames', 's', ('x',)),
        ('ListActivatableNames', None, ()),
        ('AddMatch', 's', ("type='signal'",)), ('AddMatch', 's', ("type='bogus'",)), ('AddMatch', 's', ('',)),
        ('AddMatch', 's', ("eavesdrop=false",)), ('AddMatch', 's', ("arg0namespace='a.b'",)), ('AddMatch', 'u', None),
        ('RemoveMatch', 's', ("type='signal'",)), ('RemoveMatch', 's', ("type='signal'",)),
        ('RemoveMatch', 's', ("type='bogus'",)), ('RemoveMatch', 's', ('',)),
        ('GetNameOwner', 's', (RNAME,)), ('GetNameOwner', 's', ('com.example.Nobody',)),
        ('GetNameOwner', 's', ('org.freedesktop.DBus',)), ('GetNameOwner', 's', (u,)), ('GetNameOwner', 's', (':1.999',)),
        ('GetNameOwner', 's', ('bad..name',)), ('GetNameOwner', 's', ('',)), ('GetNameOwner', 'u', None),
        ('ListQueuedOwners', 's', (RNAME,)), ('ListQueuedOwners', 's', ('com.example.Nobody',)),
        ('ListQueuedOwners', 's', ('org.freedesktop.DBus',)), ('ListQueuedOwners', 's', (u,)),
        ('ListQueuedOwners', 's', (':1.999',)), ('ListQueuedOwners', 's', ('bad..name',)),
    ]
    for m in ('GetConnectionUnixUser', 'GetConnectionUnixProcessID', 'GetAdtAuditSessionData',
              'GetConnectionSELinuxSecurityContext', 'GetConnectionCredentials', 'GetConnectionAppArmorSecurityContext'):
        calls += [(m, 's', (RNAME,)), (m, 's', ('com.example.Nobody',)), (m, 's', ('org.freedesktop.DBus',)),
                  (m, 's', (':1.999',)), (m, 's', ('bad..name',)), (m, 'u', None), (m, None, ())]
    calls += [('ReloadConfig', 's', ('x',)), ('GetId', 's', ('x',)), ('GetId', None, ()), ('NoSuchMethod', None, ())]
    for member, sig, args in calls:
        if args is None:   # the wrong signature: some values of it
            body = enc(sig, *[{'u': 7, 's': 'x'}[t] for t in sig])
        else:
            body = enc(sig, *args) if sig else b''
        send(c, member=member, sig=sig, body=body)
        got = drain(c)
        if member == 'GetConnectionUnixProcessID':
            got = [m[:4] + (b'PID',) if m[0] == W.METHOD_RETURN else m for m in got]
        show('%s(%s)%s' % (member, sig or '', '' if args is None else repr(args)), got)
    # the same, with GetConnectionUnixProcessID on itself: pid masked
    c.close()
    o.close()


@section
def match_rules():
    c = connect()
    for rule in ("type='bogus'", "type='signal',type='signal'", "sender='bad..x'", "sender=':1'",
                 "interface='nodot'", "member='a.b'", "path='x'", "path_namespace='/a/'", "path='/a',path_namespace='/'",
                 "destination='1.a'", "eavesdrop='maybe'", "arg='x'", "argx='x'", "arg0x='x'", "arg1namespace='a'",
                 "arg0namespace='a..b'", "arg0namespace='a'", "arg64='x'", "arg63='x'", "arg3='x',arg3='y'",
                 "arg-1='x'", "arg+2='x'", "arg2path='/'", "foo='x'", "type", "type='signal", "type='signal'\\",
                 " , ,type='signal'", "=x", "member='x',", "x" * 1100, "type='signal',member='M',interface='a.b',"
                 "path='/p',sender='a.b',destination='c.d',arg0='x',arg1path='/y',eavesdrop='false'",
                 # a tokenizing error comes before any key's: the whole rule is read first
                 "type='bogus',x", "sender='a..b',member='x", "arg64='x',type",
                 # the argument number as strtoul(..., 0) reads it
                 "arg0x40='x'", "arg0x3f='x',arg63='y'", "arg010='x',arg8='y'", "arg0x1gpath='/'",
                 "type='bogus',type='signal'", "path_namespace='/a',path='/a/'"):
        for m in ('AddMatch', 'RemoveMatch'):
            send(c, member=m, sig='s', body=W.body_s(rule))
            show("%s %s" % (m, rule[:80]), drain(c))
    c.close()


@section
def list_names():
    a = connect()
    b = connect()
    for n in ('com.example.A', 'com.example.B', 'com.example.C'):
        send(b, member='RequestName', sig='su', body=enc('su', n, 0))
    drain(b)
    send(a, member='ListNames')
    for m in drain(a):
        if m[0] == W.METHOD_RETURN:
            names = decode('as', m[4])[0]
            print('ListNames (in the order of dbus-daemon\'s hash table): %s' % names)
            print('ListNames count of b: %d' % names.count(b.unique))
            print('ListNames first: %s' % names[0])
    a.close()
    b.close()


@section
def properties():
    c = connect()
    P = 'org.freedesktop.DBus.Properties'
    for title, member, sig, args in (
            ('Get Features', 'Get', 'ss', (DIFACE, 'Features')),
            ('Get Interfaces', 'Get', 'ss', (DIFACE, 'Interfaces')),
            ('Get nosuch', 'Get', 'ss', (DIFACE, 'NoSuch')),
            ('Get other interface', 'Get', 'ss', ('com.example.I', 'Features')),
            ('Get empty interface', 'Get', 'ss', ('', 'Features')),
            ('Get wrong sig', 'Get', 's', (DIFACE,)),
            ('GetAll', 'GetAll', 's', (DIFACE,)),
            ('GetAll empty', 'GetAll', 's', ('',)),
            ('GetAll other', 'GetAll', 's', ('com.example.I',)),
            ('GetAll wrong sig', 'GetAll', 'ss', (DIFACE, 'x')),
            ('Set Features', 'Set', 'ssv', (DIFACE, 'Features', ('as', []))),
            ('Set nosuch', 'Set', 'ssv', (DIFACE, 'NoSuch', ('s', 'x'))),
            ('Set other', 'Set', 'ssv', ('com.example.I', 'NoSuch', ('s', 'x'))),
            ('Set wrong sig', 'Set', 'ss', (DIFACE, 'x')),
            ('Properties Foo', 'Foo', None, ())):
        ask(title, c, member, sig, enc(sig, *args) if sig else b'', iface=P)
    I = 'org.freedesktop.DBus.Introspectable'
    send(c, member='Introspect', iface=I)
    for m in drain(c):
        if m[0] == W.METHOD_RETURN:
            x = decode('s', m[4])[0]
            print('Introspect interfaces: %s' % ' '.join(l.strip() for l in x.splitlines() if '<interface' in l or '<signal' in l or '<property' in l))
            print('Introspect method count: %d' % x.count('<method'))
        else:
            show('Introspect', [m])
    ask('Introspect with args', c, 'Introspect', 's', W.body_s('x'), iface=I)
    ask('Introspect other path', c, 'Introspect', iface=I, path='/org/freedesktop')
    ask('Introspect root', c, 'Introspect', iface=I, path='/')
    ask('Introspect elsewhere', c, 'Introspect', iface=I, path='/com/example')
    ask('Introspectable Foo', c, 'Foo', iface=I)
    ask('Peer Ping', c, 'Ping', iface='org.freedesktop.DBus.Peer')
    ask('Peer Ping args', c, 'Ping', 's', W.body_s('x'), iface='org.freedesktop.DBus.Peer')
    ask('Peer GetMachineId args', c, 'GetMachineId', 's', W.body_s('x'), iface='org.freedesktop.DBus.Peer')
    ask('Peer Foo', c, 'Foo', iface='org.freedesktop.DBus.Peer')
    ask('Monitoring Foo', c, 'Foo', iface='org.freedesktop.DBus.Monitoring')
    ask('BecomeMonitor wrong sig', c, 'BecomeMonitor', 's', W.body_s('x'), iface='org.freedesktop.DBus.Monitoring')
    ask('BecomeMonitor bad flags', c, 'BecomeMonitor', 'asu', enc('asu', [], 1), iface='org.freedesktop.DBus.Monitoring')
    ask('BecomeMonitor bad rule', c, 'BecomeMonitor', 'asu', enc('asu', ["type='x'"], 0), iface='org.freedesktop.DBus.Monitoring')
    ask('Stats Foo', c, 'Foo', iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetConnectionStats unknown', c, 'GetConnectionStats', 's', W.body_s(':1.999'), iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetConnectionStats bad', c, 'GetConnectionStats', 's', W.body_s('bad..name'), iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetConnectionStats unowned', c, 'GetConnectionStats', 's', W.body_s('com.example.Nobody'), iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetConnectionStats driver', c, 'GetConnectionStats', 's', W.body_s(DBUS), iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetConnectionStats wrong sig', c, 'GetConnectionStats', 'u', struct.pack('<I', 1), iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetAllMatchRules', c, 'GetAllMatchRules', iface='org.freedesktop.DBus.Debug.Stats')
    ask('GetStats wrong sig', c, 'GetStats', 's', W.body_s('x'), iface='org.freedesktop.DBus.Debug.Stats')
    ask('Verbose Foo', c, 'Foo', iface='org.freedesktop.DBus.Verbose')
    c.close()


@section
def stats():
    c = connect()
    o = connect()
    for n in ('com.example.S1', 'com.example.S2'):
        send(o, member='RequestName', sig='su', body=enc('su', n, 0))
    send(o, member='AddMatch', sig='s', body=W.body_s("type='signal',member='X'"))
    send(o, member='AddMatch', sig='s', body=W.body_s("type='signal',member='Y'"))
    drain(o)
    S = 'org.freedesktop.DBus.Debug.Stats'
    send(c, member='GetConnectionStats', sig='s', body=W.body_s(o.unique), iface=S)
    show('GetConnectionStats', drain(c))
    send(c, member='GetConnectionStats', sig='s', body=W.body_s('com.example.S2'), iface=S)
    show('GetConnectionStats by name', drain(c))
    send(c, member='GetStats', iface=S)
    for m in drain(c):
        if m[0] == W.METHOD_RETURN:
            d = decode('a{sv}', m[4])[0]
            print('GetStats keys: %s' % ' '.join('%s:%s' % (k, d[k][0]) for k in sorted(d)))
            for k in ('BusNames', 'MatchRules', 'ActiveConnections', 'IncompleteConnections', 'Serial',
                      'PeakBusNamesPerConnection', 'PeakMatchRulesPerConnection', 'PeakBusNames', 'PeakMatchRules'):
                print('GetStats %s: %s' % (k, fmt(d.get(k))))
        else:
            show('GetStats', [m])
    o.close()
    c.close()


_c = W.Conn(path)
BUS_ID[0] = W.first_string(_c.call_driver('GetId')[4])
_c.close()
@section
def monitored_before_hello():
    # a monitor sees what a client sends before Hello, with the sender
    # ":not.active.yet", and the driver's answer
    mon = connect()
    s = mon.next_serial()
    mon.send(W.call(s, DBUS, DPATH, 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu', enc('asu', [], 0)))
    drain(mon)
    for title, kw in (('monitored prehello GetId', dict(member='GetId')),
                      ('monitored prehello Hello with an argument', dict(member='Hello', sig='s', body=W.body_s('x'))),
                      ('monitored prehello call to a name', dict(dest='com.example.Nobody', member='Foo',
                                                                 iface='com.example.I'))):
        c = connect(hello=False)
        send(c, **kw)
        show(title, drain(c))
        show(title + ', the monitor', [m for m in drain(mon) if m[0] == 'closed' or
                                       m[3].get(W.F_MEMBER) not in ('NameOwnerChanged', 'NameAcquired', 'NameLost')])
        c.close()
    mon.close()


@section
def names_at_the_edge():
    # a name only an activator holds (nobody owns it; ReleaseName: 2, not
    # 3), and names of 255 and 256 characters, for every method that takes
    # a name
    c = connect()
    names = ['a.' + 'b' * 253, 'a.' + 'b' * 254, ':1.' + '1' * 253]
    if servicedir:
        with open(os.path.join(servicedir, 'com.example.ProbeEdge.service'), 'w') as fh:
            fh.write('[D-BUS Service]\nName=com.example.ProbeEdge\nExec=/bin/false\n')
        ask('ReloadConfig', c, 'ReloadConfig')
        names.append('com.example.ProbeEdge')
    for name in names:
        short = name if len(name) < 40 else '%s... (%d characters)' % (name[:6], len(name))
        for member, sig, rest in (('NameHasOwner', 's', ()), ('GetNameOwner', 's', ()), ('ListQueuedOwners', 's', ()),
                                  ('GetConnectionUnixUser', 's', ()), ('GetConnectionCredentials', 's', ()),
                                  ('ReleaseName', 's', ()), ('RequestName', 'su', (4,)), ('ReleaseName', 's', ()),
                                  ('ReleaseName', 's', ()), ('StartServiceByName', 'su', (0,))):
            if member == 'StartServiceByName' and name.startswith('com.'):
                continue   # it would start /bin/false, whose failure comes in its own time
            ask('%s %s' % (member, short), c, member, sig, enc(sig, name, *rest))
    if servicedir:
        os.unlink(os.path.join(servicedir, 'com.example.ProbeEdge.service'))
        ask('ReloadConfig', c, 'ReloadConfig')
    c.close()


@section
def name_serials():
    # the serials of what RequestName and ReleaseName make the bus send:
    # dbus-daemon numbers a call's messages to a connection in the order
    # it sends them, NameLost and NameAcquired before the reply (two
    # connections without match rules: NameOwnerChanged, whose serial is
    # that of the first of its receivers dbus-daemon writes it to, is not
    # among them)
    a = connect()
    b = connect()

    def numbered(c):
        return ['%s#%d' % (describe(m), m[2]) if m[0] != 'closed' else m for m in drain(c)]

    def step(title, c, member, sig, *args):
        send(c, member=member, sig=sig, body=enc(sig, *args))
        print('serials %s: a: %s / b: %s' % (title, ' | '.join(numbered(a)) or '(nothing)',
                                             ' | '.join(numbered(b)) or '(nothing)'))
        sys.stdout.flush()

    n, r = 'com.example.Serials', 'com.example.SerialsR'
    step('a new name', a, 'RequestName', 'su', n, 0)
    step('a already owner', a, 'RequestName', 'su', n, 0)
    step('b do not queue', b, 'RequestName', 'su', n, 4)
    step('b queued', b, 'RequestName', 'su', n, 0)
    step('a releases, b next', a, 'ReleaseName', 's', n)
    step('b releases the last', b, 'ReleaseName', 's', n)
    step('a allows replacement', a, 'RequestName', 'su', r, 1)
    step('b replaces a', b, 'RequestName', 'su', r, 2)
    step('a leaves the queue', a, 'ReleaseName', 's', r)
    step('a replaces b, who does not allow it', a, 'RequestName', 'su', r, 6)
    step('b flags only', b, 'RequestName', 'su', r, 1)
    step('a replaces b, do not queue', a, 'RequestName', 'su', r, 6)
    step('b leaves the queue again', b, 'ReleaseName', 's', r)
    step('a releases', a, 'ReleaseName', 's', r)
    step('a not owner', a, 'ReleaseName', 's', r)
    # pipelined: the name, a release and another call in one write
    send(a, member='RequestName', sig='su', body=enc('su', n, 0))
    send(a, member='ReleaseName', sig='s', body=enc('s', n))
    send(a, member='GetNameOwner', sig='s', body=enc('s', 'org.freedesktop.DBus'))
    print('serials pipelined: a: %s' % ' | '.join(numbered(a)))
    a.close()
    b.close()
    # a connection that says Hello while a monitor watches: the
    # NameOwnerChanged monitors are shown takes none of its serials
    mon = connect()
    s = mon.next_serial()
    mon.send(W.call(s, DBUS, DPATH, 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu', enc('asu', [], 0)))
    drain(mon)
    a = connect()
    send(a, member='RequestName', sig='su', body=enc('su', n, 0))
    print('serials while monitored: a: %s' % ' | '.join(numbered(a)))
    a.close()
    mon.close()


@section
def hello_variants():
    # the first Hello as a client may write it, with each message and
    # serial the bus answers, then a second Hello: unwatched (the bus
    # answers at once) and watched by a monitor (through the driver)
    def numbered(c):
        return ['%s#%d' % (describe(m), m[2]) if m[0] != 'closed' else 'CLOSED' for m in drain(c)]

    mon = None
    for watched in ('', ' watched'):
        if watched:
            mon = connect()
            s = mon.next_serial()
            mon.send(W.call(s, DBUS, DPATH, 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu',
                            enc('asu', [], 0)))
            drain(mon)
        for title, kw in (('plain', {}),
                          ('empty signature', dict(sig='')),
                          ('no reply expected', dict(flags=1)),
                          ('empty signature, no reply expected', dict(sig='', flags=1)),
                          ('no interface', dict(iface=None)),
                          ('other path', dict(path='/x'))):
            c = connect(hello=False)
            send(c, member='Hello', **kw)
            first = numbered(c)
            send(c, member='Hello', **kw)
            print('hello %s%s: %s / again: %s' % (title, watched, ' | '.join(first) or '(nothing)',
                                                   ' | '.join(numbered(c)) or '(nothing)'))
            sys.stdout.flush()
            c.close()
    if mon:
        print('hello monitor saw: %d messages' % len(drain(mon, 0.3)))
        mon.close()


@section
def activatable_services():
    # ActivatableServicesChanged: broadcast whenever the bus read its
    # service directories again, and before the ReloadConfig reply
    c = connect()
    send(c, member='AddMatch', sig='s', body=W.body_s("type='signal',sender='org.freedesktop.DBus'"))
    drain(c)
    ask('ReloadConfig', c, 'ReloadConfig')
    if servicedir:
        f = os.path.join(servicedir, 'com.example.ProbeSvc.service')
        with open(f, 'w') as fh:
            fh.write('[D-BUS Service]\nName=com.example.ProbeSvc\nExec=/bin/false\n')
        time.sleep(0.5)
        show('new service file', drain(c, 0.5))
        ask('ListActivatableNames after', c, 'ListActivatableNames')
        os.unlink(f)
        time.sleep(0.5)
        show('service file removed', drain(c, 0.5))
    c.close()


for f in sections:
    if only and only not in f.__name__:
        continue
    f()
