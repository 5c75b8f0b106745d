// What one rank reports of a run: a plan's RankReport or a batch's
// BatchRankReport. The agents send either and the Coordinator keeps
// either; these accessors are the few things both kinds answer alike.
#ifndef RESHARD_EXECUTOR_RANK_RESULT_H_
#define RESHARD_EXECUTOR_RANK_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "executor/batch_rank_run.h"
#include "executor/rank_run.h"

namespace reshard::executor {

using RankResult = std::variant<RankReport, BatchRankReport>;

inline bool IsBatch(const RankResult& result) {
  return std::holds_alternative<BatchRankReport>(result);
}
// The run's failure on the rank (validation excluded).
const absl::Status& ResultStatus(const RankResult& result);
absl::Status& MutableResultStatus(RankResult& result);
void SetResultRank(RankResult& result, int64_t rank);
// Why the rank's result did not validate (a batch: its first tensor that
// did not, "tensors[i]: ..."); nullopt when it validated.
std::optional<std::string> WhyNotValidated(const RankResult& result);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RANK_RESULT_H_
