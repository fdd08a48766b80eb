#!/bin/bash
# busctl (sd-bus, systemd) against the bus: list, call, introspect, tree,
# status (credentials), get-property, emit, monitor.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"
b() { timeout -k 2 10 busctl --address="$DBUS_SESSION_BUS_ADDRESS" --no-pager "$@"; }
uid=$(id -u) user=$(id -un)

if ! start_service com.example.BusctlSvc; then
	not_ok "the python service did not start"; echo "1..$n"; exit 0
fi
SVC="com.example.BusctlSvc /com/example/Test com.example.Test"

# --- list: names with PID and user
out=$(b list 2>&1)
if grep -qE "^com\.example\.BusctlSvc +$SVC_PYPID +python3 +$user +$SVC_UNIQUE " <<<"$out"; then
	ok "list: the service's well-known name with its PID, process, user and connection"
else not_ok "list: no row for com.example.BusctlSvc pid $SVC_PYPID: $(head -c 600 <<<"$out")"; fi
if grep -qE "^${SVC_UNIQUE//./\\.} +$SVC_PYPID +python3 +$user " <<<"$out"; then ok "list: the service's unique name with its PID"
else not_ok "list: no row for $SVC_UNIQUE: $(head -c 600 <<<"$out")"; fi
if grep -qE "^org\.freedesktop\.DBus +$BUS_PID +[^ ]+ +$user " <<<"$out"; then ok "list: the driver with the bus daemon's PID ($BUS_PID)"
else not_ok "list: driver row without the daemon's PID $BUS_PID: $(grep DBus <<<"$out")"; fi
if grep -qE "^:1\.[0-9]+ +[0-9]+ +busctl +$user " <<<"$out"; then ok "list: busctl's own connection"
else not_ok "list: busctl's own unique name missing: $(head -c 600 <<<"$out")"; fi
out=$(b list --acquired 2>&1)
if grep -q '^com\.example\.BusctlSvc ' <<<"$out" && ! grep -q '^:1\.' <<<"$out"; then ok "list --acquired: well-known names only"
else not_ok "list --acquired: $(head -c 600 <<<"$out")"; fi

# --- call
expect "call GetId" '^s "[0-9a-f]{32}"$' b call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId
expect "call GetNameOwner of the service" "^s \"$SVC_UNIQUE\"$" \
	b call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetNameOwner s com.example.BusctlSvc
expect "call NameHasOwner of a missing name" '^b false$' \
	b call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s com.example.Nobody
expect "call the service: Echo of a{sv}, array, struct, variant" '^sa\{sv\}ai\(su\)v "hi" 2 "k" i 5 "l" as 2 "x" "y" 3 1 2 3 "st" 7 t 99$' \
	b call $SVC Echo 'sa{sv}ai(su)v' hi 2 k i 5 l as 2 x y 3 1 2 3 st 7 t 99
expect "call --json=short: the same data as JSON" '^\{"type":"sa\{sv\}","data":\["hi",\{"k":\{"type":"i","data":5\}\}\]\}$' \
	b --json=short call $SVC Echo 'sa{sv}' hi 1 k i 5
expect "call a method that fails: the error's message" 'Call failed: it broke' b call $SVC Fail s 'it broke'
expect "call --timeout to a peer that never replies: timeout" 'Connection timed out|Timeout|timed out' \
	b --timeout=1 call $SVC NeverReply
expect "call a missing name: ServiceUnknown's message" 'was not provided by any \.service files|ServiceUnknown|not activatable' \
	b call com.example.Nobody / com.example.X Y
expect "get-property Features" '^as [0-9]+( "[A-Za-z]+")*$' \
	b get-property org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus Features

# --- introspect and tree
out=$(b introspect org.freedesktop.DBus /org/freedesktop/DBus 2>&1)
for pat in '^org\.freedesktop\.DBus +interface ' '^\.RequestName +method +su +u ' '^\.NameOwnerChanged +signal +sss ' \
	'^\.Features +property +as ' '^org\.freedesktop\.DBus\.Introspectable +interface' '^\.GetConnectionCredentials +method +s +a\{sv\}'; do
	if grep -qE -- "$pat" <<<"$out"; then ok "introspect driver: /$pat/"
	else not_ok "introspect driver: no /$pat/ in: $(head -c 400 <<<"$out")"; fi
