#!/usr/bin/python3
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# ReloadConfig under load: several clients call a service continuously
# while the policy is reloaded back and forth between a configuration
# that allows the method and one that denies it.  Checks that
#  - no call is lost: each gets the service's reply or AccessDenied;
#  - a decision changes only at the swap: every call sent after a reload's
#    reply and answered before the next reload was asked for has the
#    decision of the configuration that reload installed;
#  - a broken file keeps the running policy, and the error reply names the
#    file and the line;
#  - connections, names and match rules survive the reloads;
#  - SIGHUP reloads too.
# Runs its own bus ($BUS_DAEMON, also /usr/bin/dbus-daemon) on a copy of
# $TEST_CONFIG.  Prints TAP.
import os
import shutil
import signal
import subprocess
import sys
import re
import time

import dbus
import dbus.bus
import dbus.lowlevel as L
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
TMP = os.path.join(os.environ['TEST_TMP'], 'test-policy-reload.d')
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
DAEMON = os.environ['BUS_DAEMON']
SOCK = os.path.join(TMP, 'bus')
CONF = os.path.join(TMP, 'bus.conf')
NAME, IFACE, PATH = 'org.example.PolicyReload', 'org.example.PolicyReload', '/org/example/PolicyReload'
DENIED = 'org.freedesktop.DBus.Error.AccessDenied'
N_CLIENTS, IN_FLIGHT, N_RELOADS = 4, 4, 12

_n = 0


def tap(good, desc, diag=''):
    global _n
    _n += 1
    print('%s %d - %s%s' % ('ok' if good else 'not ok', _n, desc, (': ' + diag) if diag and not good else ''))
    sys.stdout.flush()


with open(os.environ['TEST_CONFIG']) as f:
    BASE = f.read()
BASE = re.sub(r'<listen>[^<]*</listen>', '<listen>unix:path=%s</listen>' % SOCK, BASE)


def config(deny, broken=False):
    if broken:
        return BASE.replace('</busconfig>', '  <policy context="default">\n    <allow own=\n</busconfig>\n', 1)
    extra = ''
    if deny:
        extra = ('  <policy context="default">\n'
                 '    <deny send_destination="%s" send_interface="%s" send_member="Call"/>\n'
                 '  </policy>\n') % (NAME, IFACE)
    return BASE.replace('</busconfig>', extra + '</busconfig>', 1)


def write_config(text):
    tmp = CONF + '.new'
    with open(tmp, 'w') as f:
        f.write(text)
    os.rename(tmp, CONF)


