#include "executor/memory/host_memory.h"

#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<char*> HostMemory::Allocate(int64_t bytes) const {
  // Zeroed, so bytes a run never writes (padding) read the same each time.
  char* data = new (std::nothrow) char[bytes > 0 ? bytes : 1]();
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat(space_, ": cannot allocate ", bytes, " bytes"));
  }
  return data;
}

absl::Status HostMemory::Copy(char* to, const char* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

int64_t HostMemory::Mark() {
  marks_.push_back(std::chrono::steady_clock::now());
  return static_cast<int64_t>(marks_.size()) - 1;
}

absl::StatusOr<double> HostMemory::Between(int64_t from, int64_t to) const {
  const int64_t n = static_cast<int64_t>(marks_.size());
  if (from < 0 || to < 0 || from >= n || to >= n) {
    return absl::OutOfRangeError(
        absl::StrCat(space_, ": marks ", from, " and ", to, " of ", n));
  }
  return std::chrono::duration<double>(marks_[to] - marks_[from]).count();
}

}  // namespace reshard::executor
