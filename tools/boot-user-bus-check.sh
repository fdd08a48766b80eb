#!/bin/bash
# tools/boot-user-bus-check.sh - runs inside the container booted by
# tools/system-boot-check.sh (BOOT_USER_BUS=1), as root, from
# busbridge-user-bus-check.service, before the boot check's own checks.
#
# It starts the systemd --user instance of user 1000 (user@1000.service, as a
# login does) and checks that the session bus at /run/user/1000/bus, which
# busbridge-session.socket listens on, answers busctl --user and
# dbus-send --session calls of that user, and is served by busbridged.
# Output: one "PASS name" or "FAIL name -- why" line per check, to
# /busvm-out/user-bus.txt (the host reads it), and a last line
# "N passed, N failed".
out=/busvm-out/user-bus.txt
[ -d /busvm-out ] || out=/dev/console
exec >"$out" 2>&1
export SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C.UTF-8
uid=1000 user=$(id -nu 1000 2>/dev/null || echo tester)
rt=/run/user/$uid
npass=0 nfail=0
ok() { if [ "$2" = 0 ]; then echo "PASS $1"; npass=$((npass + 1)); else echo "FAIL $1 -- $3"; nfail=$((nfail + 1)); fi; }
# run CMD...: as the user, with the user's session environment; output in $OUT, status in $RC
run() {
	echo "----- \$ $*"
	OUT=$(timeout -k 1 10 runuser -u "$user" -- env XDG_RUNTIME_DIR=$rt \
		DBUS_SESSION_BUS_ADDRESS=unix:path=$rt/bus "$@" 2>&1)
	RC=$?
	printf '%s\n' "$OUT"
	echo "----- rc=$RC"
}

echo "----- starting user@$uid.service"
timeout 30 systemctl start "user@$uid.service"
ok user-manager-started $? "systemctl start user@$uid.service failed"
for _ in $(seq 50); do [ -S $rt/bus ] && break; sleep 0.1; done
[ -S $rt/bus ]
ok user-bus-socket $? "no socket $rt/bus"

run systemctl --user is-active busbridge-session.socket
ok user-bus-socket-unit "$([ "$OUT" = active ]; echo $?)" "busbridge-session.socket is $OUT"

# the first connection starts busbridge-session.service (socket activation)
run busctl --user --no-pager list
ok user-busctl-list "$([ $RC = 0 ] && grep -q '^org.freedesktop.DBus ' <<<"$OUT"; echo $?)" "rc=$RC"

run dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId
ok user-dbus-send-getid "$([ $RC = 0 ] && grep -qE 'string "[0-9a-f]{32}"' <<<"$OUT"; echo $?)" "rc=$RC"

# a name owned and called on the session bus: the user's own connection
run busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetConnectionUnixUser s org.freedesktop.DBus
ok user-busctl-call "$([ $RC = 0 ]; echo $?)" "rc=$RC"

run systemctl --user is-active busbridge-session.service
ok user-bus-service-active "$([ "$OUT" = active ]; echo $?)" "busbridge-session.service is $OUT"

# served by busbridged: the service's main process, and the socket's peer
run systemctl --user show -P MainPID busbridge-session.service
pid=$OUT
exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
echo "main pid $pid: $exe"
ok user-bus-is-busbridged "$([ "${exe##*/}" = busbridged ]; echo $?)" "main process $pid is ${exe:-?}"
owner=$(stat -c %U "/proc/$pid" 2>/dev/null)
ok user-bus-runs-as-user "$([ "$owner" = "$user" ]; echo $?)" "busbridged runs as ${owner:-?}"
peers=$(ss -xlp 2>/dev/null | grep -F "$rt/bus")
echo "$peers"
ok user-bus-socket-held-by-busbridged "$(grep -q '"busbridged"' <<<"$peers"; echo $?)" "listening socket: ${peers:-none}"

# the user manager knows the address (ExecStartPost= of the socket)
run systemctl --user show-environment
ok user-manager-bus-address "$(grep -qx "DBUS_SESSION_BUS_ADDRESS=unix:path=$rt/bus" <<<"$OUT"; echo $?)" \
	"DBUS_SESSION_BUS_ADDRESS not in the user manager's environment"

# systemctl --user reload -> ReloadConfig, and the bus still answers
run systemctl --user reload busbridge-session.service
ok user-bus-reload "$([ $RC = 0 ]; echo $?)" "rc=$RC"
run busctl --user --no-pager list
ok user-bus-alive-after-reload "$([ $RC = 0 ]; echo $?)" "rc=$RC"

echo "----- journal of the user bus"
timeout 5 journalctl -b --no-pager _UID=$uid -o short-monotonic 2>/dev/null | grep -i busbridge | tail -15
echo "$npass passed, $nfail failed"
