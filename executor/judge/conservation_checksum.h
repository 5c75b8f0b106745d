// The conservation checksum of a tensor (docs/DESIGN.md §6.5): a number
// that a redistribution leaves unchanged, so that real data, whose values
// no data rule predicts, can be judged. Each rank computes its share on
// its own tensor; the shares of every rank add up to the checksum of the
// whole, each element counted once.
#ifndef RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECKSUM_H_
#define RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECKSUM_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/tensor_spec.h"

namespace reshard::executor {

// What equal checksums before and after a redistribution prove.
enum class Conservation {
  kExact,    // the same tensor, bit for bit
  kSkipped,  // nothing: the reductions change bits (float sums, max, min,
             // avg), so the checksum is not compared
};

// "exact" or "skipped".
absl::string_view ConservationName(Conservation conservation);

// Exact when neither state has a Partial dim (every element moves
// unchanged) or the dtype is an integer and every Partial dim sums
// (integer sums add in the checksum, overflow aside); skipped otherwise.
Conservation ConservationOf(const TensorSpec& tensor, const DistState& src,
                            const DistState& dst);

// The share of the rank at mesh `position`, whose local tensor `data` is
// its box under `state` (row-major, `tensor.dtype()`): Σ (i + 1)·bits(x_i)
// mod (2^61 - 1) over its elements, i the global row-major index. bits is
// the bit pattern of a float and the value of an integer. A rank off
// coordinate 0 of any Replicate dim holds a copy and adds nothing; a
// Partial piece adds on every rank that holds one.
uint64_t ConservationShare(const Mesh& mesh, const TensorSpec& tensor,
                           const DistState& state, int64_t position,
                           const void* data);

// Two shares (or checksums) added, mod 2^61 - 1.
uint64_t AddShares(uint64_t a, uint64_t b);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_CONSERVATION_CHECKSUM_H_
