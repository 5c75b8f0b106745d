#include "server/store_get_call.h"

namespace reshard::server {

void StoreGetCall::Watch(const coordinator::Coordinator::StoreWait& wait,
                         absl::Time deadline) {
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    wait_ = wait;
    cancelled = cancelled_;
  }
  if (cancelled) {
    wait.Drop();
    return;
  }
  alarm_.Set(absl::ToChronoTime(deadline), [wait](bool fired) {
    if (fired) wait.Expire();
  });
}

void StoreGetCall::OnCancel() {
  std::optional<coordinator::Coordinator::StoreWait> wait;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    wait = wait_;
  }
  if (wait.has_value()) wait->Drop();
}

}  // namespace reshard::server
