// Which multi-dim groups a plan may use (DESIGN §3.2): registered
// flattened groups only, any ordered tuple of dims, or none.
#ifndef RESHARD_PLANNER_FLATTEN_POLICY_H_
#define RESHARD_PLANNER_FLATTEN_POLICY_H_

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/mesh.h"

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
// kAny, or under kExisting when the mesh registers it. Inline: searches ask
// for every edge.
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

// The multi-dim groups `policy` lets a plan use on `mesh`, up to the order
// of their dims: under kAny every set of >= 2 dims of size > 1 (ascending,
// by increasing bit mask), under kExisting the registered groups, under
// kNone none.
std::vector<Group> AllowedMultiDimGroups(const Mesh& mesh,
                                         FlattenPolicy policy);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FLATTEN_POLICY_H_
