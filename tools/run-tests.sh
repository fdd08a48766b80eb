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
#    to fail are listed with their reason in tests/dbus-tests.expected-failures,
#    the test suites of GLib (GDBus), dbus-python and sd-bus against
#    busbridged and dbus-daemon (tests/external/run.sh),
#    and the activation stress test (tests/activation-stress/run.sh)
#    and, as root, the differential policy test (tests/policy-diff/run.sh,
#    dbus-daemon and busbridged with the same configurations, the system.d
#    files of `tools/deps.sh policy` among them)
#    the differential tester (tests/diff/run.sh: everything every connection
#    receives from dbus-daemon and busbridged, compared),
#    the adversarial test (tests/adversarial/adversarial.py) and a subset
#    of the integration tests with busbridged under valgrind memcheck,
#    and the release tarball (tools/check-dist.sh: make distcheck, every
#    tracked file in it)
# 5. builds the kernel module (kmod/) against the installed Debian kernel
#    headers and runs the conformance suite on it in a qemu VM
#    (tests/vm/run.sh, tools/deps.sh vm; skipped where it cannot run),
#    (its second stage ends with the AppArmor comparison,
#    tests/vm/apparmor: dbus-daemon and busbridged under the same
#    profiles; no boot of its own, VM_APPARMOR=1 runs it alone by hand),
#    then boots it again with security=selinux for the SELinux comparison
#    (VM_SELINUX=1 tests/vm/run.sh: dbus-daemon and busbridged under the
#    same policy, tests/vm/selinux)
# 6. rebuilds with AddressSanitizer+UBSan (clang) in build-asan/ and runs
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
# the integration tests run under valgrind (ONLY= regex of tests/integration/run.sh)
valgrind_tests='test-(dbus-send|gdbus|python|limits|quota|tcp|busctl|sdbus|dbus-monitor|run-session)'
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

	# the test suites of other D-Bus projects (GLib's GDBus tests,
	# dbus-python's, sd-bus's test-bus-*), each against busbridged and
	# dbus-daemon: the same tests must pass (about 1 min)
	out=$(tests/external/run.sh "$top/build/daemon/busbridged" 2>&1 | tee build.external.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" "external suites"; else count 0 1 0 "external suites ($out)"; fi
	[ "${2:-1}" = 0 ] || grep -E '^(not ok|# )' build.external.log | head -30

	# activation under load: a service that exits on idle / crashes every
	# few dozen calls, beside dbus-daemon's figures (about 5 s, at most 2 min)
	out=$(tests/activation-stress/run.sh "$top/build/daemon/busbridged" "$top/build" 2>&1 |
		tee build.activation-stress.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" activation-stress; else count 0 1 0 "activation-stress ($out)"; fi
	grep -E '^(not ok|# )' build.activation-stress.log | head -12

	# hostile clients against a running busbridged (tests/adversarial, about
	# 40 s): malformed messages, SASL garbage, floods, spoofing, EMFILE,
	# injected ENOMEM, while a control client must be answered within 1 s
	out=$(tests/adversarial/adversarial.py "$top/build/daemon/busbridged" 2>&1 |
		tee build.adversarial.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" adversarial; else count 0 1 0 "adversarial ($out)"; fi
	grep -E '^(not ok|# )' build.adversarial.log | head -20

	# the integration tests with busbridged under valgrind memcheck (a
	# representative subset, about 2 min): no errors, no definite leaks
	if [ "${SKIP_VALGRIND:-0}" != 1 ] && command -v valgrind > /dev/null; then
		vgdir=$top/build/valgrind
		rm -rf "$vgdir"; mkdir -p "$vgdir"
		cat > build/daemon/busbridged-valgrind <<-EOF
		#!/bin/sh
		exec valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \\
			--log-file=$vgdir/vg.%p.log "$top/build/daemon/busbridged" "\$@"
		EOF
		chmod +x build/daemon/busbridged-valgrind
		# (one test at a time: valgrind's slowdown leaves no room for others)
		out=$(ONLY="${VALGRIND_TESTS:-$valgrind_tests}" INTEGRATION_JOBS=1 tests/integration/run.sh \
			"$top/build/daemon/busbridged-valgrind" 2>&1 | tee build.valgrind.log | tail -n 1)
		set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
		if [ $# = 3 ]; then count "$1" "$2" "$3" "integration (valgrind)"; else count 0 1 0 "integration valgrind ($out)"; fi
		[ "${2:-1}" = 0 ] || grep -E '^not ok' build.valgrind.log | head -20
		# with -q, valgrind writes only errors and leaks: every non-empty log is one
		n_logs=$(ls "$vgdir" | wc -l)
		bad=$(find "$vgdir" -name 'vg.*.log' -size +0 | wc -l)
		if [ "$n_logs" -gt 0 ] && [ "$bad" = 0 ]; then
			count 1 0 0 "valgrind: $n_logs daemons, no errors, no definite leaks"
		else
			count 0 1 0 "valgrind: $bad of $n_logs daemons had errors or definite leaks"
			find "$vgdir" -name 'vg.*.log' -size +0 | head -3 | xargs -r head -n 40
		fi
	fi

	# differential policy test against dbus-daemon (root only: test users;
	# skipped otherwise): the system.d files of tools/deps.sh policy
	[ "$(id -u)" != 0 ] || tests/policy-diff/setup-packages.sh > build.policy-diff.log 2>&1
	out=$(tests/policy-diff/run.sh "$top/build/daemon/busbridged" --quiet 2>&1 | tee -a build.policy-diff.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" policy-diff; else count 0 1 0 "policy-diff ($out)"; fi
	[ "${2:-1}" = 0 ] || grep -E '^(not ok|# )' build.policy-diff.log | head -20

	# the differential tester (tests/diff, root only): dbus-daemon and
	# busbridged on the same configurations (the whole system bus of this
	# machine, each system.d file alone, session buses, synthetic ones) with
	# the same raw clients, everything every connection receives compared,
	# plus a seeded random run of half a minute on the integration tests'
	# bus and one on the system bus (each script runs on both daemons side
	# by side: about 4 min)
	out=$(tests/diff/run.sh "$top/build/daemon/busbridged" --random "${BUSDIFF_RANDOM:-30}" \
		--seed "${BUSDIFF_SEED:-1}" 2>&1 | tee build.diff.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" busdiff; else count 0 1 0 "busdiff ($out)"; fi
	grep -E '^# [0-9]+ exchanges|^# exchanges' build.diff.log
	[ "${2:-1}" = 0 ] || grep -E '^(not ok|# )' build.diff.log | head -40
	# ... and its random mode on the whole system bus of this machine
	if [ -f /usr/share/dbus-1/system.conf ]; then
		out=$(tests/diff/run.sh "$top/build/daemon/busbridged" --no-scripted --random "${BUSDIFF_RANDOM:-30}" \
			--seed "${BUSDIFF_SEED:-1}" --random-config /usr/share/dbus-1/system.conf 2>&1 |
			tee build.diff-system.log | tail -n 1)
		set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
		if [ $# = 3 ]; then count "$1" "$2" "$3" "busdiff random (system bus)"; else count 0 1 0 "busdiff random system ($out)"; fi
		grep -E '^# [0-9]+ exchanges' build.diff-system.log
		[ "${2:-1}" = 0 ] || grep -E '^(not ok|# )' build.diff-system.log | head -40
	fi

	# the release tarball (about 1 min): make distcheck, and every tracked
	# file shipped
	out=$(tools/check-dist.sh "$top/build" 2>&1 | tee build.dist.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" dist; else count 0 1 0 "dist ($out)"; fi
	[ "${2:-1}" = 0 ] || grep -E '^(not ok|# )' build.dist.log | head -20
else
	tail -30 build.build.log
	count 0 1 0 "build"
fi

# --- the kernel module in a VM ------------------------------------------------------
# tests/vm/run.sh (about 14 min under TCG): kmod/ built against
# linux-headers-amd64, the matching kernel booted in qemu, the original
# selftests and the conformance suite on the ioctl backend twice and after
# rmmod/insmod, a minute of concurrent senders, receivers, names and
# connections, a minute of the ioctl fuzzer (tests/kfuzz, a new seed each
# run, printed in its TAP line), then busbridged --kdbus in the host's
# root: integration tests (native peers too), dbus-daemon's suite, the
# activation stress test, half a minute of native and classic peers under load
# and busdiff against dbus-daemon in the guest, then the AppArmor
# comparison (tests/vm/apparmor: dbus-daemon and busbridged side by side
# under the tree's profiles, in this boot: no step of its own); any
# oops, WARN, hang or fuzzer violation fails.  Where it cannot run (exit 77) it counts as skipped.
if [ "${SKIP_VM:-0}" != 1 ]; then
	out=$(tests/vm/run.sh 2>&1 | tee build-vm.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" "kernel module (VM)"; else count 0 1 0 "kernel module VM ($out)"; fi
	grep -E '^(not ok|# kernel|# SKIP)' build-vm.log | head -20
	# the SELinux boot (about 4 min): security=selinux, the tree's own
	# policy (tests/vm/selinux/policy.conf) enforced, dbus-daemon and
	# busbridged (classic and --kdbus) side by side in bus_t, their
	# clients in their own domains, each outcome compared with dbus-daemon's
	out=$(VM_SELINUX=1 tests/vm/run.sh 2>&1 | tee build-vm-selinux.log | tail -n 1)
	set -- $(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# = 3 ]; then count "$1" "$2" "$3" "SELinux (VM)"; else count 0 1 0 "SELinux VM ($out)"; fi
	grep -E '^(not ok|# kernel|# SKIP)' build-vm-selinux.log | head -20
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
