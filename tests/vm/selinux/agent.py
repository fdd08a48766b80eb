#!/usr/bin/python3
# tests/vm/selinux/agent.py ADDRESS [--exit-after-reply]: one client of the
# SELinux comparison (tests/vm/selinux/scenario.py starts it with runcon in
# the domain under test).  It connects (Hello), exports /com/example/Obj
# (com.example.Iface.Ping) and runs the commands it reads on stdin, one a
# line; what each command observes is printed on stdout, one line each,
# followed by a line "." when the command is done.  The first output is the
# Hello's: "hello <unique name>" or "hello error <name>: <text>" (then it
# exits).  Unique names are printed as the bus gives them: the scenario
# maps them to the agents' roles.
#
# Commands:
#   request NAME          RequestName(NAME, DO_NOT_QUEUE): its result or error
#   call DEST METHOD [TIMEOUT]  DEST's com.example.Iface.METHOD (org.freedesktop.DBus:
#                         the driver's METHOD, no arguments): reply or error
#   broadcast MEMBER      a signal com.example.Iface.MEMBER to everyone
#   unicast DEST MEMBER   a signal com.example.Iface.MEMBER to DEST
#   sync                  a round trip to the bus (GetId): every message the
#                         bus queued for this connection before it is received
#   received              the com.example.Iface messages received so far (then
#                         forgotten), in order
#   wait-for MEMBER       (a monitor) until a message MEMBER is received (5 s)
#   match RULE            AddMatch(RULE)
#   monitor RULE          BecomeMonitor([RULE], 0)
#   context NAME          GetConnectionSELinuxSecurityContext(NAME)
#   credentials NAME      GetConnectionCredentials(NAME): its keys, the label
#   features              the Features property of org.freedesktop.DBus
#   quit
# With --exit-after-reply, the agent exits once it has answered one Ping
# (after a round trip to the bus, printing what it received meanwhile:
# an error the bus sent back about the reply, for one).
import os
import sys

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "com.example.Iface"
DRIVER = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
CALL_TIMEOUT = 15.0

address = sys.argv[1]
exit_after_reply = "--exit-after-reply" in sys.argv[2:]
DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()


def out(*lines):
	for line in lines:
		sys.stdout.write(line + "\n")
	sys.stdout.flush()


def done(*lines):
	out(*lines)
	out(".")


def err_text(e):
	return "error %s: %s" % (e.get_dbus_name(), e.get_dbus_message())


try:
	bus = dbus.bus.BusConnection(address)
except dbus.DBusException as e:
	done("hello " + err_text(e))
	sys.exit(0)

received = []
monitoring = False
eavesdropping = False
waiting_for = None


def describe(msg):
	kind = {dbus.lowlevel.MESSAGE_TYPE_SIGNAL: "signal", dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL: "call",
		dbus.lowlevel.MESSAGE_TYPE_METHOD_RETURN: "return",
		dbus.lowlevel.MESSAGE_TYPE_ERROR: "error"}.get(msg.get_type(), "?")
	text = "%s %s from %s to %s" % (kind, msg.get_member() or msg.get_error_name(), msg.get_sender(),
		msg.get_destination() or "(everyone)")
	if kind == "error":
		args = msg.get_args_list()
		text += ": %s" % (args[0] if args else "")
	return text


def on_message(conn, msg):
	global waiting_for
	kind = msg.get_type()
	if monitoring:
		keep = msg.get_interface() == IFACE
	elif kind == dbus.lowlevel.MESSAGE_TYPE_SIGNAL:
		keep = msg.get_interface() == IFACE
	elif kind == dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL:
		# calls to others: an eavesdropper's
		keep = msg.get_interface() == IFACE and msg.get_destination() != conn.get_unique_name() and eavesdropping
	else:
		# an error not answering a call of ours: the bus's about a reply we sent
		keep = kind == dbus.lowlevel.MESSAGE_TYPE_ERROR and exit_after_reply
	if keep:
		received.append(describe(msg))
		if waiting_for is not None and msg.get_member() == waiting_for:
			waiting_for = None
			report_received()
	# a monitor must never answer what it sees
	return dbus.lowlevel.HANDLER_RESULT_HANDLED if monitoring else dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


bus.add_message_filter(on_message)


