// Job credentials end to end: a reshard-planner that
// refuses token-less jobs (--allow_open_jobs=false) and has an admin
// token, two real reshard-agent processes that created job "guarded" with
// the token issued for it (--job_token_file), and callers on the wire. An
// outsider without the token or with another one is refused on every call that
// names the job (Join, Dispatch, the store, Report, Leave, RunJob, GetJob,
// CancelJob: NOT_FOUND but for Join, as for a missing job) and does not see it
// in ListJobs; the holder runs it; an admin sees it and cannot cancel it. After
// the attacks the job's next run validates. A squatter cannot take a name,
// before the real agents start or after a planner restart, nor without a
// token on a planner that allows open jobs (its loopback default).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/issued_job_token.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

using std::chrono::seconds;
using testing::Agent;
using testing::AgentProcesses;
using testing::LongRun;

// Who calls: the metadata a call carries.
struct Credentials {
  std::string job_token;
  std::string admin_token;
};

std::unique_ptr<grpc::ClientContext> Context(const Credentials& who) {
  auto context = testing::Bounded(seconds(60));
  if (!who.job_token.empty()) {
    context->AddMetadata(kJobTokenHeader, who.job_token);
  }
  if (!who.admin_token.empty()) {
    context->AddMetadata(kAdminTokenHeader, who.admin_token);
  }
  return context;
}

