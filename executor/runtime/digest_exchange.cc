#include "executor/runtime/digest_exchange.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard::executor {
namespace {

// All-gathers one int64 per member of `world` into `digests` (this
// member's slot already filled), through a buffer of the space: a backend
// on device memory (NCCL) cannot read host memory, and its call returns
// before the digests arrive (Drain waits for them).
absl::Status GatherDigests(CommunicatorProvider& provider, Communicator& world,
                           MemorySpace& space, std::vector<int64_t>& digests) {
  const int64_t index = world.index();
  char* host = reinterpret_cast<char*>(digests.data());
  const int64_t slot = sizeof(int64_t);
  const int64_t bytes = slot * static_cast<int64_t>(digests.size());
  absl::StatusOr<SpaceBuffer> buffer = AllocateIn(space, bytes);
  if (!buffer.ok()) return buffer.status();
  char* data = buffer->get();
  absl::Status s = space.Upload(data + index * slot, host + index * slot, slot);
  if (s.ok()) s = world.AllGather(data + index * slot, data, 1, DType::kInt64);
  if (s.ok()) s = provider.Drain();
  if (s.ok()) s = space.Download(host, data, bytes);
  return s;
}

}  // namespace

absl::Status ExchangeDigest(const Mesh& mesh, uint64_t digest, int64_t rank,
                            CommunicatorProvider& provider, MemorySpace& space,
                            absl::string_view what) {
  if (mesh.world_size() == 1) return absl::OkStatus();
  absl::StatusOr<Communicator*> world = WorldCommunicator(mesh, provider);
  if (!world.ok()) return world.status();
  std::vector<int64_t> digests(mesh.world_size());
  digests[(*world)->index()] = static_cast<int64_t>(digest);
  absl::Status s = GatherDigests(provider, **world, space, digests);
  if (!s.ok()) return s;
  std::vector<int64_t> differing;
  for (size_t i = 0; i < digests.size(); ++i) {
    if (digests[i] != static_cast<int64_t>(digest)) {
      differing.push_back(mesh.RankAt(static_cast<int64_t>(i)));
    }
  }
  if (differing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, " digest mismatch: rank ", rank, " runs ", what, " ",
                   absl::Hex(digest), " but ranks [",
                   absl::StrJoin(differing, ","), "] run a different ", what));
}

}  // namespace reshard::executor
