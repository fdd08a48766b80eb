#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/policy-diff/setup-packages.sh - install the Debian packages that
# ship system.d policy files, so that run.sh probes real configurations,
# plus what run.sh itself needs: `tools/deps.sh policy` (the list is there).
# Idempotent; services are not started (deps.sh installs them with a
# policy-rc.d that answers 101).  Needs root and apt.  Exit 0 when
# everything is installed, 77 when it cannot be (no root, no apt), else
# deps.sh's status.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "setup-packages: needs root" >&2; exit 77; }
command -v apt-get >/dev/null 2>&1 || { echo "setup-packages: no apt-get" >&2; exit 77; }
exec "$top/tools/deps.sh" policy
