#!/bin/bash
# tests/vm/apparmor/guest.sh TREE [DAEMON-COMMAND...]: the AppArmor
# comparison, as root in a guest whose kernel runs AppArmor (the VM test's
# second stage runs it: the normal boot near its end, VM_APPARMOR=1
# tests/vm/run.sh alone; it can run by hand in any such machine with the
# tree's build/, apparmor, apparmor-utils, gcc and python3-dbus).
#
# It runs in a mount namespace of its own (it re-executes itself with
# unshare -m): where the kernel does not advertise AppArmor's D-Bus
# mediation (no features/dbus in apparmorfs: Debian's 6.1 answers the
# queries of profiles with dbus rules all the same), a copy of the feature
# set with dbus/mask "acquire send receive" is bound over
# /sys/kernel/security/apparmor/features there only, so that
# apparmor_parser compiles dbus rules and the bus daemons see D-Bus
# mediation, while the rest of the machine does not.  Where the kernel
# does not answer SO_PEERSEC for AppArmor, peersec-shim.c (built into
# /tmp/apparmor, preloaded into the bus daemons) answers as a kernel that
# does.
#
# It compiles tests/vm/apparmor/profiles and their reload variant (the
# lines "#RELOAD " uncommented) once and loads the profiles (apparmor_parser
# -S, then -r -B; every run starts from them).  Then for each
# daemon command (by default dbus-daemon twice, TREE/build/daemon/busbridged
# and, where /sys/fs/kdbus exists, busbridged --kdbus) it starts the daemon
# under the profile bus_daemon on its own socket with
# tests/vm/apparmor/bus.conf (a system bus, <apparmor mode="required"/>)
# and a service directory of two activatable services with
# AssumedAppArmorLabel, runs tests/vm/apparmor/scenario.py against it
# (clients under client_a, client_b, client_c, service, complainer and
# unconfined; a profile reload while they stay connected), stops it, adds
# its stderr, and compares its lines with the first dbus-daemon's: TAP,
# "ok - apparmor <daemon>: <line>" or "not ok - apparmor <daemon>: got X,
# dbus-daemon Y" (the second dbus-daemon run shows that the lines do not
# change from run to run); a daemon that does not start is one "not ok"
# with its stderr.  Last line: "# apparmor: N passed, N failed"; exit
# status 1 when anything differs.  The profiles are removed at the end.
set -u
if [ -z "${APPARMOR_GUEST_NS:-}" ]; then
	APPARMOR_GUEST_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
tree=${1:?usage: guest.sh TREE [DAEMON-COMMAND...]}
shift
here=$tree/tests/vm/apparmor
w=/tmp/apparmor
status=0
passed=0 failed=0
notok() { echo "not ok - apparmor $*"; failed=$((failed + 1)); status=1; }
ratelimit=
sec=/sys/kernel/security
aa=$sec/apparmor
finish() {
	[ -z "$ratelimit" ] || echo "$ratelimit" > /proc/sys/kernel/printk_ratelimit
	for p in bus_daemon client_a client_b client_c service complainer; do
		grep -q "^$p " $aa/profiles 2> /dev/null && echo -n $p > $aa/.remove
	done
	echo "# apparmor: $passed passed, $failed failed"
	exit $status
}
rm -rf $w && mkdir -p $w

