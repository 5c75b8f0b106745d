// What the Coordinator sends an agent over its dispatch stream: run a plan,
// cancel a run, or shut down. A run is shared by every rank's mailbox.
#ifndef RESHARD_COORDINATOR_WORK_H_
#define RESHARD_COORDINATOR_WORK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "run_values/batch_work.h"
#include "run_values/cross_work.h"

namespace reshard::coordinator {

// The work (a plan is a batch of one) and how to run it: what RunJob asks
// for.
// An item's registered tensors on every rank (docs/DESIGN.md §6.6).
struct TensorBinding {
  std::string source;
  std::string into;
  bool allocate = false;  // ranks without `into` allocate it
  bool operator==(const TensorBinding&) const = default;
};

struct RunSpec {
  Mesh mesh;
  executor::BatchWork work;
  int iters = 10;
  int warmup = 0;
  double timeout_seconds = 30;  // per collective
  // How long to wait for a lost rank before failing; 0: the server's
  // (CoordinatorLimits::agent_wait_seconds).
  double agent_wait_seconds = 0;
  // Set: the run moves the job's registered tensors, one binding per item
  // (one execution, no warm-up), staged and committed unless no_staging.
  std::vector<TensorBinding> tensors;
  bool no_staging = false;

  // Set: a cross-mesh run (docs/DESIGN.md §9) on generated data; `mesh`
  // is then one dim over the union of both rank maps and `work` empty.
  std::optional<executor::CrossWork> cross;
  // Set: a run of the job's prepared schedule with this id (`cross` is
  // its plan; coordinator/schedule_book.h).
  std::string schedule_id;
  // Set: a cross-mesh batch on generated data (one destination mesh for
  // all), its exchanges and buckets bounded by `exchange_bytes`, its
  // tensors named by `cross_names`; `mesh` as for `cross`.
  std::vector<executor::CrossWork> cross_batch;
  int64_t exchange_bytes = 0;
  std::vector<std::string> cross_names;

  bool on_tensors() const { return !tensors.empty(); }
  bool is_cross() const { return cross.has_value() || !cross_batch.empty(); }
  // What the ranks check they agree on.
  uint64_t Digest() const {
    if (!cross_batch.empty()) {
      return executor::CrossBatchDigest(cross_batch, exchange_bytes);
    }
    return cross.has_value() ? cross->Digest() : work.Digest(mesh);
  }
  // The tensors a rank reports (a cross-mesh run's source-only ranks: 0).
  size_t ItemsOf(int64_t rank) const {
    if (!cross_batch.empty()) {
      return cross_batch.front().IsDestination(rank) ? cross_batch.size() : 0;
    }
    if (cross.has_value()) return cross->IsDestination(rank) ? 1 : 0;
    return work.plans.size();
  }
};

struct RunWork {
  std::string run_id;
  int64_t generation = 0;
  std::shared_ptr<const RunSpec> spec;
  uint64_t digest = 0;      // spec->Digest()
  std::string comm_prefix;  // the store prefix the communicators meet under
  // A run of a prepared schedule (spec->schedule_id): whether the plan
  // goes with it (until every agent keeps it), and the job's schedules,
  // which the agents keep while listed.
  bool send_plan = true;
  std::vector<std::string> live_schedules;
};

struct WorkItem {
  enum class Kind { kRun, kCancel, kShutdown, kCommit };
  Kind kind = Kind::kRun;
  std::shared_ptr<const RunWork> run;  // kRun
  std::string run_id;                  // kCancel, kCommit
  std::string reason;                  // kShutdown
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_WORK_H_
