// The data rule and checksums of docs/DESIGN.md §6.2 (normative): what every
// rank holds before a run, what it must hold after, and the checksum it
// reports.
//
// Source data: the global tensor's element i is g(i) = (i mod 31) - 15. A
// rank's source is its box under `src`. Where `src` has Partial dims, the
// members of each Partial group (all Partial mesh dims together, n ranks,
// member index q) hold contributions that reduce exactly to g(i):
//  - sum and {sum,avg} mixes (D = product of the avg dims' sizes): the
//    value D·g(i) is split into n parts of the same sign as g(i), as evenly
//    as possible, the larger parts going to members (i + q) mod n <
//    |g(i)| mod n. Every part is a multiple of D, so every partial avg
//    division on the way is exact, and every partial sum in any order lies
//    between 0 and D·g(i): |D·g(i)| <= 15·D, so with n <= 16 every value is
//    an integer below 256, exact in every dtype including bfloat16.
//  - max (min): member (i mod n) holds g(i); the others hold g(i) minus
//    (plus) 1 + (i + q) mod 3.
// Beyond 16 Partial ranks 16-bit floats cannot hold D·g(i) exactly:
// validation then accepts a difference up to kHalfTolerance (see
// ValidateResult); every other dtype stays exact.
#ifndef RESHARD_EXECUTOR_JUDGE_DATA_RULE_H_
#define RESHARD_EXECUTOR_JUDGE_DATA_RULE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/tensor_spec.h"

namespace reshard::executor {

// g(i).
inline int64_t SourceValue(int64_t linear_index) {
  return linear_index % 31 - 15;
}

// The Mersenne prime 2^61 - 1 of the checksum.
inline constexpr uint64_t kChecksumModulus = (uint64_t{1} << 61) - 1;

// Writes the source tensor of the rank at mesh `position` under `src` into
// `out` (its box under `src`, row-major, `tensor.dtype()`).
void FillSource(const Mesh& mesh, const TensorSpec& tensor,
                const DistState& src, int64_t position, void* out);

// Σ_k (k + 1)·x_k mod (2^61 - 1) over `numel` elements read as integers.
uint64_t Checksum(DType dtype, const void* data, int64_t numel);

// Adds (k + 1)·value to a running checksum (one term of Checksum).
uint64_t ChecksumTerm(uint64_t sum, int64_t k, int64_t value);
// `value` mod 2^61 - 1, in [0, 2^61 - 1).
uint64_t ChecksumResidue(int64_t value);
// `x` mod 2^61 - 1 for any 64-bit x, by the Mersenne fold (x = hi·2^61 +
// lo ≡ hi + lo), without a division.
inline uint64_t ChecksumReduce(uint64_t x) {
  x = (x & kChecksumModulus) + (x >> 61);
  return x >= kChecksumModulus ? x - kChecksumModulus : x;
}
// Adds (k + 1)·residue to a running checksum; `residue` may be any 64-bit
// number (it is reduced first). Inline: the conservation checksum adds one
// term per element of a registered tensor.
inline uint64_t ChecksumAdd(uint64_t sum, int64_t k, uint64_t residue) {
  const unsigned __int128 term = static_cast<unsigned __int128>(ChecksumReduce(
                                     static_cast<uint64_t>(k + 1))) *
                                 ChecksumReduce(residue);
  // term < 2^122: its two 61-bit halves add below 2^62.
  const uint64_t folded = static_cast<uint64_t>(term & kChecksumModulus) +
                          static_cast<uint64_t>(term >> 61);
  return ChecksumReduce(ChecksumReduce(sum) + ChecksumReduce(folded));
}

// Compares the rank's result (its box under `dst`, Partial dims already
// reduced) with g element by element. DATA_LOSS naming the position, the
// element, its global index, the value and the expected value otherwise.
// `partial_group_size` is the number of ranks the source's Partial dims
// spread a value over (1 without Partial dims): beyond 16, 16-bit floats
// are compared with a tolerance.
absl::Status ValidateResult(const Mesh& mesh, const TensorSpec& tensor,
                            const DistState& dst, int64_t position,
                            int64_t partial_group_size, const void* data);

// The Partial mesh dims of `state`, ascending, and how they reduce: the op
// (sum for {sum,avg} mixes) and the avg divisor D.
struct PartialReduction {
  Group dims;
  ReduceOp op = ReduceOp::kSum;
  int64_t avg_divisor = 1;
};
PartialReduction PartialOf(const Mesh& mesh, const DistState& state);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_DATA_RULE_H_