class JobTokenE2eTest : public testing::FencingFixture {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/reshard-tokens-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    WriteFile(token_file_ = dir_ + "/job-token", Issued("guarded") + "\n");
    WriteFile(admin_file_ = dir_ + "/admin-token", "admin-token-91c2\n");
    StartServer(Flags());
  }
  void TearDown() override {
    std::remove(token_file_.c_str());
    std::remove(admin_file_.c_str());
    rmdir(dir_.c_str());
  }
  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::vector<std::string> Flags() const {
    return {"--allow_open_jobs=false", "--admin_token_file=" + admin_file_};
  }
  // The token the admin issues for `job` (reshardctl job token JOB).
  static std::string Issued(const std::string& job) {
    return JobTokenKey::FromAdminToken("admin-token-91c2").Issue(job);
  }
  // A Join of rank 0 of `job` (world size 2) presenting `token`.
  grpc::Status JoinAs(const std::string& job, const std::string& token) {
    v1::JoinRequest request;
    *request.mutable_agent() = Agent(job, 0, 4242);
    request.set_world_size(2);
    request.set_version(kReshardVersion);
    request.set_protocol(kCoordinatorProtocol);
    v1::JoinResponse response;
    return stub_->Join(Context({token, ""}).get(), request, &response);
  }

  grpc::Status GetJob(const Credentials& who, v1::JobInfo* info = nullptr) {
    v1::GetJobRequest request;
    request.set_job("guarded");
    v1::GetJobResponse response;
    grpc::Status s = stub_->GetJob(Context(who).get(), request, &response);
    if (info != nullptr) *info = response.job();
    return s;
  }
  std::vector<std::string> ListJobs(const Credentials& who) {
    v1::ListJobsResponse response;
    EXPECT_TRUE(
        stub_->ListJobs(Context(who).get(), v1::ListJobsRequest(), &response)
            .ok());
    std::vector<std::string> names;
    for (const v1::JobInfo& job : response.jobs()) names.push_back(job.name());
    return names;
  }
  grpc::Status RunJob(const Credentials& who, v1::RunJobResponse* response) {
    return stub_->RunJob(Context(who).get(), LongRun("guarded", 2, 2),
                         response);
  }
  // A schedule of ranks 0 to 1 (a valid request: only the job refuses).
  grpc::Status PrepareCrossMesh(const Credentials& who) {
    v1::PrepareCrossMeshRequest request;
    request.set_job("guarded");
    v1::PlanCrossMeshRequest* cross = request.mutable_cross();
    for (auto [mesh, rank] : {std::pair{cross->mutable_src_mesh(), 0},
                              std::pair{cross->mutable_dst_mesh(), 1}}) {
      mesh->add_shape(1);
      mesh->add_dim_names("a");
      mesh->add_rank_map(rank);
    }
    cross->mutable_tensor()->add_shape(4);
    cross->mutable_tensor()->set_dtype(v1::DTYPE_FLOAT32);
    cross->mutable_src()->set_text("R");
    cross->mutable_dst()->set_text("R");
    v1::PrepareCrossMeshResponse response;
    return stub_->PrepareCrossMesh(Context(who).get(), request, &response);
  }
  grpc::Status DeleteSchedule(const Credentials& who) {
    v1::DeleteScheduleRequest request;
    request.set_job("guarded");
    request.set_schedule_id("s1-1");
    v1::DeleteScheduleResponse response;
    return stub_->DeleteSchedule(Context(who).get(), request, &response);
  }
  grpc::Status CancelJob(const Credentials& who) {
    v1::CancelJobRequest request;
    request.set_job("guarded");
    v1::CancelJobResponse response;
    return stub_->CancelJob(Context(who).get(), request, &response);
  }
  // Polls GetJob of `job` with `token` every 20 ms, for up to 30 s, until
  // `ranks` are connected.
  bool AwaitConnected(const std::string& token, const std::string& job,
                      int ranks) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      v1::GetJobRequest request;
      request.set_job(job);
      v1::GetJobResponse response;
      if (stub_->GetJob(Context({token, ""}).get(), request, &response).ok() &&
          Connected(response.job()) == ranks) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // The agent-facing calls for rank 1 of the job, as a stand-in would
  // send them.
  std::vector<std::pair<const char*, std::function<grpc::Status()>>> AgentCalls(
      const Credentials& who) {
    v1::AgentId id = Agent("guarded", 1, 999);
    return {
        {"Join",
         [=, this] {
           v1::JoinRequest request;
           *request.mutable_agent() = id;
           request.set_world_size(2);
           request.set_version(kReshardVersion);
           request.set_protocol(kCoordinatorProtocol);
           v1::JoinResponse response;
           return stub_->Join(Context(who).get(), request, &response);
         }},
        {"StoreGet",
         [=, this] {
           v1::StoreGetRequest request;
           *request.mutable_agent() = id;
           request.add_keys("k");
           v1::StoreGetResponse response;
           return stub_->StoreGet(Context(who).get(), request, &response);
         }},
        {"StoreSet",
         [=, this] {
           v1::StoreSetRequest request;
           *request.mutable_agent() = id;
           request.set_key("k");
           v1::StoreSetResponse response;
           return stub_->StoreSet(Context(who).get(), request, &response);
         }},
        {"Report",
         [=, this] {
           v1::ReportRequest request;
           *request.mutable_agent() = id;
           v1::ReportResponse response;
           return stub_->Report(Context(who).get(), request, &response);
         }},
        {"Leave",
         [=, this] {
           v1::LeaveRequest request;
           *request.mutable_agent() = id;
           v1::LeaveResponse response;
           return stub_->Leave(Context(who).get(), request, &response);
         }},
        {"Dispatch",
         [=, this] {
           v1::DispatchRequest request;
           *request.mutable_agent() = id;
           auto context = Context(who);
           auto reader = stub_->Dispatch(context.get(), request);
           v1::Work work;
           while (reader->Read(&work)) {
           }
           return reader->Finish();
         }},
    };
  }
  // Every call `who` makes on the job is refused with `code`, saying
  // `says` (Join with `join_code`, saying `join_says`), and never shows a
  // token or the job's agents.
  struct Refusal {
    grpc::StatusCode code;
    std::string says;
  };
  void ExpectOutsiderRefused(const Credentials& who, const Refusal& join,
                             const Refusal& others) {
    std::vector<std::pair<const char*, std::function<grpc::Status()>>> calls =
        AgentCalls(who);
    v1::RunJobResponse run;
    calls.emplace_back("RunJob", [&] { return RunJob(who, &run); });
    calls.emplace_back("GetJob", [&] { return GetJob(who); });
    calls.emplace_back("CancelJob", [&] { return CancelJob(who); });
    calls.emplace_back("PrepareCrossMesh",
                       [&] { return PrepareCrossMesh(who); });
    calls.emplace_back("DeleteSchedule", [&] { return DeleteSchedule(who); });
    for (const auto& [rpc, call] : calls) {
      const grpc::Status s = call();
      const auto& [code, says] = std::string(rpc) == "Join" ? join : others;
      EXPECT_EQ(s.error_code(), code) << rpc << ": " << s.error_message();
      EXPECT_NE(s.error_message().find(says), std::string::npos)
          << rpc << ": " << s.error_message();
      EXPECT_EQ(s.error_message().find(Issued("guarded")), std::string::npos);
      if (!who.job_token.empty()) {
        EXPECT_EQ(s.error_message().find(who.job_token), std::string::npos);
      }
      EXPECT_EQ(s.error_message().find("127.0.0.1"), std::string::npos);
    }
    EXPECT_TRUE(ListJobs(who).empty());
  }

  std::string dir_, token_file_, admin_file_;
};

