#include "executor/judge/data_rule.h"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/run/element_ops.h"
#include "planner/core/local_layout.h"

namespace reshard::executor {
namespace {

// Absolute difference accepted for 16-bit floats whose Partial sources
// spread a value over more than 16 ranks (values up to 15·D lose low bits).
constexpr double kHalfTolerance = 4.0;
constexpr int64_t kExactPartialRanks = 16;

// Member q's contribution to element i (see the header).
int64_t Contribution(const PartialReduction& p, int64_t n, int64_t q,
                     int64_t i) {
  const int64_t g = SourceValue(i);
  if (p.op == ReduceOp::kMax || p.op == ReduceOp::kMin) {
    if (i % n == q) return g;
    const int64_t delta = 1 + (i + q) % 3;
    return p.op == ReduceOp::kMax ? g - delta : g + delta;
  }
  const int64_t magnitude = std::abs(g);
  const int64_t part = magnitude / n + ((i + q) % n < magnitude % n ? 1 : 0);
  return (g < 0 ? -1 : 1) * p.avg_divisor * part;
}

}  // namespace

PartialReduction PartialOf(const Mesh& mesh, const DistState& state) {
  PartialReduction p;
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    const Placement& placement = state.placement(m);
    if (!placement.is_partial()) continue;
    p.dims.push_back(m);
    if (placement.op() == ReduceOp::kAvg) {
      p.avg_divisor *= mesh.size(m);
    } else {
      p.op = placement.op();
    }
  }
  return p;
}

void FillSource(const Mesh& mesh, const TensorSpec& tensor,
                const DistState& src, int64_t position, void* out) {
  const Box box = LocalBox(mesh, src, tensor.shape(), position);
  const PartialReduction partial = PartialOf(mesh, src);
  const int64_t n = mesh.GroupSize(partial.dims);
  const int64_t q =
      partial.dims.empty() ? 0 : mesh.IndexInGroup(position, partial.dims);
  ForEachBoxElement(tensor.shape(), box, [&](int64_t k, int64_t i) {
    const int64_t value =
        partial.dims.empty() ? SourceValue(i) : Contribution(partial, n, q, i);
    StoreInteger(tensor.dtype(), out, k, value);
  });
}

uint64_t ChecksumResidue(int64_t value) {
  const int64_t m = static_cast<int64_t>(kChecksumModulus);
  const int64_t r = value % m;
  return static_cast<uint64_t>(r < 0 ? r + m : r);
}

uint64_t ChecksumTerm(uint64_t sum, int64_t k, int64_t value) {
  return ChecksumAdd(sum, k, ChecksumResidue(value));
}

uint64_t Checksum(DType dtype, const void* data, int64_t numel) {
  uint64_t sum = 0;
  for (int64_t k = 0; k < numel; ++k) {
    const int64_t value = std::llround(LoadValue(dtype, data, k));
    sum = ChecksumTerm(sum, k, value);
  }
  return sum;
}

absl::Status ValidateResult(const Mesh& mesh, const TensorSpec& tensor,
                            const DistState& dst, int64_t position,
                            int64_t partial_group_size, const void* data) {
  const bool half =
      tensor.dtype() == DType::kBFloat16 || tensor.dtype() == DType::kFloat16;
  const double tolerance =
      half && partial_group_size > kExactPartialRanks ? kHalfTolerance : 0.0;
  const Box box = LocalBox(mesh, dst, tensor.shape(), position);
  absl::Status status;
  ForEachBoxElement(tensor.shape(), box, [&](int64_t k, int64_t i) {
    if (!status.ok()) return;
    const double got = LoadValue(tensor.dtype(), data, k);
    const int64_t want = SourceValue(i);
    if (!(std::abs(got - static_cast<double>(want)) <= tolerance)) {
      status = absl::DataLossError(absl::StrCat(
          "rank at position ", position, ": element ", k, " (global index ", i,
          ") is ", got, ", expected ", want));
    }
  });
  return status;
}

}  // namespace reshard::executor