if [ $# = 0 ]; then
	set -- /usr/bin/dbus-daemon /usr/bin/dbus-daemon "$tree/build/daemon/busbridged"
	[ -d /sys/fs/kdbus ] && set -- "$@" "$tree/build/daemon/busbridged --kdbus"
fi

grep -q " $sec " /proc/mounts || mount -t securityfs securityfs $sec
if ! [ -d $aa/features ] || [ "$(cat /sys/module/apparmor/parameters/enabled 2> /dev/null)" != Y ]; then
	notok "AppArmor is not active (lsm: $(cat $sec/lsm 2> /dev/null))"
	finish
fi
if [ -d $aa/features/dbus ]; then
	echo "# apparmor: the kernel advertises D-Bus mediation: $(cat $aa/features/dbus/mask)"
else
	# (in this mount namespace only)
	mkdir -p $w/features && mount -t tmpfs tmpfs $w/features &&
		cp -r $aa/features/. $w/features/ 2> /dev/null
	mkdir -p $w/features/dbus && echo "acquire send receive" > $w/features/dbus/mask &&
		mount --bind $w/features $aa/features ||
		{ notok "cannot add dbus to the AppArmor features"; finish; }
	echo "# apparmor: D-Bus mediation added to the advertised features (this mount namespace only)"
fi
# (in parallel: the shim, python's modules read once, the profiles
# compiled once, each run and the reloads load the binary)
gcc -O2 -Wall -shared -fPIC -o $w/peersec-shim.so "$here/peersec-shim.c" -ldl > $w/shim.log 2>&1 &
shim=$!
/usr/bin/python3 -c 'import dbus, dbus.service, dbus.mainloop.glib' > /dev/null 2>&1 &
sed 's/^#RELOAD //' "$here/profiles" > $w/reload
apparmor_parser -Q -K -S $w/reload > $w/reload.bin 2> $w/parser-reload.log &
reload=$!
if ! { apparmor_parser -Q -K -S "$here/profiles" > $w/profiles.bin &&
	apparmor_parser -r -B $w/profiles.bin && wait $reload ||
	{ cat $w/parser-reload.log; false; }; } > $w/parser.log 2>&1; then
	notok "apparmor_parser: $(tr '\n' ' ' < $w/parser.log | cut -c1-500)"
	finish
fi
if ! wait $shim; then
	notok "peersec-shim.c: $(tr '\n' ' ' < $w/shim.log | cut -c1-500)"
	finish
fi
wait
# every audit record must reach the kernel's log (there is no auditd)
ratelimit=$(cat /proc/sys/kernel/printk_ratelimit)
echo 0 > /proc/sys/kernel/printk_ratelimit
echo "# apparmor: profiles loaded: $(grep -cE '^(bus_daemon|client_[abc]|service|complainer) ' $aa/profiles) of 6; $(dbus-daemon --version | head -n 1)"

# run N COMMAND: the scenario against COMMAND, its lines in $w/N.lines
# (returns 1 when the daemon does not start: its stderr is in $w/N.err)
run() {
	local n=$1 cmd=$2 sock=$w/bus$1.sock pid i
	rm -rf "$sock" $w/$n.* $w/services$n
	mkdir -p $w/services$n
	printf '[D-BUS Service]\nName=com.example.Activatable\nExec=/usr/bin/aa-exec -p service -- /usr/bin/python3 %s --activated com.example.Activatable\nAssumedAppArmorLabel=service\n' \
		"$here/agent.py" > $w/services$n/com.example.Activatable.service
	printf '[D-BUS Service]\nName=com.example.Denied\nExec=/bin/false\nAssumedAppArmorLabel=client_c\n' \
		> $w/services$n/com.example.Denied.service
	sed "s|@SOCKET@|$sock|; s|@SERVICEDIR@|$w/services$n|" "$here/bus.conf" > $w/$n.conf
	# each run starts from the same state: the profiles
	apparmor_parser -r -B $w/profiles.bin > /dev/null 2>&1
	# (env after the change of profile: an exec that changes it is a secure
	# exec, without LD_PRELOAD)
	aa-exec -p bus_daemon -- env LD_PRELOAD=$w/peersec-shim.so $cmd --config-file=$w/$n.conf --nofork \
		--print-address=1 > $w/$n.addr 2> $w/$n.err &
	pid=$!
	for i in $(seq 60); do
		[ -S "$sock" ] && [ -s $w/$n.addr ] && break
		kill -0 $pid 2> /dev/null || break
		sleep 0.5
	done
	if ! [ -S "$sock" ] || ! kill -0 $pid 2> /dev/null; then
		kill $pid 2> /dev/null
		wait $pid
		echo "(exit status $?)" >> $w/$n.err
		return 1
	fi
	timeout -k 5 600 /usr/bin/python3 "$here/scenario.py" "unix:path=$sock" --profiles $w > $w/$n.lines 2> $w/$n.scenario.err
	i=$?
	[ $i = 0 ] || { echo "scenario: exit status $i"; grep -v '^ *[0-9.]* s: ' $w/$n.scenario.err | sed 's/^/scenario: /'; } >> $w/$n.lines
	echo "# apparmor: $(wc -l < $w/$n.lines) lines; steps at: $(sed -n 's/^ *\([0-9.]*\) s: \(.*\)/\2 \1 s,/p' $w/$n.scenario.err | tr '\n' ' ')"
	# Ubuntu's GetConnectionAppArmorSecurityContext, which Debian's
	# dbus-daemon does not have: what each daemon answers for the bus
	# itself and for a name nobody owns (busbridged: the bus's label
	# without its mode, and NameHasNoOwner)
	for i in org.freedesktop.DBus com.example.Nobody; do
		dbus-send --bus="unix:path=$sock" --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
			org.freedesktop.DBus.GetConnectionAppArmorSecurityContext string:$i 2>&1 |
			sed 's/^ *//; s/:.*//' | tr '\n' ' ' > $w/$n.context.$i
	done
	kill $pid
	wait $pid
	/usr/bin/python3 "$here/scenario.py" --normalize < $w/$n.err | sed 's/^/stderr: /' >> $w/$n.lines
	return 0
}

n=0
for cmd in "$@"; do
	n=$((n + 1))
	label=$(basename "${cmd%% *}")${cmd#"${cmd%% *}"}
	[ $n = 2 ] && [ "$cmd" = "$1" ] && label="$label (second run)"
	echo "# apparmor: $label (uptime $(cut -d' ' -f1 /proc/uptime) s)"
	if ! run $n "$cmd"; then
		notok "$label: does not start: $(tr '\n' ' ' < $w/$n.err | cut -c1-1000)"
		[ $n = 1 ] && finish
		continue
	fi
	case "$cmd" in
	*busbridged*)
		got=$(printf '%s | %s' "$(cat $w/$n.context.org.freedesktop.DBus)" "$(cat $w/$n.context.com.example.Nobody)" |
			tr -s ' ' | sed 's/ $//')
		want="bus_daemon | Error org.freedesktop.DBus.Error.NameHasNoOwner"
		if [ "$got" = "$want" ]; then
			echo "ok - apparmor $label: GetConnectionAppArmorSecurityContext (Ubuntu's): $got"
			passed=$((passed + 1))
		else
			notok "$label: GetConnectionAppArmorSecurityContext (Ubuntu's): got $got, want $want"
		fi;;
	*)
		echo "# apparmor: $label: GetConnectionAppArmorSecurityContext: $(cat $w/$n.context.org.freedesktop.DBus)";;
	esac
	[ $n = 1 ] && continue
	/usr/bin/python3 "$here/scenario.py" --compare $w/1.lines $w/$n.lines "$label" > $w/$n.tap
	cat $w/$n.tap
	passed=$((passed + $(grep -c '^ok ' $w/$n.tap)))
	failed=$((failed + $(grep -c '^not ok ' $w/$n.tap)))
	grep -q '^not ok ' $w/$n.tap && status=1
done
finish
