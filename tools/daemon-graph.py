#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""daemon-graph.py: the call graph between the files of a directory (daemon/
by default), and its circles.

An arrow A -> B means: A.c names a function that B.c defines (non-static,
at file level): it calls it, or takes its address (a callback, a table of
hooks).  Files are grouped by their name without the extension; the
driver's files (driver-*.c) can be taken as one with --group driver.  A
circle is a strongly connected component of more than one file: every file
in it reaches every other one.

Usage: tools/daemon-graph.py [--dir daemon] [--group PREFIX ...] [--arrows]
                             [--layers] [--check]
Prints the files, the number of arrows, each circle with its files; with
--arrows every arrow (caller -> callee: the functions named); with
--layers, when there is no circle, each file's layer (0: it names no other
file's function; else one above the highest file it names); with --check
the exit status is 1 if there is a circle.
"""

import argparse
import os
import re
import sys

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFN = re.compile(r"^(?!static\b)[A-Za-z_][A-Za-z0-9_ \t\*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*$")


def strip(text):
    """the source without comments, strings and character literals"""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def definitions(text):
    """the functions @text defines at file level, not static"""
    names = set()
    depth = 0
    for line in text.split("\n"):
        if depth == 0 and not line.startswith((" ", "\t", "#")):
            m = DEFN.match(line)
            if m and "=" not in line.split("(")[0]:
                names.add(m.group(1))
        depth += line.count("{") - line.count("}")
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="daemon")
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--arrows", action="store_true")
    ap.add_argument("--layers", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()

    def node(fn):
        stem = fn[:-2]
        for g in a.group:
            if stem == g or stem.startswith(g + "-"):
                return g
        return stem

    files = sorted(f for f in os.listdir(a.dir) if f.endswith(".c"))
    src = {f: strip(open(os.path.join(a.dir, f), encoding="utf-8").read()) for f in files}
    owner = {}
    for f in files:
        for name in definitions(src[f]):
            owner.setdefault(name, node(f))
    arrows = {}
    for f in files:
        me = node(f)
        for w in WORD.finditer(src[f]):
            o = owner.get(w.group(0))
            if o and o != me:
                arrows.setdefault((me, o), set()).add(w.group(0))
    nodes = sorted({node(f) for f in files})
    succ = {v: sorted({b for (x, b) in arrows if x == v}) for v in nodes}

    # Tarjan's strongly connected components
    index, low, stack, on, comps = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    circles = sorted((c for c in comps if len(c) > 1), key=len, reverse=True)
    print(f"{len(nodes)} files, {len(arrows)} arrows, {len(circles)} circle(s)")
    for c in circles:
        print(f"circle of {len(c)}: {' '.join(c)}")
    if a.layers and not circles:
        layer = {}

        def height(v):
            if v not in layer:
                layer[v] = 1 + max((height(w) for w in succ[v]), default=-1)
            return layer[v]

        for v in nodes:
            height(v)
        for n in range(max(layer.values(), default=-1) + 1):
            print(f"layer {n}: {' '.join(v for v in nodes if layer[v] == n)}")
    if a.arrows:
        for (x, b), fns in sorted(arrows.items()):
            print(f"{x} -> {b}: {' '.join(sorted(fns))}")
    if a.check and circles:
        sys.exit(1)


if __name__ == "__main__":
    main()
