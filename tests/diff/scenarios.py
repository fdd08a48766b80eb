# scenarios.py - the scripted scenarios of the differential tester.  Each
# scenario is a function of a Session (engine.py) that connects clients and
# sends messages; the engine writes down what every connection receives
# after every step.  A scenario must be deterministic: the same script is
# run once against dbus-daemon and once against busbridged.
import os
import time

import dbuswire as W  # noqa: E402  (on the path busdiff.py sets)
from engine import DRIVER, DRIVER_PATH

NRE, NAS, AIA = W.NO_REPLY_EXPECTED, W.NO_AUTO_START, W.ALLOW_INTERACTIVE_AUTHORIZATION
FLAG_SETS = (0, NRE, NAS, NRE | NAS, AIA)
TYPES = (W.METHOD_CALL, W.SIGNAL, W.METHOD_RETURN, W.ERROR)
ACTIVATABLE = 'com.example.Activatable'     # a .service file whose Exec fails
ACTIVATABLE_BROKEN = 'com.example.Missing'  # a .service file whose Exec does not exist
SERVICE = 'com.example.Service'             # tests/diff/service.py
# more activatable names, so that ListActivatableNames lists a table that
# has grown (dbus-daemon lists them in its hash table's order)
LISTED = ['com.example.Listed%d' % i for i in range(6)] + \
    ['org.example.Tool', 'net.example.Player', 'org.freedesktop.Example1', 'io.example.a', 'org.example.B.c',
     'com.example.Zz']
HERE = os.path.dirname(os.path.abspath(__file__))


def write_services(d):
    """the service directory every scenario's configuration gets"""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, ACTIVATABLE + '.service'), 'w') as f:
        f.write('[D-BUS Service]\nName=%s\nExec=/bin/false\n' % ACTIVATABLE)
    with open(os.path.join(d, ACTIVATABLE_BROKEN + '.service'), 'w') as f:
        f.write('[D-BUS Service]\nName=%s\nExec=/nonexistent/busdiff-service\n' % ACTIVATABLE_BROKEN)
    with open(os.path.join(d, SERVICE + '.service'), 'w') as f:
        f.write('[D-BUS Service]\nName=%s\nExec=/usr/bin/python3 %s/service.py %s\nUser=root\n' %
                (SERVICE, HERE, SERVICE))
    for name in LISTED:
        with open(os.path.join(d, name + '.service'), 'w') as f:
            f.write('[D-BUS Service]\nName=%s\nExec=/bin/false\n' % name)


def send_kind(s, frm, typ, dest, flags, body_tag, reply_serial=None):
    """one message of any type to dest"""
    kw = dict(dest=dest, flags=flags, sig='s', body=(body_tag,))
    if typ == W.METHOD_CALL:
        kw.update(path='/com/example', iface='com.example.Iface', member='Method')
    elif typ == W.SIGNAL:
        kw.update(path='/com/example', iface='com.example.Iface', member='Signal')
    elif typ == W.METHOD_RETURN:
        kw.update(reply_serial=reply_serial or 4242)
    else:
        kw.update(error_name='com.example.Error.Failed', reply_serial=reply_serial or 4242)
    return s.send(frm, typ, **kw)


def observers(s, ids, monitor=True, eavesdrop=True, watcher=True):
    """a monitor, a root eavesdropper and a client subscribed to every
    signal, as configured"""
    if monitor:
        s.become_monitor('mon', (), ids.get('root'))
    if eavesdrop:
        s.connect('eav', ids.get('root'))
        s.call_driver('eav', 'AddMatch', 's', ("eavesdrop='true'",))
    if watcher:
        s.connect('sub', ids.get('root'))
        s.call_driver('sub', 'AddMatch', 's', ("type='signal'",))


def message_grid(s, ids, sender_id='root', flag_sets=FLAG_SETS, with_observers=True, activatable=True):
    """every message type x destination kind x flags, from a registered
    client and from one that has not said Hello"""
    if with_observers:
        observers(s, ids)
    s.connect('a', ids.get(sender_id))
    s.connect('b', ids.get('root'))
    s.connect('q', ids.get('root'))
    s.call_driver('b', 'RequestName', 'su', ('com.example.Owned', 0))
    s.call_driver('b', 'RequestName', 'su', ('com.example.Queued', 0))
    s.step('q queues')
    s.call_driver('q', 'RequestName', 'su', ('com.example.Queued', 0))
    s.step('setup')
    dests = ['@b', ':1.9999', 'com.example.Owned', 'com.example.Queued', 'com.example.Unowned'] + \
        ([ACTIVATABLE, ACTIVATABLE_BROKEN] if activatable else []) + [DRIVER, None]
    n = 0
    for typ in TYPES:
        for dest in dests:
            for flags in flag_sets:
                n += 1
                s.step('%s to %s flags=%d' % (W.TYPE_NAMES[typ], dest, flags))
                serial = send_kind(s, 'a', typ, dest, flags, 'grid%d' % n)
                if dest in (ACTIVATABLE, ACTIVATABLE_BROKEN) and not flags & NAS:
                    # the activation fails in its own time, and dbus-daemon
                    # tells the sender of any message that caused it
                    s.wait_reply('a', serial, timeout=1.0)
    # replies that were asked for: b answers calls of a
    for typ in (W.METHOD_RETURN, W.ERROR):
        for flags in (0, NRE):
            s.step('requested %s flags=%d' % (W.TYPE_NAMES[typ], flags))
            serial = send_kind(s, 'a', W.METHOD_CALL, '@b', flags, 'ask')
            s.step('answer')
            send_kind(s, 'b', typ, '@a', 0, 'answer', reply_serial=serial)
            s.step('answer again')
            send_kind(s, 'b', typ, '@a', 0, 'again', reply_serial=serial)
    # before Hello
    s.connect('pre', ids.get(sender_id), hello=False)
    for typ in TYPES:
        for dest in ('@b', DRIVER, None):
            s.step('before Hello: %s to %s' % (W.TYPE_NAMES[typ], dest))
            send_kind(s, 'pre', typ, dest, 0, 'pre')
    s.step('Hello after refusals')
    s.hello('pre')
    s.step('second Hello')
    s.call_driver('pre', 'Hello')


