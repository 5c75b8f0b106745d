#include "executor/run/cross_program.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "executor/run/rank_program_json.h"
#include "planner/cross/layout_digest.h"
#include "planner/cross/transfer.h"
#include "run_values/cross_work.h"

namespace reshard::executor {
namespace {

// `box` (global coordinates) in the frame of the block `origin`.
Box InFrame(const Box& box, const Box& origin) {
  Box local = box;
  for (size_t d = 0; d < local.offset.size(); ++d) {
    local.offset[d] -= origin.offset[d];
  }
  return local;
}

// The role at `position` of `mesh` (-1: none) with `steps`' program.
absl::StatusOr<std::optional<CrossRole>> RoleOf(const Mesh& mesh,
                                                const Plan& steps,
                                                const DistState& mid,
                                                int64_t position,
                                                const char* label) {
  if (position < 0) return std::optional<CrossRole>();
  CrossRole role{position, std::nullopt,
                 LocalBox(mesh, mid, steps.tensor.shape(), position)};
  if (!steps.steps.empty()) {
    absl::StatusOr<RankProgram> program =
        CompileRankProgram(mesh, steps, position);
    if (!program.ok()) {
      return absl::Status(program.status().code(),
                          absl::StrCat(label, program.status().message()));
    }
    role.program = *std::move(program);
  }
  return std::optional<CrossRole>(std::move(role));
}

// The transfers with `p.rank` at either end, by peer and in local frames.
absl::Status GroupTransfers(const Mesh& src_mesh, const Mesh& dst_mesh,
                            const CrossMeshPlan& plan, CrossProgram& p) {
  absl::StatusOr<std::vector<Transfer>> transfers =
      TransfersOfRank({src_mesh, dst_mesh, plan.tensor.shape(), plan.src_mid,
                       plan.dst_mid, plan.unavailable_ranks},
                      p.rank);
  if (!transfers.ok()) return transfers.status();
  std::map<int64_t, PeerPieces> sends, recvs;
  for (const Transfer& t : *transfers) {
    const Box box{t.offset, t.extent};
    if (box.numel() == 0) continue;
    if (t.from == p.rank && t.to == p.rank) {
      p.local_from.push_back(InFrame(box, p.source->mid));
      p.local_to.push_back(InFrame(box, p.destination->mid));
    } else if (t.from == p.rank) {
      PeerPieces& s = sends[t.to];
      s.boxes.push_back(InFrame(box, p.source->mid));
      s.numel += box.numel();
    } else {
      PeerPieces& r = recvs[t.from];
      r.boxes.push_back(InFrame(box, p.destination->mid));
      r.numel += box.numel();
    }
  }
  for (auto [map, list] :
       {std::pair{&sends, &p.sends}, std::pair{&recvs, &p.recvs}}) {
    for (auto& [peer, pieces] : *map) {
      pieces.peer = peer;
      list->push_back(std::move(pieces));
    }
  }
  return absl::OkStatus();
}

template <typename Ints>
std::string Array(const Ints& values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

std::string BoxJson(const Box& b) {
  return absl::StrCat("{\"offset\":", Array(b.offset),
                      ",\"extent\":", Array(b.extent), "}");
}

std::string BoxesJson(const std::vector<Box>& boxes) {
  std::vector<std::string> out;
  for (const Box& b : boxes) out.push_back(BoxJson(b));
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

std::string RoleJson(const std::optional<CrossRole>& role) {
  if (!role.has_value()) return "null";
  return absl::StrCat(
      "{\"position\":", role->position, ",\"program\":",
      role->program ? RankProgramJson(*role->program) : std::string("null"),
      ",\"mid\":", BoxJson(role->mid), "}");
}

std::string PeersJson(const std::vector<PeerPieces>& peers) {
  std::vector<std::string> out;
  for (const PeerPieces& p : peers) {
    out.push_back(absl::StrCat("{\"peer\":", p.peer, ",\"numel\":", p.numel,
                               ",\"boxes\":", BoxesJson(p.boxes), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

}  // namespace

absl::StatusOr<CrossProgram> CompileCrossProgram(const Mesh& src_mesh,
                                                 const Mesh& dst_mesh,
                                                 const CrossMeshPlan& plan,
                                                 int64_t rank) {
  CrossProgram p;
  p.rank = rank;
  p.dtype = plan.tensor.dtype();
  p.layout_digest = plan.layout_digest;
  p.run_ranks = CrossRanks(src_mesh, dst_mesh);
  absl::StatusOr<std::optional<CrossRole>> source =
      RoleOf(src_mesh, plan.pre, plan.src_mid, src_mesh.PositionOfRank(rank),
             "pre-steps: ");
  if (!source.ok()) return source.status();
  absl::StatusOr<std::optional<CrossRole>> destination =
      RoleOf(dst_mesh, plan.post, plan.dst_mid, dst_mesh.PositionOfRank(rank),
             "post-steps: ");
  if (!destination.ok()) return destination.status();
  p.source = *std::move(source);
  p.destination = *std::move(destination);
  if (!p.source && !p.destination) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is in neither mesh of the plan"));
  }
  absl::Status s = GroupTransfers(src_mesh, dst_mesh, plan, p);
  if (!s.ok()) return s;
  return p;
}

std::string CrossProgramJson(const CrossProgram& p) {
  return absl::StrCat(
      "{\"kind\":\"cross_mesh\",\"rank\":", p.rank,
      ",\"dtype\":", JsonString(DTypeName(p.dtype)),
      ",\"source\":", RoleJson(p.source),
      ",\"destination\":", RoleJson(p.destination),
      ",\"sends\":", PeersJson(p.sends), ",\"recvs\":", PeersJson(p.recvs),
      ",\"local_from\":", BoxesJson(p.local_from),
      ",\"local_to\":", BoxesJson(p.local_to),
      ",\"run_ranks\":", Array(p.run_ranks),
      ",\"layout_digest\":", JsonString(DigestHex(p.layout_digest)), "}");
}

}  // namespace reshard::executor
