#include "executor/run/plan_runner.h"

#include <utility>

#include "executor/run/batch_runner.h"
#include "planner/batch/bucket_schedule.h"

namespace reshard::executor {

PlanRunner::PlanRunner(std::unique_ptr<BatchRunner> batch)
    : batch_(std::move(batch)), stats_(std::make_unique<BatchRunStats>()) {}

PlanRunner::~PlanRunner() = default;

absl::StatusOr<std::unique_ptr<PlanRunner>> PlanRunner::Compile(
    const Mesh& mesh, const Plan& plan, int64_t rank,
    CommunicatorProvider& provider, MemorySpace* space) {
  const Plan* plans[] = {&plan};
  absl::StatusOr<std::unique_ptr<BatchRunner>> batch = BatchRunner::Compile(
      mesh, {plan}, UnbucketedSchedule(mesh, plans, CostOptions()), rank,
      provider, space);
  if (!batch.ok()) return batch.status();
  return std::unique_ptr<PlanRunner>(new PlanRunner(*std::move(batch)));
}

absl::Status PlanRunner::Run(const void* in, void* out, RunStats* stats) {
  const void* const ins[] = {in};
  void* const outs[] = {out};
  absl::Status s = batch_->Run(ins, outs, stats_.get());
  if (!s.ok() || stats == nullptr) return s;
  stats->step_seconds = stats_->step_seconds.front();
  stats->peak_bytes = stats_->peak_bytes;
  return s;
}

int64_t PlanRunner::SourceNumel() const { return batch_->SourceNumel(0); }
int64_t PlanRunner::ResultNumel() const { return batch_->ResultNumel(0); }
int64_t PlanRunner::MemoryBoundBytes() const {
  return batch_->StepBoundBytes();
}
int64_t PlanRunner::position() const { return batch_->position(); }
const Plan& PlanRunner::plan() const { return batch_->plans().front(); }
const Mesh& PlanRunner::mesh() const { return batch_->mesh(); }

}  // namespace reshard::executor
