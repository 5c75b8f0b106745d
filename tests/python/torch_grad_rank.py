"""One rank of test_torch_gradients: a long-lived Gloo CPU process that, for
every case of a file, redistributes a source DTensor that requires grad
(data rule values) with reshard.torch.redistribute and with DTensor's own,
takes the gradient of a scalar loss (each rank's local result times an
integer-valued weight), and prints one JSON line per case: whether
Reshard's forward and gradient equal the data rule's (the gradient is the
weight's block under the backward's placements), whether DTensor's equal
Reshard's element for element, or what DTensor raised. Cases marked
`double` also take a second-order gradient through DTensor ops (compared
with DTensor's own); `forward_dtype` / `backward_dtype` are passed to both.

  torch_grad_rank.py --rank R --world N --store PATH --cases FILE
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reshard.torch as rt
import torch
from data_rule import linear_index, reduced, source_block, source_value
from layout import State, box, coordinate
from reshard.torch.redistribute import backward_placements
from torch.distributed.tensor import DTensor, Placement, Replicate
from torch_plan_rank import DTYPES
from torch_ranks import serve_cases
from torch_redistribute_rank import equal, mesh_for

Redistribute = Callable[..., DTensor]


def weight(shape: tuple[int, ...], state: State, sizes: tuple[int, ...],
           coord: tuple[int, ...]) -> torch.Tensor:  # fmt: skip
    """The loss's weight: integers in [-6, 6], this rank's block under
    `state` (a state without Partial dims)."""
    return linear_index(shape, box(shape, state, sizes, coord)) * 7 % 13 - 6


def no_partial(placements: tuple[Placement, ...]) -> list[Placement]:
    return [Replicate() if p.is_partial() else p for p in placements]


class Case:
    def __init__(self, case: dict[str, Any], rank: int, meshes: dict) -> None:
        self.case, self.mesh = case, mesh_for(case, meshes)
        self.sizes, self.shape = tuple(case["sizes"]), tuple(case["shape"])
        self.coord = coordinate(rank, self.sizes)
        self.src = rt.placements_of(case["src"], self.sizes)
        self.dst = rt.placements_of(case["dst"], self.sizes)
        self.dtype = DTYPES[case["dtype"]]
        self.kw = {
            k: DTYPES[case[k]] for k in ("forward_dtype", "backward_dtype") if k in case
        }

    def state(self, placements: list[Placement]) -> State:
        ndim = len(self.shape)
        return State.parse(rt.placement_text(placements, self.sizes, ndim))

    def stride(self) -> tuple[int, ...]:
        stride = [1] * len(self.shape)
        for d in reversed(range(len(self.shape) - 1)):
            stride[d] = stride[d + 1] * self.shape[d + 1]
        return tuple(stride)

    def source(self) -> DTensor:
        local = source_block(
            self.shape, State.parse(self.case["src"]), self.sizes, self.coord
        ).to(self.dtype)
        x = DTensor.from_local(
            local, self.mesh, self.src, run_check=False,
            shape=torch.Size(self.shape), stride=self.stride(),
        )  # fmt: skip
        return x.detach().requires_grad_()

    def first_order(self, redistribute: Redistribute) -> dict[str, Any]:
        x = self.source()
        out = redistribute(x, self.dst, **self.kw)
        grad_at = no_partial(tuple(out.placements))
        local = out.to_local(grad_placements=grad_at)
        w = weight(self.shape, self.state(grad_at), self.sizes, self.coord)
        (local * w.to(local.dtype)).sum().backward()
        assert x.grad is not None
        return {
            "out": reduced(
                local.detach().clone(),
                State.parse(self.case["dst"]),
                self.sizes,
                self.mesh,
            ),  # fmt: skip
            "out_dtype": local.dtype,
            "grad": x.grad.to_local().clone(),
            "grad_placements": tuple(x.grad.placements),
            "grad_at": grad_at,
        }

    def second_order(self, redistribute: Redistribute) -> torch.Tensor:
        """d/dW of <dL/dx, V>, L = <redistribute(x), W>: the backward's
        backward, with W and V DTensors and the products DTensor ops."""
        x = self.source()
        out = redistribute(x, self.dst, **self.kw)
        w = self.dtensor_weight(no_partial(tuple(out.placements)), out.dtype)
        loss = (out * w).sum().full_tensor()
        (g,) = torch.autograd.grad(loss, x, create_graph=True)
        v = self.dtensor_weight(list(g.placements), g.dtype).detach()
        (g * v).sum().full_tensor().backward()
        assert w.grad is not None
        return w.grad.full_tensor().detach()

    def dtensor_weight(
        self, placements: list[Placement], dtype: torch.dtype
    ) -> DTensor:
        local = weight(self.shape, self.state(placements), self.sizes, self.coord)
        w = DTensor.from_local(
            local.to(dtype), self.mesh, placements, run_check=False,
            shape=torch.Size(self.shape), stride=self.stride(),
        )  # fmt: skip
        return w.detach().requires_grad_()

    def truth(self, ours: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        dst = State.parse(self.case["dst"])
        out = source_value(
            linear_index(self.shape, box(self.shape, dst, self.sizes, self.coord))
        )
        back = list(backward_placements(ours["grad_at"], self.src))
        grad = weight(self.shape, self.state(back), self.sizes, self.coord)
        return out, grad


def torch_redistribute(x: DTensor, placements: Any, **kw: Any) -> DTensor:
    return x.redistribute(x.device_mesh, placements, **kw)


def run_case(case: dict[str, Any], rank: int, meshes: dict) -> dict[str, Any]:
    c = Case(case, rank, meshes)
    ours = c.first_order(rt.redistribute)
    out, grad = c.truth(ours)
    line: dict[str, Any] = {
        "case": case["id"],
        "ours_ok": equal(ours["out"], out) and equal(ours["grad"], grad),
        "dtypes_ok": ours["out_dtype"] == c.kw.get("forward_dtype", c.dtype)
        and ours["grad"].dtype == c.dtype,
    }
    try:
        theirs = c.first_order(torch_redistribute)
    except Exception as e:  # DTensor's own failure, reported
        line["torch_raised"] = f"{type(e).__name__}: {str(e)[:160]}"
        return line
    line["torch_equal"] = {
        "out": equal(theirs["out"], ours["out"]),
        "grad": equal(theirs["grad"], ours["grad"]),
        "grad_placements": theirs["grad_placements"] == ours["grad_placements"],
    }
    if case.get("double"):
        line["double"] = double_outcome(c)
    return line


def double_outcome(c: Case) -> str:
    """ "equal", "differs", or "both raised: ..." (the DTensor ops around the
    redistribution refuse some placements either way); anything else is
    Reshard's failure alone and says so."""
    try:
        ours = c.second_order(rt.redistribute)
    except Exception as e:
        ours_error = f"{type(e).__name__}: {str(e)[:160]}"
    else:
        ours_error = None
    try:
        theirs = c.second_order(torch_redistribute)
    except Exception as e:
        if ours_error is not None:
            return f"both raised: {ours_error}"
        return f"only DTensor raised: {type(e).__name__}: {str(e)[:160]}"
    if ours_error is not None:
        return f"only Reshard raised: {ours_error}"
    return "equal" if equal(ours, theirs) else "differs"


if __name__ == "__main__":
    serve_cases(run_case)
