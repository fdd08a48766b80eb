#!/bin/bash
# bench-scale.sh: how the bus daemons scale (markdown on stdout; run by
# tools/bench.sh scale, or alone from the build directory).
#
#  1. Ir per delivered signal with S = 1, 10, 100, 1000 subscribers of which
#     one matches: S-1 idle peers each hold a rule on the signal's interface
#     with another member (member='OtherN'), and busbench signal -k 1 runs
#     (callgrind, (Ir_long - Ir_short) / extra signals).
#  2. Ir per message of ping with 0 and 10,000 idle connected peers.
#  3. RSS per idle connection: the daemon's VmRSS before and after 10,000
#     idle peers (Hello done, no rules), divided by 10,000.
#
# Environment: BUSBRIDGED, BENCH_DIR as for bench.sh; BUSES (default
# "dbus-broker busbridge": dbus-daemon takes minutes for the 10,000 peers
# under callgrind; add it if wanted); PEERS (default 10000);
# SUBS (default "1 10 100 1000").
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$src/../shared/bench}
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
export BUSBRIDGED=${BUSBRIDGED:-$PWD/daemon/busbridged}
BUSBRIDGED=$(readlink -f "$BUSBRIDGED")
buses=(${BUSES:-dbus-broker busbridge})
peers_n=${PEERS:-10000}
subs=(${SUBS-1 10 100 1000})	# SUBS="" skips part 1

# 10,000 connections need as many fds in the daemon and in the peers (one
# each: busbridge asks the socket for the pidfd only when
# GetConnectionCredentials wants it)
ulimit -n 65536 2> /dev/null || ulimit -n "$(ulimit -Hn)"
fds=$(ulimit -n)
if [ "$fds" != unlimited ] && [ $((peers_n + 256)) -gt "$fds" ]; then
	echo "bench-scale: RLIMIT_NOFILE $fds: $(( fds - 256 )) peers instead of $peers_n" >&2
	peers_note="(RLIMIT_NOFILE is $fds here: $(( fds - 256 )) peers, not $peers_n)"
	peers_n=$(( fds - 256 ))
fi
tmp=$(mktemp -d /tmp/bb-scale.XXXXXX)
mkdir -p "$tmp/bin"
B=${BUSBENCH:-}
if [ -z "$B" ]; then
	B=$tmp/bin/busbench
	cc -O2 -o "$B" "$BENCH_DIR/busbench.c" $(pkg-config --cflags --libs libsystemd)
fi
P=$tmp/bin/bench-peers
cc -O2 -o "$P" "$src/tools/bench-peers.c" $(pkg-config --cflags --libs libsystemd)
. "$BENCH_DIR/buses.sh"
ppid_=
stop_peers() {
	if [ -n "$ppid_" ]; then
		kill "$ppid_" 2> /dev/null || true
		wait "$ppid_" 2> /dev/null || true
		ppid_=
	fi
}
trap 'stop_peers; for b in "${buses[@]}"; do stop_bus "$b"; done; rm -rf "$tmp"' EXIT

start_peers() { # N [RULE]: idle peers on $ADDR, until stop_peers
	coproc PEERS_CO { exec "$P" "$ADDR" "$@"; }
	ppid_=$PEERS_CO_PID
	local line
	if ! read -r -t 600 line <&"${PEERS_CO[0]}" || [ "${line%% *}" != ready ]; then
		echo "bench-scale: peers did not come up" >&2
		return 1
	fi
}

ir() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }

# wait_idle PID: until the process used under 5 ms of CPU in half a second
# (at most a minute)
wait_idle() {
	local t0 t1 i
	for ((i = 0; i < 120; i++)); do
		t0=$(awk '{ print $1 }' "/proc/$1/schedstat" 2> /dev/null) || return 0
		sleep 0.5
		t1=$(awk '{ print $1 }' "/proc/$1/schedstat" 2> /dev/null) || return 0
		[ $((t1 - t0)) -lt 5000000 ] && return 0
	done
}

cg_case() { # BUS NPEERS RULE "short args" "long args" EXTRA_MSGS: Ir per extra message
	local b=$1 n=$2 rule=$3 short=$4 long=$5 msgs=$6 len f
	for len in short long; do
		f=$tmp/cg.$len
		WRAP="valgrind --tool=callgrind --callgrind-out-file=$f" "start_${b//-/_}"
		if [ "$n" -gt 0 ]; then
			if [ -n "$rule" ]; then start_peers "$n" "$rule"; else start_peers "$n"; fi
			# let the bus settle before the measured client: a connection
			# that comes and goes (busbridged gives memory back a second
			# after a client left, which consolidates what the peers'
			# set-up freed), then until the bus is idle (dbus-broker's
			# launcher hears of the peers' names); otherwise that one-off
			# work lands in the short or the long run by chance
			"$B" --address "$ADDR" churn -n 1 > /dev/null
			sleep 1.5
			wait_idle "$DPID"
		fi
		local a=$short
		[ $len = long ] && a=$long
		"$B" --address "$ADDR" $a > /dev/null
		stop_peers
		stop_bus "$b"
	done
	echo $(( ($(ir "$tmp/cg.long") - $(ir "$tmp/cg.short")) / msgs ))
}

hdr() { printf '| %s ' "$@"; echo '|'; printf '|'; printf -- '---|%.0s' "$@"; echo; }

echo "## Scale (tools/bench-scale.sh)"
echo
echo "### Ir per delivered signal, one matching subscriber among S (the others: member='OtherN')"
echo
hdr "subscribers S" "${buses[@]}"
for s in "${subs[@]}"; do
	vals=()
	for b in "${buses[@]}"; do
		vals+=($(cg_case "$b" $((s - 1)) "type='signal',interface='org.bench',member='Other%d'" \
			"signal -k 1 -n 1280" "signal -k 1 -n 3840" 2560))
	done
	printf '| %s |' "$s"; printf ' %s |' "${vals[@]}"; echo
	echo "scale signals S=$s: ${vals[*]}" >&2
done
echo
echo "### Ir per message (ping) with idle connected peers ${peers_note:-}"
echo
hdr "idle peers" "${buses[@]}"
for n in 0 "$peers_n"; do
	vals=()
	for b in "${buses[@]}"; do
		vals+=($(cg_case "$b" "$n" "" "ping -n 1000" "ping -n 3000" 4000))
	done
	printf '| %s |' "$n"; printf ' %s |' "${vals[@]}"; echo
	echo "scale ping peers=$n: ${vals[*]}" >&2
done
echo
echo "### Memory per idle connection ($peers_n peers, Hello done, no rules) ${peers_note:-}"
echo
hdr bus "RSS before (KiB)" "RSS with peers (KiB)" "bytes per connection"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
for b in "${buses[@]}"; do
	"start_${b//-/_}"
	"$B" --address "$ADDR" ping -n 200 > /dev/null
	before=$(rss "$DPID")
	start_peers "$peers_n"
	sleep 1
	after=$(rss "$DPID")
	stop_peers
	stop_bus "$b"
	echo "| $b | $before | $after | $(( (after - before) * 1024 / peers_n )) |"
	echo "scale rss $b: $before -> $after KiB" >&2
done
echo
