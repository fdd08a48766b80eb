# tests/vm/guest-lib.sh: helpers of both stages of the VM test, POSIX sh
# (busybox's in the initramfs, bash in the second stage); sourced.

# seconds since the guest booted, for the phases' headers
uptime_s() {
	cut -d' ' -f1 /proc/uptime
}

# the kernel stack of every thread of every user process but init and
# the caller's shells (where a hung test waits), then what every CPU runs
# (sysrq l: where a spinning one spins), from the kernel's log
dump_stacks() {
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[ "$pid" != 1 ] && [ "$pid" != "$$" ] && [ -s "$p/cmdline" ] || continue
		for t in "$p"/task/*; do
			echo "# thread ${t#/proc/} $(cat "$t/comm" 2> /dev/null) ($(tr '\0' ' ' < "$p/cmdline" 2> /dev/null | cut -c1-60)), waiting in $(cat "$t/wchan" 2> /dev/null):"
			sed 's/^/#   /' "$t/stack" 2> /dev/null
		done
	done
	dmesg -c > /dev/null 2>&1
	echo l > /proc/sysrq-trigger
	sleep 2
	dmesg 2> /dev/null | sed 's/^/#   /'
}

# deadline SECONDS COMMAND...: COMMAND's exit status, or 124 when it has
# not ended after SECONDS: then the stacks of every thread are printed
# (dump_stacks) before COMMAND and its children are killed, so that a hang
# is reported where it happens instead of eating the run's budget
deadline() {
	_limit=$(($1 * 2)); shift
	"$@" &
	_pid=$!
	_n=0
	while kill -0 "$_pid" 2> /dev/null; do
		if [ "$_n" -ge "$_limit" ]; then
			echo "# HUNG after $((_limit / 2)) s: $*; the threads' kernel stacks:"
			dump_stacks
			pkill -9 -P "$_pid" 2> /dev/null
			kill -9 "$_pid" 2> /dev/null
			wait "$_pid" 2> /dev/null
			return 124
		fi
		sleep 0.5
		_n=$((_n + 1))
	done
	wait "$_pid"
}
