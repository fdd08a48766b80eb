#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Messages the bus cannot simply deliver, on busbridged and on dbus-daemon
# with the same configurations (unroutable-probe.py has the cases):
#  - every message type, NO_REPLY_EXPECTED or not, to a name nobody holds
#    or a unique name that does not exist: ServiceUnknown, or
#    NameHasNoOwner with NO_AUTO_START, and monitors see both;
#  - replies nobody asked for: delivered where the policy allows them
#    (session.conf's eavesdrop="true", send_requested_reply="false"), else
#    AccessDenied with requested_reply="0"; a requested reply the policy
#    refuses gets requested_reply="1";
#  - the same to a name only a service file provides, whose service exits:
#    activation for every type (without NO_AUTO_START), and replies are
#    decided as unrequested before;
#  - fds: signals with fds reach the receivers and eavesdroppers that take
#    fds (not the others), a unicast to a receiver without fds is
#    NotSupported, UNIX_FD values beyond UNIX_FDS are not checked, a
#    message announcing more fds than it carries closes the sender.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"

# an activatable service that exits at once
mkdir -p "$T/services"
printf '[D-BUS Service]\nName=org.example.Unroutable.Exits\nExec=/bin/false\n' \
	>"$T/services/org.example.Unroutable.Exits.service"
own_config "$T/session.conf" "$T/session.sock"
sed -i "s|<servicedir>[^<]*</servicedir>|<servicedir>$T/services</servicedir>|" "$T/session.conf"
# a system bus's default policy (system.conf), calls allowed
system_config() { # OUT EXTRA-RULES [TYPE]
	cat >"$1" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>${3:-system}</type>
  <servicedir>$T/services</servicedir>
  <listen>unix:path=$T/$(basename "$1" .conf).sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
    <allow send_type="method_call"/>
    $2
  </policy>
</busconfig>
EOF
}
system_config "$T/system.conf" ""
# unrequested replies allowed by the sender's rules, not the receiver's
system_config "$T/send-unrequested.conf" \
	'<allow send_requested_reply="false" send_type="method_return"/><allow send_requested_reply="false" send_type="error"/>'
# ... and by both
system_config "$T/both-unrequested.conf" \
	'<allow send_requested_reply="false" send_type="method_return"/><allow send_requested_reply="false" send_type="error"/>
    <allow receive_requested_reply="false" receive_type="method_return"/><allow receive_requested_reply="false" receive_type="error"/>'
# system.conf's policy on a session bus (which activates without a helper),
# calls denied
system_config "$T/system-policy.conf" '<deny send_type="method_call"/><allow send_destination="org.freedesktop.DBus"/>' session
# a deny rule: by default for unrequested replies only
system_config "$T/deny-return.conf" '<deny send_type="method_return"/>'
# ... and one for requested replies too
system_config "$T/deny-requested.conf" '<deny send_requested_reply="true" send_type="method_return"/>'

# busbridged on kdbus.ko (the VM's second stage): a broadcast with fds
# goes without them (doc/deviations.md)
[ -e "/sys/fs/kdbus/$(id -u)-busbridge-${BUS_PID:-0}/bus" ] &&
	KNOWN_DIFFERENCE='broadcast signal with (an fd|two fds) # on kdbus.ko a broadcast goes without its fds (the final ABI refuses them)'

run_probe() { # DAEMON CONFIG NAME PART: the probe's lines on stdout
	start_bus "$3" "$2" "$1" 2>/dev/null || { echo "bus did not start: $(head -c 200 "$T/$3.log")"; return; }
	timeout -k 2 60 python3 "$here/unroutable-probe.py" "$OWN_ADDR" "$4" 2>&1
	stop "$OWN_PID"
}

# (test-unrequested-replies.sh runs the second half: each part stays well
# within run.sh's time limit)
if [ "${UNROUTABLE_SET:-}" = replies ]; then
	runs="system:replies send-unrequested:replies both-unrequested:replies deny-return:replies deny-requested:replies"
else
	runs="session:names,replies,fds,activation system-policy:activation,replies"
fi
for run in $runs; do
	conf=${run%%:*} part=${run#*:}
	ours=$(run_probe "$BUS_DAEMON" "$T/$conf.conf" "ours-$conf" "$part" | sed "s/^/$conf, /")
	ref=$(run_probe /usr/bin/dbus-daemon "$T/$conf.conf" "ref-$conf" "$part" | sed "s/^/$conf, /")
	compare_with_reference "$ours" "$ref" 5
done
echo "1..$n"
