// Ranks agree on what they run before any data-sized message (docs/DESIGN.md
// §6.1): every rank of the mesh all-gathers a 64-bit digest (of a plan, or
// of a batch and its schedule) over the whole mesh in one fixed-size
// collective, in the run's memory space (the backend's memory).
#ifndef RESHARD_EXECUTOR_RUNTIME_DIGEST_EXCHANGE_H_
#define RESHARD_EXECUTOR_RUNTIME_DIGEST_EXCHANGE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/runtime/communicator_provider.h"
#include "executor/runtime/memory_space.h"
#include "planner/core/mesh.h"

namespace reshard::executor {

// Every rank of `mesh` contributes one 64-bit `word`; the words by mesh
// position, once all arrived. The provider's error when the world
// communicator cannot be created, the collective's when it fails. The
// collective's buffer is `space`'s. One rank: its own word, no collective.
absl::StatusOr<std::vector<int64_t>> AllGatherWord(
    const Mesh& mesh, int64_t word, CommunicatorProvider& provider,
    MemorySpace& space);

// Every rank of `mesh` contributes `digest`; OK when all agree, otherwise
// FAILED_PRECONDITION naming the ranks whose digest differs from this
// rank's (`what` names what the digest is of: "plan", "batch"). The
// provider's error when the world communicator cannot be created. The
// collective's buffer is `space`'s.
absl::Status ExchangeDigest(const Mesh& mesh, uint64_t digest, int64_t rank,
                            CommunicatorProvider& provider, MemorySpace& space,
                            absl::string_view what);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUNTIME_DIGEST_EXCHANGE_H_
