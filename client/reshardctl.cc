// reshardctl: the command-line front end of Reshard.
//   plan      plans one tensor (plan_command.h) or a batch (batch_command.h)
//             on the planner service or in-process with --offline.
//   exec      runs a plan on N local ranks (exec_command.h), validates it
//             and prints what every step cost.
//   job       list|show|run|cancel|calibrate: jobs of reshard-agent processes
//   on the
//             Coordinator (job_command.h).
//   mesh      register|list|get|delete: the service's registry
//             (mesh_command.h).
//   health    whether the service is serving.
// This file only dispatches: global flags (global_flags.h) are taken out
// first, `--help` anywhere after a command prints that command's usage, and
// a failure's exit status and report come from exit_codes.h.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/cli_args.h"
#include "client/exec_command.h"
#include "client/exit_codes.h"
#include "client/global_flags.h"
#include "client/job_command.h"
#include "client/mesh_command.h"
#include "client/plan_command.h"
#include "common/tls_hint.h"
#include "common/version.h"
#include "reshard/client.h"

namespace reshard::client {
namespace {

constexpr char kUsage[] =
    "usage: reshardctl [global flags] COMMAND [flags]\n"
    "commands (`reshardctl COMMAND --help` says more):\n"
    "  plan     plan a redistribution, or a batch, on the service or "
    "--offline\n"
    "  exec     run a plan on N local ranks, validate it, time every step\n"
    "  job      list|show|run|cancel|calibrate jobs of reshard-agent "
    "processes\n"
    "  mesh     register|list|get|delete meshes in the service's registry\n"
    "  health   whether the service is serving\n"
    "  --version  print reshardctl's version\n"
    "global flags (before or after the command):\n"
    "  --server HOST[:PORT][,HOST[:PORT]...]  the service (else "
    "$RESHARD_SERVER,\n"
    "        else 127.0.0.1:50051); a host without a port means port 50051.\n"
    "        exec alone ignores $RESHARD_SERVER: it plans in-process unless\n"
    "        --server itself asks for the service\n"
    "  --deadline_seconds D  every call's whole deadline, retries included\n"
    "        (default: 10 s per attempt; `job run` 300 s)\n"
    "  --job_token_file FILE  the token of the jobs the command names (else\n"
    "        $RESHARD_JOB_TOKEN): needed for a job its agents created with "
    "one\n"
    "  --admin_token_file FILE  the planner's admin token (else\n"
    "        $RESHARD_ADMIN_TOKEN): `mesh delete`, and `job list|show` of\n"
    "        every job\n"
    "  --tls_ca FILE  talk TLS, verifying the server against this PEM CA\n"
    "  --tls_cert FILE --tls_key FILE  a client certificate (PEM) for a\n"
    "        server that requires one (mutual TLS)\n"
    "exit status: 0 ok; 2 bad input (INVALID_ARGUMENT, OUT_OF_RANGE, usage);\n"
    "  3 NOT_FOUND; 4 UNAVAILABLE or DEADLINE_EXCEEDED; 5 "
    "FAILED_PRECONDITION;\n"
    "  6 UNAUTHENTICATED or PERMISSION_DENIED;\n"
    "  1 anything else. With --json an error is also printed on stdout as\n"
    "  {\"error\": {\"code\": ..., \"message\": ...}}.\n";

constexpr char kHealthUsage[] =
    "usage: reshardctl [global flags] health [--json]\n"
    "  Asks the service's gRPC health service; prints SERVING (--json:\n"
    "  {\"status\": \"SERVING\"}) and exits 0 when it serves.\n";

bool IsHelp(const std::string& arg) { return arg == "--help" || arg == "-h"; }

// True when `words` (a command and its arguments) ask for its usage.
bool AsksForHelp(const std::vector<std::string>& words) {
  for (size_t i = 1; i < words.size(); ++i) {
    if (IsHelp(words[i]) || (i == 1 && words[i] == "help")) return true;
  }
  return false;
}

// The usage text of the command `words` names; null for an unknown one.
const char* UsageOf(const std::vector<std::string>& words) {
  const std::string& command = words[0];
  if (command == "plan") return PlanUsage();
  if (command == "exec") return ExecUsage();
  if (command == "job") return JobUsage(words.size() > 1 ? words[1] : "");
  if (command == "mesh") return MeshUsage();
  if (command == "health") return kHealthUsage;
  return nullptr;
}

absl::Status RunHealth(const ServerFlags& server,
                       const std::vector<std::string>& argv,
                       std::ostream& out) {
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, {}, {"json"});
  if (!args.ok()) return args.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::Status status = (*client)->Health();
  if (!status.ok()) return status;
  out << (args->Has("json") ? "{\"status\": \"SERVING\"}" : "SERVING") << "\n";
  return absl::OkStatus();
}

absl::Status RunCommand(const GlobalFlags& flags, std::ostream& out) {
  const std::string& command = flags.rest[0];
  const std::vector<std::string> rest(flags.rest.begin() + 1, flags.rest.end());
  if (command == "plan") return RunPlanCommand(flags.server, rest, out);
  if (command == "exec") {
    // exec plans in-process unless --server asks for the service.
    return RunExec(
        flags.server_given ? std::optional(flags.server) : std::nullopt, rest,
        out);
  }
  if (command == "job") return RunJobCommand(flags.server, rest, out);
  if (command == "mesh") return RunMeshCommand(flags.server, rest, out);
  if (command == "health") return RunHealth(flags.server, rest, out);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown command \"", command,
                   "\"; expected plan, exec, job, mesh or health"));
}

// Runs the command line `args`; returns the exit status.
int Main(const std::vector<std::string>& args) {
  absl::StatusOr<GlobalFlags> flags =
      ParseGlobalFlags(args, std::getenv("RESHARD_SERVER"));
  if (flags.ok()) {
    if (absl::Status s = ReadCredentials(*flags); !s.ok()) flags = s;
  }
  if (!flags.ok()) {
    bool json = false;
    for (const std::string& arg : args) json = json || arg == "--json";
    return ReportFailure(flags.status(), json, std::cout, std::cerr);
  }
  const std::vector<std::string>& words = flags->rest;
  if (!words.empty() && words[0] == "--version") {
    std::cout << "reshardctl " << kReshardVersion << "\n";
    return kExitOk;
  }
  if (words.empty() || words[0] == "help" || IsHelp(words[0])) {
    (words.empty() ? std::cerr : std::cout) << kUsage;
    return words.empty() ? kExitBadInput : kExitOk;
  }
  if (const char* usage = UsageOf(words); usage && AsksForHelp(words)) {
    std::cout << usage;
    return kExitOk;
  }
  // The command's output is held until it ends, so that a command that
  // printed its own JSON (a batch with failed items, a run that did not
  // validate) is not followed by a second object.
  std::ostringstream out;
  const absl::Time start = absl::Now();
  const absl::Status status = RunCommand(*flags, out);
  std::cout << out.str();
  if (status.ok()) return kExitOk;
  if (UsageOf(words) == nullptr) std::cerr << kUsage;
  // exec without --server talks to no server: its failures are its ranks',
  // and a server's deadline or TLS settings cannot explain them.
  const bool local = words[0] == "exec" && !flags->server_given;
  return ReportFailure(
      local ? status
            : WithTlsHint(ExplainDeadline(status, flags->server.deadline,
                                          absl::Now() - start),
                          flags->server.tls),
      flags->json && out.str().empty(), std::cout, std::cerr);
}

}  // namespace
}  // namespace reshard::client

int main(int argc, char** argv) {
  return reshard::client::Main(std::vector<std::string>(argv + 1, argv + argc));
}
