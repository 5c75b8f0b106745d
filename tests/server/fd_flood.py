"""Connection floods against a planner on 127.0.0.1:PORT, each connection
sending only the HTTP/2 client preface.

usage:
  fd_flood.py hold PORT COUNT PID LIMIT
      opens COUNT connections, waits (bounded) until the planner PID holds
      more open files than LIMIT, prints how many it held, closes them all;
      status 1 if it never held more.
  fd_flood.py sort PORT COUNT [SOURCE]
      opens COUNT connections and sorts them: served (the server's HTTP/2
      SETTINGS frame came back) or closed (end of file or reset) within
      10 s; then, with SOURCE, one more connection from that source
      address. Prints "served closed silent [SOURCE-served|SOURCE-closed]"
      and closes them all."""

import os
import resource
import selectors
import socket
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = 4  # the HTTP/2 frame type a server starts with
SORT_SECONDS = 10


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def connect(port: int, source: str = "") -> socket.socket:
    s = socket.create_connection(
        ("127.0.0.1", port), timeout=5, source_address=(source, 0) if source else None
    )
    s.sendall(PREFACE)
    return s


def flood(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        try:
            sockets.append(connect(port))
        except OSError:  # refused or reset while connecting: closed
            sockets.append(None)
    return sockets


def answer(s: socket.socket) -> str:
    """served, closed, or silent (nothing yet) for one readable socket."""
    try:
        head = s.recv(9)
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    except BlockingIOError:
        return "silent"
    if not head:
        return "closed"
    return "served" if len(head) > 3 and head[3] == SETTINGS else "silent"


def sort(sockets: list) -> dict[str, int]:
    verdicts = {"served": 0, "closed": sockets.count(None), "silent": 0}
    selector = selectors.DefaultSelector()
    for s in sockets:
        if s is not None:
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ)
    deadline = time.monotonic() + SORT_SECONDS
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.5):
            verdict = answer(key.fileobj)
            if verdict != "silent":
                verdicts[verdict] += 1
                selector.unregister(key.fileobj)
    verdicts["silent"] = len(selector.get_map())
    return verdicts


def main() -> int:
    mode, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sockets = flood(port, count)
    status = 0
    if mode == "hold":
        pid, limit = int(sys.argv[4]), int(sys.argv[5])
        deadline = time.monotonic() + 20
        held = open_files(pid)
        while held <= limit and time.monotonic() < deadline:
            time.sleep(0.05)
            held = open_files(pid)
        print(held)
        status = 0 if held > limit else 1
    else:
        v = sort(sockets)
        line = f"{v['served']} {v['closed']} {v['silent']}"
        if len(sys.argv) > 4:
            source = sys.argv[4]
            other = connect(port, source)
            sockets.append(other)
            seen = sort([other])
            line += " " + source + "-" + max(seen, key=lambda k: seen[k])
        print(line)
    for s in sockets:
        if s is not None:
            s.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
