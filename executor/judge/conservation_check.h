// Judging a run on the caller's own data (docs/DESIGN.md §6.5): every
// rank's conservation shares of the sources (taken before the run) and of
// the results, added over the whole mesh by one untimed all-gather, give
// each tensor's checksum before and after. Equal values prove the tensor
// moved bit for bit where ConservationOf says "exact".
#ifndef RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECK_H_
#define RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "executor/run/communicator_provider.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// The verdict on a tensor moved from `src` to `dst` whose conservation
// checksums were `before` and `after` the run: validated when they are
// equal or ConservationOf says nothing can be proved ("skipped").
TensorCheck ConservationVerdict(const TensorSpec& tensor, const DistState& src,
                                const DistState& dst, uint64_t before,
                                uint64_t after);

// This rank's share of each item's source: `sources[t]` is its block
// under plans[t].src.
std::vector<uint64_t> SourceShares(const Mesh& mesh,
                                   const std::vector<Plan>& plans,
                                   int64_t position,
                                   const std::vector<const void*>& sources);

// Every tensor's verdict: `results[t]` is this rank's block under
// plans[t].dst. The failure of the all-gather, if any.
absl::Status CheckConservation(const Mesh& mesh, const std::vector<Plan>& plans,
                               int64_t position, CommunicatorProvider& provider,
                               const std::vector<uint64_t>& source_shares,
                               const std::vector<void*>& results,
                               std::vector<TensorCheck>& checks);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECK_H_
