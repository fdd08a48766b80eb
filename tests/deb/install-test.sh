#!/bin/bash
# install-test.sh: the Debian packages (debian/) installed, switched,
# upgraded, switched back and purged on a Debian 12 booted with systemd as
# PID 1 in a systemd-nspawn container (as root).
#
#   tests/deb/install-test.sh [--keep]
#
# It builds the packages twice from this source tree (dpkg-buildpackage
# -us -uc -b; the second time with a bumped changelog version, for the
# upgrade), runs lintian on them, and then boots the cached rootfs of
# ../shared/tools/system-boot (BUSVM_DIR, default /var/tmp/busvm; made by
# its boot-check.sh on first use) five times with one writable overlay:
#
#   1. dbus-daemon is the bus; apt installs busbridge from a local
#      directory; nothing restarts and nothing is enabled;
#      `systemctl enable busbridge` and `systemctl --global enable
#      busbridge-session.socket busbridge-session.service`; reboot
#   2. busbridged is the system bus and the session bus of user 1000:
#      logind, networkd, resolved (installed in boot 1), timedated, the
#      journal, busctl list, ReloadConfig,
#      busctl --user; apt upgrades busbridge with the bus running (the
#      busbridged PIDs stay the same); disable; reboot
#   3. dbus-daemon is the bus again; enable busbridge; reboot
#   4. busbridged is the bus; apt removes busbridge: the bus keeps running,
#      the dbus.service and dbus.socket links are gone; reboot
#   5. dbus-daemon is the bus; apt purges busbridge; nothing named
#      *busbridge* is left
#
# and last runs the same overlay once more without booting, with this
# machine's network and Debian mirror (its apt sources): apt installs the
# kernel headers of this machine's kernel (linux-headers-$(uname -r); for a
# kernel that is not Debian's, those of the headers installed here), then
# busbridge-dkms from the local directory, whose DKMS build makes kdbus.ko
# for them; dkms status and /lib/modules show it installed, nothing loads
# it (modules-load.d, /etc/modules; /sys/module/kdbus absent here: it is
# never loaded); apt purges busbridge-dkms and the module and its source are
# gone.  The overlay, with all that apt downloaded, goes with the work
# directory.
#
# Stdout: one line per step, "ok N - what" or "not ok N - what # why"
# ("ok N - what # SKIP why" for a step that cannot run here), then a last
# line "N passed, N failed, N skipped".  Exit: 0 all passed, 1 a step
# failed, 77 the test cannot run here (not root, no systemd-nspawn, no
# cgroup2, no debhelper: `tools/deps.sh deb`).  Logs of the builds and of
# each boot (console, and the output of every command) are in the work
# directory, printed on stderr; --keep keeps it.
set -u
export LC_ALL=C
top=$(cd "$(dirname "$0")/../.." && pwd)
keep=0
[ "${1:-}" = --keep ] && keep=1

