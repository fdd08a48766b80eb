#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# <limit>s of the configuration, on buses of our own (copies of the test
# config with low limits): max_names_per_connection,
# max_match_rules_per_connection, max_replies_per_connection,
# max_message_size, reply_timeout, max_connections_per_user; the errors are
# dbus-daemon's (org.freedesktop.DBus.Error.LimitsExceeded, NoReply, ...).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/limits.conf" "$T/limits.sock" max_names_per_connection=5 max_match_rules_per_connection=5 \
	max_replies_per_connection=3 max_message_size=100000 reply_timeout=1000
own_config "$T/conns.conf" "$T/conns.sock" max_connections_per_user=3
if ! start_bus limits "$T/limits.conf"; then
	not_ok "the bus with low limits did not start: $(head -c 300 "$T/limits.log")"; echo "1..$n"; exit 0
fi
LIMITS_ADDR=$OWN_ADDR LIMITS_PID=$OWN_PID
if ! start_bus conns "$T/conns.conf"; then
	not_ok "the bus with max_connections_per_user=3 did not start: $(head -c 300 "$T/conns.log")"; echo "1..$n"; exit 0
fi
CONNS_ADDR=$OWN_ADDR

relay_tap < <(LIMITS_ADDR=$LIMITS_ADDR CONNS_ADDR=$CONNS_ADDR timeout -k 2 50 "$PY" - 2>"$T/py.err" <<'EOF'
import os, sys, time, traceback
import dbus, dbus.bus, dbus.lowlevel as L, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
ADDR, CONNS = os.environ['LIMITS_ADDR'], os.environ['CONNS_ADDR']
D = ('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus')
LIMITS = 'org.freedesktop.DBus.Error.LimitsExceeded'


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


def err(f, *a, **k):
    """the D-Bus error name f(...) fails with, or None"""
    try:
        f(*a, **k)
    except dbus.DBusException as e:
        return e.get_dbus_name()
    return None


def spin(cond, timeout=5.0):
    ctx = GLib.MainContext.default()
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        GLib.timeout_add(10, lambda: False)
        ctx.iteration(True)
    return True


def conn(addr=ADDR):
    return dbus.bus.BusConnection(addr)


def drv(c, method, sig='', *args):
    return c.call_blocking(*D, method, sig, args)


def black_hole(addr=ADDR):
    """a connection that takes method calls and never answers them"""
    c = conn(addr)
    c.add_message_filter(lambda cc, m: L.HANDLER_RESULT_HANDLED
                         if m.get_type() == L.MESSAGE_TYPE_METHOD_CALL else L.HANDLER_RESULT_NOT_YET_HANDLED)
    return c


names = {}


@case('max_names_per_connection=5: RequestName beyond it fails with LimitsExceeded')
def _():
    c = conn()
    names['c'] = c
    got = []
    for i in range(10):
        e = err(drv, c, 'RequestName', 'su', 'com.example.Limits.N%d' % i, 4)
        got.append(e or 'ok')
        if e:
            break
    assert got[-1] == LIMITS, 'replies: %r' % got
    assert len(got) - 1 <= 5, 'owned %d names' % (len(got) - 1)
    names['owned'] = len(got) - 1


@case('max_names_per_connection=5: the unique name counts, 4 well-known names (dbus-daemon)')
def _():
    eq(names.get('owned'), 4, 'well-known names owned')


@case('max_names_per_connection: after ReleaseName another name can be owned')
def _():
    c = names['c']
    eq(drv(c, 'ReleaseName', 's', 'com.example.Limits.N0'), 1, 'ReleaseName')
    eq(drv(c, 'RequestName', 'su', 'com.example.Limits.Again', 4), 1, 'RequestName')
    eq(err(drv, c, 'RequestName', 'su', 'com.example.Limits.OneMore', 4), LIMITS, 'the next one')
    # another connection is not affected
    eq(drv(conn(), 'RequestName', 'su', 'com.example.Limits.Other', 4), 1, 'another connection')


@case('max_match_rules_per_connection=5: the 6th AddMatch fails with LimitsExceeded; RemoveMatch frees one')
def _():
    c = conn()
    for i in range(5):
        drv(c, 'AddMatch', 's', "type='signal',member='M%d'" % i)
    eq(err(drv, c, 'AddMatch', 's', "type='signal',member='M5'"), LIMITS, '6th AddMatch')
    drv(c, 'RemoveMatch', 's', "type='signal',member='M0'")
    drv(c, 'AddMatch', 's', "type='signal',member='M5'")
    eq(err(drv, c, 'AddMatch', 's', "type='signal',member='M6'"), LIMITS, 'again full')
    drv(conn(), 'AddMatch', 's', "type='signal',member='M0'")


@case('max_replies_per_connection=3: the 4th pending call fails with LimitsExceeded before the 3 end; reply_timeout ends them')
def _():
    hole, c = black_hole(), conn()
    res = {}
    t0 = time.monotonic()
    for i in range(5):
        m = L.MethodCallMessage(hole.get_unique_name(), '/', 'com.example.Limits', 'Call%d' % i)
        c.send_message_with_reply(m, lambda r, i=i: res.__setitem__(i, (time.monotonic() - t0, r.get_error_name())), 20)
    assert spin(lambda: 3 in res and 4 in res, 3), 'no early error: %r' % res
    eq([res[3][1], res[4][1]], [LIMITS, LIMITS], 'calls 4 and 5')
    assert not any(i in res for i in range(3)), 'the first 3 were answered early: %r' % res
    assert spin(lambda: len(res) == 5, 5), 'the first 3 never ended: %r' % res
    eq([res[i][1] for i in range(3)], ['org.freedesktop.DBus.Error.NoReply'] * 3, 'the first 3')
    # and once they are gone calls can be made again
    eq(err(c.call_blocking, hole.get_unique_name(), '/', 'com.example.Limits', 'After', '', (), timeout=10),
       'org.freedesktop.DBus.Error.NoReply', 'a new call, after the timeout')


@case('reply_timeout=1000: a call to a peer that never replies gets NoReply from the bus after 1 s')
def _():
    hole, c = black_hole(), conn()
    t = time.monotonic()
    try:
        c.call_blocking(hole.get_unique_name(), '/', 'com.example.Limits', 'Never', '', (), timeout=20)
    except dbus.DBusException as e:
        dt = time.monotonic() - t
        eq(e.get_dbus_name(), 'org.freedesktop.DBus.Error.NoReply', 'error')
        assert 0.95 <= dt < 6, 'after %.2f s' % dt
    else:
        raise AssertionError('it was answered')


@case('max_message_size=100000: a 90000-byte message is delivered')
def _():
    c, peer = conn(), conn()
    got = []
    peer.add_message_filter(lambda cc, m: (got.append(len(m.get_args_list(byte_arrays=True)[0])), L.HANDLER_RESULT_HANDLED)[1]
                            if m.get_member() == 'Big' else L.HANDLER_RESULT_NOT_YET_HANDLED)
    m = L.MethodCallMessage(peer.get_unique_name(), '/', 'com.example.Limits', 'Big')
    m.set_no_reply(True)
    m.append(dbus.ByteArray(b'x' * 90000), signature='ay')
    c.send_message(m)
    assert spin(lambda: got, 5), 'not delivered'
    eq(got, [90000], 'delivered')


@case('max_message_size=100000: a 110000-byte message disconnects its sender (dbus-daemon), the bus lives on')
def _():
    c, other = conn(), conn()
    t = time.monotonic()
    e = err(c.call_blocking, *D, 'GetId', 'ay', (dbus.ByteArray(b'x' * 110000),), timeout=10)
    assert e in ('org.freedesktop.DBus.Error.Disconnected', 'org.freedesktop.DBus.Error.LimitsExceeded',
                 'org.freedesktop.DBus.Error.NoReply'), 'error %s' % e
    assert time.monotonic() - t < 5, 'only after %.1f s' % (time.monotonic() - t)
    assert spin(lambda: not c.get_is_connected(), 5), 'still connected (error %s)' % e
    eq(len(str(drv(other, 'GetId'))), 32, 'another connection still works')
    eq(len(str(drv(conn(), 'GetId'))), 32, 'a new connection works')


@case('max_connections_per_user=3: a 4th connection of the uid is refused with LimitsExceeded; one more after one closes')
def _():
    cs = [conn(CONNS) for i in range(3)]
    try:
        conn(CONNS)
    except dbus.DBusException as e:
        eq(e.get_dbus_name(), LIMITS, 'the 4th connection')
    else:
        raise AssertionError('a 4th connection was accepted')
    cs.pop().close()
    ok = spin(lambda: err(conn, CONNS) is None, 3)   # the bus notices the close soon
    assert ok, 'still refused after a close'
EOF
)
if grep -q Traceback "$T/py.err"; then echo "# python: $(tail -n 3 "$T/py.err")" >&2; fi
if ! kill -0 "$LIMITS_PID" 2>/dev/null; then not_ok "the bus with low limits died: $(tail -n 5 "$T/limits.log")"; fi
echo "1..$n"
