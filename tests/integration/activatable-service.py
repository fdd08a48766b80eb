#!/usr/bin/python3
# activatable-service.py NAME MODE LOG: an activatable dbus-python service
# for tests/integration/test-activation.sh (not a test itself: run.sh only
# runs test-*).  Started by the bus (Exec= in a .service file), it connects
# to $DBUS_STARTER_ADDRESS, appends "start PID" to LOG and owns NAME.
#
# Object /com/example/Act, interface com.example.Act:
#   Echo(s) -> s        the same string
#   Env(s) -> s         the value of an environment variable ("" if unset)
#   Exit()              replies, then exits
#
# MODE "echo": keeps running (at most 60 s).
# MODE "idle": exits on idle after every call, the race-free way
#   (doc/activation.md): reply, release the name, answer what was already
#   delivered, exit.  Calls not yet delivered stay with the bus, which
#   starts the service again for them.
import os
import sys

import dbus
import dbus.bus
import dbus.lowlevel as L
import dbus.mainloop.glib
from gi.repository import GLib

IFACE = 'com.example.Act'
PATH = '/com/example/Act'


def main():
    name, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    conn = dbus.bus.BusConnection(os.environ['DBUS_STARTER_ADDRESS'])
    state = {'releasing': False}

    def exit_on_idle():
        # 1. release the name: what the bus still holds for it goes back
        #    to the bus (busbridged: to the activator) and starts us again
        state['releasing'] = True
        conn.release_name(name)
        # 2. everything delivered before the ReleaseName reply is queued
        #    in libdbus by now: answer it
        ctx = GLib.MainContext.default()
        while ctx.pending():
            ctx.iteration(False)
        # 3. nothing can reach the name any more: exit
        loop.quit()
        return False

    def handle(c, msg):
        if msg.get_type() != L.MESSAGE_TYPE_METHOD_CALL or msg.get_path() != PATH:
            return L.HANDLER_RESULT_NOT_YET_HANDLED
        member = msg.get_member()
        reply = L.MethodReturnMessage(msg)
        if member == 'Echo':
            reply.append(*msg.get_args_list(), signature='s')
        elif member == 'Env':
            reply.append(os.environ.get(str(msg.get_args_list()[0]), ''), signature='s')
        elif member == 'Exit':
            GLib.idle_add(loop.quit)
        else:
            reply = L.ErrorMessage(msg, 'com.example.Act.Error.UnknownMethod', member)
        if not msg.get_no_reply():
            c.send_message(reply)
        if mode == 'idle' and not state['releasing']:
            state['releasing'] = True
            GLib.idle_add(exit_on_idle)
        return L.HANDLER_RESULT_HANDLED

    conn.add_message_filter(handle)
    # logged first: once the name is taken, callers may look
    with open(log, 'a') as f:
        f.write('start %d\n' % os.getpid())
    r = conn.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if r != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        sys.exit('activatable-service: could not own %s (%d)' % (name, r))
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    conn.flush()


if __name__ == '__main__':
    main()
