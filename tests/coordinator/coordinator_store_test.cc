// The Coordinator's rendezvous store: one budget for every job's store, key
// ownership, the bounds of a run's store, and the bounds on jobs and
// concurrent runs; StoreGets that wait without a thread, and their caps.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/fair_shares.h"
#include "coordinator/coordinator.h"
#include "coordinator/rendezvous_store.h"
#include "coordinator/store_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/coordinator/stand_in_agents.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;

// The answers waiting StoreGets were given, in order, by a label.
class Answers {
 public:
  StoreAnswer For(std::string label) {
    return [this, label](absl::StatusOr<std::vector<std::string>> values) {
      absl::MutexLock lock(&mu_);
      got_.emplace_back(label, std::move(values));
    };
  }
  std::vector<std::pair<std::string, absl::StatusOr<std::vector<std::string>>>>
  Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(got_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<std::string, absl::StatusOr<std::vector<std::string>>>>
      got_ ABSL_GUARDED_BY(mu_);
};

using Values = std::vector<std::string>;

// Rank `id` reports its run of `item` validated, as a one-tensor run's.
void ReportValidated(const Coordinator& c, const AgentId& id,
                     const WorkItem& item) {
  executor::RankReport report;
  report.seconds_min = report.seconds_median = {0};
  report.tensors = {{0, true, "", {}}};
  EXPECT_TRUE(JobFor(c, id)
                  .Report(id, item.run->generation, item.run->run_id, report)
                  .ok());
}

// The stores of all jobs share one budget: past it a store refuses to
// grow (naming the flag) while what is stored stays; bytes come back when
// keys are overwritten smaller, erased, or their job's store goes.
TEST(StoreBudgetTest, StoresOfAllJobsShareOneBudget) {
  CoordinatorLimits limits;
  auto all = std::make_shared<FairShares>(20);
  auto budget = std::make_shared<StoreBudget>(all, "s", "the share of s", 40);
  RendezvousStore a(limits, budget);
  auto b = std::make_unique<RendezvousStore>(limits, budget);
  EXPECT_TRUE(a.Set("r1", "ka", std::string(8, 'x'), 0).ok());   // 10 bytes
  EXPECT_TRUE(b->Set("r2", "kb", std::string(6, 'x'), 0).ok());  // 8 bytes
  absl::Status full = a.Set("r1", "kc", "xx", 0);                // 4 more
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "value: setting \"kc\": this server already holds its maximum of "
            "20 bytes of rendezvous store values (--max_store_bytes_total); "
            "what is given back goes to the credentials below their fair "
            "share first, so try again");
  EXPECT_EQ(a.keys(), 1);
  EXPECT_EQ(all->total(), 18);
  EXPECT_TRUE(a.Set("r1", "ka", "x", 0).ok());  // 10 -> 3 bytes
  EXPECT_EQ(all->total(), 11);
  EXPECT_TRUE(a.Set("r1", "kc", "xx", 0).ok());
  EXPECT_EQ(all->total(), 15);
  b.reset();  // its job dropped
  EXPECT_EQ(all->total(), 7);
  a.EraseRun("r1");
  EXPECT_EQ(all->total(), 0);
  EXPECT_EQ(a.bytes(), 0);
}

// A share's cap and the total both bound its stores: the first met
// refuses, and nothing is taken.
TEST(StoreBudgetTest, AShareIsBoundedByItsCapAndByAllJobs) {
  CoordinatorLimits limits;
  auto all = std::make_shared<FairShares>(20);
  RendezvousStore mine(limits, std::make_shared<StoreBudget>(
                                   all, "mine", "the share of mine", 12));
  RendezvousStore other(limits, std::make_shared<StoreBudget>(
                                    all, "other", "the share of other", 20));
  EXPECT_TRUE(mine.Set("r", "k1", std::string(8, 'x'), 0).ok());  // 10
  absl::Status over_share = mine.Set("r", "k2", "xx", 0);         // 4 more
  EXPECT_EQ(over_share.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over_share.message(),
            "value: setting \"k2\": the share of mine already holds its "
            "maximum of 12 bytes of rendezvous store values "
            "(--max_store_bytes_per_credential)");
  EXPECT_TRUE(other.Set("r", "k3", std::string(6, 'x'), 0).ok());  // 8
  EXPECT_TRUE(mine.Set("r", "k4", "", 0).ok());  // 2 more: both have room
  EXPECT_EQ(all->total(), 20);
  absl::Status full = other.Set("r", "k5", "", 0);
  EXPECT_THAT(full.message(),
              HasSubstr("already holds its maximum of 20 bytes of rendezvous "
                        "store values (--max_store_bytes_total)"));
  EXPECT_EQ(mine.bytes(), 12);
  EXPECT_EQ(all->total(), 20);
}

