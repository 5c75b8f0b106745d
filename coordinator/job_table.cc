#include "coordinator/job_table.h"

#include "absl/strings/str_cat.h"

namespace reshard::coordinator {

absl::StatusOr<std::shared_ptr<Job>> InMemoryJobTable::FindOrCreate(
    const JoinInfo& info, const std::string& job_token,
    const std::string& share) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(info.agent.job);
  if (it == jobs_.end()) {
    if (static_cast<int64_t>(jobs_.size()) >= limits_.max_jobs) {
      return absl::ResourceExhaustedError(
          absl::StrCat("agent.job: this server already holds its maximum of ",
                       limits_.max_jobs, " jobs"));
    }
    if (JobsOfShareLocked(share) >= limits_.max_jobs_per_credential) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "agent.job: ", DescribeShare(share), " already holds its maximum of ",
          limits_.max_jobs_per_credential,
          " jobs (--max_jobs_per_credential)"));
    }
    auto job = std::make_shared<Job>(info.agent.job, info.world_size,
                                     info.backend, JobToken(job_token, share),
                                     limits_, clock_, ShareBudgetLocked(share));
    jobs_.emplace(info.agent.job, job);
    return job;
  }
  const Job& job = *it->second;
  absl::Status s = job.token().AdmitsJoin(info.agent.job, job_token);
  if (!s.ok()) return s;
  if (job.world_size() != info.world_size || job.backend() != info.backend) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job \"", info.agent.job, "\" has world size ", job.world_size(),
        " and backend ", BackendName(job.backend()), "; this agent says ",
        info.world_size, " and ", BackendName(info.backend)));
  }
  return it->second;
}

int64_t InMemoryJobTable::JobsOfShareLocked(const std::string& share) const {
  int64_t count = 0;
  for (const auto& [name, job] : jobs_) {
    count += job->token().share() == share ? 1 : 0;
  }
  return count;
}

std::shared_ptr<StoreBudget> InMemoryJobTable::ShareBudgetLocked(
    const std::string& share) {
  auto it = share_budgets_.find(share);
  if (it != share_budgets_.end()) {
    if (std::shared_ptr<StoreBudget> budget = it->second.lock()) return budget;
  }
  std::erase_if(share_budgets_,
                [](const auto& entry) { return entry.second.expired(); });
  auto budget = std::make_shared<StoreBudget>(
      limits_.max_store_bytes_per_credential,
      absl::StrCat("the rendezvous stores of ", DescribeShare(share)),
      "--max_store_bytes_per_credential", store_budget_);
  share_budgets_[share] = budget;
  return budget;
}

std::shared_ptr<Job> InMemoryJobTable::Find(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(name);
  return it == jobs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Job>> InMemoryJobTable::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Job>> jobs;
  for (const auto& [name, job] : jobs_) jobs.push_back(job);
  return jobs;
}

void InMemoryJobTable::ForgetIfAbandoned(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(name);
  if (it != jobs_.end() && it->second->Abandoned()) jobs_.erase(it);
}

void InMemoryJobTable::DropIdle(absl::Time before) {
  absl::MutexLock lock(&mu_);
  std::erase_if(jobs_, [before](const auto& entry) {
    const std::optional<absl::Time> idle = entry.second->IdleSince();
    return idle.has_value() && *idle <= before;
  });
}

}  // namespace reshard::coordinator
