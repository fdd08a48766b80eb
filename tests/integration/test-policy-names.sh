#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Policy rules on names follow the names as they change hands, on
# busbridged as on dbus-daemon with the same configuration: a broadcast is
# refused to a receiver while it owns, or waits in the queue for, a name a
# deny send_destination rule names, and delivered again once it let the
# name go; the same for a unicast call to the name's owner, and a receive
# rule on the sender's name.  busbridged remembers policy answers and
# connections' names while no name changes hands: this is what must not go
# stale.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

own_config "$T/names.conf" "$T/names.sock"
sed -i 's|</busconfig>|  <policy context="default">\n    <deny send_destination="org.x.Denied" send_interface="org.t"/>\n    <deny receive_sender="org.x.Quiet" receive_interface="org.t"/>\n  </policy>\n</busconfig>|' \
	"$T/names.conf"

run_probe() { # DAEMON NAME: the probe's lines on stdout
	start_bus "$2" "$T/names.conf" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$2.log")"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 60 python3 - "$OWN_ADDR" <<'EOF'
import socket, struct, sys
import dbuswire as W

path = W.parse_address(sys.argv[1])
R, Q, S, O = (W.Conn(path) for _ in range(4))   # receiver, bystander, sender, other owner


def drain(c, secs=0.15):
    return c.drain(secs)


def sigs(c):
    return sum(1 for m in drain(c) if m[0] == W.SIGNAL and m[3].get(W.F_INTERFACE) == 'org.t')


def name_u(name, flags=0):
    b = W.Buf()
    b.string(name)
    b.u32(flags)
    return bytes(b.b)


def call(c, member, sig=None, body=b''):
    m = c.call_driver(member, sig, body)
    return struct.unpack('<I', m[4][:4])[0] if m[0] == W.METHOD_RETURN and len(m[4]) >= 4 else W.first_string(m[4])


for c in (R, Q):
    call(c, 'AddMatch', 's', W.body_s("type='signal',interface='org.t'"))
for c in (R, Q, S, O):
    drain(c)


def emit(tag):
    s = S.next_serial()
    S.send(W.marshal(W.SIGNAL, s, {W.F_PATH: '/t', W.F_INTERFACE: 'org.t', W.F_MEMBER: 'Sig'}))
    print('%s: R %d Q %d' % (tag, sigs(R), sigs(Q)))


def ping_R(tag):
    """a unicast call from S to R's unique name, answered by R"""
    s = S.next_serial()
    S.send(W.call(s, R.unique, '/t', 'org.t', 'Call'))
    got = [m for m in drain(R) if m[0] == W.METHOD_CALL]
    for m in got:
        R.send(W.marshal(W.METHOD_RETURN, R.next_serial(), {W.F_REPLY_SERIAL: m[2], W.F_DESTINATION: S.unique}))
    rep = [m for m in drain(S) if m[0] in (W.METHOD_RETURN, W.ERROR) and m[3].get(W.F_REPLY_SERIAL) == s]
    what = 'none' if not rep else ('return' if rep[0][0] == W.METHOD_RETURN else rep[0][3].get(W.F_ERROR_NAME))
    print('%s: call delivered %d, answer %s' % (tag, len(got), what))


emit('no names')
ping_R('call, no names')
emit('again, no names')
print('R owns org.x.Denied: %s' % call(R, 'RequestName', 'su', name_u('org.x.Denied')))
drain(R)
emit('R owns the name')
emit('again, R owns the name')
ping_R('call, R owns the name')
print('R releases it: %s' % call(R, 'ReleaseName', 's', W.body_s('org.x.Denied')))
drain(R)
emit('R let it go')
emit('again, R let it go')
print('O owns org.x.Denied: %s' % call(O, 'RequestName', 'su', name_u('org.x.Denied')))
print('R queues for it: %s' % call(R, 'RequestName', 'su', name_u('org.x.Denied')))
drain(R)
drain(O)
emit('R waits in the queue')
print('O releases it: %s' % call(O, 'ReleaseName', 's', W.body_s('org.x.Denied')))
drain(R)
emit('R owns it after O')
print('R releases it: %s' % call(R, 'ReleaseName', 's', W.body_s('org.x.Denied')))
drain(R)
emit('R without it again')
# the receive side: R refuses org.t from a sender owning org.x.Quiet
print('S owns org.x.Quiet: %s' % call(S, 'RequestName', 'su', name_u('org.x.Quiet')))
drain(S)
emit('S emits, owning org.x.Quiet')
emit('again, S owns org.x.Quiet')
print('S releases it: %s' % call(S, 'ReleaseName', 's', W.body_s('org.x.Quiet')))
drain(S)
emit('S let org.x.Quiet go')
EOF
	stop "$OWN_PID"
}

ours=$(run_probe "$BUS_DAEMON" ours 2>&1)
ref=$(run_probe /usr/bin/dbus-daemon ref 2>&1)
compare_with_reference "$ours" "$ref" 20
echo "1..$n"
