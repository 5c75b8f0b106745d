// Bytes that rendezvous stores hold together (issue 28: 64 jobs with full
// stores must not take the server's memory). Each store takes from its
// share's budget, which takes from the budget of all jobs, before it grows,
// and gives back what it frees, its keys erased or its job dropped: one
// credential's jobs cannot take every job's bytes (docs/DESIGN.md §5,
// Quotas). Thread-safe: stores of different jobs, under different
// mutexes, share them.
#ifndef RESHARD_COORDINATOR_STORE_BUDGET_H_
#define RESHARD_COORDINATOR_STORE_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace reshard::coordinator {

class StoreBudget {
 public:
  // `what` names whose bytes these are and `flag` what bounds them, for
  // refusals. `parent`: the budget this one also takes from (null: none).
  StoreBudget(int64_t max_bytes, std::string what, std::string flag,
              std::shared_ptr<StoreBudget> parent = nullptr)
      : max_bytes_(max_bytes),
        what_(std::move(what)),
        flag_(std::move(flag)),
        parent_(std::move(parent)) {}

  // Takes `bytes` (>= 0) when this budget and every parent stay within
  // their maximum: null then; else, with nothing taken, the budget that
  // had too little.
  const StoreBudget* TryTake(int64_t bytes) {
    int64_t used = used_.load();
    do {
      if (used + bytes > max_bytes_) return this;
    } while (!used_.compare_exchange_weak(used, used + bytes));
    if (parent_ == nullptr) return nullptr;
    const StoreBudget* short_one = parent_->TryTake(bytes);
    if (short_one != nullptr) used_.fetch_sub(bytes);
    return short_one;
  }
  void Give(int64_t bytes) {
    used_.fetch_sub(bytes);
    if (parent_ != nullptr) parent_->Give(bytes);
  }

  int64_t used() const { return used_.load(); }
  int64_t max_bytes() const { return max_bytes_; }
  const std::string& what() const { return what_; }
  const std::string& flag() const { return flag_; }

 private:
  const int64_t max_bytes_;
  const std::string what_;
  const std::string flag_;
  const std::shared_ptr<StoreBudget> parent_;
  std::atomic<int64_t> used_{0};
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_STORE_BUDGET_H_
