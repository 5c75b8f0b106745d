#include "executor/run/box_copy.h"

#include <cstring>
#include <vector>

namespace reshard::executor {

namespace {

// Calls f(tensor_offset, packed_offset, count) per run, in elements.
template <typename F>
void ForEachRun(absl::Span<const int64_t> shape, const Box& box, F f) {
  if (box.numel() == 0) return;
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  const RowWalk walk = RowsOf(shape, box);
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) base += box.offset[d] * stride[d];
  std::vector<int64_t> index(walk.inner, 0);
  for (int64_t packed = 0;; packed += walk.run) {
    int64_t at = base;
    for (int d = 0; d < walk.inner; ++d) at += index[d] * stride[d];
    f(at, packed, walk.run);
    int d = walk.inner - 1;
    while (d >= 0 && ++index[d] == box.extent[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

}  // namespace

void PackBox(const void* tensor, absl::Span<const int64_t> shape,
             const Box& box, int64_t itemsize, void* packed) {
  const char* from = static_cast<const char*>(tensor);
  char* to = static_cast<char*>(packed);
  ForEachRun(shape, box, [&](int64_t at, int64_t out, int64_t count) {
    std::memcpy(to + out * itemsize, from + at * itemsize, count * itemsize);
  });
}

void UnpackBox(const void* packed, void* tensor,
               absl::Span<const int64_t> shape, const Box& box,
               int64_t itemsize) {
  const char* from = static_cast<const char*>(packed);
  char* to = static_cast<char*>(tensor);
  ForEachRun(shape, box, [&](int64_t at, int64_t in, int64_t count) {
    std::memcpy(to + at * itemsize, from + in * itemsize, count * itemsize);
  });
}

}  // namespace reshard::executor
