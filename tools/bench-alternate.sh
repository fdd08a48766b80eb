#!/bin/bash
# bench-alternate.sh [ARGS...]: dbus-broker and busbridge side by side for a
# few busbench scenarios, both buses started once, their runs alternating
# (the order swapped every round); medians over ROUNDS (default 7) and the
# ratio busbridge / dbus-broker.  A quicker and steadier look at the
# throughput figures on a noisy machine than a whole run-peers.sh.
#
#   ROUNDS=7 tools/bench-alternate.sh "pipe -w 64 -n 100000" "payload -s 1048576 -n 300"
#
# Without ARGS: ping, pipe, churn, signal K=50 and the 64 KiB and 1 MiB
# payloads at run-peers.sh's sizes.  BUSBRIDGED, BENCH_DIR as for bench.sh;
# TASKSET=0 pins everything to CPU 0 (run-peers.sh's 1cpu mode).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$src/../shared/bench}
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
export BUSBRIDGED=${BUSBRIDGED:-$PWD/daemon/busbridged}
BUSBRIDGED=$(readlink -f "$BUSBRIDGED")
[ -x "$BUSBRIDGED" ] || { echo "bench-alternate: no daemon at $BUSBRIDGED" >&2; exit 1; }
rounds=${ROUNDS:-7}
[ $# -gt 0 ] || set -- "ping -n 10000" "pipe -w 64 -n 100000" "churn -n 3000" "signal -k 50 -n 2000" \
	"payload -s 65536 -n 3000" "payload -s 1048576 -n 300"
tmp=$(mktemp -d /tmp/bb-alt.XXXXXX)
B=$tmp/busbench
cc -O2 -o "$B" "$BENCH_DIR/busbench.c" $(pkg-config --cflags --libs libsystemd)
. "$BENCH_DIR/buses.sh"
buses=(dbus-broker busbridge)
trap 'for b in "${buses[@]}"; do stop_bus "$b"; done; rm -rf "$tmp"' EXIT
declare -A addr pid
for b in "${buses[@]}"; do
	"start_${b//-/_}"
	addr[$b]=$ADDR pid[$b]=$DPID
done
run() { # BUS ARGS...
	if [ -n "${TASKSET:-}" ]; then
		taskset -pc "$TASKSET" "${pid[$1]}" > /dev/null
		taskset -c "$TASKSET" "$B" --address "${addr[$1]}" "${@:2}"
	else
		"$B" --address "${addr[$1]}" "${@:2}"
	fi
}
for a in "$@"; do
	for ((r = 0; r < rounds; r++)); do
		order=("${buses[@]}")
		((r % 2)) && order=(busbridge dbus-broker)
		for b in "${order[@]}"; do
			run "$b" $a | sed "s/ bus=[^ ]*/ bus=$b/" >> "$tmp/results"
		done
	done
done
python3 - "$tmp/results" << 'PY'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith('RESULT'):
        continue
    kv = dict(f.split('=', 1) for f in line.split()[1:])
    for k in ('ops_per_s', 'delivered_per_s', 'MiB_per_s', 'p50_us'):
        if k in kv and not (k == 'ops_per_s' and kv['scenario'].startswith(('signal', 'payload'))):
            v[(kv['scenario'], k, kv['bus'])].append(float(kv[k]))
print('| scenario | metric | dbus-broker | busbridge | busbridge vs dbus-broker (>1 better) |')
print('|---|---|---|---|---|')
for (sc, k, b) in sorted(v):
    if b != 'busbridge' or (sc, k, 'dbus-broker') not in v:
        continue
    o, m = statistics.median(v[(sc, k, 'dbus-broker')]), statistics.median(v[(sc, k, b)])
    better = o / m if k == 'p50_us' else m / o
    print('| %s | %s | %.1f | %.1f | %.2fx |' % (sc, k, o, m, better))
PY
