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
# units (data/busbridge-session.*) are enabled for every user too, and
# tools/boot-user-bus-check.sh checks, before the boot check's own checks,
# that user 1000's session bus (/run/user/1000/bus) answers busctl --user
# and dbus-send --session and is busbridged; its PASS/FAIL lines come after
# the boot check's, and the last line, "N passed, N failed", counts both.
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
	if [ "${BOOT_USER_BUS:-0}" = 1 ]; then
		echo 'systemctl --global enable busbridge-session.socket busbridge-session.service'
		echo 'systemctl enable busbridge-user-bus-check.service'
	fi
	echo 'ls -l /etc/systemd/system/dbus.service /etc/systemd/system/dbus.socket'
} >"$b/boot-setup.sh"
# the user bus check: a oneshot that busvm-check.service waits for
cat >"$b/busbridge-user-bus-check.service" <<'EOF'
[Unit]
Description=busbridge: check the session bus of user 1000 (tools/boot-user-bus-check.sh)
After=systemd-logind.service systemd-user-sessions.service dbus.service
Before=busvm-check.service

[Service]
Type=oneshot
ExecStart=/bin/bash /usr/local/lib/busbridge/boot-user-bus-check.sh
TimeoutStartSec=90

[Install]
WantedBy=multi-user.target
EOF
run=$b/boot-run
rc=0
"$check" --daemon "$b/daemon/busbridged" --dropin "$b/boot-dropin.conf" --setup "$b/boot-setup.sh" \
	--file "$b/data/busbridge.service:$units/busbridge.service" \
	--file "$top/data/busbridge.socket:$units/busbridge.socket" \
	--file "$b/data/busbridge-session.service:$user_units/busbridge-session.service" \
	--file "$top/data/busbridge-session.socket:$user_units/busbridge-session.socket" \
	--file "$top/tools/boot-user-bus-check.sh:/usr/local/lib/busbridge/boot-user-bus-check.sh" \
	--file "$b/busbridge-user-bus-check.service:$units/busbridge-user-bus-check.service" \
	--out "$run" "$@" >"$b/boot-check.out" || rc=$?
grep -v -E '^[0-9]+ passed, [0-9]+ failed$' "$b/boot-check.out" || true
npass=$(grep -c '^PASS ' "$b/boot-check.out" || true) nfail=$(grep -c '^FAIL ' "$b/boot-check.out" || true)
if [ "${BOOT_USER_BUS:-0}" = 1 ]; then
	u=$run/guest/user-bus.txt
	if [ -s "$u" ] && grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$u"; then
		grep -E '^(PASS|FAIL) ' "$u" || true
		npass=$((npass + $(grep -c '^PASS ' "$u" || true))) nfail=$((nfail + $(grep -c '^FAIL ' "$u" || true)))
	else
		echo "FAIL user-bus-check-completed -- no result in $u"
		nfail=$((nfail + 1))
	fi
	echo "boot-user-bus-check: log in $u" >&2
fi
echo "$npass passed, $nfail failed"
[ "$rc" = 0 ] || exit "$rc"
[ "$nfail" = 0 ]
