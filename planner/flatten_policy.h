// Which multi-dim groups a plan may use (DESIGN §3.2): registered
// flattened groups only, any ordered tuple of dims, or none.
#ifndef RESHARD_PLANNER_FLATTEN_POLICY_H_
#define RESHARD_PLANNER_FLATTEN_POLICY_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace reshard {

enum class FlattenPolicy {
  kExisting,  // registered flattened groups only (default)
  kAny,       // any ordered tuple of >= 2 dims; executors create them
  kNone,      // single-dim steps only
};

// "existing", "any", "none".
absl::string_view FlattenPolicyName(FlattenPolicy policy);
std::optional<FlattenPolicy> ParseFlattenPolicy(absl::string_view name);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FLATTEN_POLICY_H_
