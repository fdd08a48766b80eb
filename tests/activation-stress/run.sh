#!/bin/bash
# tests/activation-stress/run.sh DAEMON [BUILDDIR]: bus activation under load.
#
# 8 clients each send 500 pipelined, auto-starting calls (8 on their way per
# client at any time) to an activatable service (stress-service) that goes
# away every 20 to 50 calls:
#
#   phase 1 "idle":  it exits on idle the race-free way (doc/activation.md:
#                    ReleaseName, answer what was delivered, exit).  Every
#                    call must get its own reply, in order, with no error.
#   phase 2 "crash": it dies of SIGKILL instead.  Every call must get its
#                    reply or a NoReply error (only calls the dead instance
#                    had been handed can get one), exactly once, and none
#                    may hang: calls not handed to the dead instance go to
#                    the next one.
#
# The same two phases run against /usr/bin/dbus-daemon (when installed) for
# comparison, and one more check then compares the crash phases: DAEMON may
# give at most 5 % more NoReply errors than dbus-daemon (STRESS_TOLERANCE
# percent), the median of STRESS_ROUNDS (3) crash phases of each, taken in
# turn: the count of one phase varies by about 10 % from run to run.
# BUILDDIR (default: the
# build directory of DAEMON) has tests/activation-stress/stress-{client,service}
# (`make check` builds them).  Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/session-config.sh"
daemon=$(realpath -e "${1:?usage: run.sh DAEMON [BUILDDIR]}") || exit 2
builddir=${2:-$(dirname "$(dirname "$daemon")")}
bin=$builddir/tests/activation-stress
CLIENTS=${STRESS_CLIENTS:-8} CALLS=${STRESS_CALLS:-500} WINDOW=${STRESS_WINDOW:-8}
MIN=${STRESS_MIN:-20} MAX=${STRESS_MAX:-50} SECS=${STRESS_SECONDS:-30}
TOLERANCE=${STRESS_TOLERANCE:-5} ROUNDS=${STRESS_ROUNDS:-3}
pass=0 fail=0 skip=0 n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }

if [ ! -x "$bin/stress-client" ] || [ ! -x "$bin/stress-service" ]; then
	make -s -C "$builddir" tests/activation-stress/stress-client tests/activation-stress/stress-service \
		>/dev/null 2>&1
fi
if [ ! -x "$bin/stress-client" ] || [ ! -x "$bin/stress-service" ]; then
	not_ok "stress-client/stress-service not built in $bin"
	echo "$pass passed, $fail failed, $skip skipped"; exit 1
fi

T=$(mktemp -d -t busbridge-activation-stress.XXXXXX)
bus_pid=
trap '[ -n "$bus_pid" ] && kill $bus_pid 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/services"
for mode in idle crash; do
	printf '[D-BUS Service]\nName=com.example.Stress.%s\nExec=%s com.example.Stress.%s %s %s %s\n' \
		"$mode" "$bin/stress-service" "$mode" "$mode" "$MIN" "$MAX" >"$T/services/com.example.Stress.$mode.service"
done
open_session_config "$T/bus.conf" "unix:path=$T/bus.sock" "<servicedir>$T/services</servicedir>" \
	'<limit name="max_incoming_bytes">100000000</limit>' \
	'<limit name="max_outgoing_bytes">100000000</limit>' \
	'<limit name="max_replies_per_connection">50000</limit>' \
	'<limit name="max_connections_per_user">100000</limit>' \
	'<limit name="max_completed_connections">100000</limit>' \
	'<limit name="max_incomplete_connections">10000</limit>' \
	'<limit name="max_pending_service_starts">10000</limit>' \
	'<limit name="service_start_timeout">20000</limit>'

field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# run_phase DAEMON MODE: figures of one phase on a fresh bus -> $out, $starts,
# and the daemon's exit status after SIGTERM -> $bus_rc
run_phase() {
	local d=$1 mode=$2 i
	rm -f "$T/bus.sock" "$T/starts"
	STRESS_LOG=$T/starts "$d" --config-file="$T/bus.conf" --nofork --nopidfile 2>"$T/bus.$mode.err" &
	bus_pid=$!
	for i in $(seq 100); do [ -S "$T/bus.sock" ] && break; sleep 0.05; done
	out=$(timeout -k 5 $((SECS + 10)) "$bin/stress-client" "unix:path=$T/bus.sock" "com.example.Stress.$mode" \
		"$CLIENTS" "$CALLS" "$WINDOW" "$SECS" 2>"$T/client.$mode.err")
	[ -n "$out" ] || out="calls=$((CLIENTS * CALLS)) lost=$((CLIENTS * CALLS)) (stress-client failed)"
	starts=$(grep -c "^start com.example.Stress.$mode " "$T/starts" 2>/dev/null)
	kill $bus_pid 2>/dev/null; wait $bus_pid 2>/dev/null; bus_rc=$?; bus_pid=
	[ $bus_rc = 0 ] || { echo "# $d exited with status $bus_rc:"; tail -n 20 "$T/bus.$mode.err" | sed 's/^/#   /'; }
	sed 's/^/#   /' "$T/client.$mode.err" | head -5
}

