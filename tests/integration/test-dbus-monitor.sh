#!/bin/bash
# dbus-monitor (BecomeMonitor) sees the traffic between two other peers:
# signals, method calls, returns, errors; with and without match rules;
# the --profile and --pcap formats.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"
ds() { timeout -k 2 10 dbus-send --session "$@"; }
SVC=(--dest=com.example.MonSvc /com/example/Test)

if ! start_service com.example.MonSvc; then
	not_ok "the python service did not start"; echo "1..$n"; exit 0
fi

# start_monitor FILE ARGS...: dbus-monitor in the background, returns once it
# sees a probe signal (its BecomeMonitor is done); sets MON
start_monitor() {
	local f=$1 i; shift
	bg timeout -k 2 15 dbus-monitor --session "$@" >"$f" 2>&1
	MON=$BG_PID
	for ((i = 0; i < 100; i++)); do
		ds /com/example/Probe com.example.Probe.Ready >/dev/null 2>&1
		grep -aq 'com.example.Probe' "$f" && return 0
		sleep 0.05
	done
	return 1
}
# finish_monitor: one last probe (a different member) so that everything
# sent before it has been written, then stop the monitor
finish_monitor() {
	local f=$1 i
	for ((i = 0; i < 100; i++)); do
		ds /com/example/Probe com.example.Probe.Done >/dev/null 2>&1
		grep -aq 'Done' "$f" && break
		sleep 0.05
	done
	stop "$MON"
}
# has DESC FILE PATTERN: ok if FILE (newlines joined) matches PATTERN
has() { if tr '\n' '\036' <"$2" | grep -qE -- "$3"; then ok "$1"; else not_ok "$1: no /$3/ in: $(head -c 700 "$2")"; fi; }
hasnt() { if tr '\n' '\036' <"$2" | grep -qE -- "$3"; then not_ok "$1: /$3/ seen"; else ok "$1"; fi; }
R=$'[^\036]*'   # the rest of one line
RS=$'\036'

# --- no match rules: everything
f=$T/all.out
if start_monitor "$f"; then
	ds --print-reply "${SVC[@]}" com.example.Test.Echo string:echo-arg int32:7 >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Fail string:fail-arg >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Emit string:signal-arg >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.EmitTo string:"$SVC_UNIQUE" string:unicast-arg >/dev/null 2>&1
	names=$(ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames 2>&1)
	finish_monitor "$f"
	has "sees a method call between two peers, with its arguments" "$f" \
		"method call time=[0-9.]+ sender=:1\.[0-9]+ -> destination=com\.example\.MonSvc serial=[0-9]+ path=/com/example/Test; interface=com\.example\.Test; member=Echo"$'\036'"   string \"echo-arg\""$'\036'"   int32 7"
	has "sees the method return, with its arguments" "$f" \
		"method return time=[0-9.]+ sender=$SVC_UNIQUE -> destination=:1\.[0-9]+ serial=[0-9]+ reply_serial=[0-9]+"$'\036'"   string \"echo-arg\""$'\036'"   int32 7"
	has "sees the error, with its name and message" "$f" \
		"error time=[0-9.]+ sender=$SVC_UNIQUE -> destination=:1\.[0-9]+ error_name=com\.example\.Test\.Error\.Failed reply_serial=[0-9]+"$'\036'"   string \"fail-arg\""
	has "sees a broadcast signal" "$f" \
		"signal time=[0-9.]+ sender=$SVC_UNIQUE -> destination=\(null destination\) serial=[0-9]+ path=/com/example/Test; interface=com\.example\.Test; member=Hello"$'\036'"   string \"signal-arg\""
	has "sees a unicast signal" "$f" \
		"signal time=[0-9.]+ sender=$SVC_UNIQUE -> destination=$SVC_UNIQUE serial=[0-9]+ path=/com/example/Test; interface=com\.example\.Test; member=Hello"$'\036'"   string \"unicast-arg\""
	has "sees a client's Hello to the driver and its reply" "$f" \
		"method call time=[0-9.]+ sender=:1\.[0-9]+ -> destination=org\.freedesktop\.DBus serial=1 path=/org/freedesktop/DBus; interface=org\.freedesktop\.DBus; member=Hello"
	has "sees the driver's NameOwnerChanged broadcasts" "$f" "member=NameOwnerChanged"
	# the monitor lost its unique name: it is not listed as a peer
	mon_name=$(grep -o 'destination=:1\.[0-9]* serial=[0-9]* path=/org/freedesktop/DBus; interface=org.freedesktop.DBus; member=NameLost' "$f" | head -n 1 | sed 's/destination=\([^ ]*\).*/\1/')
	if [ -n "$mon_name" ] && ! grep -q "\"$mon_name\"" <<<"$names" && grep -q "\"$SVC_UNIQUE\"" <<<"$names"; then
		ok "the monitor got NameLost for its unique name and is not in ListNames"
	else not_ok "monitor's own name '$mon_name' in ListNames: $names"; fi
else
	not_ok "dbus-monitor did not start: $(head -c 300 "$f")"
fi

