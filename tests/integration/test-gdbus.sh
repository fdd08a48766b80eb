#!/bin/bash
# gdbus (GDBus, GLib) against the bus: driver calls, calls to a service,
# introspection, monitor, emit, wait.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"
g() { timeout -k 2 10 gdbus "$@"; }
DRV="--session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus"
SVC="--session --dest com.example.GdbusSvc --object-path /com/example/Test"

# --- driver methods
expect "call GetId" "^\('[0-9a-f]{32}',\)$" g call $DRV --method org.freedesktop.DBus.GetId
expect "call ListNames lists the driver" "'org.freedesktop.DBus'" g call $DRV --method org.freedesktop.DBus.ListNames
expect "call NameHasOwner(org.freedesktop.DBus)" '^\(true,\)$' g call $DRV --method org.freedesktop.DBus.NameHasOwner org.freedesktop.DBus
expect "call GetNameOwner of a missing name: NameHasNoOwner" 'org\.freedesktop\.DBus\.Error\.NameHasNoOwner' \
	g call $DRV --method org.freedesktop.DBus.GetNameOwner com.example.GdbusNobody
expect "call RequestName: primary owner" '^\(uint32 1,\)$' g call $DRV --method org.freedesktop.DBus.RequestName com.example.GdbusName 4
expect "call GetConnectionUnixUser of the driver" "^\(uint32 $(id -u),\)$" \
	g call $DRV --method org.freedesktop.DBus.GetConnectionUnixUser org.freedesktop.DBus
expect "call to a missing name: ServiceUnknown" 'org\.freedesktop\.DBus\.Error\.ServiceUnknown' \
	g call --session --dest com.example.GdbusNobody --object-path / --method com.example.Foo.Bar
expect "call to an unknown driver method: UnknownMethod" 'org\.freedesktop\.DBus\.Error\.UnknownMethod' \
	g call $DRV --method org.freedesktop.DBus.NoSuchMethod
expect "Properties.Get Features is a variant of type as" "^\(<(@as )?\[('[A-Za-z]+'(, )?)*\]>,\)$" \
	g call $DRV --method org.freedesktop.DBus.Properties.Get org.freedesktop.DBus Features

# --- gdbus wait sees a name appear, then calls to the service
w=$T/wait.out
bg bash -c 'timeout -k 2 10 gdbus wait --session --timeout 8 com.example.GdbusSvc; echo "rc=$?"' >"$w" 2>&1
wait_pid=$BG_PID
sleep 0.2
if start_service com.example.GdbusSvc; then
	wait "$wait_pid" 2>/dev/null
	if grep -q 'rc=0' "$w"; then ok "gdbus wait returns when the name appears"; else not_ok "gdbus wait: $(cat "$w")"; fi
	expect "call the service: Echo of basic types" "^\('hi', 42, uint32 7, true, 2\.5, objectpath '/a/b'\)$" \
		g call $SVC --method com.example.Test.Echo "'hi'" 42 "uint32 7" true 2.5 "objectpath '/a/b'"
	expect "call the service: Echo of containers and variants" \
		"^\(\[\(1, 'a'\), \(2, 'b'\)\], \{'k': <\[<int64 5>, <'s'>\]>\}, <<byte 0x01>>\)$" \
		g call $SVC --method com.example.Test.Echo "@a(is) [(1, 'a'), (2, 'b')]" "{'k': <[<int64 5>, <'s'>]>}" "<<byte 1>>"
	expect "call the service: a D-Bus error comes back with its name and message" \
		'com\.example\.Test\.Error\.Failed: it broke' g call $SVC --method com.example.Test.Fail "'it broke'"
	expect "call with --timeout to a peer that never replies times out" 'Timeout was reached|Error.Timeout|Error.NoReply' \
		g call $SVC --timeout 1 --method com.example.Test.NeverReply
	expect "call a method that sleeps 300 ms, within the timeout" '^\(\)$' \
		g call $SVC --timeout 5 --method com.example.Test.Sleep 300
	expect "GetConnectionUnixProcessID of the service is its pid" "^\(uint32 $SVC_PYPID,\)$" \
		g call $DRV --method org.freedesktop.DBus.GetConnectionUnixProcessID com.example.GdbusSvc
	expect "GetConnectionCredentials of the service has its pid" "'ProcessID': <uint32 $SVC_PYPID>" \
		g call $DRV --method org.freedesktop.DBus.GetConnectionCredentials com.example.GdbusSvc
	expect "GetConnectionCredentials of the service has its uid" "'UnixUserID': <uint32 $(id -u)>" \
		g call $DRV --method org.freedesktop.DBus.GetConnectionCredentials com.example.GdbusSvc
	expect "GetNameOwner of the service is its unique name" "^\('$SVC_UNIQUE',\)$" \
		g call $DRV --method org.freedesktop.DBus.GetNameOwner com.example.GdbusSvc
