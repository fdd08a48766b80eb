#!/usr/bin/python3
# tests/vm/selinux/scenario.py ADDRESS [--policy DIR] [--no-runcon]: the
# SELinux comparison's fixed sequence against the bus at ADDRESS (a bus
# daemon running in bus_t under tests/vm/selinux/policy.conf, enforcing).
# Its clients are agents (agent.py), each started with
# `runcon system_u:system_r:<domain> ...`; this program runs as root in
# kernel_t.  One line per observable outcome on stdout, "<step>: <role>:
# <outcome>", with what changes from run to run normalized: unique names
# become the role of the agent that holds them (<a>, <service>, ...; an
# unknown one :X), pids N, comm="..." values "...", GUIDs <guid>.  Then
# the AUDIT_USER_AVC (and other user-space audit) records the bus daemon
# logged during the run, from the kernel's log, normalized the same way
# and sorted (the log is cleared when the run starts).
#
# DIR holds the compiled policy (policy.33) and its reload variant
# (reload.33): the scenario loads the variant while the bus runs, switches
# to permissive and back, and loads policy.33 again at the end.  Without
# --policy those steps are left out (and so are the audit records), and
# --no-runcon starts the agents without runcon: a dry run of the sequence
# on a machine without SELinux.
#
# tests/vm/selinux/scenario.py --normalize: stdin normalized the same way
# (a bus daemon's stderr), "[<pid>]" too.
#
# tests/vm/selinux/scenario.py --compare REF GOT LABEL: TAP lines comparing
# the lines of a run (GOT) with dbus-daemon's (REF): "ok - selinux LABEL:
# <line>" for each line both have, "not ok - selinux LABEL: got X,
# dbus-daemon Y" for each difference, then "# selinux LABEL: N passed, N
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
				print("ok - selinux %s: %s" % (label, line))
				passed += 1
			continue
		theirs, ours = ref[i1:i2], got[j1:j2]
		for k in range(max(len(theirs), len(ours))):
			print("not ok - selinux %s: got %s, dbus-daemon %s" % (label,
				ours[k] if k < len(ours) else "(nothing)", theirs[k] if k < len(theirs) else "(nothing)"))
			failed += 1
	print("# selinux %s: %d passed, %d failed" % (label, passed, failed))
	return 1 if failed else 0


if len(sys.argv) > 1 and sys.argv[1] == "--compare":
	sys.exit(compare(*sys.argv[2:5]))

address = sys.argv[1]
args = sys.argv[2:]
policy_dir = args[args.index("--policy") + 1] if "--policy" in args else None
use_runcon = "--no-runcon" not in args

names = {}		# unique name -> role
agents = []


def normalize(text):
	text = re.sub(r":[0-9]+\.[0-9]+", lambda m: "<%s>" % names[m.group(0)] if m.group(0) in names else ":X", text)
	text = re.sub(r"\b(pid|spid|tpid|ProcessID)=[0-9]+", r"\1=N", text)
	text = re.sub(r'\bcomm="[^"]*"', 'comm="..."', text)
	text = re.sub(r"\b[0-9a-f]{32}\b", "<guid>", text)
	return text


if len(sys.argv) > 1 and sys.argv[1] == "--normalize":
	for line in sys.stdin:
		print(re.sub(r"\[[0-9]+\]", "[N]", normalize(line.rstrip("\n"))))
	sys.exit(0)


def emit(step, role, text):
	print(normalize("%s: %s: %s" % (step, role, text)), flush=True)


class Agent:
	def __init__(self, role, domain, *extra):
		self.role = role
		cmd = ["/usr/bin/python3", os.path.join(here, "agent.py"), address, *extra]
		if use_runcon:
			cmd = ["runcon", "system_u:system_r:" + domain] + cmd
		self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
		self.buf = b""
		self.eof = False
		self.unique = None
		agents.append(self)
		hello = self.lines()
		for line in hello:
			if line.startswith("hello :"):
				self.unique = line.split()[1]
				names[self.unique] = role
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


def start(step, role, domain, *extra):
	agent = Agent(role, domain, *extra)
	for line in agent.hello:
		emit(step, role, "Hello in %s -> %s" % (domain, line))
	return agent


def selinux(step, what):
	if not policy_dir:
		emit(step, "root", "%s: left out (no --policy)" % what)
		return
	if what == "enforcing" or what == "permissive":
		with open("/sys/fs/selinux/enforce", "w") as f:
			f.write("1" if what == "enforcing" else "0")
	else:
		with open(os.path.join(policy_dir, what), "rb") as src, open("/sys/fs/selinux/load", "wb") as dst:
			dst.write(src.read())
	with open("/sys/fs/selinux/enforce") as f:
		emit(step, "root", "%s (enforce=%s)" % (what, f.read().strip()))
	# the bus learns of it from the kernel's netlink notice: give it time
	time.sleep(1)


