#!/bin/bash
# tests/external/run.sh DAEMON: the test suites of other D-Bus projects,
# run against DAEMON and against dbus-daemon beside it (tools/deps.sh test
# installs them):
#  - GLib's GDBus tests (libglib2.0-tests): each starts its own bus through
#    GTestDBus, which runs "dbus-daemon" from PATH;
#  - dbus-python's tests (python3-dbus-tests): dbus-run-session
#    --dbus-daemon=DAEMON with their own configuration;
#  - sd-bus's tests (systemd-tests, test-bus-*): with the session and the
#    system bus address pointing at a bus of DAEMON.
# A test passes when it ends as it does on dbus-daemon: the same exit
# status and the same TAP tests failing (none, where dbus-daemon passes).  Prints TAP and "N passed, N failed, N skipped";
# exit 77 when none of the suites is installed.
set -u
. "$(dirname "$0")/../lib/session-config.sh"
daemon=${1:?usage: run.sh DAEMON}
daemon=$(cd "$(dirname "$daemon")" && pwd)/$(basename "$daemon")
reference=${REFERENCE_DAEMON:-/usr/bin/dbus-daemon}
tmp=$(mktemp -d -t busbridge-external.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0 n=0

# "exit status, the TAP tests that failed" of a log (which tests skip
# themselves can depend on timing, as GLib's threading tests do)
outcome() { # RC LOG
	echo "$1 $(grep -E '^not ok ' "$2" | sed 's/^not ok [0-9]* *-* *//' | sort | tr '\n' ';')"
}

report() { # NAME REF-OUTCOME OUTCOME LOG
	n=$((n + 1))
	set -- "$1" "$2" "$3" "$4"
	if [ "$2" = "$3" ]; then
		case $3 in
		77\ *) skip=$((skip + 1)); echo "ok $n - $1 # SKIP skipped on both" ;;
		*) pass=$((pass + 1)); echo "ok $n - $1 (exit status ${3%% *})" ;;
		esac
	else
		fail=$((fail + 1))
		echo "not ok $n - $1: dbus-daemon $2, busbridged $3"
		tail -n 15 "$4" | sed 's/^/# /'
	fi
}

# both daemons as "dbus-daemon" in a PATH of their own (GTestDBus)
mkdir -p "$tmp/path-ref" "$tmp/path-bb"
ln -s "$reference" "$tmp/path-ref/dbus-daemon"
ln -s "$daemon" "$tmp/path-bb/dbus-daemon"
any=0

glib=/usr/libexec/installed-tests/glib
if [ -d "$glib" ]; then
	any=1
	for t in "$glib"/gdbus-*; do
		name=$(basename "$t")
		case $name in
		*.py | *.a | *.so | *-helper | gdbus-testserver | gdbus-example-*) continue ;;
		esac
		[ -x "$t" ] && [ -f "$t" ] || continue
		for w in ref bb; do
			(cd "$tmp" && PATH=$tmp/path-$w:$PATH timeout -k 5 180 "$t" > "$tmp/$name.$w.log" 2>&1)
			echo "$?" > "$tmp/$name.$w.rc"
		done
		report "glib $name" "$(outcome "$(cat "$tmp/$name.ref.rc")" "$tmp/$name.ref.log")" \
			"$(outcome "$(cat "$tmp/$name.bb.rc")" "$tmp/$name.bb.log")" "$tmp/$name.bb.log"
	done
fi

pydir=$(ls -d /usr/share/installed-tests/dbus-python/python3* 2>/dev/null | head -n 1)
if [ -n "$pydir" ]; then
	any=1
	for f in "$pydir"/*.test; do
		name=$(basename "$f" .test)
		cmd=$(sed -n 's/^Exec=//p' "$f")
		for w in ref bb; do
			d=$reference
			[ $w = bb ] && d=$daemon
			c=${cmd/\/usr\/bin\/dbus-run-session /\/usr\/bin\/dbus-run-session --dbus-daemon=$d }
			(cd "$tmp" && timeout -k 5 300 sh -c "$c" > "$tmp/py-$name.$w.log" 2>&1)
			echo "$?" > "$tmp/py-$name.$w.rc"
		done
		report "dbus-python $name" "$(outcome "$(cat "$tmp/py-$name.ref.rc")" "$tmp/py-$name.ref.log")" \
			"$(outcome "$(cat "$tmp/py-$name.bb.rc")" "$tmp/py-$name.bb.log")" "$tmp/py-$name.bb.log"
	done
fi

sdtests=/usr/lib/systemd/tests
if ls "$sdtests"/test-bus-* > /dev/null 2>&1; then
	any=1
	for w in ref bb; do
		d=$reference
		[ $w = bb ] && d=$daemon
		open_session_config "$tmp/sd-$w.conf" "unix:path=$tmp/sd-$w.sock"
		"$d" --config-file="$tmp/sd-$w.conf" --nofork --print-address=3 3> "$tmp/sd-$w.addr" 2> "$tmp/sd-$w.daemon.log" &
		pid=$!
		for _ in $(seq 100); do [ -s "$tmp/sd-$w.addr" ] && break; sleep 0.05; done
		for t in "$sdtests"/test-bus-* "$sdtests"/test-busctl-*; do
			[ -x "$t" ] || continue
			name=$(basename "$t")
			(cd "$tmp" && DBUS_SESSION_BUS_ADDRESS=unix:path=$tmp/sd-$w.sock \
				DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/sd-$w.sock \
				timeout -k 5 120 "$t" > "$tmp/sd-$name.$w.log" 2>&1)
			echo "$?" > "$tmp/sd-$name.$w.rc"
		done
		kill "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
	done
	for t in "$sdtests"/test-bus-* "$sdtests"/test-busctl-*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		report "sd-bus $name" "$(outcome "$(cat "$tmp/sd-$name.ref.rc")" "$tmp/sd-$name.ref.log")" \
			"$(outcome "$(cat "$tmp/sd-$name.bb.rc")" "$tmp/sd-$name.bb.log")" "$tmp/sd-$name.bb.log"
	done
fi

if [ $any = 0 ]; then
	echo "1..0 # SKIP no installed test suite (libglib2.0-tests, python3-dbus-tests, systemd-tests)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
