#!/bin/bash
# Native kdbus peers beside classic clients on busbridged's kernel bus: a
# native peer (busbridge-native, on the project's C API) and classic
# clients (dbus-send, dbus-python) exchange method calls, replies, errors,
# signals under match rules, fds and NameOwnerChanged in both directions,
# and the XML policy applies to both.  Only on the kernel bus (the VM's
# second stage runs the suite with busbridged --kdbus); skipped elsewhere.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

NATIVE=${BUILDDIR:-}/native/busbridge-native
kbus=/sys/fs/kdbus/$(id -u)-busbridge-${BUS_PID:-0}/bus
if [ ! -e "$kbus" ] || [ ! -x "$NATIVE" ]; then
	skip "native peers need busbridged --kdbus (the VM's second stage)"
	echo "1..$n"
	exit 0
fi
export BUSBRIDGE_KDBUS_BUS=$kbus
native() { timeout -k 2 20 "$NATIVE" "$@"; }
# on a failure, what the peers and the daemons said ends the output
failures=0
eval "$(declare -f not_ok | sed '1s/not_ok/tap_not_ok/')"
not_ok() { failures=$((failures + 1)); tap_not_ok "$@"; }
_extra_cleanup='[ "$failures" = 0 ] || for f in "$T"/*.out "$T"/*.err "$T"/*.log "$TEST_TMP/daemon.log"; do
	[ -s "$f" ] && { echo "# == $f"; tail -n 15 "$f" | sed "s/^/#   /"; }; done'

IF=org.busbridge.Native
OBJ=/org/busbridge/Native

# ---- a native service, classic callers ----------------------------------------
bg timeout -k 2 100 "$NATIVE" --timeout 60000 serve org.busbridge.TestNative \
	"type='signal',interface='com.example.Test',member='Hello'" > "$T/serve.out" 2> "$T/serve.err"
NATIVE_PID=$BG_PID
if ! wait_grep '^ready ' "$T/serve.out" 10; then
	not_ok "a native peer owns a name: $(head -c 300 "$T/serve.err")"
	echo "1..$n"
	exit 0
fi
native_unique=$(sed -n 's/^ready //p' "$T/serve.out")
ok "a native peer says HELLO on $kbus and owns a name ($native_unique)"

expect "a classic client sees the native peer as the owner of its name" "string \"$native_unique\"" \
	dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetNameOwner \
	string:org.busbridge.TestNative
serve_pid=$(pgrep -f "^$NATIVE --timeout 60000 serve org.busbridge.TestNative")
expect "GetConnectionUnixUser of the native peer: the kernel's uid" "uint32 $(id -u)" \
	dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixUser \
	string:org.busbridge.TestNative
expect "GetConnectionUnixProcessID of the native peer: the kernel's pid" "uint32 $serve_pid" \
	dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
	string:"$native_unique"
expect "GetConnectionCredentials of the native peer" "UnixUserID.*uint32 $(id -u).*ProcessID|ProcessID.*uint32 $serve_pid" \
	bash -c "dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionCredentials \
	string:org.busbridge.TestNative | tr '\n' ' '"
expect "classic → native: a method call and its reply" 'string "hello".*int32 42' \
	bash -c "dbus-send --print-reply --dest=org.busbridge.TestNative $OBJ $IF.Echo string:hello int32:42 | tr '\n' ' '"
expect "classic → native, by unique name" 'uint64 7' \
	dbus-send --print-reply --dest="$native_unique" $OBJ $IF.Echo uint64:7
expect "classic → native: an error" "Error org.busbridge.Native.Error.Failed: failed as asked" \
	dbus-send --print-reply --dest=org.busbridge.TestNative $OBJ $IF.Fail
expect "classic → native: an unknown method" "Error org.freedesktop.DBus.Error.UnknownMethod" \
	dbus-send --print-reply --dest=org.busbridge.TestNative $OBJ $IF.Nope
