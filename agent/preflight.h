// A run's pre-flight step (docs/DESIGN.md §6.4 and §6.6): before any data
// moves, every rank of the mesh, whether it bound its registered tensors
// or refused them, all-gathers its binding's status code over the kept
// communicators. A refusal then stops every rank before any data
// collective, none tears its communicators down, and the run fails with
// the refusing ranks' own errors, never a peer's transport error.
#ifndef RESHARD_AGENT_PREFLIGHT_H_
#define RESHARD_AGENT_PREFLIGHT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "executor/runtime/communicator_provider.h"
#include "executor/runtime/memory_space.h"
#include "planner/core/mesh.h"

namespace reshard::agent {

struct PreflightOutcome {
  // OK when every rank bound its tensors; this rank's refusal, marked
  // ErrorKind::kBinding, when it refused; ABORTED naming the refusing
  // ranks when only peers did; the exchange's own error when it failed.
  absl::Status status;
  // The exchange completed, so the communicators stay usable.
  bool communicators_usable = true;
};

// `binding`: this rank's binding of the run's tensors (OK for a run on
// generated data).
PreflightOutcome Preflight(const Mesh& mesh, const absl::Status& binding,
                           executor::CommunicatorProvider& provider,
                           executor::MemorySpace& space);

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_PREFLIGHT_H_
