#!/bin/bash
# tests/vm/selinux/guest.sh TREE [DAEMON-COMMAND...]: the SELinux
# comparison, as root in a guest booted with security=selinux (the VM
# test's SELinux boot, VM_SELINUX=1 tests/vm/run.sh, runs it in its second
# stage; it can run by hand in any such machine with the tree's
# build/, checkpolicy and python3-dbus).
#
# It compiles tests/vm/selinux/policy.conf (and its reload variant) with
# checkpolicy, loads it and enforces it.  Then for each daemon command
# (by default dbus-daemon twice, TREE/build/daemon/busbridged and, where
# /sys/fs/kdbus exists, busbridged --kdbus) it starts the daemon with runcon
# in bus_t on its own socket with tests/vm/selinux/bus.conf, runs
# tests/vm/selinux/scenario.py against it (clients in client_a_t,
# client_b_t, client_c_t and service_t; a policy reload, permissive mode
# and enforcing again), stops it, adds its stderr, and compares its lines
# with the first dbus-daemon's: TAP, "ok - selinux <daemon>: <line>" or
# "not ok - selinux <daemon>: got X, dbus-daemon Y" (the second dbus-daemon
# run shows that the lines do not change from run to run); a daemon that
# does not start is one "not ok" with its stderr.  Last line: "# selinux:
# N passed, N failed"; exit status 1 when anything differs.
set -u
tree=${1:?usage: guest.sh TREE [DAEMON-COMMAND...]}
shift
here=$tree/tests/vm/selinux
w=/tmp/selinux
status=0
passed=0 failed=0
notok() { echo "not ok - selinux $*"; failed=$((failed + 1)); status=1; }
finish() { echo "# selinux: $passed passed, $failed failed"; exit $status; }
mkdir -p $w

if [ $# = 0 ]; then
	set -- /usr/bin/dbus-daemon /usr/bin/dbus-daemon "$tree/build/daemon/busbridged"
	[ -d /sys/fs/kdbus ] && set -- "$@" "$tree/build/daemon/busbridged --kdbus"
fi

[ -d /sys/fs/selinux ] || { notok "SELinux is not active (no /sys/fs/selinux: boot with security=selinux)"; finish; }
grep -q ' /sys/fs/selinux ' /proc/mounts || mount -t selinuxfs selinuxfs /sys/fs/selinux
if ! { checkpolicy -U allow -c 33 -o $w/policy.33 "$here/policy.conf" &&
	sed 's/^#RELOAD //' "$here/policy.conf" > $w/reload.conf &&
	checkpolicy -U allow -c 33 -o $w/reload.33 $w/reload.conf; } > $w/checkpolicy.log 2>&1; then
	notok "checkpolicy: $(tr '\n' ' ' < $w/checkpolicy.log | cut -c1-500)"
	finish
fi
# every audit record must reach the kernel's log (there is no auditd)
echo 0 > /proc/sys/kernel/printk_ratelimit
if ! cat $w/policy.33 > /sys/fs/selinux/load; then
	notok "the policy does not load"
	finish
fi
echo 1 > /sys/fs/selinux/enforce
echo "# selinux: policy loaded, enforcing=$(cat /sys/fs/selinux/enforce); $(dbus-daemon --version | head -n 1)"

# run N COMMAND: the scenario against COMMAND, its lines in $w/N.lines
# (returns 1 when the daemon does not start: its stderr is in $w/N.err)
run() {
	local n=$1 cmd=$2 sock=$w/bus$1.sock pid i
	rm -f "$sock" $w/$n.*
	sed "s|@SOCKET@|$sock|" "$here/bus.conf" > $w/$n.conf
	# each run starts from the same state: the policy, enforcing
	cat $w/policy.33 > /sys/fs/selinux/load
	echo 1 > /sys/fs/selinux/enforce
	runcon system_u:system_r:bus_t $cmd --config-file=$w/$n.conf --nofork --print-address=1 \
		> $w/$n.addr 2> $w/$n.err &
	pid=$!
	for i in $(seq 60); do
		[ -S "$sock" ] && [ -s $w/$n.addr ] && break
		kill -0 $pid 2> /dev/null || break
		sleep 0.5
	done
	if ! [ -S "$sock" ] || ! kill -0 $pid 2> /dev/null; then
		kill $pid 2> /dev/null
		wait $pid
		echo "(exit status $?)" >> $w/$n.err
		return 1
	fi
	timeout -k 5 600 python3 "$here/scenario.py" "unix:path=$sock" --policy $w > $w/$n.lines 2> $w/$n.scenario.err
	i=$?
	[ $i = 0 ] || { echo "scenario: exit status $i"; sed 's/^/scenario: /' $w/$n.scenario.err; } >> $w/$n.lines
	kill $pid
	wait $pid
	python3 "$here/scenario.py" --normalize < $w/$n.err | sed 's/^/stderr: /' >> $w/$n.lines
	return 0
}

n=0
for cmd in "$@"; do
	n=$((n + 1))
	label=$(basename "${cmd%% *}")${cmd#"${cmd%% *}"}
	[ $n = 2 ] && [ "$cmd" = "$1" ] && label="$label (second run)"
	echo "# selinux: $label (uptime $(cut -d' ' -f1 /proc/uptime) s)"
	if ! run $n "$cmd"; then
		notok "$label: does not start: $(tr '\n' ' ' < $w/$n.err | cut -c1-1000)"
		[ $n = 1 ] && finish
		continue
	fi
	[ $n = 1 ] && continue
	python3 "$here/scenario.py" --compare $w/1.lines $w/$n.lines "$label" > $w/$n.tap
	cat $w/$n.tap
	passed=$((passed + $(grep -c '^ok ' $w/$n.tap)))
	failed=$((failed + $(grep -c '^not ok ' $w/$n.tap)))
	grep -q '^not ok ' $w/$n.tap && status=1
done
cat $w/policy.33 > /sys/fs/selinux/load
finish
