#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/policy-diff/setup-packages.sh - install Debian packages that ship
# system.d policy files, so that run.sh probes real configurations, plus
# what run.sh itself needs.  Idempotent; services are not started
# (policy-rc.d answers 101; there is no systemd as PID 1 here anyway).
# Needs root and apt.  Exit 0 when everything is installed, 77 when it
# cannot be (no root, no apt, or the simulation fails).

set -u
pkgs="dbus-daemon python3-dbus python3-gi polkitd bluez avahi-daemon network-manager udisks2 upower"
[ "$(id -u)" = 0 ] || { echo "setup-packages: needs root" >&2; exit 77; }
command -v apt-get >/dev/null 2>&1 || { echo "setup-packages: no apt-get" >&2; exit 77; }

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -n "$missing" ] || { echo "setup-packages: all installed"; exit 0; }

apt-get update -q >/dev/null 2>&1 || true
if ! apt-get install --no-install-recommends -s $missing >/dev/null 2>&1; then
	echo "setup-packages: apt-get -s install$missing fails; using the installed system.d files" >&2
	exit 77
fi
created=
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	created=1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
rc=$?
[ -n "$created" ] && rm -f /usr/sbin/policy-rc.d
exit $rc
