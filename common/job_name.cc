#include "common/job_name.h"

#include "absl/strings/str_cat.h"
#include "common/echoed_text.h"

namespace reshard {

absl::Status CheckJobName(const std::string& name, int64_t max_bytes,
                          const char* field) {
  if (name.empty() || static_cast<int64_t>(name.size()) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": a job name has 1 to ", max_bytes,
                     " characters, not ", name.size()));
  }
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                       c == '.';
    if (!plain) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", EchoedValue(name),
                       " may only hold letters, digits, '-', '_' "
                       "and '.'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard
