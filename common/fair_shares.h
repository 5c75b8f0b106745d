// A resource shared fairly among credentials (the share of the job token a
// caller presents, coordinator/token_rules.h): RunJob slots, waiting
// StoreGets, jobs, rendezvous store bytes and registered meshes.
//
// The rule. A credential may take an amount while it stays within its cap
// and all together stay within the total; and, while another credential
// waits, only while it stays within its fair share: the total divided
// among the credentials that hold some or wait, rounded up. A credential
// refused for want of room waits until it holds its fair share, or for
// kWaitingWindow after its last refusal. So no credential grows past its
// fair share while another waits, and one alone may use everything its cap
// allows. Nothing already held is taken away: a job or a mesh is not
// dropped to make room.
//
// How a waiting credential gets in: whatever the others give back stays
// free for it, since none of them at or over its fair share may take any
// while it waits; its next try succeeds. Keys are kept only while a
// credential holds or waits. Thread-safe.
#ifndef RESHARD_COMMON_FAIR_SHARES_H_
#define RESHARD_COMMON_FAIR_SHARES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace reshard {

class FairShares {
 public:
  // How long a refused credential counts as waiting after its last try.
  static constexpr absl::Duration kWaitingWindow = absl::Seconds(10);
  using Clock = std::function<absl::Time()>;

  // An amount held, given back when destroyed.
  class Hold {
   public:
    Hold(FairShares* owner, std::string credential, int64_t amount)
        : owner_(owner), credential_(std::move(credential)), amount_(amount) {}
    Hold(Hold&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          credential_(std::move(other.credential_)),
          amount_(other.amount_) {}
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    Hold& operator=(Hold&&) = delete;
    ~Hold() {
      if (owner_ != nullptr) owner_->Give(credential_, amount_);
    }

   private:
    FairShares* owner_;
    std::string credential_;
    int64_t amount_;
  };

  // Why a take was refused, and the numbers to say so with.
  struct Refusal {
    enum class Why { kCredential, kTotal, kFairShare } why = Why::kTotal;
    int64_t held = 0;        // by the refused credential
    int64_t fair_share = 0;  // for kFairShare
  };

  // `max_total` in all; `clock` times the waiting window.
  explicit FairShares(
      int64_t max_total, Clock clock = [] { return absl::Now(); })
      : max_total_(max_total), clock_(std::move(clock)) {}

  // Takes `amount` (>= 0) for `credential` under a cap of `max` (the rule
  // above): true; or false with nothing taken, saying why in `refusal`
  // when given.
  bool Take(const std::string& credential, int64_t amount, int64_t max,
            Refusal* refusal = nullptr);
  // Gives back what Take took.
  void Give(const std::string& credential, int64_t amount);
  // Take as a Hold, or nullopt.
  std::optional<Hold> TryHold(const std::string& credential, int64_t amount,
                              int64_t max, Refusal* refusal = nullptr);

  // Held by all credentials together.
  int64_t total() const {
    absl::MutexLock lock(&mu_);
    return total_;
  }
  int64_t max_total() const { return max_total_; }

 private:
  // Forgets the waits older than kWaitingWindow.
  void ForgetOldWaitsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The total divided among the credentials that hold or wait, with
  // `credential` among them, rounded up.
  int64_t FairShareOfLocked(const std::string& credential) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // That fair share while another credential than `credential` waits; none
  // when no other does.
  std::optional<int64_t> FairShareLocked(const std::string& credential) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t max_total_;
  const Clock clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, int64_t> held_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> waiting_ ABSL_GUARDED_BY(mu_);
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

// The bounds a refusal names.
struct FairShareCaps {
  absl::string_view what;  // "concurrent RunJob calls", "jobs", ...
  int64_t per_credential;
  absl::string_view per_credential_flag;
  int64_t total;
  absl::string_view total_flag;
};

// What `refusal` says to `who` (the refused credential, "job token share
// ..."): the bound it met, its flag, and for the total and a fair share
// that a retry gets in once others give back.
std::string FairShareRefusalText(const FairShares::Refusal& refusal,
                                 absl::string_view who,
                                 const FairShareCaps& caps);

}  // namespace reshard

#endif  // RESHARD_COMMON_FAIR_SHARES_H_
