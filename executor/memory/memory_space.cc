#include "executor/memory/memory_space.h"

namespace reshard::executor {

absl::StatusOr<SpaceBuffer> AllocateIn(MemorySpace& space, int64_t bytes) {
  absl::StatusOr<char*> data = space.Allocate(bytes);
  if (!data.ok()) return data.status();
  return SpaceBuffer(&space, *data);
}

}  // namespace reshard::executor
