#!/bin/bash
# run-tests.sh: every test of busbridge, from a fresh Debian 12 machine.
#
#   sudo tools/run-tests.sh          (root installs missing packages)
#
# 1. installs missing Debian packages (tools/deps.sh test)
# 2. builds in build/ and runs `make check`: unit tests of every module and
#    the kdbus conformance suite
# 3. runs the integration tests (tests/integration/run.sh): real clients
#    (dbus-send, gdbus, busctl, dbus-monitor, dbus-python, sd-bus) against
#    busbridged on a private socket
# 4. runs dbus-daemon's own installed test suite against busbridged
#    (tests/dbus-tests.sh, the dbus-tests package); subtests that are known
#    to fail are listed with their reason in tests/dbus-tests.expected-failures
# 5. rebuilds with AddressSanitizer+UBSan (clang) in build-asan/ and runs
#    `make check` and the integration tests again
#
# The last line is "N passed, N failed, N skipped"; the exit status is 0
# only when nothing failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
jobs=${JOBS:-2}
export LC_ALL=C.UTF-8

tools/deps.sh test || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

pass=0 fail=0 skip=0
count() { # PASS FAIL SKIP [label]
	pass=$((pass + $1)); fail=$((fail + $2)); skip=$((skip + $3))
	echo "== ${4:-}: $1 passed, $2 failed, $3 skipped"
}

# automake's test-suite.log summary: "# PASS: n" etc.
count_make_check() { # BUILDDIR LABEL
	local log=$1/test-suite.log p f s
	if [ ! -f "$log" ]; then count 0 1 0 "$2 (no test-suite.log)"; return; fi
	p=$(awk '/^# PASS:/ {print $3}' "$log"); f=$(awk '/^# (FAIL|ERROR|XPASS):/ {s+=$3} END {print s+0}' "$log")
	s=$(awk '/^# (SKIP|XFAIL):/ {s+=$3} END {print s+0}' "$log")
	count "${p:-0}" "${f:-0}" "${s:-0}" "$2"
	[ "${f:-0}" = 0 ] || grep -E '^(FAIL|ERROR|XPASS):' "$log" | head -20
}

build() { # DIR CONFIGURE-ARGS...
	local dir=$1; shift
	mkdir -p "$dir"
	( cd "$dir" && { [ -f Makefile ] || "$top/configure" -q "$@"; } && make -s -j"$jobs" ) \
		> "$dir.build.log" 2>&1
}

[ -x configure ] || autoreconf -fi > /dev/null 2>&1 || { echo "autoreconf failed"; count 0 1 0 autoreconf; }

# --- normal build ------------------------------------------------------------
if build build; then
	( cd build && make -s -j"$jobs" check > ../build.check.log 2>&1 )
	count_make_check build "make check"
	out=$(tests/integration/run.sh "$top/build/daemon/busbridged" 2>&1 | tee build.integration.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" integration; else count 0 1 0 "integration ($out)"; fi
	[ "${2:-1}" = 0 ] || grep -E '^not ok' build.integration.log | head -20

	out=$(tests/dbus-tests-run.sh "$top/build/daemon/busbridged" 2>&1 | tee build.dbus-tests.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" dbus-tests; else count 0 1 0 "dbus-tests ($out)"; fi
	grep -E '^(UNEXPECTED|# dbus-tests)' build.dbus-tests.log | head -40
else
	tail -30 build.build.log
	count 0 1 0 "build"
fi

# --- AddressSanitizer + UBSan ---------------------------------------------------
if [ "${SKIP_ASAN:-0}" != 1 ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	if build build-asan CC=clang --enable-sanitizers; then
		( cd build-asan && make -s -j"$jobs" check > ../build-asan.check.log 2>&1 )
		count_make_check build-asan "make check (asan+ubsan)"
		out=$(tests/integration/run.sh "$top/build-asan/daemon/busbridged" 2>&1 | tee build-asan.integration.log | tail -n 1)
		set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
		if [ $# = 3 ]; then count "$1" "$2" "$3" "integration (asan+ubsan)"; else count 0 1 0 "integration asan ($out)"; fi
	else
		tail -30 build-asan.build.log
		count 0 1 0 "build (asan)"
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
