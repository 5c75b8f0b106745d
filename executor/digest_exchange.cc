#include "executor/digest_exchange.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard::executor {

absl::Status ExchangeDigest(const Mesh& mesh, uint64_t digest, int64_t rank,
                            CommunicatorProvider& provider,
                            absl::string_view what) {
  if (mesh.world_size() == 1) return absl::OkStatus();
  std::vector<int64_t> ranks;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    ranks.push_back(mesh.RankAt(p));
  }
  absl::StatusOr<Communicator*> world = provider.Get(ranks, "world");
  if (!world.ok()) return world.status();
  std::vector<int64_t> digests(ranks.size());
  const int64_t index = mesh.PositionOfRank(rank);
  digests[index] = static_cast<int64_t>(digest);
  absl::Status s =
      (*world)->AllGather(&digests[index], digests.data(), 1, DType::kInt64);
  if (!s.ok()) return s;
  std::vector<int64_t> differing;
  for (size_t i = 0; i < digests.size(); ++i) {
    if (digests[i] != static_cast<int64_t>(digest)) {
      differing.push_back(ranks[i]);
    }
  }
  if (differing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, " digest mismatch: rank ", rank, " runs ", what, " ",
                   absl::Hex(digest), " but ranks [",
                   absl::StrJoin(differing, ","), "] run a different ", what));
}

}  // namespace reshard::executor
