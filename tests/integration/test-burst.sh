#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# A burst of 1500 signals and 1500 calls, written at once, to receivers
# that read only afterwards: each gets all of them, as from dbus-daemon.
# On kdbus.ko, which queues at most 256 messages of one user for a
# connection, busbridged yields its input every 64 messages so that the
# receivers' queues move to their rings, and takes a full queue before
# it tries again.  The probe is burst-probe.py.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/burst.conf" "$T/burst.sock"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	probe_on_own_bus "$1" "$2" "$T/burst.conf" "$T/burst.sock" burst-probe.py 200
}

compare_probe_runs 5
echo "1..$n"
