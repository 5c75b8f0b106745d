// Which copies of a device table go to CUDA's pitched copies
// (cudaMemcpy2DAsync, cudaMemcpy3DAsync) rather than the copy kernel
// (docs/DESIGN.md §6.1). A strided copy fits one when, after dropping
// loops of one iteration, it has at most two loops with positive strides
// no shorter than its rows, and, with two, an outer stride that is a whole
// number of inner ones covering the inner loop (a pitched pointer's ysize).
// Each such copy is one API call on the stream where the kernel runs a
// whole table in one launch, so the policy sends only long rows of large
// copies there. Pure: RunPitchedOnHost does what CUDA's copy does, so
// every machine tests the mapping byte for byte.
#ifndef RESHARD_EXECUTOR_MEMORY_PITCHED_COPY_H_
#define RESHARD_EXECUTOR_MEMORY_PITCHED_COPY_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "executor/memory/device_copy_unit.h"
#include "executor/run/copy_program.h"

namespace reshard::executor {

// The fewest bytes per row and per copy that go to a pitched copy. Not yet
// measured against the kernel on a GPU (bench/device_copy_bench.cc
// compares both): the defaults send only copies whose size hides an API
// call's microseconds.
struct PitchedPolicy {
  int64_t min_row_bytes = kDeviceChunkBytes;
  int64_t min_bytes = int64_t{16} << 20;

  // Every copy to the kernel; every copy that fits to a pitched copy.
  static PitchedPolicy Never() {
    return {std::numeric_limits<int64_t>::max(),
            std::numeric_limits<int64_t>::max()};
  }
  static PitchedPolicy Always() { return {1, 1}; }
};

// `copy` as one pitched copy, or nullopt when its loops do not fit one.
std::optional<PitchedCopy> AsPitched(const StridedCopy& copy);

// Whether `policy` sends `copy` (which fits) to a pitched copy.
bool WorthPitched(const PitchedCopy& copy, const PitchedPolicy& policy);

// Calls `row(from_at, to_at)` with the byte offsets of every row of
// `copy` (`width` bytes each), slice by slice: where CUDA's copy puts it.
template <typename Row>
void ForEachPitchedRow(const PitchedCopy& copy, Row row) {
  for (int64_t z = 0; z < copy.depth; ++z) {
    for (int64_t y = 0; y < copy.height; ++y) {
      row(copy.from_offset + (z * copy.from_slice_rows + y) * copy.from_pitch,
          copy.to_offset + (z * copy.to_slice_rows + y) * copy.to_pitch);
    }
  }
}

// Every row of `copy`, on host memory, as CUDA copies it.
void RunPitchedOnHost(const PitchedCopy& copy, const CopyBuffers& buffers);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_PITCHED_COPY_H_
