#!/bin/bash
# tests/vm/guest-stage2.sh STAGE1-STATUS TREE WORK [ONLY [SCRIPT [MODE]]]: the second stage of the
# VM test (tests/vm/run.sh), run as PID 1 of the guest on the host's root
# (read-only over 9p, an overlay on tmpfs above it), so that real programs
# run on kdbus.ko: the daemon, its clients, python.  TREE is the source
# tree, WORK the VM step's work directory (the module built there).  Prints
# TAP ("ok - ..." / "not ok - ...") between the first stage's lines and
# the KDBUS-VM-END and KDBUS-VM-RESULT lines, validates every slab cache
# and powers the guest off.  MODE "selinux" (the SELinux boot,
# VM_SELINUX=1 tests/vm/run.sh: the kernel runs with security=selinux)
# runs the SELinux comparison (tests/vm/selinux/guest.sh) instead of the
# suite and the tests of busbridged --kdbus, then ends the same way; MODE
# "apparmor" (VM_APPARMOR=1) the AppArmor comparison
# (tests/vm/apparmor/guest.sh) alone, which the default mode runs too,
# after the tests of busbridged --kdbus.
status=${1:-1}
tree=${2:?tree}
work=${3:?work}
only=${4:-.}		# the integration tests to run (a regex, ONLY= of tests/integration/run.sh)
script=${5:-}		# a host script to run first (VM_SCRIPT, by hand)
mode=${6:-}		# "selinux", "apparmor": that comparison only
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8 HOME=/root TMPDIR=/tmp

