#include "executor/stores/memory_store.h"

#include "absl/time/time.h"

namespace reshard::executor {

absl::Status MemoryStore::Set(const std::string& key,
                              const std::string& value) {
  absl::MutexLock lock(&mu_);
  values_[key] = value;
  return absl::OkStatus();
}

namespace {

// What a Get waits for: every key of `keys` in `values`.
struct Awaited {
  const std::map<std::string, std::string>* values;
  const std::vector<std::string>* keys;
};

bool AllSet(Awaited* awaited) {
  for (const std::string& key : *awaited->keys) {
    if (!awaited->values->contains(key)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> MemoryStore::Get(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  absl::MutexLock lock(&mu_);
  Awaited awaited{&values_, &keys};
  if (!mu_.AwaitWithTimeout(absl::Condition(&AllSet, &awaited),
                            absl::FromChrono(timeout))) {
    std::vector<std::string> missing;
    for (const std::string& key : keys) {
      if (!values_.contains(key)) missing.push_back(key);
    }
    return KeysTimedOut("memory store", missing, timeout);
  }
  std::vector<std::string> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) values.push_back(values_.at(key));
  return values;
}

absl::Status MemoryStore::DeleteByPrefix(const std::string& prefix) {
  absl::MutexLock lock(&mu_);
  auto it = values_.lower_bound(prefix);
  while (it != values_.end() && it->first.starts_with(prefix)) {
    it = values_.erase(it);
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
