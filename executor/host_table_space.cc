#include "executor/host_table_space.h"

#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<char*> HostTableSpace::Allocate(int64_t bytes) {
  char* data = new (std::nothrow) char[bytes > 0 ? bytes : 1];
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name(), ": cannot allocate ", bytes, " bytes"));
  }
  return data;
}

void HostTableSpace::Free(char* buffer) { delete[] buffer; }

absl::StatusOr<const PreparedTable*> HostTableSpace::Prepare(
    DeviceCopyTable table) {
  PreparedTable& prepared = tables_.emplace_back();
  prepared.table = std::move(table);
  prepared.device_ops = prepared.table.ops.data();
  prepared.device_dims = prepared.table.dims.data();
  return &prepared;
}

absl::Status HostTableSpace::Run(const PreparedTable& table,
                                 const CopyBuffers& buffers) {
  RunTableOnHost(table.table, buffers);
  ++tables_run_;
  return absl::OkStatus();
}

absl::Status HostTableSpace::Synchronize() {
  ++synchronizations_;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> HostTableSpace::Mark() {
  marks_.push_back(std::chrono::steady_clock::now());
  return static_cast<int64_t>(marks_.size()) - 1;
}

absl::StatusOr<double> HostTableSpace::Between(int64_t from, int64_t to) {
  const int64_t n = static_cast<int64_t>(marks_.size());
  if (from < 0 || to < 0 || from >= n || to >= n) {
    return absl::OutOfRangeError(
        absl::StrCat(name(), ": marks ", from, " and ", to, " of ", n));
  }
  return std::chrono::duration<double>(marks_[to] - marks_[from]).count();
}

absl::Status HostTableSpace::Upload(char* to, const char* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status HostTableSpace::Download(char* to, const char* from,
                                      int64_t bytes) {
  return Upload(to, from, bytes);
}

}  // namespace reshard::executor
