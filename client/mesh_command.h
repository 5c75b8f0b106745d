// `reshardctl mesh`: the planner service's mesh registry. `register` prints
// the new mesh's id; `list` and `get MESH_ID` print every field that tells
// two meshes apart (shape and names, flattened groups, link overrides, a
// rank map other than the identity), as a line or with --json as an
// object; `delete MESH_ID` removes one.
#ifndef RESHARD_CLIENT_MESH_COMMAND_H_
#define RESHARD_CLIENT_MESH_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"
#include "planner/core/mesh.h"

namespace reshard::client {

// Runs `reshardctl mesh ARGS`, printing to `out`. INVALID_ARGUMENT for a
// bad verb or flag, NOT_FOUND for an unknown mesh id, the service's error
// otherwise.
absl::Status RunMeshCommand(const ServerFlags& server,
                            const std::vector<std::string>& argv,
                            std::ostream& out);

// One line: `ID  A=2,B=2  flattened A_B  links A=100:1.5  rank_map 1,0`
// (the last three only when present).
std::string MeshLine(const std::string& id, const Mesh& mesh);

// {"mesh_id", "shape", "dim_names", "flattened": [["A","B"]], "links":
// [{"dim" or "group", "bandwidth_gbps", "latency_us", "all_to_all_us"}]
// (overridden dims and groups only; null for a value left to the cost
// model), "copy_gbps", "base_us", "reduce_gbps", "rank_map": null for the
// identity}.
std::string MeshJson(const std::string& id, const Mesh& mesh);

// The usage text of `reshardctl mesh`.
const char* MeshUsage();

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_MESH_COMMAND_H_
