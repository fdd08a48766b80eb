#!/bin/bash
# tests/vm/run.sh: the kdbus kernel module (kmod/) in a virtual machine.
#
#   tests/vm/run.sh            (root installs what is missing: tools/deps.sh vm)
#
# 1. derives KVER from the installed linux-headers-amd64 and builds kmod/
#    with exactly `make -C /usr/src/linux-headers-$KVER M=<dir> modules` in a
#    clean copy of the module's sources
# 2. builds the conformance suite (tests/kdbus) statically
# 3. fetches the matching Debian kernel (apt-get download linux-image-$KVER,
#    unpacked with dpkg-deb, never installed; cached in $VM_WORK)
# 4. builds an initramfs (busybox-static, the module, the suite,
#    tests/vm/guest-init.sh as /init) and boots it in qemu (TCG unless
#    VM_ACCEL=kvm) with panic_on_warn=1 oops=panic slub_debug=FZPU,kmalloc*
# 5. the guest loads the module, mounts kdbusfs on /sys/fs/kdbus and runs
#    the suite on the ioctl backend twice, the original kdbus selftests
#    (../shared/tools/kdbus-selftests) twice, the concurrency stress test
#    (VM_STRESS_SECONDS, 60 s: senders, receivers, names changing hands,
#    connections closing mid-send on both vCPUs), the ioctl fuzzer
#    (tests/kfuzz, VM_FUZZ_SECONDS), checks that umount and rmmod are
#    refused while an fd is open (a lazy umount completes once it closes),
#    then runs the suite and the selftests again after umount, rmmod and
#    insmod
# 6. second stage (VM_STAGE2=0 skips it): the guest mounts the host's root
#    read-only over 9p (an overlay on tmpfs above it), switches to it and
#    runs tests/vm/guest-stage2.sh there: real programs (the daemon, its
#    clients, python) on the module: the integration tests that pass with
#    busbridged --kdbus, dbus-daemon's installed test suite against it
#    (../shared/tools/dbus-tests), the activation stress test, half a minute
#    of native peers and classic clients under load (tests/native-stress)
#    and busdiff's CI scenarios against dbus-daemon in the same guest,
#    the AppArmor comparison (below), then validates every slab cache.
#    The TAP of both stages comes back over the serial console
#
# VM_SELINUX=1: the SELinux boot instead.  The kernel boots with
# security=selinux, the first stage runs no test (as with VM_QUICK=1; no
# fuzzing), and the second stage loads the module and runs only the SELinux
# comparison (tests/vm/selinux/guest.sh): a policy of the tree's own
# (tests/vm/selinux/policy.conf) compiled with checkpolicy and enforced,
# then dbus-daemon (twice), busbridged and busbridged --kdbus, each in
# bus_t with clients in their own domains (runcon), one line per outcome
# (names, calls, replies, signals, eavesdropping, monitors, the driver's
# security contexts, a policy reload, permissive mode, the audit records),
# every daemon's lines compared with dbus-daemon's.  Its console log is
# console-selinux.log (tools/run-tests.sh runs this boot after the other).
#
# The AppArmor comparison (tests/vm/apparmor/guest.sh): the second stage
# of the normal boot runs it near its end (the guest's kernel runs AppArmor,
# its default security module), in a mount namespace of its own: the tree's
# profiles (tests/vm/apparmor/profiles) loaded with apparmor_parser, then
# dbus-daemon (twice), busbridged and busbridged --kdbus, each under the
# profile bus_daemon, with clients under their own profiles (aa-exec),
# complaining and unconfined ones, one line per outcome (Hello, names,
# driver calls, calls refused by the sender's or the receiver's profile,
# requested and unrequested replies, signals, eavesdropping, monitors,
# the labels the driver reports, activation with AssumedAppArmorLabel, a
# profile reload, the audit records), every daemon's lines compared with
# dbus-daemon's.  Its TAP lines count in that boot's totals.
# VM_APPARMOR=1: a quick boot for it alone (security=apparmor, no test of
# the first stage's, no fuzzing; the second stage runs only the AppArmor
# comparison); its console log is console-apparmor.log.
# VM_KERNEL_ARGS="..." is appended to the kernel's command line.
#
# VM_TESTS=<substring> runs only the suite's tests whose name contains it,
# VM_INTEGRATION=<regex> only the matching integration tests of the second
# stage, VM_QUICK=1 none of the first stage's, VM_SCRIPT=<host path> runs
# that script in the second stage before its tests (by hand, while
# working on one test).
#
# The fuzz phase (doc/fuzzing.md, "The kernel module's fuzzer"):
#   VM_FUZZ_SECONDS  how long kfuzz runs (60; 0 leaves it out)
#   VM_FUZZ_SEED     its seed (default: a new one; printed either way)
#   VM_FUZZ_ARGS     more options for kfuzz (e.g. "--procs 6 --avoid make-attach")
#   VM_FUZZ_ONLY=1   only load the module, fuzz and unload (no suite, no
#                    stress, no second stage)
# kfuzz writes every command to the guest's second serial port, which
# lands in $VM_WORK/kfuzz-commands.log; after a splat its last lines are
# printed with the worker and command numbers to replay.
#
# A panic, oops, BUG, WARN, a timeout (VM_TIMEOUT, 1200 s and the fuzzing) or a missing result
# line is a failure.  The last line is "N passed, N failed, N skipped"; exit
# status 0 when nothing failed, 1 on failure, 77 when the test cannot run
# here (packages not installable as non-root, no kernel image to download).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${VM_WORK:-$top/build-vm}
accel=${VM_ACCEL:-tcg}
stress_s=${VM_STRESS_SECONDS:-60}
selinux=${VM_SELINUX:-0}
apparmor=${VM_APPARMOR:-0}
[ "$selinux" = 0 ] || apparmor=0
fuzz_s=${VM_FUZZ_SECONDS:-60}
[ "$selinux" = 0 ] && [ "$apparmor" = 0 ] || fuzz_s=0
fuzz_seed=${VM_FUZZ_SEED:-0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')}
fuzz_args=${VM_FUZZ_ARGS:-}
fuzz_only=${VM_FUZZ_ONLY:-0}
timeout_s=${VM_TIMEOUT:-$((1200 + fuzz_s))}
stage2=${VM_STAGE2:-1}
[ "$fuzz_only" = 0 ] || stage2=0
quick=${VM_QUICK:-}
# (the SELinux and AppArmor boots' files beside the others:
# console-selinux.log, console-apparmor.log, ...)
tag= mode= boot_name=
kargs=${VM_KERNEL_ARGS:-}
if [ "$selinux" != 0 ]; then
	stage2=1 quick=1 tag=-selinux mode=selinux boot_name="SELinux boot" kargs="security=selinux $kargs"
	timeout_s=${VM_TIMEOUT:-900}
elif [ "$apparmor" != 0 ]; then
	stage2=1 quick=1 tag=-apparmor mode=apparmor boot_name="AppArmor boot" kargs="security=apparmor $kargs"
	timeout_s=${VM_TIMEOUT:-900}
fi
# the integration tests of tests/integration that pass with busbridged on
# kdbus.ko so far (ONLY= regex); the second stage runs them.  The list grows
# as the daemon's kernel backend does; VM_INTEGRATION=. runs them all
kdbus_integration='^test-(dbus-send|kdbus-option|limits|names-limit|call-overflow|burst|native|unrequested-replies|unroutable|dbus-monitor)\.'
integration=${VM_INTEGRATION:-$kdbus_integration}
export LC_ALL=C.UTF-8

skip() { echo "# SKIP $*"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
fail() { echo "not ok - $*"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

"$top/tools/deps.sh" vm >&2 || skip "packages for the VM test are missing (tools/deps.sh vm as root)"
kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p')
kdir=/usr/src/linux-headers-$kver
[ -n "$kver" ] && [ -f "$kdir/Makefile" ] || skip "no kernel headers for linux-headers-amd64 ($kver)"
mkdir -p "$work" || fail "cannot create $work"

# --- the kernel image matching the headers (same ABI number) ----------------------
# and the modules the guest's second stage needs to mount the host's root:
# virtio, 9p, overlayfs, in the order they load
vmlinuz=$work/image-$kver/boot/vmlinuz-$kver
guest_mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio
  netfs fscache 9p overlay"
modsdir=$work/image-$kver/mods
if [ ! -f "$vmlinuz" ] || [ ! -f "$modsdir/overlay.ko" ]; then
	rm -rf "$work/dl" "$modsdir" && mkdir -p "$work/dl" "$work/image-$kver" "$modsdir"
	( cd "$work/dl" && apt-get download -q "linux-image-$kver" ) > "$work/download.log" 2>&1 ||
		skip "apt-get download linux-image-$kver failed (see $work/download.log)"
	# only what is needed: the image and a few modules, not the 400 MB of them
	dpkg-deb --fsys-tarfile "$work"/dl/linux-image-"$kver"_*.deb |
		tar -x -C "$work/dl" "./boot/vmlinuz-$kver" --wildcards "./lib/modules/$kver/kernel/*.ko" ||
		fail "cannot unpack linux-image-$kver"
	mkdir -p "$work/image-$kver/boot" && mv "$work/dl/boot/vmlinuz-$kver" "$vmlinuz" || fail "no vmlinuz"
	for m in $guest_mods; do
		f=$(find "$work/dl/lib/modules" -name "$m.ko" | head -1)
		[ -n "$f" ] && cp "$f" "$modsdir/" || fail "no $m.ko in linux-image-$kver"
	done
	rm -rf "$work/dl"
fi

# --- the module, built in a clean copy of its sources -------------------------
rm -rf "$work/src" && mkdir -p "$work/src/kdbus" || fail "cannot copy sources"
cp -r "$top/kmod" "$work/src/kmod" && cp -r "$top/kshared" "$work/src/kshared" &&
	cp "$top/kdbus/kdbus.h" "$work/src/kdbus/" || fail "cannot copy sources"
if ! make -C "$kdir" M="$work/src/kmod" modules > "$work/kmod.build.log" 2>&1; then
	tail -30 "$work/kmod.build.log"
	fail "module build against $kver"
fi
grep -E 'warning:' "$work/kmod.build.log" | head -20 >&2

# --- the conformance suite, static -------------------------------------------------
if ! gcc -std=gnu11 -D_GNU_SOURCE -O1 -g0 -static -Wall -Werror=implicit-function-declaration \
	-I"$top" -o "$work/test-kdbus" "$top"/tests/kdbus/*.c "$top"/kdbus/*.c "$top"/kshared/*.c > "$work/suite.build.log" 2>&1; then
	tail -30 "$work/suite.build.log"
	fail "static build of the conformance suite"
fi

# --- the original kdbus selftests (../shared/tools/kdbus-selftests), static -------
# (not part of the tree: where they are absent, the guest runs without them)
selftests=$top/../shared/tools/kdbus-selftests/build.sh
have_selftests=
if [ -n "$mode" ]; then
	:	# (the SELinux and AppArmor boots run none of the first stage's tests)
elif [ -x "$selftests" ]; then
	# build.sh fixes one upstream bug in test-activator.c (return flags of
	# NAME_ACQUIRE handed back as input flags, which the final kdbus
	# refuses with EINVAL); test-message.c's activator quota test has the
	# same bug ("Acquire the name again"): the flags are reset the same way
	rm -rf "$work/selftests-src" && cp -a "$(dirname "$selftests")" "$work/selftests-src" &&
	sed -i 's/^\(\s*\)ret = kdbus_name_acquire(conn, "foo.test.activator", &flags);/\1flags = KDBUS_NAME_REPLACE_EXISTING;\n&/' \
		"$work/selftests-src/src/tools/testing/selftests/kdbus/test-message.c" || fail "copy of the selftests"
	if "$work/selftests-src/build.sh" "$work/selftests" > "$work/selftests.build.log" 2>&1; then
		have_selftests=1
	else
		tail -20 "$work/selftests.build.log"
		fail "build of the original kdbus selftests"
	fi
else
	echo "# the original kdbus selftests are not beside the tree ($selftests): not run"
fi

# --- the ioctl fuzzer, static -------------------------------------------------------
# (a seed replays the same commands with the same kfuzz: its version is printed with the seed)
kfuzz_version=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
if ! gcc -std=gnu11 -D_GNU_SOURCE -O1 -g0 -static -Wall -Werror=implicit-function-declaration -pthread \
	-DKFUZZ_VERSION="\"$kfuzz_version\"" -I"$top" -o "$work/kfuzz" "$top"/tests/kfuzz/*.c > "$work/kfuzz.build.log" 2>&1; then
	tail -30 "$work/kfuzz.build.log"
	fail "static build of the ioctl fuzzer"
fi

# --- initramfs ---------------------------------------------------------------------
root=$work/initramfs$tag
rm -rf "$root" && mkdir -p "$root"/{bin,dev,proc,sys,tmp,kdbus} || fail "initramfs"
cp /bin/busybox "$root/bin/busybox" &&
	cp "$top/tests/vm/guest-init.sh" "$root/init" && chmod 755 "$root/init" &&
	cp "$top/tests/vm/guest-lib.sh" "$root/kdbus/" &&
	cp "$work"/src/kmod/*.ko "$root/kdbus/" && cp "$work/test-kdbus" "$root/kdbus/" &&
	cp "$top/kmod/unsupported-tests" "$top/kmod/unsupported-selftests" "$root/kdbus/" &&
	cp "$work/kfuzz" "$root/kdbus/" &&
	mkdir -p "$root/kdbus/mods" && cp "$modsdir"/*.ko "$root/kdbus/mods/" &&
	echo $guest_mods > "$root/kdbus/mods/order" &&
	{ [ -z "$quick" ] || : > "$root/kdbus/quick"; } &&
	{ [ "$stage2" = 0 ] || printf '%s\n%s\n%s\n%s\n%s\n' "$top" "$work" "$integration" "${VM_SCRIPT:-}" \
		"$mode" > "$root/kdbus/stage2"; } &&
	{ [ -z "$have_selftests" ] || cp "$work/selftests/kdbus-test" "$root/kdbus/kdbus-selftest"; } &&
	echo "$stress_s" > "$root/kdbus/stress-seconds" &&
	echo "${VM_TESTS:-}" > "$root/kdbus/tests-filter" &&
	printf 'FUZZ_SECONDS=%s\nFUZZ_SEED=%s\nFUZZ_ARGS="%s"\nFUZZ_ONLY=%s\n' \
		"$fuzz_s" "$fuzz_seed" "$fuzz_args" "$fuzz_only" > "$root/kdbus/fuzz.conf" || fail "initramfs"
( cd "$root" && find . | cpio -o -H newc --quiet ) > "$work/initramfs$tag.cpio" || fail "cpio"

# --- boot ----------------------------------------------------------------------------
log=$work/console$tag.log
cmdlog=$work/kfuzz-commands$tag.log
rm -f "$log" "$cmdlog"
[ "$fuzz_s" != 0 ] && echo "# kfuzz in the guest: seed $fuzz_seed, $fuzz_s s${fuzz_args:+, $fuzz_args}"
# slub debugging (red zones, poison, the owner of every object) on the
# kmalloc caches, where every object of kdbus.ko lives; on every cache it
# would weigh on each fork, exec and file of the second stage's programs
cmdline="console=ttyS0 loglevel=5 panic=-1 panic_on_warn=1 oops=panic slub_debug=FZPU,kmalloc*
  init_on_free=1 page_poison=1 softlockup_panic=1 hung_task_panic=1 hung_task_timeout_secs=60
  rdinit=/init $kargs"
start=$(date +%s.%N)
# the host's root, read-only, for the second stage (an overlay on tmpfs
# makes it writable in the guest; nothing goes back to the host)
hostroot=
[ "$stage2" = 0 ] || hostroot="-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel "$accel" -smp 2 -m 2048 -display none -monitor none \
	-no-reboot -serial "file:$log" -serial "file:$cmdlog" -kernel "$vmlinuz" -initrd "$work/initramfs$tag.cpio" $hostroot \
	-append "$(echo $cmdline)" < /dev/null > "$work/qemu$tag.log" 2>&1
qrc=$?
end=$(date +%s.%N)
elapsed=$(echo "$start $end" | awk '{printf "%.1f", $2 - $1}')
[ -f "$log" ] || fail "qemu wrote no console log (exit $qrc): $(head -c 500 "$work/qemu$tag.log")"
tr -d '\r' < "$log" > "$log.txt"

# TAP of the guest: lines between the markers
sed -n '/^KDBUS-VM-BEGIN/,/^KDBUS-VM-END/p' "$log.txt" | grep -vE '^KDBUS-VM-(BEGIN|END)'
pass=$(grep -cE '^ok ' "$log.txt" | head -1)
skipped=$(grep -cE '^ok .*# SKIP' "$log.txt")
failed=$(grep -cE '^not ok ' "$log.txt")
pass=$((pass - skipped))

splat=$(grep -nE 'Kernel panic|Oops|BUG:|WARNING:|general protection|Call Trace|UBSAN|kernel BUG|RIP:|Unable to handle|refcount_t:|list_(add|del) corruption|INFO: task .* blocked|BUG [-a-z0-9_]+ \(|Redzone overwritten|Poison overwritten|Object padding overwritten|Freepointer corrupt|usercopy:' "$log.txt" | head -20)
result=$(grep -E '^KDBUS-VM-RESULT: ' "$log.txt" | tail -1)
if [ -n "$splat" ]; then
	echo "not ok - kernel splat in the guest:"; echo "$splat" | sed 's/^/#   /'
	first=$(echo "$splat" | head -1 | cut -d: -f1)
	tail -n +"$first" "$log.txt" | grep -vE '^\[ *[0-9.]+\]  \? ' | head -40 | sed 's/^/#   /'
	if [ -s "$cmdlog" ]; then
		echo "#   kfuzz (seed $fuzz_seed${fuzz_args:+, $fuzz_args}): last commands of each worker ($cmdlog):"
		tr -d '\r' < "$cmdlog" | grep -E '^w[0-9]+f? ' | awk '{ last[$1] = $0 } END { for (w in last) print last[w] }' |
			sort | cut -c1-300 | sed 's/^/#     /'
	fi
	failed=$((failed + 1))
elif [ $qrc = 124 ] || [ $qrc = 137 ]; then
	echo "not ok - guest timed out after $timeout_s s"; tail -20 "$log.txt" | sed 's/^/#   /'
	failed=$((failed + 1))
elif [ -z "$result" ]; then
	echo "not ok - no result line from the guest (qemu exit $qrc)"; tail -20 "$log.txt" | sed 's/^/#   /'
	failed=$((failed + 1))
elif ! echo "$result" | grep -q 'status=0'; then
	echo "not ok - guest: $result"
	failed=$((failed + 1))
fi
echo "# kernel $kver${boot_name:+ ($boot_name)}, qemu -accel $accel: boot to result ${elapsed} s wall; guest: ${result#KDBUS-VM-RESULT: }"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
