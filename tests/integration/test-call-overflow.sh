#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
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
	probe_on_own_bus "$1" "$2" "$T/overflow.conf" "$T/overflow.sock" call-overflow-probe.py 200
}

compare_probe_runs 4
echo "1..$n"
