#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Messages of org.freedesktop.DBus.Peer without a destination, on
# busbridged and on dbus-daemon with the same configuration: dbus-daemon's
# end of every connection (libdbus's peer filter) answers them before the
# bus sees them, whatever their type and flags (Ping and GetMachineId
# calls; UnknownMethod for anything else, signals included), and delivers
# them to nobody, neither subscribers nor monitors; before Hello and from a
# monitor too (which is not disconnected for them).  The answer's
# destination is a SENDER the client wrote itself.  The probe is
# peer-probe.py.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/peer.conf" "$T/peer.sock"
run_probe() { # DAEMON NAME: the probe's lines on stdout
	rm -f "$T/peer.sock"
	start_bus "$2" "$T/peer.conf" "$1" || { echo "bus did not start"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 60 python3 "$here/peer-probe.py" "$T/peer.sock" 2>"$T/$2.probe.err"
	stop "$OWN_PID"
}
compare_probe_runs 80
echo "1..$n"
