#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# A connection whose peer no longer reads (it shut its socket for reading,
# so that every write to it fails with EPIPE), busbridged beside
# dbus-daemon: the connection stays, what it sends is taken (the bus's
# answers are lost), before and after Hello; its name, its signals, a call
# to it and its departure are seen by the others as dbus-daemon shows
# them, and a monitor sees each of its messages once.  The probe is
# write-shut-probe.py.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/ws.conf" "$T/ws.sock"
run_probe() { # DAEMON NAME: the probe's lines on stdout
	probe_on_own_bus "$1" "$2" "$T/ws.conf" "$T/ws.sock" write-shut-probe.py
}
compare_probe_runs 20
# stated: the GetId before Hello reaches the monitor once, not again with
# what is read after it
seen=$(grep -c '^m seen [0-9]*: call GetId' <<<"$OURS")
if [ "$seen" = 2 ]; then ok "busbridged: the monitor sees each GetId once"
else not_ok "busbridged: the monitor sees $seen GetId calls, not 2"; fi
echo "1..$n"
