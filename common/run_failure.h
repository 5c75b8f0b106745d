// The ranks a failed run names, carried beside its status: the Coordinator
// attaches them (a payload of the absl::Status), the server sends them as
// a reshard.v1.RunFailure in the wire status's details (proto/convert.h),
// and the client library reads them back into the same payload, so that
// `job run --json` gives a scheduler one entry per failed rank, not prose.
#ifndef RESHARD_COMMON_RUN_FAILURE_H_
#define RESHARD_COMMON_RUN_FAILURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace reshard {

struct RankFailure {
  int64_t rank = 0;
  std::string host;  // the agent's --listen_address; "" when unknown
  // "lost" (its agent left), "no_report" (none by the deadline),
  // "not_joined" or "not_connected" (a job not ready by the deadline),
  // "refused_join" (its agent was refused at Join), or
  // the ErrorKindName of its report's status (common/error_kind.h).
  std::string kind;
  std::string message;

  bool operator==(const RankFailure&) const = default;
};

// `status` (not OK) carrying `ranks`.
absl::Status WithRankFailures(absl::Status status,
                              const std::vector<RankFailure>& ranks);

// {"rank": R, "host": "...", "kind": "...", "message": "..."}.
std::string RankFailureJson(const RankFailure& failure);

// The ranks `status` carries; empty when none.
std::vector<RankFailure> RankFailuresOf(const absl::Status& status);

}  // namespace reshard

#endif  // RESHARD_COMMON_RUN_FAILURE_H_
