// A MemorySpace that runs every copy as a DeviceCopyTable
// (executor/memory/device_copy_table.h), the path a GPU needs: each copy
// program is encoded and prepared once, at Compile, and a step runs as its
// packing table, its collective, then its unpacking table (a local step: its
// one table), each after everything run before. A subclass says how a table is
// made ready and run: CudaMemorySpace with one kernel launch, HostTableSpace
// unit by unit on host memory.
#ifndef RESHARD_EXECUTOR_MEMORY_TABLE_SPACE_H_
#define RESHARD_EXECUTOR_MEMORY_TABLE_SPACE_H_

#include <memory>

#include "executor/memory/device_copy_table.h"
#include "executor/memory/memory_space.h"

namespace reshard::executor {

// A table made ready to run in a space (on a GPU: its ops and loops
// uploaded once). Owned by the space that prepared it.
struct PreparedTable {
  DeviceCopyTable table;
  const void* device_ops = nullptr;   // the space's copy of table.ops
  const void* device_dims = nullptr;  // the space's copy of table.dims
};

class TableSpace : public MemorySpace {
 public:
  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareStep(
      CompiledStep step) final;
  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareCopies(
      const CopyProgram& program) final;

  // Makes `table` runnable here; the result lives as long as the space.
  virtual absl::StatusOr<const PreparedTable*> PrepareTable(
      DeviceCopyTable table) = 0;
  // Enqueues the table's fills, then its copies, on `buffers` (this
  // space's pointers), after everything enqueued before.
  virtual absl::Status RunTable(const PreparedTable& table,
                                const CopyBuffers& buffers) = 0;

 protected:
  // Encodes `program` for the device and prepares it.
  absl::StatusOr<const PreparedTable*> PrepareProgram(
      const CopyProgram& program);
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_TABLE_SPACE_H_