def driver_methods(s, ids, who='root'):
    """every driver method, valid and invalid arguments"""
    observers(s, ids, eavesdrop=False, watcher=True)
    s.connect('a', ids.get(who))
    s.connect('b', ids.get('root'))
    s.call_driver('b', 'RequestName', 'su', ('com.example.Owned', 0))
    s.call_driver('b', 'RequestName', 'su', ('com.example.Two', 0))
    s.step('setup')
    D = DRIVER
    calls = [
        ('Hello', '', ()),
        ('ListNames', '', ()), ('ListActivatableNames', '', ()),
        ('NameHasOwner', 's', ('com.example.Owned',)), ('NameHasOwner', 's', ('com.example.Nobody',)),
        ('NameHasOwner', 's', ('@b',)), ('NameHasOwner', 's', (D,)), ('NameHasOwner', 's', ('not a name',)),
        ('NameHasOwner', '', ()), ('NameHasOwner', 'u', (3,)),
        ('GetNameOwner', 's', ('com.example.Owned',)), ('GetNameOwner', 's', ('com.example.Nobody',)),
        ('GetNameOwner', 's', (D,)), ('GetNameOwner', 's', ('@b',)), ('GetNameOwner', 's', (':1.9999',)),
        ('GetNameOwner', 's', ('..bad',)),
        ('ListQueuedOwners', 's', ('com.example.Owned',)), ('ListQueuedOwners', 's', ('com.example.Nobody',)),
        ('ListQueuedOwners', 's', (D,)), ('ListQueuedOwners', 's', ('@b',)),
        ('ListQueuedOwners', 's', ('not a name',)), ('ListQueuedOwners', 's', ('bad',)),
        ('ListQueuedOwners', 's', ('',)),
        ('GetConnectionUnixUser', 's', ('@b',)), ('GetConnectionUnixUser', 's', ('com.example.Owned',)),
        ('GetConnectionUnixUser', 's', (D,)), ('GetConnectionUnixUser', 's', ('com.example.Nobody',)),
        ('GetConnectionUnixUser', 's', (':1.9999',)),
        ('GetConnectionUnixProcessID', 's', ('@b',)), ('GetConnectionUnixProcessID', 's', (D,)),
        ('GetConnectionUnixProcessID', 's', ('com.example.Nobody',)),
        ('GetConnectionCredentials', 's', ('@b',)), ('GetConnectionCredentials', 's', (D,)),
        ('GetConnectionCredentials', 's', ('com.example.Nobody',)),
        ('GetAdtAuditSessionData', 's', ('@b',)), ('GetAdtAuditSessionData', 's', (D,)),
        ('GetConnectionSELinuxSecurityContext', 's', ('@b',)),
        ('GetConnectionSELinuxSecurityContext', 's', (D,)),
        ('GetId', '', ()), ('GetId', 's', ('x',)),
        ('RequestName', 'su', ('com.example.New', 0)), ('RequestName', 'su', ('com.example.New', 0)),
        ('RequestName', 'su', ('com.example.Owned', 0)), ('RequestName', 'su', ('com.example.Owned', 4)),
        ('RequestName', 'su', ('com.example.Owned', 2)), ('RequestName', 'su', ('com.example.Owned', 6)),
        ('RequestName', 'su', (D,  0)), ('RequestName', 'su', (':1.55', 0)), ('RequestName', 'su', ('bad', 0)),
        ('RequestName', 'su', ('com.example.Flags', 8)), ('RequestName', 's', ('com.example.X',)),
        ('ReleaseName', 's', ('com.example.New',)), ('ReleaseName', 's', ('com.example.New',)),
        ('ReleaseName', 's', ('com.example.Owned',)), ('ReleaseName', 's', (D,)),
        ('ReleaseName', 's', (':1.5',)), ('ReleaseName', 's', ('bad',)),
        ('StartServiceByName', 'su', ('com.example.Owned', 0)),
        ('StartServiceByName', 'su', ('com.example.Nobody', 0)),
        ('StartServiceByName', 'su', (ACTIVATABLE_BROKEN, 0)),
        ('StartServiceByName', 'su', (D, 0)), ('StartServiceByName', 'su', (ACTIVATABLE, 0)),
        ('AddMatch', 's', ("type='signal'",)), ('AddMatch', 's', ("bogus",)),
        ('AddMatch', 's', ("type='signal',arg0='x',arg0='y'",)), ('AddMatch', 's', ("eavesdrop='true'",)),
        ('AddMatch', 's', ("arg0path='/a/',path_namespace='/b'",)),
        ('RemoveMatch', 's', ("type='signal'",)), ('RemoveMatch', 's', ("type='signal'",)),
        ('RemoveMatch', 's', ("type='method_call'",)), ('RemoveMatch', 's', ("bogus",)),
        ('UpdateActivationEnvironment', 'a{ss}', ([('BUSDIFF', '1')],)),
        ('UpdateActivationEnvironment', 'a{ss}', ([('DBUS_STARTER_ADDRESS', 'x')],)),
        ('NoSuchMethod', '', ()),
    ]
    # names of 255 and 256 characters (the longest valid one, and one more),
    # and an activatable name nobody owns, for every method that takes a name
    long255, long256 = 'a.' + 'b' * 253, 'a.' + 'b' * 254
    for member, sig, rest in (('NameHasOwner', 's', ()), ('GetNameOwner', 's', ()), ('ListQueuedOwners', 's', ()),
                              ('GetConnectionUnixUser', 's', ()), ('GetConnectionUnixProcessID', 's', ()),
                              ('GetConnectionCredentials', 's', ()), ('GetAdtAuditSessionData', 's', ()),
                              ('GetConnectionSELinuxSecurityContext', 's', ()), ('RequestName', 'su', (0,)),
                              ('ReleaseName', 's', ()), ('StartServiceByName', 'su', (0,))):
        for name in (long255, long256, ':1.' + '1' * 253, ACTIVATABLE):
            calls.append((member, sig, (name,) + rest))
    calls.append(('ReleaseName', 's', (ACTIVATABLE_BROKEN,)))
    calls.append(('ReleaseName', 's', ('com.example.Two',)))
    for member, sig, body in calls:
        body = tuple(s.resolve(v) if isinstance(v, str) else v for v in body)
        s.step('%s%r' % (member, body))
        serial = s.call_driver('a', member, sig, body)
        if member == 'StartServiceByName':
            s.wait_reply('a', serial, timeout=2.0)   # an activation ends in its own time
    props = [('Get', 'ss', (D, 'Features')), ('Get', 'ss', (D, 'Interfaces')), ('Get', 'ss', (D, 'Nope')),
             ('Get', 'ss', ('com.example.Nope', 'Features')), ('GetAll', 's', (D,)), ('GetAll', 's', ('',)),
             ('Set', 'ssv', (D, 'Features', W.Variant('as', []))), ('Get', 's', (D,))]
    for member, sig, body in props:
        s.step('Properties.%s%r' % (member, body))
        s.call_driver('a', member, sig, body, iface='org.freedesktop.DBus.Properties')
    for iface, member, sig, body in (('org.freedesktop.DBus.Introspectable', 'Introspect', '', ()),
                                     ('org.freedesktop.DBus.Peer', 'Ping', '', ()),
                                     ('org.freedesktop.DBus.Peer', 'GetMachineId', '', ()),
                                     ('org.freedesktop.DBus.Debug.Stats', 'GetStats', '', ()),
                                     ('org.freedesktop.DBus.Debug.Stats', 'GetConnectionStats', 's', ('@b',)),
                                     ('org.freedesktop.DBus.Debug.Stats', 'GetAllMatchRules', '', ()),
                                     ('org.freedesktop.DBus.Verbose', 'EnableVerbose', '', ()),
                                     ('com.example.NoIface', 'GetId', '', ()), (None, 'GetId', '', ()),
                                     (None, 'Ping', '', ())):
        body = tuple(s.resolve(v) if isinstance(v, str) else v for v in body)
        s.step('%s.%s' % (iface, member))
        s.send('a', W.METHOD_CALL, dest=D, path=DRIVER_PATH, iface=iface, member=member, sig=sig, body=body)
    for path in ('/', '/org/freedesktop/DBus/Sub', '/com/example'):
        for iface, member in (('org.freedesktop.DBus.Introspectable', 'Introspect'), (DRIVER, 'GetId'),
                              ('org.freedesktop.DBus.Peer', 'Ping')):
            s.step('%s on %s' % (member, path))
            s.send('a', W.METHOD_CALL, dest=D, path=path, iface=iface, member=member)
    for iface, member in (('org.freedesktop.DBus.Peer', 'Ping'), (DRIVER, 'GetId'), (DRIVER, 'Hello'),
                          ('org.freedesktop.DBus.Introspectable', 'Introspect')):
        s.step('no destination %s.%s' % (iface, member))
        s.send('a', W.METHOD_CALL, path=DRIVER_PATH, iface=iface, member=member)
    s.step('signal to the driver')
    s.send('a', W.SIGNAL, dest=D, path=DRIVER_PATH, iface=DRIVER, member='NameOwnerChanged', sig='sss',
           body=('x', '', ''))
    s.step('ReloadConfig')
    s.call_driver('a', 'ReloadConfig')


