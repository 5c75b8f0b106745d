// Where a plan runner gets its communicators: one per group of global ranks
// (in the group's order), created on first request and reused after, so a
// process that runs many plans connects each group once.
#ifndef RESHARD_EXECUTOR_RUN_COMMUNICATOR_PROVIDER_H_
#define RESHARD_EXECUTOR_RUN_COMMUNICATOR_PROVIDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/run/communicator.h"
#include "planner/core/mesh.h"

namespace reshard::executor {

class CommunicatorProvider {
 public:
  virtual ~CommunicatorProvider() = default;

  // The communicator of the group `ranks` (global ranks in group order; this
  // process's rank is one of them). Creation is collective: every member
  // asks for the group, in the same order relative to its other groups.
  // `name` labels errors. The provider owns the communicator. Errors (a
  // member that never joins within the timeout, ...) name the group.
  virtual absl::StatusOr<Communicator*> Get(const std::vector<int64_t>& ranks,
                                            absl::string_view name) = 0;

  // The run using these communicators was cancelled (`why`). Thread-safe,
  // the one call another thread may make: a backend whose calls would
  // otherwise wait out their timeout for peers that stopped (NCCL) fails
  // the call in flight and every later one with CANCELLED, aborting its
  // communicators; the owner then drops the provider. Gloo's calls end at
  // their timeout or when peers close: nothing to do (the default).
  virtual void Cancel(absl::string_view why) { (void)why; }

  // Waits until every collective called on these communicators so far has
  // completed, within each call's timeout, and returns the first failure
  // (naming the call and its group). A backend whose calls complete on
  // return (Gloo) has nothing to wait for (the default). NCCL's calls
  // return once enqueued on the device, so a run calls Drain once, at its
  // end, before the host reads what its collectives wrote
  // (docs/DESIGN.md §6.1).
  virtual absl::Status Drain() { return absl::OkStatus(); }
};

// The communicator of every rank of `mesh`, in position order, named
// "world": the untimed exchanges over the whole mesh (digests,
// conservation shares) share it.
inline absl::StatusOr<Communicator*> WorldCommunicator(
    const Mesh& mesh, CommunicatorProvider& provider) {
  std::vector<int64_t> ranks;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    ranks.push_back(mesh.RankAt(p));
  }
  return provider.Get(ranks, "world");
}

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_COMMUNICATOR_PROVIDER_H_
