#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
probe.py - differential policy test: dbus-daemon against busbridged.

  probe.py driver --busbridged PATH [--reference PATH] [--configs DIR] [--filter S]
  probe.py service ADDRESS        (internal: a service owning names, replying to everything)
  probe.py client ADDRESS         (internal: one identity's probe client)

The driver runs every scenario (the system configuration of this machine,
once with a connection per name and once with each service's names on one
connection, and the synthetic configurations in --configs) once on each daemon with
the same configuration (<user>, <fork>, <pidfile>, <syslog>, service
directories and activation helper removed, <listen> replaced by a private
socket), with the same services and the same probe clients run as root,
bbtest1, bbtest2 and nobody, and compares every outcome: RequestName
results, method call replies and error names, which signals (unicast and
broadcast) reach which connection, and what eavesdroppers see.  It prints
TAP, one line per probe, and "N passed, N failed, N skipped".

Service and client are driven over stdin/stdout with one JSON object per
line; every wait is bounded.
"""

import json
import os
import pwd
import grp
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

DRIVER = "org.freedesktop.DBus"
CALL_TIMEOUT = 1.0          # a denied reply shows as NoReply after this
CMD_TIMEOUT = 120.0         # one command to a helper process
START_TIMEOUT = 15.0


# ---------------------------------------------------------------------------
# helpers shared by service and client

def jsend(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def connect(address):
    import dbus
    import dbus.mainloop.glib
    loop = dbus.mainloop.glib.DBusGMainLoop()
    return dbus.bus.BusConnection(address, mainloop=loop)


def tag_of(msg):
    try:
        args = msg.get_args_list()
    except Exception:
        return None
    if args and isinstance(args[0], str) and args[0].startswith("tag:"):
        return str(args[0])
    return None


def sync_bus(bus):
    """Round trip to the driver, dispatching everything queued before it."""
    import dbus
    import dbus.lowlevel
    from gi.repository import GLib
    loop = GLib.MainLoop()
    state = {"done": False}

    def done(*args):
        state["done"] = True
        loop.quit()

    me = bus.get_unique_name()
    for attempt in range(5):
        state["done"] = False
        state["reply"] = None

        def got(msg, state=state):
            state["reply"] = msg
            done()
        m = dbus.lowlevel.MethodCallMessage(DRIVER, "/org/freedesktop/DBus", DRIVER, "GetNameOwner")
        m.append(me, signature="s")
        bus.send_message_with_reply(m, got, 10.0, require_main_loop=True)
        t = GLib.timeout_add(10000, done)
        loop.run()
        GLib.source_remove(t) if state["reply"] is not None else None
        r = state["reply"]
        try:
            if r is not None and r.get_args_list() == [me]:
                return
        except Exception:
            pass


class Recorder:
    """Records tagged messages a connection receives (filter)."""

    def __init__(self, bus, reply):
        import dbus.lowlevel
        self.bus = bus
        self.reply = reply
        self.seen = set()
        self.lowlevel = dbus.lowlevel
        bus.add_message_filter(self.filter)

    def filter(self, conn, msg):
        ll = self.lowlevel
        t = tag_of(msg)
        if t:
            self.seen.add(t)
            if getattr(self, "label", None):
                self.seen.add(t + "@" + self.label)
        if msg.get_type() == ll.MESSAGE_TYPE_METHOD_CALL and msg.get_destination() and \
                msg.get_destination() != conn.get_unique_name() and \
                msg.get_destination() not in self.owned_names():
            # eavesdropped: not ours to answer
            return ll.HANDLER_RESULT_HANDLED
        if self.reply and msg.get_type() == ll.MESSAGE_TYPE_METHOD_CALL and msg.get_sender() != DRIVER:
            if not msg.get_no_reply():
                try:
                    conn.send_message(ll.MethodReturnMessage(msg))
                except Exception:
                    pass
            return ll.HANDLER_RESULT_HANDLED
        if msg.get_type() == ll.MESSAGE_TYPE_METHOD_CALL:
            return ll.HANDLER_RESULT_HANDLED
        return ll.HANDLER_RESULT_NOT_YET_HANDLED

    def owned_names(self):
        return getattr(self, "names", ())


def request_name(bus, name, flags):
    import dbus
    try:
        return str(int(bus.request_name(name, flags)))
    except dbus.exceptions.DBusException as e:
        return "error:" + str(e.get_dbus_name())


def add_match(bus, rule):
    import dbus
    try:
        bus.add_match_string(rule)
        return "ok"
    except dbus.exceptions.DBusException as e:
        return "error:" + str(e.get_dbus_name())


class GlibStdin:
    """Wait for the next command while dispatching D-Bus traffic (so the
    client's connections are read continuously, as real clients are)."""

    def __init__(self):
        from gi.repository import GLib
        self.GLib = GLib
        self.buf = b""
        self.eof = False
        GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, self.on_in)

    def on_in(self, fd, cond):
        d = os.read(fd, 65536)
        if not d:
            self.eof = True
            return False
        self.buf += d
        return True

    def read(self):
        ctx = self.GLib.MainContext.default()
        while b"\n" not in self.buf:
            if self.eof:
                sys.exit(0)
            ctx.iteration(True)
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


def read_cmd():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


# ---------------------------------------------------------------------------
# service

def service_main(address):
    """One connection per name (so a receiver's names are its unique name and
    that one name), plus the first connection that emits the signals."""
    import dbus
    import dbus.lowlevel as ll
    from gi.repository import GLib
    bus = connect(address)
    rec = Recorder(bus, reply=True)
    rec.names = []
    rec.label = "(primary)"
    match = add_match(bus, "type='signal'")
    conns = [(bus, rec)]
    loop = GLib.MainLoop()
    inbuf = [b""]

    def sync_all(reply_obj):
        left = [len(conns)]

        def one_done(*args):
            left[0] -= 1
            if left[0] == 0:
                jsend(reply_obj() if callable(reply_obj) else reply_obj)
        for c, _ in conns:
            m = ll.MethodCallMessage(DRIVER, "/org/freedesktop/DBus", DRIVER, "GetId")
            c.send_message_with_reply(m, one_done, 10.0)

    def handle(cmd):
        op = cmd["op"]
        if op == "own" and cmd.get("together"):
            # one more connection owning every name it may: its names come
            # from several files of the configuration
            res = {}
            c = connect(address)
            rc = Recorder(c, reply=True)
            rc.names = []
            rc.label = "(together)"
            for n in cmd["names"]:
                r = request_name(c, n, 4)
                res[n] = r
                if r == "1":
                    rc.names.append(n)
            add_match(c, "type='signal'")
            conns.append((c, rc))
            jsend({"owned": res})
        elif op == "own":
            res = {}
            for n in cmd["names"]:
                c = connect(address)
                r = request_name(c, n, 4)          # DO_NOT_QUEUE
                res[n] = r
                if r == "1":
                    rc = Recorder(c, reply=True)
                    rc.names = [n]
                    rc.label = n
                    add_match(c, "type='signal'")
                    conns.append((c, rc))
                else:
                    c.close()
            jsend({"owned": res})
        elif op == "emit":
            for sg in cmd["signals"]:
                m = ll.SignalMessage(sg["path"], sg["iface"], sg["member"])
                if sg.get("dest"):
                    m.set_destination(sg["dest"])
                m.append(sg["tag"], signature="s")
                bus.send_message(m)
            sync_all({"emitted": len(cmd["signals"])})
        elif op == "sync":
            def seen():
                v = set()
                for _, r in conns:
                    v |= r.seen
                    r.seen = set()
                return {"seen": sorted(v)}
            sync_all(seen)
        elif op == "quit":
            jsend({"bye": True})
            loop.quit()

    def on_stdin(fd, cond):
        d = os.read(fd, 65536)
        if not d:
            loop.quit()
            return False
        inbuf[0] += d
        while b"\n" in inbuf[0]:
            line, inbuf[0] = inbuf[0].split(b"\n", 1)
            handle(json.loads(line))
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    jsend({"unique": bus.get_unique_name(), "match": match})
    loop.run()


# ---------------------------------------------------------------------------
# client

def client_main(address):
    import dbus
    import dbus.lowlevel as ll
    bus = connect(address)
    rec = Recorder(bus, reply=False)
    match = add_match(bus, "type='signal'")
    # a second connection eavesdrops: an eavesdropped reply whose serial
    # matches a pending call would be taken for that call's reply
    ebus = connect(address)
    erec = Recorder(ebus, reply=False)
    eaves = add_match(ebus, "eavesdrop='true'")
    devnull = os.open("/dev/null", os.O_RDONLY)
    jsend({"unique": bus.get_unique_name(), "eavesdropper": ebus.get_unique_name(), "eavesdrop_match": eaves,
           "match": match})
    stdin = GlibStdin()
    while True:
        cmd = stdin.read()
        op = cmd["op"]
        if op == "plan":
            from gi.repository import GLib
            ctx = GLib.MainContext.default()
            out = [None] * len(cmd["probes"])
            pending = [0]

            def on_reply(i):
                def h(msg):
                    if msg.get_type() == ll.MESSAGE_TYPE_ERROR:
                        out[i] = "error:" + str(msg.get_error_name())
                    else:
                        out[i] = "reply"
                    pending[0] -= 1
                return h
            for i, p in enumerate(cmd["probes"]):
                k = p["kind"]
                if k == "own":
                    r = request_name(bus, p["name"], 4)
                    if r == "1":
                        try:
                            bus.release_name(p["name"])
                        except dbus.exceptions.DBusException:
                            r += "+release-failed"
                    out[i] = r
                elif k == "call":
                    # calls are pipelined (replies may be denied: NoReply after
                    # CALL_TIMEOUT), at most 32 outstanding (max_replies_per_connection)
                    while pending[0] >= 32:
                        ctx.iteration(True)
                    m = ll.MethodCallMessage(p["dest"], p["path"], p.get("iface"), p["member"])
                    if p.get("args") == "dict":
                        m.append(dbus.Dictionary({}, signature="ss"), signature="a{ss}")
                    elif p.get("args") == "str":
                        m.append(p.get("argval", DRIVER), signature="s")
                    else:
                        m.append(p["tag"], signature="s")
                    for _ in range(p.get("fds", 0)):
                        m.append(dbus.types.UnixFd(devnull), signature="h")
                    pending[0] += 1
                    bus.send_message_with_reply(m, on_reply(i), CALL_TIMEOUT, require_main_loop=True)
                elif k == "signal":
                    m = ll.SignalMessage(p["path"], p["iface"], p["member"])
                    if p.get("dest"):
                        m.set_destination(p["dest"])
                    m.append(p["tag"], signature="s")
                    bus.send_message(m)
                    out[i] = "sent"
                else:
                    out[i] = "bad-probe"
            deadline = time.monotonic() + CALL_TIMEOUT + 10
            while pending[0] > 0 and time.monotonic() < deadline:
                ctx.iteration(True)
            sync_bus(bus)
            jsend({"results": [o if o is not None else "lost" for o in out]})
        elif op == "sync":
            sync_bus(bus)
            sync_bus(ebus)
            jsend({"seen": sorted(rec.seen), "eavesdropped": sorted(erec.seen)})
            rec.seen = set()
            erec.seen = set()
        elif op == "quit":
            jsend({"bye": True})
            return


# ---------------------------------------------------------------------------
# configuration analysis (the driver)

class Rule:
    def __init__(self, verb, attrs, ctx, file):
        self.allow = verb == "allow"
        self.a = attrs
        self.ctx = ctx
        self.file = file


def parse_config(path, seen=None):
    """The <policy> rules of a configuration, includes followed."""
    seen = seen if seen is not None else set()
    real = os.path.realpath(path)
    if real in seen:
        return []
    seen.add(real)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []
    base = os.path.dirname(path)
    rules = []
    for el in root:
        if el.tag == "policy":
            ctx = dict(el.attrib)
            for r in el:
                if r.tag in ("allow", "deny"):
                    rules.append(Rule(r.tag, dict(r.attrib), ctx, path))
        elif el.tag == "include":
            if el.attrib.get("if_selinux_enabled") == "yes":
                continue
            p = (el.text or "").strip()
            if not os.path.isabs(p):
                p = os.path.join(base, p)
            rules += parse_config(p, seen)
        elif el.tag == "includedir":
            d = (el.text or "").strip()
            if not os.path.isabs(d):
                d = os.path.join(base, d)
            if os.path.isdir(d):
                for f in os.listdir(d):     # readdir() order, as dbus-daemon
                    if f.endswith(".conf"):
                        rules += parse_config(os.path.join(d, f), seen)
    return rules


def valid_name(n):
    return bool(re.fullmatch(r"[A-Za-z_-][A-Za-z0-9_-]*(\.[A-Za-z_-][A-Za-z0-9_-]*)+", n or "")) and len(n) <= 255


def name_matches(rule_name, is_prefix, name):
    if rule_name is None or rule_name == "*":
        return not is_prefix or rule_name is None
    if is_prefix:
        return name == rule_name or name.startswith(rule_name + ".")
    return name == rule_name


class Analysis:
    def __init__(self, rules, extra_services=None):
        self.rules = rules
        names = []

        def add(n):
            if valid_name(n) and n != DRIVER and n not in names:
                names.append(n)
        prefixes = []
        for r in rules:
            a = r.a
            for k in ("own", "send_destination", "receive_sender"):
                if k in a and a[k] != "*":
                    add(a[k])
            for k in ("own_prefix", "send_destination_prefix"):
                if k in a and a[k] != "*":
                    add(a[k])
                    prefixes.append(a[k])
        for p in prefixes:
            add(p + ".Sub")
            add(p + ".Sub.Deep")
        for _, ns in (extra_services or []):
            for n in ns:
                add(n)
        self.names = names
        self.own_names = names + [n for n in ("com.example.NotMentioned", "org.freedesktop.NotMentioned")
                                  if n not in names]
        # the users whose <policy user> may own something (services run as them)
        users = []
        for r in rules:
            u = r.ctx.get("user")
            if r.allow and u and u not in ("root", "*") and ("own" in r.a or "own_prefix" in r.a):
                try:
                    pwd.getpwnam(u)
                except KeyError:
                    continue
                if u not in users:
                    users.append(u)
        self.service_users = ["root"] + users
        self.extra_services = extra_services or []

    def rules_for_dest(self, name):
        out = []
        for r in self.rules:
            a = r.a
            if "send_destination" in a:
                if a["send_destination"] == "*" or a["send_destination"] == name:
                    out.append(r)
            elif "send_destination_prefix" in a:
                if name_matches(a["send_destination_prefix"], True, name):
                    out.append(r)
            elif any(k.startswith("send_") for k in a) or any(k in a for k in ("min_fds", "max_fds")):
                out.append(r)    # generic send rule
            elif any(k.startswith("receive_") for k in a) and r.ctx.get("user") == "root":
                out.append(r)    # what the (root) services may receive
        return out

    def calls_for(self, name, cap):
        """(path, iface, member, fds) tuples worth probing for a destination."""
        rs = self.rules_for_dest(name)
        ifaces = [None, "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable",
                  "com.example.Random"]
        members = {}
        paths = ["/"]
        fds = [0]
        for r in rs:
            a = r.a
            i = a.get("send_interface") or a.get("receive_interface")
            if i and i != "*" and i not in ifaces:
                ifaces.append(i)
            m = a.get("send_member") or a.get("receive_member")
            if m and m != "*":
                members.setdefault(i if i != "*" else None, [])
                if m not in members[i if i != "*" else None]:
                    members[i if i != "*" else None].append(m)
            p = a.get("send_path") or a.get("receive_path")
            if p and p != "*" and p not in paths:
                paths.append(p)
            if "min_fds" in a or "max_fds" in a:
                for f in (1, 2):
                    if f not in fds:
                        fds.append(f)
        out = []
        for i in ifaces:
            ms = members.get(i, []) + members.get(None, [])
            ms = ms + [x for x in ("Get", "Probe") if x not in ms]
            for m in ms:
                out.append(("/", i, m, 0))
        for p in paths[1:]:
            for m in members.get(None, [])[:2] + ["Probe"]:
                out.append((p, None, m, 0))
            out.append((p, ifaces[-1] if len(ifaces) > 4 else "com.example.Random", "Probe", 0))
        for f in fds[1:]:
            out.append(("/", None, "Probe", f))
            out.append(("/", "com.example.Random", "Probe", f))
        # de-duplicate, keep order, cap
        seen = set()
        res = []
        for c in out:
            if c not in seen:
                seen.add(c)
                res.append(c)
        return res[:cap]

    def signal_ifaces_for(self, name):
        rs = self.rules_for_dest(name)
        out = ["com.example.Sig"]
        for r in rs:
            i = r.a.get("send_interface") or r.a.get("receive_interface")
            if i and i != "*" and i not in out and r.a.get("send_type", "signal") in ("signal", "*"):
                out.append(i)
        return out[:3]


# ---------------------------------------------------------------------------
# the driver

IDENTITIES = ["root", "bbtest1", "bbtest2", "nobody"]


class Proc:
    def __init__(self, argv, user, name):
        self.name = name
        pre = []
        if user != "root":
            pw = pwd.getpwnam(user)
            pre = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--init-groups", "--"]
        self.p = subprocess.Popen(pre + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, bufsize=0)
        self.buf = b""

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, timeout=CMD_TIMEOUT):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("%s: timeout" % self.name)
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                continue
            d = os.read(self.p.stdout.fileno(), 65536)
            if not d:
                err = self.p.stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError("%s: exited: %s" % (self.name, err))
            self.buf += d
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, obj, timeout=CMD_TIMEOUT):
        self.send(obj)
        return self.recv(timeout)

    def stop(self):
        try:
            self.send({"op": "quit"})
            self.recv(5)
        except Exception:
            pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def prepare_config(text, sock):
    """A system-like configuration on a private socket."""
    t = text
    t = re.sub(r"<user>[^<]*</user>", "", t)
    t = re.sub(r"<fork\s*/>", "", t)
    t = re.sub(r"<pidfile>[^<]*</pidfile>", "", t)
    t = re.sub(r"<syslog\s*/>", "", t)
    t = re.sub(r"<servicehelper>[^<]*</servicehelper>", "", t)
    t = re.sub(r"<standard_system_servicedirs\s*/>", "", t)
    t = re.sub(r"<standard_session_servicedirs\s*/>", "", t)
    t = re.sub(r"<servicedir>[^<]*</servicedir>", "", t)
    t = re.sub(r"<listen>[^<]*</listen>", "", t)
    t = t.replace("@LISTEN@", "")
    t = re.sub(r"(<busconfig[^>]*>)", r"\1\n  <listen>unix:path=%s</listen>" % sock, t, count=1)
    return t


