#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# System bus activation through a setuid launch helper: busbridged with
# <servicehelper> naming busbridge-launch-helper (installed setuid root into
# a temporary directory) and dbus-daemon with its own
# dbus-daemon-launch-helper, both running as messagebus on the same
# configuration, activate the same services.  Compared: the uid each
# service runs as (User=root, User=nobody), its environment (only
# DBUS_STARTER_ADDRESS and DBUS_STARTER_BUS_TYPE=system), and the error
# names and texts of the failures (no User=, an unknown User=, a bad Exec=,
# a Name= that does not match the file, an exit status, a signal, a helper
# that cannot be executed).  Also, a bus running as root without a helper:
# the activation environment is the daemon's without the variables systemd
# sets for the daemon itself.  And an unprivileged caller of either
# helper is refused.
#
# Both helpers read the real /usr/share/dbus-1/system.conf (the bus user and
# the standard system service directories): the services are written to
# /usr/local/share/dbus-1/system-services for the test and removed after.
# Needs root, the users messagebus and nobody and dbus-daemon's helper;
# exits 77 (skipped) otherwise.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

SYSCONF=/usr/share/dbus-1/system.conf
SYSDIR=/usr/local/share/dbus-1/system-services
DBUS_HELPER=/usr/lib/dbus-1.0/dbus-daemon-launch-helper
OUR_HELPER=${BUILDDIR:-}/daemon/busbridge-launch-helper
REF_DAEMON=${REF_DAEMON:-/usr/bin/dbus-daemon}
skip77() { skip "$*"; echo "1..$n"; exit 77; }
[ "$(id -u)" = 0 ] || skip77 "needs root"
id messagebus >/dev/null 2>&1 && id nobody >/dev/null 2>&1 || skip77 "needs the users messagebus and nobody"
[ -f "$SYSCONF" ] && grep -q '<user>messagebus</user>' "$SYSCONF" || skip77 "needs $SYSCONF with <user>messagebus</user>"
[ -x "$OUR_HELPER" ] || skip77 "no $OUR_HELPER (BUILDDIR=$BUILDDIR)"
[ -u "$DBUS_HELPER" ] && [ -x "$REF_DAEMON" ] || skip77 "needs $REF_DAEMON and its setuid $DBUS_HELPER"
"$PY" -c 'import dbus' 2>/dev/null || skip77 "needs dbus-python for $PY"

U=t$$x$RANDOM
P=com.example.LaunchHelper.$U
made_dirs=()	# what we create, removed in reverse order
for d in "${SYSDIR%/*}" "$SYSDIR"; do
	[ -d "$d" ] || { mkdir "$d" && made_dirs=("$d" "${made_dirs[@]}"); }
done
_extra_cleanup='kill_using "$T/svc.py" 2>/dev/null; rm -f "$SYSDIR/$P".*.service
	for d in "${made_dirs[@]}"; do rmdir "$d" 2>/dev/null; done'

chmod 755 "$T"
mkdir -p "$T/out" "$T/helper"
chmod 1777 "$T/out"
install -m 4754 -o root -g messagebus "$OUR_HELPER" "$T/helper/busbridge-launch-helper"
SOCK=$T/bus.sock
ADDR=unix:path=$SOCK

# the service: writes its uid, gids and environment to $T/out/NAME, owns NAME
cat >"$T/svc.py" <<'PYEOF'
import os, sys, time
import dbus, dbus.bus
addr, name, out = sys.argv[1:4]
with open(out + '.tmp', 'w') as f:
    f.write('uid=%d gid=%d groups=%s\n' % (os.getuid(), os.getgid(), ','.join(map(str, sorted(os.getgroups())))))
    for k in sorted(os.environ):
        f.write('env %s=%s\n' % (k, os.environ[k]))
os.rename(out + '.tmp', out)
conn = dbus.bus.BusConnection(addr)
conn.request_name(name)
time.sleep(30)
PYEOF
chmod 644 "$T/svc.py"

