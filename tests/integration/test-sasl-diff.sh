#!/bin/bash
# SASL as dbus-daemon speaks it (sasl-probe.py has the conversations), on
# busbridged and dbus-daemon with the same configurations:
#  - ANONYMOUS is offered and succeeds whether or not <allow_anonymous/> is
#    set; without it the connection is closed at BEGIN;
#  - <auth> limits what is offered;
#  - hex with an odd number of digits decodes as libdbus decodes it (the
#    last digit is the high half of one more byte).
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
	compare_with_reference "$ours" "$ref" 11
done
echo "1..$n"