# --- with match rules: only what they match (rules are ORed)
f=$T/rules.out
if start_monitor "$f" "interface='com.example.Probe'" "type='method_call',member='Echo'" "type='error'" \
	"type='signal',sender='com.example.MonSvc',arg0='wanted'"; then
	ds --print-reply "${SVC[@]}" com.example.Test.Echo string:rule-echo >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Fail string:rule-fail >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Emit string:unwanted >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Emit string:wanted >/dev/null 2>&1
	ds /com/example/Test com.example.Test.Hello string:wanted >/dev/null 2>&1   # from another sender
	finish_monitor "$f"
	has "rules: sees the matching method call" "$f" "method call ${R}member=Echo"$'\036'"   string \"rule-echo\""
	has "rules: sees the error (type='error')" "$f" "error ${R}error_name=com\.example\.Test\.Error\.Failed"
	has "rules: sees the signal matching sender and arg0" "$f" "signal ${R}sender=$SVC_UNIQUE ${R}member=Hello"$'\036'"   string \"wanted\""
	hasnt "rules: not the signal whose arg0 differs" "$f" 'string "unwanted"'
	c=$(tr '\n' '\036' <"$f" | grep -oE "member=Hello"$'\036'"   string \"wanted\"" | wc -l)
	if [ "$c" = 1 ]; then ok "rules: not the same signal from another sender"; else not_ok "rules: $c signals Hello(wanted) seen, not 1"; fi
	hasnt "rules: not the method returns" "$f" "method return ${R}"$'\036'"   string \"rule-echo\""
	hasnt "rules: not the other method calls" "$f" "member=(Fail|Emit)"$'\036'
	hasnt "rules: not the driver's traffic" "$f" "interface=org\.freedesktop\.DBus; member=(Hello|NameOwnerChanged)"$'\036'
else
	not_ok "dbus-monitor with rules did not start: $(head -c 300 "$f")"
fi

# --- sender= and destination= a well-known name (what busctl monitor NAME
# uses): the calls to the name, and everything its owner sends
f=$T/names.out
if start_monitor "$f" "interface='com.example.Probe'" "sender='com.example.MonSvc'" "destination='com.example.MonSvc'"; then
	ds --print-reply "${SVC[@]}" com.example.Test.Echo string:name-echo >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Fail string:name-fail >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Emit string:name-signal >/dev/null 2>&1
	ds --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
	finish_monitor "$f"
	has "destination='well-known': sees the method call to the name" "$f" "method call ${R}destination=com\.example\.MonSvc ${R}member=Echo"$'\036'"   string \"name-echo\""
	has "sender='well-known': sees the method return of its owner" "$f" "method return ${R}sender=$SVC_UNIQUE ${R}"$'\036'"   string \"name-echo\""
	has "sender='well-known': sees the error of its owner" "$f" "error ${R}sender=$SVC_UNIQUE ${R}error_name=com\.example\.Test\.Error\.Failed"
	has "sender='well-known': sees the signal of its owner" "$f" "signal ${R}sender=$SVC_UNIQUE ${R}member=Hello"$'\036'"   string \"name-signal\""
	hasnt "sender/destination rules: not the traffic of others" "$f" "member=GetId"
else
	not_ok "dbus-monitor with sender/destination rules did not start: $(head -c 300 "$f")"
fi

# --- --profile
f=$T/profile.out
if start_monitor "$f" --profile; then
	ds --print-reply "${SVC[@]}" com.example.Test.Echo string:x >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Fail string:x >/dev/null 2>&1
	ds --print-reply "${SVC[@]}" com.example.Test.Emit string:x >/dev/null 2>&1
	finish_monitor "$f"
	t=$'\t'
	has "--profile: method call line" "$f" "(^|$RS)mc${t}[0-9.]+${t}[0-9]+${t}:1\.[0-9]+${t}com\.example\.MonSvc${t}/com/example/Test${t}com\.example\.Test${t}Echo"
	has "--profile: method return line" "$f" "(^|$RS)mr${t}[0-9.]+${t}[0-9]+${t}$SVC_UNIQUE${t}:1\.[0-9]+${t}[0-9]+"
	has "--profile: error line" "$f" "(^|$RS)err${t}[0-9.]+${t}[0-9]+${t}$SVC_UNIQUE${t}:1\.[0-9]+${t}[0-9]+"
	has "--profile: signal line" "$f" "(^|$RS)sig${t}[0-9.]+${t}[0-9]+${t}$SVC_UNIQUE${t}<none>${t}/com/example/Test${t}com\.example\.Test${t}Hello"
else
	not_ok "dbus-monitor --profile did not start: $(head -c 300 "$f")"
fi

# --- --pcap: a pcap file of DLT_DBUS (231) packets that are whole messages
f=$T/pcap.out
if start_monitor "$f" --pcap; then
	ds --print-reply "${SVC[@]}" com.example.Test.Echo string:pcap-payload >/dev/null 2>&1
	finish_monitor "$f"
	out=$("$PY" - "$f" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
magic, vmaj, vmin, _, _, snap, link = struct.unpack('<IHHiIII', data[:24])
assert magic == 0xa1b2c3d4, 'magic %x' % magic
assert link == 231, 'linktype %d' % link
off, n, echo = 24, 0, False
while off < len(data):
    sec, usec, incl, orig = struct.unpack('<IIII', data[off:off + 16])
    pkt = data[off + 16:off + 16 + incl]
    assert incl == orig == len(pkt), 'truncated packet'
    endian = '<' if pkt[0:1] == b'l' else '>'
    body, = struct.unpack(endian + 'I', pkt[4:8])
    fields, = struct.unpack(endian + 'I', pkt[12:16])
    assert 16 + ((fields + 7) & ~7) + body == len(pkt), 'packet is not one message'
    echo = echo or (pkt[1] == 1 and b'Echo' in pkt and b'pcap-payload' in pkt)
    off += 16 + incl
    n += 1
print('packets=%d echo=%s' % (n, echo))
EOF
)
	if grep -qE '^packets=[0-9]+ echo=True$' <<<"$out"; then ok "--pcap: valid pcap of whole messages, the method call in it ($out)"
	else not_ok "--pcap: $out"; fi
else
	not_ok "dbus-monitor --pcap did not start: $(head -c 300 "$f" | od -c | head -3)"
fi
echo "1..$n"
