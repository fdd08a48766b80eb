#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/hardening.sh: the installed binaries carry the distribution's
# hardening (configure.ac: PIE, stack protector, _FORTIFY_SOURCE, RELRO
# and BIND_NOW, as Debian's dpkg-buildflags with hardening=+all), checked
# with Debian's hardening-check (devscripts) as Debian checks its
# dbus-daemon-launch-helper.  The setuid launch helper must have them
# whatever configure was told; the others unless --disable-hardening.
# Control-flow protection is not asked for (Debian 12 builds without it).
# Exit 77 (skipped) without hardening-check, and in a sanitizer build.
builddir=${BUILDDIR:-.}
command -v hardening-check >/dev/null 2>&1 || { echo "SKIP: no hardening-check (devscripts)"; exit 77; }
# a sanitizer build (tools/run-tests.sh's build-asan/) is for the tests only:
# ASan replaces the fortified functions, so hardening-check finds none
if grep -q '^SAN_CFLAGS = .*-fsanitize' "$builddir/Makefile" 2>/dev/null; then
	echo "SKIP: a sanitizer build (--enable-sanitizers) is not installed"
	exit 77
fi
rc=0
helper=$builddir/daemon/busbridge-launch-helper
hardening-check --nocfprotection "$helper" || rc=1
if grep -q '^HARDEN_LDFLAGS = .*-z,now' "$builddir/Makefile"; then
	hardening-check --nocfprotection "$builddir/daemon/busbridged" "$builddir/policy/busbridge-policy" || rc=1
else
	echo "busbridged and busbridge-policy: built with --disable-hardening, not checked"
fi
exit $rc
