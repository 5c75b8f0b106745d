// Attacks against a real reshard-planner on loopback, each one that would
// crash, leak or wedge something without its bound: replies that outgrow
// the message size (GetJob, ListJobs, ListMeshes page instead), names that
// forge log lines or grow logs and errors, a job's existence told to
// callers that do not hold it, rank state allocated for the declared world
// size, an admin creating a token-less job on a closed server, and one
// credential seeing another's cache entries or meshes.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/issued_job_token.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "tests/server/plan_requests.h"
#include "tests/server/server_process.h"

namespace reshard {
namespace {

using testing::ServerProcess;
using testing::SmallPlan;

constexpr int kMinMessageBytes = 65536;  // --max_message_bytes' least

struct Who {
  std::string job_token;
  std::string admin_token;
};

std::unique_ptr<grpc::ClientContext> Context(const Who& who = {}) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(20));
  if (!who.job_token.empty()) {
    context->AddMetadata(kJobTokenHeader, who.job_token);
  }
  if (!who.admin_token.empty()) {
    context->AddMetadata(kAdminTokenHeader, who.admin_token);
  }
  return context;
}

std::shared_ptr<grpc::Channel> Channel(const ServerProcess& server) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(server.address(),
                                   grpc::InsecureChannelCredentials(), args);
}

// The planner's resident set, from /proc.
int64_t ResidentBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;
    }
  }
  return -1;
}

class HardeningTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags) {
    server_ = std::make_unique<ServerProcess>(std::move(flags));
    ASSERT_GT(server_->port(), 0) << server_->log();
    channel_ = Channel(*server_);
    coordinator_ = v1::Coordinator::NewStub(channel_);
    planner_ = v1::Planner::NewStub(channel_);
  }

  grpc::Status Join(const std::string& job, int64_t rank, int64_t world,
                    const std::string& host, const Who& who = {}) {
    v1::JoinRequest request;
    request.mutable_agent()->set_job(job);
    request.mutable_agent()->set_rank(rank);
    request.mutable_agent()->set_incarnation(1000 + rank);
    request.set_world_size(world);
    request.set_version(kReshardVersion);
    request.set_protocol(kCoordinatorProtocol);
    request.set_host(host);
    v1::JoinResponse response;
    return coordinator_->Join(Context(who).get(), request, &response);
  }

  // Every page of GetJob `job` (each checked against the message size):
  // the agents' ranks in order.
  std::vector<int64_t> AgentsByPages(const std::string& job, int* pages) {
    std::vector<int64_t> ranks;
    std::string token;
    *pages = 0;
    do {
      v1::GetJobRequest request;
      request.set_job(job);
      request.set_page_token(token);
      v1::GetJobResponse response;
      grpc::Status s =
          coordinator_->GetJob(Context().get(), request, &response);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) break;
      EXPECT_LE(response.ByteSizeLong(), kMinMessageBytes);
      for (const v1::AgentInfo& agent : response.job().agents()) {
        ranks.push_back(agent.rank());
      }
      token = response.next_page_token();
      ++*pages;
    } while (!token.empty() && *pages < 100);
    return ranks;
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> coordinator_;
  std::unique_ptr<v1::Planner::Stub> planner_;
};