. "$tree/tests/vm/guest-lib.sh"
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; status=1; }
check() { # DESCRIPTION COMMAND...: one TAP line
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# report LABEL LOG RC [COMMENTS [PASSING]]: a test program's outcome in
# this stage's TAP: its "ok N - ..." lines as "ok - kdbus LABEL: ...", the
# comment lines COMMENTS (a sed program; default: its "# " lines, at most
# 40) and its last line with the exit status; an exit status other than
# those in PASSING (default: 0) fails the stage
report() {
	local label=$1 log=$2 rc=$3 comments=${4:-'/^# /p'} passing=${5:-0}
	sed -n "s/^ *\(not ok\|ok\) [0-9]* *-* */\1 - kdbus $label: /p" "$log"
	sed -n "$comments" "$log" | head -n 40
	echo "# stage 2: $label: $(tail -n 1 "$log") (exit $rc, uptime $(uptime_s) s)"
	[[ " $passing " == *" $rc "* ]] || status=1
}

# /tmp stays the host's (the tree may be under it), writable in the overlay
mount -t tmpfs tmpfs /run
# bash's process substitution and the tests' /dev/std* (devtmpfs has none)
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0 1 2; do [ -e /dev/std$(echo in out err | cut -d' ' -f$((i + 1))) ] ||
	ln -s /proc/self/fd/$i /dev/std$(echo in out err | cut -d' ' -f$((i + 1))); done
mkdir -p /run/user/0 && chmod 700 /run/user/0
check "stage 2: the module loads from the host's tree" insmod "$work/src/kmod/kdbus.ko"
check "stage 2: kdbusfs mounted" mount -t kdbusfs kdbusfs /sys/fs/kdbus

# dbus-daemon and busbridged (classic and --kdbus) side by side under the
# tree's AppArmor profiles (in a mount namespace of its own: the D-Bus
# mediation it makes the kernel advertise stays there): every line of
# busbridged's that differs fails
apparmor_comparison() {
	echo "# stage 2: AppArmor comparison (uptime $(uptime_s) s)"
	timeout -k 10 600 bash "$tree/tests/vm/apparmor/guest.sh" "$tree" 2>&1
	rc=$?
	echo "# stage 2: AppArmor comparison done (exit $rc, uptime $(uptime_s) s)"
	[ $rc = 0 ] || status=1
}

if [ "$mode" = apparmor ]; then
	[ -z "$script" ] || { echo "# stage 2: $script"; bash "$script" 2>&1 | sed 's/^/# script: /'; }
	apparmor_comparison
	# the rest of the stage as below, from the busbridged processes left
	# behind to the power-off
elif [ "$mode" = selinux ]; then
	[ -z "$script" ] || { echo "# stage 2: $script"; bash "$script" 2>&1 | sed 's/^/# script: /'; }
	# dbus-daemon and busbridged (classic and --kdbus) side by side under
	# SELinux enforcing: every line of busbridged's that differs fails
	echo "# stage 2: SELinux comparison (uptime $(uptime_s) s)"
	timeout -k 10 1200 bash "$tree/tests/vm/selinux/guest.sh" "$tree" 2>&1
	rc=$?
	echo "# stage 2: SELinux comparison done (exit $rc, uptime $(uptime_s) s)"
	[ $rc = 0 ] || status=1
	# the rest of the stage as below, from the busbridged processes left
	# behind to the power-off
else
# the conformance suite once more, from the host's root this time
echo "# stage 2: suite (uptime $(uptime_s) s)"
KDBUS_TEST_BACKEND=ioctl KDBUS_TEST_SKIP="$tree/kmod/unsupported-tests" deadline 600 "$work/test-kdbus" > /tmp/suite.tap 2>&1
rc=$?
sed 's/^ok \([0-9]*\) - /ok - stage 2 suite: /; s/^not ok \([0-9]*\) - /not ok - stage 2 suite: /' /tmp/suite.tap
[ $rc = 0 ] || { echo "# stage 2: suite exited $rc"; status=1; }
echo "# stage 2: suite done (uptime $(uptime_s) s)"

if [ -n "$script" ]; then
	echo "# stage 2: $script"
	bash "$script" 2>&1 | sed 's/^/# script: /'
fi

# dbus-daemon's installed test suite (../shared/tools/dbus-tests) against
# busbridged on the kernel bus.  manual-test-thread-blocking is left out:
# its 1000 round trips on four threads do not fit its own timeout under
# TCG, on dbus-daemon in this guest as on busbridged
dbus_tests_kdbus() {
	local harness=$tree/../shared/tools/dbus-tests/dbus-tests.sh rc
	if [ ! -x "$harness" ] || [ ! -d /usr/lib/dbus-1.0/installed-tests/dbus ]; then
		echo "# stage 2: dbus-tests not run (no $harness or no dbus-tests package)"
		return
	fi
	echo "# stage 2: dbus-daemon's test suite, busbridged --kdbus"
	DBUS_TESTS_ONLY='^(test-|integration/|debug/|extra/)' DBUS_TESTS_LOGDIR=/tmp/dbus-tests DBUS_TESTS_JOBS=2 \
		DBUS_TESTS_TIMEOUT=120 timeout -k 10 900 "$harness" /tmp/busbridged-kdbus > /tmp/dbus-tests.log 2>&1
	rc=$?
	grep -v 'Aborted' /tmp/dbus-tests.log | sed -n 's/^\([^ ]*\) *\(PASS\|SKIP\) *\(.*\)/ok - kdbus dbus-tests: \1 \3/p;
		s/^\([^ ]*\) *FAIL *\(.*\)/not ok - kdbus dbus-tests: \1 \2/p'
	echo "# stage 2: dbus-tests: $(tail -n 1 /tmp/dbus-tests.log) (exit $rc, uptime $(uptime_s) s)"
	if [ $rc != 0 ]; then
		status=1
		grep -h -v '^ok' /tmp/dbus-tests/failures.txt 2> /dev/null | head -n 20 | sed 's/^/# /'
	fi
}

# the activation stress test (tests/activation-stress) on the kernel bus:
# activators hold the service's name while it exits on idle or dies, every
# call is answered once; the same against dbus-daemon in this guest for
# the crash phase's comparison.  Fewer calls than on the host: TCG
activation_stress_kdbus() {
	echo "# stage 2: activation stress, busbridged --kdbus"
	STRESS_CLIENTS=4 STRESS_CALLS=150 STRESS_SECONDS=90 STRESS_ROUNDS=1 STRESS_TOLERANCE=${STRESS_TOLERANCE:-25} \
		timeout -k 10 600 "$tree/tests/activation-stress/run.sh" /tmp/busbridged-kdbus "$tree/build" \
		> /tmp/activation-stress.log 2>&1
	report "activation stress" /tmp/activation-stress.log $?
}

# native kdbus peers and classic clients calling and signalling each other
# for half a minute (tests/native-stress)
native_stress() {
	echo "# stage 2: native and classic peers under load"
	STRESS_SECONDS=30 timeout -k 10 600 "$tree/tests/native-stress/run.sh" "$daemon" "$tree/build" \
		> /tmp/native-stress.log 2>&1
	report "native stress" /tmp/native-stress.log $?
}

# busdiff (tests/diff) against dbus-daemon in this guest: everything every
# connection receives, compared; unique names by who holds them
# (--mapped-names: the kernel numbers connections, and the bus's own
# helper connections take numbers too).  The session and system bus
# scenarios and the regressions, the system bus's as root only (its
# grid-user and peer-user repeat them as another user), the session bus's
# without those the system bus has (grid-root, peer-root) and late-dirs
# (the service directories, no kernel in it), each script on both daemons
# side by side: about 3 min under TCG.  All of CI mode (about 20 min one
# daemon after the other) runs by hand with VM_SCRIPT
busdiff_only='^(test-session (?!(grid|peer)-root|late-dirs)|system-bus (?!(grid|peer)-user))'
busdiff_kdbus() {
	echo "# stage 2: busdiff, busbridged --kdbus against dbus-daemon"
	BUSDIFF_TIMEOUT=1200 "$tree/tests/diff/run.sh" /tmp/busbridged-kdbus --mapped-names \
		--also-known "$tree/tests/diff/known-differences-kdbus" --only "$busdiff_only" > /tmp/busdiff.log 2>&1
	report busdiff /tmp/busdiff.log $? '/^not ok/,+12{/^#/p}' '0 77'
}

# busbridged on the kernel bus (built in the tree's build/ by
# tools/run-tests.sh): the real-client integration tests against it
daemon=$tree/build/daemon/busbridged
if [ -x "$daemon" ]; then
	# (its stderr stays the test's: the harness shows it on failure, and a
	# process that tees it would hold the pipes dbus-launch reads to EOF)
	printf '#!/bin/sh\nexec %s --kdbus "$@"\n' "$daemon" > /tmp/busbridged-kdbus
	chmod 755 /tmp/busbridged-kdbus
	echo "# stage 2: integration tests, busbridged --kdbus"
	# (one at a time: under TCG the tests' timings leave no room for others)
	BUILDDIR=$tree/build ONLY=$only INTEGRATION_JOBS=1 timeout -k 10 900 "$tree/tests/integration/run.sh" /tmp/busbridged-kdbus \
		> /tmp/integration.log 2>&1
	report integration /tmp/integration.log $? '/^# test-/s/^/# /p; s/^not ok - /# # /p'
	dbus_tests_kdbus
	activation_stress_kdbus
	native_stress
	busdiff_kdbus
	apparmor_comparison
else
	echo "# stage 2: no $daemon (build the tree first): busbridged --kdbus not run"
fi
fi	# (mode)

# a daemon a failed test left behind holds its bus: it goes first
if pkill -x busbridged; then echo "# stage 2: busbridged processes were left behind"; sleep 1; fi
check "stage 2: umount kdbusfs" umount /sys/fs/kdbus
check "stage 2: rmmod" rmmod kdbus

echo "# slab validation"
for v in /sys/kernel/slab/*/validate; do echo 1 > "$v" 2> /dev/null; done
echo "# slab validation done"
echo "KDBUS-VM-END"
echo "KDBUS-VM-RESULT: status=$status uptime=$(cut -d' ' -f1 /proc/uptime) taint=$(cat /proc/sys/kernel/tainted)"
sync
echo o > /proc/sysrq-trigger
# init waits for the power-off without starting a program: the power-off
# takes the host's root away, and an exec that fails there ends init
# ("Attempted to kill init", a panic) before the machine is off
while :; do read -r -t 5 _ < /dev/console || :; done
