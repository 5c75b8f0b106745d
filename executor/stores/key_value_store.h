// The rendezvous store ranks meet through (docs/ARCHITECTURE.md): a Gloo
// group publishes its pair addresses there, an NCCL group its unique id.
// The project's own interface, so that no backend depends on another's:
// the Gloo backend adapts it to Gloo's store, the NCCL backend uses it as
// is. Implementations: MemoryStore (threads of one process), FileStore (a
// directory shared by local processes) and the agent's CoordinatorStore
// (the Coordinator's StoreSet/StoreGet/StoreDelete RPCs).
#ifndef RESHARD_EXECUTOR_STORES_KEY_VALUE_STORE_H_
#define RESHARD_EXECUTOR_STORES_KEY_VALUE_STORE_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace reshard::executor {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  // Sets `key` (overwriting).
  virtual absl::Status Set(const std::string& key,
                           const std::string& value) = 0;
  // Every key's value, in the order of `keys`, once all of them are set;
  // DEADLINE_EXCEEDED naming the keys still missing when `timeout` passes
  // first. Never waits longer than `timeout` (plus the implementation's
  // stated margin).
  virtual absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds timeout) = 0;
  // Deletes every key that starts with `prefix`.
  virtual absl::Status DeleteByPrefix(const std::string& prefix) = 0;
};

// The DEADLINE_EXCEEDED every store returns when keys stay missing:
// "<store>: waiting <timeout>ms for keys [a, b] timed out".
absl::Status KeysTimedOut(const std::string& store,
                          const std::vector<std::string>& missing,
                          std::chrono::milliseconds timeout);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_STORES_KEY_VALUE_STORE_H_
