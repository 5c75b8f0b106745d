#include "executor/rank_run.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "executor/batch_runner.h"
#include "executor/data_rule.h"
#include "executor/report_codec.h"
#include "executor/sample_stats.h"
#include "planner/local_layout.h"

namespace reshard::executor {
namespace {

// Every tensor's source (filled by the data rule) and result buffers.
struct Buffers {
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;

  Buffers(const Mesh& mesh, const std::vector<Plan>& plans,
          const BatchRunner& runner) {
    for (size_t t = 0; t < plans.size(); ++t) {
      const int64_t itemsize = plans[t].tensor.itemsize();
      in.emplace_back(runner.SourceNumel(t) * itemsize);
      out.emplace_back(runner.ResultNumel(t) * itemsize);
      FillSource(mesh, plans[t].tensor, plans[t].src, runner.position(),
                 in.back().data());
    }
    for (size_t t = 0; t < plans.size(); ++t) {
      in_ptrs.push_back(in[t].data());
      out_ptrs.push_back(out[t].data());
    }
  }
};

// What the timed runs measured: per row, and the whole work.
struct Samples {
  std::vector<std::vector<double>> rows;
  std::vector<double> total, local;

  void Add(const std::vector<RunRow>& spec, const BatchRunStats& stats) {
    for (size_t r = 0; r < spec.size(); ++r) {
      const BucketMember& m = spec[r].timed_by;
      rows[r].push_back(stats.step_seconds[m.tensor][m.step]);
    }
    total.push_back(stats.total_seconds);
    local.push_back(stats.local_seconds);
  }
  void Summarize(RankReport& report) const {
    for (const std::vector<double>& row : rows) {
      report.seconds_min.push_back(Minimum(row));
      report.seconds_median.push_back(Median(row));
    }
    report.total_seconds_min = Minimum(total);
    report.total_seconds_median = Median(total);
    report.local_seconds_median = Median(local);
  }
};

// Compiles the work and runs it warmup + iters times, timing the rows.
absl::StatusOr<std::unique_ptr<Buffers>> TimedRuns(
    const Mesh& mesh, const BatchWork& work, int64_t rank,
    CommunicatorProvider& provider, const RankOptions& options,
    RankReport& report) {
  absl::StatusOr<std::unique_ptr<BatchRunner>> runner =
      BatchRunner::Compile(mesh, work.plans, work.schedule, rank, provider);
  if (!runner.ok()) return runner.status();
  BatchRunner& r = **runner;
  report.memory_bound_bytes =
      std::max(r.MemoryBoundBytes(), r.StepBoundBytes());
  auto buffers = std::make_unique<Buffers>(mesh, work.plans, r);
  const std::vector<RunRow> rows = work.Rows(mesh);
  Samples samples;
  samples.rows.resize(rows.size());
  BatchRunStats stats;
  const int runs = TotalExecutions(options);
  for (int i = 0; i < runs; ++i) {
    absl::Status s = CheckStopped(options.stopped, i, runs);
    if (s.ok()) s = r.Run(buffers->in_ptrs, buffers->out_ptrs, &stats);
    if (!s.ok()) return s;
    report.peak_bytes = std::max(report.peak_bytes, stats.peak_bytes);
    if (i >= options.warmup) samples.Add(rows, stats);
  }
  samples.Summarize(report);
  return buffers;
}

// The validation collective: `dst`'s Partial dims reduced, in place.
absl::Status ReducePartials(const Mesh& mesh, const Plan& plan,
                            int64_t position, CommunicatorProvider& provider,
                            std::vector<char>& data) {
  const PartialReduction partial = PartialOf(mesh, plan.dst);
  if (mesh.GroupSize(partial.dims) == 1) return absl::OkStatus();
  absl::StatusOr<Communicator*> comm = provider.Get(
      mesh.GroupRanks(position, partial.dims), mesh.GroupName(partial.dims));
  if (!comm.ok()) return comm.status();
  const int64_t numel =
      static_cast<int64_t>(data.size()) / plan.tensor.itemsize();
  return (*comm)->AllReduce(data.data(), numel, plan.tensor.dtype(),
                            {partial.op, partial.avg_divisor});
}

// Per tensor: the validation collective, the comparison with g, the
// checksum.
absl::Status CheckTensors(const Mesh& mesh, const BatchWork& work,
                          int64_t position, CommunicatorProvider& provider,
                          bool keep_result, Buffers& buffers,
                          RankReport& report) {
  for (size_t t = 0; t < work.plans.size(); ++t) {
    std::vector<char> result;
    if (keep_result) result = buffers.out[t];
    ResultCheck check =
        CheckResult(mesh, work.plans[t], position, provider, buffers.out[t]);
    if (!check.status.ok()) {
      return absl::Status(check.status.code(),
                          absl::StrCat(TensorLabel(work.plans.size(), t),
                                       "validation: ", check.status.message()));
    }
    check.check.result = std::move(result);
    report.tensors.push_back(std::move(check.check));
  }
  return absl::OkStatus();
}

}  // namespace

ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result) {
  ResultCheck out;
  out.status = ReducePartials(mesh, plan, position, provider, result);
  if (!out.status.ok()) return out;
  const PartialReduction source = PartialOf(mesh, plan.src);
  const absl::Status valid =
      ValidateResult(mesh, plan.tensor, plan.dst, position,
                     mesh.GroupSize(source.dims), result.data());
  out.check.validated = valid.ok();
  out.check.validation_error = std::string(valid.message());
  out.check.checksum =
      Checksum(plan.tensor.dtype(), result.data(),
               static_cast<int64_t>(result.size()) / plan.tensor.itemsize());
  return out;
}

absl::Status CheckStopped(const std::function<bool()>& stopped, int done,
                          int total) {
  if (!stopped || !stopped()) return absl::OkStatus();
  return absl::CancelledError(
      absl::StrCat("stopped after ", done, " of ", total, " executions"));
}

RankReport RunRank(const Mesh& mesh, const BatchWork& work, int64_t rank,
                   CommunicatorProvider& provider, const RankOptions& options) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<std::unique_ptr<Buffers>> buffers =
      TimedRuns(mesh, work, rank, provider, options, report);
  if (!buffers.ok()) {
    report.status = buffers.status();
    return report;
  }
  report.status = CheckTensors(mesh, work, mesh.PositionOfRank(rank), provider,
                               options.keep_result, **buffers, report);
  return report;
}

}  // namespace reshard::executor
