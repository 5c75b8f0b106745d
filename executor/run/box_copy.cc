#include "executor/run/box_copy.h"

#include <cstring>

namespace reshard::executor {

void PackBox(const void* tensor, absl::Span<const int64_t> shape,
             const Box& box, int64_t itemsize, void* packed) {
  const char* from = static_cast<const char*>(tensor);
  char* to = static_cast<char*>(packed);
  ForEachBoxRun(shape, box, [&](int64_t at, int64_t out, int64_t count) {
    std::memcpy(to + out * itemsize, from + at * itemsize, count * itemsize);
  });
}

void UnpackBox(const void* packed, void* tensor,
               absl::Span<const int64_t> shape, const Box& box,
               int64_t itemsize) {
  const char* from = static_cast<const char*>(packed);
  char* to = static_cast<char*>(tensor);
  ForEachBoxRun(shape, box, [&](int64_t at, int64_t in, int64_t count) {
    std::memcpy(to + at * itemsize, from + in * itemsize, count * itemsize);
  });
}

}  // namespace reshard::executor
