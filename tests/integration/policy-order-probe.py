#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
policy-order-probe.py - the probe of test-policy-order.sh.

  policy-order-probe.py dir-conf OUT SOCKET DIR  write the eight-file <includedir> config
  policy-order-probe.py dir ADDRESS         probe the eight-file <includedir> bus
  policy-order-probe.py system ADDRESS [MAX_PAIRS]  probe the whole system configuration
  policy-order-probe.py system-conf OUT SOCKET   write the system config for SOCKET

Prints one line "TITLE: OUTCOME" per probe; the test runs it against
dbus-daemon and busbridged and compares the lines.  Clients are root and
an unprivileged user (nobody): the unprivileged connection is made by a
child that drops its privileges, connects and hands the socket over, so
the bus sees the child's credentials.
"""

import array
import os
import pwd
import socket
import struct
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(top, "tests", "lib"))
sys.path.insert(0, os.path.join(top, "tests", "policy-diff"))
import dbuswire as W  # noqa: E402

UNPRIV = "nobody"


class Client(W.Conn):
    """A connection made as @user; messages that are not the awaited reply
    are kept in self.inbox."""

    def __init__(self, path, user="root"):
        self.inbox = []
        if user == "root":
            super().__init__(path)
            self.user = user
            return
        pw = pwd.getpwnam(user)
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:
                a.close()
                os.setgroups([])
                os.setgid(pw.pw_gid)
                os.setuid(pw.pw_uid)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
                b.recv(1)   # stay alive (the bus may look at our pid) until the parent is done
            finally:
                os._exit(0)
        b.close()
        msg, anc, _, _ = a.recvmsg(1, socket.CMSG_LEN(4))
        fd = array.array("i", anc[0][2][:4])[0]
        self.keeper = a
        self.user = user
        super().__init__(sock=socket.socket(fileno=fd), uid=pw.pw_uid)

    def wait_reply(self, serial, timeout=10.0):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout("no reply to %d" % serial)
            m = self.recv_msg(left)
            if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == serial:
                return m
            self.inbox.append(m)

    def sync(self):
        """A driver round trip: everything queued for us before it is in the inbox."""
        self.call_driver("GetId")

    def take(self):
        m, self.inbox = self.inbox, []
        return m


def name_u(name, flags):
    b = W.Buf()
    b.string(name)
    b.u32(flags)
    return bytes(b.b)


def request_name(c, name):
    m = c.call_driver("RequestName", "su", name_u(name, 4))
    if m[0] == W.ERROR:
        return "error:" + m[3].get(W.F_ERROR_NAME, "?")
    return str(struct.unpack("<I", m[4][:4])[0])


def tag_of(m):
    s = W.first_string(m[4]) if m[4] else None
    return s if s and s.startswith("tag:") else None


class Round:
    """Calls and signals from clients to receivers, answered and recorded."""

    def __init__(self, receivers, clients):
        self.receivers = receivers   # label -> Client
        self.clients = clients       # label -> Client
        self.n = 0

    def tag(self):
        self.n += 1
        return "tag:%d" % self.n

    def run(self, plan):
        """@plan: (title, sender label, kind, dest, path, iface, member, expect_at)
        kind "call" / "signal"; dest None for a broadcast.  Returns {title: outcome}."""
        out = {}
        pending = {}   # (client label, serial) -> title
        tags = {}      # tag -> (title, label of the connection expected to see it or None)
        by_sender = {}
        for p in plan:
            by_sender.setdefault(p[1], []).append(p)
        everyone = dict(self.receivers)
        everyone.update(self.clients)
        for sender, ps in by_sender.items():
            c = everyone[sender]
            for chunk in range(0, len(ps), 60):
                for title, _, kind, dest, path, iface, member, at in ps[chunk:chunk + 60]:
                    t = self.tag()
                    s = c.next_serial()
                    f = {W.F_PATH: path, W.F_MEMBER: member}
                    if iface:
                        f[W.F_INTERFACE] = iface
                    if dest:
                        f[W.F_DESTINATION] = dest
                    if kind == "call":
                        c.send(W.marshal(W.METHOD_CALL, s, f, W.body_s(t), "s"))
                        pending[(sender, s)] = title
                    else:
                        c.send(W.marshal(W.SIGNAL, s, f, W.body_s(t), "s"))
                        tags[t] = (title, at)
                c.sync()
                self.serve()
                self.collect(c, sender, pending, out)
        self.serve()
        seen = {}
        for label, c in everyone.items():
            c.sync()
            for m in c.take():
                t = tag_of(m)
                if t and m[0] == W.SIGNAL:
                    seen.setdefault(t, set()).add(label)
        for t, (title, at) in tags.items():
            who = seen.get(t, set())
            if at is None:
                out[title] = "seen by " + (",".join(sorted(who)) if who else "nobody")
            else:
                out[title] = "seen" if at in who else "not seen"
        for (sender, s), title in pending.items():
            out.setdefault(title, "no answer")
        return out

    def serve(self):
        """Receivers answer every call they got; signals stay in their inbox."""
        for label, r in self.receivers.items():
            r.sync()
            keep = []
            for m in r.take():
                if m[0] == W.METHOD_CALL and not (m[1] & 1):
                    r.send(W.marshal(W.METHOD_RETURN, r.next_serial(),
                                     {W.F_REPLY_SERIAL: m[2], W.F_DESTINATION: m[3][W.F_SENDER]}))
                elif m[0] == W.SIGNAL:
                    keep.append(m)
            r.inbox = keep + r.inbox

    def collect(self, c, sender, pending, out):
        want = {s for (lab, s) in pending if lab == sender and pending[(lab, s)] not in out}
        end = time.monotonic() + 10
        while want and time.monotonic() < end:
            got = [m for m in c.inbox if m[0] in (W.METHOD_RETURN, W.ERROR)]
            c.inbox = [m for m in c.inbox if m[0] not in (W.METHOD_RETURN, W.ERROR)]
            for m in got:
                s = m[3].get(W.F_REPLY_SERIAL)
                if s in want:
                    want.discard(s)
                    out[pending[(sender, s)]] = "reply" if m[0] == W.METHOD_RETURN else \
                        "error:" + m[3].get(W.F_ERROR_NAME, "?")
            if want:
                try:
                    c.inbox.append(c.recv_msg(0.2))
                except socket.timeout:
                    self.serve()


def show(results):
    for k in sorted(results):
        print("%s: %s" % (k, results[k]))


def probe_receiver(path, label, owned, calls_for, ifaces_for, clients, user):
    """A root connection that owns @owned (as far as it may) and answers
    everything; calls, unicast signals and broadcasts from the @clients to
    it, and signals from it.  Returns {title: outcome}."""
    recv = Client(path)
    res = {}
    got = []
    for n in owned:
        v = request_name(recv, n)
        if v == "1":
            got.append(n)
        elif len(owned) > 1:
            res["%s: own %s" % (label, n)] = v
    recv.call_driver("AddMatch", "s", W.body_s("type='signal'"))
    plan = []
    for who in clients:
        for n in got:
            for p, iface, member in calls_for(n):
                plan.append(("%s: call %s -> %s %s %s.%s" % (label, who, n, p, iface, member), who, "call", n,
                             p, iface, member, None))
            for iface in ifaces_for(n):
                plan.append(("%s: unicast signal %s -> %s %s" % (label, who, n, iface), who, "signal", n,
                             "/", iface, "Sig", "recv"))
        for iface in ["com.example.Sig"] + sorted({i for n in got for i in ifaces_for(n)} - {"com.example.Sig"}):
            plan.append(("%s: broadcast %s from %s" % (label, iface, who), who, "signal", None, "/", iface,
                         "Sig", None))
    for iface in ("com.example.Sig", "org.freedesktop.DBus.Properties"):
        plan.append(("%s: broadcast %s from the receiver" % (label, iface), "recv", "signal", None, "/", iface,
                     "Sig", None))
        plan.append(("%s: unicast signal from the receiver -> %s %s" % (label, UNPRIV, iface), "recv", "signal",
                     user.unique, "/", iface, "Sig", UNPRIV))
    rd = Round({"recv": recv}, clients)
    res.update(rd.run(plan))
    # let the names go (synchronously) before the next receiver takes them
    for n in got:
        recv.call_driver("ReleaseName", "s", W.body_s(n))
    recv.close()
    return res


def clients_of(path):
    root = Client(path)
    user = Client(path, UNPRIV)
    for c in (root, user):
        c.call_driver("AddMatch", "s", W.body_s("type='signal'"))
    return {"root": root, UNPRIV: user}, user


# ---------------------------------------------------------------------------
# (a) eight files in one <includedir>

DIR_BASE = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%(sock)s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
  </policy>
  <policy user="root">
    <allow own_prefix="com.example.R"/>
  </policy>
  <includedir>%(dir)s</includedir>
</busconfig>
"""

