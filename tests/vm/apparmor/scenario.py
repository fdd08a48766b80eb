#!/usr/bin/python3
# tests/vm/apparmor/scenario.py ADDRESS [--profiles DIR] [--no-aa-exec]:
# the AppArmor comparison's fixed sequence against the bus at ADDRESS (a
# system bus daemon running under the profile bus_daemon of
# tests/vm/apparmor/profiles, with <apparmor mode="required"/>).  Its
# clients are agents (agent.py), each started with `aa-exec -p PROFILE`
# (client_a, client_b, client_c, service, complainer, in complain mode) or
# unconfined; this program runs as root, unconfined.  One line per
# observable outcome on stdout, "<step>: <role>: <outcome>", with what
# changes from run to run normalized: unique names become the role of the
# agent that holds them (<a>, <service>, ...; an unknown one :X), pids N,
# comm="..." and exe="..." values "...", GUIDs <guid>.  Then the
# AUDIT_USER_AVC records (type 1107, apparmor="DENIED" or "ALLOWED") the
# bus daemon logged during the run, from the kernel's log, normalized the
# same way and sorted (the log is cleared when the run starts).  (A
# record's line in the kernel's log ends where dbus-daemon's message does,
# with a newline: what libaudit adds after it, exe=..., is not compared.)
#
# DIR holds the compiled profiles (profiles.bin, apparmor_parser -S) and
# their reload variant (reload.bin): the scenario replaces the loaded
# profiles with the variant while the bus runs (apparmor_parser -r -B)
# and loads the profiles again at the end.
# Without --profiles those steps are left out (and so are the audit
# records), and --no-aa-exec starts the agents unconfined: a dry run of
# the sequence on a machine without AppArmor.
#
# tests/vm/apparmor/scenario.py --normalize: stdin normalized the same way
# (a bus daemon's stderr), "[<pid>]" too.
#
# tests/vm/apparmor/scenario.py --compare REF GOT LABEL: TAP lines comparing
# the lines of a run (GOT) with dbus-daemon's (REF): "ok - apparmor LABEL:
# <line>" for each line both have, "not ok - apparmor LABEL: got X,
# dbus-daemon Y" for each difference, then "# apparmor LABEL: N passed, N
# failed"; exit status 1 when a line differs.
import difflib
import os
import re
import select
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))


def compare(ref_file, got_file, label):
	ref = open(ref_file).read().splitlines()
	got = open(got_file).read().splitlines()
	passed = failed = 0
	for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, got, autojunk=False).get_opcodes():
		if op == "equal":
			for line in ref[i1:i2]:
				print("ok - apparmor %s: %s" % (label, line))
				passed += 1
			continue
		theirs, ours = ref[i1:i2], got[j1:j2]
		for k in range(max(len(theirs), len(ours))):
			print("not ok - apparmor %s: got %s, dbus-daemon %s" % (label,
				ours[k] if k < len(ours) else "(nothing)", theirs[k] if k < len(theirs) else "(nothing)"))
			failed += 1
	print("# apparmor %s: %d passed, %d failed" % (label, passed, failed))
	return 1 if failed else 0


if len(sys.argv) > 1 and sys.argv[1] == "--compare":
	sys.exit(compare(*sys.argv[2:5]))

names = {}		# unique name -> role
agents = []


def normalize(text):
	text = re.sub(r":[0-9]+\.[0-9]+", lambda m: "<%s>" % names[m.group(0)] if m.group(0) in names else ":X", text)
	text = re.sub(r"\b(pid|peer_pid|ProcessID)=[0-9]+", r"\1=N", text)
	text = re.sub(r'\b(comm|exe)="[^"]*"', r'\1="..."', text)
	text = re.sub(r"\b[0-9a-f]{32}\b", "<guid>", text)
	return text


if len(sys.argv) > 1 and sys.argv[1] == "--normalize":
	for line in sys.stdin:
		print(re.sub(r"\[[0-9]+\]", "[N]", normalize(line.rstrip("\n"))))
	sys.exit(0)

address = sys.argv[1]
args = sys.argv[2:]
profiles_dir = args[args.index("--profiles") + 1] if "--profiles" in args else None
use_aa_exec = "--no-aa-exec" not in args


started = time.monotonic()
last_step = [None]


def emit(step, role, text):
	if step != last_step[0]:
		# how long each step takes, on stderr
		sys.stderr.write("%6.1f s: %s\n" % (time.monotonic() - started, step))
		last_step[0] = step
	print(normalize("%s: %s: %s" % (step, role, text)), flush=True)


