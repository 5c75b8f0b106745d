#include "agent/tensor_layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/local_layout.h"

namespace reshard::agent {
namespace {

std::vector<int64_t> RanksOf(const Mesh& mesh) {
  std::vector<int64_t> ranks;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    ranks.push_back(mesh.RankAt(p));
  }
  return ranks;
}

}  // namespace

absl::Status CheckLayoutBlock(const TensorLayout& layout, int64_t rank,
                              const std::vector<int64_t>& local_shape) {
  const int64_t position = layout.mesh.PositionOfRank(rank);
  if (position < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "layout.mesh: this agent's rank ", rank, " is not in the mesh (ranks [",
        absl::StrJoin(RanksOf(layout.mesh), ", "), "])"));
  }
  const Box block =
      LocalBox(layout.mesh, layout.state, layout.global_shape, position);
  if (block.extent == local_shape) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "layout: rank ", rank, "'s block of ", LayoutText(layout), " is [",
      absl::StrJoin(block.extent, ", "), "], not the registered shape [",
      absl::StrJoin(local_shape, ", "), "]"));
}

std::optional<std::string> LayoutDifference(const TensorLayout& registered,
                                            const TensorLayout& wanted) {
  if (registered.global_shape == wanted.global_shape &&
      registered.mesh.shape() == wanted.mesh.shape() &&
      RanksOf(registered.mesh) == RanksOf(wanted.mesh) &&
      registered.state == wanted.state) {
    return std::nullopt;
  }
  return absl::StrCat("registered as ", LayoutText(registered),
                      "; the run moves it as ", LayoutText(wanted));
}

std::string LayoutText(const TensorLayout& layout) {
  return absl::StrCat("[", absl::StrJoin(layout.global_shape, ", "), "] as ",
                      layout.state.ToString(), " on a mesh [",
                      absl::StrJoin(layout.mesh.shape(), ", "), "] of ranks [",
                      absl::StrJoin(RanksOf(layout.mesh), ", "), "]");
}

}  // namespace reshard::agent
