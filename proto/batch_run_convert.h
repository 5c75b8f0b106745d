// A batch's run on the Coordinator's wire (DESIGN §8) <-> the executor's
// types: the BatchWork agents are sent, a rank's report of either kind
// (executor/rank_result.h) and the aggregated BatchSummary RunJob returns.
// The agents, the Coordinator and the client all convert here. Apart from
// coordinator_convert.h (one plan's run) so that batches are one concept.
#ifndef RESHARD_PROTO_BATCH_RUN_CONVERT_H_
#define RESHARD_PROTO_BATCH_RUN_CONVERT_H_

#include "absl/status/statusor.h"
#include "executor/batch_summary.h"
#include "executor/batch_work.h"
#include "executor/rank_result.h"
#include "planner/mesh.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard {

void BatchWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                      v1::BatchWork* out);
// The batch's plans re-parsed and its rows checked as a schedule of them
// (CheckBucketSchedule). INVALID_ARGUMENT naming the field (`batch.plans[i]`,
// `batch.buckets[b]...`) otherwise, or for a batch without items or with
// item errors (a batch runs whole).
absl::StatusOr<executor::BatchWork> BatchWorkFromProto(
    const Mesh& mesh, const v1::BatchWork& proto);

// A plan's report as RankReportToProto writes it; a batch's with `steps`
// as its rows and `batch` set (`validated` and `validation_error` are the
// first tensor's that did not validate).
void RankResultToProto(const executor::RankResult& result, v1::RankReport* out);
// A batch's report when `batch` is set, else a plan's.
executor::RankResult RankResultFromProto(const v1::RankReport& proto);

// `batch` and the batch's fields of the top level (validated,
// validation_error, peak_bytes as the memory bound, wall_seconds).
void BatchSummaryToProto(const executor::BatchSummary& summary, bool bucketed,
                         v1::RunJobResponse* out);
// The inverse.
executor::BatchSummary BatchSummaryFromProto(const v1::RunJobResponse& proto);

}  // namespace reshard

#endif  // RESHARD_PROTO_BATCH_RUN_CONVERT_H_
