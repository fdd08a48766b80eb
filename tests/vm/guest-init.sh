#!/bin/busybox sh
# /init of the VM test's initramfs (tests/vm/run.sh): loads kdbus.ko, mounts
# kdbusfs, runs the conformance suite on the ioctl backend twice, the
# original kdbus selftests, the concurrency stress test (kernel_stress,
# /kdbus/stress-seconds long) and the ioctl fuzzer (kfuzz, /kdbus/fuzz.conf:
# its TAP line carries the seed and the figures; with FUZZ_ONLY=1 nothing
# else runs), checks that umount and rmmod are refused while an fd is open
# (and that a lazy umount completes when it closes), unloads and reloads
# the module, runs the suite and the selftests once more, and then either
# switches to the second stage
# (the host's root over 9p: tests/vm/guest-stage2.sh, which ends the run)
# or validates every slab cache and powers off.  Output goes to the
# serial console; the host reads the TAP between KDBUS-VM-BEGIN and
# KDBUS-VM-END and the final KDBUS-VM-RESULT line.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# user namespaces for everyone, as on most distributions (the attacks of
# tests/kdbus/test-security.c come from one)
echo 1 > /proc/sys/kernel/unprivileged_userns_clone 2> /dev/null
. /kdbus/guest-lib.sh
status=0
step() { # DESCRIPTION COMMAND...
	d=$1; shift
	if ! "$@"; then echo "# guest step failed: $d"; status=1; fi
}
load() {
	step "insmod" insmod /kdbus/kdbus.ko &&
	step "/sys/fs/kdbus exists" test -d /sys/fs/kdbus &&
	step "mount kdbusfs" mount -t kdbusfs kdbusfs /sys/fs/kdbus &&
	step "control exists" test -e /sys/fs/kdbus/control
}
unload() {
	step "umount kdbusfs" umount /sys/fs/kdbus
	step "rmmod" rmmod kdbus
	step "/sys/fs/kdbus gone" test ! -e /sys/fs/kdbus
}
refused() { # COMMAND...: it must fail
	! "$@" 2> /dev/null
}
teardown() { # umount and rmmod while an fd is open: refused, or lazy
	exec 3<> /sys/fs/kdbus/control
	step "umount refused while a control fd is open" refused umount /sys/fs/kdbus
	step "rmmod refused while kdbusfs is mounted" refused rmmod kdbus
	step "lazy umount with an open fd" umount -l /sys/fs/kdbus
	step "rmmod refused while an fd is open" refused rmmod kdbus
	exec 3>&-
	step "mount again once the fd is closed" mount -t kdbusfs kdbusfs /sys/fs/kdbus
	echo "# teardown done"
}
suite() { # RUN (a run takes about 15 s under TCG)
	echo "# run $1 (uptime $(uptime_s) s)"
	KDBUS_TEST_BACKEND=ioctl KDBUS_TEST_SKIP=/kdbus/unsupported-tests \
		deadline 600 /kdbus/test-kdbus $(cat /kdbus/tests-filter) 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "# suite run $1 exited $rc"; status=1; }
}
selftests() { # RUN: the original kdbus selftests, as root, in TAP; the
	# failures listed in /kdbus/unsupported-selftests ("<name> <reason>")
	# are reported as skipped while they fail, and as failures once they
	# pass (the list only shrinks)
	[ -x /kdbus/kdbus-selftest ] || return 0
	echo "# selftests run $1 (uptime $(uptime_s) s)"
	deadline 600 /kdbus/kdbus-selftest --tap > /tmp/selftests.tap 2>&1
	[ $? != 124 ] || status=1	# (its failures are judged line by line)
	while read -r line; do
		case "$line" in
		"ok "*|"not ok "*)
			name=${line##*(}; name=${name%)}
			reason=$(grep -E "^$name " /kdbus/unsupported-selftests | cut -d' ' -f2-)
			case "$line" in
			"not ok "*)
				if [ -n "$reason" ]; then
					echo "ok - selftest $name # SKIP known: $reason"
				else
					echo "not ok - selftest $name"; status=1
				fi ;;
			*"# SKIP"*) echo "ok - selftest $name # SKIP" ;;
			*)
				if [ -n "$reason" ]; then
					echo "not ok - selftest $name passes: remove it from kmod/unsupported-selftests"; status=1
				else
					echo "ok - selftest $name"
				fi ;;
			esac ;;
		*) echo "# $line" ;;
		esac
	done < /tmp/selftests.tap
	# a failed test may leave children waiting for it: they would keep
	# the bus (and the module) busy
	killall -9 kdbus-selftest 2> /dev/null
	sleep 1
}
fuzz() { # kfuzz as configured in /kdbus/fuzz.conf, one TAP line
	FUZZ_SECONDS=0 FUZZ_SEED=0 FUZZ_ARGS= FUZZ_ONLY=0
	. /kdbus/fuzz.conf
	[ "$FUZZ_SECONDS" != 0 ] || return 0
	logopt=
	[ -c /dev/ttyS1 ] && logopt="--log /dev/ttyS1"
	echo "# kfuzz --seed $FUZZ_SEED --seconds $FUZZ_SECONDS $FUZZ_ARGS (uptime $(uptime_s) s)"
	{ /kdbus/kfuzz --seed "$FUZZ_SEED" --seconds "$FUZZ_SECONDS" $logopt $FUZZ_ARGS 2>&1; echo $? > /tmp/kfuzz.rc; } |
		tee /tmp/kfuzz.out
	rc=$(cat /tmp/kfuzz.rc)
	last=$(grep '^kfuzz: ' /tmp/kfuzz.out | tail -1)
	case $rc in
	0) echo "ok - ${last:-kfuzz: no result line}" ;;
	77) echo "ok - kfuzz # SKIP $(grep SKIP /tmp/kfuzz.out | head -1)" ;;
	*) echo "not ok - ${last:-kfuzz: no result line} (exit $rc)"; status=1 ;;
	esac
}
echo "KDBUS-VM-BEGIN $(cut -d' ' -f1 /proc/uptime)"
. /kdbus/fuzz.conf
if [ "$FUZZ_ONLY" = 1 ]; then
	load
	fuzz
	unload