skip_all() { echo "install-test: $*" >&2; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || skip_all "must run as root"
for t in systemd-nspawn unshare nsenter dpkg-buildpackage dh dch lintian dpkg-scanpackages; do
	command -v $t >/dev/null || skip_all "$t not found (tools/deps.sh deb)"
done
[ -e /usr/share/perl5/Debian/Debhelper/Sequence/dkms.pm ] || skip_all "dh-dkms not installed (tools/deps.sh deb)"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then cg2root=/sys/fs/cgroup
elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then cg2root=/sys/fs/cgroup/unified
else skip_all "no cgroup2 mounted"; fi
bootcheck=${BOOT_CHECK:-$top/../shared/tools/system-boot/boot-check.sh}
ROOTFS=${BUSVM_DIR:-/var/tmp/busvm}/rootfs
if [ ! -e "$ROOTFS/.busvm-ready" ]; then
	[ -x "$bootcheck" ] || skip_all "no rootfs in $ROOTFS and no $bootcheck to make it"
	echo "install-test: making the rootfs with $bootcheck (about 1 min)" >&2
	"$bootcheck" >/dev/null || true
	[ -e "$ROOTFS/.busvm-ready" ] || skip_all "could not make the rootfs $ROOTFS"
fi

W=$(mktemp -d /var/tmp/busbridge-deb-test.XXXXXX)
chmod 755 "$W"
echo "install-test: work directory $W" >&2

n=0 npass=0 nfail=0 nskip=0
ok() {   # ok DESCRIPTION RC [WHY]
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; npass=$((npass + 1))
	else echo "not ok $n - $1${3:+ # $3}"; nfail=$((nfail + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; nskip=$((nskip + 1)); }
finish() {
	echo "$npass passed, $nfail failed, $nskip skipped"
	[ "$nfail" = 0 ]
	exit $?
}

# ---------------------------------------------------------------- packages
# build VERSION DIR: the source tree into DIR/src, the packages into DIR
build() {
	local v=$1 d=$W/$2
	mkdir -p "$d/src"
	(cd "$top" && tar --exclude=.git --exclude='./build*' --exclude=./debian/build --exclude=./debian/tmp -cf - .) | tar -x -C "$d/src"
	(
		cd "$d/src" || exit 1
		if [ "$v" != "$(dpkg-parsechangelog -SVersion)" ]; then
			DEBFULLNAME=$(dpkg-parsechangelog -SMaintainer | sed 's/ <.*//') \
			DEBEMAIL=$(dpkg-parsechangelog -SMaintainer | sed 's/.*<\(.*\)>/\1/') \
				dch -v "$v" -D bookworm --force-distribution "Test build of a newer version." || exit 1
		fi
		DEB_BUILD_OPTIONS="parallel=1 ${DEB_BUILD_OPTIONS:-}" nice dpkg-buildpackage -us -uc -b
	) >"$d/build.log" 2>&1
}
v1=$(cd "$top" && dpkg-parsechangelog -SVersion)
v2=$v1+test1
build "$v1" v1
ok "dpkg-buildpackage -us -uc -b builds busbridge $v1" $? "see $W/v1/build.log"
build "$v2" v2
ok "dpkg-buildpackage builds busbridge $v2 (changelog bumped with dch -v)" $? "see $W/v2/build.log"
deb1=$(ls "$W"/v1/busbridge_*.deb 2>/dev/null) dkms1=$(ls "$W"/v1/busbridge-dkms_*.deb 2>/dev/null)
deb2=$(ls "$W"/v2/busbridge_*.deb 2>/dev/null)
[ -n "$deb1" ] && [ -n "$dkms1" ] && [ -n "$deb2" ] || { echo "install-test: no packages, stopping" >&2; finish; }

lintian --fail-on error,warning "$W"/v1/*.changes >"$W/lintian.log" 2>&1
ok "lintian: no errors and no warnings (overrides in debian/*.lintian-overrides)" $? "$(grep -cE '^[EW]: ' "$W/lintian.log") E/W tags, see $W/lintian.log"

# what busbridge-dkms ships (it is installed and built in the container
# after the boots, below)
mkdir -p "$W/dkms/root"
dpkg-deb -x "$dkms1" "$W/dkms/root"
src=$(ls -d "$W"/dkms/root/usr/src/busbridge-* 2>/dev/null)
[ -f "$src/dkms.conf" ] && [ -f "$src/kmod/Kbuild" ] && [ -f "$src/kdbus/kdbus.h" ]
ok "busbridge-dkms ships dkms.conf, kmod/ and kdbus/kdbus.h in /usr/src" $?
! dpkg-deb -c "$dkms1" | grep -q 'modules-load.d\|modprobe.d'
ok "busbridge-dkms does not load the module at boot (no modules-load.d)" $?
dkmsver=${src##*/busbridge-}

# the two local package directories apt installs from (flat repositories);
# libevent is the one dependency the rootfs lacks
for r in 1 2; do
	mkdir -p "$W/repo/v$r"
	cp "$W/v$r"/busbridge_*.deb "$W/repo/v$r/"
done
# deb_file PACKAGE [VERSION]: the path of its .deb, from apt's cache or
# downloaded into $W/repo; empty when there is none
deb_file() {
	local glob=$1_${2:-*}_*.deb f
	f=$(ls /var/cache/apt/archives/$glob 2>/dev/null | tail -1)
	[ -n "$f" ] || { (cd "$W/repo" && apt-get download -q "$1${2:+=$2}" >/dev/null 2>&1); f=$(ls "$W"/repo/$glob 2>/dev/null | tail -1); }
	echo "$f"
}
ev=$(deb_file libevent-2.1-7)
[ -n "$ev" ] || { echo "install-test: no libevent-2.1-7 package, stopping" >&2; finish; }
# systemd-resolved, which the rootfs lacks, of its systemd's version, for
# one more of the system's services on busbridge's bus (boot 2)
sdver=$(dpkg-query --admindir="$ROOTFS/var/lib/dpkg" -W -f '${Version}' systemd 2>/dev/null)
resolved_deb=
[ -z "$sdver" ] || resolved_deb=$(deb_file systemd-resolved "$sdver")
mkdir -p "$W/repo/dkms"
cp "$dkms1" "$W/repo/dkms/"
for r in v1 v2 dkms; do
	[ $r = dkms ] || cp "$ev" "$W/repo/$r/"
	[ $r != v1 ] || [ -z "$resolved_deb" ] || cp "$resolved_deb" "$W/repo/$r/"
	(cd "$W/repo/$r" && dpkg-scanpackages -m . >Packages 2>/dev/null)
done
chmod -R a+rX "$W/repo"

# ---------------------------------------------------------------- container
U=$W/upper
mkdir -p "$U" "$W/work" "$W/merged"
mkdir -p "$U/etc/systemd/system.conf.d" "$U/etc/systemd/system/user@.service.d"
printf '[Manager]\nDefaultTimeoutStartSec=45s\nDefaultTimeoutStopSec=15s\n' >"$U/etc/systemd/system.conf.d/50-install-test.conf"
printf '[Service]\nTimeoutStopSec=10s\n' >"$U/etc/systemd/system/user@.service.d/50-install-test.conf"
cat >"$W/inner.sh" <<EOF
#!/bin/sh
set -e
mount -t overlay bbdeb -o lowerdir=$ROOTFS,upperdir=$U,workdir=$W/work $W/merged
exec "\$@"
EOF
chmod +x "$W/inner.sh"
mycg=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$cg2root${mycg%/}/busbridge-deb-test-$$ cg1=
mkdir "$cg2" || { echo "install-test: cannot make cgroup $cg2" >&2; finish; }
if [ -d /sys/fs/cgroup/systemd ] && [ "$(stat -fc %T /sys/fs/cgroup/systemd)" = cgroupfs ]; then
	cg1=/sys/fs/cgroup/systemd$(sed -n 's/^[0-9]*:name=systemd://p' /proc/self/cgroup | sed 's:/$::')/busbridge-deb-test-$$
	mkdir "$cg1"
fi
cg_procs() { cat $(find "$cg2" -name cgroup.procs 2>/dev/null) 2>/dev/null; }
cleanup() {
	local i
	if [ -n "$(cg_procs)" ]; then
		if [ -e "$cg2/cgroup.kill" ]; then echo 1 >"$cg2/cgroup.kill"
		else for i in $(cg_procs); do kill -KILL "$i" 2>/dev/null; done; fi
	fi
	for i in $(seq 50); do [ -z "$(cg_procs)" ] && break; sleep 0.1; done
	for d in "$cg2" "$cg1"; do [ -n "$d" ] && [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
	if [ $keep = 0 ]; then rm -rf "$W"; else echo "install-test: kept $W" >&2; fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

depth=$(awk '/^NSpid:/ {print NF}' /proc/self/status)
nsp_pid= leader= boots=0
# boot: start the container; wait until systemd reports the boot finished
boot() {
	boots=$((boots + 1))
	leader=
	( echo $BASHPID >"$cg2/cgroup.procs"; [ -n "$cg1" ] && echo $BASHPID >"$cg1/cgroup.procs"
	  export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
	  exec unshare --mount --propagation private "$W/inner.sh" systemd-nspawn --register=no --keep-unit \
		--machine=bbdeb-$$ --directory="$W/merged" --private-network --bind-ro="$W/repo:/debs" \
		--console=read-only --boot ) </dev/null >"$W/console-$boots.log" 2>&1 &
	nsp_pid=$!
	local i p
	for i in $(seq 100); do
		for p in $(pgrep -P $nsp_pid); do
			awk -v d=$((depth + 1)) '/^NSpid:/ {exit !(NF == d && $NF == 1)}' /proc/$p/status 2>/dev/null && leader=$p
		done
		[ -n "$leader" ] && break
		sleep 0.1
	done
	[ -n "$leader" ] || return 1
	for i in $(seq 60); do
		c timeout 5 systemctl is-system-running --wait >/dev/null 2>&1
		case $(c systemctl is-system-running 2>/dev/null) in running|degraded) return 0 ;; esac
		sleep 1
	done
	return 1
}
# c CMD...: run CMD in the container (its namespaces and root); R and OUT
# get its exit status and output, which the log of the boot gets too
c() {
	nsenter -t "$leader" -a -r -w /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 timeout -k 5 120 "$@"
}
run() {
	OUT=$(c "$@" 2>&1); R=$?
	{ echo "----- \$ $*"; printf '%s\n' "$OUT"; echo "----- rc=$R"; } >>"$W/boot-$boots.log"
}
# u CMD...: as user 1000, with the user's session bus
u() { run runuser -u tester -- env XDG_RUNTIME_DIR=/run/user/1000 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus "$@"; }
# shut the container down with TARGET (reboot or poweroff); nspawn exits
shutdown() {
	run systemctl start "$1.target" --job-mode=replace-irreversibly --no-block
	local i
	for i in $(seq 300); do kill -0 $nsp_pid 2>/dev/null || break; sleep 0.2; done
	if kill -0 $nsp_pid 2>/dev/null; then
		kill -TERM $nsp_pid; sleep 5; kill -TERM $nsp_pid 2>/dev/null
		wait $nsp_pid 2>/dev/null
		return 1
	fi
	wait $nsp_pid 2>/dev/null
	return 0
}
apt_local() {   # apt_local vN apt-get ARGS: apt with the local directory /debs/vN only
	local r=$1; shift
	run sh -c "mkdir -p /run/bbdeb/lists/partial /run/bbdeb/cache/archives/partial && echo 'deb [trusted=yes] file:/debs/$r ./' >/run/bbdeb/sources.list &&
		DEBIAN_FRONTEND=noninteractive apt-get -q -o Dir::Etc::SourceList=/run/bbdeb/sources.list -o Dir::Etc::SourceParts=- \
		-o Dir::State::Lists=/run/bbdeb/lists -o Dir::Cache=/run/bbdeb/cache update &&
		DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dir::Etc::SourceList=/run/bbdeb/sources.list -o Dir::Etc::SourceParts=- \
		-o Dir::State::Lists=/run/bbdeb/lists -o Dir::Cache=/run/bbdeb/cache $*"
}
bus_pid() { c systemctl show -P MainPID dbus.service 2>/dev/null; }
bus_exe() { c readlink "/proc/$1/exe" 2>/dev/null; }
user_bus_pid() { OUT=$(c runuser -u tester -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user show -P MainPID dbus.service 2>/dev/null); echo "$OUT"; }
expect_bus() {  # expect_bus EXE-BASENAME STEP
	local p e
	p=$(bus_pid); e=$(bus_exe "$p")
	[ "${e##*/}" = "$1" ]
	ok "$2: dbus.service's main process is ${1}" $? "main PID ${p:-?} is ${e:-?}"
}
no_failed_units() {
	run systemctl --failed --plain --no-legend
	[ $R = 0 ] && [ -z "$OUT" ]
	ok "$1: the boot finished with no failed unit" $? "$(echo $OUT)"
}
bus_answers() {
	run busctl --no-pager list
	[ $R = 0 ] && grep -q '^org.freedesktop.systemd1 ' <<<"$OUT"
	ok "$1: busctl list answers" $? "rc=$R"
	run loginctl --no-pager list-sessions
	ok "$1: logind answers (loginctl)" $R
}

# ---- boot 1: the stock system; install
boot
ok "boot 1: Debian 12 boots with systemd as PID 1 in systemd-nspawn" $? "see $W/console-1.log"
[ -n "$leader" ] || finish
no_failed_units "boot 1"
expect_bus dbus-daemon "boot 1"
pid0=$(bus_pid)
apt_local v1 install busbridge
ok "apt-get install busbridge ($v1) from a local directory" $R "see $W/boot-1.log"
if [ -n "$resolved_deb" ]; then
	apt_local v1 install systemd-resolved
	ok "apt-get install systemd-resolved (for boot 2)" $R "see $W/boot-1.log"
fi
run dpkg-query -W -f '${Status} ${Version}\n' busbridge dbus-daemon
[ $R = 0 ] && [ "$(grep -c 'install ok installed' <<<"$OUT")" = 2 ]
ok "busbridge and dbus-daemon are both installed" $? "$OUT"
p=$(bus_pid)
[ "$p" = "$pid0" ] && [ "$(bus_exe "$p")" = /usr/bin/dbus-daemon ]
ok "install: the running dbus-daemon is not restarted (PID $pid0)" $? "PID $pid0 before, $p after"
run systemctl is-enabled busbridge.service
[ "$OUT" = disabled ] && ! c test -e /etc/systemd/system/dbus.service
ok "install: busbridge.service is not enabled (no dbus.service link)" $? "is-enabled: $OUT"
run stat -c '%U:%G %a' /usr/lib/busbridge/busbridge-launch-helper
[ "$OUT" = "root:messagebus 4754" ]
ok "the launch helper is root:messagebus 4754 (dpkg-statoverride)" $? "$OUT"
run systemctl enable busbridge
[ $R = 0 ] && [ "$(c readlink /etc/systemd/system/dbus.service)" = /lib/systemd/system/busbridge.service ]
ok "systemctl enable busbridge makes it dbus.service" $? "$OUT"
run systemctl --global enable busbridge-session.socket busbridge-session.service
[ $R = 0 ] && c test -L /etc/systemd/user/dbus.service && c test -L /etc/systemd/user/dbus.socket
ok "systemctl --global enable busbridge-session.socket busbridge-session.service" $? "$OUT"
shutdown reboot
ok "boot 1: reboot" $?

# ---- boot 2: busbridge; upgrade; disable
boot
ok "boot 2: the container boots with busbridge enabled" $? "see $W/console-2.log"
[ -n "$leader" ] || finish
no_failed_units "boot 2"
expect_bus busbridged "boot 2"
bb_pid=$(bus_pid)
bus_answers "boot 2"
run busctl --no-pager list
grep -q '^org.freedesktop.login1 ' <<<"$OUT"
ok "boot 2: busctl list shows org.freedesktop.login1" $?
run timedatectl --no-pager show
[ $R = 0 ] && grep -q '^NTP=' <<<"$OUT"
ok "boot 2: timedated answers (timedatectl, bus activation)" $? "rc=$R"
run systemctl start systemd-networkd.service
[ $R = 0 ] && run busctl --no-pager get-property org.freedesktop.network1 /org/freedesktop/network1 \
	org.freedesktop.network1.Manager OperationalState
[ $R = 0 ] && grep -q '^s "' <<<"$OUT"
ok "boot 2: networkd answers on the bus (busctl get-property ... OperationalState)" $? "rc=$R, $OUT"
if [ -n "$resolved_deb" ]; then
	run resolvectl --no-pager status
	[ $R = 0 ] && grep -q '^Global' <<<"$OUT"
	ok "boot 2: resolved answers on the bus (resolvectl status)" $? "rc=$R, $(echo $OUT | cut -c1-200)"
else
	skip "boot 2: resolved answers on the bus" "no systemd-resolved $sdver to download"
fi
run journalctl -b --no-pager -o cat _PID="$bb_pid"
[ $R = 0 ] && [ -n "$OUT" ]
ok "boot 2: the journal has busbridged's messages" $? "rc=$R, $(echo "$OUT" | wc -l) lines"
run busctl call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig
ok "boot 2: busctl call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig" $R "$OUT"
run systemctl reload dbus.service
ok "boot 2: systemctl reload dbus.service" $R "$OUT"
run busctl --no-pager list
ok "boot 2: the bus answers after the reloads" $R
run systemctl start user@1000.service
ok "boot 2: the user manager of user 1000 starts" $R "$OUT"
for _ in $(seq 50); do c test -S /run/user/1000/bus && break; sleep 0.1; done
u busctl --user --no-pager list
[ $R = 0 ] && grep -q '^org.freedesktop.DBus ' <<<"$OUT"
ok "boot 2: busctl --user list (session bus of user 1000)" $? "rc=$R"
u systemd-run --user --wait --quiet true
ok "boot 2: systemd-run --user --wait true" $R "$OUT"
ub_pid=$(user_bus_pid)
e=$(bus_exe "$ub_pid")
[ "${e##*/}" = busbridged ]
ok "boot 2: the user's dbus.service is busbridged" $? "main PID ${ub_pid:-?} is ${e:-?}"
apt_local v2 install busbridge
run dpkg-query -W -f '${Version}' busbridge
[ "$OUT" = "$v2" ]
ok "apt-get upgrades busbridge to $v2 with the bus running" $? "version $OUT, see $W/boot-2.log"
p=$(bus_pid)
[ "$p" = "$bb_pid" ]
ok "upgrade: the system bus is not restarted (busbridged PID $bb_pid)" $? "PID $bb_pid before, $p after"
p=$(user_bus_pid)
[ "$p" = "$ub_pid" ]
ok "upgrade: the session bus is not restarted (busbridged PID $ub_pid)" $? "PID $ub_pid before, $p after"
run systemctl is-enabled busbridge.service
[ "$OUT" = enabled ] && [ "$(c readlink /etc/systemd/system/dbus.service)" = /lib/systemd/system/busbridge.service ]
ok "upgrade: busbridge stays enabled as dbus.service" $? "is-enabled: $OUT"
bus_answers "upgrade"
run systemctl disable busbridge
[ $R = 0 ] && ! c test -e /etc/systemd/system/dbus.service
ok "systemctl disable busbridge removes the dbus.service link" $? "$OUT"
run systemctl --global disable busbridge-session.socket busbridge-session.service
[ $R = 0 ] && ! c test -e /etc/systemd/user/dbus.service && ! c test -e /etc/systemd/user/dbus.socket
ok "systemctl --global disable busbridge-session.socket busbridge-session.service" $? "$OUT"
shutdown reboot
ok "boot 2: reboot" $?

# ---- boot 3: dbus-daemon again; enable once more
boot
ok "boot 3: the container boots with busbridge disabled" $? "see $W/console-3.log"
[ -n "$leader" ] || finish
no_failed_units "boot 3"
expect_bus dbus-daemon "boot 3"
bus_answers "boot 3"
run sh -c 'systemctl enable busbridge && systemctl --global enable busbridge-session.socket busbridge-session.service'
ok "boot 3: busbridge enabled again, for its removal" $R "$OUT"
shutdown reboot
ok "boot 3: reboot" $?

# ---- boot 4: busbridge; remove it while it is the bus
boot
ok "boot 4: the container boots with busbridge enabled" $? "see $W/console-4.log"
[ -n "$leader" ] || finish
expect_bus busbridged "boot 4"
bb_pid=$(bus_pid)
apt_local v2 remove busbridge
ok "apt-get remove busbridge while it is the system bus" $R "see $W/boot-4.log"
run sh -c 'ls -l /etc/systemd/system/dbus.service /etc/systemd/system/dbus.socket /etc/systemd/user/dbus.service /etc/systemd/user/dbus.socket 2>/dev/null; find /etc/systemd -lname "*busbridge*"'
[ -z "$OUT" ]
ok "remove: the dbus.service and dbus.socket links to busbridge are gone" $? "$(echo $OUT)"
run busctl --no-pager list
[ $R = 0 ] && c kill -0 "$bb_pid"
ok "remove: the running busbridged (PID $bb_pid) is not stopped and answers" $? "rc=$R"
run systemctl show -P FragmentPath dbus.service
[ "$OUT" = /lib/systemd/system/dbus.service ]
ok "remove: dbus.service is dbus-daemon's unit again" $? "$OUT"
shutdown reboot
ok "boot 4: reboot" $?

# ---- boot 5: dbus-daemon; purge
boot
ok "boot 5: the container boots after the removal" $? "see $W/console-5.log"
[ -n "$leader" ] || finish
no_failed_units "boot 5"
expect_bus dbus-daemon "boot 5"
bus_answers "boot 5"
apt_local v2 purge busbridge
ok "apt-get purge busbridge" $R "see $W/boot-5.log"
run dpkg -L busbridge
[ $R != 0 ]
ok "purge: dpkg -L busbridge knows no files" $? "$OUT"
run dpkg-statoverride --list /usr/lib/busbridge/busbridge-launch-helper
[ $R != 0 ]
ok "purge: no dpkg-statoverride left" $? "$OUT"
run find / -path /proc -prune -o -path /sys -prune -o -path /debs -prune -o -name '*busbridge*' -print
[ $R = 0 ] && [ -z "$OUT" ]
ok "purge: find / -name '*busbridge*' finds nothing" $? "$(echo $OUT)"
run dpkg-query -W -f '${Status}' dbus-daemon
[ "$OUT" = "install ok installed" ]
ok "purge: dbus-daemon stays installed" $? "$OUT"
shutdown poweroff
ok "boot 5: poweroff" $?

# ---- DKMS: busbridge-dkms installed with apt in the container (not booted,
# same overlay, the host's network and Debian mirror), which builds kdbus.ko
# for the kernel headers installed there; the module is never loaded
kver=$(uname -r) hkver=
if [ ! -e "/lib/modules/$kver/build/Makefile" ]; then
	# a kernel that is not Debian's has no linux-headers package: the
	# headers this machine has installed instead
	for k in /lib/modules/*/build; do [ -e "$k/Makefile" ] && hkver=$(basename "$(dirname "$k")"); done
fi
mkdir -p "$U/etc/apt/sources.list.d" "$W/dkms/out"
cat /etc/apt/sources.list 2>/dev/null >"$U/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
	[ -e "$f" ] && cp "$f" "$U/etc/apt/sources.list.d/"
done
echo 'deb [trusted=yes] file:/debs/dkms ./' >"$U/etc/apt/sources.list.d/busbridge-dkms-test.list"
cat >"$W/dkms/out/in.sh" <<'EOF'
#!/bin/sh
# in.sh KVER FALLBACK-KVER DKMS-VERSION: each step writes its status to
# /out/STEP.rc and its output to /out/STEP.log
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
kver=$1 hkver=$2 ver=$3
apt="apt-get -q -y -o Acquire::Retries=3"
step() { s=$1; shift; "$@" >/out/$s.log 2>&1; echo $? >/out/$s.rc; }
step update $apt update
if [ -n "$hkver" ] && ! apt-cache show "linux-headers-$kver" >/dev/null 2>&1; then kver=$hkver; fi
echo "$kver" >/out/kver
step headers sh -c "$apt install --no-install-recommends linux-headers-$kver && test -e /lib/modules/$kver/build/Makefile"
step install $apt install --no-install-recommends busbridge-dkms
step status sh -c "dkms status; ls -l /lib/modules/$kver/updates/dkms/"
dkms status >/out/status.txt 2>&1
find /lib/modules -name 'kdbus.ko*' >/out/ko.txt 2>&1
grep -rl kdbus /etc/modules-load.d /usr/lib/modules-load.d /lib/modules-load.d /run/modules-load.d /etc/modules >/out/load.txt 2>/dev/null
step purge $apt purge busbridge-dkms
dkms status >/out/status2.txt 2>&1
{ ls -d /usr/src/busbridge-* /var/lib/dkms/busbridge; find /lib/modules -name 'kdbus.ko*'; } >/out/left.txt 2>/dev/null
rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/*_*
EOF
chmod 755 "$W/dkms/out/in.sh"
( echo $BASHPID >"$cg2/cgroup.procs"; [ -n "$cg1" ] && echo $BASHPID >"$cg1/cgroup.procs"
  export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
  exec timeout -k 10 1200 unshare --mount --propagation private "$W/inner.sh" systemd-nspawn --register=no --keep-unit \
	--machine=bbdeb-$$ --directory="$W/merged" --bind-ro="$W/repo:/debs" --bind="$W/dkms/out:/out" \
	--resolv-conf=replace-host --as-pid2 --console=pipe /out/in.sh "$kver" "$hkver" "$dkmsver" ) </dev/null >"$W/dkms/nspawn.log" 2>&1
nrc=$?
dlog() { echo "$W/dkms/out/$1.log"; }
drc() { cat "$W/dkms/out/$1.rc" 2>/dev/null || echo "none (nspawn rc=$nrc, see $W/dkms/nspawn.log)"; }
k=$(cat "$W/dkms/out/kver" 2>/dev/null)
[ "$(drc update)" = 0 ]
ok "dkms: apt-get update in the container (the Debian mirror of this machine and the local busbridge-dkms)" $? "rc=$(drc update), see $(dlog update)"
why=
[ "$k" = "$kver" ] || why=" (no headers for $kver, a kernel that is not Debian's: those installed here)"
[ "$(drc headers)" = 0 ]
ok "dkms: apt-get install linux-headers-${k:-?} in the container$why" $? "rc=$(drc headers), see $(dlog headers)"
[ "$(drc install)" = 0 ]
ok "dkms: apt-get install busbridge-dkms in the container (pulls dkms, gcc, make)" $? "rc=$(drc install), see $(dlog install)"
grep -q "^busbridge/$dkmsver, $k, x86_64: installed" "$W/dkms/out/status.txt" &&
	grep -q "^/lib/modules/$k/updates/dkms/kdbus.ko" "$W/dkms/out/ko.txt"
ok "dkms: dkms status says busbridge/$dkmsver, $k, x86_64: installed, kdbus.ko in /lib/modules/$k/updates/dkms" $? \
	"$(cat "$W/dkms/out/status.txt" "$W/dkms/out/ko.txt" 2>/dev/null | tr '\n' ' ')"
[ -e "$W/dkms/out/load.txt" ] && [ ! -s "$W/dkms/out/load.txt" ] && [ ! -e /sys/module/kdbus ]
ok "dkms: nothing loads kdbus (modules-load.d, /etc/modules) and it is not loaded on this machine (/sys/module/kdbus)" $? \
	"$(cat "$W/dkms/out/load.txt" 2>/dev/null | tr '\n' ' ')$([ -e /sys/module/kdbus ] && echo ' /sys/module/kdbus exists')"
[ "$(drc purge)" = 0 ] && ! grep -q '^busbridge' "$W/dkms/out/status2.txt" && [ -e "$W/dkms/out/left.txt" ] && [ ! -s "$W/dkms/out/left.txt" ]
ok "dkms: apt-get purge busbridge-dkms removes the module and /usr/src/busbridge-*" $? \
	"rc=$(drc purge), $(cat "$W/dkms/out/status2.txt" "$W/dkms/out/left.txt" 2>/dev/null | tr '\n' ' ')"
finish
