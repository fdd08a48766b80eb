#!/bin/bash
# run.sh DAEMON: integration tests with real clients against DAEMON
# (busbridged, or /usr/bin/dbus-daemon for a reference run).
#
# Starts DAEMON on a private socket with data/test-session.conf, then runs
# every tests/integration/test-* with DBUS_SESSION_BUS_ADDRESS set and
# BUS_DAEMON=DAEMON (tests that need their own bus start it themselves).
# Each test prints TAP; the last line is "N passed, N failed, N skipped".
#
# The tests wait far more than they compute.  Those that use the bus
# started here run one after the other; those that start buses of their
# own and never use this one (a line "# integration: own buses" in their
# header) run beside them, INTEGRATION_JOBS - 1 at a time (default 3 in
# all), without DBUS_SESSION_BUS_ADDRESS: a test marked so that still used
# it would fail, not race.  INTEGRATION_JOBS=1 runs every test in one
# lane.  The results are printed in the tests' order.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
daemon=${1:?usage: run.sh DAEMON}
only=${ONLY:-.}
export BUS_DAEMON=$daemon TOP=$top
export BUILDDIR=${BUILDDIR:-$(cd "$(dirname "$daemon")/.." 2>/dev/null && pwd)}
tmp=$(mktemp -d -t busbridge-it.XXXXXX)
chmod 755 "$tmp"
trap 'kill $bus_pid 2>/dev/null; wait $bus_pid 2>/dev/null; rm -rf "$tmp"' EXIT
unset DBUS_SESSION_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS DBUS_STARTER_ADDRESS DBUS_STARTER_BUS_TYPE
export HOME=$tmp/home XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"

sed "s|@SOCKET@|$tmp/bus|; s|@SERVICEDIR@|$tmp/services|" "$top/data/test-session.conf.in" > "$tmp/bus.conf"
mkdir -p "$tmp/services"
export TEST_TMP=$tmp TEST_SERVICEDIR=$tmp/services TEST_CONFIG=$tmp/bus.conf
"$daemon" --config-file="$tmp/bus.conf" --nofork --print-address=3 3>"$tmp/addr" 2>"$tmp/daemon.log" &
bus_pid=$!
for _ in $(seq 100); do [ -s "$tmp/addr" ] && break; sleep 0.05; done
if [ ! -s "$tmp/addr" ]; then
	echo "not ok - daemon did not start:"; cat "$tmp/daemon.log"
	echo "0 passed, 1 failed, 0 skipped"; exit 1
fi
export DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$tmp/addr") BUS_PID=$bus_pid

# run_test TEST: its block of output in $tmp/results/NAME.out, its counts
# ("P F S") in $tmp/results/NAME.n
run_test() {
	local t=$1 name out rc p f s t0 us
	name=$(basename "$t")
	t0=${EPOCHREALTIME/[.,]/}	# microseconds, without forking
	out=$(cd "$tmp" && timeout -k 5 120 "$t" 2>"$tmp/$name.err"); rc=$?
	[ "$rc" = 77 ] && rc=0	# skipped (it printed its "# SKIP" line)
	p=$(grep -c '^ok ' <<<"$out" | head -1); f=$(grep -c '^not ok ' <<<"$out")
	s=$(grep -c '^ok .*# *SKIP' <<<"$out"); p=$((p - s))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; out="$out
not ok - $name exited with $rc"; fi
	[ $((p + f + s)) = 0 ] && { f=1; out="$out
not ok - $name printed no results"; }
	us=$(( ${EPOCHREALTIME/[.,]/} - t0 ))
	{
		printf '# %s: %d passed, %d failed, %d skipped (%d.%d s)\n' "$name" "$p" "$f" "$s" $((us / 1000000)) \
			$((us % 1000000 / 100000))
		sed 's/^/  /' <<<"$out"
		[ "$f" = 0 ] || sed 's/^/  stderr: /' "$tmp/$name.err" | tail -n 15
	} > "$tmp/results/$name.out"
	echo "$p $f $s" > "$tmp/results/$name.n"
}

jobs=${INTEGRATION_JOBS:-3}
tests=() shared=() own=()
for t in "$here"/test-*; do
	name=$(basename "$t")
	[[ $name =~ $only ]] || continue
	[ -x "$t" ] || continue
	tests+=("$t")
	if [ "$jobs" -gt 1 ] && grep -q '^# integration: own buses' "$t"; then
		own+=("$t")
	else
		shared+=("$t")
	fi
done
mkdir -p "$tmp/results"
lane_pid=
if [ ${#own[@]} -gt 0 ]; then
	export -f run_test
	export tmp
	printf '%s\0' "${own[@]}" | env -u DBUS_SESSION_BUS_ADDRESS -u BUS_PID \
		xargs -0 -n 1 -P $((jobs - 1)) bash -c 'run_test "$1"' run_test &
	lane_pid=$!
fi
for t in "${shared[@]}"; do run_test "$t"; done
[ -z "$lane_pid" ] || wait "$lane_pid"

pass=0 fail=0 skip=0
for t in "${tests[@]}"; do
	name=$(basename "$t")
	if [ ! -f "$tmp/results/$name.n" ]; then
		echo "not ok - $name: no result"; fail=$((fail + 1)); continue
	fi
	cat "$tmp/results/$name.out"
	read -r p f s < "$tmp/results/$name.n"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
if ! kill -0 "$bus_pid" 2>/dev/null; then
	echo "not ok - the bus daemon died during the tests"; tail -n 20 "$tmp/daemon.log"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
