#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# The compiled policy in the core (doc/policy.md): a configuration with
# 1200 names that only root may own (more kdbus policy entries than one
# policy holder carries), reloaded to one without them and back.  An
# unprivileged user (nobody) is refused exactly those names before, may
# own them after the first reload, and is refused again after the second;
# other names stay free throughout, and the daemon never falls back to
# checking the policy alone.  Needs root (setpriv to nobody); also passes
# against /usr/bin/dbus-daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers.sh"
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	skip "needs root, the user nobody and setpriv"; echo "1..$n"; exit 0
fi
chmod 755 "$T"
own_config "$T/base.conf" "$T/bus.sock"
sed -i 's|<policy context="default">|<policy context="default">\n    <allow user="*"/>|' "$T/base.conf"
{
	sed 's|</busconfig>||' "$T/base.conf"
	echo '  <policy context="default">'
	for i in $(seq 0 1199); do echo "    <deny own=\"com.example.Core.Name$i\"/>"; done
	echo '  </policy>'
	echo '  <policy user="root"><allow own_prefix="com.example.Core"/></policy>'
	echo '</busconfig>'
} >"$T/big.conf"
cp "$T/big.conf" "$T/bus.conf"
if ! start_bus core "$T/bus.conf"; then
	not_ok "the bus starts: $(head -c 300 "$T/core.log")"; echo "1..$n"; exit 0
fi

request() { # USER NAME: RequestName's answer (1) or the error name
	local as=()
	[ "$1" = root ] || as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${as[@]}" timeout 10 dbus-send --bus="$OWN_ADDR" --print-reply --dest=org.freedesktop.DBus \
		/org/freedesktop/DBus org.freedesktop.DBus.RequestName string:"$2" uint32:4 2>&1 |
		sed -n 's/^ *uint32 \([0-9]*\)$/\1/p; s/^Error \([^:]*\):.*/\1/p'
}
reload() {
	cp "$1" "$T/bus.conf"
	timeout 10 dbus-send --bus="$OWN_ADDR" --print-reply --dest=org.freedesktop.DBus / \
		org.freedesktop.DBus.ReloadConfig >/dev/null 2>&1
}
D=org.freedesktop.DBus.Error.AccessDenied
phase() { # LABEL EXPECTED-FOR-THE-LISTED-NAMES
	local got=() name want=$2
	for name in com.example.Core.Name0 com.example.Core.Name600 com.example.Core.Name1199; do
		got+=("$(request nobody $name)")
	done
	if [ "${got[*]}" = "$want $want $want" ]; then ok "$1: nobody gets $want for the listed names"
	else not_ok "$1: nobody gets $want for the listed names: ${got[*]}"; fi
	name=$(request nobody com.example.Core.Other)
	if [ "$name" = 1 ]; then ok "$1: a name without a rule is free"; else not_ok "$1: a name without a rule is free: $name"; fi
	name=$(request root com.example.Core.Name42)
	if [ "$name" = 1 ]; then ok "$1: root may own a listed name"; else not_ok "$1: root may own a listed name: $name"; fi
}
phase "1200 root-only names" $D
if reload "$T/base.conf"; then ok "reload without them"; else not_ok "reload without them"; fi
phase "after the reload" 1
if reload "$T/big.conf"; then ok "reload with them again"; else not_ok "reload with them again"; fi
phase "after the second reload" $D
if grep -q 'Cannot install the policy' "$T/core.log"; then
	not_ok "the policy stays installed in the core: $(grep 'Cannot install' "$T/core.log" | head -c 300)"
else
	ok "the policy stays installed in the core"
fi
echo "1..$n"
