#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
busdiff.py - differential tester: dbus-daemon against busbridged.

  busdiff.py --busbridged PATH [--reference PATH] [--mode ci|long]
             [--config FILE]... [--only REGEX] [--random SECONDS] [--seed N]
             [--random-config FILE]
             [--keep DIR]

Runs every scenario (scenarios.py: message types x destinations x flags x
registration states, driver methods, name queueing, monitors, eavesdroppers,
fds, policy probes with receivers owning names from several files) on
every configuration: the integration tests' session bus, Debian's
session.conf, the whole system bus of this machine (system.conf with every
file of system.d at once), each system.d file alone, and the synthetic
configurations of tests/policy-diff/configs (or the --config files given).
Each scenario runs once on each daemon; everything every connection
receives is written down (unique names and the driver's serials mapped,
not ignored) and compared.  --random runs seeded random sequences for the
given time and shrinks a failing one to a minimal reproducer.

Prints TAP, one line per scenario and configuration, a summary of the
compared exchanges per configuration and per scenario kind, and
"N passed, N failed, N skipped".  Needs root for the other identities
(bbtest1, bbtest2 and nobody; created if missing).
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, '..', 'policy-diff'))
sys.path.insert(0, os.path.join(here, '..', 'lib'))

import engine as E          # noqa: E402
import scenarios as S       # noqa: E402
import randomized as R      # noqa: E402

TOP = os.path.normpath(os.path.join(here, '..', '..'))
SYSTEM_CONF = '/usr/share/dbus-1/system.conf'
SESSION_CONF = '/usr/share/dbus-1/session.conf'


def system_d_files():
    out = []
    for d in ('/usr/share/dbus-1/system.d', '/etc/dbus-1/system.d'):
        if os.path.isdir(d):
            out += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith('.conf')]
    return out


def one_file_system_conf(path):
    """system.conf with path as its only system.d file"""
    t = open(SYSTEM_CONF).read()
    t = re.sub(r'<includedir>[^<]*</includedir>', '', t)
    return t.replace('</busconfig>', '<include>%s</include>\n</busconfig>' % path)


def configurations(args):
    """(name, kind, text, base, keep_user) of every configuration to run"""
    out = []
    if args.config:
        for p in args.config:
            out.append((os.path.basename(p), 'system' if '<type>system' in open(p).read() else 'session',
                        open(p).read(), os.path.dirname(os.path.abspath(p)), False))
        return out
    out.append(('test-session', 'session', open(os.path.join(TOP, 'data', 'test-session.conf.in')).read(), None,
                False))
    if os.path.exists(SESSION_CONF):
        out.append(('session.conf', 'session', open(SESSION_CONF).read(), os.path.dirname(SESSION_CONF), False))
    if os.path.exists(SYSTEM_CONF):
        text = open(SYSTEM_CONF).read()
        out.append(('system-bus', 'system', text, os.path.dirname(SYSTEM_CONF), False))
        out.append(('system-bus-as-messagebus', 'system-user', text, os.path.dirname(SYSTEM_CONF), True))
        for f in system_d_files():
            out.append(('system.d/' + os.path.basename(f), 'system-file', one_file_system_conf(f),
                        os.path.dirname(SYSTEM_CONF), False))
    for cdir in (os.path.join(TOP, 'tests', 'policy-diff', 'configs'), os.path.join(here, 'configs')):
        for f in sorted(os.listdir(cdir)):
            if f.endswith('.conf'):
                p = os.path.join(cdir, f)
                out.append(('synthetic/' + f, 'limits' if f == 'limits.conf' else 'synthetic', open(p).read(),
                            cdir, False))
    return out


def policy_inputs(conf_path):
    """the names a system configuration mentions and calls worth sending"""
    import probe
    rules = probe.parse_config(conf_path)
    an = probe.Analysis(rules)
    names = [n for n in an.names if not n.endswith('.Sub.Deep')]
    calls = []
    for n in names:
        for path, iface, member, nfds in an.calls_for(n, 12):
            if nfds == 0:
                calls.append((n, path, iface, member))
    return names, calls


def regressions(cname):
    """the random mode's minimal reproducers kept as regression tests: a
    list of actions (run on test-session), or {"config": NAME, "actions":
    [...]} for another configuration of configurations()"""
    import json
    d = os.path.join(here, 'regressions')
    out = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if f.endswith('.json'):
            data = json.load(open(os.path.join(d, f)))
            if isinstance(data, list):
                data = {'config': 'test-session', 'actions': data}
            if data['config'] != cname:
                continue
            out.append(('regression/' + f[:-5], 'random',
                        lambda s, ids, a=data['actions']: R.make_script(a, ids)(s)))
    return out


