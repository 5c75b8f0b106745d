#include "executor/judge/harness.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/judge/conservation_check.h"
#include "executor/judge/data_rule.h"
#include "executor/run/batch_runner.h"
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
    SummarizeTimings(rows, total, report);
    report.local_seconds_median = Median(local);
  }
};

// Runs `program` warmup + iters times on `buffers`, timing the rows.
absl::Status TimedRuns(const BatchWork& work, BatchRunner& program,
                       const RunBuffers& buffers, const RunOptions& run,
                       const HarnessOptions& harness, RankReport& report) {
  const std::vector<RunRow> rows = work.Rows(program.mesh());
  Samples samples;
  samples.rows.resize(rows.size());
  BatchRunStats stats;
  const int runs = TotalExecutions(harness);
  for (int i = 0; i < runs; ++i) {
    absl::Status s = Run(program, buffers, run, &stats);
    if (!s.ok()) {
      // What the executions that finished measured, for a caller that
      // shows a stopped run's partial results.
      if (!samples.total.empty()) samples.Summarize(report);
      return s;
    }
    report.executions_done = i + 1;
    report.peak_bytes = std::max(report.peak_bytes, stats.peak_bytes);
    if (i >= harness.warmup) samples.Add(rows, stats);
  }
  samples.Summarize(report);
  return absl::OkStatus();
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

// The ranks `plan`'s source Partial dims spread a value over.
int64_t SourcePartialRanks(const Mesh& mesh, const Plan& plan) {
  return mesh.GroupSize(PartialOf(mesh, plan.src).dims);
}

// The comparison with g and the checksum of a reduced result on the host.
TensorCheck JudgeResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        const std::vector<char>& result,
                        int64_t source_partial_ranks) {
  TensorCheck check;
  const absl::Status valid =
      ValidateResult(mesh, plan.tensor, plan.dst, position,
                     source_partial_ranks, result.data());
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
  TensorCheck check =
      JudgeResult(mesh, plan, position, host, SourcePartialRanks(mesh, plan));
  check.result = std::move(kept);
  return check;
}

// Generated data: sources by the data rule, results judged against g.
class GeneratedCheck : public RunCheck {
 public:
  GeneratedCheck(MemorySpace* space, bool keep) : space_(space), keep_(keep) {}

  absl::StatusOr<RunBuffers> Before(const BatchRunner& program) override {
    absl::StatusOr<std::unique_ptr<Buffers>> made =
        MakeBuffers(program.mesh(), program.plans(), program, space_);
    if (!made.ok()) return made.status();
    buffers_ = *std::move(made);
    return RunBuffers{buffers_->in_ptrs, buffers_->out_ptrs};
  }

  // Per tensor: the validation collective, the comparison with g, the
  // checksum.
  absl::Status After(BatchRunner& program, CommunicatorProvider& provider,
                     RankReport& report) override {
    const std::vector<Plan>& plans = program.plans();
    for (size_t t = 0; t < plans.size(); ++t) {
      absl::StatusOr<TensorCheck> check =
          CheckTensor(program.mesh(), plans[t], program.position(), provider,
                      space_, keep_, *buffers_, t);
      if (!check.ok()) {
        return absl::Status(
            check.status().code(),
            absl::StrCat(TensorLabel(plans.size(), t),
                         "validation: ", check.status().message()));
      }
      report.tensors.push_back(*std::move(check));
    }
    return absl::OkStatus();
  }

 private:
  MemorySpace* space_;
  bool keep_;
  std::unique_ptr<Buffers> buffers_;
};

// The caller's own buffers, judged by conservation.
class ConservedCheck : public RunCheck {
 public:
  explicit ConservedCheck(RunBuffers buffers) : buffers_(std::move(buffers)) {}

  absl::StatusOr<RunBuffers> Before(const BatchRunner& program) override {
    // Taken before the run: the sources as the caller gave them.
    shares_ = SourceShares(program.mesh(), program.plans(), program.position(),
                           buffers_.sources);
    return buffers_;
  }

  absl::Status After(BatchRunner& program, CommunicatorProvider& provider,
                     RankReport& report) override {
    return CheckConservation(program.mesh(), program.plans(),
                             program.position(), provider, shares_,
                             buffers_.results, report.tensors);
  }

 private:
  RunBuffers buffers_;
  std::vector<uint64_t> shares_;
};

}  // namespace

void SummarizeTimings(const std::vector<std::vector<double>>& rows,
                      const std::vector<double>& total, RankReport& report) {
  for (const std::vector<double>& row : rows) {
    report.seconds_min.push_back(Minimum(row));
    report.seconds_median.push_back(Median(row));
    report.seconds.emplace_back(
        row.begin(), row.begin() + static_cast<std::ptrdiff_t>(std::min(
                                       row.size(), kReportedExecutions)));
  }
  report.total_seconds_min = Minimum(total);
  report.total_seconds_median = Median(total);
}

ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result) {
  return CheckResult(mesh, plan, position, provider, result,
                     SourcePartialRanks(mesh, plan));
}

ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result,
                        int64_t source_partial_ranks) {
  ResultCheck out;
  out.status = ReducePartials(mesh, plan, position, provider, result.data(),
                              static_cast<int64_t>(result.size()));
  if (out.status.ok()) out.status = provider.Drain();
  if (out.status.ok()) {
    out.check = JudgeResult(mesh, plan, position, result, source_partial_ranks);
  }
  return out;
}

std::unique_ptr<RunCheck> GeneratedData(MemorySpace* space, bool keep_result) {
  return std::make_unique<GeneratedCheck>(space, keep_result);
}

std::unique_ptr<RunCheck> ConservedData(RunBuffers buffers) {
  return std::make_unique<ConservedCheck>(std::move(buffers));
}

RankReport RunJudged(const Mesh& mesh, const BatchWork& work, int64_t rank,
                     CommunicatorProvider& provider, RunCheck& check,
                     const RunOptions& run, const HarnessOptions& harness,
                     Preflight* preflight) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<std::unique_ptr<BatchRunner>> program =
      CompileRun(mesh, work, rank, provider, run, preflight);
  if (!program.ok()) {
    report.status = program.status();
    return report;
  }
  BatchRunner& p = **program;
  report.memory_bound_bytes =
      std::max(p.MemoryBoundBytes(), p.StepBoundBytes());
  absl::StatusOr<RunBuffers> buffers = check.Before(p);
  report.status = buffers.status();
  if (report.status.ok()) {
    report.status = TimedRuns(work, p, *buffers, run, harness, report);
  }
  if (report.status.ok()) report.status = check.After(p, provider, report);
  return report;
}

RankReport RunGenerated(const Mesh& mesh, const BatchWork& work, int64_t rank,
                        CommunicatorProvider& provider, const RunOptions& run,
                        const HarnessOptions& harness) {
  std::unique_ptr<RunCheck> check =
      GeneratedData(run.space, harness.keep_result);
  return RunJudged(mesh, work, rank, provider, *check, run, harness);
}

}  // namespace reshard::executor
