#include "coordinator/credential_slots.h"

#include <set>

namespace reshard::coordinator {

std::optional<CredentialSlots::Slot> CredentialSlots::TryAcquire(
    const std::string& credential, int64_t max, Refusal* refusal) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  ForgetOldWaitsLocked(now);
  auto it = held_.find(credential);
  const int64_t held = it == held_.end() ? 0 : it->second;
  Refusal why{Refusal::Why::kTotal, held, 0};
  bool refused = false;
  if (held >= max) {
    why.why = Refusal::Why::kCredential;
    refused = true;
  } else if (total_ >= max_total_) {
    waiting_[credential] = now;
    refused = true;
  } else if (const int64_t fair = FairShareLocked(credential);
             fair > 0 && held >= fair) {
    why = Refusal{Refusal::Why::kFairShare, held, fair};
    refused = true;
  }
  if (refused) {
    if (refusal != nullptr) *refusal = why;
    return std::nullopt;
  }
  ++held_[credential];
  ++total_;
  // A credential waits until it has its fair share (or the window ends).
  if (held + 1 >= FairShareOfLocked(credential)) waiting_.erase(credential);
  return Slot(this, credential);
}

void CredentialSlots::Release(const std::string& credential) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(credential);
  if (it == held_.end()) return;
  --total_;
  if (--it->second == 0) held_.erase(it);
}

void CredentialSlots::ForgetOldWaitsLocked(absl::Time now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    it = now - it->second > kWaitingWindow ? waiting_.erase(it) : std::next(it);
  }
}

int64_t CredentialSlots::FairShareOfLocked(
    const std::string& credential) const {
  std::set<std::string> sharing = {credential};
  for (const auto& [name, since] : waiting_) sharing.insert(name);
  for (const auto& [name, count] : held_) sharing.insert(name);
  const auto n = static_cast<int64_t>(sharing.size());
  return (max_total_ + n - 1) / n;
}

int64_t CredentialSlots::FairShareLocked(const std::string& credential) const {
  for (const auto& [name, since] : waiting_) {
    if (name != credential) return FairShareOfLocked(credential);
  }
  return 0;
}

}  // namespace reshard::coordinator
