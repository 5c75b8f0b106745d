#include "executor/plan_runner.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/box_copy.h"
#include "executor/digest_exchange.h"
#include "planner/plan_digest.h"
#include "planner/plan_structure.h"

namespace reshard::executor {

namespace {

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string StepLabel(const Mesh& mesh, size_t index, const Step& step) {
  return absl::StrCat("steps[", index, "] (", StepOpName(step.op), " on ",
                      mesh.GroupName(step.group), ")");
}

}  // namespace

PlanRunner::PlanRunner(const Mesh& mesh, const Plan& plan, int64_t position)
    : mesh_(mesh), plan_(plan), position_(position) {}

PlanRunner::~PlanRunner() = default;

absl::StatusOr<std::unique_ptr<PlanRunner>> PlanRunner::Compile(
    const Mesh& mesh, const Plan& plan, int64_t rank,
    CommunicatorProvider& provider) {
  absl::Status s = CheckPlanStructure(mesh, plan);
  if (!s.ok()) return s;
  const int64_t position = mesh.PositionOfRank(rank);
  if (position < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: ", rank, " is not a rank of the mesh"));
  }
  s = ExchangeDigest(mesh, PlanDigest(mesh, plan), rank, provider, "plan");
  if (!s.ok()) return s;
  std::unique_ptr<PlanRunner> runner(new PlanRunner(mesh, plan, position));
  const std::vector<int64_t>& shape = plan.tensor.shape();
  runner->source_numel_ =
      Numel(LocalBox(mesh, plan.src, shape, position).extent);
  runner->result_numel_ = runner->source_numel_;
  int64_t tensor_cap = 0, wire_in_cap = 0, wire_out_cap = 0;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    CompiledStep c = CompileStep(mesh, plan.tensor, plan.steps[k], position);
    runner->result_numel_ = c.out_numel;
    if (!c.skip && IsCollective(c.step.op)) {
      absl::StatusOr<Communicator*> comm =
          provider.Get(mesh.GroupRanks(position, c.step.group),
                       mesh.GroupName(c.step.group));
      if (!comm.ok()) {
        return absl::Status(comm.status().code(),
                            absl::StrCat(StepLabel(mesh, k, c.step), ": ",
                                         comm.status().message()));
      }
      c.comm = *comm;
    }
    if (!c.skip) {
      const WireUse wire = WireOf(c);
      tensor_cap = std::max(tensor_cap, c.Bytes(c.out_numel));
      wire_in_cap = std::max(wire_in_cap, wire.in);
      wire_out_cap = std::max(wire_out_cap, wire.out);
      runner->memory_bound_ = std::max(runner->memory_bound_, StepBytes(c));
    }
    runner->steps_.push_back(std::move(c));
  }
  for (auto& t : runner->tensors_) t.resize(tensor_cap);
  runner->wire_in_.resize(wire_in_cap);
  runner->wire_out_.resize(wire_out_cap);
  return runner;
}

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::Status PlanRunner::Run(const void* in, void* out, RunStats* stats) {
  if (stats != nullptr) {
    stats->step_seconds.assign(steps_.size(), 0.0);
    stats->peak_bytes = 0;
  }
  int last = -1;
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (!steps_[k].skip) last = static_cast<int>(k);
  }
  const char* current = static_cast<const char*>(in);
  int next = 0;
  for (int k = 0; k <= last; ++k) {
    const CompiledStep& c = steps_[k];
    if (c.skip) continue;
    char* target = k == last ? static_cast<char*>(out) : tensors_[next].data();
    const auto start = std::chrono::steady_clock::now();
    absl::Status s =
        ExecuteStep(c, current, target, {wire_in_.data(), wire_out_.data()});
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(StepLabel(mesh_, k, c.step),
                                                 ": ", s.message()));
    }
    if (stats != nullptr) {
      stats->step_seconds[k] = SecondsSince(start);
      stats->peak_bytes = std::max(stats->peak_bytes, StepBytes(c));
    }
    current = target;
    next ^= 1;
  }
  if (last < 0) {
    CopyBytes(out, in, source_numel_ * plan_.tensor.itemsize());
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
