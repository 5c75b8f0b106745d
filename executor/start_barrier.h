// A start every rank of the mesh shares, before each execution of a run:
// one all_reduce of one element on the world group. Without it each group
// starts an execution where the previous one left it, and groups that run
// side by side on a shared link drift apart (a fast pair runs ahead while a
// slow one still sends), which a plan never sees: its steps start together,
// after a step that spans them. A step's time is then measured from a start
// all its groups share, in a calibration sweep as in a plan
// (docs/PERFORMANCE.md, "Measured plan quality").
#ifndef RESHARD_EXECUTOR_START_BARRIER_H_
#define RESHARD_EXECUTOR_START_BARRIER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/communicator_provider.h"
#include "executor/memory_space.h"
#include "planner/mesh.h"

namespace reshard::executor {

class StartBarrier {
 public:
  // The world group's communicator (asked for after the run's own groups,
  // in the same order on every rank) and one element in the run's memory:
  // `space`'s, or the host's when it is null. A mesh of one rank waits for
  // nobody.
  static absl::StatusOr<std::unique_ptr<StartBarrier>> Make(
      const Mesh& mesh, int64_t position, CommunicatorProvider& provider,
      MemorySpace* space);

  // Returns once every rank has called it for `execution` (0-based); a
  // failure names the execution and the world group's collective.
  absl::Status Wait(int execution);

 private:
  StartBarrier(Communicator* world, SpaceBuffer element)
      : world_(world), element_(std::move(element)) {}
  void* Element() {
    if (element_.get() != nullptr) return element_.get();
    return &host_;
  }

  Communicator* world_;  // null: one rank
  SpaceBuffer element_;  // empty: the host's
  float host_ = 0;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_START_BARRIER_H_
