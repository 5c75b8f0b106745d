#include "executor/agent/run_work.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/agent/error_kind.h"
#include "planner/field_error.h"
#include "planner/plan_digest.h"
#include "proto/convert.h"

namespace reshard::agent {
namespace {

// A day: beyond it a per-collective timeout is a mistake.
constexpr double kMaxTimeoutSeconds = 86400;

absl::StatusOr<std::chrono::milliseconds> CollectiveTimeout(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kMaxTimeoutSeconds) {
    return InvalidField(
        "run.timeout_seconds",
        absl::StrCat(seconds, " is not in [0, ", kMaxTimeoutSeconds, "]"));
  }
  if (seconds == 0) return kDefaultCollectiveTimeout;
  // At least a millisecond: Gloo reads 0 as "no timeout".
  return std::chrono::milliseconds(
      std::max<int64_t>(1, std::llround(seconds * 1000)));
}

absl::Status CheckDigest(const Mesh& mesh, const Plan& plan,
                         uint64_t expected) {
  const uint64_t actual = PlanDigest(mesh, plan);
  if (actual == expected) return absl::OkStatus();
  return MarkDigestMismatch(absl::FailedPreconditionError(absl::StrFormat(
      "plan digest mismatch: the Coordinator sent %016x, this agent computes "
      "%016x for the mesh and plan it received (a different version on one "
      "side?); no communicator was opened",
      expected, actual)));
}

}  // namespace

absl::StatusOr<RunSetup> PrepareRun(const v1::RunWork& run,
                                    int64_t world_size) {
  if (run.run_id().empty()) return InvalidField("run.run_id", "required");
  if (run.comm_prefix().empty()) {
    return InvalidField("run.comm_prefix", "required");
  }
  if (run.iters() < 0) return InvalidField("run.iters", "must be >= 0");
  if (run.warmup() < 0) return InvalidField("run.warmup", "must be >= 0");
  absl::StatusOr<std::chrono::milliseconds> timeout =
      CollectiveTimeout(run.timeout_seconds());
  if (!timeout.ok()) return timeout.status();
  absl::StatusOr<Mesh> mesh = MeshFromProto(run.mesh());
  if (!mesh.ok()) return InvalidField("run.mesh", mesh.status().message());
  if (mesh->world_size() != world_size) {
    return absl::FailedPreconditionError(
        absl::StrCat("run.mesh: world size ", mesh->world_size(),
                     " is not the job's (", world_size, ")"));
  }
  absl::StatusOr<Plan> plan = PlanFromProto(*mesh, run.plan());
  if (!plan.ok()) return InvalidField("run.plan", plan.status().message());
  absl::Status digest = CheckDigest(*mesh, *plan, run.digest());
  if (!digest.ok()) return digest;
  executor::RankOptions options;
  options.iters = run.iters();
  options.warmup = run.warmup();
  return RunSetup{*std::move(mesh), *std::move(plan), options, *timeout};
}

}  // namespace reshard::agent
