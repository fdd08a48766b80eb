#!/bin/bash
# tests/vm/lsm-cost.sh: what mediation by a security module costs each
# daemon per message, counted in the guest: callgrind's user-space
# instructions of dbus-daemon and of the tree's busbridged (ping and
# signal-k10 of ../shared/bench/busbench, as ../shared/bench/callgrind.sh
# counts them: a long run minus a short one, over the extra messages).
# Not a test: a measurement, run by hand as the second stage's script,
#
#   VM_QUICK=1 VM_FUZZ_SECONDS=0 VM_SCRIPT=$PWD/tests/vm/lsm-cost.sh tests/vm/run.sh
#       AppArmor (the default boot): without mediation, then with every
#       connection in a profile that allows all D-Bus traffic (each
#       delivery asked twice), as tests/vm/apparmor/guest.sh sets it up
#   VM_SELINUX=1 VM_SCRIPT=$PWD/tests/vm/lsm-cost.sh tests/vm/run.sh
#       SELinux: tests/vm/selinux/policy.conf enforcing, the bus in bus_t,
#       the benchmark client in service_t
#
# One line per daemon and mode: "COST mode=... daemon=... ping=N
# signal-k10=N" (Ir/msg); then the guest powers off.
tree=$(cd "$(dirname "$0")/../.." && pwd)
B=$tree/../shared/bench/busbench
w=/tmp/lsm-cost
mkdir -p $w
[ -x "$B" ] || { echo "COST: no $B (make -C ../shared/bench busbench on the host)"; exit 1; }
grep -q securityfs /proc/mounts || mount -t securityfs securityfs /sys/kernel/security

conf() { # APPARMOR-MODE
	cat > $w/cost.conf <<C
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=$w/bus</listen>
<apparmor mode="$1"/>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/><allow user="*"/></policy></busconfig>
C
}
ir() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
# run DAEMON OUT BUSBENCH-ARGS...: the daemon under callgrind ($wrap_bus
# before it), busbench ($wrap_client before it) against it
run() {
	local d=$1 f=$2 p i
	shift 2
	rm -f $w/bus
	$wrap_bus valgrind --tool=callgrind --callgrind-out-file=$f $d --config-file=$w/cost.conf --nofork \
		--print-address=1 > /dev/null 2> $w/err &
	p=$!
	for i in $(seq 400); do [ -S $w/bus ] && break; sleep 0.25; done
	$wrap_client $B --address unix:path=$w/bus "$@" > /dev/null || { echo "COST: busbench failed"; cat $w/err; }
	kill $p
	wait $p
}
measure() { # MODE
	for d in /usr/bin/dbus-daemon $tree/build/daemon/busbridged; do
		run $d $w/cg.s ping -n 200
		run $d $w/cg.l ping -n 600
		local ping=$(( ($(ir $w/cg.l) - $(ir $w/cg.s)) / 800 ))
		run $d $w/cg.s signal -k 10 -n 64
		run $d $w/cg.l signal -k 10 -n 192
		local sig=$(( ($(ir $w/cg.l) - $(ir $w/cg.s)) / 1280 ))
		echo "COST mode=$1 daemon=$(basename $d) ping=$ping signal-k10=$sig"
	done
}

if [ -n "${COST_ENFORCING:-}" ]; then
	# (in the private mount namespace that advertises D-Bus mediation)
	conf enabled
	# (env after the change of profile: that exec drops LD_PRELOAD)
	wrap_bus="aa-exec -p lsm_cost -- env LD_PRELOAD=$w/shim.so" wrap_client="aa-exec -p lsm_cost --"
	measure apparmor-enforcing
	exit 0
elif [ -d /sys/fs/selinux ]; then
	grep -q ' /sys/fs/selinux ' /proc/mounts || mount -t selinuxfs selinuxfs /sys/fs/selinux
	checkpolicy -U allow -c 33 -o $w/policy.33 $tree/tests/vm/selinux/policy.conf > /dev/null &&
		cat $w/policy.33 > /sys/fs/selinux/load && echo 1 > /sys/fs/selinux/enforce
	conf disabled
	wrap_bus="runcon system_u:system_r:bus_t" wrap_client="runcon system_u:system_r:service_t"
	measure selinux-enforcing
else
	cat > $w/profile <<'P'
abi <abi/3.0>,
profile lsm_cost {
  /** rwmixk,
  unix, network, capability, signal, ptrace,
  dbus,
}
P
	apparmor_parser -r -W $w/profile
	gcc -O2 -shared -fPIC -o $w/shim.so $tree/tests/vm/apparmor/peersec-shim.c -ldl
	wrap_bus="" wrap_client=""
	conf disabled
	measure apparmor-off
	# D-Bus mediation advertised in a private mount namespace only, as
	# tests/vm/apparmor/guest.sh does it
	mkdir -p $w/aaf
	cp -r /sys/kernel/security/apparmor/features $w/aaf/ 2> /dev/null
	mkdir -p $w/aaf/features/dbus
	echo "acquire send receive" > $w/aaf/features/dbus/mask
	unshare -m --propagation private bash -c \
		'mount --bind "$1" /sys/kernel/security/apparmor/features && COST_ENFORCING=1 bash "$2"' \
		- $w/aaf/features "$0"
	apparmor_parser -R $w/profile > /dev/null 2>&1
fi
echo o > /proc/sysrq-trigger
while read -r x; do :; done