PEER = 'org.freedesktop.DBus.Peer'


def peer_interface(s, ids, who='root'):
    """messages of org.freedesktop.DBus.Peer of every type and flag set,
    without destination (dbus-daemon's side of each connection, libdbus's
    peer filter, answers them and the bus sees nothing) and to every kind
    of destination (routed as any message), before Hello and from a
    monitor, while a monitor, a root eavesdropper and a signal subscriber
    look on"""
    observers(s, ids)
    s.connect('a', ids.get(who))
    s.connect('b', ids.get('root'))
    s.call_driver('b', 'AddMatch', 's', ("interface='%s'" % PEER,))
    s.call_driver('b', 'RequestName', 'su', ('com.example.PeerOwned', 0))
    s.step('setup')
    dests = (None, DRIVER, '@b', 'com.example.PeerOwned', 'com.example.Unowned', ':1.9999')
    for dest in dests:
        for typ in TYPES:
            for member in ('Ping', 'GetMachineId', 'Other'):
                for flags in (0, NRE, NAS, AIA):
                    s.step('Peer %s %s to %s flags=%d' % (W.TYPE_NAMES[typ], member, dest, flags))
                    kw = dict(dest=dest, path='/', iface=PEER, member=member, flags=flags)
                    if typ == W.ERROR:
                        kw.update(error_name='com.example.Error.Failed', reply_serial=4242)
                    elif typ == W.METHOD_RETURN:
                        kw.update(reply_serial=4242)
                    s.send('a', typ, **kw)
    # what libdbus's filter does not look at: arguments, another interface,
    # none, a forged sender, no member at all
    for what, kw in (('Ping with an argument', dict(iface=PEER, member='Ping', sig='s', body=('x',))),
                     ('GetMachineId with an argument', dict(iface=PEER, member='GetMachineId', sig='u', body=(1,))),
                     ('Ping without interface', dict(member='Ping')),
                     ('GetMachineId on another interface', dict(iface='com.example.Peer', member='GetMachineId')),
                     ('Ping with a forged sender', dict(iface=PEER, member='Ping', sender='@b')),
                     ('Other with a forged sender', dict(iface=PEER, member='Other', sender='@b')),
                     ('Introspect with a forged sender', dict(iface='org.freedesktop.DBus.Introspectable',
                                                              member='Introspect', sender='@b')),
                     ('an unknown method with a forged sender', dict(iface='com.example.I', member='Frob',
                                                                     sender='@b')),
                     ('on another path', dict(iface=PEER, member='Ping', path='/com/example/x'))):
        for typ in (W.METHOD_CALL, W.SIGNAL) if 'iface' in kw else (W.METHOD_CALL,):
            s.step('%s, %s' % (W.TYPE_NAMES[typ], what))
            kw2 = dict(path='/')
            kw2.update(kw)
            s.send('a', typ, **kw2)
    s.step('a return of Peer without member')
    s.send('a', W.METHOD_RETURN, iface=PEER, reply_serial=77)
    s.step('an error of Peer')
    s.send('a', W.ERROR, iface=PEER, error_name='org.freedesktop.DBus.Error.Failed', reply_serial=77)
    # before Hello: answered, the connection stays
    s.connect('pre', ids.get(who), hello=False)
    for typ in TYPES:
        for member in ('Ping', 'Other'):
            s.step('before Hello: Peer %s %s' % (W.TYPE_NAMES[typ], member))
            kw = dict(path='/', iface=PEER, member=member)
            if typ == W.ERROR:
                kw.update(error_name='com.example.Error.Failed', reply_serial=1)
            elif typ == W.METHOD_RETURN:
                kw.update(reply_serial=1)
            s.send('pre', typ, **kw)
    s.step('before Hello: Peer Ping to the driver')
    s.send('pre', W.METHOD_CALL, dest=DRIVER, path='/', iface=PEER, member='Ping')
    s.step('Hello after Peer messages')
    s.hello('pre')
    # a monitor that sends: answered without a destination, closed otherwise
    s.become_monitor('m2', ["type='error'"], ids.get('root'))
    for typ in (W.METHOD_CALL, W.SIGNAL):
        for member in ('Ping', 'GetMachineId', 'Other'):
            s.step('monitor sends Peer %s %s' % (W.TYPE_NAMES[typ], member))
            s.send('m2', typ, path='/', iface=PEER, member=member)
    s.step('monitor sends Peer Ping to the driver')
    s.send('m2', W.METHOD_CALL, dest=DRIVER, path='/', iface=PEER, member='Ping')


