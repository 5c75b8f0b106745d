#include "planner/cross/mid_candidates.h"

#include <algorithm>

#include "planner/core/local_layout.h"

namespace reshard {
namespace {

void AddDistinct(std::vector<DistState>& out, const DistState& s) {
  if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
}

std::vector<int> PartialDims(const DistState& s) {
  std::vector<int> dims;
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    if (s.placement(m).is_partial()) dims.push_back(m);
  }
  return dims;
}

// Each way of giving every dim of `dims` one of `choices` options, as
// mixed-radix counters over the options (option 0: R; k >= 1: S(k - 1)).
int64_t Combinations(int dims, int choices) {
  int64_t n = 1;
  for (int i = 0; i < dims && n <= kMaxSourceMidCandidates; ++i) n *= choices;
  return n;
}

}  // namespace

DistState ShardOnLargestDim(const Mesh& mesh, DistState state, int dim,
                            const TensorSpec& tensor) {
  state.SetReplicate(dim);
  const std::vector<int64_t> extents =
      MaxLocalExtents(mesh, state, tensor.shape());
  const int widest = static_cast<int>(
      std::max_element(extents.begin(), extents.end()) - extents.begin());
  state.AppendShard(dim, widest);
  return state;
}

std::vector<DistState> SourceMidCandidates(const Mesh& mesh,
                                           const DistState& src,
                                           const TensorSpec& tensor) {
  const std::vector<int> partial = PartialDims(src);
  DistState reduced = src;
  for (int m : partial) reduced.SetReplicate(m);
  std::vector<DistState> out = {reduced};
  if (tensor.rank() == 0 || partial.empty()) return out;
  const int choices = tensor.rank() + 1;
  if (Combinations(static_cast<int>(partial.size()), choices) >
      kMaxSourceMidCandidates) {
    for (int m : partial) {
      DistState one = ShardOnLargestDim(mesh, reduced, m, tensor);
      AddDistinct(out, one);
    }
    return out;
  }
  const int64_t total = Combinations(static_cast<int>(partial.size()), choices);
  for (int64_t code = 1; code < total; ++code) {
    DistState s = reduced;
    int64_t rest = code;
    for (int m : partial) {
      const int option = static_cast<int>(rest % choices);
      rest /= choices;
      if (option > 0) s.AppendShard(m, option - 1);
    }
    AddDistinct(out, s);
  }
  return out;
}

std::vector<DistState> DestinationMidCandidates(const Mesh& mesh,
                                                const DistState& dst,
                                                const TensorSpec& tensor) {
  DistState base = dst;
  for (int m : PartialDims(dst)) base.SetReplicate(m);
  std::vector<DistState> out = {base};
  if (tensor.rank() == 0) return out;
  std::vector<int> replicated;
  for (int m = 0; m < base.mesh_ndim(); ++m) {
    if (base.placement(m).is_replicate() && mesh.size(m) > 1) {
      replicated.push_back(m);
    }
  }
  DistState all = base;
  for (int m : replicated) {
    AddDistinct(out, ShardOnLargestDim(mesh, base, m, tensor));
    all = ShardOnLargestDim(mesh, all, m, tensor);
  }
  AddDistinct(out, all);
  return out;
}

}  // namespace reshard
