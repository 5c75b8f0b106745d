#include "coordinator/job_table.h"

#include "absl/strings/str_cat.h"

namespace reshard::coordinator {

absl::StatusOr<std::shared_ptr<Job>> InMemoryJobTable::FindOrCreate(
    const JoinInfo& info, const std::string& job_token,
    const std::string& share) {
  std::shared_ptr<Job> job;
  {
    absl::MutexLock lock(&mu_);
    // A token-less joiner of a name a job with a token holds is refused
    // by that job below, even where an open job of the name exists: the
    // name is its token's.
    job = FindLocked(info.agent.job, JobSpace::kTokened);
    if (job == nullptr && job_token.empty()) {
      job = FindLocked(info.agent.job, JobSpace::kOpen);
    }
    if (job == nullptr) return CreateLocked(info, job_token, share);
  }
  absl::Status s = job->token().AdmitsJoin(info.agent.job, job_token);
  if (!s.ok()) return s;
  if (job->world_size() != info.world_size || job->backend() != info.backend) {
    const std::string why = absl::StrCat(
        "job \"", info.agent.job, "\" has world size ", job->world_size(),
        " and backend ", BackendName(job->backend()), "; this agent says ",
        info.world_size, " and ", BackendName(info.backend));
    // Outside the table's lock: the job takes its own.
    job->NoteRefusedJoin(info.agent.rank, info.host, why);
    return absl::FailedPreconditionError(why);
  }
  return job;
}

absl::StatusOr<std::shared_ptr<Job>> InMemoryJobTable::CreateLocked(
    const JoinInfo& info, const std::string& job_token,
    const std::string& share) {
  FairShares::Refusal refusal;
  std::optional<FairShares::Hold> hold =
      job_shares_.TryHold(share, 1, limits_.max_jobs_per_credential, &refusal);
  if (!hold.has_value()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "agent.job: ",
        FairShareRefusalText(
            refusal, DescribeShare(share),
            {"jobs", limits_.max_jobs_per_credential,
             "--max_jobs_per_credential", limits_.max_jobs, "--max_jobs"})));
  }
  auto budget =
      std::make_shared<StoreBudget>(store_bytes_, share, DescribeShare(share),
                                    limits_.max_store_bytes_per_credential);
  auto job = std::make_shared<Job>(info.agent.job, info.world_size,
                                   info.backend, JobToken(job_token, share),
                                   limits_, clock_, std::move(budget));
  Space(SpaceOf(job_token))
      .emplace(info.agent.job, Entry{job, *std::move(hold)});
  return job;
}

std::shared_ptr<Job> InMemoryJobTable::FindLocked(const std::string& name,
                                                  JobSpace space) const {
  const std::map<std::string, Entry>& jobs = Space(space);
  auto it = jobs.find(name);
  return it == jobs.end() ? nullptr : it->second.job;
}

std::shared_ptr<Job> InMemoryJobTable::Find(const std::string& name,
                                            JobSpace space) const {
  absl::MutexLock lock(&mu_);
  return FindLocked(name, space);
}

std::vector<std::shared_ptr<Job>> InMemoryJobTable::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Job>> jobs;
  for (const auto* space : {&open_jobs_, &tokened_jobs_}) {
    for (const auto& [name, entry] : *space) jobs.push_back(entry.job);
  }
  return jobs;
}

void InMemoryJobTable::ForgetIfAbandoned(const std::string& name,
                                         JobSpace space) {
  absl::MutexLock lock(&mu_);
  std::map<std::string, Entry>& jobs = Space(space);
  auto it = jobs.find(name);
  if (it != jobs.end() && it->second.job->Abandoned()) jobs.erase(it);
}

void InMemoryJobTable::DropIdle(absl::Time before) {
  absl::MutexLock lock(&mu_);
  for (auto* space : {&open_jobs_, &tokened_jobs_}) {
    std::erase_if(*space, [before](const auto& entry) {
      const std::optional<absl::Time> idle = entry.second.job->IdleSince();
      return idle.has_value() && *idle <= before;
    });
  }
}

}  // namespace reshard::coordinator
