#include "metrics/label_cap.h"

namespace reshard::metrics {

std::string LabelCap::Admit(const std::string& value) {
  absl::MutexLock lock(&mu_);
  if (admitted_.contains(value)) return value;
  if (admitted_.size() >= cap_) return kOther;
  admitted_.insert(value);
  return value;
}

}  // namespace reshard::metrics
