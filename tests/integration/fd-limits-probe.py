# fd-limits-probe.py SOCKET DAEMON_PID - the fd attacks of test-fd-limits.sh.
# Attackers connect as "nobody" (root is immune to pending_fd_timeout);
# every line "TITLE: RESULT" must read the same on busbridged and
# dbus-daemon.  Expects auth_timeout 2000 and pending_fd_timeout 3000.
import array
import os
import socket
import struct
import sys
import time

import dbuswire as W

path, pid = sys.argv[1], int(sys.argv[2])
NOBODY = 65534
NULL = os.open('/dev/null', os.O_RDONLY)


def nfds():
    return len(os.listdir('/proc/%d/fd' % pid))


def connect_many(uid, n):
    """@n sockets connected by a process of @uid (SO_PEERCRED is the
    connecting process's), handed back to us"""
    a, b = socket.socketpair()
    child = os.fork()
    if child == 0:
        try:
            a.close()
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for i in range(n):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                socket.send_fds(b, [b'x'], [s.fileno()])
                s.close()
        finally:
            os._exit(0)
    b.close()
    out = []
    for i in range(n):
        _, fds, _, _ = socket.recv_fds(a, 1, 1)
        s = socket.socket(fileno=fds[0])
        s.settimeout(10)
        out.append(s)
    os.waitpid(child, 0)
    a.close()
    return out


def connect_as(uid):
    return connect_many(uid, 1)[0]


def Peer(uid=NOBODY, unix_fd=True, hello=True, timeout=10):
    return W.Conn(sock=connect_as(uid), uid=uid, auth=True, unix_fd=unix_fd, hello=hello, timeout=timeout)


def closed(s, secs):
    """True if the daemon closes @s within @secs"""
    end = time.monotonic() + secs
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return False
            s.settimeout(left)
            if not s.recv(1 << 16):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True


def yn(b):
    return 'yes' if b else 'no'


def held(base, bound):
    """the daemon's fds beyond @base stay within @bound (printed, not
    compared: dbus-daemon has its own count)"""
    n = nfds() - base
    print('# fds held: %d (bound %d)' % (n, bound), file=sys.stderr)
    return n <= bound


def big_header(serial, unique, nfd=0, body_len=1 << 20):
    f = {W.F_PATH: '/', W.F_INTERFACE: 'a.b', W.F_MEMBER: 'X', W.F_DESTINATION: unique, W.F_SIGNATURE: 'ay'}
    if nfd:
        f[W.F_UNIX_FDS] = nfd
    return W.marshal(W.METHOD_CALL, serial, f, body=b'', body_len=body_len)


def fd_call(serial, dest, nfd_field):
    f = {W.F_PATH: '/', W.F_INTERFACE: 'a.b', W.F_MEMBER: 'X', W.F_DESTINATION: dest, W.F_SIGNATURE: 'h',
         W.F_UNIX_FDS: nfd_field}
    return W.marshal(W.METHOD_CALL, serial, f, body=struct.pack('<I', 0))


def root_exchange():
    """root connects and sends itself a message with an fd: does it
    arrive with its fd?"""
    # (generous: on a loaded machine dbus-daemon under the attack takes
    # seconds to let root in)
    t0 = time.monotonic()
    try:
        r = Peer(uid=0, timeout=10)
        r.send_fds(fd_call(r.next_serial(), r.unique, 1), [NULL] * 1)
        r.s.settimeout(10)
        buf, fds = b'', []
        end = time.monotonic() + 10
        while time.monotonic() < end:
            d, f, _, _ = socket.recv_fds(r.s, 1 << 16, 16)
            if not d:
                return 'closed'
            buf += d
            fds += f
            n = W.msg_size(buf)
            if n is not None and len(buf) >= n:
                m = W.parse(buf[:n])
                buf = buf[n:]
                if m[0] == W.METHOD_CALL and m[3].get(W.F_MEMBER) == 'X':
                    ok = len(fds) == 1
                    for x in fds:
                        os.close(x)
                    r.close()
                    sys.stderr.write('# root connected and got its fd back in %.2f s\n' % (time.monotonic() - t0))
                    return 'fd received' if ok else 'no fd'
        return 'nothing'
    except (OSError, EOFError) as e:
        return 'failed: %s' % (e or type(e).__name__)


base = nfds()

# 1. fds sent during SASL, before AUTH: no connection keeps any
socks = []
for i in range(4):
    s = connect_as(NOBODY)
    for ch in b'\0AUTH':
        try:
            socket.send_fds(s, [bytes([ch])], [NULL] * 253)
        except OSError:
            break
    socks.append(s)
time.sleep(0.3)
print('fds during SASL, held within 16: %s' % yn(held(base, 16)))
print('fds during SASL, connection still open: %s' % yn(not closed(socks[0], 0.2)))
for s in socks:
    s.close()
time.sleep(0.3)

# 2. the 1 MiB body announced, then 1-byte pieces each with 253 fds
peers = [Peer() for _ in range(4)]
for p in peers:
    p.send(big_header(p.next_serial(), p.unique))
    for i in range(20):
        try:
            p.send_fds(b'\0', [NULL] * 253)
        except OSError:
            break
