#!/bin/bash
# system-boot-check.sh: boot a real systemd (PID 1) in a systemd-nspawn
# container with busbridged as the system bus, using the shared boot check
# (../shared/tools/system-boot/boot-check.sh; needs root).
#
# The container's rootfs lacks libevent; the binary is linked with the
# static libevent, so that nothing has to be copied into the container's
# /lib (a symlink on merged-/usr Debian).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
check=${BOOT_CHECK:-$top/../shared/tools/system-boot/boot-check.sh}
[ -x "$check" ] || { echo "boot check not found: $check" >&2; exit 2; }
"$top/tools/deps.sh" build
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null)
b=$top/build-boot
mkdir -p "$b"
cd "$b"
[ -f Makefile ] || "$top/configure" -q
static=$(pkg-config --variable=libdir libevent)/libevent.a
make -s -j2 daemon/busbridged LIBEVENT_LIBS="$static"
exec "$check" --daemon "$b/daemon/busbridged" "$@"
