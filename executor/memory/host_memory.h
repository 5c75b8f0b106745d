// Host memory and the host clock, as both host spaces (HostMemorySpace and
// HostTableSpace) give them: zeroed allocations, transfers complete at
// once, and marks that are timestamps taken when asked.
#ifndef RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_H_
#define RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard::executor {

class HostMemory {
 public:
  // Errors name `space`.
  explicit HostMemory(absl::string_view space) : space_(space) {}

  absl::StatusOr<char*> Allocate(int64_t bytes) const;
  static void Free(char* buffer) { delete[] buffer; }
  static absl::Status Copy(char* to, const char* from, int64_t bytes);

  int64_t Mark();
  // OUT_OF_RANGE naming the marks when either was not taken.
  absl::StatusOr<double> Between(int64_t from, int64_t to) const;
  void ClearMarks() { marks_.clear(); }

 private:
  absl::string_view space_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

// What a space on host memory does whatever runs in it: names itself,
// allocates, keeps marks and transfers, all through HostMemory. `Space` is
// the interface it implements (MemorySpace, or TableSpace for host tables);
// `name` must outlive the space (a literal).
template <typename Space>
class OnHostMemory : public Space {
 public:
  explicit OnHostMemory(absl::string_view name) : name_(name), memory_(name) {}

  std::string name() const override { return std::string(name_); }
  absl::StatusOr<char*> Allocate(int64_t bytes) override {
    return memory_.Allocate(bytes);
  }
  void Free(char* buffer) override { HostMemory::Free(buffer); }
  absl::StatusOr<int64_t> Mark() override { return memory_.Mark(); }
  absl::StatusOr<double> Between(int64_t from, int64_t to) override {
    return memory_.Between(from, to);
  }
  void ClearMarks() override { memory_.ClearMarks(); }
  absl::Status Upload(char* to, const char* from, int64_t bytes) override {
    return HostMemory::Copy(to, from, bytes);
  }
  absl::Status Download(char* to, const char* from, int64_t bytes) override {
    return HostMemory::Copy(to, from, bytes);
  }

 private:
  absl::string_view name_;
  HostMemory memory_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_H_
