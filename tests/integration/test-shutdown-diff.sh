#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# What connections see when the bus gets SIGTERM, busbridged beside
# dbus-daemon on the same configuration: dbus-daemon closes them one at a
# time (those that have not said Hello first, then in the order of their
# Hello), and those still connected see the NameOwnerChanged of each name
# that goes, the NameAcquired of a queued owner and the NoReply of a call
# the departing one did not answer; monitors and eavesdroppers see what
# they would see of any departure.  Also what each daemon logs as it exits.
# The probe is shutdown-probe.py.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/sd.conf" "$T/sd.sock"
sed -i 's|<allow own="\*"/>|<allow own="*"/>\n    <allow eavesdrop="true"/>|' "$T/sd.conf"
run_probe() { # DAEMON NAME: the probe's lines, then the daemon's log lines, on stdout
	rm -f "$T/sd.sock"
	start_bus "$2" "$T/sd.conf" "$1" || { echo "bus did not start"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 60 python3 "$here/shutdown-probe.py" "$T/sd.sock" "$OWN_PID" \
		2>"$T/$2.probe.err"
	wait "$OWN_PID"
	echo "exit status: $?"
	# (pids masked; the fd limit warning is not about shutting down)
	sed 's/\[[0-9]*\]/[PID]/g; s/pid=[0-9]*/pid=PID/g' "$T/$2.log" | grep -v 'fd limit' | nl -s ': ' | sed 's/^ */log line /'
}
compare_probe_runs 9
# stated: the connections that stay see the names of those that go
if grep -q "^w: .*NameOwnerChanged com.example.Shutdown.A2,a," <<<"$OURS"; then ok "busbridged: w sees a's names go"
else not_ok "busbridged: w sees a's names go: $(grep '^w:' <<<"$OURS")"; fi
echo "1..$n"
