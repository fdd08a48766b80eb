#!/bin/bash
# bench.sh [PARTS...]: benchmark busbridge beside dbus-daemon and dbus-broker
# with the shared benchmark client (../shared/bench: busbench, buses.sh,
# run-peers.sh) and write markdown tables with the ratios to a results file.
#
# PARTS (default: callgrind syscalls throughput scale):
#   callgrind   daemon user-space instructions per message (valgrind
#               --tool=callgrind; (Ir_long - Ir_short) / extra messages, so
#               start-up and shutdown cancel out): the repeatable figure
#   syscalls    syscalls per routed message (perf stat raw_syscalls, or
#               strace -c -f when perf cannot count)
#   throughput  run-peers.sh: throughput and latency, interleaved
#   scale       tools/bench-scale.sh: 1..1000 subscribers, 10,000 idle
#               peers, RSS per idle connection
#
# Environment:
#   BUSBRIDGED=PATH  the daemon (default: ./daemon/busbridged of the build dir)
#   BENCH_DIR=DIR    the shared benchmark (default: <srcdir>/../shared/bench)
#   BENCH_OUT=FILE   results (default: ./bench-results.md)
#   BUSES="..."      buses to compare (default: dbus-daemon dbus-broker busbridge)
#   ROUNDS=N SCALE=F MODES="2cpu 1cpu"   passed to run-peers.sh (default 1, 0.5)
#   SCALE_BUSES="..." buses for the scale part (default: BUSES but dbus-daemon)
#   CASES="ping pipe ..." only these callgrind cases
#
# `make bench` runs this from the build directory.  Throughput figures need
# a quiet machine; the instruction counts do not.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$src/../shared/bench}
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
export BUSBRIDGED=${BUSBRIDGED:-$PWD/daemon/busbridged}
BUSBRIDGED=$(readlink -f "$BUSBRIDGED")
out=${BENCH_OUT:-$PWD/bench-results.md}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(callgrind syscalls throughput scale)
buses=(${BUSES:-dbus-daemon dbus-broker busbridge})
[ -x "$BUSBRIDGED" ] || { echo "bench.sh: no daemon at $BUSBRIDGED (build first or set BUSBRIDGED)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/bb-bench.XXXXXX)
mkdir -p "$tmp/bin"
B=$tmp/bin/busbench
cc -O2 -o "$B" "$BENCH_DIR/busbench.c" $(pkg-config --cflags --libs libsystemd)
export BUSBENCH=$B
. "$BENCH_DIR/buses.sh"
trap 'for b in "${buses[@]}"; do stop_bus "$b"; done; rm -rf "$tmp"' EXIT

# drop buses that cannot run here (dbus-broker needs its launcher)
avail=()
for b in "${buses[@]}"; do
	case $b in
	dbus-daemon) command -v dbus-daemon > /dev/null || { echo "bench.sh: no dbus-daemon, skipped" >&2; continue; } ;;
	dbus-broker) command -v dbus-broker-launch > /dev/null ||
			{ echo "bench.sh: no dbus-broker (apt-get install dbus-broker), skipped" >&2; continue; } ;;
	esac
	avail+=("$b")
done
buses=("${avail[@]}")

ratio_hdr() { # the ratio columns: busbridge against each other bus
	local b
	for b in "${buses[@]}"; do [ "$b" = busbridge ] || printf ' busbridge / %s |' "$b"; done
}
ratio_cols() { # VALUES... (in bus order): busbridge's value over each other bus's
	local -a v=("$@") i bb=
	for i in "${!buses[@]}"; do [ "${buses[$i]}" = busbridge ] && bb=${v[$i]}; done
	for i in "${!buses[@]}"; do
		[ "${buses[$i]}" = busbridge ] && continue
		if [ -n "$bb" ] && [ "${v[$i]}" != - ] && [ "$bb" != - ]; then
			awk -v a="$bb" -v b="${v[$i]}" 'BEGIN { printf " %.2f |", b ? a / b : 0 }'
		else printf ' - |'; fi
	done
}

