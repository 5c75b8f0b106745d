// A copy program (executor/run/copy_program.h) as a GPU runs it: its
// strided copies flattened into DeviceCopyOps and their loops, split into units
// (executor/memory/device_copy_unit.h) that one kernel launch runs in
// parallel, and its zero fills, which go first (cudaMemsetAsync on the same
// stream). Copies the policy gives to CUDA's pitched copies
// (executor/memory/pitched_copy.h) are kept apart, one call each, after the
// units. Running the copies in parallel is right only when no copy reads what
// another writes and no two write the same byte: CheckParallel says so
// for a program, and the tests hold every step's programs to it. Pure:
// RunTableOnHost does unit by unit what the kernel does.
#ifndef RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_TABLE_H_
#define RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_TABLE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "executor/memory/device_copy_unit.h"
#include "executor/memory/pitched_copy.h"
#include "executor/run/copy_program.h"

namespace reshard::executor {

struct DeviceCopyTable {
  std::vector<ZeroFill> fills;
  std::vector<DeviceCopyOp> ops;     // copies with at least one byte
  std::vector<int64_t> dims;         // every op's loops (DeviceCopyOp)
  int64_t units = 0;                 // of every op
  int64_t max_unit_bytes = 0;        // the longest unit (LanesPerUnit)
  std::vector<PitchedCopy> pitched;  // copies not in `ops`
};

DeviceCopyTable EncodeForDevice(const CopyProgram& program,
                                const PitchedPolicy& policy = {});

// OK when the table's copies may run in any order and at once: no copy
// reads a buffer another writes, and no byte is written twice.
// FAILED_PRECONDITION naming the first clash otherwise.
absl::Status CheckParallel(const DeviceCopyTable& table);

// The fills, then every unit, then every pitched copy, on host memory.
void RunTableOnHost(const DeviceCopyTable& table, const CopyBuffers& buffers);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_TABLE_H_
