#!/usr/bin/env python3
"""SASL conversations against a bus, one "title: transcript" line each.

The server's GUID and DBUS_COOKIE_SHA1 challenges are replaced by
placeholders, so that busbridged and dbus-daemon print the same lines when
they answer alike.  A conversation that ends in BEGIN is followed by a
Hello: the line says whether the reply came or the connection was closed.

usage: sasl-probe.py unix:path=SOCKET
       sasl-probe.py --guids PRINTED-ADDRESS GETID-REPLY
       (what is true of the GUIDs of a bus with several listeners)
"""
import re
import socket
import struct
import sys

HELLO_FIELDS = [
    (1, "o", "/org/freedesktop/DBus"),
    (2, "s", "org.freedesktop.DBus"),
    (3, "s", "Hello"),
    (6, "s", "org.freedesktop.DBus"),
]


def hello():
    fields = b""
    for code, sig, val in HELLO_FIELDS:
        fields += b"\0" * (-len(fields) % 8)
        v = val.encode()
        fields += struct.pack("<B1sB", code, b"\x01", ord(sig)) + b"\0"
        fields += struct.pack("<I", len(v)) + v + b"\0"
    head = struct.pack("<cBBBIII", b"l", 1, 0, 1, 0, 1, len(fields))
    return head + fields + b"\0" * (-len(fields) % 8)


def normalize(line):
    line = re.sub(r"^OK [0-9a-f]{32}$", "OK <guid>", line)
    return re.sub(r"^DATA [0-9a-f]{40,}$", "DATA <challenge>", line)


def converse(path, lines):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(path)
    s.sendall(b"\0")
    out, buf = [], b""
    for line in lines:
        try:
            s.sendall(line.encode() + b"\r\n")
            if line == "BEGIN":
                s.sendall(hello())
                data = s.recv(4096)
                out.append("Hello answered" if data[:1] in (b"l", b"B") else "closed")
                break
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            out.append("closed")
            break
        try:
            while b"\r\n" not in buf:
                data = s.recv(4096)
                if not data:
                    break
                buf += data
        except socket.timeout:
            pass
        if b"\r\n" not in buf:
            out.append("closed" if not buf else "?" + buf.decode(errors="replace"))
            break
        reply, buf = buf.split(b"\r\n", 1)
        out.append(normalize(reply.decode(errors="replace")))
    s.close()
    return " | ".join(f"{l} -> {r}" for l, r in zip(lines, out))


CASES = {
    "mechanisms": ["AUTH"],
    "anonymous": ["AUTH ANONYMOUS", "BEGIN"],
    "anonymous with a trace": ["AUTH ANONYMOUS 74657374", "BEGIN"],
    "anonymous, odd hex": ["AUTH ANONYMOUS 7", "BEGIN"],
    "anonymous then fds": ["AUTH ANONYMOUS", "NEGOTIATE_UNIX_FD", "BEGIN"],
    "anonymous cancelled, then external": ["AUTH ANONYMOUS", "CANCEL", "AUTH EXTERNAL", "DATA", "BEGIN"],
    "external, odd hex": ["AUTH EXTERNAL 3", "BEGIN"],
    "external, odd hex of another uid": ["AUTH EXTERNAL 313", "AUTH EXTERNAL"],
    "external, odd hex in DATA": ["AUTH EXTERNAL", "DATA 3", "BEGIN"],
    "external, bad hex": ["AUTH EXTERNAL 3g", "AUTH EXTERNAL 30 ", "AUTH EXTERNAL"],
    "cookie, odd hex": ["AUTH DBUS_COOKIE_SHA1 303"],
    # uids as strtoul(…, 0) reads them, the whole string: "+0", "-0",
    # " 0", "0x0", "000" are 0; "08" is not a number, "0 " neither
    "external, uid +0": ["AUTH EXTERNAL 2b30", "BEGIN"],
    "external, uid -0": ["AUTH EXTERNAL 2d30", "BEGIN"],
    "external, uid with a blank before": ["AUTH EXTERNAL 2030", "BEGIN"],
    "external, uid with a blank after": ["AUTH EXTERNAL 3020", "AUTH"],
    "external, uid 0x0": ["AUTH EXTERNAL 307830", "BEGIN"],
    "external, uid 000": ["AUTH EXTERNAL 303030", "BEGIN"],
    "external, uid 08": ["AUTH EXTERNAL 3038", "AUTH"],
    "external, uid -1": ["AUTH EXTERNAL 2d31", "AUTH"],
    "external, uid 2^32": ["AUTH EXTERNAL 34323934393637323936", "AUTH"],
    "external, uid with NUL": ["AUTH EXTERNAL 3000", "AUTH"],
    "external, user name": ["AUTH EXTERNAL 726f6f74", "AUTH"],
}

def guid_facts(printed, bus_id):
    """facts about the servers' GUIDs, their OK lines and the bus's id"""
    import time
    entries = [dict(kv.split("=", 1) for kv in e.split(":", 1)[1].split(","))
               for e in printed.split(";")]
    guids = [e["guid"] for e in entries]
    now = int(time.time())
    stamped = all(abs(int(g[24:], 16) - now) < 300 for g in guids + [bus_id])
    print(f"guids: {len(guids)} listeners, {len(set(guids))} distinct GUIDs")
    print(f"bus id: {'one of the GUIDs' if bus_id in guids else 'none of the GUIDs'}")
    print(f"time stamps: {'the last 4 bytes are the time' if stamped else 'not the time'}")
    for i, e in enumerate(entries):
        if "path" in e:
            oks = converse(e["path"], ["AUTH EXTERNAL 30"]).split(" -> ", 1)[1]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(e["path"])
            s.sendall(b"\0AUTH EXTERNAL 30\r\n")
            ok = s.recv(4096).decode().strip()
            s.close()
            print(f"listener {i}: OK carries {'its own GUID' if ok == 'OK ' + e['guid'] else ok}, {oks}")


if __name__ == "__main__":
    if sys.argv[1] == "--guids":
        guid_facts(sys.argv[2], sys.argv[3])
        sys.exit(0)
    path = sys.argv[1].split("unix:path=", 1)[1].split(",", 1)[0]
    for title, lines in CASES.items():
        print(f"{title}: {converse(path, lines)}")
