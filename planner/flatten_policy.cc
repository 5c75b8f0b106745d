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