svcfile() { # NAME (file name) then lines of the [D-BUS Service] group
	local f=$SYSDIR/$1.service; shift
	printf '[D-BUS Service]\n' >"$f"
	printf '%s\n' "$@" >>"$f"
}
svc() { echo "Exec=$PY $T/svc.py $ADDR $1 $T/out/$1"; }
svcfile "$P.Root" "Name=$P.Root" "$(svc "$P.Root")" "User=root"
svcfile "$P.Nobody" "Name=$P.Nobody" "$(svc "$P.Nobody")" "User=nobody"
svcfile "$P.Env" "Name=$P.Env" "$(svc "$P.Env")"
svcfile "$P.BadUser" "Name=$P.BadUser" "$(svc "$P.BadUser")" "User=no-such-user-$U"
svcfile "$P.BadExec" "Name=$P.BadExec" "Exec=$T/no-such-program" "User=nobody"
svcfile "$P.Mismatch" "Name=$P.Mismatch2" "$(svc "$P.Mismatch2")" "User=nobody"
svcfile "$P.Exit3" "Name=$P.Exit3" "Exec=/bin/sh -c 'exit 3'" "User=nobody"
svcfile "$P.Killed" "Name=$P.Killed" "Exec=/bin/sh -c 'kill -9 \$\$'" "User=nobody"
svcfile "$P.Quotes" "Name=$P.Quotes" "Exec=/bin/sh -c 'unclosed" "User=nobody"
svcfile "$P.NoExec" "Name=$P.NoExec" "User=nobody"
svcfile "$P.NoName" "$(svc "$P.NoName")" "User=nobody"

config() { # OUT USER HELPER
	{
		echo '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
		echo ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
		echo "<busconfig><type>system</type><listen>$ADDR</listen><auth>EXTERNAL</auth>"
		[ -z "$2" ] || echo "<user>$2</user>"
		[ -z "$3" ] || echo "<servicehelper>$3</servicehelper>"
		echo "<servicedir>$SYSDIR</servicedir>"
		echo '<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>'
		echo '<allow receive_sender="*"/></policy></busconfig>'
	} >"$1"
}

call() { timeout 30 dbus-send --bus="$ADDR" --print-reply --dest=org.freedesktop.DBus / "$@" 2>&1 | tr '\n' ' ' | sed 's/ *$//'; }
# probe TAG NAME...: one "TITLE: RESULT" line per name
probe() {
	local tag=$1 name r uid; shift
	for name; do
		rm -f "$T/out/$name"
		r=$(call org.freedesktop.DBus.StartServiceByName string:"$name" uint32:0)
		case $r in
		*"uint32 1"*)
			uid=$(call org.freedesktop.DBus.GetConnectionUnixUser string:"$name")
			wait_grep . "$T/out/$name" 10
			echo "$tag ${name#$P.} starts: uint32 1, owner ${uid##*uint32 }"
			echo "$tag ${name#$P.} ids: $(head -n 1 "$T/out/$name")"
			# the address of the bus has its guid (DBUS_STARTER_ADDRESS without a helper);
			# python adds LC_CTYPE to an environment without a locale; $_ is the daemon's path
			echo "$tag ${name#$P.} environment: $(grep '^env ' "$T/out/$name" | sed 's/,guid=[0-9a-f]*//' |
				grep -v -e '^env LC_CTYPE=' -e '^env _=' | tr '\n' ' ' | sed 's/ *$//')"
			;;
		*) echo "$tag ${name#$P.} fails: $r" ;;
		esac
	done
}

run() { # DAEMON CONFIG LOGNAME TAG NAMES...: the probe's lines with DAEMON on CONFIG
	local daemon=$1 conf=$2 log=$3 tag=$4; shift 4
	rm -f "$SOCK"
	if ! start_bus "$log" "$conf" "$daemon"; then echo "$tag: the bus did not start: $(head -c 300 "$T/$log.log")"; return; fi
	probe "$tag" "$@"
	stop "$OWN_PID"
	kill_using "$T/svc.py" 2>/dev/null
}

NAMES=("$P.Root" "$P.Nobody" "$P.Env" "$P.BadUser" "$P.BadExec" "$P.Mismatch2" "$P.Exit3" "$P.Killed" "$P.Quotes"
	"$P.NoExec" "$P.NoName")

# 1. messagebus with a helper: ours and dbus-daemon's
config "$T/ours.conf" messagebus "$T/helper/busbridge-launch-helper"
config "$T/ref.conf" messagebus "$DBUS_HELPER"
ours=$(run "$BUS_DAEMON" "$T/ours.conf" ours helper "${NAMES[@]}")
ref=$(run "$REF_DAEMON" "$T/ref.conf" ref helper "${NAMES[@]}")
compare_with_reference "$ours" "$ref" 9
# what the comparison relies on, stated
root_uid=$(grep -F "helper Root starts:" <<<"$ours")
nobody_uid=$(grep -F "helper Nobody starts:" <<<"$ours")
[ "${root_uid##* }" = 0 ] && ok "User=root runs as root" || not_ok "User=root runs as root: $root_uid"
[ "${nobody_uid##* }" = "$(id -u nobody)" ] && ok "User=nobody runs as nobody" || not_ok "User=nobody runs as nobody: $nobody_uid"
expect "the environment is DBUS_STARTER_ADDRESS and DBUS_STARTER_BUS_TYPE only" \
	"^helper Nobody environment: env DBUS_STARTER_ADDRESS=unix:path=/run/dbus/system_bus_socket env DBUS_STARTER_BUS_TYPE=system$" \
	grep -F "helper Nobody environment:" <<<"$ours"

