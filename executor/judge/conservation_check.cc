#include "executor/judge/conservation_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "executor/judge/conservation_checksum.h"

namespace reshard::executor {

// The §6.2 checksum is left 0: it assumes the data rule's values, and
// costs ten times the conservation share per element.
TensorCheck ConservationVerdict(const TensorSpec& tensor, const DistState& src,
                                const DistState& dst, uint64_t before,
                                uint64_t after) {
  TensorCheck check;
  const Conservation kind = ConservationOf(tensor, src, dst);
  check.conservation = std::string(ConservationName(kind));
  check.conservation_source = before;
  check.conservation_result = after;
  check.validated = kind == Conservation::kSkipped || before == after;
  if (!check.validated) {
    check.validation_error = absl::StrCat(
        "conservation checksum ", after, " after the run is not the ", before,
        " of the source: the tensor did not move intact");
  }
  return check;
}

std::vector<uint64_t> SourceShares(const Mesh& mesh,
                                   const std::vector<Plan>& plans,
                                   int64_t position,
                                   const std::vector<const void*>& sources) {
  std::vector<uint64_t> shares;
  for (size_t t = 0; t < plans.size(); ++t) {
    shares.push_back(ConservationShare(mesh, plans[t].tensor, plans[t].src,
                                       position, sources[t]));
  }
  return shares;
}

absl::Status CheckConservation(const Mesh& mesh, const std::vector<Plan>& plans,
                               int64_t position, CommunicatorProvider& provider,
                               const std::vector<uint64_t>& source_shares,
                               const std::vector<void*>& results,
                               std::vector<TensorCheck>& checks) {
  const size_t items = plans.size();
  // Per rank: every item's source share, then its result share.
  std::vector<int64_t> mine(2 * items);
  for (size_t t = 0; t < items; ++t) {
    mine[t] = static_cast<int64_t>(source_shares[t]);
    mine[items + t] = static_cast<int64_t>(ConservationShare(
        mesh, plans[t].tensor, plans[t].dst, position, results[t]));
  }
  std::vector<int64_t> all(mine.size() * mesh.world_size());
  absl::StatusOr<Communicator*> comm = WorldCommunicator(mesh, provider);
  absl::Status s = comm.status();
  if (s.ok()) {
    s = (*comm)->AllGather(mine.data(), all.data(),
                           static_cast<int64_t>(mine.size()), DType::kInt64);
  }
  if (s.ok()) s = provider.Drain();
  if (!s.ok()) return s;
  for (size_t t = 0; t < items; ++t) {
    uint64_t before = 0, after = 0;
    for (int64_t r = 0; r < mesh.world_size(); ++r) {
      const size_t at = static_cast<size_t>(r) * mine.size();
      before = AddShares(before, static_cast<uint64_t>(all[at + t]));
      after = AddShares(after, static_cast<uint64_t>(all[at + items + t]));
    }
    checks.push_back(ConservationVerdict(plans[t].tensor, plans[t].src,
                                         plans[t].dst, before, after));
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
