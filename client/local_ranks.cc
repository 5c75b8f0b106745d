#include "client/local_ranks.h"

#include <signal.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "executor/launch/local_launch.h"
#include "executor/stores/file_store.h"
#include "executor/stores/memory_store.h"
#include "executor/stores/rendezvous_dir.h"

namespace reshard::client {
namespace {

using executor::RankReport;

// What a child that produced no report looked like (`lost_rank_of`: the
// rank of a child index).
RankReport LostRank(int64_t rank, const executor::ChildResult& child,
                    const std::function<int64_t(int)>& lost_rank_of) {
  RankReport lost;
  lost.rank = rank;
  lost.status = absl::UnavailableError(
      child.stopped_after >= 0
          ? absl::StrCat("rank ", rank, " was stopped: rank ",
                         lost_rank_of(child.stopped_after), " had died")
      : child.timed_out ? absl::StrCat("rank ", rank, " did not finish in time")
      : child.killed
          ? absl::StrCat("rank ", rank, " died of signal ", child.signal)
          : absl::StrCat("rank ", rank, " exited with status ", child.exit_code,
                         " without a report"));
  return lost;
}

absl::StatusOr<std::vector<RankReport>> RunProcesses(
    int n, std::chrono::milliseconds deadline,
    std::chrono::milliseconds after_loss,
    const std::function<int64_t(int)>& rank_of, const LocalRankBody& body) {
  absl::StatusOr<std::unique_ptr<executor::RendezvousDir>> rendezvous =
      executor::RendezvousDir::Create("reshardctl-exec");
  if (!rendezvous.ok()) return rendezvous.status();
  const std::string& dir = (*rendezvous)->path();
  auto child = [&](int index) {
    return executor::SerializeReport(
        body(index, std::make_shared<executor::FileStore>(dir)));
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(n, child, deadline, after_loss);
  if (!children.ok()) return children.status();
  std::vector<RankReport> reports;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<RankReport> report =
        executor::ParseReport((*children)[i].output);
    reports.push_back(report.ok()
                          ? *std::move(report)
                          : LostRank(rank_of(i), (*children)[i], rank_of));
  }
  return reports;
}

std::vector<RankReport> RunThreads(int n, const LocalRankBody& body) {
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<RankReport> reports(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] { reports[i] = body(i, store); });
  }
  for (std::thread& t : threads) t.join();
  return reports;
}

}  // namespace

absl::StatusOr<std::vector<RankReport>> RunLocalRanks(
    int n, bool threads, std::chrono::milliseconds deadline,
    std::chrono::milliseconds after_loss,
    const std::function<int64_t(int)>& rank_of, const LocalRankBody& body) {
  if (threads) return RunThreads(n, body);
  return RunProcesses(n, deadline, after_loss, rank_of, body);
}

}  // namespace reshard::client
