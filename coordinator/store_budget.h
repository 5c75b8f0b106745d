// The bytes every job's rendezvous store may hold together (issue 28: 64
// jobs with full stores must not take the server's memory): each store
// takes from this one budget before it grows and gives back what it
// frees, its keys erased or its job dropped. Thread-safe: stores of
// different jobs, under different mutexes, share it.
#ifndef RESHARD_COORDINATOR_STORE_BUDGET_H_
#define RESHARD_COORDINATOR_STORE_BUDGET_H_

#include <atomic>
#include <cstdint>

namespace reshard::coordinator {

class StoreBudget {
 public:
  explicit StoreBudget(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Takes `bytes` (>= 0) when the total stays within the maximum.
  bool TryTake(int64_t bytes) {
    int64_t used = used_.load();
    do {
      if (used + bytes > max_bytes_) return false;
    } while (!used_.compare_exchange_weak(used, used + bytes));
    return true;
  }
  void Give(int64_t bytes) { used_.fetch_sub(bytes); }

  int64_t used() const { return used_.load(); }
  int64_t max_bytes() const { return max_bytes_; }

 private:
  const int64_t max_bytes_;
  std::atomic<int64_t> used_{0};
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_STORE_BUDGET_H_
