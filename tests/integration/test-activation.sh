#!/bin/bash
# Bus activation with real .service files (activatable-service.py): auto-start
# and the reply, StartServiceByName, a service that exits on idle after every
# call answering every one of many pipelined calls, the activation
# environment, failures (bad Exec, exit before the name is taken, a signal,
# the timeout on a bus of its own, a queue over quota, max_pending_service_starts)
# each answering every queued caller with exactly one error, ListActivatableNames and
# ReloadConfig adding and removing a name.  dbus-daemon's error names and
# texts; every case passes against /usr/bin/dbus-daemon too.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

: "${TEST_SERVICEDIR:?run me through run.sh}"
U=t$$x$RANDOM
P=com.example.Act.$U
SVC=$TEST_SERVICEDIR
_extra_cleanup='rm -f "$SVC/$P".*.service'

# service DIR NAME EXEC...: write DIR/NAME.service
service() {
	local dir=$1 name=$2; shift 2
	printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$name" "$*" >"$dir/$name.service"
}
act() { echo "$PY $here/activatable-service.py $1 $2 $T/$1.log"; }

service "$SVC" "$P.Echo" "$(act "$P.Echo" echo)"
service "$SVC" "$P.Start" "$(act "$P.Start" echo)"
service "$SVC" "$P.Idle" "$(act "$P.Idle" idle)"
service "$SVC" "$P.Env" "$(act "$P.Env" echo)"
service "$SVC" "$P.BadExec" "$T/no-such-program --arg"
service "$SVC" "$P.Exit3" "/bin/sh -c 'exit 3'"
service "$SVC" "$P.Killed" "/bin/sh -c 'kill -9 \$\$'"
service "$SVC" "$P.Quotes" "/bin/sh -c 'unclosed"

# a bus of its own with a short service_start_timeout
mkdir -p "$T/svc-timeout" "$T/svc-limit"
service "$T/svc-timeout" "$P.Sleep" "/bin/sleep 30"
service "$T/svc-timeout" "$P.True" "/bin/true"
service "$T/svc-timeout" "$P.Quota" "/bin/sleep 30"
# (and small pools: the activator's queue is 16 MiB, the floor)
own_config "$T/timeout.conf" "$T/timeout.sock" service_start_timeout=1000 max_outgoing_bytes=1000000
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/svc-timeout</servicedir>|" "$T/timeout.conf"
# ... and one with max_pending_service_starts=1
service "$T/svc-limit" "$P.Slow1" "/bin/sleep 30"
service "$T/svc-limit" "$P.Slow2" "/bin/sleep 30"
own_config "$T/limit.conf" "$T/limit.sock" service_start_timeout=2000 max_pending_service_starts=1
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/svc-limit</servicedir>|" "$T/limit.conf"

if ! start_bus timeout "$T/timeout.conf"; then
	not_ok "the bus with service_start_timeout=1000 did not start"; exit 0
fi
TIMEOUT_ADDR=$OWN_ADDR
if ! start_bus limit "$T/limit.conf"; then
	not_ok "the bus with max_pending_service_starts=1 did not start"; exit 0
fi
LIMIT_ADDR=$OWN_ADDR

