// Calls in flight per credential (the share of the job token a caller
// presents, coordinator/token_rules.h) and in all, shared fairly: RunJob's
// slots and the waiting StoreGets.
//
// The rule. A credential may take a slot while it holds fewer than its cap
// and all together hold fewer than the total; and, while another
// credential waits, only while it holds fewer than its fair share: the
// total divided among the credentials that hold a slot or wait, rounded
// up. A credential refused for want of room waits until it holds its fair
// share, or for kWaitingWindow after its last refusal. So no credential grows
// past its fair share while another waits, and one alone may use everything its
// cap allows.
//
// How a waiting credential gets in: every slot the others give back stays
// free for it, since none of them at or over its fair share may take one
// while it waits; its next try succeeds. Keys are kept only while a
// credential holds or waits. Thread-safe.
#ifndef RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
#define RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/clock.h"

namespace reshard::coordinator {

class CredentialSlots {
 public:
  // How long a refused credential counts as waiting after its last try.
  static constexpr absl::Duration kWaitingWindow = absl::Seconds(10);

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

  // Why TryAcquire found no slot, and the numbers to say so with.
  struct Refusal {
    enum class Why { kCredential, kTotal, kFairShare } why = Why::kTotal;
    int64_t held = 0;        // by the refused credential
    int64_t fair_share = 0;  // for kFairShare
  };

  // `max_total` slots in all; `clock` times the waiting window.
  explicit CredentialSlots(int64_t max_total, Clock clock = SystemClock())
      : max_total_(max_total), clock_(std::move(clock)) {}

  // A slot for `credential` under a cap of `max` (see the rule above), or
  // nullopt, saying why in `refusal` when given.
  std::optional<Slot> TryAcquire(const std::string& credential, int64_t max,
                                 Refusal* refusal = nullptr);

  // Slots held by all credentials together.
  int64_t total() const {
    absl::MutexLock lock(&mu_);
    return total_;
  }
  int64_t max_total() const { return max_total_; }

 private:
  void Release(const std::string& credential);
  // Forgets the waits older than kWaitingWindow.
  void ForgetOldWaitsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The total divided among the credentials that hold or wait, with
  // `credential` among them, rounded up.
  int64_t FairShareOfLocked(const std::string& credential) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // That fair share while another credential than `credential` waits; 0
  // when none does (no fair-share bound).
  int64_t FairShareLocked(const std::string& credential) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t max_total_;
  const Clock clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, int64_t> held_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> waiting_ ABSL_GUARDED_BY(mu_);
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_CREDENTIAL_SLOTS_H_
