#!/bin/bash
# File descriptors a client passes, and connections that never finish
# connecting, on busbridged and on dbus-daemon with the same configuration
# and RLIMIT_NOFILE: fds sent during SASL, without NEGOTIATE_UNIX_FD, more
# than max_message_unix_fds at once, or that no message claims are not
# kept (beyond what dbus-daemon keeps); pending_fd_timeout counts from when
# the fds arrived, whatever bytes follow; a connection that does not say
# Hello within auth_timeout of being accepted is closed; and root can
# still connect and pass an fd meanwhile.  The probe is
# fd-limits-probe.py; attackers connect as nobody.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v prlimit >/dev/null; then
	skip "needs root, the user nobody and prlimit"; echo "1..$n"; exit 0
fi
chmod 755 "$T"
own_config "$T/fd.conf" "$T/fd.sock" auth_timeout=2000 pending_fd_timeout=3000 max_message_unix_fds=16
sed -i 's|<policy context="default">|<policy context="default">\n    <allow user="*"/>|' "$T/fd.conf"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	# a low RLIMIT_NOFILE: what the attacks would exhaust (a daemon with
	# CAP_SYS_RESOURCE raises it to 65536, as dbus-daemon does)
	prlimit --nofile=2048:2048 "$1" --config-file="$T/fd.conf" --nofork --print-address=3 3>"$T/$2.addr" \
		2>"$T/$2.log" </dev/null &
	OWN_PID=$!; _pids+=("$OWN_PID")
	wait_grep . "$T/$2.addr" 10 || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 50 python3 "$here/fd-limits-probe.py" "$T/fd.sock" "$OWN_PID" \
		2>"$T/$2.probe.err"
	stop "$OWN_PID"
}

ref=$(run_probe /usr/bin/dbus-daemon ref)
ours=$(run_probe "$BUS_DAEMON" ours)
sed 's/^/# dbus-daemon: /' "$T/ref.probe.err"
sed 's/^/# busbridged: /' "$T/ours.probe.err"
# whether root gets through while an attack goes on is not compared when
# dbus-daemon, the reference, did not let it in (on a loaded machine it
# timed out during the 1 MiB attack): busbridged must, below
ref_compared=$(grep -v 'root exchanges an fd: failed' <<<"$ref")
[ "$ref_compared" = "$ref" ] || echo "# dbus-daemon did not let root in: $(grep 'root exchanges an fd: failed' <<<"$ref" | tr '\n' ' ')"
compare_with_reference "$ours" "$ref_compared" 14
# and the bounds hold on busbridged whatever dbus-daemon did
for line in "fds during SASL, held within 16: yes" "1 MiB body, 253 fds per byte, held within 64: yes" \
	"1 MiB body, 253 fds per byte, root exchanges an fd: fd received" \
	"16 fds per byte, root exchanges an fd: fd received" \
	"16 fds per byte, held within 32: yes" "at the end, held within 16: yes"; do
	if grep -qxF -- "$line" <<<"$ours"; then ok "busbridged: $line"; else not_ok "busbridged: expected [$line]"; fi
done
# more fds pending than RLIMIT_NOFILE allows: the reserve keeps root served
# (dbus-daemon disconnects whoever passes an fd once the table is full)
line=$(grep '^RESERVE: ' "$T/ours.probe.err")
if grep -q 'root: fd received' <<<"$line"; then ok "busbridged: fd table full of others' fds, root passes an fd"
else not_ok "busbridged: fd table full of others' fds: $line"; fi
echo "1..$n"