elif [ -f /kdbus/quick ]; then
	echo "# quick run: the first stage's tests are not run"
else
	load
	suite 1
	selftests 1
	suite 2
	echo "# stress (uptime $(uptime_s) s)"
	KDBUS_TEST_BACKEND=ioctl KDBUS_STRESS_SECONDS=$(cat /kdbus/stress-seconds) \
		deadline $(($(cat /kdbus/stress-seconds) + 300)) /kdbus/test-kdbus kernel_stress 2>&1 || status=1
	fuzz
	teardown
	unload
	load
	suite 3
	selftests 2
	unload
fi

# the second stage: the host's root, read-only over 9p, with an overlay on
# tmpfs for what the guest writes; tests/vm/guest-stage2.sh of the tree
# runs there with the first stage's status and ends the run (in the
# SELinux boot, mode "selinux": the SELinux comparison only; in the
# AppArmor boot, mode "apparmor": the AppArmor comparison only)
if [ -f /kdbus/stage2 ]; then
	tree=$(sed -n 1p /kdbus/stage2) work=$(sed -n 2p /kdbus/stage2) only=$(sed -n 3p /kdbus/stage2)
	script=$(sed -n 4p /kdbus/stage2) mode=$(sed -n 5p /kdbus/stage2)
	for m in $(cat /kdbus/mods/order); do step "insmod $m" insmod /kdbus/mods/$m.ko; done
	mkdir -p /host /rw /newroot
	if step "mount the host's root" mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose \
		hostroot /host &&
	   step "tmpfs for the overlay" mount -t tmpfs -o size=1500m tmpfs /rw &&
	   mkdir -p /rw/upper /rw/work &&
	   step "overlay on the host's root" mount -t overlay overlay \
		-o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot &&
	   [ -x "/newroot$tree/tests/vm/guest-stage2.sh" ]; then
		echo "# second stage: $tree (uptime $(uptime_s) s)"
		mount --move /proc /newroot/proc
		mount --move /sys /newroot/sys
		mount --move /dev /newroot/dev
		exec switch_root /newroot /bin/bash "$tree/tests/vm/guest-stage2.sh" "$status" "$tree" "$work" "$only" "$script" "$mode"
	fi
	echo "# guest step failed: second stage"
	status=1
fi
# every slab cache checked after the run: slub_debug=FZPU,kmalloc* reports any kmalloc
# object (all of kdbus.ko's) whose redzone or poison was overwritten ("BUG <cache> ...")
echo "# slab validation"
for v in /sys/kernel/slab/*/validate; do echo 1 > "$v" 2> /dev/null; done
echo "# slab validation done"
echo "KDBUS-VM-END"
grep -c . /proc/modules > /dev/null
echo "KDBUS-VM-RESULT: status=$status uptime=$(cut -d' ' -f1 /proc/uptime) taint=$(cat /proc/sys/kernel/tainted)"
poweroff -f