def shutdown(s, ids):
    """SIGTERM: dbus-daemon closes its connections one at a time (those
    without Hello first, then in the order of their Hello), and the ones
    still connected see the names of each go, a queued owner its
    NameAcquired; monitors with and without rules, eavesdroppers, a call
    waiting for the answer of one that goes"""
    observers(s, ids)
    s.become_monitor('m1', ["type='signal',member='NameOwnerChanged'"], ids.get('root'))
    for label in 'abcd':
        s.connect(label, ids.get('root'))
    s.connect('u', ids.get('bbtest1') or ids.get('root'))
    s.call_driver('u', 'AddMatch', 's', ("type='signal',sender='org.freedesktop.DBus'",))
    s.step('names')
    s.call_driver('a', 'RequestName', 'su', ('com.example.Down.A', 0))
    s.call_driver('a', 'RequestName', 'su', ('com.example.Down.A2', 0))
    s.call_driver('b', 'RequestName', 'su', ('com.example.Down.B', 0))
    s.step('queued')
    s.call_driver('c', 'RequestName', 'su', ('com.example.Down.A', 0))
    s.call_driver('d', 'RequestName', 'su', ('com.example.Down.B', 4))
    s.step('calls waiting for answers')
    s.send('b', W.METHOD_CALL, dest='@a', path='/', iface='com.example.I', member='Wait')
    s.send('a', W.METHOD_CALL, dest='com.example.Down.B', path='/', iface='com.example.I', member='Wait')
    s.connect('pre', ids.get('root'), hello=False)
    s.step('SIGTERM')
    s.stop_daemon()


