"""reshard.torch's conversions on the pinned torch, in one process on torch's
fake process group (8 ranks): DeviceMeshes with flattened meshes and rank
maps, placements both ways against torch's own shard-order decoding of
_StridedShard (its private API: a change in the pin fails here), refusals
with their reasons, and a DTensor's plan."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import reshard
import reshard.torch as rt
import torch
import torch.distributed as dist
from reshard import StatusCode
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor._dtensor_spec import DTensorSpec, ShardOrderEntry
from torch.distributed.tensor.placement_types import _StridedShard
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 8


@pytest.fixture(scope="module", autouse=True)
def fake_world() -> Iterator[None]:
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD)
    yield
    dist.destroy_process_group()


def test_device_mesh_with_flattened_meshes_and_a_rank_map() -> None:
    mesh = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("A", "B", "C"))
    mesh["A", "C"]._flatten()
    mesh["B", "C"]._flatten("bc")
    ours = rt.mesh_of(mesh)
    assert ours == reshard.Mesh(
        (2, 2, 2), ("A", "B", "C"), (("A", "C"), ("B", "C")), tuple(range(8))
    )
    permuted = torch.tensor([[3, 1, 0, 2], [7, 5, 4, 6]])
    other = DeviceMesh("cpu", permuted, mesh_dim_names=("dp", "tp"))
    assert rt.mesh_of(other) == reshard.Mesh(
        (2, 4), ("dp", "tp"), (), (3, 1, 0, 2, 7, 5, 4, 6)
    )


def test_a_layout_for_registration_at_an_agent() -> None:
    """Layout.registered: what reshard.agent registers a block's layout as
    (the rank map and the placements' text, docs/DESIGN.md §6.6)."""
    permuted = torch.tensor([[3, 1, 0, 2], [7, 5, 4, 6]])
    mesh = DeviceMesh("cpu", permuted, mesh_dim_names=("dp", "tp"))
    layout = rt.Layout(mesh, (Shard(0), Shard(0)), (9, 4), torch.float32)
    registered = layout.registered()
    assert registered.global_shape == (9, 4)
    assert registered.mesh.shape == (2, 4)
    assert registered.mesh.rank_map == (3, 1, 0, 2, 7, 5, 4, 6)
    assert registered.placements == "S(0)[0],S(0)[1]"  # torch's default order


def _random_case(
    rng: random.Random,
) -> tuple[tuple[int, ...], list[ShardOrderEntry], tuple]:
    ndim = rng.randint(1, 4)
    sizes = tuple(rng.choice([1, 2, 2, 3, 4]) for _ in range(ndim))
    tensor_dims = rng.randint(1, 3)
    by_dim: dict[int, list[int]] = {}
    placements: list = []
    for mesh_dim in range(ndim):
        kind = rng.random()
        if kind < 0.6:
            d = rng.randrange(tensor_dims)
            by_dim.setdefault(d, []).append(mesh_dim)
            placements.append(Shard(d))
        elif kind < 0.8:
            placements.append(Replicate())
        else:
            placements.append(Partial(rng.choice(["sum", "avg", "max", "min"])))
    order = []
    for d, mesh_dims in sorted(by_dim.items()):
        rng.shuffle(mesh_dims)
        order.append(ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(mesh_dims)))
    return sizes, order, tuple(placements)


def _order_of_text(text: str) -> dict[int, tuple[int, ...]]:
    """tensor dim -> mesh dims in split order, from "S(0)[1],S(0)[0],R"."""
    places: dict[int, list[tuple[int, int]]] = {}
    for mesh_dim, entry in enumerate(text.split(",")):
        if entry.startswith("S("):
            dim = int(entry[2 : entry.index(")")])
            place = int(entry[entry.index("[") + 1 : -1]) if "[" in entry else 0
            places.setdefault(dim, []).append((place, mesh_dim))
    return {d: tuple(m for _, m in sorted(v)) for d, v in places.items()}


class MeshSizes:
    """What torch's shard-order conversions read of a DeviceMesh: its dims'
    sizes (meshes of up to 256 ranks, past this fake world's 8)."""

    def __init__(self, sizes: tuple[int, ...]) -> None:
        self.sizes = sizes

    def size(self, mesh_dim: int) -> int:
        return self.sizes[mesh_dim]


def _without_unit_dims(
    order: dict[int, tuple[int, ...]], sizes: tuple[int, ...]
) -> dict[int, tuple[int, ...]]:
    # Orders that differ only by size-1 mesh dims split nothing differently.
    return {d: tuple(m for m in dims if sizes[m] > 1) for d, dims in order.items()}


def test_strided_shards_decode_as_torch_decodes_them() -> None:
    rng = random.Random(56)
    strided = 0
    for _ in range(1000):
        sizes, order, placements = _random_case(rng)
        mesh = MeshSizes(sizes)
        torch_placements = DTensorSpec._convert_shard_order_to_StridedShard(
            tuple(order), placements, mesh
        )
        strided += any(isinstance(p, _StridedShard) for p in torch_placements)
        text = rt.placement_text(torch_placements, sizes, 3)
        decoded = DTensorSpec._maybe_convert_StridedShard_to_shard_order(
            torch_placements, mesh
        )
        theirs = {e.tensor_dim: e.mesh_dims for e in decoded}
        assert _order_of_text(text) == theirs, (sizes, torch_placements, text)
        given = {e.tensor_dim: e.mesh_dims for e in order}
        assert _without_unit_dims(given, sizes) == _without_unit_dims(theirs, sizes)
        assert rt.placements_of(text, sizes) == torch_placements, (sizes, text)
    assert strided >= 100, strided


