#include "common/json_text.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "common/number_text.h"

namespace reshard {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string FormatDouble(double value) {
  if (!std::isfinite(value)) return "null";
  return ShortestRoundTrip(value);
}

std::string FormatOptionalDouble(const std::optional<double>& value,
                                 absl::string_view none) {
  return value.has_value() ? FormatDouble(*value) : std::string(none);
}

}  // namespace reshard
