// A KeyValueStore in a directory: the rendezvous of local processes
// (reshardctl exec --local, multi-process tests), one file per key named
// by the key's hex encoding. A value appears whole: it is written to a
// temporary file and renamed into place. Waits poll the directory (every
// 1 ms, backing off to 20 ms) until the keys exist or the timeout passes.
// Several processes may share one directory; each FileStore is
// thread-safe.
#ifndef RESHARD_EXECUTOR_STORES_FILE_STORE_H_
#define RESHARD_EXECUTOR_STORES_FILE_STORE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/stores/key_value_store.h"

namespace reshard::executor {

class FileStore : public KeyValueStore {
 public:
  // `dir` must exist; a fresh one per run (executor/stores/rendezvous_dir.h),
  // as keys left by an earlier run would be read as this run's.
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  // Writes a temporary file and renames it into place: a reader sees the
  // whole value or no file.
  absl::Status Set(const std::string& key, const std::string& value) override;
  // Polls the directory: after 1 ms, then doubling up to every 20 ms.
  absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds timeout) override;
  // Removes the keys' files; a file already gone is not an error.
  absl::Status DeleteByPrefix(const std::string& prefix) override;

 private:
  std::string PathOf(const std::string& key) const;

  const std::string dir_;
  std::atomic<int64_t> temporaries_{0};
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_STORES_FILE_STORE_H_
