// reshard-planner and reshard-loadgen as a user starts them: --help and
// --version, flags refused at start (exit 2, the flag named), a port in use
// refused (exit 1, "Address already in use"), and --cache_entries=0
// really turning the cache off. Runs the real binaries.
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/version.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "reshard/client.h"
#include "tests/planner/test_util.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

struct ProgramRun {
  int exit_status = -1;
  std::string output;  // stdout and stderr
};

// Runs `args` (no shell metacharacters) with stderr joined to stdout, for
// at most 20 s: a server that should have refused to start is killed and
// reads as exit status 124.
ProgramRun RunProgram(const std::vector<std::string>& args) {
  const std::string command =
      absl::StrCat("timeout 20 ", absl::StrJoin(args, " "), " 2>&1");
  ProgramRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(ServerFlagsTest, HelpListsTheProgramsFlagsWithDefaults) {
  ProgramRun planner = RunProgram({RESHARD_PLANNER_BIN, "--help"});
  EXPECT_EQ(planner.output.find("No flags matched"), std::string::npos)
      << planner.output;
  // The source's path in the tree, not where the tree was built.
  EXPECT_NE(planner.output.find("\n  Flags from server/main.cc:\n"),
            std::string::npos)
      << planner.output;
  for (const char* line :
       {"--listen (address to serve on; port 0 picks a free port);\n"
        "      default: \"127.0.0.1:50051\";",
        "--cache_entries (plan cache capacity (LRU); 0: off); default: 10000;",
        "--max_meshes (mesh registry capacity); default: 1000;"}) {
    EXPECT_NE(planner.output.find(line), std::string::npos) << line << "\n"
                                                            << planner.output;
  }
  ProgramRun loadgen = RunProgram({RESHARD_LOADGEN_BIN, "--help"});
  EXPECT_EQ(loadgen.output.find("No flags matched"), std::string::npos);
  EXPECT_NE(
      loadgen.output.find("--concurrency (outstanding calls); default: 8;"),
      std::string::npos)
      << loadgen.output;
}

// The agent's one-line usage names every flag its --help lists, so that
// none is found only by reading the list (its TLS and token flags were
// missing).
TEST(ServerFlagsTest, AgentUsageNamesEveryFlag) {
  ProgramRun agent = RunProgram({RESHARD_AGENT_BIN, "--help"});
  const std::string& help = agent.output;
  const size_t usage_end = help.find('\n');
  ASSERT_NE(usage_end, std::string::npos) << help;
  const std::string usage = help.substr(0, usage_end);
  const size_t list = help.find("Flags from agent/main.cc:");
  ASSERT_NE(list, std::string::npos) << help;
  int flags = 0;
  for (size_t at = help.find("\n    --", list); at != std::string::npos;
       at = help.find("\n    --", at + 1)) {
    const size_t name_end = help.find_first_of(" (", at + 5);
    const std::string name = help.substr(at + 5, name_end - at - 5);
    EXPECT_NE(usage.find(absl::StrCat(name, " ")), std::string::npos)
        << name << " is not in the usage: " << usage;
    ++flags;
  }
  EXPECT_GE(flags, 15) << help;
}

TEST(ServerFlagsTest, VersionPrintsTheProjectVersion) {
  for (auto [bin, name] : {std::pair{RESHARD_PLANNER_BIN, "reshard-planner"},
                           std::pair{RESHARD_LOADGEN_BIN, "reshard-loadgen"}}) {
    ProgramRun run = RunProgram({bin, "--version"});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_EQ(run.output, absl::StrCat(name, " ", kReshardVersion, "\n"));
  }
}

// Each refused with exit status 2 and a message naming the flag, before
// the server listens (an unwritable port file, accepted, would leave a
// scheduler waiting for it forever).
TEST(ServerFlagsTest, RefusesBadStartupFlags) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--max_meshes=0", "--max_meshes=0: must be in [1, 2147483647]"},
      {"--max_meshes_per_credential=0",
       "--max_meshes_per_credential=0: must be in [1, 2147483647]"},
      {"--max_jobs_per_credential=0",
       "--max_jobs_per_credential=0 must be at least 1"},
      {"--max_runs_per_credential=-1",
       "--max_runs_per_credential=-1 must be at least 1"},
      {"--cache_entries=-5",
       "--cache_entries=-5: must be in [0, 2147483647] (plans kept in the "
       "cache; 0 turns the cache off)"},
      {"--drain_seconds=-3", "--drain_seconds=-3: must be in [0, 86400]"},
      {"--max_connection_idle_seconds=0",
       "--max_connection_idle_seconds=0: must be in [1, 86400]"},
      {"--max_batch_items=0", "--max_batch_items=0: must be in [1, "},
      {"--max_message_bytes=-1",
       "--max_message_bytes=-1: \"-1\" is not a byte count >= 0"},
      {"--max_message_bytes=1KiB",
       "--max_message_bytes=1024: must be in [65536, "},
      {"--max_store_bytes_total=1MB",
       "--max_store_bytes_total=1MB: \"1MB\" is not a byte count >= 0 (with "
       "an optional KiB, MiB, GiB or TiB)"},
      {"--port_file=/nonexistent-dir/port",
       "--port_file=/nonexistent-dir/port: cannot write "
       "/nonexistent-dir/port.tmp: No such file or directory"},
      {"--metrics_port_file=/nonexistent-dir/metrics",
       "--metrics_port_file=/nonexistent-dir/metrics: cannot write"},
      {"--admin_token_file=/nonexistent-dir/token",
       "--admin_token_file=/nonexistent-dir/token: cannot read it (No such "
       "file or directory)"},
      {"--admin_token_file=/dev/null",
       "--admin_token_file=/dev/null: the file holds no secret"},
  };
  for (const auto& [flag, message] : cases) {
    SCOPED_TRACE(flag);
    ProgramRun run =
        RunProgram({RESHARD_PLANNER_BIN, "--listen=127.0.0.1:0", flag});
    EXPECT_EQ(run.exit_status, 2) << run.output;
    EXPECT_NE(run.output.find(message), std::string::npos) << run.output;
  }
}

