#!/usr/bin/python3
# py-service.py NAME [READY_FILE]: a dbus-python test service for the
# integration tests (not a test itself: run.sh only runs test-*).
#
# Owns NAME on $DBUS_SESSION_BUS_ADDRESS and exports /com/example/Test with
# interface com.example.Test:
#   Echo(...)           -> the same body, same signature
#   Fail(s)             -> error com.example.Test.Error.Failed with that message
#   Sleep(u ms)         -> empty reply after ms milliseconds
#   NeverReply()        -> never replies
#   ExitWithoutReply()  -> the process exits without replying
#   ReadFd(h) -> s      -> the data read from the fd until EOF
#   GetFd() -> h        -> the read end of a pipe holding "data from the service"
#   Emit(s)             -> emits the broadcast signal com.example.Test.Hello(s)
#   EmitTo(s dest, s)   -> emits Hello(s) as a unicast signal to dest
#   Quit()              -> replies, then exits
# When READY_FILE is given, "UNIQUE-NAME PID" is written to it once the name
# is owned.
import os
import sys

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

IFACE = 'com.example.Test'
PATH = '/com/example/Test'


class Failed(dbus.DBusException):
    _dbus_error_name = 'com.example.Test.Error.Failed'


def echo_filter(conn, msg):
    # Echo is answered here, below dbus.service, to return the body verbatim
    if (msg.get_type() == dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL
            and msg.get_interface() == IFACE and msg.get_member() == 'Echo'
            and msg.get_path() == PATH):
        reply = dbus.lowlevel.MethodReturnMessage(msg)
        sig = msg.get_signature()
        if sig:
            reply.append(*msg.get_args_list(byte_arrays=True), signature=sig)
        conn.send_message(reply)
        return dbus.lowlevel.HANDLER_RESULT_HANDLED
    return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


class Service(dbus.service.Object):
    def __init__(self, conn, loop):
        super().__init__(conn, PATH)
        self.loop = loop

    @dbus.service.method(IFACE, in_signature='s', out_signature='')
    def Fail(self, text):
        raise Failed(text)

    @dbus.service.method(IFACE, in_signature='u', out_signature='',
                         async_callbacks=('ok', 'err'))
    def Sleep(self, ms, ok, err):
        GLib.timeout_add(int(ms), lambda: (ok(), False)[1])

    @dbus.service.method(IFACE, in_signature='', out_signature='',
                         async_callbacks=('ok', 'err'))
    def NeverReply(self, ok, err):
        pass

    @dbus.service.method(IFACE, in_signature='', out_signature='')
    def ExitWithoutReply(self):
        os._exit(0)

    @dbus.service.method(IFACE, in_signature='h', out_signature='s')
    def ReadFd(self, fd):
        f = fd.take()
        data = b''
        while True:
            chunk = os.read(f, 4096)
            if not chunk:
                break
            data += chunk
        os.close(f)
        return data.decode()

    @dbus.service.method(IFACE, in_signature='', out_signature='h')
    def GetFd(self):
        r, w = os.pipe()
        os.write(w, b'data from the service')
        os.close(w)
        fd = dbus.types.UnixFd(r)
        os.close(r)
        return fd

    @dbus.service.signal(IFACE, signature='s')
    def Hello(self, text):
        pass

    @dbus.service.method(IFACE, in_signature='s', out_signature='')
    def Emit(self, text):
        self.Hello(text)

    @dbus.service.method(IFACE, in_signature='ss', out_signature='',
                         connection_keyword='conn')
    def EmitTo(self, dest, text, conn):
        sig = dbus.lowlevel.SignalMessage(PATH, IFACE, 'Hello')
        sig.set_destination(dest)
        sig.append(text, signature='s')
        conn.send_message(sig)

    @dbus.service.method(IFACE, in_signature='', out_signature='')
    def Quit(self):
        GLib.idle_add(self.loop.quit)


def main():
    name = sys.argv[1]
    ready = sys.argv[2] if len(sys.argv) > 2 else None
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    conn = dbus.bus.BusConnection(os.environ['DBUS_SESSION_BUS_ADDRESS'])
    Service(conn, loop)
    conn.add_message_filter(echo_filter)
    r = conn.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if r != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        sys.exit('py-service: could not own %s (%d)' % (name, r))
    if ready:
        with open(ready + '.tmp', 'w') as f:
            f.write('%s %d\n' % (conn.get_unique_name(), os.getpid()))
        os.rename(ready + '.tmp', ready)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, 15, loop.quit)
    # never outlive the test that started us
    GLib.timeout_add_seconds(int(os.environ.get('SERVICE_LIFETIME', '60')), loop.quit)
    loop.run()


if __name__ == '__main__':
    main()
