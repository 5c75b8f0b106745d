// Which multi-dim groups a plan may use (docs/DESIGN.md §3.2): registered
// flattened groups only, any ordered tuple of dims, or none.
#ifndef RESHARD_PLANNER_SEARCH_FLATTEN_POLICY_H_
#define RESHARD_PLANNER_SEARCH_FLATTEN_POLICY_H_

#include <array>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"

namespace reshard {

enum class FlattenPolicy {
  kExisting,  // registered flattened groups only (default)
  kAny,       // any ordered tuple of >= 2 dims; executors create them
  kNone,      // single-dim steps only
};

// "existing", "any", "none".
absl::string_view FlattenPolicyName(FlattenPolicy policy);
std::optional<FlattenPolicy> ParseFlattenPolicy(absl::string_view name);

// True when `policy` lets a plan run a collective on `group` (mesh dims in
// the group's order) of `mesh`: any single dim; a multi-dim group under
// kAny, or under kExisting when it has a communicator already
// (Mesh::IsRegistered: a registered group with the same ranks in the same
// order, or at most one dim of size > 1). Inline: searches ask for every
// edge.
inline bool GroupAllowed(const Mesh& mesh, FlattenPolicy policy,
                         absl::Span<const int> group) {
  if (group.size() == 1) return true;
  switch (policy) {
    case FlattenPolicy::kNone:
      return false;
    case FlattenPolicy::kAny:
      return true;
    case FlattenPolicy::kExisting:
      return mesh.IsRegistered(group);
  }
  return false;
}

// Calls `visit(group, dims_mask)` with each multi-dim group `policy` lets a
// plan use on `mesh`, up to the order of their dims, and the bit mask of its
// dims: under kAny every set of >= 2 dims of size > 1 (ascending, by
// increasing mask), under kExisting the registered groups, under kNone
// none. Inline and allocation-free: every search asks when it starts.
template <typename Visit>
void ForEachAllowedMultiDimGroup(const Mesh& mesh, FlattenPolicy policy,
                                 Visit&& visit) {
  if (policy == FlattenPolicy::kExisting) {
    for (const Group& g : mesh.flattened()) {
      int mask = 0;
      for (int m : g) mask |= 1 << m;
      visit(absl::Span<const int>(g), mask);
    }
  }
  if (policy != FlattenPolicy::kAny) return;
  int usable = 0;  // dims of size > 1
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (mesh.size(m) > 1) usable |= 1 << m;
  }
  for (int mask = 1; mask < (1 << mesh.ndim()); ++mask) {
    if ((mask & usable) != mask || __builtin_popcount(mask) < 2) continue;
    std::array<int, kMaxMeshDims> dims;
    int size = 0;
    for (int m = 0; m < mesh.ndim(); ++m) {
      if (mask & (1 << m)) dims[size++] = m;
    }
    visit(absl::Span<const int>(dims.data(), size), mask);
  }
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_FLATTEN_POLICY_H_
