#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The daemon's command line as the launchers use it: dbus-run-session,
# (debug-build) dbus-launch, --fork/--nofork with --print-address and
# --print-pid in both forms, --address, --version, --introspect, and
# broken configuration files.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"
D=(--dest=org.freedesktop.DBus /org/freedesktop/DBus)
# on ADDRESS: dbus-send to another bus
on() { local a=$1; shift; DBUS_SESSION_BUS_ADDRESS=$a timeout -k 2 10 dbus-send --session --print-reply "$@"; }
bus_pid_of() { on "$1" "${D[@]}" org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.DBus 2>/dev/null | sed -n 's/^ *uint32 //p'; }
# gone PID: waits (bounded) until PID has exited (a zombie has: its parent,
# not us, reaps it)
gone() {
	local i st
	for ((i = 0; i < 250; i++)); do
		st=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 0
		[ -z "$st" ] || [ "$st" = Z ] && return 0
		sleep 0.02
	done
	return 1
}
# a private copy of the test config listening on SOCKET
conf_on() { sed "s|<listen>[^<]*</listen>|<listen>unix:path=$2</listen>|" "$TEST_CONFIG" >"$1"; }
_extra_cleanup='for p in $(cat "$T"/kill.* 2>/dev/null); do kill "$p" 2>/dev/null; done; kill_using "$T/data/valid-config-files/session.conf"'

# --- dbus-run-session
expect "dbus-run-session --dbus-daemon=DAEMON: GetId on the session bus it started" '^   string "[0-9a-f]{32}"$' \
	timeout -k 2 5 dbus-run-session --dbus-daemon="$BUS_DAEMON" -- \
	timeout 10 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId
out=$(timeout -k 2 5 dbus-run-session --dbus-daemon="$BUS_DAEMON" -- sh -c \
	'echo "addr=$DBUS_SESSION_BUS_ADDRESS"; timeout 10 dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.DBus' 2>&1)
pid=$(sed -n 's/^ *uint32 //p' <<<"$out")
if [ -n "$pid" ] && grep -q '^addr=unix:' <<<"$out"; then ok "dbus-run-session: the daemon reports its own pid ($pid)"
else not_ok "dbus-run-session: $(head -c 300 <<<"$out")"; fi
if [ -n "$pid" ] && gone "$pid"; then ok "dbus-run-session: the daemon exits on SIGTERM when the session ends"
else not_ok "dbus-run-session: the daemon ($pid) is still running"; [ -n "$pid" ] && kill "$pid" 2>/dev/null; fi
conf_on "$T/rs.conf" "$T/rs.sock"
expect "dbus-run-session --config-file: the bus listens where the config says" "addr=unix:path=$T/rs.sock" \
	timeout -k 2 5 dbus-run-session --dbus-daemon="$BUS_DAEMON" --config-file="$T/rs.conf" -- \
	sh -c 'echo "addr=$DBUS_SESSION_BUS_ADDRESS"; timeout 10 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId'

# --- the debug build of dbus-launch: runs $DBUS_TEST_DAEMON with
# "--syslog --fork --print-pid 4 --print-address 6 --config-file
# $DBUS_TEST_DATA/valid-config-files/session.conf" (space forms)
launch=/usr/lib/dbus-1.0/debug-build/bin/dbus-launch
if [ -x "$launch" ] && [ -r /usr/share/dbus-1/session.conf ]; then
	mkdir -p "$T/data/valid-config-files"
	ln -sf /usr/share/dbus-1/session.conf "$T/data/valid-config-files/session.conf"
	# (output to files, not a pipe: a daemon that kept the pipe open would
	# block the test)
	env -u DBUS_SESSION_BUS_ADDRESS DBUS_TEST_DAEMON="$BUS_DAEMON" DBUS_TEST_DATA="$T/data" \
		timeout -k 2 5 "$launch" --sh-syntax </dev/null >"$T/launch.out" 2>"$T/launch.err"
	out=$(cat "$T/launch.out")
	addr=$(sed -n "s/^DBUS_SESSION_BUS_ADDRESS='\(.*\)';\$/\1/p" <<<"$out")
	lpid=$(sed -n 's/^DBUS_SESSION_BUS_PID=\([0-9]*\);$/\1/p' <<<"$out")
	[ -n "$lpid" ] && echo "$lpid" >"$T/kill.launch"
	if [ -n "$addr" ] && [ -n "$lpid" ] && kill -0 "$lpid" 2>/dev/null; then ok "dbus-launch --sh-syntax: an address and the pid of a running daemon"
	else not_ok "dbus-launch: $out $(head -c 300 "$T/launch.err")"; fi
	expect "dbus-launch: GetId on that bus" '^   string "[0-9a-f]{32}"$' on "$addr" "${D[@]}" org.freedesktop.DBus.GetId
	got=$(bus_pid_of "$addr")
	if [ -n "$lpid" ] && [ "$got" = "$lpid" ]; then ok "dbus-launch: DBUS_SESSION_BUS_PID is the daemon's pid"
	else not_ok "dbus-launch: DBUS_SESSION_BUS_PID $lpid, the bus says $got"; fi
	if [ -n "$lpid" ] && kill "$lpid" && gone "$lpid"; then ok "dbus-launch: the daemon exits on SIGTERM"
	else not_ok "dbus-launch: the daemon $lpid did not exit"; fi
