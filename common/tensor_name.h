// What may name a registered tensor (docs/DESIGN.md §6.6): checked where a
// name arrives, at an agent's local endpoint and in RunJob.
#ifndef RESHARD_COMMON_TENSOR_NAME_H_
#define RESHARD_COMMON_TENSOR_NAME_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/agent_capabilities.h"

namespace reshard {

inline constexpr size_t kMaxTensorNameLength = 128;

// OK for 1 to kMaxTensorNameLength characters of [A-Za-z0-9._:/-];
// INVALID_ARGUMENT "`field`: ..." otherwise.
inline absl::Status CheckTensorName(absl::string_view field,
                                    absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  }
  if (name.size() > kMaxTensorNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": longer than ", kMaxTensorNameLength, " characters"));
  }
  for (char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                         c == ':' || c == '/' || c == '-';
    if (!allowed) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": only [A-Za-z0-9._:/-] may name a tensor"));
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard

#endif  // RESHARD_COMMON_TENSOR_NAME_H_