TEST_F(JobTokenE2eTest, OnlyTheTokensHoldersActOnTheJob) {
  AgentProcesses agents(server_->address(), "guarded", 2);
  agents.set_extra_flags({"--job_token_file=" + token_file_});
  agents.StartAll();
  const Credentials holder{Issued("guarded"), ""};
  const Credentials admin{"", "admin-token-91c2"};
  v1::JobInfo info;
  ASSERT_TRUE(AwaitConnected(holder.job_token, "guarded", 2)) << agents.Logs();
  ASSERT_TRUE(GetJob(holder, &info).ok());
  const int64_t generation = info.generation();

  const Refusal closed{grpc::UNAUTHENTICATED,
                       "this server serves only jobs with a job token"};
  ExpectOutsiderRefused({}, closed, closed);
  // With another token the job is not there, but for Join, which would
  // create it and is told the token is not the name's.
  ExpectOutsiderRefused(
      {"not-the-token", ""},
      {grpc::PERMISSION_DENIED,
       "agent.job: the job token was not issued by this planner"},
      {grpc::NOT_FOUND, "no job \"guarded\" for this caller"});
  ExpectOutsiderRefused(
      {Issued("other"), ""},
      {grpc::PERMISSION_DENIED,
       "agent.job: the job token was issued for job \"other\", not "
       "\"guarded\""},
      {grpc::NOT_FOUND, "no job \"guarded\" for this caller"});
  // An admin sees the job but cannot act on it.
  EXPECT_EQ(ListJobs(admin), std::vector<std::string>{"guarded"});
  EXPECT_TRUE(GetJob(admin).ok());
  EXPECT_EQ(CancelJob(admin).error_code(), grpc::PERMISSION_DENIED);

  // The attacks left the job as it was (no join, no leave), and the
  // holder runs it.
  ASSERT_TRUE(GetJob(holder, &info).ok());
  EXPECT_EQ(info.generation(), generation);
  EXPECT_EQ(Connected(info), 2);
  EXPECT_EQ(ListJobs(holder), std::vector<std::string>{"guarded"});
  v1::RunJobResponse run;
  const grpc::Status ran = RunJob(holder, &run);
  ASSERT_TRUE(ran.ok()) << ran.error_message() << agents.Logs();
  EXPECT_TRUE(run.validated()) << run.validation_error();
  EXPECT_EQ(agents.Running(), 2);
}

// A squatter who joins "victim" first, with a made-up token or one issued
// for another job, is refused, and the real agents then create the job;
// after a planner restart (every job forgotten) the same race is lost
// again by the squatter.
TEST_F(JobTokenE2eTest, ASquatterCannotTakeANameBeforeOrAfterARestart) {
  WriteFile(token_file_, Issued("victim") + "\n");
  for (int life = 0; life < 2; ++life) {
    if (life == 1) StartServer(Flags());  // the old planner is stopped
    for (const std::string& squatter :
         {std::string("victim-token"), Issued("squatter")}) {
      const grpc::Status s = JoinAs("victim", squatter);
      EXPECT_EQ(s.error_code(), grpc::PERMISSION_DENIED) << s.error_message();
    }
    AgentProcesses agents(server_->address(), "victim", 2);
    agents.set_extra_flags({"--job_token_file=" + token_file_});
    agents.StartAll();
    ASSERT_TRUE(AwaitConnected(Issued("victim"), "victim", 2))
        << "life " << life << agents.Logs() << server_->log();
    EXPECT_EQ(agents.Running(), 2);
  }
}

