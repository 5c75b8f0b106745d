#include "executor/start_barrier.h"

#include <numeric>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<std::unique_ptr<StartBarrier>> StartBarrier::Make(
    const Mesh& mesh, int64_t position, CommunicatorProvider& provider,
    MemorySpace* space) {
  std::vector<int> all(mesh.ndim());
  std::iota(all.begin(), all.end(), 0);
  if (mesh.GroupSize(all) == 1) {
    return std::unique_ptr<StartBarrier>(new StartBarrier(nullptr, {}));
  }
  absl::StatusOr<Communicator*> world =
      provider.Get(mesh.GroupRanks(position, all), mesh.GroupName(all));
  if (!world.ok()) return world.status();
  SpaceBuffer element;
  if (space != nullptr) {
    absl::StatusOr<SpaceBuffer> made = AllocateIn(*space, sizeof(float));
    if (!made.ok()) return made.status();
    element = *std::move(made);
    const float zero = 0;
    absl::Status s = space->Upload(
        element.get(), reinterpret_cast<const char*>(&zero), sizeof(float));
    if (!s.ok()) return s;
  }
  return std::unique_ptr<StartBarrier>(
      new StartBarrier(*world, std::move(element)));
}

absl::Status StartBarrier::Wait(int execution) {
  if (world_ == nullptr) return absl::OkStatus();
  const absl::Status s =
      world_->AllReduce(Element(), 1, DType::kFloat32, Reduction{});
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("the start of execution ",
                                             execution, ": ", s.message()));
}

}  // namespace reshard::executor
