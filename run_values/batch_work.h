// What ranks run (docs/DESIGN.md §6, §8): planned tensors and the schedule they
// run as, the bucketed schedule or, tensor by tensor, UnbucketedSchedule's one
// step per bucket. A plan is a batch of one: OfPlan is the one place that
// builds it, and the one place where the two differ (a plan's report has a
// row per step, a batch's a row per bucket; a plan prints as a plan). The
// Coordinator, the agents, reshardctl and the rank run all mean one thing
// by a run.
#ifndef RESHARD_RUN_VALUES_BATCH_WORK_H_
#define RESHARD_RUN_VALUES_BATCH_WORK_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard::executor {

// How many times a run executes its work: warmup, then at least one timed
// iteration (ranks, the Coordinator's progress and the CLI count alike).
inline int TotalExecutions(int warmup, int iters) {
  return warmup + std::max(1, iters);
}

// One row of a run's report: what it names, its bytes (docs/DESIGN.md §3.3; a
// bucket's: its members' packed), and the step whose unit of execution (a
// bucket or a local step) it times.
struct RunRow {
  StepOp op = StepOp::kAllGather;
  Group group;
  int64_t members = 1;
  int64_t bytes = 0;
  BucketMember timed_by;
  // What the plan's cost model said the row takes (the step's or the
  // bucket's time_us), beside the measured time.
  double model_seconds = 0;
};

struct BatchWork {
  std::vector<Plan> plans;  // one per item, all planned
  BucketSchedule schedule;
  bool bucketed = true;
  // Labels of the items ("" for a plan run alone).
  std::vector<std::string> names;
  // Built by OfPlan: rows per step, printed as a plan.
  bool single_plan = false;

  // `plan` as a batch of one, run by its UnbucketedSchedule.
  static BatchWork OfPlan(const Mesh& mesh, Plan plan);

  std::vector<const Plan*> PlanPointers() const;
  // BatchDigest of the mesh, the plans and the schedule: what every rank
  // must agree on before it runs.
  uint64_t Digest(const Mesh& mesh) const;
  // The report's rows: a plan's steps, or the schedule's buckets.
  std::vector<RunRow> Rows(const Mesh& mesh) const;
};

// How messages name item t of a batch of `count` items: a batch of one is
// a plan, whose messages need no index. TensorPrefix leads a field path
// ("tensors[t]." or ""), TensorLabel a message ("tensors[t]: " or "").
std::string TensorPrefix(size_t count, size_t t);
std::string TensorLabel(size_t count, size_t t);
// What the ranks' digest of such a batch is called: "plan" or "batch".
const char* DigestNoun(size_t count);

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_BATCH_WORK_H_
