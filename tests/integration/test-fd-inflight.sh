#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# A receiver that the bus cannot pass an fd to stays connected: busbridged
# and dbus-daemon run as nobody with RLIMIT_NOFILE 240 on the same
# configuration; sixteen connections that never read park a little more
# than 240 fds in their sockets, so that the kernel refuses the bus's user
# any more fds in flight (sendmsg() fails with ETOOMANYREFS).  Then a
# victim is sent fds by unicast signal, method call and broadcast, and
# messages without fds.  dbus-daemon (libdbus) drops each message whose fds
# cannot be passed and keeps the connection; so must busbridged, and the
# victim keeps its name.  The probe is fd-inflight-probe.py.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v prlimit >/dev/null ||
	! command -v setpriv >/dev/null; then
	skip "needs root, the user nobody, prlimit and setpriv"; echo "1..$n"; exit 0
fi
LIMIT=240
chmod 755 "$T"
mkdir -m 1777 "$T/run"
own_config "$T/inflight.conf" "$T/run/inflight.sock"
sed -i 's|<policy context="default">|<policy context="default">\n    <allow user="*"/>|' "$T/inflight.conf"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	rm -f "$T/run/inflight.sock"
	# nobody: without CAP_SYS_RESOURCE the kernel limits the fds in flight
	# of the bus's user to its RLIMIT_NOFILE
	prlimit --nofile=$LIMIT:$LIMIT setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$1" --config-file="$T/inflight.conf" --nofork --print-address=3 3>"$T/$2.addr" \
		2>"$T/$2.log" </dev/null &
	OWN_PID=$!; _pids+=("$OWN_PID")
	wait_grep . "$T/$2.addr" 10 || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 60 python3 "$here/fd-inflight-probe.py" "$T/run/inflight.sock" $LIMIT \
		2>"$T/$2.probe.err"
	kill -0 "$OWN_PID" 2>/dev/null || echo "daemon: exited"
	stop "$OWN_PID"
}

compare_probe_runs 10
# what the comparison stands on, stated: the fds were refused, and the
# victim kept its connection
for line in "a unicast signal with an fd: nothing, 0 fds" "then one without fds: Plain(0 fds), 0 fds" \
	"the victim still owns its name: yes" "once the parkers are gone, an fd: Later(1 fds), 1 fds"; do
	if grep -qxF -- "$line" <<<"$OURS"; then ok "busbridged: $line"; else not_ok "busbridged: expected [$line]"; fi
done
echo "1..$n"
