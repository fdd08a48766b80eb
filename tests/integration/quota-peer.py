# quota-peer.py ADDRESS ROLE: one client of test-quota.sh, run as a uid of
# its own (setpriv).  Commands on stdin, answers on stdout, one per line.
#   reader: owns org.busbridge.QuotaTest; reads nothing until "serve",
#           then answers every call to it
#   sender: "flood N SIZE": up to N calls of SIZE bytes to the reader,
#           stops at the first error: "sent K ERRORNAME|none"
#           "call": one call; "queued" if no error came back within 1 s,
#           else the error's name; then "getid MS" (a driver round trip);
#           "wait": "reply" once the answer to "call" arrived (10 s)
import sys, time
import dbus, dbus.bus, dbus.lowlevel as L, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
addr, role = sys.argv[1], sys.argv[2]
NAME = 'org.busbridge.QuotaTest'
bus = dbus.bus.BusConnection(addr)
ctx = GLib.MainContext.default()


def out(s):
    sys.stdout.write(s + '\n')
    sys.stdout.flush()


def spin(cond, timeout):
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        GLib.timeout_add(5, lambda: False)
        ctx.iteration(True)
    return cond()


if role == 'reader':
    bus.request_name(NAME)

    def on_msg(c, m):
        if isinstance(m, L.MethodCallMessage) and m.get_member() == 'Echo':
            c.send_message(L.MethodReturnMessage(m))
            return L.HANDLER_RESULT_HANDLED
        return L.HANDLER_RESULT_NOT_YET_HANDLED
    out('ready')
    for line in sys.stdin:
        if line.strip() == 'serve':
            bus.add_message_filter(on_msg)
            out('serving')
            # until stdin closes
            GLib.io_add_watch(0, GLib.IO_IN | GLib.IO_HUP, lambda *a: sys.exit(0))
            GLib.MainLoop().run()
    sys.exit(0)

errors, replies = [], []


def call(size):
    m = L.MethodCallMessage(NAME, '/', 'org.busbridge.QuotaTest', 'Echo')
    m.append(dbus.ByteArray(b'x' * size), signature='ay')
    pc = bus.send_message_with_reply(m, lambda r: (errors if isinstance(r, L.ErrorMessage) else replies).append(r),
                                     60.0)
    return pc


pending = []
out('ready')
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == 'flood':
        n, size = int(w[1]), int(w[2])
        errors.clear()
        k = 0
        while k < n and not errors:
            pending.append(call(size))
            k += 1
            spin(lambda: errors, 0.002)
        spin(lambda: errors, 0.5)
        out('sent %d %s' % (k - (1 if errors else 0), errors[0].get_error_name() if errors else 'none'))
    elif w[0] == 'call':
        errors.clear(); replies.clear()
        pending.append(call(16))
        spin(lambda: errors, 1.0)
        out(errors[0].get_error_name() if errors else 'queued')
        t = time.monotonic()
        bus.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetId', '', ())
        out('getid %d' % int((time.monotonic() - t) * 1000))
    elif w[0] == 'wait':
        out('reply' if spin(lambda: replies, 10) else 'noreply')