done
expect "introspect the service" '^\.ReadFd +method +h +s ' b introspect com.example.BusctlSvc /com/example/Test
expect "tree of the driver" '/org/freedesktop/DBus' b tree org.freedesktop.DBus
expect "tree of the service" '└─/com/example/Test' b tree com.example.BusctlSvc
out=$(b tree 2>&1)
if grep -q 'Service org.freedesktop.DBus:' <<<"$out" && grep -q 'Service com.example.BusctlSvc:' <<<"$out"; then
	ok "tree of every service"
else not_ok "tree: $(head -c 400 <<<"$out")"; fi

# --- status: the credentials of a peer and of the bus
out=$(b status com.example.BusctlSvc 2>&1)
for pat in "^PID=$SVC_PYPID\$" "^UID=$uid\$" "^EUID=$uid\$" "^GID=$(id -g)\$" '^Comm=python3$' "^UniqueName=$SVC_UNIQUE\$"; do
	if grep -qE -- "$pat" <<<"$out"; then ok "status of the service: $pat"
	else not_ok "status of the service: no /$pat/ in: $(head -c 400 <<<"$out")"; fi
done
out=$(b status 2>&1)
# BusID is the server's GUID, from the address run.sh was given
guid=$(sed -n 's/.*guid=\([0-9a-f]*\).*/\1/p' <<<"$DBUS_SESSION_BUS_ADDRESS")
if grep -qx "PID=$BUS_PID" <<<"$out" && grep -qx "BusID=$guid" <<<"$out"; then ok "status of the bus: the daemon's PID and the server GUID"
else not_ok "status of the bus (pid $BUS_PID, guid $guid): $(head -c 400 <<<"$out")"; fi

# --- monitor: a method call, a signal, a return and an error of the service
m=$T/monitor.out
bg timeout -k 2 10 busctl --address="$DBUS_SESSION_BUS_ADDRESS" --no-pager monitor com.example.BusctlSvc >"$m" 2>&1
mon=$BG_PID
if wait_grep 'Monitoring bus message stream' "$m" 5; then
	# busctl prints the banner before BecomeMonitor is answered: wait until
	# a probe signal shows up
	for ((i = 0; i < 100; i++)); do
		b call $SVC Emit s probe >/dev/null 2>&1
		grep -q '"probe"' "$m" && break
		sleep 0.05
	done
	b call $SVC Emit s busctl-signal >/dev/null 2>&1
	b call $SVC Fail s busctl-error >/dev/null 2>&1
	b emit /com/example/Test com.example.Test Hello s busctl-emit >/dev/null 2>&1
	wait_grep 'busctl-error' "$m" 5
	b call $SVC Emit s last >/dev/null 2>&1
	wait_grep '"last"' "$m" 5
	o=$(tr '\n' ' ' <"$m")
	if grep -qE 'Type=method_call .{0,200}Destination=com\.example\.BusctlSvc +Path=/com/example/Test +Interface=com\.example\.Test +Member=Emit' <<<"$o"; then
		ok "monitor sees the method call"; else not_ok "monitor: no method call: $(head -c 600 "$m")"; fi
	if grep -qE "Type=signal .{0,200}Sender=$SVC_UNIQUE +Path=/com/example/Test +Interface=com\.example\.Test +Member=Hello .{0,200}STRING \"busctl-signal\"" <<<"$o"; then
		ok "monitor sees the service's signal"; else not_ok "monitor: no signal: $(head -c 600 "$m")"; fi
	if grep -qE "Type=method_return .{0,200}Sender=$SVC_UNIQUE" <<<"$o"; then
		ok "monitor sees the method return"; else not_ok "monitor: no return: $(head -c 600 "$m")"; fi
	if grep -qE "Type=error .{0,200}Sender=$SVC_UNIQUE .{0,200}ErrorName=com\.example\.Test\.Error\.Failed .{0,200}busctl-error" <<<"$o"; then
		ok "monitor sees the error"; else not_ok "monitor: no error: $(head -c 600 "$m")"; fi
	if grep -q 'busctl-emit' <<<"$o"; then not_ok "monitor of the service saw a signal of another sender"
	else ok "monitor of a name does not see another sender's signal"; fi
else
	not_ok "busctl monitor did not start: $(cat "$m")"
fi
stop "$mon"
echo "1..$n"
