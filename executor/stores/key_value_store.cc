#include "executor/stores/key_value_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard::executor {

absl::Status KeysTimedOut(const std::string& store,
                          const std::vector<std::string>& missing,
                          std::chrono::milliseconds timeout) {
  return absl::DeadlineExceededError(
      absl::StrCat(store, ": waiting ", timeout.count(), "ms for keys [",
                   absl::StrJoin(missing, ", "), "] timed out"));
}

}  // namespace reshard::executor
