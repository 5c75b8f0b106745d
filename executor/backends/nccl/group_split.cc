#include "executor/backends/nccl/group_split.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace reshard::executor {
namespace {

// The smallest global rank of the group over `group` whose first member
// (every group coordinate 0) sits at `base`: an odometer over the group's
// coordinates. With the identity rank map that is `base` itself.
int64_t SmallestRank(const Mesh& mesh, absl::Span<const int> group,
                     int64_t base) {
  if (mesh.has_identity_rank_map()) return base;
  std::vector<int64_t> digit(group.size(), 0);
  int64_t position = base;
  int64_t smallest = mesh.RankAt(base);
  while (true) {
    // Advance the innermost dim first; carry outwards.
    int i = static_cast<int>(group.size()) - 1;
    for (; i >= 0; --i) {
      const int d = group[i];
      if (++digit[i] < mesh.size(d)) {
        position += mesh.Stride(d);
        break;
      }
      position -= (mesh.size(d) - 1) * mesh.Stride(d);
      digit[i] = 0;
    }
    if (i < 0) return smallest;
    smallest = std::min(smallest, mesh.RankAt(position));
  }
}

}  // namespace

absl::StatusOr<GroupSplit> SplitForGroup(const Mesh& mesh,
                                         absl::Span<const int> group,
                                         int64_t position) {
  absl::Status s = mesh.ValidateGroup(group, "group");
  if (!s.ok()) return s;
  if (position < 0 || position >= mesh.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("position: ", position, " is outside the mesh (",
                     mesh.world_size(), " positions)"));
  }
  int64_t base = position;
  int64_t key = 0;
  for (int d : group) {
    const int64_t coordinate = mesh.Coordinate(position, d);
    base -= coordinate * mesh.Stride(d);
    key = key * mesh.size(d) + coordinate;
  }
  // Mesh::Create caps the world size at INT_MAX: both fit an int.
  return GroupSplit{static_cast<int>(SmallestRank(mesh, group, base)),
                    static_cast<int>(key)};
}

absl::StatusOr<GroupSplit> SplitForRanks(absl::Span<const int64_t> ranks,
                                         int64_t rank) {
  absl::flat_hash_set<int64_t> seen;
  int64_t smallest = std::numeric_limits<int64_t>::max();
  int64_t key = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int64_t r = ranks[i];
    if (r < 0 || r > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ranks[", i, "]: ", r, " is not an NCCL rank (0 to INT_MAX)"));
    }
    if (!seen.insert(r).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("ranks[", i, "]: rank ", r, " repeats"));
    }
    smallest = std::min(smallest, r);
    if (r == rank) key = static_cast<int64_t>(i);
  }
  if (key < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks: rank ", rank, " is not a member"));
  }
  return GroupSplit{static_cast<int>(smallest), static_cast<int>(key)};
}

}  // namespace reshard::executor
