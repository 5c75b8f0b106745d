"""The package without its native module, grpcio or torch: values, Plan
JSON, and which replica serves a job (the vectors C++ is held to too)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import reshard
from reshard.job_replica import replica_index
from reshard_processes import ROOT, without_imports

PLAN_JSON = (
    '{"mesh":{"shape":[2,2],"dim_names":["A","B"],"flattened":[]},'
    '"tensor":{"shape":[8,8],"dtype":"float32"},"src":"S(0),R","dst":"R,R",'
    '"planner":"torch_greedy","torch_version":"2.9.0","cost_model":"alpha_beta",'
    '"steps":[{"op":"all_gather","mesh_dims":[0],"group":"A","reduce_op":null,'
    '"avg_divisor":1,"src_tensor_dim":0,"dst_tensor_dim":null,"from":"S(0),R",'
    '"to":"R,R","bytes":256,"time_us":12.5}],"trace":"S(0)R->RR",'
    '"total_time_us":12.5,"total_bytes":256,"peak_bytes":512,"warnings":[],'
    '"planning_us":3.0,"states_expanded":0,"cache_hit":false,"a_newer_field":1}'
)

# Loads the package from the source folder alone, with grpc, google.protobuf,
# torch and the native module made unimportable.
BARE = without_imports(
    ("grpc", "google", "torch", "reshard._native"),
    """
import reshard
plan = reshard.Plan.from_json(sys.argv[1])
print(plan.steps[0].op, plan.to_dict()["torch_version"])
try:
    reshard.plan(reshard.Mesh.from_text("A=2"), [8], "S(0)", "R")
except reshard.Error as e:
    print(e.code.name, e.message)
try:
    reshard.Client
except ImportError as e:
    print("client:", e)
""",
)


def test_imports_and_reads_plans_without_native_grpc_or_torch() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run(
        [sys.executable, "-c", BARE, PLAN_JSON], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "all_gather 2.9.0"
    assert lines[1].startswith(
        "UNIMPLEMENTED in-process planning needs the native module"
    )
    assert lines[2].startswith("client: reshard.Client needs grpcio and protobuf")


def test_plan_json_round_trips_and_accepts_unknown_fields() -> None:
    plan = reshard.Plan.from_json(PLAN_JSON)
    expected = json.loads(PLAN_JSON)
    del expected["a_newer_field"]
    assert json.loads(plan.to_json()) == expected
    assert reshard.Plan.from_json(plan.to_json()) == plan
    assert plan.communicating_steps == 1
    assert "torch_greedy planner" in plan.summary()
    with pytest.raises(reshard.Error) as e:
        reshard.Plan.from_json('{"mesh": {}}')
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert e.value.message.startswith("plan JSON: missing or bad field")


def test_values() -> None:
    mesh = reshard.Mesh.from_text("A=2,B=4", ["A,B"])
    assert (
        mesh.shape == (2, 4)
        and mesh.flattened == (("A", "B"),)
        and mesh.world_size == 8
    )
    assert reshard.Mesh((2, 2)).dim_names == ("d0", "d1")
    assert hash(mesh) == hash(reshard.Mesh.from_text("A=2,B=4", ["A,B"]))
    state = [reshard.Shard(1), reshard.Replicate(), reshard.Partial("min")]
    assert reshard.state_text(state) == "S(1),R,P(min)"
    with pytest.raises(reshard.Error) as e:
        reshard.Partial("prod")
    assert (
        e.value.message
        == 'placement: unknown reduce op "prod" (known: sum, avg, max, min)'
    )
    with pytest.raises(reshard.Error) as e:
        reshard.Mesh.from_text("A:2")
    assert e.value.message == 'mesh: "A:2" is not NAME=SIZE (e.g. A=2,B=2)'
    with pytest.raises(reshard.Error) as e:
        reshard.PlanOptions(cost_model="fast")
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert e.value.message.startswith('options.cost_model: unknown value "fast"')


def test_job_replica_vectors_shared_with_cpp() -> None:
    path = Path(os.environ["RESHARD_TEST_DATA"]) / "job_replica_vectors.jsonl"
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(cases) >= 40
    for c in cases:
        assert replica_index(c["job"], c["replicas"]) == c["index"], c
