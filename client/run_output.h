// The report of a run, as `reshardctl exec` and `reshardctl job run` print
// it (docs/DESIGN.md §6.3, §8): a table of rows (a plan's steps, a batch's
// buckets) with checksums and verdict, or one JSON object. One writer serves
// both commands and both kinds of work, so a run prints the same whether its
// ranks were local processes or a job's agents. A plan keeps a plan's
// shape (a `step` table, its checksums, "steps" in JSON); a batch adds its
// header, members, the time per run and every tensor's verdict ("buckets"
// and "tensors" in JSON).
#ifndef RESHARD_CLIENT_RUN_OUTPUT_H_
#define RESHARD_CLIENT_RUN_OUTPUT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"
#include "run_values/run_summary.h"

namespace reshard::client {

// How the run was launched, and what the header line and the JSON say
// beside the summary.
struct RunContext {
  std::string backend;  // BackendName's
  int64_t world_size = 0;
  // Who ran it, for the table's header line: "8 ranks (processes)" or
  // "job train, 8 agents, run r-12".
  std::string launched_on;
  int iters = 0;
  int warmup = 0;
  // A batch's planned form (its header and its JSON); unused for a plan.
  const BatchPlan* planned = nullptr;
  // A run the user interrupted (Ctrl-C): the executions every rank
  // finished, warmup included, of iters + warmup; -1 when it ran to its end.
  int interrupted_after = -1;
  // A run on registered tensors (`job run --tensor`): its tensors are
  // judged by the conservation checksum, and `committed` says whether
  // every rank wrote its destinations.
  bool on_tensors = false;
  bool committed = false;
};

// Prints the table or, with `json`, one object on one line. A plan's:
// {"plan" (docs/DESIGN.md §4), "backend", "world_size", "iters", "warmup",
// "steps":
// [{"index", "op", "group", "bytes", "seconds_min", "seconds_median" (the
// slowest rank's), "slowest_median_seconds" (per execution the slowest
// rank, their median: what a run pays), "model_seconds" (the plan's cost
// model), "algbw_gbps", "busbw_gbps"}], "seconds_min", "seconds_median"
// (the whole plan per run, slowest rank), "local_seconds_median" (the
// local steps' share), "checksums", "validated", "peak_bytes_measured",
// "peak_bytes_planned", "wall_seconds"}. A batch's:
// {"plan" (the batch JSON of `plan --batch --json`), "backend", "world_size",
// "iters", "warmup", "bucketing", "buckets" (rows with "members"),
// "seconds_min", "seconds_median", "local_seconds_median" (the whole batch
// per run, as a plan's), "tensors":
// [{"name", "checksums", "validated"}], "validated", "peak_bytes_measured",
// On registered tensors, each tensor (a plan: the object itself) adds
// "conservation": {"label" ("exact" or "skipped"), "source", "result"},
// and the object adds "committed".
// "peak_bytes_planned", "wall_seconds"}. An interrupted run prints the rows
// its finished executions measured and says so in place of the verdict
// ("interrupted": true and "executions_completed" in JSON, "validated"
// false). Returns the verdict as the commands' status: OK when validated,
// DATA_LOSS naming what did not validate, CANCELLED marked interrupted
// (exit 130) when interrupted.
absl::Status PrintRun(const Mesh& mesh, const executor::BatchWork& work,
                      const RunContext& context,
                      const executor::RunSummary& summary, bool json,
                      std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_RUN_OUTPUT_H_
