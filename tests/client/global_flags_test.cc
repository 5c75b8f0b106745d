// reshardctl's global flags (client/global_flags.h): --server,
// --deadline_seconds and the token files are taken from anywhere on the
// command line, a host
// without a port means port 50051, and bad values are INVALID_ARGUMENT
// naming the flag.
#include "client/global_flags.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace reshard::client {
namespace {

using Args = std::vector<std::string>;

TEST(GlobalFlagsTest, HostWithoutPortMeansPort50051) {
  for (const auto& [given, want] :
       std::vector<std::pair<std::string, std::string>>{
           {"localhost", "localhost:50051"},
           {"10.0.0.1:7000", "10.0.0.1:7000"},
           {"h1,h2:9", "h1:50051,h2:9"},
           {"h1, h2", "h1:50051,h2:50051"},
           {"::1", "[::1]:50051"},
           {"[::1]", "[::1]:50051"},
           {"[::1]:7", "[::1]:7"},
           {"dns:///planner:7", "dns:///planner:7"},
       }) {
    absl::StatusOr<std::string> target = ServerTarget(given, "--server");
    ASSERT_TRUE(target.ok()) << given << ": " << target.status();
    EXPECT_EQ(*target, want) << given;
  }
  for (const std::string bad : {"", "h1,,h2", ":7"}) {
    absl::StatusOr<std::string> target = ServerTarget(bad, "--server");
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(target.status().message(),
              "--server: \"" + bad + "\" must be HOST[:PORT][,HOST[:PORT]...]");
  }
}

TEST(GlobalFlagsTest, TakenFromBeforeAndAfterTheCommand) {
  absl::StatusOr<GlobalFlags> flags =
      ParseGlobalFlags({"plan", "--mesh", "A=2", "--server", "planner",
                        "--json", "--deadline_seconds=2.5"},
                       nullptr);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->server.target, "planner:50051");
  EXPECT_TRUE(flags->server_given);
  EXPECT_EQ(flags->server.deadline, absl::Milliseconds(2500));
  EXPECT_TRUE(flags->json);
  EXPECT_EQ(flags->rest, (Args{"plan", "--mesh", "A=2", "--json"}));

  flags = ParseGlobalFlags({"--server=h:1", "health"}, "env:2");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->server.target, "h:1");
  EXPECT_EQ(flags->rest, Args{"health"});
}

TEST(GlobalFlagsTest, EnvironmentThenDefault) {
  absl::StatusOr<GlobalFlags> flags = ParseGlobalFlags({"health"}, "envhost");
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->server.target, "envhost:50051");
  EXPECT_FALSE(flags->server_given);
  EXPECT_FALSE(flags->server.deadline.has_value());
  flags = ParseGlobalFlags({"health"}, "");
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->server.target, "127.0.0.1:50051");
}

TEST(GlobalFlagsTest, BadValuesNameTheFlag) {
  for (const auto& [args, message] : std::vector<std::pair<Args, std::string>>{
           {{"health", "--server"}, "--server needs a value"},
           {{"health", "--deadline_seconds"},
            "--deadline_seconds needs a value"},
           {{"--deadline_seconds", "0", "health"},
            "--deadline_seconds: \"0\" is not a number of seconds > 0"},
           {{"health", "--deadline_seconds=-1"},
            "--deadline_seconds: \"-1\" is not a number of seconds > 0"},
           {{"health", "--deadline_seconds", "inf"},
            "--deadline_seconds: \"inf\" is not a number of seconds > 0"},
           {{"health", "--server", ","},
            "--server: \",\" must be HOST[:PORT][,HOST[:PORT]...]"},
       }) {
    absl::StatusOr<GlobalFlags> flags = ParseGlobalFlags(args, nullptr);
    EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(flags.status().message(), message);
  }
  absl::StatusOr<GlobalFlags> env = ParseGlobalFlags({"health"}, ":1");
  EXPECT_EQ(env.status().message(),
            "RESHARD_SERVER: \":1\" must be HOST[:PORT][,HOST[:PORT]...]");
}

TEST(GlobalFlagsTest, LookalikeFlagsStayWithTheCommand) {
  absl::StatusOr<GlobalFlags> flags =
      ParseGlobalFlags({"job", "run", "--server_side", "x"}, nullptr);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->rest, (Args{"job", "run", "--server_side", "x"}));
}

// Each credential from its file when given (trailing whitespace dropped),
// else its environment variable, else none; a secret gRPC metadata cannot
// carry is refused naming where it came from, never showing it.
TEST(GlobalFlagsTest, CredentialsComeFromTheirFilesElseTheEnvironment) {
  char dir[] = "/tmp/reshard-credentials-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/job";
  std::ofstream(file) << "from-file\n";
  setenv("RESHARD_JOB_TOKEN", "from-env", 1);
  setenv("RESHARD_ADMIN_TOKEN", "admin-env", 1);
  absl::StatusOr<GlobalFlags> flags =
      ParseGlobalFlags({"job", "show", "x", "--job_token_file", file}, nullptr);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->rest, (Args{"job", "show", "x"}));
  ASSERT_TRUE(ReadCredentials(*flags).ok());
  EXPECT_EQ(flags->server.job_token, "from-file");
  EXPECT_EQ(flags->server.admin_token, "admin-env");

  flags = ParseGlobalFlags({"--admin_token_file=" + file, "job"}, nullptr);
  ASSERT_TRUE(flags.ok() && ReadCredentials(*flags).ok());
  EXPECT_EQ(flags->server.job_token, "from-env");
  EXPECT_EQ(flags->server.admin_token, "from-file");

  unsetenv("RESHARD_ADMIN_TOKEN");
  setenv("RESHARD_JOB_TOKEN", "bad\x01secret", 1);
  flags = ParseGlobalFlags({"job"}, nullptr);
  ASSERT_TRUE(flags.ok());
  const absl::Status bad = ReadCredentials(*flags);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(),
            "RESHARD_JOB_TOKEN: byte 3 of the secret is not printable ASCII "
            "(gRPC metadata carries only that)");
  unsetenv("RESHARD_JOB_TOKEN");
  ASSERT_TRUE(ReadCredentials(*flags).ok());
  EXPECT_EQ(flags->server.job_token, "");
  EXPECT_EQ(flags->server.admin_token, "");

  // A directory is refused, not thrown on.
  flags = ParseGlobalFlags({"job", "--job_token_file", dir}, nullptr);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(
      ReadCredentials(*flags).message(),
      absl::StrCat("--job_token_file=", dir, ": cannot read it (not a file)"));
  std::remove(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace reshard::client
