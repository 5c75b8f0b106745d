// How reshardctl prints a cross-mesh run (docs/DESIGN.md §9), whoever ran
// it: `exec --local` on this machine's ranks or `job run` on a job's
// agents print the same table and the same JSON.
#ifndef RESHARD_CLIENT_CROSS_RUN_OUTPUT_H_
#define RESHARD_CLIENT_CROSS_RUN_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cross_plan_command.h"
#include "run_values/cross_work.h"
#include "run_values/rank_report.h"
#include "run_values/run_summary.h"

namespace reshard::client {

struct CrossRunView {
  const executor::CrossWork& work;
  std::string backend;      // gloo
  std::string launched_on;  // "4 ranks (processes)", "job j, run ID"
  int iters = 0;
  int warmup = 0;
  const std::vector<executor::RankReport>& reports;
  const executor::RunSummary& summary;  // SummarizeCross's
  // A run on registered tensors: judged by conservation, then committed.
  bool on_tensors = false;
  bool committed = false;
};

// A table, or with `json` one object {"kind": "cross_mesh", "plan" (plan
// --json's), "backend", "world_size", "iters", "warmup", "rows": [{"name"
// ("pre_steps", "transfers", "post_steps"), "seconds_min",
// "seconds_median"} (the slowest rank's)], "seconds_min",
// "seconds_median" (a whole run, slowest rank), "ranks": [{"rank",
// "source", "destination", "checksum" and "validated" (null on a rank
// that is only a source)}], "validated" (every destination rank
// validated), "staging_bytes_max", "wall_seconds"}; on registered tensors
// also "conservation": {"label" (exact or skipped), "source", "result"}
// and "committed".
void PrintCrossRun(const CrossRunView& run, bool json, std::ostream& out);

// A cross-mesh batch's run (`exec --local --src_mesh ... --batch FILE`).
struct CrossBatchRunView {
  // Its items and schedule as planned, and the works by item; null for a
  // prepared schedule's run (`job run --schedule`), whose plans the
  // client does not hold: its tensors are then named by the summary.
  const CrossBatch* batch = nullptr;
  const std::vector<executor::CrossWork>* works = nullptr;
  std::string backend;
  std::string launched_on;
  int iters = 0;
  int warmup = 0;
  const std::vector<executor::RankReport>& reports;
  const executor::RunSummary& summary;  // SummarizeCrossBatch's
  // A run on registered tensors, as CrossRunView's.
  bool on_tensors = false;
  bool committed = false;
  // A schedule's run: whether the agents were sent its plans.
  bool plan_sent = false;
};

// A table, or with `json` one object {"kind": "cross_mesh_batch", "plan"
// (plan --batch --json's; omitted when the client holds no plans),
// "backend", "world_size", "iters", "warmup",
// "rows" and "seconds_min", "seconds_median" (as a cross-mesh run's, over
// every tensor), "tensors": [{"name", "validated", "why_not" (null when
// validated), "checksums": [{"rank", "checksum"}] (destination ranks)}],
// "validated" (every tensor on every destination rank),
// "staging_bytes_max", "wall_seconds"} (a schedule's run adds "plan_sent");
// on registered tensors every tensor
// also has "conservation" (as a cross-mesh run's) and the object
// "committed".
void PrintCrossBatchRun(const CrossBatchRunView& run, bool json,
                        std::ostream& out);

// OK when every destination rank validated; DATA_LOSS naming the first
// that did not.
absl::Status CrossRunVerdict(const executor::RunSummary& summary);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CROSS_RUN_OUTPUT_H_