def report_received():
	lines = list(received)
	received.clear()
	done(*lines)


def finish_after_reply():
	def after(*_):
		out(*received)
		out("exit")
		loop.quit()
	bus.call_async(*DRIVER, "GetId", "", (), after, after, timeout=CALL_TIMEOUT)
	return False


class Obj(dbus.service.Object):
	@dbus.service.method(IFACE, in_signature="s", out_signature="s")
	def Ping(self, s):
		if exit_after_reply:
			GLib.idle_add(finish_after_reply)
		return "pong to " + s


Obj(bus, "/com/example/Obj")


def driver_call(method, signature, args, show, iface=DRIVER[2]):
	bus.call_async(DRIVER[0], DRIVER[1], iface, method, signature, args,
		lambda *r: done(show(*r)), lambda e: done(err_text(e)), timeout=CALL_TIMEOUT)


def command(words):
	global monitoring, waiting_for, eavesdropping
	cmd, args = words[0], words[1:]
	if cmd == "request":
		driver_call("RequestName", "su", (args[0], 4), lambda r: "reply %d" % r)
	elif cmd == "call":
		dest, method = args[:2]
		timeout = float(args[2]) if len(args) > 2 else CALL_TIMEOUT
		if dest == DRIVER[0]:
			bus.call_async(*DRIVER, method, "", (), lambda *r: done("reply"),
				lambda e: done(err_text(e)), timeout=CALL_TIMEOUT)
		else:
			bus.call_async(dest, "/com/example/Obj", IFACE, method, "s", ("caller",),
				lambda r: done("reply %s" % r), lambda e: done(err_text(e)), timeout=timeout)
	elif cmd in ("broadcast", "unicast"):
		msg = dbus.lowlevel.SignalMessage("/com/example/Obj", IFACE, args[-1])
		if cmd == "unicast":
			msg.set_destination(args[0])
		bus.send_message(msg)
		driver_call("GetId", "", (), lambda r: "sent")
	elif cmd == "sync":
		driver_call("GetId", "", (), lambda r: "")
	elif cmd == "received":
		report_received()
	elif cmd == "wait-for":
		if any((" %s " % args[0]) in m for m in received):
			report_received()
		else:
			waiting_for = args[0]

			def give_up():
				global waiting_for
				if waiting_for is not None:
					waiting_for = None
					received.append("(no %s after 5 s)" % args[0])
					report_received()
				return False
			GLib.timeout_add(5000, give_up)
	elif cmd == "match":
		eavesdropping = eavesdropping or "eavesdrop='true'" in " ".join(args)
		driver_call("AddMatch", "s", (" ".join(args),), lambda: "reply")
	elif cmd == "monitor":
		def became():
			global monitoring
			monitoring = True
			return "reply"
		driver_call("BecomeMonitor", "asu", ([" ".join(args)], 0), became, iface="org.freedesktop.DBus.Monitoring")
	elif cmd == "context":
		driver_call("GetConnectionSELinuxSecurityContext", "s", (args[0],),
			lambda r: "reply %r" % bytes(r).decode("utf-8", "backslashreplace"))
	elif cmd == "credentials":
		def creds(r):
			label = r.get("LinuxSecurityLabel")
			return "reply keys %s label %s" % (",".join(sorted(str(k) for k in r)),
				repr(bytes(label).decode("utf-8", "backslashreplace")) if label is not None else "none")
		driver_call("GetConnectionCredentials", "s", (args[0],), creds)
	elif cmd == "features":
		bus.call_async(DRIVER[0], DRIVER[1], "org.freedesktop.DBus.Properties", "Get", "ss", (DRIVER[2], "Features"),
			lambda r: done("reply %s" % " ".join(str(f) for f in r)), lambda e: done(err_text(e)),
			timeout=CALL_TIMEOUT)
	elif cmd == "quit":
		loop.quit()
	else:
		done("unknown command " + cmd)


pending = b""


def on_stdin(fd, condition):
	global pending
	data = os.read(fd, 4096)
	if not data:
		loop.quit()
		return False
	pending += data
	while b"\n" in pending:
		line, pending = pending.split(b"\n", 1)
		words = line.decode().split()
		if words:
			command(words)
	return True


GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
done("hello " + bus.get_unique_name())
loop.run()