def start_daemon(binary, conf, tmp, label):
    out = open(os.path.join(tmp, label + ".log"), "wb")
    p = subprocess.Popen([binary, "--config-file=" + conf, "--nofork", "--print-address=1"],
                         stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT
    buf = b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or p.poll() is not None:
            p.kill()
            p.wait()
            raise RuntimeError("%s did not start (see %s)" % (binary, out.name))
        r, _, _ = select.select([p.stdout], [], [], left)
        if r:
            d = os.read(p.stdout.fileno(), 4096)
            if not d:
                continue
            buf += d
    return p, buf.split(b"\n")[0].decode().strip()


def stop_daemon(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def build_plans(an, owned, services):
    """The probes of every identity; the same for both daemons."""
    plans = {}
    sig_meta = {}
    for ident in IDENTITIES:
        probes = []
        n = 0

        def tag():
            nonlocal n
            n += 1
            return "tag:%s:%d" % (ident, n)
        for name in an.own_names:
            probes.append({"kind": "own", "name": name})
        drv = [
            ("/org/freedesktop/DBus", DRIVER, "GetId", None),
            ("/org/freedesktop/DBus", DRIVER, "ListNames", None),
            ("/org/freedesktop/DBus", DRIVER, "GetNameOwner", "str"),
            ("/org/freedesktop/DBus", DRIVER, "UpdateActivationEnvironment", "dict"),
            ("/org/freedesktop/DBus", "org.freedesktop.DBus.Introspectable", "Introspect", None),
            ("/org/freedesktop/DBus", "org.freedesktop.DBus.Peer", "Ping", None),
            ("/org/freedesktop/DBus", "org.freedesktop.DBus.Debug.Stats", "GetStats", None),
            ("/org/freedesktop/DBus", "org.freedesktop.systemd1.Activator", "Probe", None),
            ("/org/freedesktop/DBus", "com.example.Random", "Probe", None),
        ]
        for path, iface, member, args in drv:
            pr = {"kind": "call", "dest": DRIVER, "path": path, "iface": iface, "member": member,
                  "tag": tag()}
            if args:
                pr["args"] = args
            probes.append(pr)
        for name in sorted(owned):
            for path, iface, member, fds in an.calls_for(name, 40):
                probes.append({"kind": "call", "dest": name, "path": path, "iface": iface,
                               "member": member, "fds": fds, "tag": tag()})
            for iface in an.signal_ifaces_for(name):
                t = tag()
                probes.append({"kind": "signal", "dest": name, "path": "/", "iface": iface,
                               "member": "Sig", "tag": t})
                sig_meta[t] = ("unicast %s %s.Sig from %s" % (name, iface, ident), "client-" + ident,
                               owned[name])
        for iface in ["com.example.Sig"] + [i for i in an.signal_ifaces_for("com.example.Sig")][1:2]:
            t = tag()
            probes.append({"kind": "signal", "dest": None, "path": "/", "iface": iface, "member": "Sig",
                           "tag": t})
            sig_meta[t] = ("broadcast %s.Sig from %s" % (iface, ident), "client-" + ident, None)
        plans[ident] = probes
    return plans, sig_meta


def run_scenario(binary, label, conf_text, an, tmp, script, details, together=False):
    """Run one scenario on one daemon: {probe key: outcome}; sets behind outcomes in @details."""
    d = os.path.join(tmp, label)
    os.makedirs(d)
    os.chmod(d, 0o755)
    sock = os.path.join(d, "bus")
    conf = os.path.join(d, "bus.conf")
    with open(conf, "w") as f:
        f.write(prepare_config(conf_text, sock))
    daemon, address = start_daemon(binary, conf, d, "daemon")
    procs = []
    out = {}
    try:
        # services: root first, then the users that may own names
        services = []
        owned = {}
        conn_of = {}    # name -> the label of the service connection owning it
        specs = [(u, names, "service-%s-%d" % (u, i)) for i, (u, names) in enumerate(an.extra_services)] + \
                [(u, None, "service-" + u) for u in an.service_users]
        for user, names, label in specs:
            svc = Proc([sys.executable, script, "service", address], user, label)
            procs.append(svc)
            hello = svc.recv(START_TIMEOUT)
            out[("match", label)] = hello["match"]
            want = [n for n in (names if names is not None else an.names) if n not in owned]
            res = svc.call({"op": "own", "names": want, "together": together})["owned"]
            for n, r in res.items():
                out[("svc-own", label, n)] = r
                if r == "1":
                    owned[n] = label
                    conn_of[n] = "(together)" if together else n
            services.append((label, svc, hello["unique"]))
        clients = {}
        for ident in IDENTITIES:
            c = Proc([sys.executable, script, "client", address], ident, "client-%s" % ident)
            procs.append(c)
            hello = c.recv(START_TIMEOUT)
            out[("eavesdrop-match", ident)] = hello["eavesdrop_match"]
            out[("match", "client-" + ident)] = hello["match"]
            clients[ident] = (c, hello["unique"])
        plans, sig_meta = build_plans(an, owned, services)
        for ident in IDENTITIES:
            c = clients[ident][0]
            res = c.call({"op": "plan", "probes": plans[ident]})["results"]
            for pr, r in zip(plans[ident], res):
                if pr["kind"] == "own":
                    out[("own", ident, pr["name"])] = r
                elif pr["kind"] == "call":
                    key = ("call", ident, pr["dest"], pr["path"], pr.get("iface"), pr["member"], pr.get("fds", 0))
                    out[key] = r
        # services emit: broadcasts and unicast signals to each client
        for user, svc, uniq in services:
            sigs = []
            for ident in IDENTITIES:
                for iface in ("com.example.Sig", "org.freedesktop.DBus.Properties"):
                    t = "tag:svc-%s:%s:%s" % (user, ident, iface)
                    sigs.append({"dest": clients[ident][1], "path": "/", "iface": iface, "member": "Sig", "tag": t})
                    sig_meta[t] = ("unicast %s.Sig from %s to %s" % (iface, user, ident),
                                   user, "client-" + ident)
            for iface in ("com.example.Sig", "org.freedesktop.DBus.Properties"):
                t = "tag:svc-%s:bcast:%s" % (user, iface)
                sigs.append({"dest": None, "path": "/", "iface": iface, "member": "Sig", "tag": t})
                sig_meta[t] = ("broadcast %s.Sig from %s" % (iface, user), user, None)
            svc.call({"op": "emit", "signals": sigs})
        # who saw what
        receivers = [(u, s) for u, s, _ in services] + \
                    [("client-" + i, clients[i][0]) for i in IDENTITIES]
        seen, eseen = {}, {}
        for rname, rp in receivers:
            r = rp.call({"op": "sync"})
            seen[rname] = set(r["seen"])
            eseen[rname] = set(r.get("eavesdropped", ()))
        svc_conns = {label: ["(primary)"] + sorted({conn_of[n] for n, l in owned.items() if l == label})
                     for label, _, _ in services}
        for t, (what, sender, target) in sig_meta.items():
            for rname, _ in receivers:
                if rname == sender:
                    continue
                if target and rname != target:
                    continue
                if rname in svc_conns:
                    # every connection of the service process on its own
                    for cn in svc_conns[rname]:
                        if target and what.startswith("unicast ") and cn != conn_of.get(what.split()[1]):
                            continue
                        out[("signal", what, "->", rname + "/" + cn)] = \
                            "seen" if (t + "@" + cn) in seen[rname] else "not seen"
                else:
                    out[("signal", what, "->", rname)] = "seen" if t in seen[rname] else "not seen"
        # eavesdropping: what each client saw of the others' calls and unicast signals
        for ident in IDENTITIES:
            me = "client-" + ident
            for other in IDENTITIES:
                if other == ident:
                    continue
                tags = [(pr["tag"], "%s %s %s.%s" % (pr["kind"], pr["dest"], pr.get("iface"), pr["member"]))
                        for pr in plans[other] if pr["kind"] in ("call", "signal") and pr.get("dest")]
                got = [w for t, w in tags if t in eseen[me]]
                key = ("eavesdrop", me, "on", other)
                out[key] = "seen %d of %d" % (len(got), len(tags))
                details[key] = set(got)
    finally:
        for p in procs:
            p.stop()
        stop_daemon(daemon)
    return out


def ensure_users():
    def have_user(u):
        try:
            pwd.getpwnam(u)
            return True
        except KeyError:
            return False

    def have_group(g):
        try:
            grp.getgrnam(g)
            return True
        except KeyError:
            return False
    for g in ("bbtestg",):
        if not have_group(g):
            subprocess.run(["groupadd", "-f", g], check=True)
    for u, groups in (("bbtest1", "bbtestg"), ("bbtest2", "bbtestg")):
        if not have_user(u):
            subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", "-G", groups, u], check=True)
        else:
            cur = [g.gr_name for g in grp.getgrall() if u in g.gr_mem]
            if "bbtestg" not in cur:
                subprocess.run(["usermod", "-a", "-G", "bbtestg", u], check=True)
    # bbtest2 is also in the groups system.d files name, if they exist
    for g in ("netdev", "bluetooth"):
        if have_group(g) and "bbtest2" not in grp.getgrnam(g).gr_mem:
            subprocess.run(["usermod", "-a", "-G", g, "bbtest2"], check=True)


def describe(key):
    return " ".join(str(k) for k in key)


def driver_main(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--busbridged", required=True)
    ap.add_argument("--reference", default="/usr/bin/dbus-daemon")
    ap.add_argument("--configs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs"))
    ap.add_argument("--system-conf", default="/usr/share/dbus-1/system.conf")
    ap.add_argument("--filter", default="")
    ap.add_argument("--quiet", action="store_true", help="print only failing probes")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args(argv)

    ensure_users()
    tmp = tempfile.mkdtemp(prefix="bb-policy-diff.")
    os.chmod(tmp, 0o755)
    script = os.path.join(tmp, "probe.py")
    shutil.copy(os.path.abspath(__file__), script)
    os.chmod(script, 0o755)

    scenarios = []
    if os.path.exists(a.system_conf):
        with open(a.system_conf) as f:
            text = f.read()
        # relative includedirs are relative to the original file
        base = os.path.dirname(a.system_conf)
        text = re.sub(r"<includedir>(?!/)([^<]*)</includedir>",
                      lambda m: "<includedir>%s</includedir>" % os.path.join(base, m.group(1).strip()), text)
        text = re.sub(r"<include([^>]*)>(?!/)([^<]*)</include>",
                      lambda m: "<include%s>%s</include>" % (m.group(1), os.path.join(base, m.group(2).strip()))
                      if "selinux_root_relative" not in m.group(1) else m.group(0), text)
        scenarios.append(("system", text, parse_config(a.system_conf), []))
        # each service owning all its names on one connection: the rules of
        # several files meet (last match over all of them, in file order)
        scenarios.append(("system-together", text, parse_config(a.system_conf), []))
    for f in sorted(os.listdir(a.configs)) if os.path.isdir(a.configs) else []:
        if not f.endswith(".conf"):
            continue
        p = os.path.join(a.configs, f)
        with open(p) as fh:
            text = fh.read()
        extra = []
        m = re.search(r"services:\s*([^>]*?)\s*-->", text)
        if m:
            for part in m.group(1).split(";"):
                part = part.strip()
                if part:
                    u, names = part.split("=", 1)
                    extra.append((u.strip(), [n.strip() for n in names.split(",") if n.strip()]))
        tmpc = os.path.join(tmp, "parse-" + f)
        with open(tmpc, "w") as fh:
            fh.write(text.replace("@LISTEN@", "unix:tmpdir=/tmp"))
        scenarios.append((f[:-5], text, parse_config(tmpc), extra))
    scenarios = [s for s in scenarios if a.filter in s[0]]

    results = []
    t0 = time.monotonic()
    for name, text, rules, extra in scenarios:
        an = Analysis(rules, extra)
        try:
            dref, dgot = {}, {}
            tog = name.endswith("-together")
            ref = run_scenario(a.reference, name + "-ref", text, an, tmp, script, dref, tog)
            got = run_scenario(a.busbridged, name + "-bb", text, an, tmp, script, dgot, tog)
        except Exception as e:
            results.append((False, "%s: scenario failed: %s" % (name, e), None))
            continue
        for key in sorted(set(ref) | set(got), key=describe):
            r, g = ref.get(key, "(absent)"), got.get(key, "(absent)")
            text = "%s: %s => %s" % (name, describe(key), r if r == g else "dbus-daemon %s, busbridged %s" % (r, g))
            ok = r == g and dref.get(key) == dgot.get(key)
            if not ok and key in dref:
                only_ref = sorted(dref.get(key, set()) - dgot.get(key, set()))
                only_got = sorted(dgot.get(key, set()) - dref.get(key, set()))
                text += "; only dbus-daemon: %s; only busbridged: %s" % (only_ref[:8], only_got[:8])
            results.append((ok, text, key))

    print("TAP version 13")
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, text, _) in enumerate(results, 1):
        if not ok:
            failed += 1
        if ok and a.quiet:
            continue
        print("%s %d - %s" % ("ok" if ok else "not ok", i, text))
    passed = len(results) - failed
    print("# %d scenarios, %.1f s, work dir %s" % (len(scenarios), time.monotonic() - t0,
                                                   tmp if a.keep else "(removed)"))
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if failed == 0 and results else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "service":
        service_main(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "client":
        client_main(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "driver":
        sys.exit(driver_main(sys.argv[2:]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
