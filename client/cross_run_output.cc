#include "client/cross_run_output.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "planner/format/cross_plan_format.h"

namespace reshard::client {
namespace {

using executor::RankReport;

std::string RanksJson(const executor::CrossWork& work,
                      const std::vector<RankReport>& reports) {
  std::vector<std::string> ranks;
  for (const RankReport& r : reports) {
    const bool dst = work.IsDestination(r.rank);
    const bool has = dst && !r.tensors.empty();
    ranks.push_back(absl::StrCat(
        "{\"rank\": ", r.rank, ", \"source\": ",
        work.src_mesh.PositionOfRank(r.rank) >= 0 ? "true" : "false",
        ", \"destination\": ", dst ? "true" : "false", ", \"checksum\": ",
        has ? absl::StrCat(r.tensors.front().checksum) : "null",
        ", \"validated\": ",
        has ? (r.tensors.front().validated ? "true" : "false") : "null", "}"));
  }
  return absl::StrCat("[", absl::StrJoin(ranks, ", "), "]");
}

// A registered tensor's conservation checksums (§6.5) as JSON.
std::string ConservationJson(const executor::TensorRow& t) {
  return absl::StrCat("{\"label\": \"", t.conservation,
                      "\", \"source\": ", t.conservation_source,
                      ", \"result\": ", t.conservation_result, "}");
}

std::string RowsJson(const executor::RunSummary& summary) {
  std::vector<std::string> rows;
  for (const executor::SummaryRow& row : summary.rows) {
    rows.push_back(absl::StrCat(
        "{\"name\": \"", row.op,
        "\", \"seconds_min\": ", FormatDouble(row.seconds_min),
        ", \"seconds_median\": ", FormatDouble(row.seconds_median), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ", "), "]");
}

void PrintJson(const CrossRunView& run, std::ostream& out) {
  const executor::RunSummary& summary = run.summary;
  out << "{\"kind\": \"cross_mesh\", \"plan\": "
      << CrossPlanJson(run.work.src_mesh, run.work.dst_mesh, run.work.plan)
      << ", \"backend\": \"" << run.backend
      << "\", \"world_size\": " << run.work.Ranks().size()
      << ", \"iters\": " << run.iters << ", \"warmup\": " << run.warmup
      << ", \"rows\": " << RowsJson(summary)
      << ", \"seconds_min\": " << FormatDouble(summary.seconds_min)
      << ", \"seconds_median\": " << FormatDouble(summary.seconds_median)
      << ", \"ranks\": " << RanksJson(run.work, run.reports)
      << ", \"validated\": " << (summary.validated ? "true" : "false")
      << ", \"staging_bytes_max\": " << summary.peak_bytes
      << ", \"wall_seconds\": " << FormatDouble(summary.wall_seconds);
  if (run.on_tensors && !summary.tensors.empty()) {
    const executor::TensorRow& t = summary.tensors.front();
    out << ", \"conservation\": " << ConservationJson(t)
        << ", \"committed\": " << (run.committed ? "true" : "false");
  }
  out << "}\n";
}

void PrintParts(const executor::RunSummary& summary, std::ostream& out) {
  out << absl::StrFormat("%-11s %12s %12s\n", "part", "min_us", "median_us");
  out << absl::StrFormat("%-11s %12.1f %12.1f\n", "total",
                         summary.seconds_min * 1e6,
                         summary.seconds_median * 1e6);
  for (const executor::SummaryRow& row : summary.rows) {
    out << absl::StrFormat("%-11s %12.1f %12.1f\n", row.op,
                           row.seconds_min * 1e6, row.seconds_median * 1e6);
  }
}

void PrintTable(const CrossRunView& run, std::ostream& out) {
  const executor::RunSummary& summary = run.summary;
  out << absl::StrFormat("cross-mesh run: %s, %s, %d iters after %d warm-up\n",
                         run.launched_on, run.backend, run.iters, run.warmup);
  PrintParts(summary, out);
  std::vector<std::string> sums;
  for (const RankReport& r : run.reports) {
    if (!run.work.IsDestination(r.rank) || r.tensors.empty()) continue;
    sums.push_back(absl::StrCat(r.rank, ":", r.tensors.front().checksum));
  }
  out << "checksums (destination ranks): " << absl::StrJoin(sums, " ") << "\n";
  out << (summary.validated ? "validated"
                            : absl::StrCat("NOT VALIDATED: ", summary.why_not));
  if (run.on_tensors && !summary.tensors.empty()) {
    out << " (conservation " << summary.tensors.front().conservation << ")"
        << (run.committed ? ", committed" : ", not committed");
  }
  out << "\n";
}

// Tensor t's name: the batch file's, else the summary's.
std::string BatchTensorName(const CrossBatchRunView& run, size_t t) {
  return run.batch != nullptr ? run.batch->items[t].name
                              : run.summary.tensors[t].name;
}

std::string BatchTensorsJson(const CrossBatchRunView& run) {
  std::vector<std::string> tensors;
  for (size_t t = 0; t < run.summary.tensors.size(); ++t) {
    const executor::TensorRow& row = run.summary.tensors[t];
    // A destination rank reports every tensor; a source-only rank none.
    std::vector<std::string> sums;
    for (size_t i = 0; i < run.reports.size(); ++i) {
      const executor::RankReport& report = run.reports[i];
      const bool destination = run.works != nullptr
                                   ? (*run.works)[t].IsDestination(report.rank)
                                   : report.tensors.size() > t;
      if (!destination) continue;
      sums.push_back(absl::StrCat("{\"rank\": ", report.rank,
                                  ", \"checksum\": ", row.checksums[i], "}"));
    }
    tensors.push_back(absl::StrCat(
        "{\"name\": ", JsonString(BatchTensorName(run, t)),
        ", \"validated\": ", row.validated ? "true" : "false",
        ", \"why_not\": ", row.validated ? "null" : JsonString(row.why_not),
        ", \"checksums\": [", absl::StrJoin(sums, ", "), "]",
        run.on_tensors ? ", \"conservation\": " + ConservationJson(row) : "",
        "}"));
  }
  return absl::StrCat("[", absl::StrJoin(tensors, ", "), "]");
}

void PrintBatchJson(const CrossBatchRunView& run, std::ostream& out) {
  const executor::RunSummary& summary = run.summary;
  out << "{\"kind\": \"cross_mesh_batch\"";
  if (run.batch != nullptr) {
    const CrossMeshes& meshes = run.batch->meshes;
    out << ", \"plan\": "
        << CrossBatchJson(meshes.src, meshes.dst, run.batch->items,
                          run.batch->plan);
  }
  out << ", \"backend\": \"" << run.backend
      << "\", \"world_size\": " << run.reports.size()
      << ", \"iters\": " << run.iters << ", \"warmup\": " << run.warmup
      << ", \"rows\": " << RowsJson(summary)
      << ", \"seconds_min\": " << FormatDouble(summary.seconds_min)
      << ", \"seconds_median\": " << FormatDouble(summary.seconds_median)
      << ", \"tensors\": " << BatchTensorsJson(run)
      << ", \"validated\": " << (summary.validated ? "true" : "false")
      << ", \"staging_bytes_max\": " << summary.peak_bytes
      << ", \"wall_seconds\": " << FormatDouble(summary.wall_seconds);
  if (run.batch == nullptr) {
    out << ", \"plan_sent\": " << (run.plan_sent ? "true" : "false");
  }
  if (run.on_tensors) {
    out << ", \"committed\": " << (run.committed ? "true" : "false");
  }
  out << "}\n";
}

void PrintBatchTable(const CrossBatchRunView& run, std::ostream& out) {
  const executor::RunSummary& summary = run.summary;
  out << absl::StrFormat(
      "cross-mesh batch run: %d tensors, %s, %s, %d iters after %d warm-up\n",
      summary.tensors.size(), run.launched_on, run.backend, run.iters,
      run.warmup);
  PrintParts(summary, out);
  for (size_t t = 0; t < summary.tensors.size(); ++t) {
    const executor::TensorRow& row = summary.tensors[t];
    out << absl::StrFormat(
        "%-24s %s%s\n", BatchTensorName(run, t),
        row.validated ? "validated" : "NOT VALIDATED: " + row.why_not,
        run.on_tensors ? absl::StrCat(" (conservation ", row.conservation, ")")
                       : "");
  }
  out << (summary.validated ? "validated"
                            : absl::StrCat("NOT VALIDATED: ", summary.why_not));
  if (run.on_tensors) {
    out << (run.committed ? ", committed" : ", not committed");
  }
  out << "\n";
}

}  // namespace

void PrintCrossBatchRun(const CrossBatchRunView& run, bool json,
                        std::ostream& out) {
  if (json) {
    PrintBatchJson(run, out);
  } else {
    PrintBatchTable(run, out);
  }
}

void PrintCrossRun(const CrossRunView& run, bool json, std::ostream& out) {
  if (json) {
    PrintJson(run, out);
  } else {
    PrintTable(run, out);
  }
}

absl::Status CrossRunVerdict(const executor::RunSummary& summary) {
  if (summary.validated) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("not validated: ", summary.why_not));
}

}  // namespace reshard::client
