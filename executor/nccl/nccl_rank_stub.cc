// The build without CUDA and NCCL: no rank runs on NCCL.
#include "executor/nccl/nccl_rank.h"

namespace reshard::executor {

RankReport RunNcclRank(const Mesh&, const BatchWork&, int64_t rank,
                       std::shared_ptr<KeyValueStore>, const std::string&,
                       const NcclRankSetup&, RankOptions) {
  RankReport report;
  report.rank = rank;
  report.status = absl::FailedPreconditionError(
      "this build has no NCCL backend (CUDA and NCCL were not found when it "
      "was configured)");
  return report;
}

}  // namespace reshard::executor
