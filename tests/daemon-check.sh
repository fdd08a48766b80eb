#!/bin/bash
# daemon-check.sh: busbridged under `make check` - the built daemon on a
# private socket with real clients (dbus-send, gdbus, dbus-python, sd-bus,
# busctl, dbus-monitor): the fast part of the integration suite
# (tests/integration/run.sh, which tools/run-tests.sh runs whole).
# DAEMON_CHECK_ONLY= selects other tests (a regex of their names).
# Exit 0 when every test passed, 77 when all were skipped, else 1.
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(pwd)
daemon=$builddir/daemon/busbridged
[ -x "$daemon" ] || { echo "no $daemon (run from the build directory)"; exit 99; }
out=$(ONLY=${DAEMON_CHECK_ONLY:-'test-(dbus-send|gdbus|python|sdbus|busctl|dbus-monitor)'} BUILDDIR=$builddir \
	"$here/integration/run.sh" "$daemon" 2>&1)
echo "$out"
set -- $(echo "$out" | tail -n 1 | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
[ $# = 3 ] || exit 1
[ "$2" = 0 ] || exit 1
[ "$1" = 0 ] && exit 77
exit 0
