// The Coordinator core's tests drive runs with in-process stand-in agents:
// threads that pop their mailbox, meet in the store and report. This is
// their behaviour, their reports and the fixture that starts them.
#ifndef RESHARD_TESTS_COORDINATOR_STAND_IN_AGENTS_H_
#define RESHARD_TESTS_COORDINATOR_STAND_IN_AGENTS_H_

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/batch/bucket_schedule.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/planner/test_util.h"

namespace reshard::coordinator {

// The job `id` names, for the calls an agent makes within its run (the
// test stops at once if there is none).
inline Job& JobFor(const Coordinator& c, const AgentId& id) {
  absl::StatusOr<std::shared_ptr<Job>> job = c.JobOf(id);
  if (!job.ok()) {
    ADD_FAILURE() << job.status();
    std::abort();
  }
  return **job;
}

namespace testing_wait {

// Waits (bounded) until `job` exists and `done` holds for it.
inline bool AwaitJob(const Coordinator& c, const std::string& job,
                     const std::function<bool(const JobSnapshot&)>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    absl::StatusOr<JobSnapshot> info = c.GetJob(job);
    if (info.ok() && done(*info)) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

}  // namespace testing_wait

// Two tensors S(0) -> R on a 1-D mesh of `world` ranks, bucketed: one
// all_gather of both.
inline std::shared_ptr<const RunSpec> BatchSpecFor(int64_t world) {
  Mesh mesh = testing::MakeMesh({world});
  executor::BatchWork work;
  for (int64_t n : {8, 5}) {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {n}, "S(0)", "R", PlanOptions());
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) work.plans.push_back(*std::move(plan));
  }
  absl::StatusOr<BucketSchedule> rows =
      ScheduleBuckets(mesh, work.PlanPointers(), BucketOptions());
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (rows.ok()) work.schedule = *std::move(rows);
  work.names = {"w", "b"};
  return std::make_shared<const RunSpec>(
      RunSpec{std::move(mesh), std::move(work), 3, 1, 5});
}

// How a stand-in agent answers a run.
struct Behaviour {
  bool rendezvous = true;    // set its key, wait for every rank's
  absl::Status fail;         // reported as the run's failure
  bool vanish = false;       // close its stream instead of reporting
  bool wrong_count = false;  // one tensor more than the run has
};

// A stand-in's report: a plan's (checksum 1000 + rank) or a batch's (tensor
// t's checksum 2000 + 10 t + rank), every row 2 ms.
inline executor::RankReport ReportOf(const RunWork& run, int64_t rank,
                                     const Behaviour& how) {
  const executor::BatchWork& work = run.spec->work;
  executor::RankReport report;
  report.status = how.fail;
  const size_t rows = work.Rows(run.spec->mesh).size();
  report.seconds_min.assign(rows, 1e-3);
  report.seconds_median.assign(rows, 2e-3);
  report.total_seconds_min = report.total_seconds_median = 3e-3;
  const size_t tensors = work.plans.size() + (how.wrong_count ? 1 : 0);
  for (size_t t = 0; t < tensors; ++t) {
    const uint64_t checksum =
        work.single_plan ? 1000 + rank : 2000 + 10 * t + rank;
    report.tensors.push_back({checksum, true, "", {}});
  }
  return report;
}

// One rank's stand-in: connects, then serves runs until its mailbox
// closes or `runs` runs were answered.
inline void ServeRank(Coordinator& c, AgentId id, int64_t world, int runs,
                      Behaviour how) {
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  ASSERT_TRUE(mailbox.ok()) << mailbox.status();
  for (int served = 0; served < runs;) {
    std::optional<WorkItem> item =
        (*mailbox)->Pop(absl::Now() + absl::Seconds(10));
    if (!item.has_value()) break;
    if (item->kind != WorkItem::Kind::kRun) continue;
    ++served;
    const RunWork& run = *item->run;
    if (how.vanish) {
      c.Disconnect(id, *mailbox);
      return;
    }
    if (how.rendezvous) {
      const std::string mine = absl::StrCat(run.comm_prefix, "/", id.rank);
      EXPECT_TRUE(JobFor(c, id).StoreSet(id, run.run_id, mine, "addr").ok());
      std::vector<std::string> keys;
      for (int64_t r = 0; r < world; ++r) {
        keys.push_back(absl::StrCat(run.comm_prefix, "/", r));
      }
      EXPECT_TRUE(
          JobFor(c, id)
              .StoreGet(id, run.run_id, keys, absl::Now() + absl::Seconds(5))
              .ok());
    }
    const absl::Status reported = JobFor(c, id).Report(
        id, run.generation, run.run_id, ReportOf(run, id.rank, how));
    if (how.wrong_count) {
      EXPECT_EQ(reported.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(reported.message(),
                  ::testing::HasSubstr("report: 3 tensors for run "));
    } else {
      EXPECT_TRUE(reported.ok()) << reported;
    }
  }
  c.Disconnect(id, *mailbox);
}

class CoordinatorTest : public ::testing::Test {
 protected:
  // Joins ranks [0, world) of `job`; their stand-ins serve `runs` runs.
  void StartJob(const std::string& job, int64_t world, int runs,
                std::function<Behaviour(int64_t)> how = nullptr) {
    for (int64_t r = 0; r < world; ++r) {
      ASSERT_TRUE(c_.Join(Joining(job, r, world)).ok());
      agents_.emplace_back(ServeRank, std::ref(c_), Id(job, r, 100 + r), world,
                           runs, how ? how(r) : Behaviour());
    }
  }
  void TearDown() override {
    c_.Shutdown("test over");
    for (std::thread& t : agents_) t.join();
  }
  bool AwaitJob(const std::string& job,
                const std::function<bool(const JobSnapshot&)>& done) {
    return testing_wait::AwaitJob(c_, job, done);
  }
  absl::Time Soon(double seconds = 10) {
    return absl::Now() + absl::Seconds(seconds);
  }

  CoordinatorLimits limits_;
  Coordinator c_{limits_, SystemClock(), TestSessions()};
  std::vector<std::thread> agents_;
};

// `world` agents of job `job` joined and connected (incarnations 100 +
// rank), as a test drives them by hand: their mailboxes, by rank.
inline std::vector<std::shared_ptr<Mailbox>> ConnectedAgents(
    Coordinator& c, const std::string& job, int64_t world) {
  std::vector<std::shared_ptr<Mailbox>> mailboxes;
  for (int64_t r = 0; r < world; ++r) {
    absl::StatusOr<std::shared_ptr<Mailbox>> m;
    if (c.Join(Joining(job, r, world)).ok()) {
      m = c.Connect(Id(job, r, 100 + r));
    }
    if (m.ok()) mailboxes.push_back(*m);
  }
  return mailboxes;
}

}  // namespace reshard::coordinator

#endif  // RESHARD_TESTS_COORDINATOR_STAND_IN_AGENTS_H_