# the names and the rules each file has; "last"/"first" are the files
# readdir() returns last and first
DIR_RULES = {
    "last": """    <deny own="com.example.X"/>
    <deny send_destination="com.example.R.S"/>
    <deny receive_sender="com.example.R.S" receive_interface="com.example.I" receive_member="Quiet"/>
""",
    "first": """    <deny own="com.example.Y"/>
    <deny send_destination="com.example.R.T" send_interface="com.example.I" send_member="Call"/>
    <allow own="com.example.X"/>
""",
    "other": """    <allow own="com.example.X"/>
    <allow own="com.example.Y"/>
    <allow send_destination="com.example.R.S"/>
    <allow send_destination="com.example.R.T"/>
    <allow receive_sender="com.example.R.S"/>
""",
}


def dir_conf(out, sock, d):
    """Eight files in @d such that the file readdir() returns last does not
    sort last and the one it returns first does not sort first."""
    os.makedirs(d, exist_ok=True)
    for attempt in range(200):
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        files = ["p%d-%02d.conf" % (attempt, i) for i in range(8)]
        for f in files:
            open(os.path.join(d, f), "w").close()
        order = os.listdir(d)   # readdir() order
        if order[-1] != sorted(order)[-1] and order[0] != sorted(order)[0] and order != sorted(order):
            break
    for i, f in enumerate(order):
        kind = "last" if i == len(order) - 1 else "first" if i == 0 else "other"
        with open(os.path.join(d, f), "w") as fh:
            fh.write('<busconfig>\n  <policy context="default">\n%s  </policy>\n</busconfig>\n' % DIR_RULES[kind])
    with open(out, "w") as fh:
        fh.write(DIR_BASE % {"sock": sock, "dir": d})
    print("# readdir order: %s" % " ".join(order), file=sys.stderr)


