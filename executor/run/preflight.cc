#include "executor/run/preflight.h"

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/error_kind.h"

namespace reshard::executor {
namespace {

// A rank's two words: its digest and its binding's status code.
constexpr int64_t kWords = 2;

// All-gathers this member's `kWords` words (its slot of `words` already
// filled) over `world`, through a buffer of the space: a backend on device
// memory (NCCL) cannot read host memory, and its call returns before the
// words arrive (Drain waits for them).
absl::Status GatherWords(CommunicatorProvider& provider, Communicator& world,
                         MemorySpace& space, std::vector<int64_t>& words) {
  const int64_t slot = kWords * static_cast<int64_t>(sizeof(int64_t));
  const int64_t offset = world.index() * slot;
  char* host = reinterpret_cast<char*>(words.data());
  const int64_t bytes = slot * world.size();
  absl::StatusOr<SpaceBuffer> buffer = AllocateIn(space, bytes);
  if (!buffer.ok()) return buffer.status();
  char* data = buffer->get();
  absl::Status s = space.Upload(data + offset, host + offset, slot);
  if (s.ok()) s = world.AllGather(data + offset, data, kWords, DType::kInt64);
  if (s.ok()) s = provider.Drain();
  if (s.ok()) s = space.Download(host, data, bytes);
  return s;
}

// Every rank's words by mesh position; this rank's alone on one rank.
absl::StatusOr<std::vector<int64_t>> ExchangeWords(
    const Mesh& mesh, int64_t digest, int64_t code,
    CommunicatorProvider& provider, MemorySpace& space) {
  if (mesh.world_size() == 1) return std::vector<int64_t>{digest, code};
  absl::StatusOr<Communicator*> world = WorldCommunicator(mesh, provider);
  if (!world.ok()) return world.status();
  std::vector<int64_t> words(kWords * mesh.world_size());
  words[kWords * (*world)->index()] = digest;
  words[kWords * (*world)->index() + 1] = code;
  absl::Status s = GatherWords(provider, **world, space, words);
  if (!s.ok()) return s;
  return words;
}

// The ranks whose word `w` fails `keep`, by global rank.
template <typename Keep>
std::vector<int64_t> RanksWhere(const Mesh& mesh,
                                const std::vector<int64_t>& words, int w,
                                Keep keep) {
  std::vector<int64_t> ranks;
  for (int64_t i = 0; i < mesh.world_size(); ++i) {
    if (!keep(words[kWords * i + w])) ranks.push_back(mesh.RankAt(i));
  }
  return ranks;
}

absl::Status Verdict(const Mesh& mesh, uint64_t digest, absl::string_view noun,
                     int64_t rank, const absl::Status& binding,
                     const std::vector<int64_t>& words) {
  if (!binding.ok()) return MarkErrorKind(binding, ErrorKind::kBinding);
  const std::vector<int64_t> refusing =
      RanksWhere(mesh, words, 1, [](int64_t code) { return code == 0; });
  if (!refusing.empty()) {
    return absl::AbortedError(
        absl::StrCat("not run: ranks [", absl::StrJoin(refusing, ","),
                     "] refused their registered tensors in pre-flight"));
  }
  const std::vector<int64_t> differing = RanksWhere(
      mesh, words, 0,
      [digest](int64_t d) { return d == static_cast<int64_t>(digest); });
  if (differing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(noun, " digest mismatch: rank ", rank, " runs ", noun, " ",
                   absl::Hex(digest), " but ranks [",
                   absl::StrJoin(differing, ","), "] run a different ", noun));
}

}  // namespace

absl::Status RunPreflight(const Mesh& mesh, uint64_t digest,
                          absl::string_view noun, int64_t rank,
                          CommunicatorProvider& provider, MemorySpace& space,
                          Preflight& step) {
  absl::StatusOr<std::vector<int64_t>> words =
      ExchangeWords(mesh, static_cast<int64_t>(digest),
                    static_cast<int64_t>(step.binding.code()), provider, space);
  step.exchanged = words.ok();
  if (!words.ok()) {
    // The exchange broke: the communicators are suspect, whatever the
    // binding said.
    step.verdict =
        step.binding.ok()
            ? words.status()
            : absl::Status(words.status().code(),
                           absl::StrCat(step.binding.message(),
                                        "; the pre-flight exchange failed "
                                        "too: ",
                                        words.status().message()));
    return step.verdict;
  }
  step.verdict = Verdict(mesh, digest, noun, rank, step.binding, *words);
  return step.verdict;
}

}  // namespace reshard::executor