def late_dirs(s, ids):
    """service directories and files that appear, change and go while the
    bus runs (engine.late_config(): two service directories, the XDG ones
    and an includedir under s.late, none there at start): what
    ListActivatableNames lists and ActivatableServicesChanged says, what
    auto-start and StartServiceByName find (dbus-daemon reads the
    directories again for a name it does not know, and checks the file of
    one it knows), which directories are watched (those there at the last
    load; a watched one that goes keeps its watch) and what a policy file
    in an includedir does before and after a reload"""
    L = s.late
    # (no monitor: the order in which monitors see a StartServiceByName
    # reply is a known difference, of the activation scenario)
    observers(s, ids, monitor=False, eavesdrop=False)
    s.connect('a', ids.get('root'))
    s.step('setup')

    def write(d, name, ok=True, mtime=None):
        os.makedirs(os.path.join(L, d), exist_ok=True)
        path = os.path.join(L, d, name + '.service')
        with open(path, 'w') as f:
            f.write('[D-BUS Service]\nName=%s\nExec=%s\n' %
                    (name, '/usr/bin/python3 %s/service.py %s' % (HERE, name) if ok else '/bin/false'))
        if mtime:
            os.utime(path, (mtime, mtime))
        s.pause(0.3)   # a watched directory reloads the configuration

    def remove(path):
        p = os.path.join(L, path)
        if os.path.isdir(p):
            os.rmdir(p)
        else:
            os.unlink(p)
        s.pause(0.3)

    def call(what, name, flags=0):
        s.step(what)
        serial = s.send('a', W.METHOD_CALL, dest=name, path='/', iface='com.example.Iface', member='Hi', flags=flags)
        if not flags & NAS:
            s.wait_reply('a', serial, timeout=10.0)

    def start(what, name):
        s.step(what)
        s.wait_reply('a', s.call_driver('a', 'StartServiceByName', 'su', (name, 0)), timeout=10.0)

    def stop(name):
        s.step('%s exits' % name)
        s.send('a', W.METHOD_CALL, dest=name, path='/', iface='com.example.Iface', member='Exit', flags=NRE)
        s.pause(0.5)

    def listed(what):
        s.step('ListActivatableNames: ' + what)
        s.call_driver('a', 'ListActivatableNames')

    call('an unknown name', 'com.example.Late1')
    s.step('a service directory appears, with a file')
    write('services-a', 'com.example.Late1')
    listed('the directory was not there at start')
    call('NO_AUTO_START: no rescan', 'com.example.Late1', NAS)
    call('auto-start reads the directories again', 'com.example.Late1')
    listed('after the rescan')
    stop('com.example.Late1')
    s.step('its file goes (nothing watches the directory)')
    remove('services-a/com.example.Late1.service')
    listed('the name is still known')
    call('auto-start of a name whose file is gone', 'com.example.Late1')
    listed('after that')
    s.step('ReloadConfig: the directory is watched now')
    s.call_driver('a', 'ReloadConfig')
    s.step('a file in the watched directory')
    write('services-a', 'com.example.Late2', ok=False)
    listed('after the reload it caused')
    s.step('the file changes')
    write('services-a', 'com.example.Late2')
    call('Late2 starts', 'com.example.Late2')
    stop('com.example.Late2')
    s.step('a second directory appears, with a file')
    write('services-b', 'com.example.Late3')
    start('StartServiceByName reads the directories again', 'com.example.Late3')
    stop('com.example.Late3')
    s.step('its file changes, a second later (nothing watches it)')
    write('services-b', 'com.example.Late3', ok=False, mtime=time.time() + 2)
    call('auto-start reads a modified file again', 'com.example.Late3')
    s.step('the watched directory goes')
    remove('services-a/com.example.Late2.service')
    remove('services-a')
    listed('after that')
    s.step('it comes back, with a file (its old watch is gone)')
    write('services-a', 'com.example.Late4')
    listed('not noticed')
    call('auto-start finds it', 'com.example.Late4')
    stop('com.example.Late4')
    s.step('an includedir appears, with a policy file')
    os.makedirs(os.path.join(L, 'conf.d'))
    with open(os.path.join(L, 'conf.d', 'deny.conf'), 'w') as f:
        f.write('<busconfig><policy context="default"><deny own="com.example.DeniedLate"/></policy></busconfig>\n')
    s.pause(0.3)
    s.step('RequestName: not read yet')
    s.call_driver('a', 'RequestName', 'su', ('com.example.DeniedLate', 0))
    s.call_driver('a', 'ReleaseName', 's', ('com.example.DeniedLate',))
    s.step('ReloadConfig reads it')
    s.call_driver('a', 'ReloadConfig')
    s.step('RequestName: denied')
    s.call_driver('a', 'RequestName', 'su', ('com.example.DeniedLate', 0))
    s.step('the policy file goes (the includedir is watched now)')
    remove('conf.d/deny.conf')
    s.step('RequestName: allowed again')
    s.call_driver('a', 'RequestName', 'su', ('com.example.DeniedLate', 0))
    s.step('the user\'s service directory appears ($XDG_DATA_HOME/dbus-1/services)')
    write('xdg-data/dbus-1/services', 'com.example.Late5')
    call('auto-start finds it', 'com.example.Late5')
    stop('com.example.Late5')
    listed('at the end')


