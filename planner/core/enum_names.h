// Closed sets (ops, policies, planner and cost-model kinds, warning codes)
// have exactly one text form each: a table of names in the order of the
// enum's values, read one way by the XName() functions and the other by
// ParseX(). Metrics labels, JSON and the wire all use these names.
#ifndef RESHARD_PLANNER_CORE_ENUM_NAMES_H_
#define RESHARD_PLANNER_CORE_ENUM_NAMES_H_

#include <array>
#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace reshard {

// The name of `value`; `names[i]` names the enumerator of value i.
template <typename Enum, size_t N>
constexpr absl::string_view EnumName(
    Enum value, const std::array<absl::string_view, N>& names) {
  return names[static_cast<size_t>(value)];
}

// The enumerator named `name`, nullopt when none is (names are exact:
// case-sensitive, no aliases).
template <typename Enum, size_t N>
std::optional<Enum> ParseEnumName(
    absl::string_view name, const std::array<absl::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_ENUM_NAMES_H_
