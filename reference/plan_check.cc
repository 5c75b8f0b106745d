// CheckPlan: structural checks plus a data run of the reference simulator.
#include "reference/plan_check.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/local_layout.h"
#include "planner/core/plan_structure.h"
#include "reference/simulator.h"

namespace reshard {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A small deterministic integer in [-range, range] for (seed, a, b).
int64_t Noise(uint64_t seed, uint64_t a, uint64_t b, int64_t range) {
  const uint64_t h = Mix(seed ^ Mix(a * 0x100000001b3ULL + Mix(b)));
  return static_cast<int64_t>(h % static_cast<uint64_t>(2 * range + 1)) - range;
}

absl::Status Mismatch(absl::string_view what) {
  return absl::InternalError(absl::StrCat("plan check failed: ", what));
}

// The mesh dims holding Partial in `state`, ascending.
Group PartialDims(const DistState& state) {
  Group dims;
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    if (state.placement(m).is_partial()) dims.push_back(m);
  }
  return dims;
}

// The op a partial group reduces with, and the product of avg dim sizes.
std::pair<ReduceOp, int64_t> GroupReduction(const Mesh& mesh,
                                            const DistState& state,
                                            const Group& dims) {
  ReduceOp op = state.placement(dims[0]).op();
  int64_t avg = 1;
  for (int m : dims) {
    if (state.placement(m).op() == ReduceOp::kAvg) avg *= mesh.size(m);
  }
  if (op == ReduceOp::kAvg) op = ReduceOp::kSum;  // sum, then / avg.
  return {op, avg};
}

template <typename T>
class DataCheck {
 public:
  DataCheck(const Mesh& mesh, const Plan& plan, uint64_t seed)
      : mesh_(mesh), plan_(plan), seed_(seed), shape_(plan.tensor.shape()) {
    global_.resize(plan.tensor.numel());
    for (size_t e = 0; e < global_.size(); ++e) {
      global_[e] = Noise(seed, e, 0x51, 1000);
    }
  }

  absl::Status Run() {
    std::vector<LocalTensor<T>> buffers = SourceBuffers();
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      absl::Status s = RunStep(mesh_, shape_, plan_.steps[i], buffers);
      if (!s.ok()) return Mismatch(absl::StrCat("step ", i, ": ", s.message()));
    }
    return Verify(buffers);
  }

 private:
  // Global linear index of element `local` of a box.
  std::vector<int64_t> BoxIndices(const Box& box) const {
    std::vector<int64_t> out;
    out.reserve(box.numel());
    if (box.numel() == 0) return out;
    const int rank = static_cast<int>(shape_.size());
    std::vector<int64_t> idx(rank, 0);
    while (true) {
      int64_t lin = 0;
      for (int d = 0; d < rank; ++d)
        lin = lin * shape_[d] + box.offset[d] + idx[d];
      out.push_back(lin);
      int d = rank - 1;
      while (d >= 0 && ++idx[d] == box.extent[d]) idx[d--] = 0;
      if (d < 0) return out;
    }
  }

  // Buffers consistent with `src`: Partial groups hold contributions that
  // reduce to the global value; with avg dims every contribution is a
  // multiple of the avg sizes' product so that every division is exact.
  std::vector<LocalTensor<T>> SourceBuffers() const {
    const Group partial = PartialDims(plan_.src);
    std::vector<LocalTensor<T>> buffers(mesh_.world_size());
    for (int64_t p = 0; p < mesh_.world_size(); ++p) {
      const Box box = LocalBox(mesh_, plan_.src, shape_, p);
      buffers[p].shape = box.extent;
      for (int64_t e : BoxIndices(box)) {
        buffers[p].data.push_back(static_cast<T>(Contribution(partial, p, e)));
      }
    }
    return buffers;
  }

  int64_t Contribution(const Group& partial, int64_t p, int64_t e) const {
    const int64_t v = global_[e];
    if (partial.empty()) return v;
    const auto [op, avg] = GroupReduction(mesh_, plan_.src, partial);
    const int64_t n = mesh_.GroupSize(partial);
    const int64_t q = mesh_.IndexInGroup(p, partial);
    if (op == ReduceOp::kSum) {
      int64_t y = Noise(seed_, e, q + 1, 20);
      if (q == n - 1) {
        y = v;
        for (int64_t k = 0; k + 1 < n; ++k) y -= Noise(seed_, e, k + 1, 20);
      }
      return avg * y;
    }
    const int64_t chosen = Mix(seed_ ^ e) % n;
    const int64_t delta =
        q == chosen ? 0 : std::abs(Noise(seed_, e, q + 7, 20));
    return op == ReduceOp::kMax ? v - delta : v + delta;
  }

  absl::Status Verify(const std::vector<LocalTensor<T>>& buffers) const {
    const Group partial = PartialDims(plan_.dst);
    for (int64_t p = 0; p < mesh_.world_size(); ++p) {
      const Box box = LocalBox(mesh_, plan_.dst, shape_, p);
      if (buffers[p].shape != box.extent) {
        return Mismatch(absl::StrCat("position ", p, " ends with shape [",
                                     absl::StrJoin(buffers[p].shape, ","),
                                     "], expected [",
                                     absl::StrJoin(box.extent, ","), "]"));
      }
      if (!partial.empty() && mesh_.IndexInGroup(p, partial) != 0) continue;
      std::vector<T> values = buffers[p].data;
      if (!partial.empty()) {
        const auto [op, avg] = GroupReduction(mesh_, plan_.dst, partial);
        for (int64_t member : mesh_.GroupPositions(p, partial)) {
          if (member == p) continue;
          for (size_t k = 0; k < values.size(); ++k) {
            const T x = buffers[member].data[k];
            values[k] = op == ReduceOp::kMax   ? std::max(values[k], x)
                        : op == ReduceOp::kMin ? std::min(values[k], x)
                                               : values[k] + x;
          }
        }
        for (T& v : values) v = v / static_cast<T>(avg);
      }
      const std::vector<int64_t> indices = BoxIndices(box);
      for (size_t k = 0; k < indices.size(); ++k) {
        if (values[k] != static_cast<T>(global_[indices[k]])) {
          return Mismatch(absl::StrCat(
              "position ", p, " element ", k, " (global index ", indices[k],
              ") is ", values[k], ", expected ", global_[indices[k]]));
        }
      }
    }
    return absl::OkStatus();
  }

  const Mesh& mesh_;
  const Plan& plan_;
  uint64_t seed_;
  absl::Span<const int64_t> shape_;
  std::vector<int64_t> global_;
};

}  // namespace

absl::Status CheckPlan(const Mesh& mesh, const Plan& plan, uint64_t seed) {
  absl::Status s = CheckPlanStructure(mesh, plan);
  if (!s.ok()) return Mismatch(s.message());
  s = DataCheck<int64_t>(mesh, plan, seed).Run();
  if (!s.ok()) return s;
  return DataCheck<double>(mesh, plan, seed + 1).Run();
}

}  // namespace reshard
