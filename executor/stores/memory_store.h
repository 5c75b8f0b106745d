// A KeyValueStore in this process's memory: the rendezvous of ranks that
// are threads of one process (reshardctl exec --threads, tests). Waits
// block on a condition variable until the keys are set or the timeout
// passes. Thread-safe.
#ifndef RESHARD_EXECUTOR_STORES_MEMORY_STORE_H_
#define RESHARD_EXECUTOR_STORES_MEMORY_STORE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "executor/stores/key_value_store.h"

namespace reshard::executor {

class MemoryStore : public KeyValueStore {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override;
  // Blocks on the store's mutex until every key is set (no polling).
  absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds timeout) override;
  absl::Status DeleteByPrefix(const std::string& prefix) override;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_STORES_MEMORY_STORE_H_
