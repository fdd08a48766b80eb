#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The texts that name connections, and the log lines, of busbridged and of
# dbus-daemon for the same probe, with the same configuration (a session
# bus: lines start "dbus-daemon[PID]: [session uid=U pid=PID] "):
# AccessDenied for refused send/receive (to a client, to a name being
# activated), the refused name, the match rule limit, activation that
# succeeds, exits, cannot exec; refused driver messages (NameAcquired
# and NameLost denied by receive rules: at every Hello and RequestName, at
# ReleaseName and for each name of a connection that goes or when the bus
# exits), a refused broadcast (not logged), a monitor that sends,
# a send let through by an allow rule with log="true" ("Would reject
# message"), auth_timeout, calls only root may make (as nobody),
# ReloadConfig and SIGHUP.  Connections are "(uid=U pid=P comm="...")":
# the comm of the probe (its command line) is the same on both buses; pids
# and unique names are masked.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

P=com.example.LogTexts
mkdir -p "$T/svc"
cat >"$T/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$T/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$T/svc</servicedir>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <deny own="$P.Denied"/>
    <deny send_destination="$P.NoSend"/>
    <deny send_destination="$P.Inactive"/>
    <deny receive_interface="$P.NoRecv"/>
    <deny receive_interface="org.freedesktop.DBus" receive_member="NameAcquired"/>
    <deny receive_interface="org.freedesktop.DBus" receive_member="NameLost"/>
    <allow send_destination="$P.Logged" log="true"/>
  </policy>
  <limit name="max_match_rules_per_connection">4</limit>
  <limit name="service_start_timeout">10000</limit>
  <limit name="auth_timeout">700</limit>
</busconfig>
EOF
# the activatable service: takes its name, answers every call
cat >"$T/service.py" <<EOF
import os, sys, time
sys.path.insert(0, '$TOP/tests/lib')
import dbuswire as W
c = W.Conn(W.parse_address(os.environ['DBUS_STARTER_ADDRESS']))
# the call that activated us may come before the reply
b = W.Buf()
b.string(sys.argv[1])
b.u32(0)
c.send(W.driver_call(c.next_serial(), 'RequestName', 'su', bytes(b.b)))
end = time.monotonic() + 20
while time.monotonic() < end:
    try:
        m = c.recv_msg(1)
    except Exception:
        continue
    if m[0] == W.METHOD_CALL:
        c.send(W.marshal(W.METHOD_RETURN, c.next_serial(), {W.F_REPLY_SERIAL: m[2], W.F_DESTINATION: m[3][W.F_SENDER]}))
EOF
printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$P.Ok" "$PY $T/service.py $P.Ok" >"$T/svc/$P.Ok.service"
printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$P.Fail" "/bin/sh -c 'exit 3'" >"$T/svc/$P.Fail.service"
printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$P.Missing" "$T/no-such-program --arg" >"$T/svc/$P.Missing.service"
printf '[D-BUS Service]\nName=%s\nExec=%s\n' "$P.Inactive" "/bin/true" >"$T/svc/$P.Inactive.service"

# mask NAME: unique names become :U1, :U2... in the order they appear,
# pids P; the daemon's own pid D
mask() {
	python3 -c '
import re, sys
names = {}
def u(m):
    return names.setdefault(m.group(0), ":U%d" % (len(names) + 1))
for line in sys.stdin:
    line = re.sub(r"dbus-daemon\[\d+\]: ", "dbus-daemon[D]: ", line)
    line = re.sub(r"\[session uid=(\d+) pid=\d+\]", r"[session uid=\1 pid=D]", line)
    line = re.sub(r"pid=\d+", "pid=P", line)
    line = re.sub(r"elapsed: \d+ms", "elapsed: Nms", line)
    line = re.sub(r":1\.\d+", u, line)
    sys.stdout.write(line)
'
}

