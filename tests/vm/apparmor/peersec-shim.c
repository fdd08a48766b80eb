/* tests/vm/apparmor/peersec-shim.c: an LD_PRELOAD library for the bus
 * daemons of the AppArmor comparison (tests/vm/apparmor/guest.sh builds it
 * with gcc -shared -fPIC ... -ldl).
 *
 * The guest's kernel (Debian's 6.1) answers AppArmor's D-Bus queries but
 * does not implement SO_PEERSEC on AF_UNIX sockets for AppArmor (Ubuntu's
 * kernels and mainline from 6.17 do).  When getsockopt(SOL_SOCKET,
 * SO_PEERSEC) fails with ENOPROTOOPT, this answers what such a kernel
 * would: the label of the peer (its SO_PEERCRED pid) from
 * /proc/PID/attr/apparmor/current without the trailing newline:
 * "profile (enforce)", "profile (complain)" or "unconfined".  Every other
 * call goes to libc's getsockopt unchanged; both dbus-daemon and busbridged
 * read the label through it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	static int (*real)(int, int, int, void *, socklen_t *);
	if (!real)
		real = (int (*)(int, int, int, void *, socklen_t *))dlsym(RTLD_NEXT, "getsockopt");
	int r = real(fd, level, name, val, len);
	if (r == 0 || errno != ENOPROTOOPT || level != SOL_SOCKET || name != SO_PEERSEC)
		return r;
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	if (real(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0) { errno = ENOPROTOOPT; return -1; }
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/attr/apparmor/current", (int)uc.pid);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0) { errno = ENOPROTOOPT; return -1; }
	ssize_t n = read(f, buf, sizeof(buf));
	close(f);
	if (n <= 0) { errno = ENOPROTOOPT; return -1; }
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		n--;
	if ((size_t)n > *len) { *len = n; errno = ERANGE; return -1; }
	memcpy(val, buf, n);
	*len = n;
	return 0;
}
