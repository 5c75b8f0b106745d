#include "metrics/size_bucket.h"

#include "absl/strings/str_cat.h"

namespace reshard::metrics {

std::string SizeBucket(int64_t bytes) {
  constexpr int64_t kSmallest = int64_t{1} << 10;
  constexpr int64_t kLargest = int64_t{1} << 30;
  int64_t bucket = kSmallest;
  while (bucket < kLargest && bucket * 4 <= bytes) bucket *= 4;
  if (bucket >= kLargest) return "1GiB";
  if (bucket >= (int64_t{1} << 20)) return absl::StrCat(bucket >> 20, "MiB");
  return absl::StrCat(bucket >> 10, "KiB");
}

}  // namespace reshard::metrics
