# helpers.sh: shared helpers for the integration tests (sourced after lib.sh)
#
# PY            the python3 that has dbus-python and gi (Debian's, not a pyenv one)
# start_service NAME   starts py-service.py owning NAME; sets SVC_PID (to kill),
#               SVC_UNIQUE (its unique name), SVC_PYPID (the python process's pid)
# bg CMD...     starts CMD in the background, remembered for cleanup; sets BG_PID
# wait_grep PATTERN FILE [SECONDS]   waits (bounded) until FILE matches PATTERN
# Every process started through these is killed when the test exits.
here=${here:-$(cd "$(dirname "$0")" && pwd)}
PY=${PYTHON_DBUS:-/usr/bin/python3}
# (TEST_NAME: set by a test that execs another, its own name: the two may
# run at the same time, each in its own directory)
T=${TEST_TMP:?TEST_TMP is not set: run me through run.sh}/${TEST_NAME:-$(basename "$0")}.d
rm -rf "$T"; mkdir -p "$T"
_pids=()
_cleanup() {
	local p
	for p in "${_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${_pids[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${_extra_cleanup:-}" ] && eval "$_extra_cleanup"
	return 0
}
trap _cleanup EXIT

bg() { "$@" & BG_PID=$!; _pids+=("$BG_PID"); }

wait_grep() {
	local pat=$1 file=$2 secs=${3:-5} i
	for ((i = 0; i < secs * 50; i++)); do
		grep -qE -- "$pat" "$file" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# start_service NAME [ADDRESS]: py-service.py on ADDRESS (default: the session bus)
start_service() {
	local name=$1 addr=${2:-$DBUS_SESSION_BUS_ADDRESS} ready=$T/ready.$1.$RANDOM
	DBUS_SESSION_BUS_ADDRESS=$addr bg timeout -k 2 90 "$PY" "$here/py-service.py" "$name" "$ready"
	SVC_PID=$BG_PID
	if ! wait_grep . "$ready" 10; then
		echo "# start_service $name: the service did not start" >&2
		SVC_UNIQUE=; return 1
	fi
	read -r SVC_UNIQUE SVC_PYPID < "$ready"
}

# stop PID: kill and reap one background process
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 0; }

# own_config OUT SOCKET [LIMIT=VALUE...]: a copy of $TEST_CONFIG listening on
# unix:path=SOCKET, with the given <limit>s set (added when missing)
own_config() {
	local out=$1 sock=$2 kv name val; shift 2
	sed "s|<listen>[^<]*</listen>|<listen>unix:path=$sock</listen>|" "$TEST_CONFIG" >"$out"
	for kv in "$@"; do
		name=${kv%%=*} val=${kv#*=}
		if grep -q "<limit name=\"$name\">" "$out"; then
			sed -i "s|<limit name=\"$name\">[^<]*</limit>|<limit name=\"$name\">$val</limit>|" "$out"
		else
			sed -i "s|</busconfig>|  <limit name=\"$name\">$val</limit>\n</busconfig>|" "$out"
		fi
	done
}

# probe_on_own_bus DAEMON NAME CONFIG SOCKET PROBE [SECONDS]: DAEMON on
# CONFIG (start_bus NAME), listening on SOCKET, and the python PROBE (of
# tests/integration) run against SOCKET for at most SECONDS (60); its lines
# on stdout, its stderr in $T/NAME.probe.err; the bus stops after it
probe_on_own_bus() {
	local daemon=$1 name=$2 conf=$3 sock=$4 probe=$5 secs=${6:-60}
	rm -f "$sock"
	start_bus "$name" "$conf" "$daemon" || { echo "bus did not start"; return; }
	PYTHONPATH=$TOP/tests/lib timeout -k 2 "$secs" python3 "$TOP/tests/integration/$probe" "$sock" \
		2>"$T/$name.probe.err"
	stop "$OWN_PID"
}

# start_bus NAME CONFIG [DAEMON]: $BUS_DAEMON (or DAEMON) on CONFIG in the
# background; sets OWN_ADDR and OWN_PID (killed at exit); its stderr is in
# $T/NAME.log
start_bus() {
	"${3:-$BUS_DAEMON}" --config-file="$2" --nofork --print-address=3 3>"$T/$1.addr" 2>"$T/$1.log" </dev/null &
	OWN_PID=$!; _pids+=("$OWN_PID")
	if ! wait_grep . "$T/$1.addr" 10; then
		OWN_ADDR=; echo "# start_bus $1: $(head -c 300 "$T/$1.log")" >&2; return 1
	fi
	OWN_ADDR=$(head -n 1 "$T/$1.addr")
}

# relay_tap: TAP lines "ok - X" / "not ok - X" on stdin become our numbered
# ok/not_ok; other lines pass through as they are
relay_tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok*- }" ;;
		"not ok "*) not_ok "${line#not ok*- }" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done
}

# kill_using FILE: kills the processes whose command line has FILE (a path
# unique to this test run, e.g. the config file of a daemon we started but
# whose pid we never learnt)
kill_using() {
	local d p
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = $$ ] && continue
		if tr '\0' '\n' <"$d/cmdline" 2>/dev/null | grep -qxF -e "$1" -e "--config-file=$1"; then
			kill "$p" 2>/dev/null
		fi
	done
	return 0
}

# compare_probe_runs MIN: the test's run_probe DAEMON NAME (the probe's
# "TITLE: RESULT" lines on stdout, its stderr in $T/NAME.probe.err) on
# dbus-daemon and on $BUS_DAEMON, their stderr shown as comments, their
# lines compared (compare_with_reference); ours are left in $OURS
compare_probe_runs() {
	local ref
	ref=$(run_probe /usr/bin/dbus-daemon ref)
	OURS=$(run_probe "$BUS_DAEMON" ours)
	sed 's/^/# dbus-daemon: /' "$T/ref.probe.err"
	sed 's/^/# busbridged: /' "$T/ours.probe.err"
	compare_with_reference "$OURS" "$ref" "$1"
}

# compare_with_reference OURS REF MIN: for every line "TITLE: RESULT" the
# reference bus (dbus-daemon) printed, ok if we printed the same line for
# TITLE; not ok as well if the reference printed fewer than MIN lines.
# KNOWN_DIFFERENCE="REGEX # WHY": a differing title that matches is
# skipped with that reason (a difference doc/deviations.md gives)
compare_with_reference() {
	local ours=$1 ref=$2 rline title oline
	while IFS= read -r rline; do
		title=${rline%%: *}
		oline=$(grep -F -m1 -- "$title: " <<<"$ours")
		if [ "$oline" = "$rline" ]; then
			ok "$title: as dbus-daemon ($(cut -c1-120 <<<"${rline#*: }"))"
		elif [ -n "${KNOWN_DIFFERENCE:-}" ] && grep -qE -- "${KNOWN_DIFFERENCE%% # *}" <<<"$title"; then
			skip "$title: ${KNOWN_DIFFERENCE#* # }"
		else
			not_ok "$title: got [$oline], dbus-daemon [$rline]"
		fi
	done <<<"$ref"
	[ "$(wc -l <<<"$ref")" -ge "$3" ] || not_ok "the reference run printed too little: $ref"
}