else
	for i in 1 2 3 4; do skip "no debug-build dbus-launch or session.conf"; done
fi

# --- --fork --print-address=5 --print-pid=6 --session, stdin closed
timeout -k 2 10 "$BUS_DAEMON" --fork --print-address=5 --print-pid=6 --session \
	5>"$T/fork.addr" 6>"$T/fork.pid" <&- >"$T/fork.out" 2>"$T/fork.err"; rc=$?
fpid=$(head -n 1 "$T/fork.pid" 2>/dev/null); faddr=$(head -n 1 "$T/fork.addr" 2>/dev/null)
[ -n "$fpid" ] && echo "$fpid" >"$T/kill.fork"
if [ "$rc" = 0 ] && [ -n "$faddr" ] && [ -n "$fpid" ] && kill -0 "$fpid" 2>/dev/null; then
	ok "--fork: the parent exits 0 after printing the address and the pid of the running child"
else not_ok "--fork: rc $rc, address '$faddr', pid '$fpid': $(head -c 300 "$T/fork.err")"; fi
expect "--fork: GetId on the forked bus" '^   string "[0-9a-f]{32}"$' on "$faddr" "${D[@]}" org.freedesktop.DBus.GetId
got=$(bus_pid_of "$faddr")
if [ -n "$fpid" ] && [ "$got" = "$fpid" ]; then ok "--print-pid=6 printed the pid the bus reports"
else not_ok "--print-pid: printed $fpid, the bus says $got"; fi
if [ -n "$fpid" ] && kill "$fpid" && gone "$fpid"; then ok "--fork: the daemon exits on SIGTERM"
else not_ok "--fork: the daemon $fpid did not exit"; fi

# --- --session --nofork --print-address 4 (space form), --print-pid 5
"$BUS_DAEMON" --session --nofork --print-address 4 --print-pid 5 4>"$T/nofork.addr" 5>"$T/nofork.pid" </dev/null 2>"$T/nofork.err" &
npid=$!; _pids+=("$npid")
wait_grep . "$T/nofork.addr" 10
naddr=$(head -n 1 "$T/nofork.addr")
wait_grep . "$T/nofork.pid" 5
if [[ $naddr == unix:* ]] && kill -0 "$npid" 2>/dev/null; then ok "--nofork --print-address 4: the address on fd 4, the daemon in the foreground"
else not_ok "--nofork --print-address 4: '$naddr': $(head -c 300 "$T/nofork.err")"; fi
if [ "$(head -n 1 "$T/nofork.pid")" = "$npid" ]; then ok "--print-pid 5: our child's pid"
else not_ok "--print-pid 5: '$(head -n 1 "$T/nofork.pid")', want $npid"; fi
expect "--nofork: GetId on that bus" '^   string "[0-9a-f]{32}"$' on "$naddr" "${D[@]}" org.freedesktop.DBus.GetId
kill "$npid"; wait "$npid"; rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 143 ]; then ok "--nofork: SIGTERM ends the daemon (status $rc)"; else not_ok "--nofork: exit status $rc after SIGTERM"; fi

# --- --print-address without a fd: on stdout; --address overrides <listen>
conf_on "$T/addr.conf" "$T/not-this.sock"
"$BUS_DAEMON" --config-file="$T/addr.conf" --address="unix:path=$T/this.sock" --nofork --print-address \
	>"$T/stdout.addr" </dev/null 2>"$T/stdout.err" &
