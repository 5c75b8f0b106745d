#include "run_values/rank_report.h"

#include "absl/strings/str_cat.h"
#include "run_values/batch_work.h"

namespace reshard::executor {

std::optional<std::string> RankReport::WhyNotValidated() const {
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (tensors[t].validated) continue;
    return absl::StrCat(TensorLabel(tensors.size(), t),
                        tensors[t].validation_error);
  }
  return std::nullopt;
}

}  // namespace reshard::executor
