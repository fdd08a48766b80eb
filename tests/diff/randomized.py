# randomized.py - the differential tester's random mode: seeded random
# sequences of connects, Hellos, name requests, match rules, sends, monitors
# and disconnects across several identities, run on both daemons and
# compared step by step; a sequence that differs is shrunk to a minimal
# reproducer (JSON, for tests/diff/regressions/).
import json
import random
import time

import dbuswire as W  # noqa: E402  (on the path busdiff.py sets)
import engine as E

SLOTS = ('a', 'b', 'c', 'd')
NAMES = ('com.example.R1', 'com.example.R2', 'com.example.R3')
RULES = ("type='signal'", "eavesdrop='true'", "type='method_call'", "interface='com.example.I'",
         "sender='org.freedesktop.DBus',member='NameOwnerChanged'", "arg0='com.example.R1'",
         "type='signal',member='S'", "eavesdrop='true',type='method_return'")
IDENTS = ('root', 'root', 'bbtest1', 'nobody')


def random_actions(rng, n):
    out = []
    for _ in range(n):
        slot = rng.choice(SLOTS)
        k = rng.random()
        if k < 0.12:
            out.append(['connect', slot, rng.choice(IDENTS), rng.random() < 0.9])
        elif k < 0.17:
            out.append(['hello', slot])
        elif k < 0.22:
            out.append(['disconnect', slot])
        elif k < 0.34:
            out.append(['request', slot, rng.choice(NAMES), rng.randrange(8)])
        elif k < 0.40:
            out.append(['release', slot, rng.choice(NAMES)])
        elif k < 0.48:
            out.append(['addmatch', slot, rng.choice(RULES)])
        elif k < 0.51:
            out.append(['removematch', slot, rng.choice(RULES)])
        elif k < 0.53:
            out.append(['monitor', slot, rng.sample(RULES, rng.randrange(3))])
        elif k < 0.58:
            out.append(['query', slot, rng.choice(('GetNameOwner', 'NameHasOwner', 'ListQueuedOwners', 'ListNames')),
                        rng.choice(NAMES + ('@' + rng.choice(SLOTS),))])
        else:
            dest = rng.choice(('@a', '@b', '@c', '@d', 'com.example.R1', 'com.example.R2', 'com.example.Nobody',
                               'org.freedesktop.DBus', None, None))
            typ = rng.choice((W.METHOD_CALL, W.METHOD_CALL, W.SIGNAL, W.SIGNAL, W.METHOD_RETURN, W.ERROR))
            flags = rng.choice((0, 0, 1, 2, 3))
            out.append(['send', slot, typ, dest, flags, rng.randrange(1, 12)])
    return out


def make_script(actions, ids):
    def script(s):
        for act in actions:
            op, slot = act[0], act[1]
            c = s.clients.get(slot)
            live = c is not None and not c.closed
            s.step(json.dumps(act))
            if op == 'connect':
                if live:
                    continue
                s.connect(slot, ids.get(act[2]), hello=act[3])
            elif not live:
                continue
            elif op == 'hello':
                s.hello(slot)
            elif op == 'disconnect':
                s.disconnect(slot)
            elif c.monitor:
                continue                # a monitor that sends is dropped: tested by the scripted part
            elif op == 'request':
                s.call_driver(slot, 'RequestName', 'su', (act[2], act[3]))
            elif op == 'release':
                s.call_driver(slot, 'ReleaseName', 's', (act[2],))
            elif op == 'addmatch':
                s.call_driver(slot, 'AddMatch', 's', (act[2],))
            elif op == 'removematch':
                s.call_driver(slot, 'RemoveMatch', 's', (act[2],))
            elif op == 'monitor':
                serial = s.call_driver(slot, 'BecomeMonitor', 'asu', (act[2], 0),
                                       iface='org.freedesktop.DBus.Monitoring')
                got = []
                s.drain_until(c, lambda m: m[3].get(W.F_REPLY_SERIAL) == serial and got.append(m[0]) is None)
                c.monitor = got == [W.METHOD_RETURN]
                c.monitor_all = not act[2]
            elif op == 'query' and act[2] == 'ListNames':
                s.call_driver(slot, 'ListNames')        # in dbus-daemon's (hash table) order
            elif op == 'query':
                s.call_driver(slot, act[2], 's', (s.resolve(act[3]),))
            elif op == 'send':
                typ, dest, flags, rs = act[2], act[3], act[4], act[5]
                kw = dict(dest=dest, flags=flags, sig='s', body=('r',))
                if typ in (W.METHOD_CALL, W.SIGNAL):
                    kw.update(path='/', iface='com.example.I', member='M' if typ == W.METHOD_CALL else 'S')
                else:
                    kw.update(reply_serial=rs)
                    if typ == W.ERROR:
                        kw['error_name'] = 'com.example.E'
                s.send(slot, typ, **kw)
    return script


def differs(ref_bin, bb_bin, text, tmp, svcdir, ids, actions, base=None):
    script = make_script(actions, ids)
    ref, got, n = E.run_pair(ref_bin, bb_bin, text, tmp, ('rref', 'rbb'), script, svcdir, base)
    return E.compare(ref, got), n


def shrink(ref_bin, bb_bin, text, tmp, svcdir, ids, actions, budget=120.0, base=None):
    """ddmin over the action list while the difference persists"""
    end = time.monotonic() + budget
    chunk = max(1, len(actions) // 2)
    while chunk >= 1 and time.monotonic() < end:
        i, changed = 0, False
        while i < len(actions) and time.monotonic() < end:
            cand = actions[:i] + actions[i + chunk:]
            if cand and differs(ref_bin, bb_bin, text, tmp, svcdir, ids, cand, base)[0]:
                actions, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return actions


def run_random(ref_bin, bb_bin, text, tmp, svcdir, ids, seed, seconds, length=40, save_dir=None, base=None):
    """random sequences for the given time; results: (ok, description)"""
    end = time.monotonic() + seconds
    results, exchanges, k, ndiff = [], 0, 0, 0
    while time.monotonic() < end:
        rng = random.Random(seed * 1000003 + k)
        actions = random_actions(rng, length)
        d, n = differs(ref_bin, bb_bin, text, tmp, svcdir, ids, actions, base)
        exchanges += n
        if d:
            ndiff += 1
            small = shrink(ref_bin, bb_bin, text, tmp, svcdir, ids, actions, base=base)
            d2, _ = differs(ref_bin, bb_bin, text, tmp, svcdir, ids, small, base)
            if save_dir:
                import os
                os.makedirs(save_dir, exist_ok=True)
                with open(os.path.join(save_dir, 'seed%d-%d.json' % (seed, k)), 'w') as f:
                    json.dump(small, f)
                    f.write('\n')
            results.append((False, 'random seed %d sequence %d differs; minimal reproducer: %s\n# %s' %
                            (seed, k, json.dumps(small), (d2 or d).replace('\n', '\n# '))))
            if ndiff >= 3:
                break
        k += 1
    results.append((ndiff == 0, 'random seed %d: %d sequences of %d actions, %d exchanges, %d differ' %
                    (seed, k, length, exchanges, ndiff)))
    return {'results': results, 'exchanges': exchanges}