// A job whose GetJob reply would exceed the message size (400 agents with
// the longest host allowed, the server's least --max_message_bytes) is
// served in pages, and the planner stays up.
TEST_F(HardeningTest, AJobLargerThanAMessageIsServedInPages) {
  Start({absl::StrCat("--max_message_bytes=", kMinMessageBytes)});
  const std::string host(255, 'h');
  for (int r = 0; r < 400; ++r) {
    ASSERT_TRUE(Join("big", r, 4096, host).ok()) << r;
  }
  ASSERT_TRUE(Join("small", 0, 2, "127.0.0.1").ok());
  // The longer host the attack sent is refused naming the field.
  const grpc::Status longer = Join("big", 400, 4096, std::string(256, 'h'));
  EXPECT_EQ(longer.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(longer.error_message(), "host: 256 bytes, at most 255");

  int pages = 0;
  const std::vector<int64_t> ranks = AgentsByPages("big", &pages);
  ASSERT_EQ(ranks.size(), 400u);
  for (int r = 0; r < 400; ++r) EXPECT_EQ(ranks[r], r);
  EXPECT_GE(pages, 3);

  // ListJobs pages too; a job too large for a page lists as many agents
  // as fit, and says how many joined.
  std::set<std::string> names;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    v1::ListJobsRequest request;
    request.set_page_token(token);
    v1::ListJobsResponse response;
    grpc::Status s =
        coordinator_->ListJobs(Context().get(), request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LE(response.ByteSizeLong(), kMinMessageBytes);
    for (const v1::JobInfo& job : response.jobs()) {
      EXPECT_TRUE(names.insert(job.name()).second) << job.name();
      if (job.name() == "big") {
        EXPECT_EQ(job.agents_joined(), 400);
      }
    }
    token = response.next_page_token();
    if (token.empty()) break;
  }
  EXPECT_EQ(names, (std::set<std::string>{"big", "small"}));
  EXPECT_EQ(waitpid(server_->pid(), nullptr, WNOHANG), 0);  // alive
}

// Names are checked on every call: an injected newline never becomes a
// log line of its own, and an 8 MiB name is refused with a short error
// that does not repeat it, the log growing by a line per call.
TEST_F(HardeningTest, NamesCannotForgeLogLinesOrGrowLogsAndErrors) {
  Start({});
  const std::string forged = "victim\n2026-12-02T00:00:00.000 info FORGED";
  v1::GetJobRequest get;
  get.set_job(forged);
  v1::GetJobResponse got;
  grpc::Status s = coordinator_->GetJob(Context().get(), get, &got);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "job: holds a byte outside printable ASCII");
  v1::CancelJobRequest cancel;
  cancel.set_job("a name with spaces\r");
  v1::CancelJobResponse cancelled;
  s = coordinator_->CancelJob(Context().get(), cancel, &cancelled);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);

  const std::string huge(8 << 20, 'n');
  const size_t log_before = server_->log().size();
  for (int i = 0; i < 5; ++i) {
    v1::CancelJobRequest request;
    request.set_job(huge);
    s = coordinator_->CancelJob(Context().get(), request, &cancelled);
    EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "job: 8388608 bytes, at most 128");
    v1::RunJobRequest run;
    run.set_job(huge);
    v1::RunJobResponse ran;
    s = coordinator_->RunJob(Context().get(), run, &ran);
    EXPECT_EQ(s.error_message(), "job: 8388608 bytes, at most 128");
  }
  // A name the bounds pass but the name rule refuses is echoed escaped
  // and cut.
  get.set_job(std::string(100, 'x') + "/");
  s = coordinator_->GetJob(Context().get(), get, &got);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u) << s.error_message();
  EXPECT_NE(s.error_message().find("...(101 bytes)"), std::string::npos)
      << s.error_message();

  const std::string log = server_->log();
  EXPECT_LT(log.size() - log_before, 8192u);
  EXPECT_EQ(log.find("FORGED"), std::string::npos) << log;
}

// To a caller that does not hold it, a job that exists answers every call
// byte for byte as it did before it existed.
TEST_F(HardeningTest, MissingAndForbiddenJobsAnswerTheSameBytes) {
  Start({"--allow_open_jobs=false", "--legacy_job_tokens"});
  const Who outsider{"made-up-token", ""};
  auto answers = [&] {
    std::vector<std::string> out;
    v1::GetJobRequest get;
    get.set_job("guarded");
    v1::GetJobResponse got;
    grpc::Status s = coordinator_->GetJob(Context(outsider).get(), get, &got);
    out.push_back(absl::StrCat(s.error_code(), " ", s.error_message()));
    v1::CancelJobRequest cancel;
    cancel.set_job("guarded");
    v1::CancelJobResponse cancelled;
    s = coordinator_->CancelJob(Context(outsider).get(), cancel, &cancelled);
    out.push_back(absl::StrCat(s.error_code(), " ", s.error_message()));
    v1::StoreGetRequest store;
    store.mutable_agent()->set_job("guarded");
    store.add_keys("k");
    v1::StoreGetResponse stored;
    s = coordinator_->StoreGet(Context(outsider).get(), store, &stored);
    out.push_back(absl::StrCat(s.error_code(), " ", s.error_message()));
    v1::LeaveRequest leave;
    leave.mutable_agent()->set_job("guarded");
    v1::LeaveResponse left;
    s = coordinator_->Leave(Context(outsider).get(), leave, &left);
    out.push_back(absl::StrCat(s.error_code(), " ", s.error_message()));
    return out;
  };
  const std::vector<std::string> before = answers();
  ASSERT_TRUE(Join("guarded", 0, 2, "127.0.0.1", {"the-real-token", ""}).ok());
  const std::vector<std::string> after = answers();
  EXPECT_EQ(before, after);
  EXPECT_EQ(after[0].rfind("5 job: no job \"guarded\" for this caller", 0), 0u)
      << after[0];
}

