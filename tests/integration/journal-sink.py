# journal-sink.py DIR OUT - a stand-in for journald's stream socket
# (DIR/stdout, which sd_journal_stream_fd() connects to): every stream's
# header (identifier, unit, priority, level prefix, forwards) and then each
# line it sends, written to OUT as "IDENTIFIER <PRIORITY>: LINE".  For
# test-service-stdio.sh, in a mount namespace of its own.
import os
import socket
import sys
import threading

d, out = sys.argv[1], sys.argv[2]
os.makedirs(d, exist_ok=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(os.path.join(d, 'stdout'))
s.listen(16)
lock = threading.Lock()


def serve(c):
    f = c.makefile('rb')
    head = [f.readline().rstrip(b'\n').decode(errors='replace') for _ in range(7)]
    for line in f:
        with lock, open(out, 'a') as o:
            o.write('%s <%s>: %s\n' % (head[0], head[2], line.rstrip(b'\n').decode(errors='replace')))


open(out, 'w').close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
