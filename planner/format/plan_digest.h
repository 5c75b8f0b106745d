// A 64-bit digest of what a plan makes ranks do (mesh, tensor, states and
// steps; not its costs or timings). The Coordinator sends it with every run
// and each rank recomputes it before it opens a communicator, and the plan
// runner exchanges it before the first data collective, so ranks never run
// different plans (docs/DESIGN.md §5, §6.1).
#ifndef RESHARD_PLANNER_FORMAT_PLAN_DIGEST_H_
#define RESHARD_PLANNER_FORMAT_PLAN_DIGEST_H_

#include <cstdint>

#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// FNV-1a (planner/fnv1a.h) over a canonical text of the plan.
uint64_t PlanDigest(const Mesh& mesh, const Plan& plan);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_PLAN_DIGEST_H_
