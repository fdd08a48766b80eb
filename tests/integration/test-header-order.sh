#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The header fields of every message the bus sends, in the order they come
# (header-order-probe.py has the sequence), on busbridged and dbus-daemon:
# its replies, errors (NoReply has an order of its own) and signals as
# dbus-daemon's libdbus writes them, and forwarded messages with the fields
# in the sender's order, SENDER last.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

mkdir -p "$T/services"
printf '[D-BUS Service]\nName=org.example.Order.Fails\nExec=/bin/false\n' \
	>"$T/services/org.example.Order.Fails.service"
own_config "$T/bus.conf" "$T/bus.sock"
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/services</servicedir>|" "$T/bus.conf"

run_probe() { # DAEMON NAME
	start_bus "$2" "$T/bus.conf" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	timeout -k 2 60 python3 "$here/header-order-probe.py" "$OWN_ADDR" org.example.Order.Fails 2>&1 | nl -s ': ' -w 2
	stop "$OWN_PID"
}
ours=$(run_probe "$BUS_DAEMON" ours)
ref=$(run_probe /usr/bin/dbus-daemon ref)
compare_with_reference "$ours" "$ref" 40
echo "1..$n"
