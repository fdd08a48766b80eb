#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# RequestName at max_names_per_connection: dbus-daemon refuses every
# request of a connection at the limit (its unique name counted), even of a
# name it owns or waits for already, after the policy's own refusal, and
# logs each refusal.  busbridged and dbus-daemon run on the same
# configuration and the probe (names-limit-probe.py) prints the same lines.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/names.conf" "$T/names.sock" max_names_per_connection=4
sed -i 's|</policy>|  <deny own="com.example.Denied"/>\n  </policy>|' "$T/names.conf"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	probe_on_own_bus "$1" "$2" "$T/names.conf" "$T/names.sock" names-limit-probe.py
	echo "refusals logged: $(grep -c 'is not allowed to own more services (increase limits in configuration file if required; max_names_per_connection=4)' "$T/$2.log")"
}

compare_probe_runs 14
echo "1..$n"
