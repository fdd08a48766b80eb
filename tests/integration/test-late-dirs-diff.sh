#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# Service directories and configuration directories that appear while the
# bus runs, busbridged beside dbus-daemon with the same configuration: a
# <servicedir>, the user's $XDG_DATA_HOME/dbus-1/services (as when
# ~/.local/share/dbus-1/services is made during a session) and an
# <includedir>, none there at start.  dbus-daemon reads the service
# directories again when a name it does not know is called with auto-start
# (as for StartServiceByName), so the service starts; the new directories
# are watched from the next reload on, and a change there reloads the
# whole configuration (a policy file in the includedir included) and logs
# "Reloaded configuration", as ReloadConfig and SIGHUP do.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/helpers.sh"
. "$here/../lib/session-config.sh"

call() { # ADDR NAME [ARGS...]: a call of NAME's, auto-start allowed
	local addr=$1 name=$2; shift 2
	timeout 20 dbus-send --bus="$addr" --print-reply --dest="$name" / com.example.Iface.Hi "$@" 2>&1 |
		tr '\n' ' ' | sed 's/ *$//; s/ time=[0-9.]*//; s/ sender=[^ ]*//; s/ serial=[0-9]*//g; s/ reply_serial=[0-9]*//'
}
driver() { # ADDR METHOD [ARGS...]
	local addr=$1 m=$2; shift 2
	timeout 20 dbus-send --bus="$addr" --print-reply --dest=org.freedesktop.DBus / "org.freedesktop.DBus.$m" "$@" 2>&1 |
		tr '\n' ' ' | sed 's/ *$//; s/ time=[0-9.]*//; s/ sender=[^ ]*//; s/ serial=[0-9]*//g; s/ reply_serial=[0-9]*//; s/:1\.[0-9]*/:1.N/g'
}
service() { # DIR NAME: a .service file for tests/diff/service.py
	mkdir -p "$1"
	printf '[D-BUS Service]\nName=%s\nExec=/usr/bin/python3 %s/tests/diff/service.py %s\n' "$2" "$TOP" "$2" >"$1/$2.service"
}
reloaded() { grep -c 'Reloaded configuration' "$1"; }

run() { # DAEMON WHO: TITLE: RESULT lines
	local d=$T/$1 daemon=$2 addr pid log
	rm -rf "$d"; mkdir -p "$d/run"; chmod 700 "$d/run"
	log=$d/bus.log
	open_session_config "$d/bus.conf" "unix:path=$d/bus.sock" "<servicedir>$d/late</servicedir>" \
		"<standard_session_servicedirs/>" "<includedir>$d/conf.d</includedir>"
	XDG_DATA_HOME=$d/xdg XDG_DATA_DIRS=$d/xdg-dirs XDG_RUNTIME_DIR=$d/run \
		"$daemon" --config-file="$d/bus.conf" --nofork --print-address=3 3>"$d/addr" 2>"$log" </dev/null &
	pid=$!
	wait_grep . "$d/addr" 10 || { echo "bus did not start: $(head -c 200 "$log")"; kill $pid; return; }
	addr=$(head -n 1 "$d/addr")
	echo "unknown name: $(call "$addr" com.example.LateA)"
	service "$d/late" com.example.LateA
	sleep 0.3
	echo "LateA in ListActivatableNames once its directory appeared: $(driver "$addr" ListActivatableNames | grep -c LateA)"
	echo "auto-start of LateA: $(call "$addr" com.example.LateA)"
	service "$d/xdg/dbus-1/services" com.example.LateX
	echo "the user's directory appeared, auto-start: $(call "$addr" com.example.LateX)"
	echo "reloads logged so far: $(reloaded "$log")"
	driver "$addr" ReloadConfig >/dev/null
	echo "ReloadConfig, reloads logged: $(reloaded "$log")"
	service "$d/late" com.example.LateB
	sleep 0.5
	echo "a file in a directory watched since, reloads logged: $(reloaded "$log")"
	echo "LateB in ListActivatableNames: $(driver "$addr" ListActivatableNames | grep -c LateB)"
	mkdir -p "$d/conf.d"
	echo '<busconfig><policy context="default"><deny own="com.example.Denied"/></policy></busconfig>' >"$d/conf.d/x.conf"
	sleep 0.5
	echo "an includedir appeared, RequestName: $(driver "$addr" RequestName string:com.example.Denied uint32:4)"
	kill -HUP $pid; sleep 0.5
	echo "SIGHUP, reloads logged: $(reloaded "$log")"
	echo "after SIGHUP, RequestName: $(driver "$addr" RequestName string:com.example.Denied uint32:4)"
	rm "$d/conf.d/x.conf"; sleep 0.5
	echo "its file goes, reloads logged: $(reloaded "$log")"
	echo "after the policy file went, RequestName: $(driver "$addr" RequestName string:com.example.Denied uint32:4)"
	kill $pid; wait $pid 2>/dev/null
	kill_using "$TOP/tests/diff/service.py" 2>/dev/null
	sed 's/\[[0-9]*\]/[PID]/g; s/pid=[0-9]*/pid=PID/g' "$log" | grep -v 'fd limit\|Activat\|Successfully' |
		nl -s ': ' | sed 's/^ */log line /'
}
ref=$(run ref /usr/bin/dbus-daemon)
ours=$(run ours "$BUS_DAEMON")
compare_with_reference "$ours" "$ref" 14
echo "1..$n"
