#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The groups the policy sees: those the kernel gives with the peer's
# credentials (SO_PEERGROUPS), as dbus-daemon takes them, not the user
# database's.  A process of "nobody" that runs with the supplementary group
# "users" (not nobody's in /etc/group) asks for a name only <policy
# group="users"> lets it own, and one that group is denied, under
# busbridged and dbus-daemon: the same answers.  (The order of the
# supplementary groups decides too where two group policies disagree: the
# kernel's, sorted by gid, not /etc/group's.)  Root only.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! getent group users > /dev/null; then
	echo "ok 1 # SKIP needs root, setpriv and the group \"users\""
	exit 0
fi
run() { # DAEMON TAG: the RequestName answers of nobody with the group users
	local cfg=$T/$2.conf out
	own_config "$cfg" "$T/$2.sock"
	sed -i 's|</busconfig>|  <policy context="default"><allow user="*"/></policy>\
  <policy group="users"><allow own="com.pg.UsersMay"/><deny own="com.pg.UsersMayNot"/></policy>\
  <policy context="default"><deny own="com.pg.UsersMay"/><allow own="com.pg.UsersMayNot"/></policy>\
</busconfig>|' "$cfg"
	start_bus "$2" "$cfg" "$1" || return 1
	chmod 777 "$T/$2.sock"
	for name in com.pg.UsersMay com.pg.UsersMayNot; do
		out=$(setpriv --reuid=nobody --regid=nogroup --groups=users timeout 10 dbus-send --bus="$OWN_ADDR" \
			--print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.RequestName \
			string:$name uint32:0 2>&1)
		echo "$name: $(grep -oE 'uint32 [0-9]+|org.freedesktop.DBus.Error.[A-Za-z]+' <<<"$out" | head -1)"
	done
	kill "$OWN_PID"
}
chmod 755 "$T"
want=$(run /usr/bin/dbus-daemon ref)
got=$(run "$BUS_DAEMON" bb)
if [ "$got" = "$want" ] && [ -n "$want" ]; then
	ok "a peer's own supplementary groups decide its group policy, as with dbus-daemon ($(echo $want))"
else
	not_ok "group policy: busbridged [$(echo $got)], dbus-daemon [$(echo $want)]"
fi
