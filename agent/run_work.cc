#include "agent/run_work.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/error_kind.h"
#include "planner/core/field_error.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"

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

// `what` is "plan" or "batch".
absl::Status CheckDigest(const char* what, uint64_t expected, uint64_t actual) {
  if (actual == expected) return absl::OkStatus();
  return MarkErrorKind(
      absl::FailedPreconditionError(absl::StrFormat(
          "%s digest mismatch: the Coordinator sent %016x, this agent computes "
          "%016x for the mesh and %s it received (a different version on one "
          "side?); no communicator was opened",
          what, expected, actual, what)),
      ErrorKind::kDigestMismatch);
}

// The run's planned peak on a rank (what its runner holds at most, derived
// from the plans where the work was converted, planner/cost/plan_memory.h)
// against this agent's bound; checked before any buffer is allocated, so a
// run too large is refused, never an allocation failure.
absl::Status CheckRunBytes(const executor::BatchWork& work,
                           int64_t max_run_bytes) {
  const int64_t peak = work.schedule.peak_bytes;
  if (max_run_bytes <= 0 || peak <= max_run_bytes) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("run: its peak of ", peak,
                   " bytes on a rank exceeds this agent's "
                   "--max_run_bytes ",
                   max_run_bytes, "; nothing was allocated"));
}

}  // namespace

absl::StatusOr<RunSetup> PrepareRun(const v1::RunWork& run, int64_t world_size,
                                    int64_t max_run_bytes) {
  if (run.run_id().empty()) return InvalidField("run.run_id", "required");
  if (run.comm_prefix().empty()) {
    return InvalidField("run.comm_prefix", "required");
  }
  if (run.iters() < 0) return InvalidField("run.iters", "must be >= 0");
  if (run.warmup() < 0) return InvalidField("run.warmup", "must be >= 0");
  absl::StatusOr<std::chrono::milliseconds> timeout =
      CollectiveTimeout(run.timeout_seconds());
  if (!timeout.ok()) return timeout.status();
  absl::StatusOr<Mesh> mesh = proto::MeshFromProto(run.mesh());
  if (!mesh.ok()) return InvalidField("run.mesh", mesh.status().message());
  if (mesh->world_size() != world_size) {
    return absl::FailedPreconditionError(
        absl::StrCat("run.mesh: world size ", mesh->world_size(),
                     " is not the job's (", world_size, ")"));
  }
  absl::StatusOr<executor::BatchWork> work =
      proto::RunWorkFromProto(*mesh, run);
  if (!work.ok()) return work.status();
  RunSetup setup{*std::move(mesh), *std::move(work), {}, *timeout};
  setup.options.iters = run.iters();
  setup.options.warmup = run.warmup();
  absl::Status s = CheckDigest(executor::DigestNoun(setup.work.plans.size()),
                               run.digest(), setup.work.Digest(setup.mesh));
  if (!s.ok()) return s;
  s = CheckRunBytes(setup.work, max_run_bytes);
  if (!s.ok()) return s;
  return setup;
}

}  // namespace reshard::agent
