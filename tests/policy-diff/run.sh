#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/policy-diff/run.sh BUSBRIDGED [probe.py driver options]
#
# Differential policy test: runs the system configuration of this machine
# (/usr/share/dbus-1/system.conf with its system.d files) and the synthetic
# configurations in tests/policy-diff/configs/ on /usr/bin/dbus-daemon and
# on BUSBRIDGED, probes both with the same clients (root, bbtest1, bbtest2,
# nobody) and compares every outcome.  Prints TAP and
# "N passed, N failed, N skipped"; exit 0 when every probe agrees, 1 when
# one differs, 77 (skip) when not root or a dependency is missing.
# Creates the users bbtest1 and bbtest2 (group bbtestg) if missing.
# Give /usr/bin/dbus-daemon as BUSBRIDGED for a sanity run.

here=$(cd "$(dirname "$0")" && pwd)

skip() {
	echo "1..0 # SKIP $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
}

[ $# -ge 1 ] || { echo "usage: $0 BUSBRIDGED [--quiet] [--filter SCENARIO] [--keep]" >&2; exit 2; }
bin=$1
shift
[ -x "$bin" ] || { echo "$0: $bin: not executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] || skip "needs root (test users, probe clients as other users)"
py=/usr/bin/python3
[ -x $py ] || skip "no $py"
$py -c 'import dbus, dbus.mainloop.glib; from gi.repository import GLib' 2>/dev/null ||
	skip "python3-dbus / python3-gi missing"
[ -x /usr/bin/dbus-daemon ] || skip "no /usr/bin/dbus-daemon"
for t in setpriv useradd groupadd usermod; do
	command -v $t >/dev/null 2>&1 || skip "no $t"
done

exec timeout 600 $py "$here/probe.py" driver --busbridged "$bin" --configs "$here/configs" "$@"
