// A job's rendezvous key/value store (docs/DESIGN.md §5): what the Gloo store
// and the NCCL unique-id exchange of its runs read and write. Every key belongs
// to the run during which it was set and is deleted when that run ends, so
// keys never accumulate across runs. A key belongs to the rank that set it
// first: another rank may read it but not overwrite or delete it, so one
// member cannot redirect another's peers. Bounded in keys and bytes. Not
// synchronized: the Job's mutex guards it (and waits on it).
#ifndef RESHARD_COORDINATOR_RENDEZVOUS_STORE_H_
#define RESHARD_COORDINATOR_RENDEZVOUS_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/limits.h"
#include "coordinator/store_budget.h"

namespace reshard::coordinator {

class RendezvousStore {
 public:
  // `budget`: the bytes shared with the other jobs' stores, its
  // credential's and all (null: only the per-job caps).
  explicit RendezvousStore(const CoordinatorLimits& limits,
                           std::shared_ptr<StoreBudget> budget = nullptr)
      : limits_(limits), budget_(std::move(budget)) {}
  ~RendezvousStore();
  RendezvousStore(const RendezvousStore&) = delete;
  RendezvousStore& operator=(const RendezvousStore&) = delete;

  // Rank `writer` sets `key` for `run_id` (overwriting its own key keeps
  // the byte count exact). PERMISSION_DENIED for a key another rank set,
  // RESOURCE_EXHAUSTED past the job's key or byte cap or a budget it
  // shares (--max_store_bytes_per_credential, --max_store_bytes_total),
  // INVALID_ARGUMENT for an empty or oversized key.
  absl::Status Set(const std::string& run_id, const std::string& key,
                   std::string value, int64_t writer);
  // Every key's value, in order, or nullopt while one is missing.
  std::optional<std::vector<std::string>> Lookup(
      const std::vector<std::string>& keys) const;
  bool Has(const std::string& key) const { return entries_.contains(key); }
  // The keys not yet set (for a timeout's message).
  std::vector<std::string> Missing(const std::vector<std::string>& keys) const;
  // Deletes every key set during `run_id`.
  void EraseRun(const std::string& run_id);
  // Deletes the keys rank `writer` set during `run_id` that start with
  // `prefix` (every rank's when `writer` is kAnyWriter); how many there
  // were.
  static constexpr int64_t kAnyWriter = -1;
  int64_t ErasePrefix(const std::string& run_id, const std::string& prefix,
                      int64_t writer);

  int64_t keys() const { return static_cast<int64_t>(entries_.size()); }
  int64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string run_id;
    std::string value;
    int64_t writer = 0;  // the rank that set it first
  };
  // INVALID_ARGUMENT for a bad key, PERMISSION_DENIED for another rank's.
  absl::Status CheckKey(const std::string& key, int64_t writer) const;
  static int64_t Size(const std::string& key, const Entry& entry) {
    return static_cast<int64_t>(key.size() + entry.value.size());
  }

  // Grows or shrinks bytes_ by `delta`, taking from or giving to the
  // budget: nullopt, or (nothing changed) what bound the budget met.
  std::optional<std::string> Resize(int64_t delta);

  const CoordinatorLimits& limits_;
  const std::shared_ptr<StoreBudget> budget_;
  std::map<std::string, Entry> entries_;
  int64_t bytes_ = 0;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_RENDEZVOUS_STORE_H_
