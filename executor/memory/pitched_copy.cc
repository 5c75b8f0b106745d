#include "executor/memory/pitched_copy.h"

#include <cstring>
#include <vector>

namespace reshard::executor {
namespace {

// CUDA refuses pitches above its limit (cudaDevAttrMaxPitch, 2^31 - 1
// bytes on current GPUs).
constexpr int64_t kMaxPitch = (int64_t{1} << 31) - 1;

struct Loop {
  int64_t count;
  int64_t from_stride;
  int64_t to_stride;
};

// The copy's loops that run more than once, outermost first.
std::vector<Loop> RealLoops(const StridedCopy& copy) {
  std::vector<Loop> loops;
  for (size_t k = 0; k < copy.counts.size(); ++k) {
    if (copy.counts[k] != 1) {
      loops.push_back(
          {copy.counts[k], copy.from_strides[k], copy.to_strides[k]});
    }
  }
  return loops;
}

bool RowsFit(int64_t pitch, int64_t width) {
  return pitch >= width && pitch <= kMaxPitch;
}

}  // namespace

std::optional<PitchedCopy> AsPitched(const StridedCopy& copy) {
  const std::vector<Loop> loops = RealLoops(copy);
  if (copy.run_bytes <= 0 || loops.size() > 2) return std::nullopt;
  PitchedCopy p;
  p.from = copy.from;
  p.to = copy.to;
  p.from_offset = copy.from_offset;
  p.to_offset = copy.to_offset;
  p.width = copy.run_bytes;
  p.from_pitch = p.to_pitch = p.width;
  if (loops.empty()) return p;
  const Loop& rows = loops.back();
  if (rows.count <= 0 || !RowsFit(rows.from_stride, p.width) ||
      !RowsFit(rows.to_stride, p.width)) {
    return std::nullopt;
  }
  p.height = rows.count;
  p.from_pitch = rows.from_stride;
  p.to_pitch = rows.to_stride;
  p.from_slice_rows = p.to_slice_rows = p.height;
  if (loops.size() == 1) return p;
  const Loop& slices = loops.front();
  if (slices.count <= 0 || slices.from_stride % p.from_pitch != 0 ||
      slices.to_stride % p.to_pitch != 0) {
    return std::nullopt;
  }
  p.from_slice_rows = slices.from_stride / p.from_pitch;
  p.to_slice_rows = slices.to_stride / p.to_pitch;
  if (p.from_slice_rows < p.height || p.to_slice_rows < p.height) {
    return std::nullopt;
  }
  p.depth = slices.count;
  return p;
}

bool WorthPitched(const PitchedCopy& copy, const PitchedPolicy& policy) {
  return copy.width >= policy.min_row_bytes &&
         copy.width * copy.height * copy.depth >= policy.min_bytes;
}

void RunPitchedOnHost(const PitchedCopy& copy, const CopyBuffers& buffers) {
  const char* from = ReadableBuffer(copy.from, buffers);
  char* to = WritableBuffer(copy.to, buffers);
  ForEachPitchedRow(copy, [&](int64_t from_at, int64_t to_at) {
    std::memcpy(to + to_at, from + from_at, static_cast<size_t>(copy.width));
  });
}

}  // namespace reshard::executor
