#include "executor/runtime/rank_run.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "executor/runtime/batch_runner.h"
#include "executor/runtime/conservation_check.h"
#include "executor/runtime/data_rule.h"
#include "planner/core/local_layout.h"
#include "run_values/report_codec.h"
#include "run_values/sample_stats.h"

namespace reshard::executor {
namespace {

// Every tensor's source (filled by the data rule) and result buffers on
// the host, and where the run reads and writes them: the same buffers, or
// the space's copies.
struct Buffers {
  std::vector<std::vector<char>> in, out;
  std::vector<SpaceBuffer> space_in, space_out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;

  // Where tensor t's result is, in the run's memory.
  char* Result(size_t t) const { return static_cast<char*>(out_ptrs[t]); }
};

// The caller's tensors, where the run reads and writes.
std::unique_ptr<Buffers> CallerBuffers(const CallerTensors& tensors) {
  auto b = std::make_unique<Buffers>();
  b->in_ptrs = tensors.sources;
  b->out_ptrs = tensors.results;
  return b;
}

absl::StatusOr<std::unique_ptr<Buffers>> MakeBuffers(
    const Mesh& mesh, const std::vector<Plan>& plans, const BatchRunner& runner,
    MemorySpace* space) {
  auto b = std::make_unique<Buffers>();
  for (size_t t = 0; t < plans.size(); ++t) {
    const int64_t itemsize = plans[t].tensor.itemsize();
    const int64_t in_bytes = runner.SourceNumel(t) * itemsize;
    const int64_t out_bytes = runner.ResultNumel(t) * itemsize;
    b->in.emplace_back(in_bytes);
    b->out.emplace_back(out_bytes);
    FillSource(mesh, plans[t].tensor, plans[t].src, runner.position(),
               b->in.back().data());
    if (space == nullptr) continue;
    for (auto [list, bytes] : {std::pair{&b->space_in, in_bytes},
                               std::pair{&b->space_out, out_bytes}}) {
      absl::StatusOr<SpaceBuffer> buffer = AllocateIn(*space, bytes);
      if (!buffer.ok()) return buffer.status();
      list->push_back(*std::move(buffer));
    }
    absl::Status s =
        space->Upload(b->space_in.back().get(), b->in.back().data(), in_bytes);
    if (!s.ok()) return s;
  }
  for (size_t t = 0; t < plans.size(); ++t) {
    b->in_ptrs.push_back(space ? b->space_in[t].get() : b->in[t].data());
    b->out_ptrs.push_back(space ? b->space_out[t].get() : b->out[t].data());
  }
  return b;
}

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
      report.seconds.emplace_back(
          row.begin(), row.begin() + static_cast<std::ptrdiff_t>(std::min(
                                         row.size(), kReportedExecutions)));
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
  absl::StatusOr<std::unique_ptr<BatchRunner>> runner = BatchRunner::Compile(
      mesh, work.plans, work.schedule, rank, provider, options.space);
  if (!runner.ok()) return runner.status();
  BatchRunner& r = **runner;
  report.memory_bound_bytes =
      std::max(r.MemoryBoundBytes(), r.StepBoundBytes());
  absl::StatusOr<std::unique_ptr<Buffers>> made =
      options.tensors != nullptr
          ? CallerBuffers(*options.tensors)
          : MakeBuffers(mesh, work.plans, r, options.space);
  if (!made.ok()) return made.status();
  std::unique_ptr<Buffers> buffers = *std::move(made);
  const std::vector<RunRow> rows = work.Rows(mesh);
  Samples samples;
  samples.rows.resize(rows.size());
  BatchRunStats stats;
  const int runs = TotalExecutions(options);
  for (int i = 0; i < runs; ++i) {
    absl::Status s = CheckStopped(options.stopped, i, runs);
    if (s.ok()) s = r.Run(buffers->in_ptrs, buffers->out_ptrs, &stats);
    if (!s.ok()) {
      // What the executions that finished measured, for a caller that
      // shows a stopped run's partial results.
      if (!samples.total.empty()) samples.Summarize(report);
      return s;
    }
    report.executions_done = i + 1;
    if (options.progress) options.progress(i + 1);
    report.peak_bytes = std::max(report.peak_bytes, stats.peak_bytes);
    if (i >= options.warmup) samples.Add(rows, stats);
  }
  samples.Summarize(report);
  return buffers;
}

// The validation collective: `dst`'s Partial dims reduced, in place, on
// `data` (`bytes`, in the run's memory).
absl::Status ReducePartials(const Mesh& mesh, const Plan& plan,
                            int64_t position, CommunicatorProvider& provider,
                            char* data, int64_t bytes) {
  const PartialReduction partial = PartialOf(mesh, plan.dst);
  if (mesh.GroupSize(partial.dims) == 1) return absl::OkStatus();
  absl::StatusOr<Communicator*> comm = provider.Get(
      mesh.GroupRanks(position, partial.dims), mesh.GroupName(partial.dims));
  if (!comm.ok()) return comm.status();
  return (*comm)->AllReduce(data, bytes / plan.tensor.itemsize(),
                            plan.tensor.dtype(),
                            {partial.op, partial.avg_divisor});
}

// The comparison with g and the checksum of a reduced result on the host.
TensorCheck JudgeResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        const std::vector<char>& result) {
  TensorCheck check;
  const PartialReduction source = PartialOf(mesh, plan.src);
  const absl::Status valid =
      ValidateResult(mesh, plan.tensor, plan.dst, position,
                     mesh.GroupSize(source.dims), result.data());
  check.validated = valid.ok();
  check.validation_error = std::string(valid.message());
  check.checksum =
      Checksum(plan.tensor.dtype(), result.data(),
               static_cast<int64_t>(result.size()) / plan.tensor.itemsize());
  return check;
}

