"""torch's dtypes by the planner's names (docs/DESIGN.md §2)."""

from __future__ import annotations

import torch

from reshard._errors import invalid_argument

DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.bfloat16: "bfloat16",
    torch.float16: "float16",
    torch.int32: "int32",
    torch.int64: "int64",
}


def dtype_name(dtype: torch.dtype) -> str:
    """The planner's name of a torch dtype; INVALID_ARGUMENT for others."""
    if dtype not in DTYPES:
        raise invalid_argument(
            f"tensor.dtype: {dtype} is not one Reshard plans (known: "
            f"{', '.join(str(d) for d in DTYPES)})"
        )
    return DTYPES[dtype]
