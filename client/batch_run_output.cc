#include "client/batch_run_output.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/batch_format.h"
#include "planner/plan_format.h"

namespace reshard {
namespace {

void PrintHeader(const BatchPlan& batch, const BatchRunContext& c,
                 std::ostream& out) {
  const BucketSchedule& s = batch.schedule;
  out << absl::StrFormat(
      "batch: %d tensors, %d collectives tensor by tensor, %d bucketed "
      "(model %.2f us -> %.2f us)\n",
      batch.plans.size(), s.collectives_before, s.collectives_after,
      s.time_us_before, s.time_us_after);
  out << absl::StrFormat("backend %s, %s, %s, %d iters after %d warm-up\n",
                         c.run.backend, c.run.launched_on,
                         c.bucketed ? "bucketed" : "tensor by tensor",
                         c.run.iters, c.run.warmup);
}

void PrintRows(const executor::BatchSummary& s, bool bucketed,
               std::ostream& out) {
  out << absl::StrFormat("%6s  %-15s %-8s %7s %12s %12s %12s %11s %11s\n",
                         bucketed ? "bucket" : "coll", "op", "group", "members",
                         "bytes", "min_us", "median_us", "algbw_GB/s",
                         "busbw_GB/s");
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    const executor::BucketRow& r = s.buckets[b];
    out << absl::StrFormat(
        "%6d  %-15s %-8s %7d %12d %12.2f %12.2f %11.3f %11.3f\n", b, r.op,
        r.group, r.members, r.bytes, r.seconds_min * 1e6,
        r.seconds_median * 1e6, r.algbw_gbps, r.busbw_gbps);
  }
}

void PrintTable(const BatchPlan& batch, const BatchRunContext& c,
                const executor::BatchSummary& s, std::ostream& out) {
  PrintHeader(batch, c, out);
  PrintRows(s, c.bucketed, out);
  out << absl::StrFormat(
      "batch per run: min %.2f us, median %.2f us (%d collectives%s)\n",
      s.seconds_min * 1e6, s.seconds_median * 1e6, s.buckets.size(),
      c.bucketed ? absl::StrFormat(", local steps %.2f us",
                                   s.local_seconds_median * 1e6)
                 : "");
  for (const executor::TensorRow& t : s.tensors) {
    out << absl::StrFormat("%-20s %-9s checksums: %s\n", t.name,
                           t.validated ? "validated" : "FAILED",
                           absl::StrJoin(t.checksums, " "));
  }
  out << "validated: " << (s.validated ? "yes" : "NO: " + s.why_not)
      << "   peak bytes per rank (bound): " << s.memory_bound_bytes
      << "   wall: " << absl::StrFormat("%.3f", s.wall_seconds) << " s\n";
}

std::string RowJson(size_t index, const executor::BucketRow& r) {
  return absl::StrCat("{\"index\": ", index, ", \"op\": ", JsonString(r.op),
                      ", \"group\": ", JsonString(r.group),
                      ", \"members\": ", r.members, ", \"bytes\": ", r.bytes,
                      ", \"seconds_min\": ", FormatDouble(r.seconds_min),
                      ", \"seconds_median\": ", FormatDouble(r.seconds_median),
                      ", \"algbw_gbps\": ", FormatDouble(r.algbw_gbps),
                      ", \"busbw_gbps\": ", FormatDouble(r.busbw_gbps), "}");
}

std::string TensorJson(const executor::TensorRow& t) {
  return absl::StrCat("{\"name\": ", JsonString(t.name), ", \"checksums\": [",
                      absl::StrJoin(t.checksums, ", "),
                      "], \"validated\": ", t.validated ? "true" : "false",
                      "}");
}

void PrintJson(const Mesh& mesh, const BatchPlan& batch,
               const BatchRunContext& c, const executor::BatchSummary& s,
               std::ostream& out) {
  std::vector<std::string> rows, tensors;
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    rows.push_back(RowJson(b, s.buckets[b]));
  }
  for (const executor::TensorRow& t : s.tensors) {
    tensors.push_back(TensorJson(t));
  }
  out << "{\"plan\": " << BatchJson(mesh, batch)
      << ", \"backend\": " << JsonString(c.run.backend)
      << ", \"world_size\": " << c.run.world_size
      << ", \"iters\": " << c.run.iters << ", \"warmup\": " << c.run.warmup
      << ", \"bucketing\": " << (c.bucketed ? "true" : "false")
      << ", \"buckets\": [" << absl::StrJoin(rows, ", ")
      << "], \"seconds_min\": " << FormatDouble(s.seconds_min)
      << ", \"seconds_median\": " << FormatDouble(s.seconds_median)
      << ", \"tensors\": [" << absl::StrJoin(tensors, ", ")
      << "], \"validated\": " << (s.validated ? "true" : "false")
      << ", \"peak_bytes_measured\": " << s.memory_bound_bytes
      << ", \"wall_seconds\": " << FormatDouble(s.wall_seconds) << "}\n";
}

}  // namespace

absl::Status PrintBatchRun(const Mesh& mesh, const BatchPlan& batch,
                           const BatchRunContext& context,
                           const executor::BatchSummary& summary, bool json,
                           std::ostream& out) {
  if (json) {
    PrintJson(mesh, batch, context, summary, out);
  } else {
    PrintTable(batch, context, summary, out);
  }
  if (!summary.validated) {
    return absl::DataLossError(
        absl::StrCat("the result did not validate: ", summary.why_not));
  }
  return absl::OkStatus();
}

}  // namespace reshard
