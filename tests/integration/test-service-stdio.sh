#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Where the output of a service the bus starts goes, busbridged beside
# dbus-daemon with the same configuration: the service keeps the stdout and
# the stderr it inherits from the bus (dbus-daemon's dbus-spawn-unix.c), and
# its stdin is /dev/null; when the bus logs to syslog (--syslog-only), both
# go to the journal as streams under the service's name, stdout at
# priority 6 (info) and stderr at 4 (warning), as dbus-daemon's
# DBUS_SPAWN_REDIRECT_OUTPUT does; without a journal the service keeps the
# bus's.  The journal is journal-sink.py on a tmpfs /run/systemd in a mount
# namespace of the test's own (needs unshare).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

N=com.example.StdioService
mkdir -p "$T/svc"
cat >"$T/service.sh" <<EOF2
#!/bin/sh
echo "stdout of \$1"
echo "stderr of \$1" >&2
read -r line && echo "stdin of \$1 had: \$line" >&2
exec python3 $TOP/tests/diff/service.py "\$1"
EOF2
chmod 755 "$T/service.sh"
printf '[D-BUS Service]\nName=%s\nExec=%s %s\n' "$N" "$T/service.sh" "$N" >"$T/svc/$N.service"
own_config "$T/stdio.conf" "$T/stdio.sock"
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/svc</servicedir>|" "$T/stdio.conf"

# run DAEMON NAME [ARGS...]: starts the service through DAEMON, whose stdout
# and stderr are files; prints which file got which line of the service
# (sourced here and in the mount namespace below)
cat >"$T/run.sh" <<EOF2
T=$T N=$N
EOF2
cat >>"$T/run.sh" <<'EOF2'
wait_for() { for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
run() {
	local daemon=$1 name=$2 addr pid r f; shift 2
	rm -f "$T/stdio.sock"
	"$daemon" --config-file="$T/stdio.conf" --nofork --print-address=3 "$@" 3>"$T/$name.addr" \
		>"$T/$name.stdout" 2>"$T/$name.stderr" </dev/null &
	pid=$!
	wait_for "$T/$name.addr" || { echo "bus did not start"; kill $pid; return; }
	addr=$(head -n 1 "$T/$name.addr")
	r=$(timeout 20 dbus-send --bus="$addr" --print-reply --dest=org.freedesktop.DBus / \
		org.freedesktop.DBus.StartServiceByName string:$N uint32:0 2>&1 | tail -n 1)
	echo "StartServiceByName: $(echo $r)"
	timeout 5 dbus-send --bus="$addr" --dest=$N / com.example.I.Exit >/dev/null 2>&1
	sleep 0.3
	kill $pid; wait $pid 2>/dev/null
	for f in stdout stderr; do
		grep -h "of $N" "$T/$name.$f" | sed "s/^/the bus's $f: /"
	done
	# (two streams: in no particular order)
	if [ -f "$T/$name.journal" ]; then sort "$T/$name.journal" | sed 's/^/the journal: /'; fi
	return 0
}
EOF2
. "$T/run.sh"

ref=$(run /usr/bin/dbus-daemon ref)
ours=$(run "$BUS_DAEMON" ours)
compare_with_reference "$(nl -s ': ' <<<"$ours" | sed 's/^ */line /')" "$(nl -s ': ' <<<"$ref" | sed 's/^ */line /')" 3
expect "busbridged: the service's stdout is the bus's" "^the bus's stdout: stdout of $N$" echo "$ours"

# with --syslog-only, a journal to write to, in a mount namespace of our own
if ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
	skip "the journal: needs unshare -m"
else
	cat >"$T/ns.sh" <<'EOF2'
# ns.sh DAEMON NAME: in a mount namespace of its own, a journal on a tmpfs
# /run/systemd, and run() with --syslog-only
mount --make-rprivate / && mkdir -p /run/systemd && mount -t tmpfs tmpfs /run/systemd || exit 1
. "$(dirname "$0")/run.sh"
python3 "$HERE/journal-sink.py" /run/systemd/journal "$T/$2.journal" & sink=$!
for _ in $(seq 200); do [ -S /run/systemd/journal/stdout ] && break; sleep 0.05; done
run "$1" "$2" --syslog-only
kill $sink
EOF2
	ref=$(HERE=$here timeout 60 unshare -m bash "$T/ns.sh" /usr/bin/dbus-daemon j-ref 2>"$T/ns-ref.err")
	ours=$(HERE=$here timeout 60 unshare -m bash "$T/ns.sh" "$BUS_DAEMON" j-ours 2>"$T/ns-ours.err")
	compare_with_reference "$(nl -s ': ' <<<"$ours" | sed 's/^ */journal line /')" \
		"$(nl -s ': ' <<<"$ref" | sed 's/^ */journal line /')" 3
	expect "busbridged: with --syslog-only the service's stdout goes to the journal at priority 6" \
		"^the journal: $N <6>: stdout of $N$" echo "$ours"
fi
echo "1..$n"
