#!/bin/bash
# deps.sh: install the Debian packages busbridge needs (as root), only those
# that are missing.  Usage: tools/deps.sh [build|test|bench|policy|vm|deb]   (test
# implies build; bench, for tools/bench.sh, implies test; policy, the system.d
# files tests/policy-diff probes, implies test; vm, what tests/vm/run.sh needs
# to build the kernel module and boot it in qemu, implies build; deb, the
# Debian packaging (debian/, dpkg-buildpackage, lintian, DKMS, and
# tests/deb/install-test.sh's container), implies build)
set -eu
build_pkgs="build-essential autoconf automake libtool pkg-config libevent-dev
  libexpat1-dev libdbus-1-dev libsystemd-dev libselinux1-dev libaudit-dev
  libapparmor-dev"
test_pkgs="dbus dbus-bin dbus-daemon dbus-tests dbus-x11 libglib2.0-bin systemd
  python3 python3-dbus python3-gi clang libclang-rt-14-dev valgrind procps
  libglib2.0-tests python3-dbus-tests systemd-tests devscripts"
bench_pkgs="dbus-broker valgrind strace linux-perf util-linux"
# the kernel module's VM test (tests/vm/run.sh): headers of the running ABI
# with kbuild, qemu (TCG is enough), an initramfs of busybox, libcap for
# the static build of the original kdbus selftests; the
# SELinux boot (VM_SELINUX=1) compiles its policy with checkpolicy and
# runs its clients with runcon; the AppArmor comparison loads its profiles
# with apparmor_parser and runs its clients with aa-exec
vm_pkgs="linux-headers-amd64 qemu-system-x86 busybox-static cpio kmod libcap-dev
  checkpolicy policycoreutils selinux-utils apparmor apparmor-utils libapparmor-dev"
# the Debian packages (debian/): debhelper with the DKMS addon, lintian,
# dch; the install test boots a debootstrapped Debian 12 in systemd-nspawn
deb_pkgs="debhelper dh-dkms dkms dpkg-dev fakeroot lintian devscripts
  systemd-container debootstrap"
# packages that ship system.d policy files, for tests/policy-diff
policy_pkgs="polkitd bluez avahi-daemon network-manager udisks2 upower systemd-container
  accountsservice rtkit wpasupplicant modemmanager"
want=$build_pkgs
[ "${1:-build}" = test ] && want="$build_pkgs $test_pkgs"
[ "${1:-build}" = bench ] && want="$build_pkgs $test_pkgs $bench_pkgs"
[ "${1:-build}" = policy ] && want="$build_pkgs $test_pkgs $policy_pkgs"
[ "${1:-build}" = vm ] && want="$build_pkgs $vm_pkgs"
[ "${1:-build}" = deb ] && want="$build_pkgs $deb_pkgs"
missing=()
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "deps.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# the policy group's services are not started (policy-rc.d answers 101)
created=
if [ "${1:-build}" = policy ] && [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  created=1
fi
rc=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
[ -z "$created" ] || rm -f /usr/sbin/policy-rc.d
exit $rc