expect "classic → native: an fd the native peer reads" '^fd from classic$' \
	"$PY" -c "
import dbus, os
o = dbus.SessionBus().get_object('org.busbridge.TestNative', '$OBJ')
r, w = os.pipe(); os.write(w, b'fd from classic'); os.close(w)
print(o.ReadFd(dbus.types.UnixFd(r), dbus_interface='$IF'))"
echo 'fd from native' > "$T/native-file"
expect "native → classic: an fd in a reply, read by the classic caller" '^fd from native$' \
	"$PY" -c "
import dbus, os
o = dbus.SessionBus().get_object('org.busbridge.TestNative', '$OBJ')
fd = o.SendFd('$T/native-file', dbus_interface='$IF').take()
print(os.read(fd, 100).decode().strip())"

# ---- a classic service, native callers -----------------------------------------
start_service com.example.NativeCaller
expect "native → classic: a method call and its reply" "^method_return $SVC_UNIQUE \"hi\" 7$" \
	native call com.example.NativeCaller /com/example/Test com.example.Test Echo s:hi u:7
expect "native → classic, by unique name" "^method_return $SVC_UNIQUE true$" \
	native call "$SVC_UNIQUE" /com/example/Test com.example.Test Echo b:true
out=$(native call com.example.NativeCaller /com/example/Test com.example.Test Fail s:boom 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q '^error .* com.example.Test.Error.Failed "boom"$' <<<"$out"; then
	ok "native → classic: an error (exit 1)"
else
	not_ok "native → classic: an error: exit $rc, $out"
fi
expect "native → classic: an fd the classic service reads" '"fd from native' \
	native call com.example.NativeCaller /com/example/Test com.example.Test ReadFd "h:$T/native-file"
expect "classic → native: an fd in a reply" 'fd:"data from the service"' \
	native call com.example.NativeCaller /com/example/Test com.example.Test GetFd
expect "native → a name nobody owns: ServiceUnknown from the kernel" 'No such device|No such process' \
	native call com.example.Nobody /x com.example.Test Echo
expect "native → the bus driver: refused, the kernel does the driver's work" 'not supported' \
	native call org.freedesktop.DBus / org.freedesktop.DBus ListNames
# what the kernel passes without looking: busbridged takes from a native
# peer only whole dbus1 messages that name their true sender
FORGE=${BUILDDIR:-}/tests/integration/native-forge
if [ -x "$FORGE" ]; then
	expect "a native peer's call sent by hand is answered (the control)" '^answered method_return$' \
		timeout 20 "$FORGE" good com.example.NativeCaller
	for mode in sender no-sender body fds; do
		expect "a native peer's call with a bad $mode field or body never reaches the classic client" \
			'^no answer$' timeout 20 "$FORGE" $mode com.example.NativeCaller
	done
	if [ "$(grep -c 'Rejected message from native peer' "$TEST_TMP/daemon.log")" -ge 4 ]; then
		ok "busbridged logs each message it did not take from a native peer"
	else
		not_ok "the log of the messages not taken: $(grep -i native "$TEST_TMP/daemon.log" | head -c 300)"
	fi
else
	skip "native-forge is not built ($FORGE)"
fi
expect "native → classic: NoReply when the callee exits without answering" \
	'org.freedesktop.DBus.Error.NoReply' \
	native call com.example.NativeCaller /com/example/Test com.example.Test ExitWithoutReply
stop "$SVC_PID"

# ---- signals under match rules ---------------------------------------------------
start_service com.example.NativeSignals
dbus-send --print-reply --dest=com.example.NativeSignals /com/example/Test com.example.Test.Emit string:from-classic > /dev/null
if wait_grep "^signal $SVC_UNIQUE /com/example/Test com.example.Test.Hello \"from-classic\"$" "$T/serve.out" 5; then
	ok "classic → native: a broadcast signal the native peer's rule takes"
else
	not_ok "classic → native: a broadcast signal: $(tail -n 3 "$T/serve.out")"
fi

# a classic listener with a rule on org.busbridge.Native.Pinged
cat > "$T/listen.py" <<'EOF'
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()
def got(*args, **kw):
    print(kw['member'], kw['sender'], *args, flush=True)
bus.add_signal_receiver(got, dbus_interface='org.busbridge.Native', signal_name='Pinged',
                        sender_keyword='sender', member_keyword='member')
bus.add_signal_receiver(got, dbus_interface='org.freedesktop.DBus', signal_name='NameOwnerChanged',
                        arg0='org.busbridge.Late', sender_keyword='sender', member_keyword='member')
print('ready', flush=True)
GLib.timeout_add_seconds(30, loop.quit)
loop.run()
EOF
bg "$PY" "$T/listen.py" > "$T/listen.out" 2> "$T/listen.err"
wait_grep '^ready' "$T/listen.out" 10
dbus-send --print-reply --dest=org.busbridge.TestNative $OBJ $IF.Emit string:asked > /dev/null
native emit $OBJ $IF Unwanted s:nobody-listens
native emit $OBJ $IF Pinged s:direct
if wait_grep '^Pinged :1\.[0-9]+ direct$' "$T/listen.out" 5 && grep -q "^Pinged $native_unique asked$" "$T/listen.out"; then
	ok "native → classic: broadcast signals the classic client's rule takes"
else
	not_ok "native → classic: broadcast signals: $(head -c 300 "$T/listen.out") $(head -c 300 "$T/listen.err")"
fi
if grep -q nobody-listens "$T/listen.out"; then
	not_ok "native → classic: a signal no rule takes is not delivered"
else
	ok "native → classic: a signal no rule takes is not delivered"
fi

# ---- NameOwnerChanged both ways ----------------------------------------------------
bg timeout -k 2 30 "$NATIVE" --count 2 --timeout 15000 listen \
	"type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='com.example.NocTest'" \
	> "$T/noc.out" 2> "$T/noc.err"
wait_grep '^ready' "$T/noc.out" 10
start_service com.example.NocTest
noc_unique=$SVC_UNIQUE
stop "$SVC_PID"
if wait_grep "NameOwnerChanged \"com.example.NocTest\" \"$noc_unique\" \"\"$" "$T/noc.out" 5 &&
	grep -q "^signal org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameOwnerChanged \"com.example.NocTest\" \"\" \"$noc_unique\"$" "$T/noc.out"; then
	ok "classic → native: NameOwnerChanged of a classic client's name, taken and released"
else
	not_ok "classic → native: NameOwnerChanged: $(head -c 400 "$T/noc.out") $(head -c 200 "$T/noc.err")"
fi
bg timeout -k 2 30 "$NATIVE" --timeout 3000 serve org.busbridge.Late > "$T/late.out" 2>&1
wait_grep '^ready' "$T/late.out" 10
late_unique=$(sed -n 's/^ready //p' "$T/late.out")
if wait_grep "^NameOwnerChanged org.freedesktop.DBus org.busbridge.Late  $late_unique$" "$T/listen.out" 5; then
	ok "native → classic: NameOwnerChanged of a native peer's name"
else
	not_ok "native → classic: NameOwnerChanged: $(tail -n 3 "$T/listen.out")"
fi

# ---- the XML policy, applied to both ------------------------------------------------
own_config "$T/policy.conf" "$T/policy.sock"
sed -i 's|</busconfig>|<policy context="default">\
<allow send_destination="com.example.PolicyTest"/>\
<deny send_destination="org.busbridge.Guarded"/>\
<deny send_interface="com.example.Test" send_member="Fail"/>\
<deny receive_interface="org.busbridge.Native" receive_member="Secret"/>\
<allow own="org.busbridge.NobodyOwns"/>\
<deny own="org.busbridge.Forbidden"/>\
</policy>\n</busconfig>|' "$T/policy.conf"
if start_bus policy "$T/policy.conf"; then
	pbus=/sys/fs/kdbus/$(id -u)-busbridge-$OWN_PID/bus
	bg env BUSBRIDGE_KDBUS_BUS="$pbus" "$NATIVE" --timeout 20000 serve org.busbridge.Guarded > "$T/guard.out" 2>&1
	wait_grep '^ready' "$T/guard.out" 10
	expect "policy: a classic client may not call the native peer's denied name" \
		'Error org.freedesktop.DBus.Error.AccessDenied' \
		dbus-send --bus="$OWN_ADDR" --print-reply --dest=org.busbridge.Guarded $OBJ $IF.Echo string:x
	start_service com.example.PolicyTest "$OWN_ADDR"
	expect "policy: the native peer's call that the send rules deny gets AccessDenied" \
		'org.freedesktop.DBus.Error.AccessDenied "Rejected send message' \
		env BUSBRIDGE_KDBUS_BUS="$pbus" "$NATIVE" call com.example.PolicyTest /com/example/Test com.example.Test Fail s:x
	expect "policy: the native peer's other calls pass" "^method_return $SVC_UNIQUE \"x\"$" \
		env BUSBRIDGE_KDBUS_BUS="$pbus" "$NATIVE" call com.example.PolicyTest /com/example/Test com.example.Test Echo s:x
	expect "policy: a classic call the native peer's receive rules deny gets AccessDenied" \
		'Error org.freedesktop.DBus.Error.AccessDenied' \
		dbus-send --bus="$OWN_ADDR" --print-reply --dest="$(sed -n 's/^ready //p' "$T/guard.out")" $OBJ $IF.Secret
	# a native peer of another user: the kernel decides its NAME_ACQUIRE
	# and TALK by the entries compiled from the XML policy
	if command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
		as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env BUSBRIDGE_KDBUS_BUS="$pbus" \
			timeout -k 2 20 "$NATIVE" "$@"; }
		expect "policy: another user's native peer owns a name the XML lets everyone own" '^ready :1\.' \
			as_nobody --count 0 serve org.busbridge.NobodyOwns
		expect "policy: another user's native peer may not own a name the XML denies" \
			'cannot own org.busbridge.Forbidden: Operation not permitted' \
			as_nobody --count 0 serve org.busbridge.Forbidden
		expect "policy: another user's native peer calls a classic service the XML names" \
			"^method_return $SVC_UNIQUE \"y\"$" \
			as_nobody call com.example.PolicyTest /com/example/Test com.example.Test Echo s:y
		expect "policy: another user's native peer's call the send rules deny gets AccessDenied" \
			'org.freedesktop.DBus.Error.AccessDenied "Rejected send message' \
			as_nobody call com.example.PolicyTest /com/example/Test com.example.Test Fail s:y
		bg setpriv --reuid=nobody --regid=nogroup --clear-groups env BUSBRIDGE_KDBUS_BUS="$pbus" \
			timeout -k 2 30 "$NATIVE" --timeout 20000 serve org.busbridge.NobodyOwns > "$T/nobody.out" 2>&1
		wait_grep '^ready' "$T/nobody.out" 10
		expect "policy: GetConnectionUnixUser of another user's native peer" "uint32 $(id -u nobody)" \
			dbus-send --bus="$OWN_ADDR" --print-reply --dest=org.freedesktop.DBus / \
			org.freedesktop.DBus.GetConnectionUnixUser string:org.busbridge.NobodyOwns
	else
		skip "policy: another user's native peer (no setpriv or no user nobody)"
	fi
	if grep -q 'Rejected send message.*sender=":1\.[0-9]*" (uid=0 .*member="Fail"' "$T/policy.log"; then
		ok "policy: the refusal of the native peer's message is logged with its credentials"
	else
		not_ok "policy: the refusal is logged: $(grep -i rejected "$T/policy.log" | head -c 400)"
	fi
	stop "$OWN_PID"
else
	not_ok "policy: a bus of its own"
fi

stop "$NATIVE_PID"
echo "1..$n"
