#!/bin/bash
# check-dist.sh BUILDDIR: `make distcheck` in BUILDDIR (the tarball builds,
# passes `make check` out of a read-only source tree, installs and
# uninstalls cleanly), then every file the repository tracks must be in the
# tarball.  Prints TAP and "N passed, N failed, N skipped"; exit 77 when
# there is no git checkout to compare with.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check-dist.sh BUILDDIR}
pass=0 fail=0 skip=0 n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }

if make -C "$build" -s -j"${JOBS:-2}" distcheck DISTCHECK_CONFIGURE_FLAGS=-q > "$build/distcheck.log" 2>&1; then
	ok "make distcheck"
else
	notok "make distcheck"
	grep -E 'error|Error|FAIL' "$build/distcheck.log" | head -20 | sed 's/^/# /'
fi
tarball=$(ls -t "$build"/busbridge-*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	notok "no tarball"
elif ! git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
	n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - tarball holds every tracked file # SKIP no git checkout"
else
	prefix=$(basename "$tarball" .tar.gz)
	# (.gitignore and m4/.keep only serve the repository)
	missing=$(comm -23 <(git -C "$top" ls-files | grep -vxE '\.gitignore|m4/\.keep' | sort) \
		<(tar tzf "$tarball" | sed "s|^$prefix/||" | sort))
	if [ -z "$missing" ]; then
		ok "tarball holds every tracked file"
	else
		notok "tarball lacks $(echo "$missing" | wc -l) tracked files:"
		echo "$missing" | head -20 | sed 's/^/# /'
	fi
fi
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
