// What an agent advertises in Join beyond the protocol (JoinRequest's
// capabilities): the Coordinator refuses work that a rank's agent cannot
// run, naming the rank, instead of dispatching it.
#ifndef RESHARD_COMMON_AGENT_CAPABILITIES_H_
#define RESHARD_COMMON_AGENT_CAPABILITIES_H_

namespace reshard {

// Runs tensors registered at its local endpoint (docs/DESIGN.md §6.6).
inline constexpr char kRegisteredTensors[] = "registered_tensors";
// Runs cross-mesh plans (RunWork.cross, docs/DESIGN.md §9).
inline constexpr char kCrossMesh[] = "cross_mesh";
// Runs cross-mesh batches (RunWork.cross_batch, docs/DESIGN.md §9).
inline constexpr char kCrossMeshBatches[] = "cross_mesh_batches";

}  // namespace reshard

#endif  // RESHARD_COMMON_AGENT_CAPABILITIES_H_
