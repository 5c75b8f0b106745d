"""One rank's client process for the registered-tensor tests: it holds a
reshard.agent.LocalAgent to its agent and obeys one JSON command per line
on stdin, answering one JSON line on stdout:

  {"op": "put", "name", "dtype", "file"}   register a copy of the .npy file
                                           in memory from reshard.agent.empty
  {"op": "fill", "name", "dtype", "shape", "value"}
                                           register an array of `value`
  either with "layout": {"global_shape", "sizes", "ranks", "placements"}
                                           registered as its layout
  {"op": "get", "name", "file"}            save the registered array (.npy)
  {"op": "fetch", "name"}                  map what the agent allocated
  {"op": "unregister", "name"}
  {"op": "list"}
  {"op": "exit"}

Answers {"ok": true, ...} or {"ok": false, "code", "message"}.
Usage: tensor_client.py SOCKET JOB RANK (the token in $RESHARD_JOB_TOKEN).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import reshard
from reshard import Error
from reshard import agent as ragent


def layout_of(c: dict[str, Any]) -> ragent.RegisteredLayout | None:
    if "layout" not in c:
        return None
    spec = c["layout"]
    mesh = reshard.Mesh(tuple(spec["sizes"]), rank_map=tuple(spec["ranks"]))
    return ragent.RegisteredLayout(
        tuple(spec["global_shape"]), mesh, spec["placements"]
    )


def handle(local: ragent.LocalAgent, held: dict[str, Any], c: dict[str, Any]) -> Any:
    op = c["op"]
    if op in ("put", "fill"):
        if op == "put":
            data = np.load(c["file"])
            array = ragent.empty(data.shape, c["dtype"])
            array[...] = data.view(array.dtype)
        else:
            array = ragent.empty(tuple(c["shape"]), c["dtype"])
            array[...] = c["value"]
        held[c["name"]] = local.register(
            c["name"], array, dtype=c["dtype"], layout=layout_of(c)
        )
        return {}
    if op == "fetch":
        held[c["name"]] = local.fetch(c["name"])
        return {"shape": list(held[c["name"]].shape)}
    if op == "get":
        np.save(c["file"], held[c["name"]])
        return {}
    if op == "unregister":
        local.unregister(c["name"])
        held.pop(c["name"], None)
        return {}
    if op == "list":
        return {"tensors": [t.name for t in local.list()]}
    raise ValueError(f"unknown op {op}")


def main() -> None:
    path, job, rank = sys.argv[1], sys.argv[2], int(sys.argv[3])
    held: dict[str, Any] = {}
    try:
        local = ragent.LocalAgent(path, job=job, rank=rank)
    except Error as e:
        print(json.dumps({"ok": False, "code": e.code.name, "message": e.message}))
        return
    print(json.dumps({"ok": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "exit":
            break
        try:
            answer = {"ok": True, **handle(local, held, command)}
        except Error as e:
            answer = {"ok": False, "code": e.code.name, "message": e.message}
        print(json.dumps(answer), flush=True)
    local.close()


if __name__ == "__main__":
    main()