run_probe() { # DAEMON NAME: "title: line" for every error the probe got and every log line
	local log=$T/$2.log
	rm -f "$T/bus.sock"
	start_bus "$2" "$T/bus.conf" "$1" 2>/dev/null || { echo "start: bus did not start"; return; }
	# the probe's command line, hence its comm="...", is the same on both buses
	(cd "$T" && ADDR=$OWN_ADDR TOP=$TOP P=$P timeout -k 2 60 "$PY" - <<'EOF'
import os, sys, time
sys.path.insert(0, os.environ['TOP'] + '/tests/lib')
import dbuswire as W
P = os.environ['P']
path = W.parse_address(os.environ['ADDR'])
n = [0]


def show(title, m):
    if m[0] == W.ERROR:
        print('%s: %s %s' % (title, m[3].get(W.F_ERROR_NAME), W.first_string(m[4]) if m[4] else ''))
    else:
        print('%s: reply' % title)


def call(c, title, dest, iface, member, sig=None, body=b''):
    s = c.next_serial()
    c.send(W.call(s, dest, '/', iface, member, sig, body))
    show(title, c.wait_reply(s, 15))


def driver(c, title, member, sig=None, body=b''):
    show(title, c.call_driver(member, sig, body))


def name(n):
    b = W.Buf()
    b.string(n)
    b.u32(0)
    return bytes(b.b)


peer = W.Conn(path)
peer.call_driver('RequestName', 'su', name(P + '.NoSend'))
peer2 = W.Conn(path)
peer2.call_driver('AddMatch', 's', W.body_s("type='signal'"))
peer2.call_driver('RequestName', 'su', name(P + '.Logged'))
c = W.Conn(path)
call(c, 'send to a name the send rules deny', P + '.NoSend', 'com.example.I', 'M')
call(c, 'call the receiver may not receive', peer2.unique, P + '.NoRecv', 'M')
call(c, 'send to an activatable name the send rules deny', P + '.Inactive', 'com.example.I', 'M')
driver(c, 'own a denied name', 'RequestName', 'su', name(P + '.Denied'))
driver(c, 'own the bus name', 'RequestName', 'su', name('org.freedesktop.DBus'))
call(c, 'activation that exits', P + '.Fail', 'com.example.I', 'M')
call(c, 'activation of no such program', P + '.Missing', 'com.example.I', 'M')
call(c, 'activation that succeeds', P + '.Ok', 'com.example.I', 'M')
for i in range(5):
    driver(c, 'match rule %d' % i, 'AddMatch', 's', W.body_s("type='signal',member='M%d'" % i))
# NameAcquired is refused by the receive rules: the driver's unicast is logged
driver(c, 'own a name', 'RequestName', 'su', name(P + '.Acquired'))
driver(c, 'own another name', 'RequestName', 'su', name(P + '.Acquired2'))
driver(c, 'release the first', 'ReleaseName', 's', W.body_s(P + '.Acquired'))
# a refused broadcast is not logged, a refused unicast signal is
c.send(W.marshal(W.SIGNAL, c.next_serial(), {W.F_PATH: '/', W.F_INTERFACE: P + '.NoRecv', W.F_MEMBER: 'B'}))
# (busbridged checks a broadcast when the receiver's queue is read: a moment later)
c.drain(0.3)
c.send(W.marshal(W.SIGNAL, c.next_serial(), {W.F_PATH: '/', W.F_INTERFACE: P + '.NoRecv', W.F_MEMBER: 'U',
                                              W.F_DESTINATION: peer2.unique}))
# let through by an allow rule with log="true": logged, "Would reject message"
c.send(W.marshal(W.SIGNAL, c.next_serial(), {W.F_PATH: '/', W.F_INTERFACE: 'com.example.I', W.F_MEMBER: 'L',
                                              W.F_DESTINATION: P + '.Logged'}))
for m in c.drain(0.5):
    if m[0] == W.ERROR:
        show('refused signal', m)
driver(c, 'reload', 'ReloadConfig')
mon = W.Conn(path)
s = mon.next_serial()
mon.send(W.call(s, W.DRIVER[0], W.DRIVER[1], 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu', bytes(8)))
show('become a monitor', mon.wait_reply(s))
mon.send(W.call(mon.next_serial(), 'com.example.X', '/', 'com.example.I', 'FromMonitor'))
print('monitor that sends: %s' % ('closed' if mon.closed_within(5) else 'not closed'))
# a connection that does not authenticate in time
import socket
raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
raw.connect(path)
time.sleep(1.5)
raw.close()
# the names of a connection that goes: NameLost each, refused
for x in (c, peer, peer2):
    x.close()
    time.sleep(0.3)
EOF
	) 2>&1
	# what only root and the bus's uid may do, as nobody: refused and logged
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		chmod 777 "$T/bus.sock"
		local m
		for m in "Monitoring.BecomeMonitor array:string: uint32:0" "AddMatch string:eavesdrop=true" \
			"UpdateActivationEnvironment dict:string:string:A,B"; do
			# shellcheck disable=SC2086
			echo "as nobody ${m%% *}: $(cd / && runuser -u nobody -- env DBUS_SESSION_BUS_ADDRESS="$OWN_ADDR" \
				dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
				org.freedesktop.DBus.$m 2>&1 | tr '\n' ' ')"
		done
	fi
	kill -HUP "$OWN_PID"
	for _ in $(seq 100); do
		[ "$(grep -c 'Reloaded configuration' "$log")" -ge 2 ] && break
		sleep 0.05
	done
	stop "$OWN_PID"
	grep -v 'Failed to set fd limit' "$log" | sed 's/^/log: /'
}

number_logs() { awk '/^log: /{ n++; sub(/^log: /, ""); print "log line " n ": " $0; next } { print }'; }
ours=$(run_probe "$BUS_DAEMON" ours | mask | number_logs)
ref=$(run_probe /usr/bin/dbus-daemon ref | mask | number_logs)
compare_with_reference "$ours" "$ref" 25
n_ours=$(grep -c '^log line ' <<<"$ours") n_ref=$(grep -c '^log line ' <<<"$ref")
if [ "$n_ours" = "$n_ref" ]; then ok "as many log lines as dbus-daemon ($n_ref)"; else
	not_ok "$n_ours log lines, dbus-daemon $n_ref: $(grep '^log line ' <<<"$ours" | tail -n +$((n_ref + 1)) | head -c 300)"; fi
echo "1..$n"
