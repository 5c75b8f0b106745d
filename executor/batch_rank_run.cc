#include "executor/batch_rank_run.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "executor/batch_runner.h"
#include "executor/data_rule.h"
#include "executor/plan_runner.h"
#include "executor/rank_run.h"
#include "executor/report_codec.h"
#include "executor/sample_stats.h"

namespace reshard::executor {
namespace {

// Every tensor's source (filled by the data rule) and result buffers.
struct Buffers {
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;

  Buffers(const Mesh& mesh, const std::vector<Plan>& plans, int64_t position,
          const std::vector<std::pair<int64_t, int64_t>>& numels) {
    for (size_t t = 0; t < plans.size(); ++t) {
      const int64_t itemsize = plans[t].tensor.itemsize();
      in.emplace_back(numels[t].first * itemsize);
      out.emplace_back(numels[t].second * itemsize);
      FillSource(mesh, plans[t].tensor, plans[t].src, position,
                 in.back().data());
    }
    for (size_t t = 0; t < plans.size(); ++t) {
      in_ptrs.push_back(in[t].data());
      out_ptrs.push_back(out[t].data());
    }
  }
};

// What the timed runs measured: per row, and the whole batch.
struct Samples {
  std::vector<std::vector<double>> rows;
  std::vector<double> total, local;

