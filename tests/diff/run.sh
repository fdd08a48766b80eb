#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/diff/run.sh BUSBRIDGED [busdiff.py options]
#
# The differential tester (busdiff.py): dbus-daemon and BUSBRIDGED with the
# same configurations, the same scripted raw clients, everything every
# connection receives compared.  Default: the bounded CI mode; --mode long
# for the long mode, --random SECONDS for the random mode, --config FILE to
# point it at a configuration of your own.  Prints TAP and
# "N passed, N failed, N skipped"; exit 0 when nothing differs, 1 when
# something does, 77 (skip) when not root or dbus-daemon is missing.
here=$(cd "$(dirname "$0")" && pwd)
skip() {
	echo "1..0 # SKIP $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
}
[ $# -ge 1 ] || { echo "usage: $0 BUSBRIDGED [--mode ci|long] [--random SECS] [--config FILE] [--only RE]" >&2; exit 2; }
bin=$1
shift
[ -x "$bin" ] || { echo "$0: $bin: not executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] || skip "needs root (clients as other users)"
[ -x /usr/bin/dbus-daemon ] || skip "no /usr/bin/dbus-daemon"
exec timeout -k 10 ${BUSDIFF_TIMEOUT:-1200} /usr/bin/python3 "$here/busdiff.py" --busbridged "$bin" "$@"