time.sleep(0.3)
print('1 MiB body, 253 fds per byte, held within 64: %s' % yn(held(base, 64)))
print('1 MiB body, 253 fds per byte, closed: %s' % yn(all(closed(p.s, 1) for p in peers)))
print('1 MiB body, 253 fds per byte, root exchanges an fd: %s' % root_exchange())
for p in peers:
    p.close()
time.sleep(0.3)

# 3. as many fds per piece as a message may have: the first piece's are
# pending, those of later pieces are dropped; the timeout counts from the
# first, however many bytes follow
p = Peer()
p.send(big_header(p.next_serial(), p.unique, nfd=16))
t0 = time.monotonic()
for i in range(30):
    try:
        p.send_fds(b'\0', [NULL] * 16)
    except OSError:
        break
time.sleep(0.3)
print('16 fds per byte, held within 32: %s' % yn(held(base, 32)))
print('16 fds per byte, root exchanges an fd: %s' % root_exchange())
# one more byte every 1.5 s: pending_fd_timeout (3 s) still ends it (a
# timer that restarted with each byte would never; the window is wide for
# a loaded machine, where the reference was seen 2 s, and once 7 s, late)
gone = False
while time.monotonic() - t0 < 15:
    if closed(p.s, 1.5):
        gone = True
        break
    try:
        p.send_fds(b'\0', [NULL] * 1)
    except OSError:
        gone = True
        break
el = time.monotonic() - t0
print('16 fds per byte, a byte every 1.5 s, closed after pending_fd_timeout: %s'
      % ('yes' if gone and 2.5 < el < 14 else 'no (%s after %.1f s)' % (yn(gone), el)))
p.close()
time.sleep(0.3)

# 4. more fds in one piece than a message may have (max_message_unix_fds 16)
p = Peer()
p.send_fds(fd_call(p.next_serial(), p.unique, 17), [NULL] * 17)
print('17 fds with a message, closed: %s' % yn(closed(p.s, 1)))
p.close()

# 5. a message with fds without NEGOTIATE_UNIX_FD: the fds are dropped
p = Peer(unix_fd=False)
p.send_fds(fd_call(p.next_serial(), p.unique, 1), [NULL] * 1)
print('fds without NEGOTIATE_UNIX_FD, closed: %s' % yn(closed(p.s, 1)))
p.close()
p = Peer(unix_fd=False)
p.send(big_header(p.next_serial(), p.unique))
for i in range(20):
    p.send_fds(b'\0', [NULL] * 253)
time.sleep(0.3)
print('fds without NEGOTIATE_UNIX_FD, no message, held within 16: %s' % yn(held(base, 16)))
p.close()

# 6. fds no message claims: kept, until pending_fd_timeout
p = Peer()
p.send_fds(fd_call(p.next_serial(), p.unique, 1), [NULL] * 5)
t0 = time.monotonic()
gone = closed(p.s, 5)
el = time.monotonic() - t0
print('surplus fds, closed after pending_fd_timeout: %s'
      % ('yes' if gone and 2.5 < el < 4.5 else 'no (%s after %.1f s)' % (yn(gone), el)))
p.close()

# 7. authenticated, never says Hello: auth_timeout (2 s) from accept
t0 = time.monotonic()
p = Peer(hello=False)
gone = closed(p.s, 4)
el = time.monotonic() - t0
print('no Hello, closed after auth_timeout: %s'
      % ('yes' if gone and 1.5 < el < 3 else 'no (%s after %.1f s)' % (yn(gone), el)))
p.close()
# as root too
t0 = time.monotonic()
p = Peer(uid=0, hello=False)
gone = closed(p.s, 4)
el = time.monotonic() - t0
print('no Hello, root, closed after auth_timeout: %s'
      % ('yes' if gone and 1.5 < el < 3 else 'no (%s after %.1f s)' % (yn(gone), el)))
p.close()
# Hello in time: stays
p = Peer()
print('Hello in time, still open after auth_timeout: %s' % yn(not closed(p.s, 2.5)))
p.close()

# 8. (not compared) many connections with fds pending, more than
# RLIMIT_NOFILE (2048) allows: root still connects and passes an fd
t0 = time.monotonic()
peers = connect_many(NOBODY, 140)
sent = 0
hello = W.driver_call(1, 'Hello') + big_header(2, 'a.b', nfd=16)
for s in peers:
    # SASL, Hello and the start of a message, answers unread
    s.sendall(b'\0AUTH EXTERNAL ' + str(NOBODY).encode().hex().encode() + b'\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n' +
              hello)
time.sleep(0.3)
for s in peers:
    # then fds (sent along with SASL, a read would take and drop them)
    try:
        socket.send_fds(s, [b'\0'], [NULL] * 16)
        sent += 1
    except OSError:
        pass
time.sleep(0.3)
print('RESERVE: %d connections in %.1f s, %d fds, root: %s' % (sent, time.monotonic() - t0, nfds(), root_exchange()),
      file=sys.stderr)
for s in peers:
    s.close()
time.sleep(0.5)
print('at the end, held within 16: %s' % yn(held(base, 16)))
