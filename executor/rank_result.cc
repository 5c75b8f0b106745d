#include "executor/rank_result.h"

#include "absl/strings/str_cat.h"

namespace reshard::executor {

const absl::Status& ResultStatus(const RankResult& result) {
  return std::visit(
      [](const auto& r) -> const absl::Status& { return r.status; }, result);
}

absl::Status& MutableResultStatus(RankResult& result) {
  return std::visit([](auto& r) -> absl::Status& { return r.status; }, result);
}

void SetResultRank(RankResult& result, int64_t rank) {
  std::visit([rank](auto& r) { r.rank = rank; }, result);
}

std::optional<std::string> WhyNotValidated(const RankResult& result) {
  if (const auto* plan = std::get_if<RankReport>(&result)) {
    if (plan->validated) return std::nullopt;
    return plan->validation_error;
  }
  const BatchRankReport& batch = std::get<BatchRankReport>(result);
  for (size_t t = 0; t < batch.tensors.size(); ++t) {
    if (!batch.tensors[t].validated) {
      return absl::StrCat("tensors[", t,
                          "]: ", batch.tensors[t].validation_error);
    }
  }
  return std::nullopt;
}

}  // namespace reshard::executor
