// Calls in flight per credential (the share of the job token a caller
// presents, coordinator/token_rules.h) and in all: RunJob's slots and the
// waiting StoreGets, so that one client cannot take every slot from the
// rest. Keys are kept only while a call holds them. Thread-safe.
#ifndef RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
#define RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace reshard::coordinator {

class CredentialSlots {
 public:
  // One held slot, given back when destroyed.
  class Slot {
   public:
    Slot(CredentialSlots* owner, std::string credential)
        : owner_(owner), credential_(std::move(credential)) {}
    Slot(Slot&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          credential_(std::move(other.credential_)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->Release(credential_);
    }

   private:
    CredentialSlots* owner_;
    std::string credential_;
  };

  // Why TryAcquire found no slot.
  enum class Full { kCredential, kTotal };

  // A slot for `credential`, or nullopt (saying why in `full` when given)
  // when it already holds `max` or all credentials together hold
  // `max_total`.
  std::optional<Slot> TryAcquire(
      const std::string& credential, int64_t max,
      int64_t max_total = std::numeric_limits<int64_t>::max(),
      Full* full = nullptr) {
    absl::MutexLock lock(&mu_);
    int64_t& held = held_[credential];
    if (held >= max || total_ >= max_total) {
      if (full != nullptr) {
        *full = held >= max ? Full::kCredential : Full::kTotal;
      }
      if (held == 0) held_.erase(credential);
      return std::nullopt;
    }
    ++held;
    ++total_;
    return Slot(this, credential);
  }

 private:
  void Release(const std::string& credential) {
    absl::MutexLock lock(&mu_);
    auto it = held_.find(credential);
    if (it == held_.end()) return;
    --total_;
    if (--it->second == 0) held_.erase(it);
  }

  absl::Mutex mu_;
  std::map<std::string, int64_t> held_ ABSL_GUARDED_BY(mu_);
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
