#include "planner/search/flatten_policy.h"

#include <array>

#include "planner/core/enum_names.h"

namespace reshard {

namespace {

// In the order of FlattenPolicy's values.
constexpr std::array<absl::string_view, 3> kFlattenPolicyNames = {
    "existing", "any", "none"};

}  // namespace

absl::string_view FlattenPolicyName(FlattenPolicy policy) {
  return EnumName(policy, kFlattenPolicyNames);
}

std::optional<FlattenPolicy> ParseFlattenPolicy(absl::string_view name) {
  return ParseEnumName<FlattenPolicy>(name, kFlattenPolicyNames);
}

}  // namespace reshard
