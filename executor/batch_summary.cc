#include "executor/batch_summary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/run_summary.h"
#include "planner/collective_factors.h"

namespace reshard::executor {
namespace {

BucketRow RowOf(const Mesh& mesh, const Bucket& bucket, size_t b,
                const std::vector<BatchRankReport>& reports) {
  BucketRow row;
  row.op = std::string(StepOpName(bucket.op));
  row.group = mesh.GroupName(bucket.group);
  row.members = static_cast<int64_t>(bucket.members.size());
  row.bytes = bucket.bytes;
  for (const BatchRankReport& r : reports) {
    if (b < r.seconds_min.size()) {
      row.seconds_min = std::max(row.seconds_min, r.seconds_min[b]);
      row.seconds_median = std::max(row.seconds_median, r.seconds_median[b]);
    }
  }
  if (row.seconds_median > 0) {
    row.algbw_gbps = static_cast<double>(row.bytes) / row.seconds_median / 1e9;
    row.busbw_gbps =
        row.algbw_gbps *
        BusBandwidthFactor(bucket.op, mesh.GroupSize(bucket.group));
  }
  return row;
}

// Tensor t's checksums by rank and verdict; `reports` sorted by rank.
TensorRow TensorOf(const std::string& name, size_t t,
                   const std::vector<BatchRankReport>& reports) {
  TensorRow row;
  row.name = name;
  for (const BatchRankReport& r : reports) {
    const TensorCheck check =
        t < r.tensors.size() ? r.tensors[t] : TensorCheck();
    row.checksums.push_back(check.checksum);
    if (!check.validated && row.validated) {
      row.validated = false;
      row.why_not = absl::StrCat(
          "rank ", r.rank, ": ",
          t < r.tensors.size() ? check.validation_error : "no verdict");
    }
  }
  return row;
}

}  // namespace

BatchSummary SummarizeBatch(const Mesh& mesh, const BucketSchedule& rows,
                            const std::vector<std::string>& names,
                            std::vector<BatchRankReport> reports) {
  BatchSummary s;
  for (size_t b = 0; b < rows.buckets.size(); ++b) {
    s.buckets.push_back(RowOf(mesh, rows.buckets[b], b, reports));
  }
  std::sort(reports.begin(), reports.end(),
            [](const BatchRankReport& a, const BatchRankReport& b) {
              return a.rank < b.rank;
            });
  for (const BatchRankReport& r : reports) {
    s.seconds_min = std::max(s.seconds_min, r.total_seconds_min);
    s.seconds_median = std::max(s.seconds_median, r.total_seconds_median);
    s.local_seconds_median =
        std::max(s.local_seconds_median, r.local_seconds_median);
    s.memory_bound_bytes = std::max(s.memory_bound_bytes, r.memory_bound_bytes);
  }
  for (size_t t = 0; t < names.size(); ++t) {
    s.tensors.push_back(TensorOf(names[t], t, reports));
    if (!s.tensors.back().validated && s.validated) {
      s.validated = false;
      s.why_not = absl::StrCat(names[t], " (tensors[", t,
                               "]): ", s.tensors.back().why_not);
    }
  }
  return s;
}

absl::Status BatchRankFailure(const std::vector<BatchRankReport>& reports) {
  std::vector<RankReport> ranks(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    ranks[i].rank = reports[i].rank;
    ranks[i].status = reports[i].status;
  }
  return RankFailure(ranks);
}

}  // namespace reshard::executor
