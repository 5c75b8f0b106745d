#include "common/byte_size.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace reshard {

namespace {

constexpr std::pair<absl::string_view, int> kUnits[] = {
    {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view number = text;
  int shift = 0;
  for (const auto& [unit, bits] : kUnits) {
    if (absl::ConsumeSuffix(&number, unit)) {
      shift = bits;
      break;
    }
  }
  // Digits only: SimpleAtoi alone would take a sign and spaces.
  const bool digits =
      !number.empty() && std::all_of(number.begin(), number.end(), [](char c) {
        return absl::ascii_isdigit(c);
      });
  int64_t value = 0;
  if (!digits || !absl::SimpleAtoi(number, &value) ||
      value > (std::numeric_limits<int64_t>::max() >> shift)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not ", kByteSizeForm));
  }
  return value << shift;
}

std::string FormatByteSize(int64_t bytes) {
  for (auto it = std::rbegin(kUnits); it != std::rend(kUnits); ++it) {
    const int64_t unit = int64_t{1} << it->second;
    if (bytes > 0 && bytes % unit == 0) {
      return absl::StrCat(bytes / unit, it->first);
    }
  }
  return absl::StrCat(bytes);
}

}  // namespace reshard
