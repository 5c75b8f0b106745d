#include "executor/backends/nccl/pending_collectives.h"

#include <utility>

namespace reshard::executor {

absl::Status PendingCollectives::Add(absl::string_view op,
                                     absl::string_view group, int64_t token,
                                     absl::Time now) {
  if (calls_.empty() || watch_.aborted()) {
    absl::Status s = watch_.Begin(op, group, now);
    if (!s.ok()) return s;
  }
  calls_.push_back({std::string(op), std::string(group), token});
  return absl::OkStatus();
}

WatchAction PendingCollectives::Observe(const WatchPoll& poll, absl::Time now) {
  if (calls_.empty()) return watch_.Observe(poll, now);
  const WatchAction action = watch_.Observe(poll, now);
  switch (action) {
    case WatchAction::kAbort:
      calls_.clear();
      return action;
    case WatchAction::kWait:
      return action;
    case WatchAction::kComplete:
      break;
  }
  calls_.pop_front();
  if (calls_.empty()) return WatchAction::kComplete;
  // Idle after the retired call, so the next one's Begin cannot fail.
  (void)watch_.Begin(calls_.front().op, calls_.front().group, now);
  return WatchAction::kWait;
}

WatchAction PendingCollectives::Cancel(absl::string_view why) {
  calls_.clear();
  return watch_.Cancel(why);
}

void PendingCollectives::Fail(absl::Status status) {
  calls_.clear();
  watch_.Fail(std::move(status));
}

}  // namespace reshard::executor
