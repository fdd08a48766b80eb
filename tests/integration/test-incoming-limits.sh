#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# max_incoming_bytes and max_incoming_unix_fds, on busbridged and on
# dbus-daemon with the same configuration: a sender that floods a
# recipient that does not read (64 KiB method calls, 64 KiB signals to a
# subscriber, one fd per message) is no longer read once what it sent and
# the bus still holds reaches the limit; others are served meanwhile; once
# the recipient reads, the sender is read again and every message arrives
# in order; a sender or recipient that goes away while the sender is held
# leaves no fd behind.  The probe is incoming-limits-probe.py; what the bus
# holds is compared with what dbus-daemon holds.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/in.conf" "$T/in.sock" max_incoming_bytes=1000000 max_incoming_unix_fds=16

run_probe() { # DAEMON NAME: the probe's lines on stdout, its figures in $T/NAME.probe.err
	start_bus "$2" "$T/in.conf" "$1" || return
	PYTHONPATH=$TOP/tests/lib timeout -k 2 100 python3 "$here/incoming-limits-probe.py" "$T/in.sock" \
		"$OWN_PID" 2>"$T/$2.probe.err"
	stop "$OWN_PID"
}

ref=$(run_probe /usr/bin/dbus-daemon ref)
ours=$(run_probe "$BUS_DAEMON" ours)
grep -v '^FIG ' "$T/ref.probe.err" | sed 's/^/# dbus-daemon: /'
grep -v '^FIG ' "$T/ours.probe.err" | sed 's/^/# busbridged: /'
compare_with_reference "$ours" "$ref" 19
# and the bounds hold on busbridged whatever dbus-daemon did
while IFS= read -r line; do
	if grep -qxF -- "$line" <<<"$ours"; then ok "busbridged: $line"; else not_ok "busbridged: expected [$line]"; fi
done <<'EOL'
unicast, the bus stops reading the sender: yes
unicast, what the bus holds stays near max_incoming_bytes: yes
broadcast, the bus stops reading the sender: yes
broadcast, what the bus holds stays near max_incoming_bytes: yes
fds, the bus stops reading the sender: yes
fds, the fds the bus holds stay near max_incoming_unix_fds: yes
unicast, every message arrives, in order: yes
broadcast, every message arrives, in order: yes
fds, every message arrives, in order: yes
EOL
# what busbridged holds is what dbus-daemon holds, give or take a read
# buffer (dbus-daemon reads 2 KiB at a time, busbridged up to 128 KiB)
figure() { awk -v k="$2" '$1 == "FIG" && $2 == k { print $3 }' "$T/$1.probe.err"; }
for k in unicast-held-bytes broadcast-held-bytes fds-held; do
	o=$(figure ours $k) r=$(figure ref $k)
	if [ -z "$o" ] || [ -z "$r" ]; then not_ok "$k: no figure (busbridged [$o], dbus-daemon [$r])"; continue; fi
	if [ "$k" = fds-held ]; then bound=$((r + 4)); else bound=$((r + 160 * 1024)); fi
	if [ "$o" -le "$bound" ]; then ok "$k: busbridged $o, dbus-daemon $r"
	else not_ok "$k: busbridged $o, over dbus-daemon's $r by more than a read buffer"; fi
done
echo "1..$n"
