#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# tcp: and nonce-tcp: listeners with DBUS_COOKIE_SHA1, on loopback only
. "$(dirname "$0")/lib.sh"
d=$TEST_TMP/tcp.d
mkdir -p "$d"
cat > "$d/tcp.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>tcp:host=127.0.0.1,port=0</listen>
  <listen>nonce-tcp:host=127.0.0.1,port=0</listen>
  <auth>DBUS_COOKIE_SHA1</auth>
  <policy context="default">
    <allow send_destination="*"/><allow eavesdrop="true"/><allow own="*"/>
  </policy>
</busconfig>
CONF
"$BUS_DAEMON" --config-file="$d/tcp.conf" --nofork --print-address=3 3>"$d/addr" 2>"$d/log" &
pid=$!
for _ in $(seq 100); do [ -s "$d/addr" ] && break; sleep 0.05; done
addr=$(head -n 1 "$d/addr")
expect "two addresses are printed, the last <listen> first as dbus-daemon does" \
	'^nonce-tcp:host=127\.0\.0\.1,port=[0-9]+.*noncefile=.*;tcp:host=127\.0\.0\.1,port=[0-9]+' echo "$addr"
tcp=$(tr ';' '\n' <<<"$addr" | grep '^tcp:')
nonce=$(tr ';' '\n' <<<"$addr" | grep '^nonce-tcp:')
expect "GetId over tcp with DBUS_COOKIE_SHA1" 'string "[0-9a-f]{32}"' \
	env DBUS_SESSION_BUS_ADDRESS="$tcp" timeout 5 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId
expect "GetId over nonce-tcp" 'string "[0-9a-f]{32}"' \
	env DBUS_SESSION_BUS_ADDRESS="$nonce" timeout 5 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId
noport=$(sed 's/noncefile=[^,]*/noncefile=\/nonexistent/' <<<"$nonce")
expect "nonce-tcp without the right nonce is refused" 'Failed|rror' \
	env DBUS_SESSION_BUS_ADDRESS="$noport" timeout 5 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId
expect "GetConnectionUnixUser of a tcp peer fails as dbus-daemon's does" 'org.freedesktop.DBus.Error' \
	env DBUS_SESSION_BUS_ADDRESS="$tcp" timeout 5 dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixUser string::1.1
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
echo "1..$n"
