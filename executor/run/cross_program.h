// A cross-mesh plan (docs/DESIGN.md §9) compiled for one global rank, as
// data: its roles, its pre- and post-steps' rank programs, and its
// transfers grouped by peer with every box in the local frame of the block
// it is read from or written to. CrossRunner runs it with this executor's
// communicators; the Python package interprets its JSON with torch ops
// (python/reshard/torch/cross_move.py). Neither derives a box itself.
#ifndef RESHARD_EXECUTOR_RUN_CROSS_PROGRAM_H_
#define RESHARD_EXECUTOR_RUN_CROSS_PROGRAM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/run/rank_program.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"

namespace reshard::executor {

// One peer's pieces in one direction, in the sender rule's order, packed
// one after another in one message of `numel` elements.
struct PeerPieces {
  int64_t peer = 0;        // global rank
  std::vector<Box> boxes;  // in the src_mid (sent) or dst_mid (received) block
  int64_t numel = 0;
};

// A role's program: the pre-steps (src → src_mid on the source mesh) or
// the post-steps (dst_mid → dst on the destination mesh). `program` is
// null when the plan has no such steps: the block stays as it is.
struct CrossRole {
  int64_t position = 0;  // in that role's mesh
  std::optional<RankProgram> program;
  Box mid;  // this rank's block under src_mid (dst_mid), global coordinates
};

struct CrossProgram {
  int64_t rank = 0;
  DType dtype = DType::kFloat32;
  std::optional<CrossRole> source, destination;
  std::vector<PeerPieces> sends, recvs;  // ascending peer, self excluded
  // The copies to itself: from the src_mid block to the dst_mid block.
  std::vector<Box> local_from, local_to;
  std::vector<int64_t> run_ranks;  // both rank maps' union, ascending
  uint64_t layout_digest = 0;
};

// `plan` compiled for global `rank`: INVALID_ARGUMENT when `rank` is in
// neither mesh; the sender rule's error (a box held only by unavailable
// ranks); CompileRankProgram's for the pre- or post-steps.
absl::StatusOr<CrossProgram> CompileCrossProgram(const Mesh& src_mesh,
                                                 const Mesh& dst_mesh,
                                                 const CrossMeshPlan& plan,
                                                 int64_t rank);

// One object, on one line (docs/PLAN_JSON.md, "Cross-mesh programs").
std::string CrossProgramJson(const CrossProgram& program);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_CROSS_PROGRAM_H_
