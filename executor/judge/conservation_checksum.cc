#include "executor/judge/conservation_checksum.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "executor/judge/data_rule.h"
#include "planner/core/local_layout.h"

namespace reshard::executor {
namespace {

bool IsInteger(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64;
}

// The residue of an element: an integer's value, a float's bit pattern
// (read as the unsigned integer of its width).
uint64_t Residue(int32_t v) { return ChecksumResidue(v); }
uint64_t Residue(int64_t v) { return ChecksumResidue(v); }
uint64_t Residue(uint16_t bits) { return bits; }
uint64_t Residue(uint32_t bits) { return bits; }
uint64_t Residue(uint64_t bits) { return bits; }

// Calls row(local_start, global_start, length) for every row of `box`
// (its last dim, contiguous in the box and in the tensor of `shape`), in
// the box's row-major order: the index arithmetic once per row.
template <typename F>
void ForEachBoxRow(absl::Span<const int64_t> shape, const Box& box, F row) {
  if (box.numel() == 0) return;
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    row(0, 0, 1);
    return;
  }
  const int64_t length = box.extent[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t k = 0;; k += length) {
    int64_t linear = 0;
    for (int d = 0; d < rank - 1; ++d) {
      linear = linear * shape[d] + box.offset[d] + index[d];
    }
    row(k, linear * shape[rank - 1] + box.offset[rank - 1], length);
    int d = rank - 2;
    while (d >= 0 && ++index[d] == box.extent[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

// Elements summed per chunk of a row before one modular reduction: small
// enough that no sum below can overflow its accumulator.
constexpr int64_t kShareChunk = int64_t{1} << 16;

// A residue below the modulus whose products with chunk indices fit the
// accumulator: types of at most 32 bits need no reduction.
template <typename T>
uint64_t ReducedResidue(T v) {
  if constexpr (sizeof(T) <= 4 && !std::is_same_v<T, int32_t>) {
    return Residue(v);
  } else {
    return ChecksumReduce(Residue(v));
  }
}

// x mod 2^61 - 1 for any 128-bit x (ChecksumReduce's fold, twice).
uint64_t Reduce128(unsigned __int128 x) {
  const uint64_t lo = static_cast<uint64_t>(x) & kChecksumModulus;
  const unsigned __int128 hi = x >> 61;  // below 2^67
  const uint64_t hi_lo = static_cast<uint64_t>(hi) & kChecksumModulus;
  const uint64_t hi_hi = static_cast<uint64_t>(hi >> 61);  // below 2^6
  return ChecksumReduce(ChecksumReduce(lo + hi_lo) + hi_hi);
}

// Σ (linear + j + 1)·residue(x_j) over a row's `n` elements of type T, as
// (linear + c + 1)·Σ r_j + Σ (j - c)·r_j per chunk starting at c: two wide
// sums per element and one modular product per chunk. Residues of at most
// 32 bits sum in 64-bit accumulators (each term below 2^48, a chunk below
// 2^64), wider ones (below 2^61) in 128-bit ones.
template <typename T>
uint64_t RowShare(const char* row, int64_t linear, int64_t n) {
  using Wide = std::conditional_t<sizeof(T) <= 4 && !std::is_same_v<T, int32_t>,
                                  uint64_t, unsigned __int128>;
  uint64_t share = 0;
  for (int64_t start = 0; start < n; start += kShareChunk) {
    const int64_t length = std::min(kShareChunk, n - start);
    Wide sum = 0, weighted = 0;
    for (int64_t j = 0; j < length; ++j) {
      T v;
      std::memcpy(&v, row + (start + j) * static_cast<int64_t>(sizeof(T)),
                  sizeof(T));
      const uint64_t r = ReducedResidue(v);
      sum += r;
      weighted += static_cast<Wide>(j) * r;
    }
    share = ChecksumAdd(share, linear + start, Reduce128(sum));
    share = ChecksumReduce(share + Reduce128(weighted));
  }
  return share;
}

// Σ (i + 1)·residue(x) over the box's elements of type T.
template <typename T>
uint64_t BoxShare(absl::Span<const int64_t> shape, const Box& box,
                  const char* bytes) {
  uint64_t share = 0;
  ForEachBoxRow(shape, box, [&](int64_t k, int64_t linear, int64_t n) {
    const char* row = bytes + k * static_cast<int64_t>(sizeof(T));
    share = ChecksumReduce(share + RowShare<T>(row, linear, n));
  });
  return share;
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
  switch (tensor.dtype()) {
    case DType::kInt32:
      return BoxShare<int32_t>(tensor.shape(), box, bytes);
    case DType::kInt64:
      return BoxShare<int64_t>(tensor.shape(), box, bytes);
    case DType::kFloat32:
      return BoxShare<uint32_t>(tensor.shape(), box, bytes);
    case DType::kFloat64:
      return BoxShare<uint64_t>(tensor.shape(), box, bytes);
    default:  // bfloat16, float16
      return BoxShare<uint16_t>(tensor.shape(), box, bytes);
  }
}

uint64_t AddShares(uint64_t a, uint64_t b) {
  return (a % kChecksumModulus + b % kChecksumModulus) % kChecksumModulus;
}

}  // namespace reshard::executor
