// Conversion between the Coordinator's wire messages (coordinator.proto)
// and the executor's report types: one rank's RankReport and a run's
// RunSummary. The agents (reports up), the Coordinator (reports in, the
// summary out) and the client (the summary back) all convert here, so a
// report means the same on both ends.
#ifndef RESHARD_PROTO_COORDINATOR_CONVERT_H_
#define RESHARD_PROTO_COORDINATOR_CONVERT_H_

#include <string>

#include "absl/status/status.h"
#include "executor/rank_run.h"
#include "executor/run_summary.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard {

// A report's google.rpc code and message as a status: OK for code 0 whatever
// the message, UNKNOWN for a code outside google.rpc's range.
absl::Status StatusFromCode(int code, const std::string& message);

// Every field of `report` but `result` (test-only data, never sent): the
// status as its google.rpc code and message, per-step min/median seconds.
void RankReportToProto(const executor::RankReport& report, v1::RankReport* out);
// The inverse. A code outside google.rpc's range reads as UNKNOWN; code 0
// is OK whatever the message; steps missing a field read 0.
executor::RankReport RankReportFromProto(const v1::RankReport& proto);

// The summary's fields of a RunJobResponse: steps, checksums, validated,
// validation_error, peak_bytes, wall_seconds. Run id, mesh, plan, iters,
// warmup and ranks are the caller's to set (and are left as they are).
void RunSummaryToProto(const executor::RunSummary& summary,
                       v1::RunJobResponse* out);
executor::RunSummary RunSummaryFromProto(const v1::RunJobResponse& proto);

}  // namespace reshard

#endif  // RESHARD_PROTO_COORDINATOR_CONVERT_H_
