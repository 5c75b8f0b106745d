// Planning a batch (docs/DESIGN.md §8): many tensors on one mesh, each answered
// with its own plan or its own error, and the bucketed schedule
// (bucket_schedule.h) of those that were planned. The entry point the
// service's PlanBatch, `reshardctl plan --batch --offline` and the
// benchmarks share, so that a batch means the same everywhere. Pure and
// thread-safe (the cache is).
#ifndef RESHARD_PLANNER_BATCH_BATCH_PLAN_H_
#define RESHARD_PLANNER_BATCH_BATCH_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/plan_request.h"

namespace reshard {

class PlanCache;  // planner/search/plan_cache.h

struct BatchOptions {
  int64_t bucket_bytes = kDefaultBucketBytes;  // >= 1
  // Fail the whole batch with the first item's error instead of answering
  // each bad item with its own.
  bool all_or_nothing = false;
};

struct BatchPlan {
  // One per item, in order: the plan, or the item's error, whose message
  // starts with `items[i].` and names the field.
  std::vector<absl::StatusOr<Plan>> plans;
  BucketSchedule schedule;  // of the planned items

  // Items answered with an error.
  int64_t ItemErrors() const;
};

// `status` as batch item `index`'s error: `items[index].` before its
// message (which names the field).
absl::Status BatchItemError(size_t index, const absl::Status& status);

// Plans every request on `mesh` through `cache` and buckets the plans.
// `requests` holds each item's parsed request, or its parse error; the
// requests share one PlanOptions (the batch's), which also prices the
// buckets. A search past its budget degrades that item (MakePlan's
// fallback with a warning), never the batch.
// Errors of the whole call: INVALID_ARGUMENT naming `bucket_bytes`; the
// first item's error (prefixed `items[i].`) under `all_or_nothing`; and
// `stop`'s status once it is not OK (polled between items and in searches:
// a deadline ends the batch).
absl::StatusOr<BatchPlan> PlanBatch(
    const Mesh& mesh, absl::Span<const absl::StatusOr<PlanRequest>> requests,
    const BatchOptions& options, PlanCache& cache, const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_BATCH_BATCH_PLAN_H_
