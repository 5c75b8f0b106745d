#include "planner/flatten_policy.h"

#include <array>

#include "planner/enum_names.h"

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

std::vector<Group> AllowedMultiDimGroups(const Mesh& mesh,
                                         FlattenPolicy policy) {
  if (policy == FlattenPolicy::kExisting) return mesh.flattened();
  std::vector<Group> groups;
  if (policy == FlattenPolicy::kNone) return groups;
  int usable = 0;  // dims of size > 1
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (mesh.size(m) > 1) usable |= 1 << m;
  }
  for (int mask = 1; mask < (1 << mesh.ndim()); ++mask) {
    if ((mask & usable) != mask || __builtin_popcount(mask) < 2) continue;
    Group g;
    for (int m = 0; m < mesh.ndim(); ++m) {
      if (mask & (1 << m)) g.push_back(m);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace reshard
