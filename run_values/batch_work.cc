#include "run_values/batch_work.h"

#include "absl/strings/str_cat.h"
#include "planner/batch/batch_digest.h"
#include "planner/cost/cost_model.h"

namespace reshard::executor {

BatchWork BatchWork::OfPlan(const Mesh& mesh, Plan plan) {
  BatchWork work;
  work.plans.push_back(std::move(plan));
  work.schedule = UnbucketedSchedule(mesh, work.PlanPointers(), CostOptions());
  work.bucketed = false;
  work.names = {""};
  work.single_plan = true;
  return work;
}

std::vector<const Plan*> BatchWork::PlanPointers() const {
  std::vector<const Plan*> pointers;
  pointers.reserve(plans.size());
  for (const Plan& plan : plans) pointers.push_back(&plan);
  return pointers;
}

uint64_t BatchWork::Digest(const Mesh& mesh) const {
  return BatchDigest(mesh, PlanPointers(), schedule);
}

std::vector<RunRow> BatchWork::Rows(const Mesh& mesh) const {
  std::vector<RunRow> rows;
  if (single_plan) {
    const Plan& plan = plans.front();
    // Bytes per docs/DESIGN.md §3.3 whatever model priced the plan:
    // alpha_beta's.
    const CostModel model(mesh, plan.tensor, CostOptions());
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      const Step& step = plan.steps[k];
      rows.push_back({step.op,
                      step.group,
                      1,
                      model.Price(step.from, step.transition()).bytes,
                      {0, static_cast<int>(k)},
                      step.time_us * 1e-6});
    }
    return rows;
  }
  for (const Bucket& bucket : schedule.buckets) {
    rows.push_back({bucket.op, bucket.group,
                    static_cast<int64_t>(bucket.members.size()), bucket.bytes,
                    bucket.members.front(), bucket.time_us * 1e-6});
  }
  return rows;
}

std::string TensorPrefix(size_t count, size_t t) {
  return count == 1 ? "" : absl::StrCat("tensors[", t, "].");
}

std::string TensorLabel(size_t count, size_t t) {
  return count == 1 ? "" : absl::StrCat("tensors[", t, "]: ");
}

const char* DigestNoun(size_t count) { return count == 1 ? "plan" : "batch"; }

}  // namespace reshard::executor