def scenario_list(kind, mode, conf_file, cname=''):
    """(name, scenario kind, function of (session, ids)) for a configuration"""
    out = regressions(cname)
    if kind == 'limits':
        return [('limits', 'limits', S.limits)]
    system = kind in ('system', 'system-user', 'system-file', 'synthetic')
    full = mode == 'long' or kind in ('session', 'system', 'system-user')
    out.append(('grid-root', 'messages', lambda s, ids: S.message_grid(s, ids, 'root',
                flag_sets=S.FLAG_SETS if full else (0, S.NRE), activatable=full)))
    if system:
        out.append(('grid-user', 'messages', lambda s, ids: S.message_grid(s, ids, 'bbtest1',
                    flag_sets=S.FLAG_SETS if full else (0, S.NRE), activatable=full)))
    if full:
        out.append(('shutdown', 'shutdown', S.shutdown))
        out.append(('peer-root', 'peer', lambda s, ids: S.peer_interface(s, ids, 'root')))
        if system:
            out.append(('peer-user', 'peer', lambda s, ids: S.peer_interface(s, ids, 'bbtest1')))
    if full or kind == 'synthetic':
        out.append(('driver-root', 'driver', lambda s, ids: S.driver_methods(s, ids, 'root')))
        if system:
            out.append(('driver-user', 'driver', lambda s, ids: S.driver_methods(s, ids, 'bbtest1')))
        out.append(('names', 'names', S.name_sequences))
        if kind == 'session':
            out.append(('name-order', 'names', S.name_order))
            out.append(('late-dirs', 'servicedirs', S.late_dirs))
        out.append(('monitors', 'monitors', S.monitors))
        out.append(('eavesdrop', 'eavesdrop', S.eavesdropping))
        out.append(('fds', 'fds', S.fds))
        # the system bus's activation goes through the launch helper and
        # takes over a minute: in the long mode only
        if kind == 'session' or (kind == 'system' and mode == 'long'):
            out.append(('activation', 'activation', S.activation))
    if mode == 'long' and system:
        # senders as nobody and as the bus's own user too
        for who in ('nobody', 'messagebus'):
            out.append(('grid-' + who, 'messages', lambda s, ids, w=who: S.message_grid(s, ids, w)))
            out.append(('driver-' + who, 'driver', lambda s, ids, w=who: S.driver_methods(s, ids, w)))
    if system and conf_file:
        names, calls = policy_inputs(conf_file)
        if names:
            cap = None if mode == 'long' or kind in ('system', 'system-user') else 60
            out.append(('policy', 'policy', lambda s, ids: S.policy_probe(s, ids, names, calls[:cap])))
    return out


