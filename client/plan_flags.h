// The plan flags of reshardctl (`plan`, `exec` and `job run` share them): the
// mesh
// (--mesh, --flatten, --link), the tensor and states (--shape, --dtype,
// --from, --to) and the planner options, with errors naming the flag; and
// --plan FILE, the plan JSON that `exec` and `job run` take instead.
#ifndef RESHARD_CLIENT_PLAN_FLAGS_H_
#define RESHARD_CLIENT_PLAN_FLAGS_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli_args.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/planner.h"

namespace reshard::client {

// The flags that describe a mesh inline (MeshFromFlags reads them).
inline constexpr const char* kMeshFlags[] = {
    "mesh", "flatten", "link", "copy_gbps", "base_us", "reduce_gbps"};

// The names of the flags that take a value (kMeshFlags among them).
std::set<std::string> PlanFlags();

// The mesh described by --mesh, --flatten, --link (DIM=GBPS:US[:A2A_US]
// for a dim, A,B=... for the own link of the --flatten group A,B),
// --copy_gbps (the local copy rate, MeshSpec::copy_gbps), --base_us
// (every collective's base latency, MeshSpec::base_us) and --reduce_gbps
// (the reduction rate, MeshSpec::reduce_gbps).
absl::StatusOr<Mesh> MeshFromFlags(const CliArgs& args);
// The same flags as a spec, for callers that complete it (a rank map).
absl::StatusOr<MeshSpec> MeshSpecFromFlags(const CliArgs& args);

// One field of a --link value: a number, or `default` (left unset). False
// when it is neither.
bool ParseLinkField(const std::string& text, std::optional<double>& value);

// The mesh's links as --link takes them ("A=100:1.5", "A,B=0.1:default",
// "A=default:default:4000" for an all_to_all latency alone; `default`
// where the cost model's value applies), dims first, then the flattened
// groups' own links.
std::vector<std::string> LinkFlagValues(const Mesh& mesh);
// Every flag that gives the mesh its measured links, as a command line
// takes them: "--link VALUE" per LinkFlagValues, then "--copy_gbps X",
// "--base_us X" and "--reduce_gbps X" where the mesh has them.
std::vector<std::string> LinkFlags(const Mesh& mesh);

// The planner options described by --planner, --cost_model, --merge,
// --devices_per_host, --search_budget, --max_peak_bytes, --flatten_policy.
absl::StatusOr<PlanOptions> OptionsFromFlags(const CliArgs& args);

// The request described by the tensor, state and option flags on `mesh`;
// --shape, --from and --to are required (INVALID_ARGUMENT naming them).
absl::StatusOr<PlanRequest> RequestFromFlags(const Mesh& mesh,
                                             const CliArgs& args);

// A plan with the mesh it was made for.
struct MeshAndPlan {
  Mesh mesh;
  Plan plan;
};

// Reads `--plan FILE`: a plan JSON as `reshardctl plan --json` prints it
// (nulls accepted). NOT_FOUND when the file cannot be read; the reader's
// error, prefixed with the path, when it is not a plan.
absl::StatusOr<MeshAndPlan> ReadPlanFile(const std::string& path);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_PLAN_FLAGS_H_