if policy_dir:
	subprocess.run(["dmesg", "-C"])

# --- connections and names
service = start("hello", "service", "service_t")
a = start("hello", "a", "client_a_t")
b = start("hello", "b", "client_b_t")
c = start("hello", "c", "client_c_t")
c.stop()
service.run("names", "request com.example.Service")
service.run("names", "request com.example.Secret")
a.run("names", "request com.example.A")
a.run("names", "request com.example.Secret")
a.run("names", "request com.example.Other")
b.run("names", "request com.example.B")

# --- method calls
a.run("calls", "call com.example.Service Ping")
b.run("calls", "call com.example.Service Ping")
b.run("calls", "call org.freedesktop.DBus GetId")
b.run("calls", "call %s Ping" % a.unique)
service.run("calls", "call %s Ping" % a.unique)

# --- a reply the caller may not receive (client_b_t may not send to
# client_a_t): the reply is refused, the caller's call is answered when the
# replier leaves (dbus-daemon: the caller's own timeout, 5 s here)
replier = start("reply", "b-replier", "client_b_t", "--exit-after-reply")
a.run("reply", "call %s Ping 5" % replier.unique)
for line in replier.lines():
	emit("reply", "b-replier", line)
replier.stop()

# --- a broadcast signal from each domain, and who received it
for agent in (service, a, b):
	agent.run("signals", "match type='signal',interface='com.example.Iface'")
for sender in (service, a, b):
	sender.run("signals", "broadcast From_" + sender.role.replace("-", "_"))
	for listener in (service, a, b):
		listener.run("signals", "sync")
		listener.run("signals", "received")

# --- identity
for name in (b.unique, "com.example.Service", "org.freedesktop.DBus", "com.example.Nobody"):
	a.run("identity", "context " + name)
for name in (b.unique, "com.example.Service", "org.freedesktop.DBus"):
	a.run("identity", "credentials " + name)
a.run("identity", "features")

# --- eavesdropping (an AddMatch with eavesdrop='true') and a monitor, in
# client_a_t (as root): client_b_t may not send to client_a_t
eavesdropper = start("eavesdrop", "a-eavesdropper", "client_a_t")
eavesdropper.run("eavesdrop", "match interface='com.example.Iface',eavesdrop='true'")
monitor = start("eavesdrop", "a-monitor", "client_a_t")
monitor.run("eavesdrop", "monitor interface='com.example.Iface'")
service.run("eavesdrop", "unicast %s ToB" % b.unique)
b.run("eavesdrop", "unicast %s ToSelf" % b.unique)
a.run("eavesdrop", "call com.example.Service Ping")
service.run("eavesdrop", "unicast %s End" % b.unique)
eavesdropper.run("eavesdrop", "sync")
eavesdropper.run("eavesdrop", "received")
monitor.run("eavesdrop", "wait-for End")
b.run("eavesdrop", "sync")
b.run("eavesdrop", "received")
eavesdropper.stop()
monitor.stop()

# --- the policy reloaded while the bus runs: client_b_t may call the service
b.run("reload", "call com.example.Service Ping")
selinux("reload", "reload.33")
b.run("reload", "call com.example.Service Ping")

# --- permissive: what is denied passes (and is logged)
selinux("permissive", "permissive")
b.run("permissive", "call %s Ping" % a.unique)
a.run("permissive", "request com.example.Other")
c = start("permissive", "c", "client_c_t")
c.stop()
selinux("enforcing", "enforcing")
b.run("enforcing", "call %s Ping" % a.unique)
c = start("enforcing", "c", "client_c_t")
c.stop()
selinux("enforcing", "policy.33")
b.run("enforcing", "call com.example.Service Ping")

for agent in agents:
	agent.stop()
	if agent.proc.returncode not in (0, None):
		emit("end", agent.role, "exit status %d" % agent.proc.returncode)

# --- the bus daemon's audit records
if policy_dir:
	time.sleep(1)
	log = subprocess.run(["dmesg", "-c"], stdout=subprocess.PIPE, errors="replace").stdout
	# sorted: the same records, whatever the order in which a daemon asked
	# about the receivers of one broadcast (D-Bus leaves that order open)
	records = []
	for line in log.splitlines():
		m = re.search(r"audit: type=(\d+) audit\([0-9.:]+\): (.*)", line)
		if m and "subj=system_u:system_r:bus_t" in m.group(2):
			records.append(normalize("audit: type=%s: %s" % (m.group(1), m.group(2).rstrip())))
	for r in sorted(records):
		print(r, flush=True)
