#include "planner/format/plan_digest.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fnv1a.h"

namespace reshard {

uint64_t PlanDigest(const Mesh& mesh, const Plan& plan) {
  std::string text = absl::StrCat(
      mesh.CanonicalText(true), "|", DTypeName(plan.tensor.dtype()), "[",
      absl::StrJoin(plan.tensor.shape(), ","), "]|", plan.src.ToString(), "|",
      plan.dst.ToString());
  for (const Step& s : plan.steps) {
    absl::StrAppend(
        &text, "|", StepOpName(s.op), ":", absl::StrJoin(s.group, ","), ":",
        s.src_tensor_dim.value_or(-1), ":", s.dst_tensor_dim.value_or(-1), ":",
        ReduceOpName(s.reduce_op), ":", s.avg_divisor, ":", s.from.ToString(),
        ">", s.to.ToString());
  }
  return Fnv1a64(text);
}

}  // namespace reshard
