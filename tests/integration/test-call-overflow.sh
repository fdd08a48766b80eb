#!/bin/bash
# More calls waiting for a reply than kdbus.ko keeps trackers for (128 per
# connection, the final ABI), with max_replies_per_connection above it:
# busbridged on the kernel bus tracks the rest itself (call-overflow.c).
# The probe (call-overflow-probe.py) prints the same lines on busbridged
# and dbus-daemon: replies, NoReply at reply_timeout and when the callee
# leaves.  On the in-process core it checks that nothing changed there.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/overflow.conf" "$T/overflow.sock" max_replies_per_connection=1000 reply_timeout=3000

run_probe() { # DAEMON NAME: the probe's lines on stdout
	rm -f "$T/overflow.sock"
	start_bus "$2" "$T/overflow.conf" "$1" || { echo "bus did not start"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 200 python3 "$here/call-overflow-probe.py" "$T/overflow.sock" \
		2>"$T/$2.probe.err"
	stop "$OWN_PID"
}

compare_probe_runs 4
echo "1..$n"
