#!/bin/busybox sh
# /init of the VM test's initramfs (tests/vm/run.sh): loads kdbus.ko, mounts
# kdbusfs, runs the conformance suite on the ioctl backend twice, the
# concurrency stress test (kernel_stress, /kdbus/stress-seconds long) and
# the ioctl fuzzer (kfuzz, /kdbus/fuzz.conf: its TAP line carries the seed
# and the figures; with FUZZ_ONLY=1 nothing else runs), checks that umount and rmmod are refused while an fd is open (and that a
# lazy umount completes when it closes), unloads and reloads the module,
# runs the suite once more, and powers off.  Output goes to the
# serial console; the host reads the TAP between KDBUS-VM-BEGIN and
# KDBUS-VM-END and the final KDBUS-VM-RESULT line.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
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
suite() { # RUN
	echo "# run $1"
	KDBUS_TEST_BACKEND=ioctl KDBUS_TEST_SKIP=/kdbus/unsupported-tests /kdbus/test-kdbus 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "# suite run $1 exited $rc"; status=1; }
}
fuzz() { # kfuzz as configured in /kdbus/fuzz.conf, one TAP line
	FUZZ_SECONDS=0 FUZZ_SEED=0 FUZZ_ARGS= FUZZ_ONLY=0
	. /kdbus/fuzz.conf
	[ "$FUZZ_SECONDS" != 0 ] || return 0
	logopt=
	[ -c /dev/ttyS1 ] && logopt="--log /dev/ttyS1"
	echo "# kfuzz --seed $FUZZ_SEED --seconds $FUZZ_SECONDS $FUZZ_ARGS"
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
else
	load
	suite 1
	suite 2
	echo "# stress"
	KDBUS_TEST_BACKEND=ioctl KDBUS_STRESS_SECONDS=$(cat /kdbus/stress-seconds) /kdbus/test-kdbus kernel_stress 2>&1 || status=1
	fuzz
	teardown
	unload
	load
	suite 3
	unload
fi
echo "KDBUS-VM-END"
grep -c . /proc/modules > /dev/null
echo "KDBUS-VM-RESULT: status=$status uptime=$(cut -d' ' -f1 /proc/uptime) taint=$(cat /proc/sys/kernel/tainted)"
poweroff -f
