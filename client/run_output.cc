#include "client/run_output.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/exit_codes.h"
#include "planner/format/batch_format.h"
#include "planner/format/plan_format.h"

namespace reshard::client {
namespace {

using executor::RunSummary;
using executor::SummaryRow;

// A plan's checksums by rank: its one tensor's.
std::string PlanChecksums(const RunSummary& s, absl::string_view separator) {
  if (s.tensors.empty()) return "";
  return absl::StrJoin(s.tensors.front().checksums, separator);
}

// The peak the planner computed for what ran: the plan's, or the batch's
// schedule's (bucketed or tensor by tensor), against the measured one.
int64_t PlannedPeakBytes(const executor::BatchWork& work) {
  return work.single_plan ? work.plans.front().peak_bytes
                          : work.schedule.peak_bytes;
}

// The lines above the table: the plan's trace, or the batch's counts.
void PrintHeader(const executor::BatchWork& work, const RunContext& c,
                 std::ostream& out) {
  if (work.single_plan) {
    const Plan& plan = work.plans.front();
    out << absl::StrFormat("plan: %s  (%s, model %.2f us)\n", PlanTrace(plan),
                           PlannerName(plan.planner), plan.total_time_us);
    out << WarningLines(plan);
    out << absl::StrFormat("backend %s, %s, %d iters after %d warm-up\n",
                           c.backend, c.launched_on, c.iters, c.warmup);
    return;
  }
  const BucketSchedule& s = c.planned->schedule;
  out << absl::StrFormat(
      "batch: %d tensors, %d collectives tensor by tensor, %d bucketed "
      "(model %.2f us -> %.2f us)\n",
      c.planned->plans.size(), s.collectives_before, s.collectives_after,
      s.time_us_before, s.time_us_after);
  for (size_t t = 0; t < work.plans.size(); ++t) {
    out << WarningLines(work.plans[t], t < work.names.size()
                                           ? absl::StrCat(work.names[t], ": ")
                                           : std::string());
  }
  out << absl::StrFormat("backend %s, %s, %s, %d iters after %d warm-up\n",
                         c.backend, c.launched_on,
                         work.bucketed ? "bucketed" : "tensor by tensor",
                         c.iters, c.warmup);
}

// One line per row; a batch's rows name their members.
void PrintRows(const executor::BatchWork& work, const RunSummary& s,
               std::ostream& out) {
  const bool members = !work.single_plan;
  const int width = work.single_plan ? 5 : 6;
  const std::string label = work.single_plan ? "step"
                            : work.bucketed  ? "bucket"
                                             : "coll";
  out << absl::StrFormat("%*s  %-15s %-8s ", width, label, "op", "group")
      << (members ? absl::StrFormat("%7s ", "members") : "")
      << absl::StrFormat("%12s %12s %12s %12s %12s %11s %11s\n", "bytes",
                         "min_us", "median_us", "slowest_us", "model_us",
                         "algbw_GB/s", "busbw_GB/s");
  for (size_t k = 0; k < s.rows.size(); ++k) {
    const SummaryRow& r = s.rows[k];
    out << absl::StrFormat("%*d  %-15s %-8s ", width, k, r.op, r.group)
        << (members ? absl::StrFormat("%7d ", r.members) : "")
        << absl::StrFormat("%12d %12.2f %12.2f %12.2f %12.2f %11.3f %11.3f\n",
                           r.bytes, r.seconds_min * 1e6, r.seconds_median * 1e6,
                           r.slowest_median_seconds * 1e6,
                           r.model_seconds * 1e6, r.algbw_gbps, r.busbw_gbps);
  }
}

// A run on registered tensors: each tensor's conservation checksums and
// what they prove, and whether the destinations were written.
void PrintConservation(const RunContext& c, const RunSummary& s,
                       std::ostream& out) {
  for (const executor::TensorRow& t : s.tensors) {
    out << absl::StrFormat("%-20s %-9s conservation %s: %d before, %d after\n",
                           t.name.empty() ? "tensor" : t.name,
                           t.validated ? "validated" : "FAILED", t.conservation,
                           t.conservation_source, t.conservation_result);
  }
  out << "committed: " << (c.committed ? "yes" : "no") << "\n";
}

// The lines below the table: checksums (every tensor's, for a batch, with
// the time per run) and the verdict.
void PrintFooter(const executor::BatchWork& work, const RunContext& c,
                 const RunSummary& s, std::ostream& out) {
  const bool interrupted = c.interrupted_after >= 0;
  out << absl::StrFormat(
      "%s per run: min %.2f us, median %.2f us (%d %s%s%s)\n",
      work.single_plan ? "plan" : "batch", s.seconds_min * 1e6,
      s.seconds_median * 1e6, s.rows.size(),
      work.single_plan ? "step" : "collective", s.rows.size() == 1 ? "" : "s",
      work.single_plan || work.bucketed
          ? absl::StrFormat(", local steps %.2f us",
                            s.local_seconds_median * 1e6)
          : "");
  if (c.on_tensors) {
    // Real data: judged by the conservation checksum alone.
  } else if (work.single_plan) {
    if (!interrupted) out << "checksums: " << PlanChecksums(s, " ") << "\n";
  } else {
    for (const executor::TensorRow& t : s.tensors) {
      if (interrupted) break;
      out << absl::StrFormat("%-20s %-9s checksums: %s\n", t.name,
                             t.validated ? "validated" : "FAILED",
                             absl::StrJoin(t.checksums, " "));
    }
  }
  if (c.on_tensors && !interrupted) PrintConservation(c, s, out);
  out << (interrupted
              ? absl::StrCat("interrupted after ", c.interrupted_after, " of ",
                             c.warmup + std::max(1, c.iters),
                             " executions (warmup included): not validated")
              : absl::StrCat("validated: ",
                             s.validated ? "yes" : "NO: " + s.why_not))
      << "   peak bytes per rank: " << s.peak_bytes << " measured, "
      << PlannedPeakBytes(work) << " planned"
      << "   wall: " << absl::StrFormat("%.3f", s.wall_seconds) << " s\n";
}

std::string RowJson(const executor::BatchWork& work, size_t index,
                    const SummaryRow& r) {
  return absl::StrCat(
      "{\"index\": ", index, ", \"op\": ", JsonString(r.op),
      ", \"group\": ", JsonString(r.group),
      work.single_plan ? "" : absl::StrCat(", \"members\": ", r.members),
      ", \"bytes\": ", r.bytes,
      ", \"seconds_min\": ", FormatDouble(r.seconds_min),
      ", \"seconds_median\": ", FormatDouble(r.seconds_median),
      ", \"slowest_median_seconds\": ", FormatDouble(r.slowest_median_seconds),
      ", \"model_seconds\": ", FormatDouble(r.model_seconds),
      ", \"algbw_gbps\": ", FormatDouble(r.algbw_gbps),
      ", \"busbw_gbps\": ", FormatDouble(r.busbw_gbps), "}");
}

// ", "conservation": {...}" of a tensor moved from registered memory; ""
// on generated data.
std::string ConservationJson(const executor::TensorRow& t) {
  if (t.conservation.empty()) return "";
  return absl::StrCat(
      ", \"conservation\": {\"label\": ", JsonString(t.conservation),
      ", \"source\": ", t.conservation_source,
      ", \"result\": ", t.conservation_result, "}");
}

std::string TensorJson(const executor::TensorRow& t) {
  return absl::StrCat("{\"name\": ", JsonString(t.name), ", \"checksums\": [",
                      absl::StrJoin(t.checksums, ", "),
                      "], \"validated\": ", t.validated ? "true" : "false",
                      ConservationJson(t), "}");
}

// The object's fields between "warmup" and "validated": a plan's steps and
// checksums, or a batch's rows, time per run and tensors.
std::string WorkJson(const executor::BatchWork& work, const RunSummary& s) {
  std::vector<std::string> rows, tensors;
  for (size_t k = 0; k < s.rows.size(); ++k) {
    rows.push_back(RowJson(work, k, s.rows[k]));
  }
  const std::string per_run = absl::StrCat(
      "\"seconds_min\": ", FormatDouble(s.seconds_min),
      ", \"seconds_median\": ", FormatDouble(s.seconds_median),
      ", \"local_seconds_median\": ", FormatDouble(s.local_seconds_median));
  if (work.single_plan) {
    return absl::StrCat(
        "\"steps\": [", absl::StrJoin(rows, ", "), "], ", per_run,
        ", \"checksums\": [", PlanChecksums(s, ", "), "]",
        s.tensors.empty() ? "" : ConservationJson(s.tensors[0]));
  }
  for (const executor::TensorRow& t : s.tensors) {
    tensors.push_back(TensorJson(t));
  }
  return absl::StrCat("\"bucketing\": ", work.bucketed ? "true" : "false",
                      ", \"buckets\": [", absl::StrJoin(rows, ", "), "], ",
                      per_run, ", \"tensors\": [", absl::StrJoin(tensors, ", "),
                      "]");
}

void PrintJson(const Mesh& mesh, const executor::BatchWork& work,
               const RunContext& c, const RunSummary& s, std::ostream& out) {
  const std::string plan = work.single_plan ? PlanJson(mesh, work.plans.front())
                                            : BatchJson(mesh, *c.planned);
  out << "{\"plan\": " << plan << ", \"backend\": " << JsonString(c.backend)
      << ", \"world_size\": " << c.world_size << ", \"iters\": " << c.iters
      << ", \"warmup\": " << c.warmup << ", " << WorkJson(work, s)
      << ", \"validated\": "
      << (s.validated && c.interrupted_after < 0 ? "true" : "false")
      << ", \"peak_bytes_measured\": " << s.peak_bytes
      << ", \"peak_bytes_planned\": " << PlannedPeakBytes(work)
      << ", \"wall_seconds\": " << FormatDouble(s.wall_seconds);
  if (c.interrupted_after >= 0) {
    out << ", \"interrupted\": true, \"executions_completed\": "
        << c.interrupted_after;
  }
  if (c.on_tensors)
    out << ", \"committed\": " << (c.committed ? "true" : "false");
  out << "}\n";
}

}  // namespace

absl::Status PrintRun(const Mesh& mesh, const executor::BatchWork& work,
                      const RunContext& context, const RunSummary& measured,
                      bool json, std::ostream& out) {
  // An interrupted run has no results to judge or sum.
  RunSummary summary = measured;
  if (context.interrupted_after >= 0) {
    for (executor::TensorRow& t : summary.tensors) t.checksums.clear();
  }
  if (json) {
    PrintJson(mesh, work, context, summary, out);
  } else {
    PrintHeader(work, context, out);
    PrintRows(work, summary, out);
    PrintFooter(work, context, summary, out);
  }
  if (context.interrupted_after >= 0) {
    return MarkInterrupted(absl::CancelledError(absl::StrCat(
        "interrupted after ", context.interrupted_after, " of ",
        context.warmup + std::max(1, context.iters), " executions")));
  }
  if (!summary.validated) {
    return absl::DataLossError(
        absl::StrCat("the result did not validate: ", summary.why_not));
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