echo "# $CLIENTS clients x $CALLS pipelined calls ($WINDOW on their way per client); the service leaves every $MIN-$MAX calls"
declare -A fig
for mode in idle crash; do
	run_phase "$daemon" "$mode"
	fig[bb.$mode]="$out starts=${starts:-0}"
	echo "# busbridged  $mode: ${fig[bb.$mode]}"
	total=$((CLIENTS * CALLS))
	calls=$(field "$out" calls) replies=$(field "$out" replies) errors=$(field "$out" errors)
	noreply=$(field "$out" noreply) other=$(field "$out" other) lost=$(field "$out" lost)
	dup=$(field "$out" duplicate) bad=$(field "$out" bad) dis=$(field "$out" disorder)
	if [ "$mode" = idle ]; then
		[ "${calls:-0}" = $total ] && [ "${replies:-0}" = $total ] && [ "${errors:-1}" = 0 ] && [ "${lost:-1}" = 0 ] &&
			[ "${dup:-1}" = 0 ] && [ "${bad:-1}" = 0 ] && [ "${dis:-1}" = 0 ] && [ "${starts:-0}" -ge 10 ] && [ $bus_rc = 0 ] \
			&& ok "exit on idle: all $total calls answered, in order, no error, none lost (${starts} starts)" \
			|| not_ok "exit on idle: $out starts=${starts:-0}"
	else
		[ "${calls:-0}" = $total ] && [ $((${replies:-0} + ${noreply:-0})) = $total ] && [ "${other:-1}" = 0 ] &&
			[ "${lost:-1}" = 0 ] && [ "${dup:-1}" = 0 ] && [ "${bad:-1}" = 0 ] && [ "${starts:-0}" -ge 10 ] && [ $bus_rc = 0 ] \
			&& ok "crashing service: every call answered once (${replies} replies, ${noreply} NoReply), none lost (${starts} starts)" \
			|| not_ok "crashing service: $out starts=${starts:-0}"
	fi
done

if [ -x /usr/bin/dbus-daemon ] && [ "$(realpath /usr/bin/dbus-daemon)" != "$daemon" ]; then
	for mode in idle crash; do
		run_phase /usr/bin/dbus-daemon "$mode"
		fig[dd.$mode]="$out starts=${starts:-0}"
		echo "# dbus-daemon $mode: ${fig[dd.$mode]}"
	done
	ddcalls=$(field "${fig[dd.crash]}" calls)
	bbs=("$(field "${fig[bb.crash]}" errors)") dds=("$(field "${fig[dd.crash]}" errors)")
	for ((r = 1; r < ROUNDS; r++)); do
		run_phase "$daemon" crash
		bbs+=("$(field "$out" errors)")
		run_phase /usr/bin/dbus-daemon crash
		dds+=("$(field "$out" errors)")
		[ "$(field "$out" calls)" = $((CLIENTS * CALLS)) ] || ddcalls=0
	done
	median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
	bb=$(median "${bbs[@]}") dd=$(median "${dds[@]}")
	echo "# crash phases' NoReply errors: busbridged ${bbs[*]}, dbus-daemon ${dds[*]}"
	if [ "${ddcalls:-0}" != $((CLIENTS * CALLS)) ] || [ -z "$dd" ]; then
		not_ok "crashing service: no figures from dbus-daemon to compare with"
	elif [ "${bb:-999999}" -le $((dd + dd * TOLERANCE / 100)) ]; then
		ok "crashing service: ${bb} errors, dbus-daemon ${dd} (medians of $ROUNDS, at most +${TOLERANCE} %)"
	else
		not_ok "crashing service: ${bb} errors, more than dbus-daemon's ${dd} + ${TOLERANCE} % (medians of $ROUNDS)"
	fi
else
	n=$((n + 1)) skip=$((skip + 1))
	echo "ok $n # skip crashing service: no /usr/bin/dbus-daemon to compare with"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
