#include "common/fair_shares.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace reshard {

bool FairShares::Take(const std::string& credential, int64_t amount,
                      int64_t max, Refusal* refusal) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  ForgetOldWaitsLocked(now);
  auto it = held_.find(credential);
  const int64_t held = it == held_.end() ? 0 : it->second;
  Refusal why{Refusal::Why::kTotal, held, 0};
  bool refused = false;
  if (held + amount > max) {
    why.why = Refusal::Why::kCredential;
    refused = true;
  } else if (total_ + amount > max_total_) {
    waiting_[credential] = now;
    refused = true;
  } else if (const std::optional<int64_t> fair = FairShareLocked(credential);
             fair.has_value() && held + amount > *fair) {
    why = Refusal{Refusal::Why::kFairShare, held, *fair};
    refused = true;
  }
  if (refused) {
    if (refusal != nullptr) *refusal = why;
    return false;
  }
  if (amount == 0) return true;
  held_[credential] += amount;
  total_ += amount;
  // A credential waits until it has its fair share (or the window ends).
  if (held + amount >= FairShareOfLocked(credential)) {
    waiting_.erase(credential);
  }
  return true;
}

void FairShares::Give(const std::string& credential, int64_t amount) {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(credential);
  if (it == held_.end()) return;
  const int64_t given = std::min(amount, it->second);
  total_ -= given;
  if ((it->second -= given) == 0) held_.erase(it);
}

std::optional<FairShares::Hold> FairShares::TryHold(
    const std::string& credential, int64_t amount, int64_t max,
    Refusal* refusal) {
  if (!Take(credential, amount, max, refusal)) return std::nullopt;
  return Hold(this, credential, amount);
}

void FairShares::ForgetOldWaitsLocked(absl::Time now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    it = now - it->second > kWaitingWindow ? waiting_.erase(it) : std::next(it);
  }
}

int64_t FairShares::FairShareOfLocked(const std::string& credential) const {
  std::set<std::string> sharing = {credential};
  for (const auto& [name, since] : waiting_) sharing.insert(name);
  for (const auto& [name, amount] : held_) sharing.insert(name);
  const auto n = static_cast<int64_t>(sharing.size());
  return (max_total_ + n - 1) / n;
}

std::optional<int64_t> FairShares::FairShareLocked(
    const std::string& credential) const {
  for (const auto& [name, since] : waiting_) {
    if (name != credential) return FairShareOfLocked(credential);
  }
  return std::nullopt;
}

std::string FairShareRefusalText(const FairShares::Refusal& refusal,
                                 absl::string_view who,
                                 const FairShareCaps& caps) {
  using Why = FairShares::Refusal::Why;
  switch (refusal.why) {
    case Why::kCredential:
      return absl::StrCat(who, " already holds its maximum of ",
                          caps.per_credential, " ", caps.what, " (",
                          caps.per_credential_flag, ")");
    case Why::kFairShare:
      return absl::StrCat(
          who, " holds ", refusal.held, " of the ", caps.total, " ", caps.what,
          " this server allows, its fair share while another credential "
          "waits (",
          caps.total_flag,
          " divided among the credentials using it); try again once it holds "
          "fewer");
    case Why::kTotal:
      break;
  }
  return absl::StrCat("this server already holds its maximum of ", caps.total,
                      " ", caps.what, " (", caps.total_flag,
                      "); what is given back goes to the credentials below "
                      "their fair share first, so try again");
}

}  // namespace reshard
