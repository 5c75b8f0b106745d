#include "agent/run_work.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/error_kind.h"
#include "planner/core/field_error.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "proto/cross_convert.h"

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

// `what` is "plan", "batch" or "cross-mesh plan".
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
absl::Status CheckRunBytes(int64_t peak, int64_t max_run_bytes) {
  if (max_run_bytes <= 0 || peak <= max_run_bytes) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("run: its peak of ", peak,
                   " bytes on a rank exceeds this agent's "
                   "--max_run_bytes ",
                   max_run_bytes, "; nothing was allocated"));
}

// The mesh's ranks in position order.
std::vector<int64_t> RanksOf(const Mesh& mesh) {
  std::vector<int64_t> ranks;
  for (int64_t p = 0; p < mesh.world_size(); ++p)
    ranks.push_back(mesh.RankAt(p));
  return ranks;
}

// A cross-mesh run's plans from `run.cross` (one plan) or
// `run.cross_batch` (a batch and its bound), each with its meshes and its
// transfers expanded again by the sender rule.
absl::StatusOr<executor::CrossRunWork> CrossRunWorkOf(const v1::RunWork& run) {
  if (run.has_cross()) {
    absl::StatusOr<proto::CrossPlanWithMeshes> plan =
        proto::CrossPlanFromProto(run.cross());
    if (!plan.ok()) return InvalidField("run.cross", plan.status().message());
    return executor::CrossRunWork::OfPlan({std::move(plan->src_mesh),
                                           std::move(plan->dst_mesh),
                                           std::move(plan->plan)});
  }
  if (run.exchange_bytes() < 1) {
    return InvalidField("run.exchange_bytes", "must be at least 1");
  }
  std::vector<executor::CrossWork> items;
  for (int t = 0; t < run.cross_batch_size(); ++t) {
    absl::StatusOr<proto::CrossPlanWithMeshes> plan =
        proto::CrossPlanFromProto(run.cross_batch(t));
    if (!plan.ok()) {
      return InvalidField(absl::StrCat("run.cross_batch[", t, "]"),
                          plan.status().message());
    }
    items.push_back({std::move(plan->src_mesh), std::move(plan->dst_mesh),
                     std::move(plan->plan)});
  }
  return executor::CrossRunWork::OfBatch(std::move(items),
                                         run.exchange_bytes());
}

// The checks of a cross-mesh run on `work`: one binding per tensor on
// registered tensors, the run's mesh is the union of every rank map, the
// Coordinator's digest is the work's, and the sum of the tensors' peaks on
// a rank (CrossMeshPlan::peak_bytes) fits the bound.
absl::Status CheckCross(const v1::RunWork& run, const Mesh& mesh,
                        const executor::CrossRunWork& work,
                        int64_t max_run_bytes) {
  const auto items = static_cast<int>(work.items.size());
  if (run.tensors_size() > 0 && run.tensors_size() != items) {
    return InvalidField("run.tensors",
                        work.batch
                            ? absl::StrCat(run.tensors_size(), " bindings for ",
                                           items, " tensors")
                            : "a cross-mesh run moves one tensor");
  }
  const std::string noun = work.batch ? "cross batch" : "cross plan";
  if (RanksOf(mesh) != executor::CrossBatchRanks(work.items)) {
    return InvalidField("run.mesh",
                        absl::StrCat("not the ", noun, "'s ranks, ascending"));
  }
  absl::Status s =
      CheckDigest(work.batch ? "cross-mesh batch" : "cross-mesh plan",
                  run.digest(), work.digest);
  if (!s.ok()) return s;
  return CheckRunBytes(work.PeakBytes(), max_run_bytes);
}

// A cross-mesh run: its plan or batch from the RunWork, or the schedule
// kept under `run.schedule_id` when the run carries neither (a run of a
// schedule that carries one keeps it there).
absl::StatusOr<RunSetup> PrepareCross(const v1::RunWork& run, Mesh ranks,
                                      std::chrono::milliseconds timeout,
                                      int64_t max_run_bytes,
                                      KeptSchedules* schedules) {
  RunSetup setup{std::move(ranks), {}, {}, timeout};
  setup.options.iters = run.iters();
  setup.options.warmup = run.warmup();
  const bool carried = run.has_cross() || run.cross_batch_size() > 0;
  if (carried) {
    absl::StatusOr<executor::CrossRunWork> work = CrossRunWorkOf(run);
    if (!work.ok()) return work.status();
    setup.cross =
        std::make_shared<const executor::CrossRunWork>(*std::move(work));
  } else if (const KeptSchedule* kept =
                 schedules == nullptr ? nullptr
                                      : schedules->Find(run.schedule_id())) {
    setup.cross = kept->work;
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        "run.schedule_id: this agent keeps no schedule \"", run.schedule_id(),
        "\" (it restarted or rejoined since, or the schedule was deleted): "
        "prepare again"));
  }
  absl::Status s = CheckCross(run, setup.mesh, *setup.cross, max_run_bytes);
  if (!s.ok()) return s;
  if (carried && !run.schedule_id().empty() && schedules != nullptr) {
    schedules->Keep(run.schedule_id(), run.generation(), setup.cross);
  }
  return setup;
}

}  // namespace

absl::StatusOr<RunSetup> PrepareRun(const v1::RunWork& run, int64_t world_size,
                                    int64_t max_run_bytes,
                                    KeptSchedules* schedules) {
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
  if (run.has_cross() || run.cross_batch_size() > 0 ||
      !run.schedule_id().empty()) {
    return PrepareCross(run, *std::move(mesh), *timeout, max_run_bytes,
                        schedules);
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
  s = CheckRunBytes(setup.work.schedule.peak_bytes, max_run_bytes);
  if (!s.ok()) return s;
  return setup;
}

}  // namespace reshard::agent
