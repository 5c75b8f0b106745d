#include "coordinator/rendezvous_store.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard::coordinator {

absl::Status RendezvousStore::CheckKey(const std::string& key,
                                       int64_t writer) const {
  if (key.empty() || static_cast<int64_t>(key.size()) > limits_.max_key_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: must have 1 to ", limits_.max_key_bytes,
                     " bytes (has ", key.size(), ")"));
  }
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.writer != writer) {
    return absl::PermissionDeniedError(
        absl::StrCat("key: \"", key, "\" was set by rank ", it->second.writer,
                     "; a rank may write only the keys it set first"));
  }
  return absl::OkStatus();
}

absl::Status RendezvousStore::Set(const std::string& run_id,
                                  const std::string& key, std::string value,
                                  int64_t writer) {
  absl::Status s = CheckKey(key, writer);
  if (!s.ok()) return s;
  auto it = entries_.find(key);
  const int64_t old_size = it == entries_.end() ? 0 : Size(key, it->second);
  const int64_t new_size = static_cast<int64_t>(key.size() + value.size());
  if (it == entries_.end() && keys() >= limits_.max_store_keys_per_job) {
    return absl::ResourceExhaustedError(
        absl::StrCat("key: cannot add \"", key,
                     "\": the job's rendezvous store holds its maximum of ",
                     limits_.max_store_keys_per_job, " keys"));
  }
  if (bytes_ - old_size + new_size > limits_.max_store_bytes_per_job) {
    return absl::ResourceExhaustedError(
        absl::StrCat("value: setting \"", key,
                     "\" would take the job's rendezvous store "
                     "past its maximum of ",
                     limits_.max_store_bytes_per_job, " bytes"));
  }
  if (std::optional<std::string> refused = Resize(new_size - old_size)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("value: setting \"", key, "\": ", *refused));
  }
  entries_[key] = Entry{run_id, std::move(value), writer};
  return absl::OkStatus();
}

RendezvousStore::~RendezvousStore() { Resize(-bytes_); }

std::optional<std::string> RendezvousStore::Resize(int64_t delta) {
  if (budget_ != nullptr && delta > 0) {
    if (std::optional<std::string> refused = budget_->TryTake(delta)) {
      return refused;
    }
  }
  if (budget_ != nullptr && delta < 0) budget_->Give(-delta);
  bytes_ += delta;
  return std::nullopt;
}

std::optional<std::vector<std::string>> RendezvousStore::Lookup(
    const std::vector<std::string>& keys) const {
  std::vector<std::string> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    values.push_back(it->second.value);
  }
  return values;
}

std::vector<std::string> RendezvousStore::Missing(
    const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (!entries_.contains(key)) missing.push_back(key);
  }
  return missing;
}

void RendezvousStore::EraseRun(const std::string& run_id) {
  ErasePrefix(run_id, "", kAnyWriter);
}

int64_t RendezvousStore::ErasePrefix(const std::string& run_id,
                                     const std::string& prefix,
                                     int64_t writer) {
  int64_t erased = 0;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.starts_with(prefix);) {
    if (it->second.run_id == run_id &&
        (writer == kAnyWriter || it->second.writer == writer)) {
      Resize(-Size(it->first, it->second));
      it = entries_.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  return erased;
}

}  // namespace reshard::coordinator
