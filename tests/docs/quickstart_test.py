#!/usr/bin/env python3
"""README.md's quickstart, run as written: every ```sh block of the section
in one shell, in order, each block's stdout compared with the ```text block
after it, numbers with a fraction and run ids masked (timings vary).

Two changes only, each required to apply exactly once: the planner binds
port 0 and writes a port file (the test's address reaches reshardctl as
$RESHARD_SERVER) instead of port 50051, and `kill %1` stops that planner
by its PID. `build/` becomes the test's build folder; the local cluster
keeps its state in the test's own folder. Stops exactly what it started.

Usage: quickstart_test.py ROOT BUILD
"""

import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

SEPARATOR = "@@ next block @@"
LISTEN = "--listen 127.0.0.1:50051 2>/dev/null &"
STARTED = """--listen 127.0.0.1:0 --port_file "$QS/port" 2>/dev/null &
planner=$!
for _ in $(seq 100); do [ -s "$QS/port" ] && break; sleep 0.1; done
export RESHARD_SERVER="127.0.0.1:$(cat "$QS/port")\""""
PREAMBLE = """set -u
planner=
cleanup() {
  [ -d "$RESHARD_CLUSTER_DIR" ] && scripts/local-cluster.sh stop >/dev/null 2>&1
  [ -n "$planner" ] && kill "$planner" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 143' TERM
"""


def quickstart_blocks(readme: str) -> list[tuple[str, str]]:
    section = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"```sh\n(.*?)```\n```text\n(.*?)```", section, re.S)
    if len(pairs) < 4:
        sys.exit(f"FAIL: the quickstart has {len(pairs)} sh/text pairs, not 4+")
    return pairs


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        sys.exit(f"FAIL: the quickstart must hold {old!r} exactly once")
    return text.replace(old, new)


def script_of(blocks: list[str], build: Path) -> str:
    body = f"\necho '{SEPARATOR}'\n".join(blocks)
    body = replace_once(body, LISTEN, STARTED)
    body = replace_once(body, "kill %1", 'kill "$planner"; wait "$planner"')
    body = re.sub(r"(?<![\w/.])build/", f"{build}/", body)
    return PREAMBLE + body


def masked(text: str) -> str:
    text = re.sub(r"[ \t]*\d+\.\d+", " #", text)
    return re.sub(r"\brun [0-9a-f]+-\d+", "run #", text).strip()


def run(script: str, root: Path, build: Path, scratch: Path) -> str:
    env = {
        "PATH": "/usr/bin:/bin",
        "QS": str(scratch),
        "RESHARD_CLUSTER_DIR": str(scratch / "cluster"),
        "RESHARD_BUILD": str(build),
    }
    shell = subprocess.Popen(
        ["bash", "-c", script], cwd=root, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        out, _ = shell.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        shell.send_signal(signal.SIGTERM)  # its trap stops what it started
        out, _ = shell.communicate(timeout=60)
        sys.exit(f"FAIL: the quickstart ran past 240 s; it printed:\n{out}")
    if shell.returncode != 0:
        sys.exit(f"FAIL: the quickstart exited {shell.returncode}; it printed:\n{out}")
    return out


def main() -> int:
    root, build = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    pairs = quickstart_blocks((root / "README.md").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        out = run(script_of([sh for sh, _ in pairs], build), root, build, Path(scratch))
    outputs = out.split(SEPARATOR + "\n")
    fail = len(outputs) != len(pairs)
    for i, (sh, expected) in enumerate(pairs):
        got = outputs[i] if i < len(outputs) else ""
        same = masked(got) == masked(expected)
        fail |= not same
        command = sh.splitlines()[0]
        print(f"{'ok' if same else 'FAIL'}: block {i + 1} ({command})")
        if not same:
            print(f"--- README says\n{expected}--- it printed\n{got}")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
