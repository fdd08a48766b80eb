#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/daemon-layers.sh: the files of daemon/ form layers, each naming
# only functions of the layers below it (tools/daemon-graph.py: no circle
# in the graph of which file names which file's functions); the ways up
# go through the hooks bus.c fills in (daemon/bus-hooks.h).  The check
# is first shown to fail on a graph with a circle.  And daemon/ reaches the
# core only through its command layer (compat/kdbus-client.h): it includes
# no header of kdbus/ and builds no kdbus command or item walk itself.
srcdir=${srcdir:-.}
tool=$srcdir/tools/daemon-graph.py
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/low.c" <<'C'
int low_get(void) {
	return high_set();
}
C
cat > "$tmp/high.c" <<'C'
int high_set(void) {
	return low_get() + 1;
}
C
if python3 "$tool" --dir "$tmp" --check > "$tmp/out"; then
	echo "FAIL: a circle of two files was not found"
	cat "$tmp/out"
	exit 1
fi
grep -q "circle of 2: high low" "$tmp/out" || { echo "FAIL: the circle was not named"; cat "$tmp/out"; exit 1; }

rc=0
python3 "$tool" --dir "$srcdir/daemon" --check --layers > "$tmp/out" || {
	rc=1
	echo "FAIL: daemon/ has a circle: a lower file names a function of a higher one"
}
cat "$tmp/out"
if grep -n '#include "kdbus/' "$srcdir"/daemon/*.[ch]; then
	echo "FAIL: daemon/ includes the core's headers (compat/kdbus-client.h is the way)"
	rc=1
fi
if grep -nE 'struct kdbus_cmd[_ ]|KDBUS_ITEM_FOREACH' "$srcdir"/daemon/*.[ch]; then
	echo "FAIL: daemon/ builds kdbus commands or walks items (compat/kdbus-client.c does)"
	rc=1
fi
exit $rc