{
	echo "# busbridge benchmark results"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs; busbridge: $BUSBRIDGED" \
		"($(cd "$src" && git describe --always --dirty 2> /dev/null || echo unknown));" \
		"$(dbus-daemon --version 2> /dev/null | head -1);" \
		"dbus-broker $(dpkg-query -W -f='${Version}' dbus-broker 2> /dev/null || echo '?')"
	echo
} > "$out"

ir() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }

# name | short-run args | long-run args | extra ops | messages per op
cg_cases=(
	"ping|ping -n 1000|ping -n 3000|2000|2"
	"pipe|pipe -n 2000|pipe -n 6000|4000|2"
	"signal-k1|signal -k 1 -n 1280|signal -k 1 -n 3840|2560|1"
	"signal-k10|signal -k 10 -n 640|signal -k 10 -n 1920|1280|10"
	"signal-k50|signal -k 50 -n 256|signal -k 50 -n 768|512|50"
	"churn|churn -n 100|churn -n 300|200|1"
	"payload-64k|payload -s 65536 -n 100|payload -s 65536 -n 300|200|2"
)

part_callgrind() {
	local c name short long ops per b len f v
	{
		echo "## Daemon user-space instructions per message (callgrind)"
		echo
		echo "Ir per message routed (a call and its reply count one each; signals: per delivery; churn: per connection)."
		echo
		printf '| scenario |'; printf ' %s |' "${buses[@]}"; ratio_hdr; echo
		printf '|---|'; printf -- '---|%.0s' "${buses[@]}"; printf -- '---|%.0s' $(seq $((${#buses[@]} - 1))); echo
	} >> "$out"
	for c in "${cg_cases[@]}"; do
		[ -n "${CASES:-}" ] && [[ " $CASES " != *" ${c%%|*} "* ]] && continue
		IFS='|' read -r name short long ops per <<< "$c"
		local -a vals=()
		for b in "${buses[@]}"; do
			for len in short long; do
				f=$tmp/cg.$b.$name.$len
				WRAP="valgrind --tool=callgrind --callgrind-out-file=$f" "start_${b//-/_}"
				"$B" --address "$ADDR" ${!len} > /dev/null
				stop_bus "$b"
			done
			vals+=($(( ($(ir "$tmp/cg.$b.$name.long") - $(ir "$tmp/cg.$b.$name.short")) / (ops * per) )))
			[ "$b" = busbridge ] && [ -n "${CG_KEEP:-}" ] && cp "$f" "$CG_KEEP.$name"
		done
		{ printf '| %s |' "$name"; printf ' %s |' "${vals[@]}"; ratio_cols "${vals[@]}"; echo; } >> "$out"
		echo "callgrind $name: ${vals[*]}" >&2
	done
	echo >> "$out"
}

# busbench args | messages routed by the timed phase and warm-up (as profile.sh)
sc_cases=("ping|ping -n 10000|20400" "pipe|pipe -n 100000|200002" "signal-k1|signal -k 1 -n 20000|19968"
	"signal-k10|signal -k 10 -n 10000|99840" "signal-k50|signal -k 50 -n 2000|99200" "churn|churn -n 2000|2000"
	"payload-64k|payload -s 65536 -n 2000|4010" "payload-1m|payload -s 1048576 -n 300|610")

count_syscalls() { # PID ARGS...: syscalls the process makes while busbench ARGS runs
	local pid=$1
	shift
	if perf stat -x, -e raw_syscalls:sys_enter true > /dev/null 2>&1; then
		perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$tmp/stat" 2> /dev/null &
		local st=$!
		sleep 0.5
		"$B" --address "$ADDR" "$@" > /dev/null
		sleep 0.2
		kill -INT $st && wait $st || true
		awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$tmp/stat"
	else
		strace -c -f -o "$tmp/strace" -p "$pid" 2> /dev/null &
		local st=$!
		sleep 0.5
		"$B" --address "$ADDR" "$@" > /dev/null
		sleep 0.2
		kill -INT $st && wait $st || true
		awk '$NF == "total" { print $4 }' "$tmp/strace"	# % seconds usecs/call calls
	fi
}

part_syscalls() {
	local c name args msgs b n
	{
		echo "## Syscalls per routed message (daemon, whole run incl. warm-up)"
		echo
		printf '| scenario |'; printf ' %s |' "${buses[@]}"; ratio_hdr; echo
		printf '|---|'; printf -- '---|%.0s' "${buses[@]}"; printf -- '---|%.0s' $(seq $((${#buses[@]} - 1))); echo
	} >> "$out"
	for c in "${sc_cases[@]}"; do
		IFS='|' read -r name args msgs <<< "$c"
		local -a vals=()
		for b in "${buses[@]}"; do
			"start_${b//-/_}"
			n=$(count_syscalls "$DPID" $args)
			stop_bus "$b"
			vals+=($(awk -v n="${n:-0}" -v m="$msgs" 'BEGIN { printf "%.2f", n / m }'))
		done
		{ printf '| %s |' "$name"; printf ' %s |' "${vals[@]}"; ratio_cols "${vals[@]}"; echo; } >> "$out"
		echo "syscalls $name: ${vals[*]}" >&2
	done
	echo >> "$out"
}

part_throughput() {
	local res=$tmp/results.txt
	SCALE=${SCALE:-0.5} BUSES="${buses[*]}" OUT=$res "$BENCH_DIR/run-peers.sh" "${ROUNDS:-1}" > "$tmp/table.md"
	{
		echo "## Throughput and latency (run-peers.sh ${ROUNDS:-1}, SCALE=${SCALE:-0.5}, one interleaved run)"
		echo
		echo "\"vs <first bus>\" is how many times better than the first bus; \"of limit\" the fraction of the two-hop socketpair limit."
		echo
		cat "$tmp/table.md"
		echo
		echo "### busbridge against dbus-broker (throughput ratio, >1 = busbridge better)"
		echo
		python3 - "$res" << 'EOF'
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith("RESULT"):
        continue
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    for k in ("ops_per_s", "delivered_per_s", "MiB_per_s", "p50_us"):
        if k in kv and not (k == "ops_per_s" and kv["scenario"].startswith(("signal", "payload"))):
            v[(kv["scenario"], kv["bus"], k)].append(float(kv[k]))
print("| scenario | mode | metric | dbus-broker | busbridge | ratio |")
print("|---|---|---|---|---|---|")
for (s, bus, k) in sorted(v):
    if not bus.startswith("busbridge/"):
        continue
    mode = bus.split("/")[1]
    ref = v.get((s, "dbus-broker/" + mode, k))
    if not ref:
        continue
    a, b = statistics.median(v[(s, bus, k)]), statistics.median(ref)
    r = b / a if k == "p50_us" else a / b
    print(f"| {s} | {mode} | {k} | {b:.1f} | {a:.1f} | {r:.2f}x |")
EOF
		echo
	} >> "$out"
}

part_scale() {
	# dbus-daemon takes many minutes for 10,000 peers under callgrind:
	# only with SCALE_BUSES
	local b sb=()
	for b in "${buses[@]}"; do [ "$b" = dbus-daemon ] || sb+=("$b"); done
	BUSES="${SCALE_BUSES:-${sb[*]}}" "$src/tools/bench-scale.sh" >> "$out"
}

for p in "${parts[@]}"; do
	case $p in
	callgrind | syscalls | throughput | scale) "part_$p" ;;
	*) echo "bench.sh: unknown part $p" >&2; exit 2 ;;
	esac
done
echo "bench.sh: results in $out" >&2
