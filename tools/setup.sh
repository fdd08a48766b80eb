#!/bin/bash
# setup.sh: install what is missing, build, install, and start busbridged as
# a session bus you can talk to.
#
#   sudo tools/setup.sh
#
# Prints the bus address and how to use it.  The bus runs in the background
# until you kill it (its pid is printed too).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tools/deps.sh build
[ -x configure ] || autoreconf -fi >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q --prefix=/usr/local
make -s -j2
make -s install >/dev/null
cd "$top"

rundir=${XDG_RUNTIME_DIR:-/tmp}
info=$(mktemp)
/usr/local/bin/busbridged --session --fork --print-address=3 --print-pid=4 \
	--address="unix:path=$rundir/busbridge-session" 3>"$info.addr" 4>"$info.pid"
addr=$(head -n 1 "$info.addr"); pid=$(head -n 1 "$info.pid"); rm -f "$info" "$info.addr" "$info.pid"
cat <<MSG
busbridged is serving a session bus (pid $pid) at:

  $addr

Try it:

  export DBUS_SESSION_BUS_ADDRESS='$addr'
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames
  gdbus introspect --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus
  busctl --user list        # with DBUS_SESSION_BUS_ADDRESS set as above

Stop it with: kill $pid
MSG
