#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Per-user quotas (kdbus/user.h): on a bus of our own, a reader that stops
# reading (uid A) is flooded with calls by uid B until B gets
# org.freedesktop.DBus.Error.LimitsExceeded; a third uid C is unaffected:
# its call to the same reader is queued, not refused, its driver calls are
# answered, and it gets the reader's reply once the reader reads again.
# Needs root (the clients run as three uids, via setpriv); against
# dbus-daemon, which has no per-user share, only B's LimitsExceeded is
# checked.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v useradd >/dev/null; then
	skip "per-user quotas: needs root, setpriv and useradd"; echo "1..$n"; exit 0
fi
# three users (the bus resolves their groups, so they must exist)
for u in bbquota-r bbquota-b bbquota-c; do
	id -u $u >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin $u || { skip "cannot create user $u"; echo "1..$n"; exit 0; }
done
UID_R=$(id -u bbquota-r) UID_B=$(id -u bbquota-b) UID_C=$(id -u bbquota-c)
chmod 755 "$T"
own_config "$T/quota.conf" "$T/quota.sock" max_outgoing_bytes=4000000 max_replies_per_connection=100000
sed -i 's|<policy context="default">|<policy context="default">\n    <allow user="*"/>|' "$T/quota.conf"
if ! start_bus quota "$T/quota.conf"; then
	not_ok "the bus did not start: $(head -c 300 "$T/quota.log")"; echo "1..$n"; exit 0
fi
QADDR=$OWN_ADDR

# peer NAME UID ROLE: a quota-peer.py as UID with pipes $NAME_IN / $NAME_OUT
peer() {
	local name=$1 uid=$2 role=$3
	mkfifo "$T/$name.in" "$T/$name.out"
	env HOME="$T" setpriv --reuid=$uid --regid=$(id -g $uid) --clear-groups timeout -k 2 60 \
		"$PY" "$here/quota-peer.py" "$QADDR" "$role" <"$T/$name.in" >"$T/$name.out" 2>"$T/$name.err" &
	_pids+=($!)
	eval "exec {${name}_w}>\"$T/$name.in\" {${name}_r}<\"$T/$name.out\""
}
say() { local fd=${1}_w; echo "$2" >&${!fd}; }
hear() { local fd=${1}_r line; IFS= read -r -t ${2:-20} line <&${!fd}; echo "$line"; }

peer R $UID_R reader; peer B $UID_B sender; peer C $UID_C sender
for p in R B C; do
	[ "$(hear $p)" = ready ] || { not_ok "peer $p did not start: $(head -c 300 "$T/$p.err")"; echo "1..$n"; exit 0; }
done

say B "flood 2000 65536"
res=$(hear B 60)
set -- $res
if [ "${3:-}" = org.freedesktop.DBus.Error.LimitsExceeded ] && [ "${2:-0}" -gt 0 ]; then
	ok "uid $UID_B flooding a reader that does not read gets LimitsExceeded after $2 calls of 64 KiB"
else
	not_ok "uid $UID_B flooding: expected LimitsExceeded, got '$res' $(head -c 300 "$T/B.err")"
fi
B_SENT=${2:-0}

say C call
res=$(hear C 10); getid=$(hear C 10)
if [[ $BUS_DAEMON == *dbus-daemon* ]]; then
	skip "dbus-daemon has no per-user share: uid $UID_C's call got '$res'"
else
	expect "uid $UID_C's call to the same reader is queued, not refused" '^queued$' echo "$res"
fi
set -- $getid
if [ "${1:-}" = getid ] && [ "${2:-9999}" -lt 1000 ]; then
	ok "uid $UID_C's GetId is answered in ${2} ms"
else
	not_ok "uid $UID_C's GetId: '$getid'"
fi
say B "flood 1 65536"
expect "uid $UID_B stays over its share" 'LimitsExceeded' hear B 10

say R serve
[ "$(hear R)" = serving ] || not_ok "the reader did not start serving"
if [[ $BUS_DAEMON != *dbus-daemon* ]]; then
	say C wait
	expect "uid $UID_C gets the reader's reply once it reads" '^reply$' hear C 15
fi
echo "# uid $UID_B sent $B_SENT calls before LimitsExceeded"
echo "1..$n"