// A squatter rank without a token: joined to an open job, holding its
// dispatch stream and counting every run it is sent.
class SquatterRank {
 public:
  explicit SquatterRank(std::unique_ptr<testing::DispatchStream> stream)
      : stream_(std::move(stream)), reader_([this] {
          v1::Work work;
          while (stream_->reader->Read(&work)) {
            if (work.has_run()) ++runs_;
          }
        }) {}
  ~SquatterRank() {
    stream_->context->TryCancel();
    reader_.join();  // before the stream finishes
  }
  int runs() const { return runs_.load(); }

 private:
  std::unique_ptr<testing::DispatchStream> stream_;
  std::atomic<int> runs_{0};
  std::thread reader_;  // last: starts once the rest is built
};

// On a planner's loopback defaults (open jobs allowed) with an admin
// token, a squatter without a token joins "victim" first with both ranks
// and holds their dispatch streams. The name's agents, with its issued
// token, still form their job; the holder's run validates on them, and
// the squatter's ranks are never sent it; the holder's GetJob and
// CancelJob see only the job with the token. Squatters with a made-up
// token or another job's are refused there too.
TEST_F(JobTokenE2eTest, ATokenlessSquatterTakesNothingOnTheDefaults) {
  StartServer({"--admin_token_file=" + admin_file_});
  WriteFile(token_file_, Issued("guarded") + "\n");
  for (const std::string& squatter :
       {std::string("victim-token"), Issued("squatter")}) {
    const grpc::Status s = JoinAs("guarded", squatter);
    EXPECT_EQ(s.error_code(), grpc::PERMISSION_DENIED) << s.error_message();
  }
  std::vector<std::unique_ptr<SquatterRank>> squatters;
  for (int rank = 0; rank < 2; ++rank) {
    v1::AgentId id = Agent("guarded", rank, 7000 + rank);
    ASSERT_TRUE(Join(id).ok());
    squatters.push_back(std::make_unique<SquatterRank>(Dispatch(id)));
  }
  ASSERT_TRUE(AwaitConnected("", "guarded", 2));

  AgentProcesses agents(server_->address(), "guarded", 2);
  agents.set_extra_flags({"--job_token_file=" + token_file_});
  agents.StartAll();
  const Credentials holder{Issued("guarded"), ""};
  ASSERT_TRUE(AwaitConnected(holder.job_token, "guarded", 2))
      << agents.Logs() << server_->log();
  v1::JobInfo info;
  ASSERT_TRUE(GetJob(holder, &info).ok());
  EXPECT_FALSE(info.open());
  ASSERT_TRUE(GetJob({}, &info).ok());
  EXPECT_TRUE(info.open());  // the squatter's, to token-less callers only
  EXPECT_EQ(ListJobs(holder), std::vector<std::string>{"guarded"});

  v1::RunJobResponse run;
  const grpc::Status ran = RunJob(holder, &run);
  ASSERT_TRUE(ran.ok()) << ran.error_message() << agents.Logs();
  EXPECT_TRUE(run.validated()) << run.validation_error();
  EXPECT_EQ(CancelJob(holder).error_code(), grpc::OK);
  ASSERT_TRUE(GetJob(holder, &info).ok());
  EXPECT_EQ(info.runs_total(), 1);
  EXPECT_FALSE(info.open());
  EXPECT_EQ(agents.Running(), 2);
  for (const std::unique_ptr<SquatterRank>& squatter : squatters) {
    EXPECT_EQ(squatter->runs(), 0);
  }
  ASSERT_TRUE(GetJob({}, &info).ok());
  EXPECT_EQ(info.runs_total(), 0);  // the squatter's job ran nothing
}

// A real agent without a token is refused by a server that serves only
// jobs with one, and exits 1 saying why.
TEST_F(JobTokenE2eTest, ATokenlessAgentIsRefusedAndExits) {
  AgentProcesses agents(server_->address(), "open", 1);
  agents.StartAll();
  EXPECT_EQ(agents.Wait(std::chrono::seconds(20)), std::vector<int>{1});
  EXPECT_NE(agents.Log(0).find("UNAUTHENTICATED: this server serves only jobs "
                               "with a job token"),
            std::string::npos)
      << agents.Log(0);
}

}  // namespace
}  // namespace reshard
