#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# busbridged and dbus-daemon on configurations they cannot start with, or
# start with warnings: the same exit status and the same lines on stderr
# (pids aside), word for word:
#  - configuration errors: "dbus[PID]: Failed to start message bus: ..."
#    without the file or line (but for XML syntax errors), dbus-daemon's
#    trailing newlines included; warnings (unknown users, an <includedir>
#    file with an error) as they are read;
#  - failures once the configuration is read (listening, the pidfile, the
#    <user>): "dbus-daemon[PID]: Failed to start message bus: ...", one line;
#  - --address=systemd: without sockets, --introspect;
#  - <apparmor mode=> not one of the three, and "required" without
#    AppArmor D-Bus mediation;
#  - what a daemon that drops to its <user> keeps (CAP_AUDIT_WRITE).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

mkdir -p "$T/inc"
printf '<busconfig><bees/></busconfig>' >"$T/inc/broken.conf"
sock="unix:path=$T/s"
conf() { # NAME XML-INSIDE-BUSCONFIG
	printf '<busconfig>%s</busconfig>' "$2" >"$T/$1.conf"
}
conf xml-error "<type>session</type><listen>$sock</listen><policy context=\"default\"><allow own=\"*\"/></busconfig>"
conf unknown-element "<type>session</type><listen>$sock</listen><bogus/>"
conf no-listen "<type>session</type>"
conf unknown-limit "<listen>$sock</listen><limit name=\"max_foo\">1</limit>"
conf bad-limit "<listen>$sock</listen><limit name=\"max_incoming_bytes\">abc</limit>"
conf missing-include "<listen>$sock</listen><include>nonexistent.conf</include>"
conf bad-message-type "<listen>$sock</listen><policy context=\"default\"><allow send_type=\"bogus\"/></policy>"
conf bad-combination "<type>session</type><listen>$sock</listen><policy user=\"nosuchuser\"><allow own=\"a.b\"/></policy><policy context=\"default\"><allow send_destination=\"*\" user=\"nosuchuser\"/></policy>"
conf unknown-address "<type>session</type><listen>foo:bar=1</listen>"
conf unbindable "<type>session</type><listen>unix:path=/nonexistent/dir/s</listen>"
conf unix-without-path "<type>session</type><listen>unix:foo=1</listen>"
conf second-unbindable "<type>session</type><listen>$sock</listen><listen>unix:path=/nonexistent/s</listen>"
conf unknown-user "<type>session</type><listen>$sock</listen><user>nosuchuser</user>"
conf pidfile "<type>session</type><listen>$sock</listen><pidfile>/nonexistent/x.pid</pidfile>"
conf broken-includedir "<type>session</type><listen>unix:path=/nonexistent/dir/s</listen><includedir>$T/inc</includedir>"
conf apparmor-bogus "<type>session</type><listen>$sock</listen><apparmor mode=\"bogus\"/>"
conf apparmor-required "<type>session</type><listen>$sock</listen><apparmor mode=\"required\"/>"

run() { # DAEMON ARGS...: "status N, stderr: ..." with pids replaced
	local d=$1 out; shift
	rm -f "$T/s"
	out=$(timeout -k 2 5 "$d" --nofork "$@" 2>&1 >/dev/null)
	echo "status $?, stderr: $(sed -e 's/\[[0-9]*\]/[PID]/' -e 's/pid=[0-9]*/pid=PID/' <<<"$out" |
		grep -v 'Failed to set fd limit' | tr '\n' '|')"
}

cases="xml-error unknown-element no-listen unknown-limit bad-limit missing-include bad-message-type
	bad-combination unknown-address unbindable unix-without-path second-unbindable unknown-user pidfile
	broken-includedir apparmor-bogus"
# <apparmor mode="required"/> where AppArmor offers no D-Bus mediation (both
# refuse to start); where it does, dbus-daemon mediates and busbridged,
# which does not, refuses (tests/unit/test-lsm.c)
if [ -e /sys/kernel/security/apparmor/features/dbus ]; then
	echo "# AppArmor D-Bus mediation present: apparmor-required not compared"
else
	cases="$cases apparmor-required"
fi
for c in $cases; do
	ours=$(run "$BUS_DAEMON" --config-file="$T/$c.conf")
	ref=$(run /usr/bin/dbus-daemon --config-file="$T/$c.conf")
	compare_with_reference "$c: $ours" "$c: $ref" 1
done
ours=$(run "$BUS_DAEMON" --config-file="$T/no-such-file.conf")
ref=$(run /usr/bin/dbus-daemon --config-file="$T/no-such-file.conf")
compare_with_reference "no such file: $ours" "no such file: $ref" 1
ours=$(run "$BUS_DAEMON" --config-file="$T")
ref=$(run /usr/bin/dbus-daemon --config-file="$T")
compare_with_reference "a directory: $ours" "a directory: $ref" 1
own_config "$T/good.conf" "$T/s"
ours=$(run "$BUS_DAEMON" --config-file="$T/good.conf" --address=systemd:)
ref=$(run /usr/bin/dbus-daemon --config-file="$T/good.conf" --address=systemd:)
compare_with_reference "systemd without sockets: $ours" "systemd without sockets: $ref" 1
# with <user>, what the daemon keeps: dbus-daemon keeps CAP_AUDIT_WRITE
# (its security modules' denials go to the audit log) and nothing else
caps() { # DAEMON: its uids and capability sets once it runs as <user>
	local d=$1 pid i out
	rm -f "$T/s"
	"$d" --nofork --config-file="$T/user.conf" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 50); do [ -S "$T/s" ] && break; sleep 0.1; done
	# (the socket is made before the privileges go: wait for that too,
	# a while, on a loaded machine)
	for i in $(seq 50); do
		grep -qE '^Uid:\s+0\s' /proc/$pid/status 2>/dev/null || break
		sleep 0.1
	done
	out=$(grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/$pid/status | tr '\t\n' '  ')
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$out"
}
if [ "$(id -u)" = 0 ] && getent passwd messagebus >/dev/null; then
	conf user "<type>session</type><listen>$sock</listen><user>messagebus</user>"
	ours=$(caps "$BUS_DAEMON")
	ref=$(caps /usr/bin/dbus-daemon)
	compare_with_reference "<user>messagebus</user>: $ours" "<user>messagebus</user>: $ref" 1
else
	skip "<user>: not root, or no messagebus user"
fi
if cmp -s <("$BUS_DAEMON" --introspect) <(/usr/bin/dbus-daemon --introspect); then
	ok "--introspect: as dbus-daemon"
else
	not_ok "--introspect differs: $(diff <("$BUS_DAEMON" --introspect) <(/usr/bin/dbus-daemon --introspect) | head -c 300)"
fi
echo "1..$n"