class Agent:
	def __init__(self, role, profile):
		self.role = role
		cmd = ["/usr/bin/python3", os.path.join(here, "agent.py"), address]
		if use_aa_exec and profile != "unconfined":
			cmd = ["aa-exec", "-p", profile, "--"] + cmd
		self.profile = profile
		self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
		self.buf = b""
		self.eof = False
		self.unique = None
		agents.append(self)

	def read_hello(self):
		hello = self.lines()
		for line in hello:
			if line.startswith("hello :"):
				self.unique = line.split()[1]
				names[self.unique] = self.role
		self.hello = [("hello ok" if line.startswith("hello :") else line) for line in hello]

	def readline(self, timeout):
		deadline = time.monotonic() + timeout
		while b"\n" not in self.buf:
			if self.eof:
				return ""
			left = deadline - time.monotonic()
			if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
				return None
			data = os.read(self.proc.stdout.fileno(), 4096)
			if not data:
				self.eof = True
				line, self.buf = self.buf.decode(errors="replace"), b""
				return line
			self.buf += data
		line, self.buf = self.buf.split(b"\n", 1)
		return line.decode(errors="replace")

	def lines(self, timeout=30):
		# a command's output: its lines up to "." (or the end of the agent)
		result = []
		while True:
			line = self.readline(timeout)
			if line is None:
				result.append("(no answer after %d s)" % timeout)
				return result
			if line == ".":
				return result
			if line == "" and self.eof:
				self.proc.wait()
				return result + (["(exited %d)" % self.proc.returncode] if self.proc.returncode else [])
			result.append(line)

	def run(self, step, command, timeout=30):
		if self.eof:
			emit(step, self.role, "%s -> (the agent has exited)" % command)
			return []
		try:
			self.proc.stdin.write((command + "\n").encode())
			self.proc.stdin.flush()
		except OSError:
			pass
		result = self.lines(timeout)
		if command == "sync" and not result:
			return result
		for line in result or ["(nothing)"]:
			emit(step, self.role, ("%s -> %s" % (command, line)).rstrip())
		return result

	def stop(self):
		if self.proc.poll() is None:
			try:
				self.proc.stdin.write(b"quit\n")
				self.proc.stdin.flush()
			except OSError:
				pass
			try:
				self.proc.wait(5)
			except subprocess.TimeoutExpired:
				self.proc.kill()
				self.proc.wait()


def start(step, *roles):
	# the agents (ROLE, PROFILE) start side by side (python's start-up is
	# slow under emulation); their Hellos are reported in order
	started = [Agent(role, profile) for role, profile in roles]
	for agent in started:
		agent.read_hello()
		for line in agent.hello:
			emit(step, agent.role, "Hello as %s -> %s" % (agent.profile, line))
	return started


def load(step, what):
	if not profiles_dir:
		emit(step, "root", "apparmor_parser -r %s: left out (no --profiles)" % what)
		return
	r = subprocess.run(["apparmor_parser", "-r", "-B", os.path.join(profiles_dir, what)],
		stdout=subprocess.PIPE, stderr=subprocess.STDOUT, errors="replace")
	emit(step, "root", "apparmor_parser -r %s -> exit %d%s" % (what, r.returncode,
		(": " + r.stdout.strip()) if r.returncode else ""))


if profiles_dir:
	subprocess.run(["dmesg", "-C"])

# --- connections (Hello) and names (bind)
# (a-monitor and b-monitor try to become monitors later on)
service, a, b, c, u, x, monitor, b_monitor = start("hello", ("service", "service"), ("a", "client_a"),
	("b", "client_b"), ("c", "client_c"), ("u", "unconfined"), ("x", "complainer"), ("a-monitor", "client_a"),
	("b-monitor", "client_b"))
c.stop()
service.run("names", "request com.example.Service")
service.run("names", "request com.example.Secret")
a.run("names", "request com.example.A")
a.run("names", "request com.example.Other")
b.run("names", "request com.example.B")
u.run("names", "request com.example.U")
x.run("names", "request com.example.X")

# --- the bus driver: refused by the bus's profile (client_b's List*) or
# by the sender's (client_b's ListActivatableNames)
a.run("driver", "call org.freedesktop.DBus ListNames")
u.run("driver", "call org.freedesktop.DBus ListNames")
b.run("driver", "call org.freedesktop.DBus GetId")
b.run("driver", "call org.freedesktop.DBus ListNames")
b.run("driver", "call org.freedesktop.DBus ListActivatableNames")
x.run("driver", "call org.freedesktop.DBus ListActivatableNames")

# --- method calls: allowed, refused by the sender's profile (client_b to
# client_a: only on the session bus) or the receiver's (the service from
# client_b, client_b from an unconfined or complaining peer); the replies
# (client_b's to client_a, which client_b may not send to) are requested
a.run("calls", "call com.example.Service Ping")
b.run("calls", "call com.example.Service Ping")
b.run("calls", "call %s Ping" % a.unique)
a.run("calls", "call %s Ping" % b.unique)
service.run("calls", "call %s Ping" % a.unique)
u.run("calls", "call com.example.Service Ping")
u.run("calls", "call %s Ping" % b.unique)
x.run("calls", "call com.example.Service Ping")
x.run("calls", "call %s Ping" % b.unique)
a.run("calls", "call com.example.X Ping")

