#!/bin/bash
# deps.sh: install the Debian packages busbridge needs (as root), only those
# that are missing.  Usage: tools/deps.sh [build|test]   (test implies build)
set -eu
build_pkgs="build-essential autoconf automake libtool pkg-config libevent-dev
  libexpat1-dev libdbus-1-dev libsystemd-dev"
test_pkgs="dbus dbus-bin dbus-daemon dbus-tests dbus-x11 libglib2.0-bin systemd
  python3 python3-dbus python3-gi clang libclang-rt-14-dev valgrind procps"
want=$build_pkgs
[ "${1:-build}" = test ] && want="$build_pkgs $test_pkgs"
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
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
