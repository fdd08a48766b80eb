#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# What a new connection receives after Hello, on busbridged and on
# dbus-daemon with the same configurations: the Hello reply and the
# NameAcquired of its unique name, in this order and nothing else; with
# NO_REPLY_EXPECTED only the NameAcquired; with a receive rule that denies
# NameAcquired only the reply; the same while a monitor watches, and the
# monitor sees the call, the reply, NameOwnerChanged and NameAcquired.
# Also a pipelined Hello + GetNameOwner (one write): replies in order; and
# driver calls with NO_REPLY_EXPECTED: replies with a value and errors are
# sent all the same, empty replies are not.
# (busbridged answers Hello itself when no monitor watches, through the
# core otherwise: both paths are covered.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/plain.conf" "$T/plain.sock"
own_config "$T/deny.conf" "$T/deny.sock"
sed -i 's|</busconfig>|  <policy context="default"><deny receive_interface="org.freedesktop.DBus" receive_member="NameAcquired"/></policy>\n</busconfig>|' \
	"$T/deny.conf"

run_probe() { # DAEMON CONFIG NAME: the probe's lines on stdout
	start_bus "$3" "$2" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$3.log")"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 30 python3 - "$OWN_ADDR" <<'EOF'
import re, socket, sys, time
import dbuswire as W

path = W.parse_address(sys.argv[1])


def describe(m):
    typ, flags, serial, f, body = m
    kind = {W.METHOD_CALL: 'call', W.METHOD_RETURN: 'return', W.ERROR: 'error', W.SIGNAL: 'signal'}[typ]
    what = f.get(W.F_MEMBER) or f.get(W.F_ERROR_NAME) or ''
    arg = W.first_string(body) if body else ''
    # dbus-daemon's connection info also has comm="..." (doc/deviations.md)
    arg = re.sub(r' \(uid=\d+ pid=\d+[^)]*\)$', ' (uid pid)', arg or '')
    return '%s %s sender=%s dest=%s arg=%s' % (kind, what, f.get(W.F_SENDER), f.get(W.F_DESTINATION), arg)


def drain(c, secs=0.3):
    return c.drain(secs)


def unique_of(msgs):
    for m in msgs:
        if m[0] == W.METHOD_RETURN or (m[0] == W.SIGNAL and m[3].get(W.F_MEMBER) == 'NameAcquired'):
            return W.first_string(m[4])
    return None


def hello(flags=0, extra=b''):
    c = W.Conn(path, auth=True, hello=False)
    c.send(W.marshal(W.METHOD_CALL, c.next_serial(), {W.F_PATH: W.DRIVER[1], W.F_INTERFACE: W.DRIVER[2],
                     W.F_MEMBER: 'Hello', W.F_DESTINATION: W.DRIVER[0]}, flags=flags) + extra)
    msgs = drain(c)
    u = unique_of(msgs)
    # the unique name differs between buses: print it as :U
    lines = [describe(m).replace(u, ':U') if u else describe(m) for m in msgs]
    return c, lines


def show(title, lines):
    print('%s: %s' % (title, ' | '.join(lines) if lines else '(nothing)'))


c, l = hello()
show('hello', l)
c.close()
c, l = hello(flags=1)   # NO_REPLY_EXPECTED
show('hello no-reply', l)
c.close()
c, l = hello(extra=W.driver_call(2, 'GetNameOwner', 's', W.body_s('org.freedesktop.DBus')))
show('hello + GetNameOwner pipelined', l)
c.close()

# NO_REPLY_EXPECTED on driver calls: dbus-daemon still sends replies that
# carry a value, and errors; only empty replies are left out
c = W.Conn(path)
drain(c)
for member, sig, body in (('GetId', None, b''), ('NameHasOwner', 's', W.body_s('x.y')),
                          ('AddMatch', 's', W.body_s("type='signal'")), ('RequestName', 'su', W.body_s('a.b') + bytes(4)),
                          ('ReleaseName', 's', W.body_s('a.b')), ('RemoveMatch', 's', W.body_s("type='signal'")),
                          ('NoSuchMethod', None, b'')):
    c.send(W.marshal(W.METHOD_CALL, c.next_serial(), {W.F_PATH: W.DRIVER[1], W.F_INTERFACE: W.DRIVER[2],
                     W.F_MEMBER: member, W.F_DESTINATION: W.DRIVER[0]}, body, sig, flags=1))
    got = [describe(m) for m in drain(c) if m[0] != W.SIGNAL]
    show('no-reply-expected ' + member, [g.split(' arg=')[0].replace(c.unique, ':U') for g in got])
c.close()

# with a monitor
mon = W.Conn(path)
s = mon.next_serial()
mon.send(W.call(s, W.DRIVER[0], W.DRIVER[1], 'org.freedesktop.DBus.Monitoring', 'BecomeMonitor', 'asu', bytes(8)))
mon.wait_reply(s)
drain(mon)
c, l = hello()
show('hello, monitored', l)
seen = [describe(m) for m in drain(mon)]
u = None
for s in seen:
    if s.startswith('return ') and 'arg=:' in s:
        u = s.split('arg=')[1]
print('monitor: %s' % ' | '.join(x.replace(u, ':U') if u else x for x in seen))
c.close()
mon.close()
EOF
	stop "$OWN_PID"
}

for conf in plain deny; do
	ours=$(run_probe "$BUS_DAEMON" "$T/$conf.conf" "ours-$conf" 2>&1 | sed "s/^/$conf config, /")
	ref=$(run_probe /usr/bin/dbus-daemon "$T/$conf.conf" "ref-$conf" 2>&1 | sed "s/^/$conf config, /")
	compare_with_reference "$ours" "$ref" 12
done
echo "1..$n"
