// Conversion between the Coordinator's wire messages (coordinator.proto)
// and the executor's types: the work agents are sent (a plan or a batch,
// the RunWork oneof; a plan is a batch of one), one rank's RankReport and a
// run's RunSummary. The agents (work in, reports up), the Coordinator
// (reports in, the summary out) and the client (work out, the summary
// back) all convert here, so a run means the same on both ends.
#ifndef RESHARD_PROTO_COORDINATOR_CONVERT_H_
#define RESHARD_PROTO_COORDINATOR_CONVERT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "reshard/v1/coordinator.pb.h"
#include "run_values/backend.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"
#include "run_values/run_summary.h"

namespace reshard::proto {

// The wire's backend enum; BACKEND_UNSPECIFIED reads as gloo.
Backend BackendFromProto(v1::Backend backend);
v1::Backend BackendToProto(Backend backend);

// A report's google.rpc code and message as a status: OK for code 0 whatever
// the message, UNKNOWN for a code outside google.rpc's range.
absl::Status StatusFromCode(int code, const std::string& message);

// A batch's plans and schedule (and whether it is bucketed) as
// v1::BatchWork, and back: the plans re-parsed and the schedule checked
// (CheckBucketSchedule), its peak_bytes derived from them, never read
// (planner/cost/plan_memory.h: what an agent bounds its memory by).
// INVALID_ARGUMENT naming the field
// (`batch.plans[i]`, `batch.buckets[b]...`) otherwise, or for a batch
// without items or with item errors (a batch runs whole). Names are not
// part of the message: the result's are "item I".
void BatchWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                      v1::BatchWork* out);
absl::StatusOr<executor::BatchWork> BatchWorkFromProto(
    const Mesh& mesh, const v1::BatchWork& proto);

// The work of a RunWork: `plan` for a single plan, else `batch`. Read
// back, a plan becomes BatchWork::OfPlan; errors name `run.plan` or
// `run.batch...`, and a RunWork with neither is INVALID_ARGUMENT naming
// `run.work`.
void RunWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                    v1::RunWork* out);
absl::StatusOr<executor::BatchWork> RunWorkFromProto(const Mesh& mesh,
                                                     const v1::RunWork& run);

// What a RunJobResponse says ran: `plan` for a single plan (the plan the
// replica made or was given), else `batch` (with `bucketed`). Read back,
// a plan becomes BatchWork::OfPlan; a batch is `given`, the batch the
// request gave (INTERNAL when the response says neither, or a batch was
// not asked for: an older server).
void RanToProto(const Mesh& mesh, const executor::BatchWork& work,
                v1::RunJobResponse* out);
absl::StatusOr<executor::BatchWork> RanFromProto(
    const Mesh& mesh, const v1::RunJobResponse& proto,
    const executor::BatchWork* given);

// Whether a rank report's proto carries each timed execution's seconds:
// an agent's Report does (the Coordinator's summary needs them), a
// RunJobResponse does not (its rows hold what they say, and a response of
// many ranks stays small).
enum class ExecutionSeconds { kInclude, kOmit };

// Every field of `report` but the tensors' `result` (test-only data, never
// sent): the status as its google.rpc code and message, per-row min/median
// seconds (and each execution's, as `executions` says), totals, and every
// tensor's verdict.
void RankReportToProto(
    const executor::RankReport& report, v1::RankReport* out,
    ExecutionSeconds executions = ExecutionSeconds::kInclude);
// The inverse. A code outside google.rpc's range reads as UNKNOWN; code 0
// is OK whatever the message; rows missing a field read 0.
executor::RankReport RankReportFromProto(const v1::RankReport& proto);

// The summary's fields of a RunJobResponse: steps (the rows), tensors,
// validated, validation_error, peak and bound bytes, wall and per-run
// seconds. Run id, mesh, what ran, iters, warmup and ranks are the
// caller's to set (and are left as they are).
void RunSummaryToProto(const executor::RunSummary& summary,
                       v1::RunJobResponse* out);
executor::RunSummary RunSummaryFromProto(const v1::RunJobResponse& proto);

}  // namespace reshard::proto

#endif  // RESHARD_PROTO_COORDINATOR_CONVERT_H_
