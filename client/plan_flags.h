// The plan flags of reshardctl (`plan` and `exec` share them): the mesh
// (--mesh, --flatten, --link), the tensor and states (--shape, --dtype,
// --from, --to) and the planner options, with errors naming the flag.
#ifndef RESHARD_CLIENT_PLAN_FLAGS_H_
#define RESHARD_CLIENT_PLAN_FLAGS_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli_args.h"
#include "planner/mesh.h"
#include "planner/planner.h"

namespace reshard {

// The names of the flags that take a value.
std::set<std::string> PlanFlags();

// The mesh described by --mesh, --flatten and --link.
absl::StatusOr<Mesh> MeshFromFlags(const CliArgs& args);

// The request described by the tensor, state and option flags on `mesh`;
// --shape, --from and --to are required (INVALID_ARGUMENT naming them).
absl::StatusOr<PlanRequest> RequestFromFlags(const Mesh& mesh,
                                             const CliArgs& args);

}  // namespace reshard

#endif  // RESHARD_CLIENT_PLAN_FLAGS_H_
