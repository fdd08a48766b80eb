#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# SASL as dbus-daemon speaks it (sasl-probe.py has the conversations), on
# busbridged and dbus-daemon with the same configurations:
#  - ANONYMOUS is offered and succeeds whether or not <allow_anonymous/> is
#    set; without it the connection is closed at BEGIN;
#  - <auth> limits what is offered;
#  - hex with an odd number of digits decodes as libdbus decodes it (the
#    last digit is the high half of one more byte);
#  - each <listen> is a server with a GUID of its own, sent with OK and
#    printed with its address, and none is the bus's id (GetId); all are
#    UUIDs as libdbus makes them (the last 4 bytes are the time).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

conf() { # NAME EXTRA
	own_config "$T/$1.conf" "$T/$1.sock"
	sed -i -e 's|<auth>[^<]*</auth>||g; s|<allow_anonymous */>||g' -e "s|</busconfig>|$2\n</busconfig>|" "$T/$1.conf"
}
conf plain ""
conf anonymous "<allow_anonymous/>"
conf external-only "<auth>EXTERNAL</auth>"
conf anonymous-only "<auth>ANONYMOUS</auth>"
conf anonymous-only-allowed "<auth>ANONYMOUS</auth><allow_anonymous/>"

run_probe() { # DAEMON CONFIG NAME
	start_bus "$3" "$2" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$3.log")"; return; }
	timeout -k 2 60 python3 "$here/sasl-probe.py" "$OWN_ADDR" 2>&1
	stop "$OWN_PID"
}

for c in plain anonymous external-only anonymous-only anonymous-only-allowed; do
	ours=$(run_probe "$BUS_DAEMON" "$T/$c.conf" "ours-$c" | sed "s/^/$c, /")
	ref=$(run_probe /usr/bin/dbus-daemon "$T/$c.conf" "ref-$c" | sed "s/^/$c, /")
	compare_with_reference "$ours" "$ref" 22
done
# three listeners
own_config "$T/three.conf" "$T/three-a.sock"
sed -i "s|</busconfig>|<listen>unix:path=$T/three-b.sock</listen><listen>tcp:host=127.0.0.1,port=0</listen>\n</busconfig>|" "$T/three.conf"
guid_probe() { # DAEMON NAME
	rm -f "$T"/three-?.sock
	start_bus "$2" "$T/three.conf" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	local id
	id=$(dbus-send --bus="unix:path=$T/three-a.sock" --print-reply=literal --dest=org.freedesktop.DBus / \
		org.freedesktop.DBus.GetId 2>&1 | tr -d ' ')
	timeout -k 2 60 python3 "$here/sasl-probe.py" --guids "$(cat "$T/$2.addr")" "$id" 2>&1
	stop "$OWN_PID"
}
ours=$(guid_probe "$BUS_DAEMON" ours-three)
ref=$(guid_probe /usr/bin/dbus-daemon ref-three)
compare_with_reference "$ours" "$ref" 5

echo "1..$n"