// Store bytes are shared fairly: while one share waits for bytes, another
// at its fair share cannot grow, so the bytes it frees go to the one
// waiting.
TEST(StoreBudgetTest, BytesFreedGoToTheShareThatWaits) {
  CoordinatorLimits limits;
  absl::Time now = absl::FromUnixSeconds(1000);
  auto all = std::make_shared<FairShares>(40, [&now] { return now; });
  RendezvousStore hog(limits, std::make_shared<StoreBudget>(
                                  all, "hog", "the share of hog", 40));
  RendezvousStore honest(limits, std::make_shared<StoreBudget>(
                                     all, "honest", "the share of honest", 40));
  ASSERT_TRUE(hog.Set("r", "h1", std::string(18, 'x'), 0).ok());  // 20
  ASSERT_TRUE(hog.Set("r", "h2", std::string(18, 'x'), 0).ok());  // 40
  EXPECT_EQ(honest.Set("r", "k1", std::string(8, 'x'), 0).code(),
            absl::StatusCode::kResourceExhausted);  // honest waits
  EXPECT_EQ(hog.ErasePrefix("r", "h2", 0), 1);      // hog frees 20
  const absl::Status regrow = hog.Set("r", "h3", "", 0);
  EXPECT_EQ(regrow.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(regrow.message(),
            "value: setting \"h3\": the share of hog holds 20 of the 40 bytes "
            "of rendezvous store values this server allows, its fair share "
            "while another credential waits (--max_store_bytes_total divided "
            "among the credentials using it); try again once it holds fewer");
  EXPECT_TRUE(honest.Set("r", "k1", std::string(8, 'x'), 0).ok());
  EXPECT_EQ(hog.bytes(), 20) << "what hog held stays";
  now += FairShares::kWaitingWindow + absl::Seconds(1);
  EXPECT_TRUE(hog.Set("r", "h3", "", 0).ok()) << "honest stopped waiting";
}

// A key belongs to the rank that set it first: another rank reads it but
// can neither overwrite nor delete it; its owner can do both.
TEST(RendezvousStoreTest, AKeyBelongsToTheRankThatSetItFirst) {
  CoordinatorLimits limits;
  RendezvousStore store(limits);
  ASSERT_TRUE(store.Set("r", "p/0", "rank 0's address", 0).ok());
  const absl::Status overwrite = store.Set("r", "p/0", "elsewhere", 3);
  EXPECT_EQ(overwrite.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(overwrite.message(),
            "key: \"p/0\" was set by rank 0; a rank may write only the keys "
            "it set first");
  EXPECT_EQ(store.ErasePrefix("r", "p/", 3), 0);
  EXPECT_EQ((*store.Lookup({"p/0"}))[0], "rank 0's address");
  EXPECT_TRUE(store.Set("r", "p/0", "moved", 0).ok());
  EXPECT_EQ((*store.Lookup({"p/0"}))[0], "moved");
  EXPECT_EQ(store.ErasePrefix("r", "p/", 0), 1);
  EXPECT_EQ(store.keys(), 0);
}

TEST_F(CoordinatorTest, TheStoreRefusesWorkOutsideItsRunAndPastItsBounds) {
  limits_.max_store_keys_per_job = 2;
  limits_.max_store_bytes_per_job = 64;
  Coordinator c(limits_, SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("j", 0, 1)).ok());
  const AgentId id = Id("j", 0, 100);
  absl::Status outside = JobFor(c, id).StoreSet(id, "nope", "k", "v");
  EXPECT_EQ(outside.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(outside.message(), HasSubstr("run_id: run \"nope\" is not"));
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  std::thread agent([&] {
    std::optional<WorkItem> item = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(item.has_value());
    const std::string run = item->run->run_id;
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "a", "1").ok());
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "b", "2").ok());
    EXPECT_EQ(JobFor(c, id).StoreSet(id, run, "c", "3").code(),
              absl::StatusCode::kResourceExhausted);
    absl::Status big =
        JobFor(c, id).StoreSet(id, run, "a", std::string(100, 'x'));
    EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(big.message(), HasSubstr("maximum of 64 bytes"));
    absl::StatusOr<std::vector<std::string>> missing = JobFor(c, id).StoreGet(
        id, run, {"a", "zz"}, absl::Now() + absl::Milliseconds(100));
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_THAT(missing.status().message(),
                HasSubstr("1 of 2 rendezvous keys still missing at the "
                          "deadline: zz"));
    EXPECT_EQ(*JobFor(c, id).StoreGet(id, run, {"b", "a"}, Soon()),
              (std::vector<std::string>{"2", "1"}));
    EXPECT_EQ(c.GetJob("j")->store_keys, 2);
    // A delete by prefix frees its keys (and their bytes) for the run.
    EXPECT_EQ(*JobFor(c, id).StoreDelete(id, run, "b"), 1);
    EXPECT_EQ(c.GetJob("j")->store_keys, 1);
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "c", "3").ok());
    EXPECT_EQ(JobFor(c, id).StoreDelete(id, "nope", "").status().code(),
              absl::StatusCode::kFailedPrecondition);
    ReportValidated(c, id, *item);
  });
  absl::StatusOr<RunOutcome> out = c.RunJob("j", SpecFor(1), Soon(), {});
  agent.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(c.GetJob("j")->store_keys, 0);
  c.Shutdown("test over");
}

