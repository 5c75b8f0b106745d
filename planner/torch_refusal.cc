#include "planner/torch_refusal.h"

#include "absl/strings/str_cat.h"

namespace reshard {

absl::Status MixedPartialRefusal(absl::string_view planner,
                                 const DistState& state) {
  return absl::FailedPreconditionError(absl::StrCat(
      planner, ": PyTorch's plan passes through ", state.ToString(),
      ", which mixes Partial ops other than sum/avg: its value would depend "
      "on the order the reductions run in, so Reshard holds no such state; "
      "use the optimal planner"));
}

}  // namespace reshard
