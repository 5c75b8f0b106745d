// A 64-bit digest of what a batch makes ranks do (docs/DESIGN.md §8): every
// plan's digest (planner/format/plan_digest.h) and the schedule's buckets (op,
// group and members, in order), so that ranks given different batches or
// schedules refuse before the first data collective instead of sending messages
// of different sizes.
#ifndef RESHARD_PLANNER_BATCH_BATCH_DIGEST_H_
#define RESHARD_PLANNER_BATCH_BATCH_DIGEST_H_

#include <cstdint>

#include "absl/types/span.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// FNV-1a over the plans' digests and a canonical text of the buckets.
uint64_t BatchDigest(const Mesh& mesh, absl::Span<const Plan* const> plans,
                     const BucketSchedule& schedule);

}  // namespace reshard

#endif  // RESHARD_PLANNER_BATCH_BATCH_DIGEST_H_
