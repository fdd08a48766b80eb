#!/bin/bash
# system-boot-check.sh: boot a real systemd (PID 1) in a systemd-nspawn
# container with busbridged as the system bus, using the shared boot check
# (../shared/tools/system-boot/boot-check.sh; needs root).
#
# The bus is switched over the way doc/systemd.md describes: the shipped
# units data/busbridge.socket and data/busbridge.service are installed
# where `make install` puts them and enabled, which makes them dbus.socket
# and dbus.service (their Alias=).  The boot check's own dbus.service
# drop-in is replaced by an empty one, so the unit's ExecStart=, Type=notify
# and ExecReload= are the ones tested.  With BOOT_USER_BUS=1 the session bus
# units (data/busbridge-session.*) are enabled for every user too.
# Extra arguments go to boot-check.sh.
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
# the units' ExecStart= is $bindir/busbridged: /usr/local/bin, where
# boot-check.sh puts the daemon
[ -f Makefile ] || "$top/configure" -q --prefix=/usr/local
static=$(pkg-config --variable=libdir libevent)/libevent.a
make -s -j2 daemon/busbridged data/busbridge.service data/busbridge-session.service LIBEVENT_LIBS="$static" >&2

units=/usr/lib/systemd/system user_units=/usr/lib/systemd/user
printf '# the units of data/ are used as they are\n[Service]\n' >"$b/boot-dropin.conf"
{
	echo 'set -e'
	echo 'systemctl enable busbridge.socket busbridge.service'
	[ "${BOOT_USER_BUS:-0}" != 1 ] || echo 'systemctl --global enable busbridge-session.socket busbridge-session.service'
	echo 'ls -l /etc/systemd/system/dbus.service /etc/systemd/system/dbus.socket'
} >"$b/boot-setup.sh"
exec "$check" --daemon "$b/daemon/busbridged" --dropin "$b/boot-dropin.conf" --setup "$b/boot-setup.sh" \
	--file "$b/data/busbridge.service:$units/busbridge.service" \
	--file "$top/data/busbridge.socket:$units/busbridge.socket" \
	--file "$b/data/busbridge-session.service:$user_units/busbridge-session.service" \
	--file "$top/data/busbridge-session.socket:$user_units/busbridge-session.socket" "$@"
