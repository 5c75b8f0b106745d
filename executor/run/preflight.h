// A run's pre-flight step (docs/DESIGN.md §6.1, §6.4, §6.6): before any
// data-sized message, every rank of the mesh all-gathers two 64-bit words
// in one fixed-size collective, in the run's memory space: the digest of
// what it runs (a plan, or a batch and its schedule) and the status code of
// its binding of the buffers (OK for generated data or a caller's own). A
// refusal or a disagreement then stops every rank before any data moves,
// none tears its communicators down, and each fails with the refusing
// ranks' own errors, never a peer's transport error.
#ifndef RESHARD_EXECUTOR_RUN_PREFLIGHT_H_
#define RESHARD_EXECUTOR_RUN_PREFLIGHT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "executor/memory/memory_space.h"
#include "executor/run/communicator_provider.h"
#include "planner/core/mesh.h"

namespace reshard::executor {

// One rank's side of the step.
struct Preflight {
  // In: this rank's binding of its buffers (a job's registered tensors);
  // OK when it has nothing to bind.
  absl::Status binding;
  // Out: the step's verdict. OK when every rank bound its buffers and runs
  // the same digest; this rank's refusal, marked ErrorKind::kBinding;
  // ABORTED naming the refusing ranks when only peers refused;
  // FAILED_PRECONDITION naming the ranks whose digest differs; the
  // exchange's own error (with this rank's refusal, if any, before it).
  absl::Status verdict;
  // Out: the exchange completed, so the communicators stay usable.
  bool exchanged = false;
};

// The step for global `rank` of `mesh` running `digest` (`noun` names what
// it is of: "plan", "batch"): sets `step.verdict` and `step.exchanged` and
// returns the verdict. The collective's buffer is `space`'s (a backend on
// device memory cannot read the host's). One rank: no collective.
absl::Status RunPreflight(const Mesh& mesh, uint64_t digest,
                          absl::string_view noun, int64_t rank,
                          CommunicatorProvider& provider, MemorySpace& space,
                          Preflight& step);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_PREFLIGHT_H_
