#include "client/run_output.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/plan_format.h"

namespace reshard {

void PrintRunTable(const Plan& plan, const RunContext& context,
                   const executor::RunSummary& s, std::ostream& out) {
  out << absl::StrFormat("plan: %s  (%s, model %.2f us)\n", PlanTrace(plan),
                         PlannerName(plan.planner), plan.total_time_us);
  out << absl::StrFormat("backend %s, %s, %d iters after %d warm-up\n",
                         context.backend, context.launched_on, context.iters,
                         context.warmup);
  out << absl::StrFormat("%5s  %-15s %-8s %12s %12s %12s %11s %11s\n", "step",
                         "op", "group", "bytes", "min_us", "median_us",
                         "algbw_GB/s", "busbw_GB/s");
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const executor::StepRow& r = s.steps[k];
    out << absl::StrFormat("%5d  %-15s %-8s %12d %12.2f %12.2f %11.3f %11.3f\n",
                           k, r.op, r.group, r.bytes, r.seconds_min * 1e6,
                           r.seconds_median * 1e6, r.algbw_gbps, r.busbw_gbps);
  }
  out << "checksums: " << absl::StrJoin(s.checksums, " ") << "\n";
  out << "validated: " << (s.validated ? "yes" : "NO: " + s.why_not)
      << "   peak bytes per rank (measured): " << s.peak_bytes
      << "   wall: " << absl::StrFormat("%.3f", s.wall_seconds) << " s\n";
}

void PrintRunJson(const Mesh& mesh, const Plan& plan, const RunContext& context,
                  const executor::RunSummary& s, std::ostream& out) {
  std::vector<std::string> steps;
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const executor::StepRow& r = s.steps[k];
    steps.push_back(
        absl::StrCat("{\"index\": ", k, ", \"op\": \"", r.op,
                     "\", \"group\": \"", r.group, "\", \"bytes\": ", r.bytes,
                     ", \"seconds_min\": ", FormatDouble(r.seconds_min),
                     ", \"seconds_median\": ", FormatDouble(r.seconds_median),
                     ", \"algbw_gbps\": ", FormatDouble(r.algbw_gbps),
                     ", \"busbw_gbps\": ", FormatDouble(r.busbw_gbps), "}"));
  }
  out << "{\"plan\": " << PlanJson(mesh, plan) << ", \"backend\": \""
      << context.backend << "\", \"world_size\": " << context.world_size
      << ", \"iters\": " << context.iters << ", \"warmup\": " << context.warmup
      << ", \"steps\": [" << absl::StrJoin(steps, ", ") << "], \"checksums\": ["
      << absl::StrJoin(s.checksums, ", ")
      << "], \"validated\": " << (s.validated ? "true" : "false")
      << ", \"peak_bytes_measured\": " << s.peak_bytes
      << ", \"wall_seconds\": " << FormatDouble(s.wall_seconds) << "}\n";
}

absl::Status PrintRun(const Mesh& mesh, const Plan& plan,
                      const RunContext& context,
                      const executor::RunSummary& summary, bool json,
                      std::ostream& out) {
  if (json) {
    PrintRunJson(mesh, plan, context, summary, out);
  } else {
    PrintRunTable(plan, context, summary, out);
  }
  if (!summary.validated) {
    return absl::DataLossError(
        absl::StrCat("the result did not validate: ", summary.why_not));
  }
  return absl::OkStatus();
}

}  // namespace reshard
