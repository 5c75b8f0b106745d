#include "client/job_wait.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard::client {

std::string WaitingFor(const JobInfo& job) {
  std::vector<int> state(job.world_size, 0);  // 0 never joined, 1 down, 2 up
  for (const JobAgentInfo& a : job.agents) {
    if (a.rank >= 0 && a.rank < job.world_size) {
      state[a.rank] = a.connected ? 2 : 1;
    }
  }
  std::vector<std::string> waiting;
  for (int64_t r = 0; r < job.world_size; ++r) {
    if (state[r] == 2) continue;
    waiting.push_back(absl::StrCat(
        "rank ", r, state[r] == 1 ? " (not connected)" : " (never joined)"));
  }
  if (waiting.empty()) return "";
  constexpr size_t kMostNamed = 16;
  const size_t named = std::min(waiting.size(), kMostNamed);
  std::string line = absl::StrCat(
      "job ", job.name, ": waiting for ",
      absl::StrJoin(waiting.begin(), waiting.begin() + named, ", "));
  if (waiting.size() > named) {
    absl::StrAppend(&line, " and ", waiting.size() - named, " more");
  }
  return line;
}

JobWaitReporter::JobWaitReporter(std::unique_ptr<Client> client,
                                 std::string job, std::ostream& out,
                                 absl::Duration period)
    : client_(std::move(client)),
      job_(std::move(job)),
      out_(out),
      task_(period, true, [this] { return Tick(); }) {}

bool JobWaitReporter::Tick() {
  absl::StatusOr<JobInfo> info = client_->GetJob(job_);
  const std::string line = info.ok() ? WaitingFor(*info) : "";
  if (!line.empty()) out_ << line << std::endl;
  return true;
}

}  // namespace reshard::client
