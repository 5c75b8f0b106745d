"""Reshard from Python: plan tensor redistributions on N-D device meshes
in this process or on a Reshard service, and read, write and print plans.

    import reshard
    mesh = reshard.Mesh.from_text("A=2,B=2,C=2", flatten=["A,C"])
    plan = reshard.plan(mesh, [16, 16], "P(sum),R,P(sum)", "R,R,R")
    print(plan.summary())

`import reshard`, the value types and Plan JSON need neither the native
module nor grpcio: `reshard.plan` loads the native module on first use and
`reshard.Client` (reshard.client) needs grpcio. The reference is
docs/PYTHON.md.
"""

from __future__ import annotations

import pkgutil
from typing import Any

# The package spans the source folder and the build's folder (the native
# module and the generated stubs) until it is installed in one place.
__path__ = pkgutil.extend_path(__path__, __name__)

from reshard._cross_plan import (  # noqa: E402
    CrossBatchTensor,
    CrossMeshPlan,
    CrossSchedule,
    Transfer,
    TransferBytes,
)
from reshard._errors import Error, RankFailure, StatusCode  # noqa: E402
from reshard._inprocess import (  # noqa: E402
    cache_info,
    plan,
    plan_batch,
    plan_cross_mesh,
)
from reshard._plan import (  # noqa: E402
    BatchPlan,
    Bucket,
    BucketMember,
    Plan,
    PlanWarning,
    Step,
)
from reshard._results import (  # noqa: E402
    AgentInfo,
    JobInfo,
    JobRun,
    PreparedSchedule,
    RankReport,
    RecentRun,
    ResolvedGroup,
    RunProgress,
    StepResult,
    TensorCheck,
    TensorResult,
)
from reshard._values import (  # noqa: E402
    Link,
    Mesh,
    Partial,
    PlanItem,
    PlanOptions,
    Replicate,
    Shard,
    state_text,
)

try:
    from reshard._version import __version__  # noqa: E402
except ImportError:  # the source folder alone, not built
    __version__ = "unknown"

__all__ = [
    "AgentInfo",
    "BatchPlan",
    "Bucket",
    "BucketMember",
    "Client",
    "CrossBatchTensor",
    "CrossMeshPlan",
    "CrossSchedule",
    "Error",
    "JobInfo",
    "JobRun",
    "Link",
    "Mesh",
    "Partial",
    "Plan",
    "PlanItem",
    "PlanOptions",
    "PlanWarning",
    "PreparedSchedule",
    "RankFailure",
    "RankReport",
    "RecentRun",
    "RunProgress",
    "Replicate",
    "ResolvedGroup",
    "Shard",
    "StatusCode",
    "Step",
    "StepResult",
    "TensorCheck",
    "TensorResult",
    "Transfer",
    "TransferBytes",
    "cache_info",
    "plan",
    "plan_batch",
    "plan_cross_mesh",
    "state_text",
]


def __getattr__(name: str) -> Any:
    # The client imports grpcio: only when asked for.
    if name == "Client":
        from reshard.client import Client

        return Client
    raise AttributeError(f"module 'reshard' has no attribute {name!r}")
