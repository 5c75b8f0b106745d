// Why a torch mode refuses a plan PyTorch makes: one wording for both
// modes (docs/PLAN_JSON.md lists these deviations).
#ifndef RESHARD_PLANNER_TORCH_REFUSAL_H_
#define RESHARD_PLANNER_TORCH_REFUSAL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "planner/dist_state.h"

namespace reshard {

// FAILED_PRECONDITION: PyTorch's plan passes through `state`, which mixes
// P(max) or P(min) with another Partial op. Such a state's value depends on
// the order its reductions run in, which it does not record, so Reshard
// holds none (HasAllowedPartialMix).
absl::Status MixedPartialRefusal(absl::string_view planner,
                                 const DistState& state);

}  // namespace reshard

#endif  // RESHARD_PLANNER_TORCH_REFUSAL_H_
