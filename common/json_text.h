// How the project writes JSON values: every JSON writer (plans, batches,
// the CLI's outputs) quotes strings and prints numbers through these.
#ifndef RESHARD_COMMON_JSON_TEXT_H_
#define RESHARD_COMMON_JSON_TEXT_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace reshard {

// `s` as a JSON string literal, quotes included.
std::string JsonString(absl::string_view s);

// The shortest decimal text that reads back as exactly `value` ("10.2175");
// "null" for a non-finite value, which JSON cannot hold.
std::string FormatDouble(double value);

// FormatDouble of `value`, or `none` when it is unset ("null" in JSON,
// "default" in a --link flag).
std::string FormatOptionalDouble(const std::optional<double>& value,
                                 absl::string_view none);

}  // namespace reshard

#endif  // RESHARD_COMMON_JSON_TEXT_H_