// A second server on a port in use refuses to start (with gRPC's
// SO_REUSEPORT it would share the port, clients seeing two registries).
TEST(ServerFlagsTest, RefusesAPortInUse) {
  testing::ServerProcess first;
  ASSERT_NE(first.port(), 0) << first.log();
  ProgramRun second =
      RunProgram({RESHARD_PLANNER_BIN, "--listen=" + first.address()});
  EXPECT_EQ(second.exit_status, 1) << second.output;
  EXPECT_NE(second.output.find(
                absl::StrCat("--listen=", first.address(),
                             ": cannot listen: Address already in use")),
            std::string::npos)
      << second.output;
  // That line is the only error: no gRPC message ahead of it.
  int errors = 0;
  for (absl::string_view line : absl::StrSplit(second.output, '\n')) {
    errors += absl::StrContains(line, "error") ? 1 : 0;
  }
  EXPECT_EQ(errors, 1) << second.output;
  ClientOptions options;
  options.target = first.address();
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Health().ok());
  EXPECT_EQ(first.Stop(), 0);
}

// A connection with no call in flight is closed after
// --max_connection_idle_seconds (the client's channel goes back to IDLE),
// and a client simply reconnects for its next call.
TEST(ServerFlagsTest, IdleConnectionsAreClosed) {
  testing::ServerProcess server({"--max_connection_idle_seconds=1"});
  ASSERT_NE(server.port(), 0) << server.log();
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  const auto deadline = [](int seconds) {
    return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
  };
  ASSERT_TRUE(channel->WaitForConnected(deadline(10)));
  grpc_connectivity_state state = channel->GetState(false);
  const auto until = deadline(10);
  while (state == GRPC_CHANNEL_READY &&
         channel->WaitForStateChange(state, until)) {
    state = channel->GetState(false);
  }
  EXPECT_NE(state, GRPC_CHANNEL_READY) << "still connected after 10 s";
  ClientOptions options;
  options.target = server.address();
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Health().ok());
  EXPECT_EQ(server.Stop(), 0);
}

// 0 is documented as "off", and is: no plan is kept.
TEST(ServerFlagsTest, CacheEntriesZeroTurnsTheCacheOff) {
  testing::ServerProcess server({"--cache_entries=0"});
  ASSERT_NE(server.port(), 0) << server.log();
  ClientOptions options;
  options.target = server.address();
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  const Mesh mesh = testing::MakeMesh({2, 2});
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, {8, 8}, "f32", "S(0),R", "R,R", {});
  ASSERT_TRUE(request.ok()) << request.status();
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Plan> plan = (*client)->PlanInline(mesh, *request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_FALSE(plan->cache_hit) << "call " << i;
  }
  EXPECT_EQ(server.Stop(), 0);
}

// With --admin_token_file, DeleteMesh needs that token: none is
// UNAUTHENTICATED, another PERMISSION_DENIED (the mesh stays), the token
// itself deletes. Other calls need none.
TEST(ServerFlagsTest, AnAdminTokenGuardsDeleteMesh) {
  char dir_template[] = "/tmp/reshard-admin-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string file = dir + "/token";
  std::FILE* out = std::fopen(file.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("s3cret-token\n", out);  // the newline is not part of it
  std::fclose(out);
  testing::ServerProcess server({"--admin_token_file=" + file});
  std::remove(file.c_str());
  std::remove(dir.c_str());
  ASSERT_NE(server.port(), 0) << server.log();
  auto connect = [&](const std::string& token) {
    ClientOptions options;
    options.target = server.address();
    options.admin_token = token;
    return *Client::Create(options);
  };
  std::unique_ptr<Client> anyone = connect("");
  const absl::StatusOr<std::string> id =
      anyone->RegisterMesh(testing::MakeMesh({2, 2}));
  ASSERT_TRUE(id.ok()) << id.status();
  const absl::Status none = anyone->DeleteMesh(*id);
  EXPECT_EQ(none.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(none.message(),
            "DeleteMesh needs the planner's admin token (metadata "
            "x-reshard-admin-token; reshardctl mesh delete --admin_token_file "
            "FILE)");
  const absl::Status wrong = connect("s3cret-tokeN")->DeleteMesh(*id);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(wrong.message(),
            "DeleteMesh: metadata x-reshard-admin-token: the admin token does "
            "not match the planner's");
  EXPECT_TRUE(anyone->GetMesh(*id).ok());  // still there
  EXPECT_TRUE(connect("s3cret-token")->DeleteMesh(*id).ok());
  EXPECT_EQ(anyone->GetMesh(*id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace reshard::server
