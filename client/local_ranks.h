// Ranks of one run on this machine, as `reshardctl exec --local` starts
// them: each a process (forked, its report sent back through a pipe) or,
// with `threads`, a thread, all meeting through one store (a directory of
// files for processes, memory for threads).
#ifndef RESHARD_CLIENT_LOCAL_RANKS_H_
#define RESHARD_CLIENT_LOCAL_RANKS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/stores/key_value_store.h"
#include "run_values/rank_report.h"

namespace reshard::client {

// What one rank runs: the report of local rank `index`, whose ranks meet
// through `store`.
using LocalRankBody = std::function<executor::RankReport(
    int index, std::shared_ptr<executor::KeyValueStore> store)>;

// How long the other ranks get once one has died: two of their calls'
// timeouts (a peer's failure reaches each within one) and a second.
inline std::chrono::milliseconds AfterLoss(int timeout_seconds) {
  return std::chrono::seconds(2 * timeout_seconds + 1);
}

// Runs `body` for indexes 0..n−1 and returns their reports in index order.
// A process that dies, exits without a report or outlives `deadline`
// (then killed) is reported as UNAVAILABLE for rank `rank_of(index)`; once
// one has died, the others get `after_loss` to report and are then
// stopped, each saying which rank had died.
// Errors: the rendezvous directory or a fork that cannot be had.
absl::StatusOr<std::vector<executor::RankReport>> RunLocalRanks(
    int n, bool threads, std::chrono::milliseconds deadline,
    std::chrono::milliseconds after_loss,
    const std::function<int64_t(int)>& rank_of, const LocalRankBody& body);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_LOCAL_RANKS_H_
