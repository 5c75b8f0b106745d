"""Opens COUNT idle TCP connections to 127.0.0.1:PORT, each sending only the
HTTP/2 client preface, waits (bounded) until the planner PID holds more open
files than LIMIT, prints how many it held, and closes them all.
usage: fd_flood.py PORT COUNT PID LIMIT"""

import os
import resource
import socket
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def main() -> int:
    port, count, pid, limit = (int(a) for a in sys.argv[1:5])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(PREFACE)
        sockets.append(s)
    deadline = time.monotonic() + 20
    held = open_files(pid)
    while held <= limit and time.monotonic() < deadline:
        time.sleep(0.05)
        held = open_files(pid)
    print(held)
    for s in sockets:
        s.close()
    return 0 if held > limit else 1


if __name__ == "__main__":
    sys.exit(main())
