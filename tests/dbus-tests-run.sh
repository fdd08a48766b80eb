#!/bin/bash
# dbus-tests-run.sh DAEMON: dbus-daemon's own test suite (Debian package
# dbus-tests) against DAEMON, through tests/dbus-tests.sh (one unit per
# subtest).  Subtests listed in tests/dbus-tests.expected-failures (one
# "PROGRAM SUBTEST  # reason" per line) are known to fail for a stated
# reason: they are counted as skipped while they fail, and reported as
# UNEXPECTED PASS once they pass, so the list only ever shrinks.  Any other
# failure is a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:?usage: dbus-tests-run.sh DAEMON}
logdir=$(mktemp -d -t busbridge-dbus-tests.XXXXXX)
expected=$here/dbus-tests.expected-failures

DBUS_TESTS_LOGDIR=$logdir "$here/dbus-tests.sh" "$daemon" > "$logdir/summary.txt" 2>&1
cat "$logdir/summary.txt"
last=$(tail -n 1 "$logdir/summary.txt")
set -- $(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
[ $# = 3 ] || { echo "harness did not finish: $last"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
pass=$1 fail=$2 skip=$3

known=0 unexpected=0
declare -A is_expected=()
if [ -f "$expected" ]; then
	while read -r prog sub _; do
		[ -n "$prog" ] && [ "${prog#\#}" = "$prog" ] || continue
		[ "$sub" = "#" ] && sub=-
		is_expected["$prog $sub"]=1
	done < "$expected"
fi
declare -A failed=()
while read -r prog sub status rest; do
	key="$prog $sub"
	n=$(echo "$rest" | sed -n 's/^(\([0-9]*\).*/\1/p'); n=${n:-1}
	failed["$key"]=1
	if [ -n "${is_expected[$key]:-}" ]; then
		known=$((known + n))
	else
		unexpected=$((unexpected + n))
		echo "UNEXPECTED FAIL: $key ($rest)"
	fi
done < <(awk '{ if ($3 == "FAIL") print $1, $2, $3, $4; else print $1, "-", $2, $3 }' "$logdir/failures.txt")
for key in "${!is_expected[@]}"; do
	[ -n "${failed[$key]:-}" ] || { echo "UNEXPECTED PASS: $key (remove it from $expected)"; unexpected=$((unexpected + 1)); }
done
echo "# dbus-tests: harness $pass passed, $fail failed, $skip skipped; $known known failures (tests/dbus-tests.expected-failures), $unexpected unexpected; logs: $logdir"
echo "$pass passed, $unexpected failed, $((skip + known)) skipped"
[ "$unexpected" = 0 ]
