#include "executor/judge/conservation_checksum.h"

#include <cstring>

#include "executor/judge/data_rule.h"
#include "planner/core/local_layout.h"

namespace reshard::executor {
namespace {

bool IsInteger(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64;
}

// The residue of element k: an integer's value, a float's bit pattern.
uint64_t ElementResidue(DType dtype, const char* data, int64_t k) {
  switch (dtype) {
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, data + 4 * k, 4);
      return ChecksumResidue(v);
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, data + 8 * k, 8);
      return ChecksumResidue(v);
    }
    case DType::kFloat32: {
      uint32_t bits;
      std::memcpy(&bits, data + 4 * k, 4);
      return bits;
    }
    case DType::kFloat64: {
      uint64_t bits;
      std::memcpy(&bits, data + 8 * k, 8);
      return bits;
    }
    default: {  // bfloat16, float16
      uint16_t bits;
      std::memcpy(&bits, data + 2 * k, 2);
      return bits;
    }
  }
}

bool OnlyIntegerSums(const TensorSpec& tensor, const DistState& state) {
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    const Placement& p = state.placement(m);
    if (!p.is_partial()) continue;
    if (!IsInteger(tensor.dtype()) || p.op() != ReduceOp::kSum) return false;
  }
  return true;
}

// Whether the rank holds the one counted copy: coordinate 0 of every
// Replicate dim.
bool CountsItsElements(const Mesh& mesh, const DistState& state,
                       int64_t position) {
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    if (state.placement(m).is_replicate() &&
        mesh.Coordinate(position, m) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::string_view ConservationName(Conservation conservation) {
  return conservation == Conservation::kExact ? "exact" : "skipped";
}

Conservation ConservationOf(const TensorSpec& tensor, const DistState& src,
                            const DistState& dst) {
  return OnlyIntegerSums(tensor, src) && OnlyIntegerSums(tensor, dst)
             ? Conservation::kExact
             : Conservation::kSkipped;
}

uint64_t ConservationShare(const Mesh& mesh, const TensorSpec& tensor,
                           const DistState& state, int64_t position,
                           const void* data) {
  if (!CountsItsElements(mesh, state, position)) return 0;
  const Box box = LocalBox(mesh, state, tensor.shape(), position);
  const char* bytes = static_cast<const char*>(data);
  uint64_t share = 0;
  ForEachBoxElement(tensor.shape(), box, [&](int64_t k, int64_t i) {
    share = ChecksumAdd(share, i, ElementResidue(tensor.dtype(), bytes, k));
  });
  return share;
}

uint64_t AddShares(uint64_t a, uint64_t b) {
  return (a % kChecksumModulus + b % kChecksumModulus) % kChecksumModulus;
}

}  // namespace reshard::executor
