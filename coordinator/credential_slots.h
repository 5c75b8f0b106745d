// Calls in flight per credential (the job token a caller presents; "" for
// none): RunJob's slots, so that one client waiting on jobs that never
// become ready cannot take every slot from the rest (issue 28). Keys are
// kept only while a call holds them. Thread-safe.
#ifndef RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
#define RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_

#include <cstdint>
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

  // A slot for `credential`, or nullopt when it already holds `max`.
  std::optional<Slot> TryAcquire(const std::string& credential, int64_t max) {
    absl::MutexLock lock(&mu_);
    int64_t& held = held_[credential];
    if (held >= max) {
      if (held == 0) held_.erase(credential);
      return std::nullopt;
    }
    ++held;
    return Slot(this, credential);
  }

 private:
  void Release(const std::string& credential) {
    absl::MutexLock lock(&mu_);
    auto it = held_.find(credential);
    if (it != held_.end() && --it->second == 0) held_.erase(it);
  }

  absl::Mutex mu_;
  std::map<std::string, int64_t> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
