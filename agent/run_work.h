// What a run needs before any communicator opens, read from its RunWork:
// the mesh and the work, a plan or a batch (proto/coordinator_convert.h),
// its digest recomputed and compared with the Coordinator's, the job's world
// size, iters, warmup and the per-collective timeout. A run that fails here
// fails on this rank alone and sends nothing to its peers, so ranks never run
// different plans (docs/DESIGN.md §5).
#ifndef RESHARD_AGENT_RUN_WORK_H_
#define RESHARD_AGENT_RUN_WORK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kept_schedules.h"
#include "executor/judge/harness.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "reshard/v1/coordinator.pb.h"
#include "run_values/batch_work.h"
#include "run_values/cross_work.h"

namespace reshard::agent {

// The timeout of every collective when a run names none (RunJob's default).
inline constexpr std::chrono::milliseconds kDefaultCollectiveTimeout{30000};

struct RunSetup {
  Mesh mesh;
  executor::BatchWork work;           // a plan is a batch of one
  executor::HarnessOptions options;   // iters and warmup
  std::chrono::milliseconds timeout;  // per collective
  // Set: a cross-mesh run, one plan or a batch (a kept schedule's is
  // shared with it).
  std::shared_ptr<const executor::CrossRunWork> cross;

  bool is_cross() const { return cross != nullptr; }
};

// The run's setup. INVALID_ARGUMENT naming the field for a missing run id
// or comm_prefix, a mesh, plan or batch that does not convert (a batch's
// rows that are not a schedule of its plans), negative iters or warmup, or
// a timeout that is not a finite number of seconds >= 0 (0: the default);
// FAILED_PRECONDITION when the mesh's world size is not the job's, or when
// the digest the Coordinator sent is not the plan's or batch's (both
// digests named; a cross-mesh run's: CrossWork::Digest), or when the run's
// peak on a rank (planner/cost/plan_memory.h)
// exceeds `max_run_bytes` (> 0; naming --max_run_bytes and both sizes).
// A run of a schedule (run.schedule_id, docs/DESIGN.md §9) with its plan
// keeps it in `schedules`; one without runs the plan kept there:
// FAILED_PRECONDITION saying "prepare again" when none is kept under the
// id (or no `schedules` are given), and the digest check as above.
absl::StatusOr<RunSetup> PrepareRun(const v1::RunWork& run, int64_t world_size,
                                    int64_t max_run_bytes = 0,
                                    KeptSchedules* schedules = nullptr);

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_RUN_WORK_H_