# --- unrequested replies: the service's to client_a, client_b's to
# client_a (which client_b may not send to) and to the service (which may
# not receive from client_b)
service.run("unrequested", "unrequested %s" % a.unique)
b.run("unrequested", "unrequested %s" % a.unique)
b.run("unrequested", "unrequested %s" % service.unique)
for agent in (service, a, b):
	agent.run("unrequested", "sync")
	agent.run("unrequested", "received")

# --- a broadcast signal from each, and who received it
listeners = (service, a, b, u)
for agent in listeners:
	agent.run("signals", "match type='signal',interface='com.example.Iface'")
for sender in (service, a, b, u, x):
	sender.run("signals", "broadcast From_" + sender.role)
	for listener in listeners:
		listener.run("signals", "sync")
		listener.run("signals", "received")
# unicast signals
service.run("signals", "unicast %s ToB" % b.unique)
b.run("signals", "unicast %s ToA" % a.unique)
u.run("signals", "unicast %s ToB" % b.unique)
for agent in (a, b, u):
	agent.run("signals", "sync")
	agent.run("signals", "received")

# --- identity: the labels the bus read (SO_PEERSEC) and its own
for name in (service.unique, a.unique, b.unique, u.unique, x.unique, "org.freedesktop.DBus"):
	a.run("identity", "credentials " + name)
a.run("identity", "features")

# --- eavesdropping (AddMatch with eavesdrop='true') and monitors: client_a
# may, client_b may not; an eavesdropper sees only what the sender may
# send to it and it may receive (client_b may not send to client_a)
a.run("eavesdrop", "match interface='com.example.Iface',eavesdrop='true'")
b.run("eavesdrop", "match interface='com.example.Iface',eavesdrop='true'")
b_monitor.run("eavesdrop", "monitor interface='com.example.Iface'")
b_monitor.stop()
monitor.run("eavesdrop", "monitor interface='com.example.Iface'")
service.run("eavesdrop", "unicast %s ToB" % b.unique)
b.run("eavesdrop", "unicast %s ToSelf" % b.unique)
u.run("eavesdrop", "unicast %s ToService" % service.unique)
b.run("eavesdrop", "call com.example.Service Ping")
service.run("eavesdrop", "call %s Ping" % u.unique)
service.run("eavesdrop", "unicast %s End" % b.unique)
a.run("eavesdrop", "sync")
a.run("eavesdrop", "received")
monitor.run("eavesdrop", "wait-for End")
b.run("eavesdrop", "sync")
b.run("eavesdrop", "received")
monitor.stop()

# --- activation: the AssumedAppArmorLabel of the .service file is the
# receiver's label for the sender's check (client_b may send to the
# service; com.example.Denied assumes client_c, whom client_a may not
# send to: refused before any activation); once the service has started,
# its own profile decides (it may not receive from client_b)
a.run("activation", "call com.example.Denied Ping")
b.run("activation", "call com.example.Activatable Ping")
a.run("activation", "call com.example.Activatable Ping")
b.run("activation", "call com.example.Activatable Ping")

# --- the profiles replaced while the bus runs (the bus asks the kernel
# about every message): client_b may call client_a and the service, then
# the original profiles are back
b.run("reload", "call com.example.Service Ping")
b.run("reload", "call %s Ping" % a.unique)
load("reload", "reload.bin")
b.run("reload", "call com.example.Service Ping")
b.run("reload", "call %s Ping" % a.unique)
load("reload", "profiles.bin")
b.run("reload", "call com.example.Service Ping")
b.run("reload", "call %s Ping" % a.unique)

for agent in agents:
	agent.stop()
	if agent.proc.returncode not in (0, None):
		emit("end", agent.role, "exit status %d" % agent.proc.returncode)

# --- the bus daemon's audit records
if profiles_dir:
	time.sleep(1)
	log = subprocess.run(["dmesg", "-c"], stdout=subprocess.PIPE, errors="replace").stdout
	# sorted: the same records, whatever the order in which a daemon asked
	# about the receivers of one broadcast (D-Bus leaves that order open)
	records = []
	for line in log.splitlines():
		m = re.search(r"audit: type=(1107) audit\([0-9.:]+\): (.*)", line)
		if m and 'apparmor="' in m.group(2):
			records.append(normalize("audit: type=%s: %s" % (m.group(1), m.group(2).rstrip())))
	for r in sorted(records):
		print(r, flush=True)
