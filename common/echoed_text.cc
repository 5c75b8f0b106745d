#include "common/echoed_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace reshard {

std::string EscapedText(absl::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return absl::CHexEscape(value);
  return absl::StrCat(absl::CHexEscape(value.substr(0, max_bytes)), "...(",
                      value.size(), " bytes)");
}

std::string EchoedValue(absl::string_view value) {
  return absl::StrCat("\"", EscapedText(value, kMaxEchoedValueBytes), "\"");
}

std::string BoundedMessage(absl::string_view message) {
  if (message.size() <= kMaxErrorMessageBytes) return std::string(message);
  return absl::StrCat(message.substr(0, kMaxErrorMessageBytes), "...(",
                      message.size(), " bytes)");
}

}  // namespace reshard