def name_sequences(s, ids):
    """queueing, replacement and release among three connections while a
    monitor and a NameOwnerChanged watcher look on"""
    observers(s, ids, eavesdrop=False)
    for c in 'xyz':
        s.connect(c, ids.get('root'))
    s.step('setup')
    N = 'com.example.Seq'
    flagsets = (0, 1, 2, 3, 4, 5, 6, 7)
    i = 0
    for fa in flagsets:
        for fb in flagsets:
            i += 1
            s.step('x %d then y %d' % (fa, fb))
            s.call_driver('x', 'RequestName', 'su', (N, fa))
            s.step('y')
            s.call_driver('y', 'RequestName', 'su', (N, fb))
            s.step('z queues')
            s.call_driver('z', 'RequestName', 'su', (N, 0))
            s.step('queue')
            s.call_driver('z', 'ListQueuedOwners', 's', (N,))
            s.step('release x')
            s.call_driver('x', 'ReleaseName', 's', (N,))
            s.step('release y, z')
            s.call_driver('y', 'ReleaseName', 's', (N,))
            s.call_driver('z', 'ReleaseName', 's', (N,))
    s.step('names and disconnect')
    s.call_driver('x', 'RequestName', 'su', (N, 0))
    s.call_driver('x', 'RequestName', 'su', (N + '2', 0))
    s.call_driver('y', 'RequestName', 'su', (N, 0))
    s.step('x goes away')
    s.disconnect('x')
    s.step('y goes away')
    s.disconnect('y')


def name_order(s, ids):
    """ListNames and ListActivatableNames, whose order is that of
    dbus-daemon's hash tables, while names come and go: the registry grows
    past 12 and 48 names, shrinks at the first name after many left, and
    loses the names of connections that go away or become monitors; w
    watches NameOwnerChanged (a departing connection's names go last-taken
    first)"""
    root = ids.get('root')
    s.connect('l', root)
    s.connect('w', root)
    s.call_driver('w', 'AddMatch', 's', ("member='NameOwnerChanged'",))

    def list_names(what):
        s.step('ListNames: ' + what)
        s.call_driver('l', 'ListNames')

    s.step('ListActivatableNames')
    s.call_driver('l', 'ListActivatableNames')
    for i in range(16):
        s.connect('c%d' % i, root)
    list_names('18 connections')
    s.step('48 names')
    for i in range(16):
        for n in ('com.example.Order.A%d', 'org.example.Order.B%d', 'net.example.order.C%d'):
            s.call_driver('c%d' % i, 'RequestName', 'su', (n % i, 0))
    list_names('and 48 names')
    s.step('8 waiters')
    for i in range(8):
        s.call_driver('c%d' % (i + 1), 'RequestName', 'su', ('com.example.Order.A%d' % i, 0))
    list_names('waiters')
    s.step('24 names released')
    for i in range(12):
        s.call_driver('c%d' % i, 'ReleaseName', 's', ('org.example.Order.B%d' % i,))
        s.call_driver('c%d' % i, 'ReleaseName', 's', ('net.example.order.C%d' % i,))
    list_names('24 names released')
    s.step('one more name')
    s.call_driver('c0', 'RequestName', 'su', ('net.example.Shrink', 0))
    list_names('one more')
    for i in (2, 4, 6, 12, 13):
        s.step('c%d goes away' % i)
        s.disconnect('c%d' % i)
    list_names('5 connections gone')
    for i in range(3):
        s.connect('n%d' % i, root)
    list_names('3 more connections')
    s.step('a monitor')
    s.become_monitor('m', ["member='NoSuchMember'"], root)
    list_names('a monitor')
    for i in range(15, 7, -1):
        s.step('c%d goes away' % i)
        s.disconnect('c%d' % i)
    list_names('8 connections gone')
    s.step('release names')
    for i, names in ((3, (2, 3)), (5, (4, 5)), (7, (6, 7)), (1, (1,))):
        for n in names:
            s.call_driver('c%d' % i, 'ReleaseName', 's', ('com.example.Order.A%d' % n,))
    s.call_driver('c0', 'ReleaseName', 's', ('net.example.Shrink',))
    s.step('n2 goes away')
    s.disconnect('n2')
    list_names('names released, n2 gone')
    s.step('one more connection')
    s.connect('n3', root)
    list_names('one more connection (the table shrinks to 4 buckets)')
    s.step('ReloadConfig')
    s.call_driver('l', 'ReloadConfig')
    s.step('ListActivatableNames after ReloadConfig')
    s.call_driver('l', 'ListActivatableNames')