// Tensor t's result reduced where the run left it, then brought to the
// host (a space's result is downloaded) and judged.
// With `keep`, the result as the run left it (before the reduction) is
// returned in the check.
absl::StatusOr<TensorCheck> CheckTensor(const Mesh& mesh, const Plan& plan,
                                        int64_t position,
                                        CommunicatorProvider& provider,
                                        MemorySpace* space, bool keep,
                                        Buffers& buffers, size_t t) {
  std::vector<char>& host = buffers.out[t];
  const int64_t bytes = static_cast<int64_t>(host.size());
  absl::Status s;
  std::vector<char> kept;
  if (keep) {
    if (space != nullptr)
      s = space->Download(host.data(), buffers.Result(t), bytes);
    kept = host;
  }
  if (s.ok()) {
    s = ReducePartials(mesh, plan, position, provider, buffers.Result(t),
                       bytes);
  }
  if (s.ok()) s = provider.Drain();
  if (s.ok() && space != nullptr) {
    s = space->Download(host.data(), buffers.Result(t), bytes);
  }
  if (!s.ok()) return s;
  TensorCheck check = JudgeResult(mesh, plan, position, host);
  check.result = std::move(kept);
  return check;
}

// Per tensor: the validation collective, the comparison with g, the
// checksum.
absl::Status CheckTensors(const Mesh& mesh, const BatchWork& work,
                          int64_t position, CommunicatorProvider& provider,
                          const RankOptions& options, Buffers& buffers,
                          RankReport& report) {
  for (size_t t = 0; t < work.plans.size(); ++t) {
    absl::StatusOr<TensorCheck> check =
        CheckTensor(mesh, work.plans[t], position, provider, options.space,
                    options.keep_result, buffers, t);
    if (!check.ok()) {
      return absl::Status(
          check.status().code(),
          absl::StrCat(TensorLabel(work.plans.size(), t),
                       "validation: ", check.status().message()));
    }
    report.tensors.push_back(*std::move(check));
  }
  return absl::OkStatus();
}

}  // namespace

ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result) {
  ResultCheck out;
  out.status = ReducePartials(mesh, plan, position, provider, result.data(),
                              static_cast<int64_t>(result.size()));
  if (out.status.ok()) out.status = provider.Drain();
  if (out.status.ok()) out.check = JudgeResult(mesh, plan, position, result);
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
  const int64_t position = mesh.PositionOfRank(rank);
  if (options.tensors != nullptr && options.space != nullptr) {
    report.status = absl::FailedPreconditionError(
        "registered tensors are host memory: this backend runs on a device");
    return report;
  }
  // Taken before the run: the source as the caller gave it.
  const std::vector<uint64_t> source_shares =
      options.tensors != nullptr
          ? SourceShares(mesh, work.plans, position, options.tensors->sources)
          : std::vector<uint64_t>();
  absl::StatusOr<std::unique_ptr<Buffers>> buffers =
      TimedRuns(mesh, work, rank, provider, options, report);
  if (!buffers.ok()) {
    report.status = buffers.status();
    return report;
  }
  report.status = options.tensors != nullptr
                      ? CheckConservation(
                            mesh, work.plans, position, provider, source_shares,
                            options.tensors->results, report.tensors)
                      : CheckTensors(mesh, work, position, provider, options,
                                     **buffers, report);
  return report;
}

}  // namespace reshard::executor
