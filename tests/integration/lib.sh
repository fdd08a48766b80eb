# lib.sh: TAP helpers for the integration tests (sourced)
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
# check DESCRIPTION COMMAND...: ok if the command succeeds
check() { local d=$1; shift; if "$@" >/dev/null 2>"$TEST_TMP/check.$$.err"; then ok "$d"; else not_ok "$d: $(head -c 300 "$TEST_TMP/check.$$.err")"; fi; }
# expect DESCRIPTION PATTERN COMMAND...: ok if the command's output (stdout+stderr) matches PATTERN
expect() {
	local d=$1 pat=$2 out; shift 2
	out=$("$@" 2>&1)
	if grep -qE -- "$pat" <<<"$out"; then ok "$d"; else not_ok "$d: expected /$pat/, got: $(head -c 300 <<<"$out")"; fi
}