apid=$!; _pids+=("$apid")
wait_grep . "$T/stdout.addr" 10
if grep -q "^unix:path=$T/this.sock" "$T/stdout.addr" && [ -S "$T/this.sock" ] && [ ! -e "$T/not-this.sock" ]; then
	ok "--address= overrides the config's <listen>; --print-address prints it on stdout"
else not_ok "--address/--print-address: '$(cat "$T/stdout.addr")': $(head -c 300 "$T/stdout.err")"; fi
expect "--address: GetId on that bus" '^   string "[0-9a-f]{32}"$' on "unix:path=$T/this.sock" "${D[@]}" org.freedesktop.DBus.GetId
stop "$apid"

# --- --version, --introspect
out=$("$BUS_DAEMON" --version 2>&1); rc=$?
if [ "$rc" = 0 ] && grep -qE '[0-9]+\.[0-9]+' <<<"$(head -n 1 <<<"$out")"; then ok "--version: exit 0, a version number ($(head -n 1 <<<"$out"))"
else not_ok "--version: rc $rc: $(head -c 200 <<<"$out")"; fi
out=$(timeout 10 "$BUS_DAEMON" --introspect 2>&1); rc=$?
if [ "$rc" = 0 ] && grep -q '<interface name="org.freedesktop.DBus">' <<<"$out" && grep -q '<method name="RequestName">' <<<"$out"; then
	ok "--introspect: the driver's introspection XML"
else not_ok "--introspect: rc $rc: $(head -c 200 <<<"$out")"; fi

# --- broken configuration files: exit non-zero, say what and where
# broken NAME WHAT PATTERN: runs the daemon on $T/NAME.conf, expects failure
# and an error matching PATTERN
broken() {
	local f=$T/$1.conf desc=$2 pat=$3 out rc
	out=$(timeout -k 2 10 "$BUS_DAEMON" --config-file="$f" --nofork --print-address </dev/null 2>&1); rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -qE -- "$pat" <<<"$out"; then ok "$desc: exit $rc, $(head -n 1 <<<"$out" | head -c 150)"
	else not_ok "$desc: exit $rc, expected /$pat/, got: $(head -c 300 <<<"$out")"; fi
}
# FILE:LINE or dbus-daemon's "Error in file FILE, line N"
at() { local f=${1//./\\.}; echo "($f:$2([^0-9]|\$)|file $f, line $2([^0-9]|\$))"; }
printf '<busconfig>\n  <type>session</type>\n  <listen>unix:path=%s</listen\n</busconfig>\n' "$T/x.sock" >"$T/malformed.conf"
broken malformed "malformed XML: names the file and the line" "$(at "$T/malformed.conf" 4)"
printf '<busconfig>\n  <type>session</type>\n  <listen>unix:path=%s</listen>\n</busconfog>\n' "$T/x.sock" >"$T/mismatch.conf"
broken mismatch "mismatched closing tag: names the file and the line" "$(at "$T/mismatch.conf" 4)"
printf '<busconfig>\n  <type>session</type>\n  <listen>unix:path=%s</listen>\n  <include>%s</include>\n</busconfig>\n' \
	"$T/x.sock" "$T/malformed.conf" >"$T/includer.conf"
broken includer "malformed XML in an included file: names that file and line" "$(at "$T/malformed.conf" 4)"
# dbus-daemon 1.14 names neither file nor line for these: the element or
# limit must be named
printf '<busconfig>\n  <type>session</type>\n  <frobnicate/>\n  <listen>unix:path=%s</listen>\n</busconfig>\n' "$T/x.sock" >"$T/unknown.conf"
broken unknown "an unknown element: names it" 'frobnicate'
printf '<busconfig>\n  <type>session</type>\n  <listen>unix:path=%s</listen>\n  <limit name="no_such_limit">5</limit>\n</busconfig>\n' "$T/x.sock" >"$T/limit.conf"
broken limit "an unknown limit: names it" 'no_such_limit'
broken missing "a config file that does not exist: names it" "${T//./\\.}/missing\.conf"
if [ ! -e "$T/x.sock" ]; then ok "no broken config got as far as listening"; else not_ok "a broken config listened on $T/x.sock"; fi
echo "1..$n"
