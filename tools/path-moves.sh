#!/bin/bash
# path-moves.sh BUSBRIDGED...: how often the path of a message crosses from
# one source module to another (a module: a .c file and its .h, e.g.
# daemon/out-ring), per method call with its reply (busbench ping) and per
# signal to three subscribers (busbench signal -k 3), counted by callgrind
# from the calls between functions.  Inlining hides calls: give a daemon
# built with `configure --disable-lto CFLAGS='-O0 -g -fno-inline'`.  Each
# case runs short and long, and the difference is divided by the extra
# messages, as ../shared/bench/callgrind.sh does.  A call of a header's
# inline function is no move: its code is the caller's.  Prints, per daemon and
# case, the moves between all of busbridge's modules (daemon/, compat/,
# kdbus/, policy/, util/) and between daemon/'s alone, with
# PATH_MOVES_LIST=1 the pairs of modules and how often.
set -u
bench=${BENCH:-$(cd "$(dirname "$0")/../.." && pwd)/shared/bench}
[ -x "$bench/busbench" ] || make -s -C "$bench" busbench || exit 1
B=$bench/busbench
. "$bench/buses.sh"
tmp=$(mktemp -d /tmp/path-moves.XXXXXX)
trap 'stop_bus busbridge; rm -rf "$tmp"' EXIT

# name | short-run args | long-run args | extra messages
cases=(
	"method call|ping -n 500|ping -n 1500|1000"
	"signal to 3|signal -k 3 -n 500|signal -k 3 -n 1500|1000"
)

moves() { # CALLGRIND_OUT: "all daemon" and the pairs, as counts
	python3 - "$1" <<'EOF'
import re
import sys

files, fns = {}, {}
cur_fl = cur_fn = None
callee_fl = None
pairs = {}


def name(table, m):
    # "(id) name" the first time, "(id)" after (--compress-strings)
    k, rest = re.match(r'\((\d+)\)\s*(.*)', m).groups() if m.startswith('(') else (m, m)
    if rest:
        table[k] = rest
    return table.get(k, k)


def module(path):
    m = re.search(r'/(daemon|compat|kdbus|policy|util)/([^/]+)\.[ch]$', path or '')
    return m and '%s/%s' % (m.group(1), m.group(2))


pending = None
for line in open(sys.argv[1], errors='replace'):
    if line.startswith('fl=') or line.startswith('fi=') or line.startswith('fe='):
        f = name(files, line[3:].strip())
        if line.startswith('fl='):
            cur_fl = f
        cur_here = f
    elif line.startswith('fn='):
        name(fns, line[3:].strip())
        cur_here = cur_fl
    elif line.startswith('cfi=') or line.startswith('cfl='):
        callee_fl = name(files, line[4:].strip())
    elif line.startswith('cfn='):
        name(fns, line[4:].strip())
    elif line.startswith('calls='):
        n = int(line.split('=')[1].split()[0])
        callee = callee_fl or cur_here
        a, b = module(cur_here), module(callee)
        # a header's inline function is compiled into its caller
        if a and b and a != b and not callee.endswith('.h') and not cur_here.endswith('.h'):
            pairs[(a, b)] = pairs.get((a, b), 0) + n
        callee_fl = None
total = sum(pairs.values())
daemon = sum(n for (a, b), n in pairs.items() if a.startswith('daemon/') and b.startswith('daemon/'))
print(total, daemon)
for (a, b), n in sorted(pairs.items(), key=lambda x: -x[1]):
    print('%d %s %s' % (n, a, b))
EOF
}

for d in "$@"; do
	for c in "${cases[@]}"; do
		IFS='|' read -r name short long extra <<< "$c"
		for len in short long; do
			BUSBRIDGED=$d WRAP="valgrind --tool=callgrind --callgrind-out-file=$tmp/cg.$len" start_busbridge
			"$bench/busbench" --address "$ADDR" ${!len} > /dev/null
			stop_bus busbridge
			moves "$tmp/cg.$len" > "$tmp/m.$len"
		done
		read -r ls lds < "$tmp/m.short"
		read -r ll ldl < "$tmp/m.long"
		printf '%s | %s | %d | %d\n' "$d" "$name" $(( (ll - ls) / extra )) $(( (ldl - lds) / extra ))
		if [ -n "${PATH_MOVES_LIST:-}" ]; then
			join -j 1 <(tail -n +2 "$tmp/m.short" | awk '{print $2">"$3, $1}' | sort) \
				<(tail -n +2 "$tmp/m.long" | awk '{print $2">"$3, $1}' | sort) |
				awk -v e="$extra" '{ d = ($3 - $2) / e; if (d >= 0.5) printf "    %.1f %s\n", d, $1 }' | sort -rn
		fi
	done
done
