#include "planner/batch/batch_digest.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fnv1a.h"
#include "planner/format/plan_digest.h"

namespace reshard {

uint64_t BatchDigest(const Mesh& mesh, absl::Span<const Plan* const> plans,
                     const BucketSchedule& schedule) {
  std::string text = "batch";
  for (const Plan* plan : plans) {
    absl::StrAppend(&text, "|",
                    plan != nullptr ? PlanDigest(mesh, *plan) : uint64_t{0});
  }
  for (const Bucket& b : schedule.buckets) {
    absl::StrAppend(&text, "|", StepOpName(b.op), ":",
                    absl::StrJoin(b.group, ","));
    for (const BucketMember& m : b.members) {
      absl::StrAppend(&text, ":", m.tensor, ".", m.step);
    }
  }
  return Fnv1a64(text);
}

}  // namespace reshard
