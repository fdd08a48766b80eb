#!/usr/bin/env python3
"""What the bus sends, field by field: for every message each connection
receives in a fixed sequence of calls, one line with its type, member or
error name, flags and its header fields in the order they come.  The same
lines from busbridged and dbus-daemon mean the bus builds (and forwards)
its messages with the fields where dbus-daemon puts them.

usage: header-order-probe.py ADDRESS ACTIVATABLE-NAME
  ACTIVATABLE-NAME: a service whose Exec fails (for Spawn errors)
"""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
import dbuswire as w  # noqa: E402

NAMES = {1: "call", 2: "return", 3: "error", 4: "signal"}
FIELD = {1: "PATH", 2: "INTERFACE", 3: "MEMBER", 4: "ERROR_NAME", 5: "REPLY_SERIAL", 6: "DESTINATION",
         7: "SENDER", 8: "SIGNATURE", 9: "UNIX_FDS"}
path = w.parse_address(sys.argv[1])
activatable = sys.argv[2]
lines = []


def show(who, m, what):
    typ, flags, _, fields, _ = m
    label = fields.get(3) or fields.get(4) or ""
    order = ",".join(FIELD.get(k, str(k)) for k in fields)
    lines.append(f"{what}, {who} gets {NAMES.get(typ, typ)} {label} (flags {flags}): {order}")


def drain(conns, what):
    time.sleep(0.15)
    for who, c in conns:
        for m in c.drain(0.15):
            show(who, m, what)


def body(sig, *values):
    return w.marshal_body(sig, list(values))


def call(c, member, sig=None, b=b"", dest=w.DRIVER[0], path_=w.DRIVER[1], iface=w.DRIVER[2], flags=0):
    s = c.next_serial()
    c.send(w.call(s, dest, path_, iface, member, sig, b, flags))
    return s


a = w.Conn(path, hello=False, auth=True)
b = w.Conn(path, hello=False, auth=True)
mon = w.Conn(path, hello=False, auth=True)
conns = [("A", a), ("B", b)]
for who, c in conns + [("M", mon)]:
    call(c, "Hello")
    drain([(who, c)], "Hello")

call(b, "AddMatch", "s", body("s", "type='signal',sender='org.freedesktop.DBus'"))
drain(conns, "AddMatch")
call(a, "RequestName", "su", body("su", "org.example.Order", 0))
drain(conns, "RequestName")
call(b, "RequestName", "su", body("su", "org.example.Order", 0))
drain(conns, "RequestName queued")
call(a, "ReleaseName", "s", body("s", "org.example.Order"))
drain(conns, "ReleaseName")
for member, sig, args in [("GetId", None, ()), ("ListNames", None, ()), ("NameHasOwner", "s", ("org.x",)),
                          ("GetNameOwner", "s", ("org.example.Nobody",)), ("GetConnectionUnixUser", "s", (":1.0",)),
                          ("GetConnectionCredentials", "s", ("org.freedesktop.DBus",)),
                          ("RemoveMatch", "s", ("type='signal',member='Nope'",)), ("NoSuchMethod", None, ()),
                          ("ListQueuedOwners", "s", ("org.example.Order",)), ("StartServiceByName", "su", ("org.example.None", 0)),
                          ("GetConnectionUnixProcessID", "s", ("org.example.Nobody",)),
                          ("UpdateActivationEnvironment", "a{ss}", ({"ORDER_PROBE": "1"},))]:
    call(a, member, sig, body(sig, *args) if sig else b"")
    drain(conns, member)
call(a, "ReloadConfig")
time.sleep(0.3)
drain(conns, "ReloadConfig")
call(a, "Ping", path_="/", iface="org.freedesktop.DBus.Peer")
drain(conns, "Peer.Ping")
call(a, "Introspect", path_="/", iface="org.freedesktop.DBus.Introspectable")
drain(conns, "Introspect")
call(a, "GetAll", "s", body("s", "org.freedesktop.DBus"), iface="org.freedesktop.DBus.Properties")
drain(conns, "Properties.GetAll")
call(a, "Get", "ss", body("ss", "org.freedesktop.DBus", "Nope"), iface="org.freedesktop.DBus.Properties")
drain(conns, "Properties.Get")

# calls without a destination: the bus's end of the connection answers
call(a, "Ping", dest=None, path_="/", iface="org.freedesktop.DBus.Peer")
call(a, "Introspect", dest=None, path_="/", iface="org.freedesktop.DBus.Introspectable")
call(a, "Nope", dest=None, path_="/", iface="org.example.I")
drain(conns, "calls without a destination")

# to names nobody has, and a service that cannot start
call(a, "M", dest="org.example.Nobody", path_="/", iface="org.example.I")
drain(conns, "call to nobody")
call(a, "M", dest=":1.9999", path_="/", iface="org.example.I")
drain(conns, "call to a unique name nobody has")
call(a, "M", dest=activatable, path_="/", iface="org.example.I")
time.sleep(0.5)
drain(conns, "call to a service that fails")

# a call B does not answer, then B goes: NoReply
call(a, "RequestName", "su", body("su", "org.example.Order2", 0))
drain(conns, "RequestName 2")
call(a, "M", dest=b.unique if b.unique else ":1.1", path_="/", iface="org.example.I")
# forwarded messages, fields as the client sent them
a.send(w.marshal(w.SIGNAL, a.next_serial(), [(3, "s", "Sig"), (1, "o", "/p"), (2, "s", "org.example.I")], b""))
drain(conns, "a call to B and a signal")

call(mon, "BecomeMonitor", "asu", body("asu", [], 0), path_="/org/freedesktop/DBus", iface="org.freedesktop.DBus.Monitoring")
drain(conns + [("M", mon)], "BecomeMonitor")
call(a, "GetId")
drain(conns + [("M", mon)], "GetId while monitored")
b.close()
drain([("A", a), ("M", mon)], "B disconnects")
for ln in lines:
    print(ln)