write_config(config(deny=False))
log = open(os.path.join(TMP, 'daemon.log'), 'wb')
daemon = subprocess.Popen([DAEMON, '--config-file=' + CONF, '--nofork', '--print-address=1'],
                          stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
addr = daemon.stdout.readline().decode().strip()
if not addr:
    tap(False, 'the bus starts')
    print('1..%d' % _n)
    sys.exit(1)

loop = GLib.MainLoop()
ctx = GLib.MainContext.default()


def conn():
    return dbus.bus.BusConnection(addr)


def iterate_until(cond, secs):
    end = time.monotonic() + secs
    tick = GLib.timeout_add(5, lambda: True)     # wakes the loop to look at the clock
    while not cond() and time.monotonic() < end:
        ctx.iteration(True)
    GLib.source_remove(tick)
    return cond()


# the service: replies to every call; counts the signals its match rule brings
svc = conn()
svc.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
svc_unique = svc.get_unique_name()
seen_signals = []
svc.add_match_string("type='signal',interface='org.example.PolicyReload.Sig'")


def svc_filter(c, m):
    if m.get_type() == L.MESSAGE_TYPE_METHOD_CALL and m.get_destination() in (NAME, svc_unique):
        if not m.get_no_reply():
            c.send_message(L.MethodReturnMessage(m))
        return L.HANDLER_RESULT_HANDLED
    if m.get_type() == L.MESSAGE_TYPE_SIGNAL and m.get_interface() == 'org.example.PolicyReload.Sig':
        seen_signals.append(m.get_member())
    return L.HANDLER_RESULT_NOT_YET_HANDLED


svc.add_message_filter(svc_filter)

# the clients: IN_FLIGHT calls each, a new one whenever one is answered
calls = []          # [send time, answer time, outcome]
running = [True]
clients = [conn() for _ in range(N_CLIENTS)]


def send_one(c):
    rec = [time.monotonic(), None, None]
    calls.append(rec)
    m = L.MethodCallMessage(NAME, PATH, IFACE, 'Call')

    def done(reply):
        rec[1] = time.monotonic()
        rec[2] = reply.get_error_name() if reply.get_type() == L.MESSAGE_TYPE_ERROR else 'reply'
        if running[0]:
            send_one(c)
    c.send_message_with_reply(m, done, 10.0, require_main_loop=True)


ctl = conn()
reloads = []        # [asked, answered, deny?]


def reload_call(deny):
    asked = time.monotonic()
    m = L.MethodCallMessage('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                            'ReloadConfig')
    res = {}

    def done(r):
        res['r'] = r
    ctl.send_message_with_reply(m, done, 10.0, require_main_loop=True)
    iterate_until(lambda: 'r' in res, 10)
    return asked, time.monotonic(), res.get('r')


for c in clients:
    for _ in range(IN_FLIGHT):
        send_one(c)
iterate_until(lambda: sum(1 for r in calls if r[2]) > 200, 10)

deny = False
bad_reload = None
for i in range(N_RELOADS):
    deny = not deny
    write_config(config(deny))
    asked, answered, r = reload_call(deny)
    if r is None or r.get_type() == L.MESSAGE_TYPE_ERROR:
        bad_reload = (i, r.get_error_name() if r is not None else 'no reply')
    reloads.append([asked, answered, deny])
    until = time.monotonic() + 0.12
    iterate_until(lambda: time.monotonic() >= until, 1)
tap(bad_reload is None, 'ReloadConfig under load answers every time', str(bad_reload))

# SIGHUP: back to the allowing configuration, without a reply to wait for;
# every call answered after a while must then be allowed
deny = False
write_config(config(deny))
t_hup = time.monotonic()
daemon.send_signal(signal.SIGHUP)
iterate_until(lambda: time.monotonic() - t_hup > 0.5, 1)
t_after = time.monotonic()
iterate_until(lambda: sum(1 for r in calls if r[0] > t_after and r[2]) > 50, 5)
late = [r[2] for r in calls if r[0] > t_after and r[2]]
tap(late and all(o == 'reply' for o in late), 'SIGHUP reloads: calls are allowed again',
    '%d calls, outcomes %s' % (len(late), sorted(set(late))))

# a broken file keeps the running (allowing) policy; the error names file and line
write_config(config(deny=True, broken=True))
asked, answered, r = reload_call(True)
text = ''
if r is not None and r.get_type() == L.MESSAGE_TYPE_ERROR:
    args = r.get_args_list()
    text = str(args[0]) if args else ''
tap(r is not None and r.get_type() == L.MESSAGE_TYPE_ERROR and os.path.basename(CONF) in text and
    re.search(r'line \d+|:\d+', text) is not None,
    'a broken file: ReloadConfig fails with the file and the line', repr(text[:300]))
log.flush()
with open(os.path.join(TMP, 'daemon.log'), 'rb') as f:
    logged = f.read().decode(errors='replace')
tap(re.search(re.escape(CONF) + r'.*line \d+', logged) is not None,
    'a broken file: the log names the file and the line', repr(logged[-300:]))
t_after = time.monotonic()
iterate_until(lambda: sum(1 for r in calls if r[0] > t_after and r[2]) > 50, 5)
late = [r[2] for r in calls if r[0] > t_after and r[2]]
tap(late and all(o == 'reply' for o in late), 'a broken file keeps the running policy',
    '%d calls, outcomes %s' % (len(late), sorted(set(late))))

# stop the load; every call must be answered
running[0] = False
iterate_until(lambda: all(r[2] for r in calls), 15)
outcomes = {}
for r in calls:
    outcomes[r[2]] = outcomes.get(r[2], 0) + 1
lost = [r for r in calls if r[2] not in ('reply', DENIED)]
tap(not lost, 'no call is lost over %d reloads: %d calls, each answered or AccessDenied' % (N_RELOADS, len(calls)),
    'outcomes %s' % outcomes)
tap(outcomes.get('reply', 0) > 0 and outcomes.get(DENIED, 0) > 0, 'both decisions occurred', str(outcomes))

# decisions change only at the swap
wrong, checked = [], 0
for k, (asked, answered, d) in enumerate(reloads):
    nxt = reloads[k + 1][0] if k + 1 < len(reloads) else t_hup
    want = DENIED if d else 'reply'
    for r in calls:
        if r[0] > answered and r[1] is not None and r[1] < nxt:
            checked += 1
            if r[2] != want:
                wrong.append((k, r[2]))
tap(checked > 0 and not wrong,
    'every call between two reloads (%d) has the decision of the configuration in force' % checked,
    '%d wrong: %s' % (len(wrong), wrong[:5]))

# connections, names and matches survived
try:
    owner = str(ctl.get_name_owner(NAME))
except dbus.exceptions.DBusException as e:
    owner = str(e)
tap(owner == svc_unique, 'the service still owns its name after the reloads', owner)
sig = L.SignalMessage(PATH, 'org.example.PolicyReload.Sig', 'After')
clients[0].send_message(sig)
iterate_until(lambda: 'After' in seen_signals, 5)
tap('After' in seen_signals, "the service's match rule still delivers after the reloads")

for c in clients + [ctl, svc]:
    c.close()
daemon.terminate()
try:
    daemon.wait(timeout=5)
except subprocess.TimeoutExpired:
    daemon.kill()
    daemon.wait()
print('1..%d' % _n)
