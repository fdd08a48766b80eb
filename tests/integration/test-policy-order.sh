#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Policy decisions that depend on the order of the configuration files and
# on the several names a connection owns, on busbridged as on dbus-daemon
# with the same configuration (tests/integration/policy-order-probe.py):
#
#  (a) eight files in one <includedir>: dbus-daemon reads them in
#      readdir() order, and the last matching rule of all of them decides
#      (the file read last denies own/send_destination, the first one
#      denies another name): RequestName, calls, unicast signals and
#      broadcasts to receivers owning one or both names, from root and
#      from an unprivileged user;
#  (b) the whole system configuration of this machine (system.conf and
#      every system.d file): a receiver owning every name root may own,
#      then one owning each pair of them, with the calls, unicast signals
#      and broadcasts the rules of those names talk about, from root and
#      from an unprivileged user, and signals from the receiver;
#  (c) six service files with one Name in a service directory: the one
#      readdir() returns first is the one activation starts.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

# (c)
# names such that readdir() does not return the first by name first
for try in 0 1 2 3 4 5 6 7 8 9; do
	rm -rf "$T/svc"; mkdir -p "$T/svc"
	for f in a b c d e f; do
		printf '[D-BUS Service]\nName=com.example.Dup\nExec=/bin/sh -c "echo %s >> %s/ran"\n' \
			$f$try "$T" >"$T/svc/$f$try.service"
	done
	[ "$(ls -U "$T/svc" | head -n 1)" != "$(ls "$T/svc" | head -n 1)" ] && break
done
cat >"$T/svc.conf" <<EOF
<busconfig><type>session</type><listen>unix:path=$T/svc.sock</listen><servicedir>$T/svc</servicedir>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
EOF
activated() { # DAEMON NAME: which service file activation ran
	rm -f "$T/ran"
	start_bus "$2" "$T/svc.conf" "$1" 2>/dev/null || { echo "bus did not start"; return; }
	# the service never takes the name: only its start matters, not the reply
	bg timeout -k 1 10 dbus-send --bus="$OWN_ADDR" --dest=org.freedesktop.DBus --print-reply / \
		org.freedesktop.DBus.StartServiceByName string:com.example.Dup uint32:0 >/dev/null 2>&1
	wait_grep . "$T/ran" 5
	sleep 0.2	# a second start would show as a second line
	stop "$BG_PID"
	cat "$T/ran" 2>/dev/null
	stop "$OWN_PID"
}
ours=$(activated "$BUS_DAEMON" ours-svc)
ref=$(activated /usr/bin/dbus-daemon ref-svc)
if [ -n "$ref" ] && [ "$ours" = "$ref" ]; then
	ok "service files of one Name: the first one readdir() returns wins ($ref.service of $(ls -U "$T/svc" | xargs))"
else
	not_ok "service files of one Name: busbridged ran [$ours], dbus-daemon [$ref] ($(ls -U "$T/svc" | xargs))"
fi

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
	skip "needs root and the user nobody (clients of two uids)"
	echo "1..$n"
	exit 0
fi
chmod 755 "$T"
probe=$here/policy-order-probe.py

run_probe() { # DAEMON CONFIG NAME MODE [ARGS]: the probe's lines on stdout
	start_bus "$3" "$2" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$3.log")"; return; }
	timeout -k 2 100 "$PY" "$probe" "$4" "$OWN_ADDR" "${@:5}" 2>&1
	stop "$OWN_PID"
}

compare() { # LABEL OURS REF MIN: one summary line per part, every difference listed
	local label=$1 ours=$2 ref=$3 min=$4 diffs
	diffs=$(diff <(echo "$ref") <(echo "$ours") | grep '^[<>]' | head -n 40)
	if [ "$(wc -l <<<"$ref")" -lt "$min" ]; then
		not_ok "$label: the reference run printed too little: $(head -c 300 <<<"$ref")"
	elif [ -z "$diffs" ]; then
		ok "$label: $(wc -l <<<"$ref") outcomes as dbus-daemon"
	else
		not_ok "$label: outcomes differ (< dbus-daemon, > busbridged)"
		sed 's/^/#   /' <<<"$diffs"
	fi
}

# (a)
"$PY" "$probe" dir-conf "$T/dir.conf" "$T/dir.sock" "$T/inc" 2>"$T/dir-order"
echo "$(sed 's/^#/# (a)/' "$T/dir-order")"
ours=$(run_probe "$BUS_DAEMON" "$T/dir.conf" ours-dir dir)
ref=$(run_probe /usr/bin/dbus-daemon "$T/dir.conf" ref-dir dir)
compare "eight files in one includedir" "$ours" "$ref" 50
# the outcomes that only readdir() order gives
for line in "own com.example.X by nobody: error:org.freedesktop.DBus.Error.AccessDenied" \
	"own com.example.Y by nobody: 1" \
	"S: call nobody -> com.example.R.S / com.example.I.Other: error:org.freedesktop.DBus.Error.AccessDenied"; do
	if grep -qxF -- "$line" <<<"$ref" && grep -qxF -- "$line" <<<"$ours"; then
		ok "includedir in readdir() order: $line"
	else
		not_ok "includedir in readdir() order: $line: dbus-daemon [$(grep -F -- "${line%: *}:" <<<"$ref")]," \
			"busbridged [$(grep -F -- "${line%: *}:" <<<"$ours")]"
	fi
done

# (b)
if [ -r /usr/share/dbus-1/system.conf ]; then
	"$PY" "$probe" system-conf "$T/system.conf" "$T/system.sock"
	ours=$(run_probe "$BUS_DAEMON" "$T/system.conf" ours-system system)
	ref=$(run_probe /usr/bin/dbus-daemon "$T/system.conf" ref-system system)
	compare "the system configuration, receivers owning names of several files" "$ours" "$ref" 100
else
	skip "no /usr/share/dbus-1/system.conf"
fi
echo "1..$n"
