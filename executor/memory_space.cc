#include "executor/memory_space.h"

namespace reshard::executor {

absl::StatusOr<SpaceBuffer> AllocateIn(MemorySpace& space, int64_t bytes) {
  absl::StatusOr<char*> data = space.Allocate(bytes);
  if (!data.ok()) return data.status();
  return SpaceBuffer(&space, *data);
}

absl::StatusOr<const PreparedTable*> PrepareProgram(
    MemorySpace& space, const CopyProgram& program) {
  return space.Prepare(EncodeForDevice(program));
}

}  // namespace reshard::executor
