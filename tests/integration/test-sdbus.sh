#!/bin/bash
# sd-bus (libsystemd) against the bus: runs the check program
# tests/integration/sdbus-client (built by `make check`) mode by mode and
# passes its TAP on.  SDBUS_CLIENT=path overrides where it is looked for.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
client=${SDBUS_CLIENT:-${BUILDDIR:-/nonexistent}/tests/integration/sdbus-client}
if [ ! -x "$client" ]; then
	skip "sdbus-client is not built ($client)"
	echo "1..$n"; exit 0
fi
for mode in hello name call signal fd creds; do
	out=$(cd "${TEST_TMP:-/tmp}" && timeout -k 2 30 "$client" "$mode" 2>&1); rc=$?
	bad=0
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$mode: ${line#ok * - }" ;;
		"not ok "*) not_ok "$mode: ${line#not ok * - }"; bad=1 ;;
		esac
	done <<<"$out"
	if [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
		not_ok "$mode: sdbus-client exited with $rc: $(tail -n 3 <<<"$out")"
	fi
done
echo "1..$n"
