// Bytes that rendezvous stores hold together, so that 64 jobs with full
// stores cannot take the server's memory. The bytes of every job's store
// are shared fairly among credentials (common/fair_shares.h): a store takes
// from its job's share before it grows, under the share's cap and the
// total, and gives back what it frees, its keys erased or its job dropped
// (docs/DESIGN.md §5, Quotas). Thread-safe: stores of different jobs,
// under different mutexes, share the same FairShares.
#ifndef RESHARD_COORDINATOR_STORE_BUDGET_H_
#define RESHARD_COORDINATOR_STORE_BUDGET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/fair_shares.h"

namespace reshard::coordinator {

class StoreBudget {
 public:
  // `all_jobs`: the bytes of every store (--max_store_bytes_total);
  // `share` the key this job's bytes count under, `who` how refusals name
  // it, `max_per_share` its cap (--max_store_bytes_per_credential).
  StoreBudget(std::shared_ptr<FairShares> all_jobs, std::string share,
              std::string who, int64_t max_per_share)
      : all_jobs_(std::move(all_jobs)),
        share_(std::move(share)),
        who_(std::move(who)),
        max_per_share_(max_per_share) {}

  // Takes `bytes` (>= 0): nullopt; else, with nothing taken, what bound it
  // met, its flag named.
  std::optional<std::string> TryTake(int64_t bytes) {
    FairShares::Refusal refusal;
    if (all_jobs_->Take(share_, bytes, max_per_share_, &refusal)) {
      return std::nullopt;
    }
    return FairShareRefusalText(
        refusal, who_,
        {"bytes of rendezvous store values", max_per_share_,
         "--max_store_bytes_per_credential", all_jobs_->max_total(),
         "--max_store_bytes_total"});
  }
  void Give(int64_t bytes) { all_jobs_->Give(share_, bytes); }

 private:
  const std::shared_ptr<FairShares> all_jobs_;
  const std::string share_;
  const std::string who_;
  const int64_t max_per_share_;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_STORE_BUDGET_H_