// Under a cap of 3 waits: answers come as their last key does, a fourth
// wait is refused, a dropped wait is answered once.
void AnswersComeAsKeysDo(Coordinator& c, const AgentId& id,
                         const std::string& run, Answers& answers) {
  Job& job = JobFor(c, id);
  ASSERT_TRUE(c.AwaitStore(id, run, {"x", "y"}, answers.For("xy")).ok());
  ASSERT_TRUE(c.AwaitStore(id, run, {"y"}, answers.For("y")).ok());
  absl::StatusOr<Coordinator::StoreWait> z =
      c.AwaitStore(id, run, {"z"}, answers.For("z"));
  ASSERT_TRUE(z.ok());
  absl::StatusOr<Coordinator::StoreWait> fourth =
      c.AwaitStore(id, run, {"x"}, answers.For("refused"));
  EXPECT_EQ(fourth.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(fourth.status().message(),
              HasSubstr("already holds its maximum of 3 waiting StoreGet "
                        "calls (--max_store_waiters_per_credential)"));
  EXPECT_TRUE(job.StoreSet(id, run, "y", "2").ok());
  EXPECT_EQ(answers.Take().size(), 1u);  // "y"; "xy" still lacks x
  z->Drop();
  z->Expire();  // already answered: nothing more
  auto dropped = answers.Take();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].second.status().code(), absl::StatusCode::kCancelled);
  // y deleted again: "xy" waits for it once x comes.
  EXPECT_EQ(*job.StoreDelete(id, run, "y"), 1);
  EXPECT_TRUE(job.StoreSet(id, run, "x", "1").ok());
  EXPECT_TRUE(answers.Take().empty());
  EXPECT_TRUE(job.StoreSet(id, run, "y", "3").ok());
  auto both = answers.Take();
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].first, "xy");
  EXPECT_EQ(*both[0].second, (Values{"1", "3"}));
}

void AnExpiredWaitNamesTheMissingKey(Coordinator& c, const AgentId& id,
                                     const std::string& run, Answers& answers) {
  // Keys already set answer at once.
  ASSERT_TRUE(c.AwaitStore(id, run, {"y", "x"}, answers.For("now")).ok());
  EXPECT_EQ(*answers.Take().at(0).second, (Values{"3", "1"}));
  absl::StatusOr<Coordinator::StoreWait> late =
      c.AwaitStore(id, run, {"never"}, answers.For("late"));
  ASSERT_TRUE(late.ok());
  late->Expire();
  auto expired = answers.Take();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].second.status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(expired[0].second.status().message(),
              HasSubstr("1 of 1 rendezvous keys still missing at the "
                        "deadline: never"));
}

