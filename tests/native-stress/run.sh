#!/bin/bash
# tests/native-stress/run.sh BUSBRIDGED [BUILDDIR]: native kdbus peers and
# classic clients under load together on busbridged's kernel bus
# (busbridged --kdbus, so only where kdbus.ko is loaded: the VM's second
# stage).  tests/native-stress/native-stress runs STRESS_NATIVE native and
# STRESS_CLASSIC classic workers calling each other, signalling each other
# and passing a name around for STRESS_SECONDS (60), while STRESS_CHURN
# processes connect and leave in the middle of their calls; every call
# must be answered once with its own arguments, every signal delivered
# once and in order.  The daemon must then exit cleanly on SIGTERM.
# Last line: "N passed, N failed, N skipped" (77 when there is no kdbusfs).
set -u
. "$(dirname "$0")/../lib/session-config.sh"
daemon=$(realpath -e "${1:?usage: run.sh BUSBRIDGED [BUILDDIR]}") || exit 2
builddir=${2:-$(dirname "$(dirname "$daemon")")}
stress=$builddir/tests/native-stress/native-stress
NATIVE=${STRESS_NATIVE:-3} CLASSIC=${STRESS_CLASSIC:-3} CHURN=${STRESS_CHURN:-2} SECS=${STRESS_SECONDS:-60}
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
done_() { echo "1..$n"; echo "$pass passed, $fail failed, ${1:-0} skipped"; exit $([ $fail = 0 ] && echo 0 || echo 1); }
if [ ! -d /sys/fs/kdbus ] || ! grep -qw kdbusfs /proc/filesystems; then
	echo "1..0 # SKIP no kdbusfs (kdbus.ko is loaded in the VM's second stage)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
[ -x "$stress" ] || make -s -C "$builddir" tests/native-stress/native-stress > /dev/null 2>&1
[ -x "$stress" ] || { not_ok "$stress not built"; done_; }

T=$(mktemp -d -t busbridge-native-stress.XXXXXX)
bus_pid=
trap '[ -n "$bus_pid" ] && kill $bus_pid 2> /dev/null; rm -rf "$T"' EXIT
open_session_config "$T/bus.conf" "unix:path=$T/bus.sock"
"$daemon" --kdbus --config-file="$T/bus.conf" --nofork --nopidfile 2> "$T/bus.err" &
bus_pid=$!
kbus=/sys/fs/kdbus/$(id -u)-busbridge-$bus_pid/bus
for i in $(seq 200); do [ -S "$T/bus.sock" ] && [ -e "$kbus" ] && break; sleep 0.05; done
if [ ! -e "$kbus" ]; then
	not_ok "busbridged --kdbus made no bus at $kbus: $(head -c 300 "$T/bus.err")"
	done_
fi
echo "# $NATIVE native and $CLASSIC classic workers, $CHURN churning, ${SECS} s on $kbus"
timeout -k 5 $((SECS + 200)) "$stress" "$kbus" "unix:path=$T/bus.sock" "$NATIVE" "$CLASSIC" "$CHURN" "$SECS" \
	> "$T/out" 2> "$T/err"
rc=$?
sed 's/^/# /' "$T/out"
head -n 10 "$T/err" | sed 's/^/#   /'
summary=$(grep -E '^[0-9]+ workers' "$T/out")
if [ $rc = 0 ] && [ "$(tail -n 1 "$T/out")" = ok ]; then
	ok "native and classic peers under load: ${summary:-?}; every call answered once, every signal delivered in order"
else
	not_ok "native and classic peers under load (exit $rc): $(tail -n 1 "$T/out")"
fi
kill $bus_pid 2> /dev/null
wait $bus_pid
rc=$?
bus_pid=
if [ $rc = 0 ]; then
	ok "busbridged --kdbus exits cleanly on SIGTERM after the load"
else
	not_ok "busbridged --kdbus exited with status $rc"
	tail -n 20 "$T/bus.err" | sed 's/^/#   /'
fi
[ ! -e "$kbus" ] && ok "the bus is gone from kdbusfs with the daemon" || not_ok "$kbus is still there"
done_