relay_tap < <(HERE=$here P=$P T=$T SVC=$SVC TIMEOUT_ADDR=$TIMEOUT_ADDR LIMIT_ADDR=$LIMIT_ADDR \
	timeout -k 2 100 "$PY" - 2>"$T/py.err" <<'EOF'
import os, sys, time, traceback
import dbus, dbus.bus, dbus.lowlevel as L, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
P, T, SVC = os.environ['P'], os.environ['T'], os.environ['SVC']
D = ('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus')
PATH, IFACE = '/com/example/Act', 'com.example.Act'
E = 'org.freedesktop.DBus.Error.'
GLib.timeout_add(50, lambda: True)  # iterations never block for long
ctx = GLib.MainContext.default()


def case(desc):
    def run(f):
        try:
            f()
            print('ok - ' + desc)
        except AssertionError as e:
            print('not ok - %s: %s' % (desc, e))
        except Exception as e:
            print('not ok - %s: %s: %s' % (desc, type(e).__name__, e))
            traceback.print_exc()
        sys.stdout.flush()
    return run


def eq(got, want, what):
    assert got == want, '%s: got %r, want %r' % (what, got, want)


class Conn:
    """a connection that sends calls without libdbus pending calls and
    records every reply it gets, so a second reply would be seen"""

    def __init__(self, addr=None):
        addr = addr or os.environ['DBUS_SESSION_BUS_ADDRESS']
        self.c = dbus.bus.BusConnection(addr)
        self.replies = {}
        self.c.add_message_filter(self.filter)

    def filter(self, c, m):
        if m.get_type() in (L.MESSAGE_TYPE_METHOD_RETURN, L.MESSAGE_TYPE_ERROR):
            self.replies.setdefault(m.get_reply_serial(), []).append(m)
            return L.HANDLER_RESULT_HANDLED
        return L.HANDLER_RESULT_NOT_YET_HANDLED

    def send(self, dest, member, *args, sig='', path=PATH, iface=IFACE):
        m = L.MethodCallMessage(dest, path, iface, member)
        if args:
            m.append(*args, signature=sig)
        return self.c.send_message(m)

    def driver(self, member, sig='', *args):
        return self.c.call_blocking(*D, member, sig, args, timeout=30)

    def wait(self, serials, secs=40, settle=0.3):
        """the replies to @serials: a list of lists, one per call"""
        end = time.time() + secs
        while time.time() < end and not all(s in self.replies for s in serials):
            ctx.iteration(True)
        end = time.time() + settle
        while time.time() < end:
            ctx.iteration(True)
        return [self.replies.get(s, []) for s in serials]


def one_error(rs, name, text=None, what='call'):
    """every call got exactly one reply: the error @name (text containing @text)"""
    for i, r in enumerate(rs):
        assert len(r) == 1, '%s %d: %d replies (%s)' % (what, i, len(r), [
            m.get_error_name() or 'return' for m in r])
        m = r[0]
        eq(m.get_type(), L.MESSAGE_TYPE_ERROR, '%s %d: reply type' % (what, i))
        eq(m.get_error_name(), name, '%s %d: error' % (what, i))
        if text is not None:
            msg = str(m.get_args_list()[0])
            assert text in msg, '%s %d: %r not in %r' % (what, i, text, msg)


def starts(name):
    try:
        with open(os.path.join(T, name + '.log')) as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


c = Conn()
c.driver('ReloadConfig')   # the .service files were written after the bus started


@case('ListActivatableNames lists the new .service files')
def _():
    names = [str(n) for n in c.driver('ListActivatableNames')]
    eq(names[0], 'org.freedesktop.DBus', 'first name')
    for n in ('Echo', 'Start', 'Idle', 'BadExec', 'Exit3'):
        assert P + '.' + n in names, '%s.%s not in %s' % (P, n, names)


@case('a call to an activatable name starts the service and gets its reply')
def _():
    eq(c.driver('NameHasOwner', 's', P + '.Echo'), False, 'owned before')
    r = c.wait([c.send(P + '.Echo', 'Echo', 'hello', sig='s')])[0]
    eq(len(r), 1, 'replies')
    eq(r[0].get_type(), L.MESSAGE_TYPE_METHOD_RETURN, 'reply type')
    eq(str(r[0].get_args_list()[0]), 'hello', 'reply')
    eq(starts(P + '.Echo'), 1, 'starts')
    eq(c.driver('NameHasOwner', 's', P + '.Echo'), True, 'owned after')
    r = c.wait([c.send(P + '.Echo', 'Echo', 'again', sig='s')])[0]
    eq(str(r[0].get_args_list()[0]), 'again', 'second reply')
    eq(starts(P + '.Echo'), 1, 'starts after the second call')


@case('StartServiceByName: DBUS_START_REPLY_SUCCESS once the name is taken, then ALREADY_RUNNING')
def _():
    eq(int(c.driver('StartServiceByName', 'su', P + '.Start', 0)), 1, 'first start')
    eq(c.driver('NameHasOwner', 's', P + '.Start'), True, 'owned')
    eq(int(c.driver('StartServiceByName', 'su', P + '.Start', 0)), 2, 'second start')
    eq(starts(P + '.Start'), 1, 'starts')


@case('a service exiting on idle after every call answers every one of 60 calls sent without waiting')
def _():
    # bursts of pipelined calls, some landing while the service releases
    # its name and exits, some after it is gone
    serials = []
    for i in range(60):
        serials.append(c.send(P + '.Idle', 'Echo', 'n%d' % i, sig='s'))
        if i % 3 == 2:
            end = time.time() + 0.04
            while time.time() < end:
                ctx.iteration(False)
                time.sleep(0.005)
    rs = c.wait(serials, secs=60)
    for i, r in enumerate(rs):
        assert len(r) == 1, 'call %d: %d replies' % (i, len(r))
        assert r[0].get_type() == L.MESSAGE_TYPE_METHOD_RETURN, 'call %d: %s: %s' % (
            i, r[0].get_error_name(), r[0].get_args_list())
        eq(str(r[0].get_args_list()[0]), 'n%d' % i, 'reply %d' % i)
    assert starts(P + '.Idle') >= 2, 'started %d times' % starts(P + '.Idle')


@case('the activation environment: UpdateActivationEnvironment, DBUS_STARTER_*')
def _():
    c.driver('UpdateActivationEnvironment', 'a{ss}', {'ACT_TEST_VAR': 'value-' + P})
    env = {}
    for v in ('ACT_TEST_VAR', 'DBUS_STARTER_BUS_TYPE', 'DBUS_STARTER_ADDRESS', 'DBUS_SESSION_BUS_ADDRESS'):
        r = c.wait([c.send(P + '.Env', 'Env', v, sig='s')])[0]
        eq(r[0].get_type(), L.MESSAGE_TYPE_METHOD_RETURN, v)
        env[v] = str(r[0].get_args_list()[0])
    eq(env['ACT_TEST_VAR'], 'value-' + P, 'ACT_TEST_VAR')
    eq(env['DBUS_STARTER_BUS_TYPE'], 'session', 'DBUS_STARTER_BUS_TYPE')
    path = os.environ['DBUS_SESSION_BUS_ADDRESS'].split(',')[0]
    assert path in env['DBUS_STARTER_ADDRESS'], 'DBUS_STARTER_ADDRESS %r' % env['DBUS_STARTER_ADDRESS']
    eq(env['DBUS_SESSION_BUS_ADDRESS'], env['DBUS_STARTER_ADDRESS'], 'DBUS_SESSION_BUS_ADDRESS')


@case('bad Exec: every queued caller gets exactly one Spawn.ExecFailed')
def _():
    rs = c.wait([c.send(P + '.BadExec', 'Echo', 'x%d' % i, sig='s') for i in range(4)])
    one_error(rs, E + 'Spawn.ExecFailed', 'Failed to execute program %s.BadExec: No such file or directory' % P)


@case('exit before taking the name: every queued caller gets exactly one Spawn.ChildExited')
def _():
    rs = c.wait([c.send(P + '.Exit3', 'Echo', 'x%d' % i, sig='s') for i in range(4)])
    one_error(rs, E + 'Spawn.ChildExited', 'Process %s.Exit3 exited with status 3' % P)


@case('killed by a signal: every queued caller gets exactly one Spawn.ChildSignaled')
def _():
    rs = c.wait([c.send(P + '.Killed', 'Echo', 'x%d' % i, sig='s') for i in range(3)])
    one_error(rs, E + 'Spawn.ChildSignaled', 'Process %s.Killed received signal 9' % P)


@case('unclosed quotes in Exec: InvalidArgs')
def _():
    rs = c.wait([c.send(P + '.Quotes', 'Echo', 'x', sig='s')])
    one_error(rs, E + 'InvalidArgs', 'Unclosed quotes in command line')


@case('StartServiceByName of a failing service and of an unknown name: the errors')
def _():
    rs = c.wait([c.send(D[0], 'StartServiceByName', P + '.Exit3', dbus.UInt32(0), sig='su',
                        path=D[1], iface=D[2])])
    one_error(rs, E + 'Spawn.ChildExited', 'exited with status 3', 'StartServiceByName')
    rs = c.wait([c.send(D[0], 'StartServiceByName', P + '.Unknown', dbus.UInt32(0), sig='su',
                        path=D[1], iface=D[2]), c.send(P + '.Unknown', 'Echo', 'x', sig='s')])
    one_error(rs, E + 'ServiceUnknown', 'The name %s.Unknown was not provided by any .service files' % P)


@case('NO_AUTO_START to an activatable name: NameHasNoOwner (the core refuses to queue it)')
def _():
    m = L.MethodCallMessage(P + '.Exit3', PATH, IFACE, 'Echo')
    m.append('x', signature='s')
    m.set_auto_start(False)
    rs = c.wait([c.c.send_message(m)])
    one_error(rs, E + 'NameHasNoOwner', 'Name "%s.Exit3" does not exist' % P)


@case('ReloadConfig adds a new name and removes a deleted one')
def _():
    name = P + '.Reload'
    with open(os.path.join(SVC, name + '.service'), 'w') as f:
        f.write('[D-BUS Service]\nName=%s\nExec=%s %s/activatable-service.py %s echo %s/%s.log\n' % (
            name, sys.executable, os.environ['HERE'], name, T, name))
    c.driver('ReloadConfig')
    assert name in [str(n) for n in c.driver('ListActivatableNames')], 'not listed after the reload'
    r = c.wait([c.send(name, 'Echo', 'reloaded', sig='s')])[0]
    eq(r[0].get_type(), L.MESSAGE_TYPE_METHOD_RETURN, 'reply type (%s)' % r[0].get_error_name())
    eq(str(r[0].get_args_list()[0]), 'reloaded', 'reply')
    c.send(name, 'Exit')
    os.unlink(os.path.join(SVC, name + '.service'))
    c.driver('ReloadConfig')
    end = time.time() + 5
    while time.time() < end and c.driver('NameHasOwner', 's', name):
        time.sleep(0.05)
    assert name not in [str(n) for n in c.driver('ListActivatableNames')], 'still listed after the removal'
    one_error(c.wait([c.send(name, 'Echo', 'x', sig='s')]), E + 'ServiceUnknown')


@case('timeout (service_start_timeout=1000): every queued caller gets exactly one TimedOut')
def _():
    t = Conn(os.environ['TIMEOUT_ADDR'])
    start = time.time()
    rs = t.wait([t.send(P + '.Sleep', 'Echo', 'x%d' % i, sig='s') for i in range(4)], secs=15)
    one_error(rs, E + 'TimedOut',
              "Failed to activate service '%s.Sleep': timed out (service_start_timeout=1000ms)" % P)
    assert time.time() - start < 10, 'took %.1f s' % (time.time() - start)
    # a service that exits 0 without taking its name (it may have forked): not a failure
    # until the timeout
    rs = t.wait([t.send(P + '.True', 'Echo', 'x%d' % i, sig='s') for i in range(2)], secs=15)
    one_error(rs, E + 'TimedOut', "Failed to activate service '%s.True': timed out" % P)


@case('queue over quota: calls beyond what the activator may hold get LimitsExceeded, the rest TimedOut')
def _():
    t = Conn(os.environ['TIMEOUT_ADDR'])
    big = 'q' * (1024 * 1024)
    # 24 MiB for a service that never comes: more than the activator's
    # 16 MiB queue
    rs = t.wait([t.send(P + '.Quota', 'Echo', big, sig='s') for i in range(24)], secs=20)
    names = []
    for i, r in enumerate(rs):
        assert len(r) == 1, 'call %d: %d replies' % (i, len(r))
        eq(r[0].get_type(), L.MESSAGE_TYPE_ERROR, 'call %d: reply type' % i)
        names.append(r[0].get_error_name())
    assert set(names) <= {E + 'LimitsExceeded', E + 'TimedOut'}, 'errors: %s' % sorted(set(names))
    assert E + 'TimedOut' in names, 'no TimedOut: %s' % names
    # dbus-daemon holds them all (and stops reading the sender when its
    # max_incoming_bytes is reached); busbridged's activator has a quota
    if os.path.basename(os.environ.get('BUS_DAEMON', '')) == 'busbridged':
        assert E + 'LimitsExceeded' in names, 'no LimitsExceeded: %s' % names


@case('max_pending_service_starts=1: every caller of a second pending activation gets LimitsExceeded')
def _():
    t = Conn(os.environ['LIMIT_ADDR'])
    # (dbus-daemon counts every waiting message against the limit, so one
    # call to the first service)
    s1 = t.send(P + '.Slow1', 'Echo', 'x', sig='s')
    t.wait([], settle=0.3)
    rs = t.wait([t.send(P + '.Slow2', 'Echo', 'x%d' % i, sig='s') for i in range(3)], secs=5)
    one_error(rs, E + 'LimitsExceeded', 'max_pending_service_starts=1')
    one_error(t.wait([s1], secs=15), E + 'TimedOut')


# leave no service running
for n in ('Echo', 'Start', 'Env'):
    c.send(P + '.' + n, 'Exit', path=PATH)
c.c.flush()
EOF
)
echo "1..$n"