def monitors(s, ids):
    """what monitors with different match lists see of connections coming
    and going, names, other monitors and messages"""
    rules_list = ([], ["type='signal'"], ["sender='org.freedesktop.DBus'"], ["type='method_call'", "member='X'"],
                  ["eavesdrop='true'"], ["bogus"])
    for i, rules in enumerate(rules_list):
        s.become_monitor('m%d' % i, rules, ids.get('root'))
        s.step('monitor %d %r' % (i, rules))
    s.connect('a', ids.get('root'))
    s.step('a')
    s.connect('b', ids.get('root'))
    s.step('b')
    s.call_driver('a', 'RequestName', 'su', ('com.example.M', 0))
    s.step('b queues')
    s.call_driver('b', 'RequestName', 'su', ('com.example.M', 0))
    s.step('call and reply')
    serial = s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='X')
    s.step('reply')
    s.send('b', W.METHOD_RETURN, dest='@a', reply_serial=serial)
    s.step('to nobody')
    s.send('a', W.METHOD_CALL, dest='com.example.Nobody', path='/', iface='com.example.I', member='X')
    s.send('a', W.SIGNAL, dest='com.example.Nobody', path='/', iface='com.example.I', member='S', flags=NRE)
    s.step('broadcast')
    s.send('a', W.SIGNAL, path='/', iface='com.example.I', member='S')
    s.step('another monitor')
    s.become_monitor('m9', (), ids.get('root'))
    s.step('monitor sends')
    s.call_driver('m9', 'GetId')
    s.step('a connection with names and match rules becomes a monitor')
    s.connect('n', ids.get('root'))
    s.connect('w', ids.get('root'))
    s.call_driver('w', 'AddMatch', 's', ("type='signal',sender='org.freedesktop.DBus'",))
    s.call_driver('n', 'AddMatch', 's', ("type='signal'",))
    s.step('n takes names')
    s.call_driver('n', 'RequestName', 'su', ('com.example.N1', 0))
    s.call_driver('n', 'RequestName', 'su', ('com.example.N2', 0))
    s.step('w queues for N1, n for w\'s name')
    s.call_driver('w', 'RequestName', 'su', ('com.example.N1', 0))
    s.call_driver('w', 'RequestName', 'su', ('com.example.W', 0))
    s.step('n queues')
    s.call_driver('n', 'RequestName', 'su', ('com.example.W', 0))
    s.step('BecomeMonitor')
    s.call_driver('n', 'BecomeMonitor', 'asu', (["type='signal'"], 0), iface='org.freedesktop.DBus.Monitoring')
    s.clients['n'].monitor = True
    s.step('a disconnects')
    s.disconnect('a')
    s.step('b disconnects')
    s.disconnect('b')
    s.step('monitor disconnects')
    s.disconnect('m0')


def eavesdropping(s, ids):
    """eavesdroppers of every kind and what they see of others' traffic"""
    for who in ('root', 'messagebus', 'bbtest1'):
        if who != 'root' and ids.get(who) is None:
            continue
        s.connect('e_' + who, ids.get(who))
        s.call_driver('e_' + who, 'AddMatch', 's', ("eavesdrop='true'",))
        s.connect('ei_' + who, ids.get(who))
        s.call_driver('ei_' + who, 'AddMatch', 's', ("eavesdrop='true',interface='com.example.I'",))
    s.connect('a', ids.get('root'))
    s.connect('b', ids.get('root'))
    s.call_driver('b', 'AddMatch', 's', ("eavesdrop='true'",))
    s.call_driver('b', 'AddMatch', 's', ("type='method_call'",))
    s.step('setup')
    for frm, to in (('a', '@b'), ('b', '@a'), ('a', '@e_root'), ('a', '@a')):
        for typ in TYPES:
            for flags in (0, NRE):
                s.step('%s %s to %s flags %d' % (frm, W.TYPE_NAMES[typ], to, flags))
                send_kind(s, frm, typ, to, flags, 'eav')
        s.step('asked reply')
        serial = send_kind(s, frm, W.METHOD_CALL, to, 0, 'ask')
        s.step('the reply')
        target = to[1:]
        send_kind(s, target, W.METHOD_RETURN, '@' + frm, 0, 'ans', reply_serial=serial)
        s.step('the error')
        serial = send_kind(s, frm, W.METHOD_CALL, to, 0, 'ask2')
        s.step('err')
        send_kind(s, target, W.ERROR, '@' + frm, 0, 'ans', reply_serial=serial)
    s.step('driver traffic')
    s.call_driver('a', 'GetId')
    s.call_driver('a', 'RequestName', 'su', ('com.example.E', 0))
    s.step('broadcast')
    s.send('a', W.SIGNAL, path='/', iface='com.example.I', member='B')


def fds(s, ids):
    """messages with fds: unicast, broadcast, to a client without fd
    passing, an index beyond the fds, too few fds"""
    s.connect('a', ids.get('root'))
    s.connect('b', ids.get('root'))
    s.connect('nofd', ids.get('root'), negotiate_fds=False)
    s.connect('sub', ids.get('root'))
    s.call_driver('sub', 'AddMatch', 's', ("type='signal'",))
    s.call_driver('nofd', 'AddMatch', 's', ("type='signal'",))
    s.step('setup')
    fd = os.open('/dev/null', os.O_RDONLY)
    s.register_fd(fd, 'devnull')
    try:
        for to in ('@b', '@nofd', None):
            for typ in (W.METHOD_CALL, W.SIGNAL):
                s.step('%s with fd to %s' % (W.TYPE_NAMES[typ], to))
                s.send('a', typ, dest=to, path='/', iface='com.example.I', member='F', sig='h', body=(0,),
                       fds=[fd])
        s.step('index beyond the fds')
        s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='F', sig='h', body=(3,),
               fds=[fd])
        s.step('index without fds')
        s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='F', sig='h', body=(0,))
        s.step('two fds')
        s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='F', sig='hh', body=(0, 1),
               fds=[fd, fd])
        s.step('fewer fds than UNIX_FDS')
        s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='F', sig='h', body=(0,),
               fds=[fd], unix_fds=2)
    finally:
        os.close(fd)


