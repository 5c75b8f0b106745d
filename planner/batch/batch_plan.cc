#include "planner/batch/batch_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/search/plan_cache.h"

namespace reshard {
namespace {

// The first planned item's cost options: what the batch's plans were
// priced under.
CostOptions BatchCostOptions(
    absl::Span<const absl::StatusOr<PlanRequest>> requests) {
  for (const absl::StatusOr<PlanRequest>& r : requests) {
    if (r.ok()) return {r->options.cost_model, r->options.devices_per_host};
  }
  return {};
}

}  // namespace

absl::Status BatchItemError(size_t index, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("items[", index, "].", status.message()));
}

int64_t BatchPlan::ItemErrors() const {
  return std::count_if(plans.begin(), plans.end(),
                       [](const absl::StatusOr<Plan>& p) { return !p.ok(); });
}

absl::StatusOr<BatchPlan> PlanBatch(
    const Mesh& mesh, absl::Span<const absl::StatusOr<PlanRequest>> requests,
    const BatchOptions& options, PlanCache& cache, const StopCheck& stop) {
  const BucketOptions bucket_options{options.bucket_bytes,
                                     BatchCostOptions(requests)};
  if (bucket_options.bucket_bytes < 1) {
    return ScheduleBuckets(mesh, {}, bucket_options).status();
  }
  BatchPlan batch;
  batch.plans.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    if (stop) {
      if (absl::Status s = stop(); !s.ok()) return s;
    }
    absl::StatusOr<Plan> plan =
        requests[i].ok() ? MakePlanCached(mesh, *requests[i], cache, stop)
                         : absl::StatusOr<Plan>(requests[i].status());
    if (!plan.ok()) {
      if (stop) {
        if (absl::Status s = stop(); !s.ok()) return s;
      }
      plan = BatchItemError(i, plan.status());
      if (options.all_or_nothing) return plan.status();
    }
    batch.plans.push_back(std::move(plan));
  }
  std::vector<const Plan*> planned;
  planned.reserve(batch.plans.size());
  for (const absl::StatusOr<Plan>& p : batch.plans) {
    planned.push_back(p.ok() ? &*p : nullptr);
  }
  absl::StatusOr<BucketSchedule> schedule =
      ScheduleBuckets(mesh, planned, bucket_options);
  if (!schedule.ok()) return schedule.status();
  batch.schedule = *std::move(schedule);
  return batch;
}

}  // namespace reshard
