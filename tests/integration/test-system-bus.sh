#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# System bus mode: $BUS_DAEMON --system with the stock system.conf listens
# on /run/dbus/system_bus_socket, writes the pidfile, drops to the
# messagebus user, and refuses what the stock policy refuses for an
# unprivileged user (nobody).  Needs root, the users messagebus and nobody,
# and no system bus running (it would own the socket); skips otherwise.
# Also passes against /usr/bin/dbus-daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers.sh"
SOCK=/run/dbus/system_bus_socket PIDFILE=/run/dbus/pid CONF=/usr/share/dbus-1/system.conf
ADDR=unix:path=$SOCK
if [ "$(id -u)" != 0 ] || ! id messagebus >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1 || [ ! -f "$CONF" ] ||
	! command -v runuser >/dev/null; then
	skip "needs root, the users messagebus and nobody, runuser and $CONF"; echo "1..$n"; exit 0
fi
if [ -e "$SOCK" ] || [ -e "$PIDFILE" ]; then
	skip "a system bus runs here ($SOCK or $PIDFILE exists)"; echo "1..$n"; exit 0
fi
made_dir=
[ -d /run/dbus ] || { mkdir -p /run/dbus && made_dir=1; }
_extra_cleanup='rm -f "$SOCK" "$PIDFILE"; [ -z "$made_dir" ] || rmdir /run/dbus 2>/dev/null'

"$BUS_DAEMON" --system --nofork --print-address=3 3>"$T/addr" 2>"$T/log" </dev/null &
pid=$!; _pids+=("$pid")
if ! wait_grep . "$T/addr" 10; then
	not_ok "busbridged --system starts: $(head -c 300 "$T/log")"; echo "1..$n"; exit 0
fi
address=$(head -n 1 "$T/addr")
case $address in
"$ADDR" | "$ADDR",*) ok "--system listens on $SOCK" ;;
*) not_ok "--system listens on $SOCK: printed $address" ;;
esac
if [ -S "$SOCK" ] && [ "$(stat -c %a "$SOCK")" = 777 ]; then ok "the socket is there for everyone"
else not_ok "the socket is there for everyone: $(ls -l "$SOCK" 2>&1)"; fi
if [ "$(cat "$PIDFILE" 2>/dev/null)" = "$pid" ]; then ok "the pidfile $PIDFILE has the pid"
else not_ok "the pidfile $PIDFILE has the pid $pid: $(cat "$PIDFILE" 2>&1)"; fi
mb=$(id -u messagebus)
uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' /proc/$pid/status)
if [ "$uids" = "$mb $mb $mb $mb" ]; then ok "it runs as messagebus"
else not_ok "it runs as messagebus ($mb): Uid $uids"; fi

as_nobody() { runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS=$ADDR timeout 10 "$@"; }
D="--system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus"
expect "nobody connects and calls the driver" 'string "' as_nobody dbus-send $D org.freedesktop.DBus.GetId
expect "nobody may not own a name (deny own=\"*\")" 'AccessDenied' \
	as_nobody dbus-send $D org.freedesktop.DBus.RequestName string:com.example.SystemBusTest uint32:4
expect "root may not own it either" 'AccessDenied' \
	env DBUS_SYSTEM_BUS_ADDRESS=$ADDR timeout 10 dbus-send $D org.freedesktop.DBus.RequestName \
	string:com.example.SystemBusTest uint32:4
expect "nobody may not UpdateActivationEnvironment" 'AccessDenied' \
	as_nobody dbus-send $D org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:A,B
expect "nobody may not call Debug.Stats" 'AccessDenied' \
	as_nobody dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
	org.freedesktop.DBus.Debug.Stats.GetStats
expect "nobody may not eavesdrop" 'AccessDenied' \
	as_nobody dbus-send $D org.freedesktop.DBus.AddMatch string:"eavesdrop='true'"
expect "nobody may not become a monitor" 'AccessDenied' \
	as_nobody dbus-send $D org.freedesktop.DBus.Monitoring.BecomeMonitor array:string: uint32:0

# a method call from nobody to root's connection: deny send_type="method_call"
bg env DBUS_SYSTEM_BUS_ADDRESS=$ADDR timeout 30 "$PY" -c '
import dbus, sys, time
b = dbus.SystemBus()
print(b.get_unique_name(), flush=True)
time.sleep(30)' >"$T/peer"
peer_pid=$BG_PID
if wait_grep . "$T/peer" 10; then
	peer=$(head -n 1 "$T/peer")
	expect "nobody may not call a method of root's connection (deny send_type=method_call)" 'AccessDenied' \
		as_nobody dbus-send --system --print-reply --dest="$peer" / com.example.SystemBusTest.Call
	expect "nobody may send it a signal (allow send_type=signal)" '^$' \
		as_nobody dbus-send --system --dest="$peer" / com.example.SystemBusTest.Signal
else
	not_ok "a root connection to the system bus"
fi
stop "$peer_pid"

# a reload after the privileges are dropped: the core's policy entries are
# updated in place (no new holder could be made as messagebus)
expect "ReloadConfig as messagebus" 'method return' as_nobody dbus-send $D org.freedesktop.DBus.ReloadConfig
expect "after the reload nobody still may not own a name" 'AccessDenied' \
	as_nobody dbus-send $D org.freedesktop.DBus.RequestName string:com.example.SystemBusTest uint32:4
if grep -q 'Cannot install the policy' "$T/log"; then not_ok "the policy is installed in the core: $(grep 'Cannot install' "$T/log" | head -c 300)"
else ok "the policy is installed in the core (no fallback to the daemon alone)"; fi

kill "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then not_ok "SIGTERM ends it"; else ok "SIGTERM ends it"; fi
echo "1..$n"
