#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# What busbridged logs to syslog, and at which priority, beside dbus-daemon
# with the same configuration and --syslog: at start (the fd limit it
# cannot raise: a warning), at ReloadConfig, SIGHUP and a change in a
# watched service directory ("Reloaded configuration", info), and a reload
# that fails ("Unable to reload configuration").  /dev/log is
# syslog-sink.py in a mount namespace of the test's own (a tmpfs /dev).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

if ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
	skip "needs unshare -m"; echo "1..$n"; exit 0
fi
mkdir -p "$T/svc"
own_config "$T/log.conf" "$T/log.sock"
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/svc</servicedir>|" "$T/log.conf"
cat >"$T/ns.sh" <<'EOF2'
# ns.sh DAEMON NAME: the daemon with --syslog, a /dev/log of our own
set -u
T=$TT
mount --make-rprivate / && mount -t tmpfs -o mode=755 tmpfs /dev || exit 1
mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 && mknod -m 666 /dev/urandom c 1 9 &&
	mknod -m 666 /dev/random c 1 8 || exit 1
: >"$T/$2.syslog"
python3 "$HERE/syslog-sink.py" /dev/log "$T/$2.syslog" & sink=$!
for _ in $(seq 200); do [ -S /dev/log ] && break; sleep 0.05; done
cp "$T/log.conf" "$T/$2.conf"
rm -f "$T/log.sock"
"$1" --config-file="$T/$2.conf" --nofork --syslog --print-address=3 3>"$T/$2.addr" 2>"$T/$2.stderr" </dev/null &
pid=$!
for _ in $(seq 200); do [ -s "$T/$2.addr" ] && break; sleep 0.05; done
addr=$(head -n 1 "$T/$2.addr")
step() { sleep 0.4; echo "== $1" >>"$T/$2.syslog"; }
step ReloadConfig "$2"
dbus-send --bus="$addr" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig >/dev/null
step SIGHUP "$2"
kill -HUP $pid
step "a service file" "$2"
printf '[D-BUS Service]\nName=com.example.Log\nExec=/bin/false\n' >"$T/svc/com.example.Log.service"
step "ReloadConfig of a broken file" "$2"
echo '<busconfig><oops' >>"$T/$2.conf"
dbus-send --bus="$addr" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig >/dev/null 2>&1
step "SIGHUP with a broken file" "$2"
kill -HUP $pid
step "SIGTERM" "$2"
sleep 0.4
kill $pid; wait $pid
rm -f "$T/svc/com.example.Log.service"
sleep 0.2
kill $sink
EOF2
for who in ref ours; do
	d=/usr/bin/dbus-daemon; [ $who = ours ] && d=$BUS_DAEMON
	TT=$T HERE=$here timeout 60 unshare -m bash "$T/ns.sh" "$d" $who 2>"$T/ns-$who.err"
done
lines() { # NAME: the syslog lines, numbered within each step, and the stderr lines
	awk '/^== / { step = substr($0, 4); i = 0; next } { i++; printf "%s, line %d: %s\n", step ? step : "start", i, $0 }' \
		"$T/$1.syslog" | sed "s|$T/$1.conf|CONF|g"
	sed 's/\[[0-9]*\]/[PID]/g; s/pid=[0-9]*/pid=PID/g' "$T/$1.stderr" | sed "s|$T/$1.conf|CONF|g" |
		nl -ba -s ': ' | sed 's/^ */stderr line /'
}
compare_with_reference "$(lines ours)" "$(lines ref)" 8
echo "1..$n"
