#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# --kdbus and <kdbus/>: the bus on kdbus.ko.  Without kdbusfs (the build
# machine) the bus does not start and says why; with it (the VM's second
# stage, tests/vm/guest-stage2.sh) the bus is /sys/fs/kdbus/<uid>-busbridge-<pid>
# while the daemon runs, clients work on it, and it goes with the daemon.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

case $(basename "$BUS_DAEMON") in
*busbridged*) ;;
*) echo "ok 1 # SKIP --kdbus is busbridged's"; exit 0 ;;
esac
# the tests' configuration, on a socket of its own, with <kdbus/>
sed "s|<listen>[^<]*</listen>|<listen>unix:path=$T/kdbus-s</listen><kdbus/>|" "$TEST_CONFIG" > "$T/kdbus.conf"

if [ ! -e /sys/fs/kdbus/control ]; then
	for how in "--config-file=$T/kdbus.conf" "--kdbus --config-file=$TEST_CONFIG"; do
		# shellcheck disable=SC2086
		timeout 10 "$BUS_DAEMON" $how --nofork > /dev/null 2> "$T/kdbus.err"
		rc=$?
		if [ $rc = 1 ] && grep -q 'Cannot create the bus on kdbus: /sys/fs/kdbus/control does not exist' "$T/kdbus.err"; then
			ok "without kdbusfs, ${how%% *} refuses to start and says why"
		else
			not_ok "without kdbusfs, ${how%% *}: exit $rc, $(head -c 300 "$T/kdbus.err")"
		fi
	done
	exit 0
fi

"$BUS_DAEMON" --config-file="$T/kdbus.conf" --nofork --print-address=3 --print-pid=4 3> "$T/kdbus.addr" \
	4> "$T/kdbus.pid" 2> "$T/kdbus.err" &
for _ in $(seq 200); do [ -s "$T/kdbus.addr" ] && [ -s "$T/kdbus.pid" ] && break; sleep 0.05; done
pid=$(cat "$T/kdbus.pid" 2> /dev/null)
if [ -z "$pid" ]; then
	not_ok "the bus starts on kdbusfs: $(head -c 300 "$T/kdbus.err")"
	exit 0
fi
bus=/sys/fs/kdbus/$(id -u)-busbridge-$pid
check "its bus is $bus" test -e "$bus/bus"
expect "a client on it sees the driver" 'org.freedesktop.DBus' \
	dbus-send --bus="$(head -n 1 "$T/kdbus.addr")" --print-reply --dest=org.freedesktop.DBus / \
	org.freedesktop.DBus.ListNames
kill "$pid"
wait 2> /dev/null
check "the bus goes with the daemon" test ! -e "$bus"

# as the system bus does: the daemon drops to another user (keeping only
# CAP_IPC_OWNER: its clients' connections stand for them and it enforces
# the XML policy itself), and a client of yet another user owns a name the
# XML policy lets it own
if command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
	sed "s|<listen>[^<]*</listen>|<listen>unix:path=$T/kdbus-u</listen><kdbus/><user>daemon</user>\
<policy context=\"default\"><allow user=\"*\"/></policy>|" "$TEST_CONFIG" > "$T/kdbus-user.conf"
	chmod 755 "$T"
	"$BUS_DAEMON" --config-file="$T/kdbus-user.conf" --nofork --print-address=3 3> "$T/kdbus-u.addr" \
		2> "$T/kdbus-u.err" &
	upid=$!
	for _ in $(seq 200); do [ -s "$T/kdbus-u.addr" ] && break; sleep 0.05; done
	chmod 777 "$T/kdbus-u" 2> /dev/null
	expect "with <user>, a client of another user owns a name" 'uint32 1' \
		setpriv --reuid=nobody --regid=nogroup --clear-groups dbus-send --bus="$(head -n 1 "$T/kdbus-u.addr")" \
		--print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.RequestName string:com.kt.Nobody uint32:0
	kill "$upid" 2> /dev/null
	wait 2> /dev/null
fi