else
	for i in 1 2 3 4 5 6 7 8 9 10; do not_ok "the python service did not start"; done
fi

# --- introspection of the driver
out=$(g introspect --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus 2>&1)
for pat in 'interface org\.freedesktop\.DBus \{' 'Hello\(out s [A-Za-z_0-9]+\)' 'RequestName\(in  s [A-Za-z_0-9]+,' \
	'NameOwnerChanged\(s [A-Za-z_0-9]+,' 'interface org\.freedesktop\.DBus\.Introspectable' \
	'readonly as Features' 'interface org\.freedesktop\.DBus\.Peer'; do
	if grep -qE -- "$pat" <<<"$out"; then ok "introspect driver: /$pat/"; else not_ok "introspect driver: no /$pat/ in: $(head -c 300 <<<"$out")"; fi
done
expect "introspect --recurse from / reaches /org/freedesktop/DBus" 'node /org/freedesktop/DBus' \
	g introspect --session --dest org.freedesktop.DBus --object-path / --recurse
expect "introspect the python service" 'ReadFd\(in  h' g introspect $SVC

# --- monitor: signals from the watched name, and not from others
m=$T/monitor.out
bg timeout -k 2 10 gdbus monitor --session --dest com.example.GdbusSvc >"$m" 2>&1
mon_pid=$BG_PID
if wait_grep 'is owned by' "$m" 5; then
	g call $SVC --method com.example.Test.Emit "'to the monitor'" >/dev/null 2>&1
	g emit --session --object-path /com/example/Test --signal com.example.Test.Hello "'from someone else'" >/dev/null 2>&1
	g call $SVC --method com.example.Test.Emit "'second'" >/dev/null 2>&1
	wait_grep "'second'" "$m" 5
	if grep -q "/com/example/Test: com.example.Test.Hello ('to the monitor',)" "$m"; then ok "monitor sees the service's signal"
	else not_ok "monitor sees the service's signal: $(cat "$m")"; fi
	if grep -q "from someone else" "$m"; then not_ok "monitor --dest saw a signal from another sender"
	else ok "monitor --dest does not see the same signal from another sender"; fi
else
	not_ok "monitor did not start: $(cat "$m")"; not_ok "monitor (skipped)"
fi
stop "$mon_pid"

# monitor of the driver sees NameOwnerChanged of a name being taken, i.e. a
# signal caused by a method call (RequestName) of another peer
m2=$T/monitor2.out
bg timeout -k 2 10 gdbus monitor --session --dest org.freedesktop.DBus >"$m2" 2>&1
mon_pid=$BG_PID
if wait_grep 'is owned by' "$m2" 5; then
	g call $DRV --method org.freedesktop.DBus.RequestName com.example.GdbusMonitored 0 >/dev/null 2>&1
	if wait_grep "NameOwnerChanged \('com\.example\.GdbusMonitored', '', ':1\.[0-9]+'\)" "$m2" 5; then
		ok "monitor of the driver sees NameOwnerChanged after a RequestName call"
	else not_ok "monitor of the driver: $(cat "$m2")"; fi
else
	not_ok "monitor of the driver did not start: $(cat "$m2")"
fi
stop "$mon_pid"

# --- emit: a broadcast signal reaches a subscriber, a unicast one its destination
d=$T/dbus-monitor.out
bg timeout -k 2 10 dbus-monitor --session "type='signal',interface='com.example.GdbusEmit'" >"$d" 2>&1
dm_pid=$BG_PID
if wait_grep 'member=NameAcquired|member=NameLost' "$d" 5; then
	g emit --session --object-path /com/example/Emit --signal com.example.GdbusEmit.Sig "'emitted'" 42 >/dev/null 2>&1
	g emit --session --dest "${SVC_UNIQUE:-:1.0}" --object-path /com/example/Emit --signal com.example.GdbusEmit.Uni "'unicast'" >/dev/null 2>&1
	if wait_grep 'string "emitted"' "$d" 5 && grep -q 'member=Sig' "$d" && grep -q 'int32 42' "$d"; then ok "emit: the signal arrives with its arguments"
	else not_ok "emit: $(cat "$d")"; fi
	if wait_grep "destination=${SVC_UNIQUE:-none}.*member=Uni" "$d" 5; then ok "emit --dest: a unicast signal with its destination"
	else not_ok "emit --dest: $(cat "$d")"; fi
else
	not_ok "dbus-monitor did not start: $(cat "$d")"; not_ok "emit --dest (skipped)"
fi
stop "$dm_pid"
echo "1..$n"