  void Summarize(BatchRankReport& report) const {
    for (const std::vector<double>& row : rows) {
      report.seconds_min.push_back(Minimum(row));
      report.seconds_median.push_back(Median(row));
    }
    report.total_seconds_min = Minimum(total);
    report.total_seconds_median = Median(total);
    report.local_seconds_median = Median(local);
  }
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

absl::StatusOr<std::unique_ptr<Buffers>> RunBucketed(
    const Mesh& mesh, const std::vector<Plan>& plans,
    const BucketSchedule& schedule, int64_t rank,
    CommunicatorProvider& provider, const BatchRankOptions& options,
    Samples& samples, BatchRankReport& report) {
  absl::StatusOr<std::unique_ptr<BatchRunner>> runner =
      BatchRunner::Compile(mesh, plans, schedule, rank, provider);
  if (!runner.ok()) return runner.status();
  BatchRunner& r = **runner;
  report.memory_bound_bytes = r.MemoryBoundBytes();
  std::vector<std::pair<int64_t, int64_t>> numels;
  for (size_t t = 0; t < plans.size(); ++t) {
    numels.emplace_back(r.SourceNumel(t), r.ResultNumel(t));
  }
  auto buffers = std::make_unique<Buffers>(mesh, plans, r.position(), numels);
  BatchRunStats stats;
  const int runs = TotalExecutions(options.warmup, options.iters);
  for (int i = 0; i < runs; ++i) {
    absl::Status s = CheckStopped(options.stopped, i, runs);
    if (s.ok()) s = r.Run(buffers->in_ptrs, buffers->out_ptrs, &stats);
    if (!s.ok()) return s;
    if (i < options.warmup) continue;
    for (size_t b = 0; b < stats.bucket_seconds.size(); ++b) {
      samples.rows[b].push_back(stats.bucket_seconds[b]);
    }
    samples.total.push_back(stats.total_seconds);
    samples.local.push_back(stats.local_seconds);
  }
  return buffers;
}

// The row of every (tensor, step) of a schedule of one-step buckets.
absl::StatusOr<absl::flat_hash_map<std::pair<int, int>, size_t>> RowsOf(
    const BucketSchedule& schedule) {
  absl::flat_hash_map<std::pair<int, int>, size_t> rows;
  for (size_t b = 0; b < schedule.buckets.size(); ++b) {
    const Bucket& bucket = schedule.buckets[b];
    if (bucket.members.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buckets[", b, "]: tensor by tensor, every row holds one step"));
    }
    rows[{bucket.members[0].tensor, bucket.members[0].step}] = b;
  }
  return rows;
}

// One timed run of every tensor's own plan, one after the other.
absl::Status RunEachPlan(
    std::vector<std::unique_ptr<PlanRunner>>& runners, Buffers& buffers,
    const absl::flat_hash_map<std::pair<int, int>, size_t>& rows, bool record,
    Samples& samples) {
  const auto start = std::chrono::steady_clock::now();
  RunStats stats;
  for (size_t t = 0; t < runners.size(); ++t) {
    absl::Status s = runners[t]->Run(buffers.in_ptrs[t], buffers.out_ptrs[t],
                                     record ? &stats : nullptr);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("tensors[", t, "].", s.message()));
    }
    for (size_t j = 0; record && j < stats.step_seconds.size(); ++j) {
      auto row = rows.find({static_cast<int>(t), static_cast<int>(j)});
      if (row != rows.end()) {
        samples.rows[row->second].push_back(stats.step_seconds[j]);
      }
    }
  }
  if (record) samples.total.push_back(SecondsSince(start));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Buffers>> RunTensorByTensor(
    const Mesh& mesh, const std::vector<Plan>& plans,
    const BucketSchedule& schedule, int64_t rank,
    CommunicatorProvider& provider, const BatchRankOptions& options,
    Samples& samples, BatchRankReport& report) {
  absl::StatusOr<absl::flat_hash_map<std::pair<int, int>, size_t>> rows =
      RowsOf(schedule);
  if (!rows.ok()) return rows.status();
  std::vector<std::unique_ptr<PlanRunner>> runners;
  std::vector<std::pair<int64_t, int64_t>> numels;
  for (size_t t = 0; t < plans.size(); ++t) {
    absl::StatusOr<std::unique_ptr<PlanRunner>> runner =
        PlanRunner::Compile(mesh, plans[t], rank, provider);
    if (!runner.ok()) {
      return absl::Status(
          runner.status().code(),
          absl::StrCat("tensors[", t, "].", runner.status().message()));
    }
    report.memory_bound_bytes =
        std::max(report.memory_bound_bytes, (*runner)->MemoryBoundBytes());
    numels.emplace_back((*runner)->SourceNumel(), (*runner)->ResultNumel());
    runners.push_back(*std::move(runner));
  }
  auto buffers =
      std::make_unique<Buffers>(mesh, plans, mesh.PositionOfRank(rank), numels);
  const int runs = TotalExecutions(options.warmup, options.iters);
  for (int i = 0; i < runs; ++i) {
    absl::Status s = CheckStopped(options.stopped, i, runs);
    if (s.ok()) {
      s = RunEachPlan(runners, *buffers, *rows, i >= options.warmup, samples);
    }
    if (!s.ok()) return s;
  }
  return buffers;
}

// Per tensor: the validation collective, the comparison with g, the
// checksum.
absl::Status CheckTensors(const Mesh& mesh, const std::vector<Plan>& plans,
                          int64_t position, CommunicatorProvider& provider,
                          Buffers& buffers, BatchRankReport& report) {
  for (size_t t = 0; t < plans.size(); ++t) {
    ResultCheck check =
        CheckResult(mesh, plans[t], position, provider, buffers.out[t]);
    if (!check.status.ok()) {
      return absl::Status(check.status.code(),
                          absl::StrCat("tensors[", t, "]: validation: ",
                                       check.status.message()));
    }
    report.tensors.push_back(
        {check.checksum, check.validated, std::move(check.validation_error)});
  }
  return absl::OkStatus();
}

}  // namespace

BatchRankReport RunBatchRank(const Mesh& mesh, const std::vector<Plan>& plans,
                             const BucketSchedule& schedule, int64_t rank,
                             CommunicatorProvider& provider,
                             const BatchRankOptions& options) {
  BatchRankReport report;
  report.rank = rank;
  Samples samples;
  samples.rows.resize(schedule.buckets.size());
  absl::StatusOr<std::unique_ptr<Buffers>> buffers =
      options.bucketed ? RunBucketed(mesh, plans, schedule, rank, provider,
                                     options, samples, report)
                       : RunTensorByTensor(mesh, plans, schedule, rank,
                                           provider, options, samples, report);
  if (!buffers.ok()) {
    report.status = buffers.status();
    return report;
  }
  samples.Summarize(report);
  report.status = CheckTensors(mesh, plans, mesh.PositionOfRank(rank), provider,
                               **buffers, report);
  return report;
}

std::string SerializeBatchReport(const BatchRankReport& r) {
  std::string out = absl::StrCat("reshard-batch-report-1\n", r.rank, "\n",
                                 static_cast<int>(r.status.code()), "\n");
  AppendBlob(out, r.status.message());
  absl::StrAppend(&out, r.memory_bound_bytes, "\n");
  for (double v :
       {r.total_seconds_min, r.total_seconds_median, r.local_seconds_median}) {
    AppendDouble(out, v);
  }
  absl::StrAppend(&out, r.seconds_min.size(), "\n");
  for (size_t k = 0; k < r.seconds_min.size(); ++k) {
    AppendDouble(out, r.seconds_min[k]);
    AppendDouble(out, r.seconds_median[k]);
  }
  absl::StrAppend(&out, r.tensors.size(), "\n");
  for (const TensorCheck& t : r.tensors) {
    absl::StrAppend(&out, t.checksum, "\n", t.validated ? 1 : 0, "\n");
    AppendBlob(out, t.validation_error);
  }
  return out;
}

absl::StatusOr<BatchRankReport> ParseBatchReport(const std::string& bytes) {
  ReportReader in(bytes);
  BatchRankReport r;
  std::string magic, message;
  int code = 0;
  size_t rows = 0, tensors = 0;
  bool ok = in.Line(magic) && magic == "reshard-batch-report-1" &&
            in.Number(r.rank) && in.Number(code) && in.Blob(message) &&
            in.Number(r.memory_bound_bytes) && in.Number(r.total_seconds_min) &&
            in.Number(r.total_seconds_median) &&
            in.Number(r.local_seconds_median) && in.Number(rows);
  for (size_t k = 0; ok && k < rows; ++k) {
    double lo = 0, mid = 0;
    ok = in.Number(lo) && in.Number(mid);
    r.seconds_min.push_back(lo);
    r.seconds_median.push_back(mid);
  }
  ok = ok && in.Number(tensors);
  for (size_t t = 0; ok && t < tensors; ++t) {
    TensorCheck check;
    int validated = 0;
    ok = in.Number(check.checksum) && in.Number(validated) &&
         in.Blob(check.validation_error);
    check.validated = validated == 1;
    r.tensors.push_back(std::move(check));
  }
  if (!ok) return absl::DataLossError("batch rank report: malformed");
  r.status = absl::Status(static_cast<absl::StatusCode>(code), message);
  return r;
}

}  // namespace reshard::executor