def load_known(path):
    """[(regex, reason)] of the scenarios that still differ, each with why"""
    out = []
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        pat, _, why = line.partition(' # ')
        out.append((re.compile(pat.strip()), why.strip()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--busbridged', required=True)
    ap.add_argument('--reference', default='/usr/bin/dbus-daemon')
    ap.add_argument('--mode', choices=('ci', 'long'), default='ci')
    ap.add_argument('--config', action='append')
    ap.add_argument('--only', default='.')
    ap.add_argument('--random', type=float, default=0)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--random-config', metavar='FILE',
                    help='the configuration of the random mode (default: data/test-session.conf.in); '
                    'e.g. /usr/share/dbus-1/system.conf for the whole system bus')
    ap.add_argument('--save-reproducers', metavar='DIR',
                    help='write the random mode\'s minimal reproducers there (tests/diff/regressions keeps them)')
    ap.add_argument('--keep')
    ap.add_argument('--no-scripted', action='store_true')
    ap.add_argument('--known', default=os.path.join(here, 'known-differences'),
                    help='scenarios still expected to differ (counted as skipped), "" for none')
    ap.add_argument('--also-known', action='append', default=[], metavar='FILE',
                    help='more of them, for a daemon set up otherwise (known-differences-kdbus for --kdbus)')
    ap.add_argument('--mapped-names', action='store_true',
                    help='compare who holds which unique name, not the names themselves')
    args = ap.parse_args()
    E.EXACT_NAMES = not args.mapped_names
    known = load_known(args.known)
    for f in args.also_known:
        known += load_known(f)

    if os.geteuid() == 0:
        import probe
        probe.ensure_users()
    ids = {'root': None}
    for u in ('bbtest1', 'bbtest2', 'nobody', 'messagebus'):
        try:
            ids[u] = E.Identity(u) if os.geteuid() == 0 else None
        except KeyError:
            ids[u] = None
    tmp = tempfile.mkdtemp(prefix='busdiff.')
    os.chmod(tmp, 0o755)
    svcdir = os.path.join(tmp, 'services')
    S.write_services(svcdir)
    npass = nfail = nskip = 0
    per_conf, per_kind = {}, {}
    t0 = time.monotonic()
    try:
        if not args.no_scripted:
            for cname, kind, text, base, keep_user in configurations(args):
                conf_file = None
                if kind != 'session':
                    conf_file = os.path.join(tmp, 'analysis.conf')
                    with open(conf_file, 'w') as f:
                        f.write(E.prepare_config(text, '/dev/null', None, base))
                for sname, skind, fn in scenario_list(kind, args.mode, conf_file, cname):
                    late = os.path.join(tmp, 'late') if skind == 'servicedirs' else None
                    label = '%s %s' % (cname, sname)
                    if not re.search(args.only, label):
                        continue
                    script = lambda s, fn=fn: fn(s, ids)  # noqa: E731
                    ts = time.monotonic()
                    try:
                        ref, got, n = E.run_pair(args.reference, args.busbridged, text, tmp, ('ref', 'bb'), script,
                                                 svcdir, base, keep_user, late)
                    except Exception as exc:
                        nfail += 1
                        print('not ok %d - %s: %s' % (npass + nfail + nskip, label, exc))
                        continue
                    diff = E.compare(ref, got)
                    per_conf[cname] = per_conf.get(cname, 0) + n
                    per_kind[skind] = per_kind.get(skind, 0) + n
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        fn_ = re.sub(r'[^A-Za-z0-9_.-]', '_', label)
                        with open(os.path.join(args.keep, fn_ + '.ref'), 'w') as f:
                            f.write('\n'.join(E.canonical(ref)) + '\n')
                        with open(os.path.join(args.keep, fn_ + '.bb'), 'w') as f:
                            f.write('\n'.join(E.canonical(got)) + '\n')
                    if diff is None:
                        npass += 1
                        if any(k.search(label) for k, _ in known):
                            print('# %s no longer differs: take it off %s' % (label, args.known))
                        print('ok %d - %s (%d exchanges, %.1f s)' % (npass + nfail + nskip, label, n,
                                                                  time.monotonic() - ts))
                    elif any(k.search(label) for k, _ in known):
                        nskip += 1
                        why = [w for k, w in known if k.search(label)][0]
                        print('ok %d - %s # SKIP known difference: %s' % (npass + nfail + nskip, label, why))
                        print('# ' + diff.replace('\n', '\n# ')[:1500])
                    else:
                        nfail += 1
                        print('not ok %d - %s (%d exchanges, %.1f s)' % (npass + nfail + nskip, label, n,
                                                                      time.monotonic() - ts))
                        print('# ' + diff.replace('\n', '\n# '))
                    sys.stdout.flush()
        if args.random > 0:
            seed = args.seed if args.seed is not None else int(time.time())
            rconf = args.random_config or os.path.join(TOP, 'data', 'test-session.conf.in')
            text = open(rconf).read()
            base = os.path.dirname(os.path.abspath(rconf)) if args.random_config else None
            res = R.run_random(args.reference, args.busbridged, text, tmp, svcdir, ids, seed, args.random,
                               save_dir=args.save_reproducers, base=base)
            rname = 'random ' + (os.path.basename(rconf) if args.random_config else 'test-session')
            per_conf[rname] = res['exchanges']
            per_kind['random'] = res['exchanges']
            for ok, desc in res['results']:
                if ok:
                    npass += 1
                    print('ok %d - %s' % (npass + nfail + nskip, desc))
                else:
                    nfail += 1
                    print('not ok %d - %s' % (npass + nfail + nskip, desc))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print('# exchanges per configuration: ' + ', '.join('%s %d' % kv for kv in per_conf.items()))
    print('# exchanges per scenario kind: ' + ', '.join('%s %d' % kv for kv in per_kind.items()))
    print('# %d exchanges over %d configurations in %.0f s' % (sum(per_conf.values()), len(per_conf),
                                                                 time.monotonic() - t0))
    print('%d passed, %d failed, %d skipped' % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == '__main__':
    sys.exit(main())
