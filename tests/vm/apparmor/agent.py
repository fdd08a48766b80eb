#!/usr/bin/python3
# tests/vm/apparmor/agent.py ADDRESS: one client of the AppArmor comparison
# (tests/vm/apparmor/scenario.py starts it with aa-exec -p PROFILE, or
# unconfined).  It connects (Hello), exports /com/example/Obj
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
#   unrequested DEST      a method return DEST did not ask for, then a round
#                         trip to the bus: "sent"
#   credentials NAME      GetConnectionCredentials(NAME): its keys, the label
#   features              the Features property of org.freedesktop.DBus
#   quit
# Method returns and errors that answer none of the agent's calls (an
# unrequested reply, the bus's error about a message it refused) are
# received messages too.
#
# tests/vm/apparmor/agent.py --activated NAME: an activatable service (the
# bus starts it; its address in DBUS_STARTER_ADDRESS): it owns NAME and
# answers Ping, prints nothing and exits when the bus goes away.
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

activated = sys.argv[2] if sys.argv[1] == "--activated" else None
address = os.environ["DBUS_STARTER_ADDRESS"] if activated else sys.argv[1]
if activated:
	sys.stdout = open(os.devnull, "w")
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
	text = "%s %s from %s to %s" % (kind, msg.get_member() or msg.get_error_name() or "(unrequested)",
		msg.get_sender(), msg.get_destination() or "(everyone)")
	if kind == "error":
		args = msg.get_args_list()
		text += ": %s" % (args[0] if args else "")
	return text


def on_message(conn, msg):
	global waiting_for
	kind = msg.get_type()
	if msg.is_signal("org.freedesktop.DBus.Local", "Disconnected"):
		loop.quit()
		return dbus.lowlevel.HANDLER_RESULT_HANDLED
	if activated:
		return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
	if monitoring:
		keep = msg.get_interface() == IFACE
	elif kind == dbus.lowlevel.MESSAGE_TYPE_SIGNAL:
		keep = msg.get_interface() == IFACE
	elif kind == dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL:
		# calls to others: an eavesdropper's
		keep = msg.get_interface() == IFACE and msg.get_destination() != conn.get_unique_name() and eavesdropping
	else:
		# a return or error answering no call of ours (those that do never
		# reach this filter): an unrequested reply, the bus's error about
		# a message it refused
		keep = True
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


class Obj(dbus.service.Object):
	@dbus.service.method(IFACE, in_signature="s", out_signature="s")
	def Ping(self, s):
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
	elif cmd == "unrequested":
		# (libdbus makes a method return only in answer to a message with a
		# serial: the bus's reply to a GetId is the template, its serial the
		# reply serial; dbus-python's set_reply_serial is broken on 64-bit)
		def send_reply(template):
			reply = dbus.lowlevel.MethodReturnMessage(template)
			reply.set_destination(args[0])
			reply.append("unrequested", signature="s")
			bus.send_message(reply)
			driver_call("GetId", "", (), lambda r: "sent")
		bus.send_message_with_reply(dbus.lowlevel.MethodCallMessage(*DRIVER, "GetId"), send_reply, CALL_TIMEOUT)
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


if activated:
	bus.request_name(activated, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
	# (a bus that never goes away: not for ever)
	GLib.timeout_add_seconds(300, loop.quit)
else:
	GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
	done("hello " + bus.get_unique_name())
loop.run()
