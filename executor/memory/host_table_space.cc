#include "executor/memory/host_table_space.h"

#include <utility>

namespace reshard::executor {

absl::StatusOr<const PreparedTable*> HostTableSpace::PrepareTable(
    DeviceCopyTable table) {
  PreparedTable& prepared = tables_.emplace_back();
  prepared.table = std::move(table);
  prepared.device_ops = prepared.table.ops.data();
  prepared.device_dims = prepared.table.dims.data();
  return &prepared;
}

absl::Status HostTableSpace::RunTable(const PreparedTable& table,
                                      const CopyBuffers& buffers) {
  RunTableOnHost(table.table, buffers);
  ++tables_run_;
  return absl::OkStatus();
}

absl::Status HostTableSpace::Synchronize() {
  ++synchronizations_;
  return absl::OkStatus();
}

}  // namespace reshard::executor