def dir_main(address):
    path = W.parse_address(address)
    clients, user = clients_of(path)
    res = {}
    for n in ("com.example.X", "com.example.Y"):
        for who, c in clients.items():
            v = request_name(c, n)
            res["own %s by %s" % (n, who)] = v
            if v == "1":
                c.call_driver("ReleaseName", "s", W.body_s(n))

    def calls(n):
        return [("/", "com.example.I", "Call"), ("/", "com.example.I", "Quiet"), ("/", "com.example.I", "Other")]

    def ifaces(n):
        return ["com.example.I"]
    for label, owned in (("S", ["com.example.R.S"]), ("T", ["com.example.R.T"]),
                         ("S+T", ["com.example.R.S", "com.example.R.T"])):
        res.update(probe_receiver(path, label, owned, calls, ifaces, clients, user))
    show(res)


# ---------------------------------------------------------------------------
# (b) the system configuration: receivers owning names of several files

def system_conf(out, sock):
    import re
    import probe
    with open("/usr/share/dbus-1/system.conf") as f:
        text = f.read()
    base = "/usr/share/dbus-1"
    text = re.sub(r"<includedir>(?!/)([^<]*)</includedir>",
                  lambda m: "<includedir>%s</includedir>" % os.path.join(base, m.group(1).strip()), text)
    text = re.sub(r"<include([^>]*)>(?!/)([^<]*)</include>",
                  lambda m: "<include%s>%s</include>" % (m.group(1), os.path.join(base, m.group(2).strip()))
                  if "selinux_root_relative" not in m.group(1) else m.group(0), text)
    with open(out, "w") as f:
        f.write(probe.prepare_config(text, sock))


def system_main(address, max_pairs):
    import probe
    rules = probe.parse_config("/usr/share/dbus-1/system.conf")
    an = probe.Analysis(rules)
    path = W.parse_address(address)
    clients, user = clients_of(path)
    res = {}
    # the names the configuration lets someone own; root tries them all
    names = []
    for r in rules:
        n = r.a.get("own")
        if n and n != "*" and probe.valid_name(n) and n not in names and r.allow:
            names.append(n)
    c = Client(path)
    ownable = []
    for n in names:
        v = request_name(c, n)
        res["own %s by root" % n] = v
        if v == "1":
            ownable.append(n)
            c.call_driver("ReleaseName", "s", W.body_s(n))
    c.close()

    def calls(n):
        return [(p, i, m) for p, i, m, fds in an.calls_for(n, 12) if not fds]

    def ifaces(n):
        return an.signal_ifaces_for(n)[:2]
    res.update(probe_receiver(path, "all names", ownable, calls, ifaces, clients, user))
    pairs = [(a, b) for i, a in enumerate(ownable) for b in ownable[i + 1:]]
    for a, b in pairs[:max_pairs]:
        res.update(probe_receiver(path, "%s+%s" % (a, b), [a, b], calls, ifaces, clients, user))
    show(res)


if __name__ == "__main__":
    if sys.argv[1] == "dir":
        dir_main(sys.argv[2])
    elif sys.argv[1] == "dir-conf":
        dir_conf(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "system":
        system_main(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1000)
    elif sys.argv[1] == "system-conf":
        system_conf(sys.argv[2], sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