// Waits are answered once each: when their last key is set (in whatever
// order the keys come, a deleted one waited for again), when dropped or
// expired, and when the run ends; past either cap one is refused at once,
// naming the flag, and a slot comes back once a wait is answered.
TEST_F(CoordinatorTest, StoreWaitsAreAnsweredOnceAndCapped) {
  limits_.max_store_waiters_per_credential = 3;
  limits_.max_store_waiters = 4;
  Coordinator c(limits_, SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("j", 0, 1)).ok());
  const AgentId id = Id("j", 0, 100);
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  Answers answers;
  std::optional<Coordinator::StoreWait> at_run_end;
  std::thread agent([&] {
    std::optional<WorkItem> item = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(item.has_value());
    const std::string run = item->run->run_id;
    AnswersComeAsKeysDo(c, id, run, answers);
    AnExpiredWaitNamesTheMissingKey(c, id, run, answers);
    at_run_end = *c.AwaitStore(id, run, {"never"}, answers.For("run end"));
    ReportValidated(c, id, *item);
  });
  absl::StatusOr<RunOutcome> out = c.RunJob("j", SpecFor(1), Soon(), {});
  agent.join();
  ASSERT_TRUE(out.ok()) << out.status();
  auto ended = answers.Take();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].first, "run end");
  EXPECT_EQ(ended[0].second.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ended[0].second.status().message(), HasSubstr("(no run is)"));
  at_run_end->Drop();  // answered: nothing more
  EXPECT_TRUE(answers.Take().empty());
  c.Shutdown("test over");
}

// Past --max_store_waiters in all, a wait of any share is refused naming
// it; a shutdown answers every wait still held.
TEST_F(CoordinatorTest, StoreWaitsAreCappedInAllAndEndAtShutdown) {
  limits_.max_store_waiters = 2;
  Coordinator c(limits_, SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("j", 0, 1)).ok());
  const AgentId id = Id("j", 0, 100);
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  Answers answers;
  std::thread agent([&] {
    std::optional<WorkItem> item = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(item.has_value());
    const std::string run = item->run->run_id;
    ASSERT_TRUE(c.AwaitStore(id, run, {"a"}, answers.For("a")).ok());
    ASSERT_TRUE(c.AwaitStore(id, run, {"b"}, answers.For("b")).ok());
    absl::Status third =
        c.AwaitStore(id, run, {"c"}, answers.For("c")).status();
    EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(third.message(),
                HasSubstr("this server already holds its maximum of 2 waiting "
                          "StoreGet calls (--max_store_waiters)"));
    c.Shutdown("test over");
    JobFor(c, id).Cancel();
  });
  absl::StatusOr<RunOutcome> out = c.RunJob("j", SpecFor(1), Soon(), {});
  agent.join();
  EXPECT_FALSE(out.ok());
  auto ended = answers.Take();
  ASSERT_EQ(ended.size(), 2u);
  for (const auto& [label, values] : ended) {
    EXPECT_EQ(values.status().code(), absl::StatusCode::kUnavailable) << label;
    EXPECT_EQ(values.status().message(), "test over") << label;
  }
}

TEST_F(CoordinatorTest, JobsAndConcurrentRunsAreBounded) {
  limits_.max_jobs = 1;
  limits_.max_concurrent_runs = 1;
  Coordinator c(limits_, SystemClock(), TestSessions());
  EXPECT_TRUE(c.Admitting());
  ASSERT_TRUE(c.Join(Joining("one", 0, 2)).ok());
  EXPECT_FALSE(c.Admitting());  // at the job cap
  absl::StatusOr<Joined> two = c.Join(Joining("two", 0, 2));
  EXPECT_EQ(two.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(two.status().message(), HasSubstr("maximum of 1 jobs"));
  std::thread waiting([&] {  // rank 1 never comes: it waits to its deadline
    EXPECT_EQ(c.RunJob("one", SpecFor(2), absl::Now() + absl::Seconds(1), {})
                  .status()
                  .code(),
              absl::StatusCode::kDeadlineExceeded);
  });
  EXPECT_TRUE(testing_wait::AwaitJob(
      c, "one", [](const JobSnapshot& info) { return info.run_calls == 1; }));
  absl::StatusOr<RunOutcome> second = c.RunJob("one", SpecFor(2), Soon(), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(second.status().message(), HasSubstr("concurrent RunJob"));
  waiting.join();
}

}  // namespace
}  // namespace reshard::coordinator
