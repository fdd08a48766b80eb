#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The bus driver, compared with dbus-daemon's on the same configuration:
# tests/integration/driver-probe.py runs the same raw conversations on
# busbridged and on /usr/bin/dbus-daemon, and every line it prints (one per
# exchange: the messages the client got, in order, or that the bus closed
# the connection) must be the same.  It covers messages before Hello, the
# numbering of unique names, calls without destination, routing errors,
# every driver method with valid and invalid arguments, match rule errors,
# properties, Introspect, Peer, Monitoring and Debug.Stats,
# ActivatableServicesChanged, and the serials of what RequestName and
# ReleaseName make the bus send (NameLost and NameAcquired numbered before
# the reply), with and without a monitor.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	local dir=$T/$2
	mkdir -p "$dir/services"
	sed "s|<listen>[^<]*</listen>|<listen>unix:path=$dir/sock</listen>|; s|<servicedir>[^<]*</servicedir>|<servicedir>$dir/services</servicedir>|" \
		"$TEST_CONFIG" >"$dir/bus.conf"
	start_bus "$2" "$dir/bus.conf" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	timeout -k 2 90 python3 "$here/driver-probe.py" "$OWN_ADDR" "$dir/services" 2>&1
	stop "$OWN_PID"
}

# both at once: each takes a while
run_probe /usr/bin/dbus-daemon ref >"$T/ref.out" &
ref_pid=$!
ours=$(run_probe "$BUS_DAEMON" ours)
wait $ref_pid
ref=$(cat "$T/ref.out")
compare_with_reference "$ours" "$ref" 250
echo "1..$n"
