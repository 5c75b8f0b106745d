#include "executor/runtime/digest_exchange.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard::executor {
namespace {

// All-gathers one int64 per member of `world` into `words` (this member's
// slot already filled), through a buffer of the space: a backend on device
// memory (NCCL) cannot read host memory, and its call returns before the
// words arrive (Drain waits for them).
absl::Status GatherWords(CommunicatorProvider& provider, Communicator& world,
                         MemorySpace& space, std::vector<int64_t>& words) {
  const int64_t index = world.index();
  char* host = reinterpret_cast<char*>(words.data());
  const int64_t slot = sizeof(int64_t);
  const int64_t bytes = slot * static_cast<int64_t>(words.size());
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

absl::StatusOr<std::vector<int64_t>> AllGatherWord(
    const Mesh& mesh, int64_t word, CommunicatorProvider& provider,
    MemorySpace& space) {
  if (mesh.world_size() == 1) return std::vector<int64_t>{word};
  absl::StatusOr<Communicator*> world = WorldCommunicator(mesh, provider);
  if (!world.ok()) return world.status();
  std::vector<int64_t> words(mesh.world_size());
  words[(*world)->index()] = word;
  absl::Status s = GatherWords(provider, **world, space, words);
  if (!s.ok()) return s;
  return words;
}

absl::Status ExchangeDigest(const Mesh& mesh, uint64_t digest, int64_t rank,
                            CommunicatorProvider& provider, MemorySpace& space,
                            absl::string_view what) {
  if (mesh.world_size() == 1) return absl::OkStatus();
  absl::StatusOr<std::vector<int64_t>> digests =
      AllGatherWord(mesh, static_cast<int64_t>(digest), provider, space);
  if (!digests.ok()) return digests.status();
  std::vector<int64_t> differing;
  for (size_t i = 0; i < digests->size(); ++i) {
    if ((*digests)[i] != static_cast<int64_t>(digest)) {
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