def policy_probe(s, ids, owner_names, calls, users=('bbtest1', 'nobody')):
    """one root connection owns every name of owner_names (from several
    policy files); others send it calls, unicast signals and broadcasts"""
    observers(s, ids, monitor=False, eavesdrop=True, watcher=False)
    s.connect('svc', ids.get('root'))
    s.call_driver('svc', 'AddMatch', 's', ("type='signal'",))
    for n in owner_names:
        s.call_driver('svc', 'RequestName', 'su', (n, 0))
    s.step('owner holds %d names' % len(owner_names))
    senders = [u for u in users if ids.get(u) is not None] + ['root']
    for u in senders:
        s.connect('c_' + u, ids.get(u))
    s.step('senders')
    for u in senders:
        for n, path, iface, member in calls:
            s.step('%s calls %s %s.%s' % (u, n, iface, member))
            s.send('c_' + u, W.METHOD_CALL, dest=n, path=path, iface=iface, member=member)
            s.step('%s signals %s %s.%s' % (u, n, iface, member))
            s.send('c_' + u, W.SIGNAL, dest=n, path=path, iface=iface or 'com.example.I', member=member,
                   flags=NRE)
        for n in owner_names:
            s.step('%s broadcasts as %s' % (u, n))
            s.send('c_' + u, W.SIGNAL, path='/', iface=n, member='Changed')
    s.step('svc broadcasts')
    for n in owner_names:
        s.send('svc', W.SIGNAL, path='/', iface=n, member='Changed')


def activation(s, ids):
    """a real service started on demand: the queued call, the reply, the
    name appearing and going, StartServiceByName, NO_AUTO_START"""
    observers(s, ids, eavesdrop=False)
    s.connect('a', ids.get('root'))
    s.step('setup')
    for round_ in range(2):
        s.step('auto-start %d' % round_)
        serial = s.send('a', W.METHOD_CALL, dest=SERVICE, path='/', iface='com.example.Iface', member='First')
        s.wait_reply('a', serial)
        s.step('running')
        serial = s.send('a', W.METHOD_CALL, dest=SERVICE, path='/', iface='com.example.Iface', member='Second')
        s.wait_reply('a', serial)
        s.step('exit')
        s.send('a', W.METHOD_CALL, dest=SERVICE, path='/', iface='com.example.Iface', member='Exit', flags=NRE)
        s.pause(0.5)
        s.step('no auto start')
        s.send('a', W.METHOD_CALL, dest=SERVICE, path='/', iface='com.example.Iface', member='X', flags=NAS)
        s.step('StartServiceByName')
        serial = s.call_driver('a', 'StartServiceByName', 'su', (SERVICE, 0))
        s.wait_reply('a', serial)
        s.step('already running')
        serial = s.call_driver('a', 'StartServiceByName', 'su', (SERVICE, 0))
        s.wait_reply('a', serial)
        s.step('exit again')
        s.send('a', W.METHOD_CALL, dest=SERVICE, path='/', iface='com.example.Iface', member='Exit', flags=NRE)
        s.pause(0.5)
    s.step('failing activations')
    for name in (ACTIVATABLE, ACTIVATABLE_BROKEN):
        serial = s.send('a', W.METHOD_CALL, dest=name, path='/', iface='com.example.Iface', member='M')
        s.wait_reply('a', serial)
        serial = s.call_driver('a', 'StartServiceByName', 'su', (name, 0))
        s.wait_reply('a', serial)


def limits(s, ids):
    """every per-connection limit of configs/limits.conf, reached"""
    s.connect('a', ids.get('root'))
    s.connect('b', ids.get('root'))
    s.step('setup')
    for i in range(5):
        s.step('name %d' % i)
        s.call_driver('a', 'RequestName', 'su', ('com.example.L%d' % i, 0))
    for i in range(5):
        s.step('match %d' % i)
        s.call_driver('a', 'AddMatch', 's', ("type='signal',member='M%d'" % i,))
    for i in range(4):
        s.step('pending call %d' % i)
        s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='Pending')
    s.step('large body')
    s.send('a', W.METHOD_CALL, dest='@b', path='/', iface='com.example.I', member='Big', sig='s', body=('x' * 5000,))
    fd = os.open('/dev/null', os.O_RDONLY)
    s.register_fd(fd, 'devnull')
    try:
        s.step('three fds')
        s.send('b', W.METHOD_CALL, dest='@a', path='/', iface='com.example.I', member='F', sig='hhh',
               body=(0, 1, 2), fds=[fd, fd, fd])
    finally:
        os.close(fd)
    for i in range(8):
        s.step('connection %d' % i)
        s.connect('c%d' % i, ids.get('root'))
