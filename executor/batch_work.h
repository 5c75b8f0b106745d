// A planned batch as ranks run it (DESIGN §8): every item's plan and the
// rows the plans run as, which are the bucketed schedule or, tensor by
// tensor, UnbucketedSchedule's one step per row. What a job's agents are
// sent (RunWork.batch) and what RunBatchRank takes, so that the
// Coordinator, the agents and reshardctl mean one thing by a batch run.
#ifndef RESHARD_EXECUTOR_BATCH_WORK_H_
#define RESHARD_EXECUTOR_BATCH_WORK_H_

#include <cstdint>
#include <vector>

#include "planner/bucket_schedule.h"
#include "planner/mesh.h"
#include "planner/plan.h"

namespace reshard::executor {

struct BatchWork {
  std::vector<Plan> plans;  // one per item, all planned
  BucketSchedule rows;
  bool bucketed = true;

  std::vector<const Plan*> PlanPointers() const;
  // BatchDigest of the mesh, the plans and the rows: what every rank must
  // agree on before it runs.
  uint64_t Digest(const Mesh& mesh) const;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BATCH_WORK_H_
