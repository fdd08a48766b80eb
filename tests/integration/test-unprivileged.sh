#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# dbus-daemon's own subtests that only run for a non-root user (root is
# immune to pending_fd_timeout), run as "nobody" against the daemon
. "$(dirname "$0")/lib.sh"
T=/usr/lib/dbus-1.0/installed-tests/dbus
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || [ ! -x "$T/test-dbus-daemon" ]; then
	skip "needs root, the user nobody and dbus-tests"; echo "1..$n"; exit 0
fi
if ! runuser -u nobody -- test -x "$BUS_DAEMON"; then
	skip "nobody cannot run $BUS_DAEMON"; echo "1..$n"; exit 0
fi
for sub in /limits/pending-fd-timeout /echo/session /creds; do
	out=$(cd / && runuser -u nobody -- env HOME=/tmp DBUS_TEST_DAEMON="$BUS_DAEMON" DBUS_TEST_DATA="$T/data" \
		DBUS_TEST_EXEC="$T" timeout 60 "$T/test-dbus-daemon" --tap -p "$sub" 2>&1)
	if grep -q "^ok 1 $sub\$" <<<"$out"; then ok "as nobody: test-dbus-daemon $sub"
	else not_ok "as nobody: test-dbus-daemon $sub: $(grep -E 'ERROR|not ok|SKIP' <<<"$out" | head -c 300)"; fi
done
echo "1..$n"
