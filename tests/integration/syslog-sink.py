# syslog-sink.py SOCKET OUT - a stand-in for syslog's /dev/log: every
# datagram as a line of OUT, "<PRIORITY> MESSAGE" (the time stamp, and the
# pids, masked).  For test-syslog-diff.sh, in a mount namespace of its own.
import re
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], 'a', buffering=1) as out:
    while True:
        d = s.recv(65536).decode(errors='replace')
        m = re.match(r'<(\d+)>(?:\w{3} [ \d]\d \d\d:\d\d:\d\d )?(.*)', d, re.S)
        pri, text = (m.group(1), m.group(2)) if m else ('?', d)
        text = re.sub(r'\[\d+\]', '[PID]', text)
        text = re.sub(r'pid=\d+', 'pid=PID', text)
        out.write('<%s> %s\n' % (pri, text.rstrip('\n')))
