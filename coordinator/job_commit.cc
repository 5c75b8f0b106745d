// A run on registered tensors (docs/DESIGN.md §6.6): who may run one, and its
// commit once every rank ran and validated it, so that a failure before
// then leaves every destination as it was.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/run_failure.h"
#include "common/tensor_name.h"
#include "coordinator/active_run.h"
#include "coordinator/job.h"

namespace reshard::coordinator {

absl::Status Job::CheckCapableLocked(const RunSpec& spec) const {
  if (spec.cross.has_value()) {
    absl::Status s = CheckAdvertisedLocked(kCrossMesh, "cross");
    if (!s.ok()) return s;
  }
  if (!spec.cross_batch.empty()) {
    absl::Status s = CheckAdvertisedLocked(kCrossMeshBatches, "cross_batch");
    if (!s.ok()) return s;
  }
  if (!spec.on_tensors()) return absl::OkStatus();
  return CheckAdvertisedLocked(kRegisteredTensors, "tensors");
}

absl::Status Job::CheckAdvertisedLocked(const char* capability,
                                        const char* field) const {
  std::vector<RankFailure> ranks;
  std::vector<std::string> names;
  for (const auto& [r, slot] : slots_) {
    const std::vector<std::string>& can = slot.capabilities;
    if (std::find(can.begin(), can.end(), capability) != can.end()) {
      continue;
    }
    ranks.push_back(
        {r, slot.info.host, "incapable",
         absl::StrCat("its agent does not advertise \"", capability, "\"")});
    if (names.size() < 16) names.push_back(absl::StrCat(r));
  }
  if (ranks.empty()) return absl::OkStatus();
  return WithRankFailures(
      absl::FailedPreconditionError(absl::StrCat(
          field, ": the ",
          ranks.size() == 1 ? "agent of rank " : "agents of ranks ",
          absl::StrJoin(names, ", "),
          ranks.size() == 1 ? " does not" : " do not", " advertise \"",
          capability, "\" (",
          capability != std::string(kRegisteredTensors)
              ? "an older agent, or a device backend"
              : "start them with --tensor_socket, backend gloo",
          ")")),
      ranks);
}

bool Job::CommitDueLocked() const {
  const RunSpec& spec = *run_->spec;
  if (!spec.on_tensors() || spec.no_staging || !run_->Complete() ||
      run_->failed || run_->cancelled || run_->stopping) {
    return false;
  }
  for (const auto& report : run_->reports) {
    if (!report.has_value() || !report->status.ok() ||
        report->WhyNotValidated().has_value()) {
      return false;
    }
  }
  return true;
}

void Job::CommitLocked(absl::Time deadline) {
  run_->committing = true;
  run_->commits.assign(world_size_, std::nullopt);
  for (auto& [rank, slot] : slots_) {
    if (slot.mailbox == nullptr) {
      run_->commits[rank] = absl::UnavailableError("not connected at commit");
      continue;
    }
    slot.mailbox->Push(
        WorkItem{WorkItem::Kind::kCommit, nullptr, run_->id, ""});
  }
  auto answered = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return run_->CommitsAnswered() || shut_down_;
  };
  // A caller that goes now changes nothing: the commit is under way.
  mu_.AwaitWithDeadline(absl::Condition(&answered), deadline);
}

absl::Status Job::Committed(const AgentId& id, const std::string& run_id,
                            absl::Status result) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckAgentLocked(id);
  if (s.ok()) s = CheckRunLocked(run_id);
  if (!s.ok()) return s;
  if (!run_->committing) {
    return absl::FailedPreconditionError(
        absl::StrCat("run_id: run ", run_id, " is not committing"));
  }
  std::optional<absl::Status>& commit = run_->commits[id.rank];
  if (!commit.has_value()) commit = std::move(result);
  return absl::OkStatus();
}

}  // namespace reshard::coordinator