def test_refusals_name_the_placement_and_the_reason() -> None:
    with pytest.raises(reshard.Error) as e:
        rt.placement_text((_StridedShard(0, split_factor=3), Shard(0)), (2, 2), 2)
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert e.value.message.startswith(
        "placements[0]: _StridedShard(dim=0, sf=3) has split factor 3, which no shard "
        "order of tensor dim 0 gives"
    ), e.value.message
    with pytest.raises(reshard.Error) as e:
        rt.placement_text((Partial("product"), Replicate()), (2, 2), 2)
    assert e.value.message == (
        'placements[0]: Partial op "product" is not one Reshard plans '
        "(known: sum, avg, max, min)"
    )
    with pytest.raises(reshard.Error) as e:
        rt.placement_text((Shard(0),), (2, 2), 2)
    assert e.value.message == "placements: 1 for a mesh of 2 dims"
    with pytest.raises(reshard.Error) as e:
        rt.dtype_name(torch.uint8)
    assert e.value.message.startswith("tensor.dtype: torch.uint8 is not one")


def test_a_dtensors_plan_and_its_destination() -> None:
    mesh = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("A", "B", "C"))
    mesh["A", "C"]._flatten()
    src = (Partial("sum"), _StridedShard(-1, split_factor=2), Shard(1))
    local = torch.zeros(16, 4)
    dtensor = DTensor.from_local(
        local, mesh, src, run_check=False, shape=torch.Size([16, 16]), stride=(16, 1)
    )
    dst = (Replicate(), Shard(0), Replicate())
    ours = rt.plan(dtensor, dst)
    assert ours.src == "P(sum),S(1)[1],S(1)[0]", ours.src
    expected = reshard.plan(
        reshard.Mesh((2, 2, 2), ("A", "B", "C"), (("A", "C"),)),
        [16, 16],
        "P(sum),S(1)[1],S(1)[0]",
        "R,S(0),R",
    )
    assert ours == expected
    assert rt.dst_placements(ours) == dst
    torch_graph = rt.plan(dtensor, dst, planner="torch_graph")
    assert torch_graph.planner == "torch_graph"


def test_explain_and_the_refusals() -> None:
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    src = (_StridedShard(0, split_factor=4), Shard(0))
    dtensor = DTensor.from_local(
        torch.zeros(2, 8), mesh, src, run_check=False, shape=torch.Size([16, 8]),
        stride=(8, 1),
    )  # fmt: skip
    text = rt.explain(dtensor, (Replicate(), Shard(0)))
    assert text.startswith("Reshard (optimal):\ntrace: S(0)[1]S(0)[0]->"), text
    assert f"PyTorch {torch.__version__} (" in text
    assert "mesh dim " in text.split("PyTorch", 1)[1], text
    refusals = [
        ({}, StatusCode.INVALID_ARGUMENT, "placements: needed (one per mesh dim)"),
        (
            {"placements": (Replicate(),)},
            StatusCode.INVALID_ARGUMENT,
            "placements: 1 for a mesh of 2 dims",
        ),
        (
            {
                "placements": (Replicate(),),
                "device_mesh": init_device_mesh("cpu", (8,)),
            },
            StatusCode.UNIMPLEMENTED,
            "device_mesh: a mesh other than the DTensor's is a cross-mesh "
            "redistribution; plan it with reshard.torch.plan_cross_mesh",
        ),
    ]
    for kwargs, code, message in refusals:
        with pytest.raises(reshard.Error) as e:
            rt.redistribute(dtensor, **kwargs)
        assert (e.value.code, e.value.message) == (code, message), kwargs


def test_a_dtensor_planned_onto_another_mesh_of_the_world() -> None:
    """Source: ranks 0-3 as 2x2 with (A,B) flattened; destination: ranks
    7..4 as 4. The plan is reshard.plan_cross_mesh's on the same meshes,
    and a state dict plans tensor by tensor."""
    src = DeviceMesh("cpu", torch.arange(4).reshape(2, 2), mesh_dim_names=("A", "B"))
    src["A", "B"]._flatten()
    dst = DeviceMesh("cpu", torch.tensor([7, 6, 5, 4]), mesh_dim_names=("X",))
    dt = DTensor.from_local(
        torch.zeros(4, 8, dtype=torch.bfloat16),
        src,
        [Shard(0), Partial()],
        run_check=False,
        shape=torch.Size([8, 8]),
        stride=(8, 1),
    )
    ours = rt.plan_cross_mesh(dt, dst, [Shard(1)])
    expected = reshard.plan_cross_mesh(
        reshard.Mesh((2, 2), ("A", "B"), (("A", "B"),), (0, 1, 2, 3)),
        reshard.Mesh((4,), ("X",), (), (7, 6, 5, 4)),
        [8, 8],
        "S(0),P(sum)",
        "S(1)",
        "bfloat16",
    )
    assert ours == expected
    assert ours.dst_mesh.rank_map == (7, 6, 5, 4) and ours.dtype == "bfloat16"
    assert {t.to for t in ours.transfers} == {4, 5, 6, 7}
    plans = rt.plan_state_dict_cross_mesh({"w": dt}, dst, lambda name, t: [Replicate()])
    assert plans["w"].dst == "R"
    with pytest.raises(reshard.Error) as e:
        rt.plan_state_dict_cross_mesh({"step": 3}, dst, lambda name, t: [Replicate()])
    assert e.value.message == "state_dict['step']: not a DTensor"
