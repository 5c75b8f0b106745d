#include "planner/flatten_policy.h"

namespace reshard {

absl::string_view FlattenPolicyName(FlattenPolicy policy) {
  switch (policy) {
    case FlattenPolicy::kAny:
      return "any";
    case FlattenPolicy::kNone:
      return "none";
    case FlattenPolicy::kExisting:
      break;
  }
  return "existing";
}

std::optional<FlattenPolicy> ParseFlattenPolicy(absl::string_view name) {
  for (FlattenPolicy p :
       {FlattenPolicy::kExisting, FlattenPolicy::kAny, FlattenPolicy::kNone}) {
    if (FlattenPolicyName(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace reshard