// A one-rank job of world 4096 holds the memory of one rank, not of 4096:
// 200 of them grow the planner as 200 one-rank jobs of world 1 do.
TEST_F(HardeningTest, RankStateGrowsWithTheRanksThatJoined) {
  Start({"--max_jobs_per_credential=1024"});
  auto grow = [&](const std::string& prefix, int64_t world) {
    const int64_t before = ResidentBytes(server_->pid());
    for (int j = 0; j < 200; ++j) {
      EXPECT_TRUE(Join(absl::StrCat(prefix, j), 0, world, "h").ok());
    }
    return ResidentBytes(server_->pid()) - before;
  };
  const int64_t narrow = grow("narrow", 1);
  const int64_t wide = grow("wide", 4096);
  // Slots for the declared world took 808 KiB per job (160 MB here).
  EXPECT_LT(wide, narrow + 200 * (64 << 10))
      << "world 1: " << narrow << " bytes; world 4096: " << wide;
  RecordProperty("rss_growth_world_1", std::to_string(narrow));
  RecordProperty("rss_growth_world_4096", std::to_string(wide));
}

// --allow_open_jobs=false: nobody creates a job without a token, not even
// the admin, who still sees every job.
TEST_F(HardeningTest, AClosedServerRefusesTokenlessJobsFromTheAdminToo) {
  char dir[] = "/tmp/reshard-hardening-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string admin_file = std::string(dir) + "/admin";
  std::ofstream(admin_file) << "admin-secret-4411\n";
  Start({"--allow_open_jobs=false", "--admin_token_file=" + admin_file});
  const Who admin{"", "admin-secret-4411"};
  const grpc::Status s = Join("open", 0, 1, "h", admin);
  EXPECT_EQ(s.error_code(), grpc::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("this server serves only jobs with a job "
                                   "token (--allow_open_jobs=false)"),
            std::string::npos)
      << s.error_message();
  const std::string issued =
      JobTokenKey::FromAdminToken("admin-secret-4411").Issue("tokened");
  ASSERT_TRUE(Join("tokened", 0, 1, "h", {issued, ""}).ok());
  v1::ListJobsResponse listed;
  ASSERT_TRUE(
      coordinator_
          ->ListJobs(Context(admin).get(), v1::ListJobsRequest(), &listed)
          .ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_EQ(listed.jobs(0).name(), "tokened");
  std::remove(admin_file.c_str());
  rmdir(dir);
}

// ResolveGroups on a mesh of 2^31 - 1 ranks with a flattened group of all
// of them: refused before the ranks are listed (16 GB), the planner alive.
TEST_F(HardeningTest, ResolveGroupsOfAHugeMeshIsRefusedBeforeItsListed) {
  Start({});
  v1::ResolveGroupsRequest request;
  request.mutable_mesh()->add_shape(65536);
  request.mutable_mesh()->add_shape(32767);
  v1::FlattenedGroup* all = request.mutable_mesh()->add_flattened();
  all->add_dims("d0");
  all->add_dims("d1");
  request.set_rank(0);
  v1::ResolveGroupsResponse response;
  const grpc::Status s =
      planner_->ResolveGroups(Context().get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "the reply would list 2147516415 ranks, over this server's "
            "--max_message_bytes 16777216");
  v1::ListMeshesResponse listed;
  EXPECT_TRUE(
      planner_->ListMeshes(Context().get(), v1::ListMeshesRequest(), &listed)
          .ok());
}

// A cache hit tells a caller only about its own earlier plans, and
// ListMeshes lists the caller's meshes (an admin's, all of them).
TEST_F(HardeningTest, CacheHitsAndMeshListsAreTheCallersOwn) {
  char dir[] = "/tmp/reshard-hardening-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string admin_file = std::string(dir) + "/admin";
  std::ofstream(admin_file) << "admin-secret-4412\n";
  Start({"--admin_token_file=" + admin_file});
  const JobTokenKey key = JobTokenKey::FromAdminToken("admin-secret-4412");
  const Who a{key.Issue("a"), ""}, b{key.Issue("b"), ""};
  auto hit = [&](const Who& who) {
    v1::PlanResponse response;
    grpc::Status s = planner_->Plan(Context(who).get(), SmallPlan(), &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.plan().cache_hit();
  };
  EXPECT_FALSE(hit(a));
  EXPECT_TRUE(hit(a));
  EXPECT_FALSE(hit(b));  // planned anew: A's entry is not B's
  EXPECT_TRUE(hit(b));

  auto reg = [&](const Who& who, int64_t size) {
    v1::RegisterMeshRequest request;
    request.mutable_mesh()->add_shape(size);
    v1::RegisterMeshResponse response;
    EXPECT_TRUE(
        planner_->RegisterMesh(Context(who).get(), request, &response).ok());
    return response.mesh_id();
  };
  auto list = [&](const Who& who) {
    v1::ListMeshesResponse response;
    EXPECT_TRUE(
        planner_
            ->ListMeshes(Context(who).get(), v1::ListMeshesRequest(), &response)
            .ok());
    std::set<std::string> ids;
    for (const auto& mesh : response.meshes()) ids.insert(mesh.mesh_id());
    return ids;
  };
  const std::string mine = reg(a, 4), theirs = reg(b, 8);
  EXPECT_EQ(list(a), std::set<std::string>{mine});
  EXPECT_EQ(list(b), std::set<std::string>{theirs});
  EXPECT_EQ(list({"", "admin-secret-4412"}),
            (std::set<std::string>{mine, theirs}));
  reg(b, 4);  // B registers the same mesh: it is B's to list too
  EXPECT_EQ(list(b), (std::set<std::string>{mine, theirs}));
  std::remove(admin_file.c_str());
  rmdir(dir);
}

// Meshes count in the share of the token that registered them: tokens
// nobody issued are refused, self-chosen ones (--legacy_job_tokens) all
// share one quota, so minting them takes no mesh from an issued token or
// from callers without one.
TEST_F(HardeningTest, MintedTokensShareOneMeshQuota) {
  char dir[] = "/tmp/reshard-hardening-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string admin_file = std::string(dir) + "/admin";
  std::ofstream(admin_file) << "admin-secret-4413\n";
  auto reg = [&](const Who& who, int64_t size) {
    v1::RegisterMeshRequest request;
    request.mutable_mesh()->add_shape(size);
    v1::RegisterMeshResponse response;
    return planner_->RegisterMesh(Context(who).get(), request, &response);
  };
  Start({"--admin_token_file=" + admin_file});
  grpc::Status s = reg({"minted-0", ""}, 2);
  EXPECT_EQ(s.error_code(), grpc::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "metadata x-reshard-job-token: the job token was not issued by "
            "this planner (the admin issues job tokens with: reshardctl job "
            "token NAME --admin_token_file FILE)");

  Start({"--admin_token_file=" + admin_file, "--legacy_job_tokens",
         "--max_meshes=8", "--max_meshes_per_credential=2"});
  int refused = 0;
  for (int t = 0; t < 4; ++t) {
    s = reg({absl::StrCat("minted-", t), ""}, 2 + t);
    refused += s.error_code() == grpc::RESOURCE_EXHAUSTED &&
               s.error_message().find("(--max_meshes_per_credential)") !=
                   std::string::npos;
  }
  EXPECT_EQ(refused, 2);  // two meshes for all four tokens together
  const Who issued{
      JobTokenKey::FromAdminToken("admin-secret-4413").Issue("job"), ""};
  EXPECT_TRUE(reg(issued, 10).ok());
  EXPECT_TRUE(reg(issued, 11).ok());
  EXPECT_TRUE(reg({}, 12).ok());
  EXPECT_TRUE(reg({}, 13).ok());
  std::remove(admin_file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace reshard