# 2. a helper that cannot be executed
config "$T/ours-missing.conf" messagebus "$T/no-such-helper"
config "$T/ref-missing.conf" messagebus "$T/no-such-helper"
ours=$(run "$BUS_DAEMON" "$T/ours-missing.conf" ours-missing missing "$P.Nobody")
ref=$(run "$REF_DAEMON" "$T/ref-missing.conf" ref-missing missing "$P.Nobody")
compare_with_reference "$ours" "$ref" 1

# 3. root without a helper: the daemon's environment, less what systemd set for it
config "$T/ours-root.conf" "" ""
config "$T/ref-root.conf" "" ""
export LAUNCH_HELPER_TEST_MARK=$U JOURNAL_STREAM=1:2 NOTIFY_SOCKET=/nonexistent INVOCATION_ID=0123456789abcdef \
	LISTEN_FDNAMES=x
ours=$(run "$BUS_DAEMON" "$T/ours-root.conf" ours-root root "$P.Env")
ref=$(run "$REF_DAEMON" "$T/ref-root.conf" ref-root root "$P.Env")
unset JOURNAL_STREAM NOTIFY_SOCKET INVOCATION_ID LISTEN_FDNAMES
compare_with_reference "$(grep -v ' ids: ' <<<"$ours")" "$(grep -v ' ids: ' <<<"$ref")" 2
expect "the daemon's own environment is passed on" "LAUNCH_HELPER_TEST_MARK=$U" grep -F "root Env environment:" <<<"$ours"
if grep -F "root Env environment:" <<<"$ours" | grep -qE 'JOURNAL_STREAM|NOTIFY_SOCKET|INVOCATION_ID|LISTEN_FDNAMES'; then
	not_ok "systemd's variables for the daemon are not passed on: $ours"
else ok "systemd's variables for the daemon are not passed on"; fi

# 4. an unprivileged caller cannot start anything with either helper: as
# nobody, and as nobody in the group messagebus, it is refused (a caller
# that is not the bus user), with dbus-daemon's helper's exit status, and
# nothing starts
for who in nogroup messagebus; do
	rm -f "$T/out/$P.Nobody"
	o=$(setpriv --reuid=nobody --regid="$who" --clear-groups "$T/helper/busbridge-launch-helper" "$P.Nobody" 2>/dev/null; echo $?)
	r=$(setpriv --reuid=nobody --regid="$who" --clear-groups "$DBUS_HELPER" "$P.Nobody" 2>/dev/null; echo $?)
	sleep 0.3
	if [ "$o" != 0 ] && [ "$o" = "$r" ] && [ ! -e "$T/out/$P.Nobody" ]; then
		ok "nobody (group $who) cannot start a service with the helper: exit $o, as dbus-daemon's"
	else
		not_ok "nobody (group $who) and the helper: exit $o (dbus-daemon's $r), started: $([ -e "$T/out/$P.Nobody" ] && echo yes || echo no)"
	fi
done

# 5. the helpers run by the bus user itself on .service files they refuse:
# the same exit status and the same words on stderr (no User=, no Exec=,
# no Name=, another Name=, no such file), and nothing starts
for name in Env NoExec NoName Mismatch Nothing; do
	for h in ours ref; do
		helper=$T/helper/busbridge-launch-helper
		[ $h = ref ] && helper=$DBUS_HELPER
		out=$(setpriv --reuid=messagebus --regid=messagebus --clear-groups "$helper" "$P.$name" 2>&1; echo "exit $?")
		eval "$h=\$(tr '\n' ' ' <<<\"\$out\")"
	done
	if [ "$ours" = "$ref" ]; then ok "the helper on $name: as dbus-daemon-launch-helper ($ours)"
	else not_ok "the helper on $name: got [$ours], dbus-daemon-launch-helper [$ref]"; fi
done
[ ! -e "$T/out/$P.NoName" ] && ok "nothing started" || not_ok "a service started"
echo "1..$n"
