// reshardctl: the command-line front end of Reshard.
//   plan      plans on the planner service (--server or RESHARD_SERVER,
//             default 127.0.0.1:50051) or in-process with --offline; prints
//             the trace, a step table and warnings, or with --json the plan
//             JSON of DESIGN §4 — the same output either way. With
//             --batch FILE: a batch and its buckets (batch_command.h).
//   exec      runs a plan on N local ranks (exec_command.h), validates it
//             and prints what every step cost.
//   job       list|show|run|cancel: jobs of reshard-agent processes on the
//             Coordinator; `job run` runs a plan on a job's agents and
//             prints what `exec` prints (job_command.h).
//   mesh register|get|list|delete, health: the service's registry and
//             health.
// Errors go to stderr with exit status 2.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/batch_command.h"
#include "client/cli_args.h"
#include "client/client.h"
#include "client/exec_command.h"
#include "client/job_command.h"
#include "client/plan_flags.h"
#include "planner/mesh.h"
#include "planner/plan_format.h"
#include "planner/planner.h"

namespace reshard {
namespace {

constexpr char kUsage[] =
    "usage: reshardctl [--server HOST:PORT] plan [--offline] --mesh "
    "A=2,B=2,C=2 [--flatten A,C]...\n"
    "         --shape 16,16 [--dtype f32] --from 'P(sum),R,P(sum)' --to "
    "'R,R,R'\n"
    "         [--planner optimal|torch_greedy|torch_graph] [--merge]\n"
    "         [--cost_model alpha_beta|torch] [--devices_per_host N]\n"
    "         [--flatten_policy existing|any|none] [--link DIM=GBPS:US]...\n"
    "         [--max_peak_bytes N] [--search_budget N] [--json]\n"
    "       reshardctl [--server HOST:PORT] plan [--offline] --batch FILE "
    "--mesh ... [planner flags]\n"
    "         [--bucket_bytes N] [--all_or_nothing] [--json]\n"
    "         (FILE: one {\"name\",\"shape\",\"dtype\",\"from\",\"to\"} per "
    "line)\n"
    "       reshardctl [--server HOST:PORT] mesh register --mesh A=2,B=2 "
    "[--flatten A,B]... [--link DIM=GBPS:US]...\n"
    "       reshardctl [--server HOST:PORT] mesh get|delete MESH_ID\n"
    "       reshardctl [--server HOST:PORT] mesh list\n"
    "       reshardctl [--server HOST:PORT] health\n"
    "       reshardctl [--server HOST:PORT] exec --local N ... (exec --help)\n"
    "       reshardctl [--server HOST:PORT[,...]] job list|show|run|cancel "
    "... (job --help)\n";

std::string MeshSummary(const std::string& id, const Mesh& mesh) {
  std::vector<std::string> dims;
  for (int d = 0; d < mesh.ndim(); ++d) {
    dims.push_back(absl::StrCat(mesh.dim_names()[d], "=", mesh.size(d)));
  }
  std::vector<std::string> groups;
  for (const Group& g : mesh.flattened()) groups.push_back(mesh.GroupName(g));
  return absl::StrCat(id, "  ", absl::StrJoin(dims, ","),
                      groups.empty() ? "" : "  flattened ",
                      absl::StrJoin(groups, " "));
}

absl::Status RunMesh(const std::string& server,
                     const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return absl::InvalidArgumentError(
        "mesh: expected register, get, list or delete");
  }
  const std::string verb = argv[0];
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  if (verb == "register") {
    absl::StatusOr<CliArgs> args = CliArgs::Parse(
        absl::MakeConstSpan(argv).subspan(1), {"mesh", "flatten", "link"}, {});
    if (!args.ok()) return args.status();
    absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
    if (!mesh.ok()) return mesh.status();
    absl::StatusOr<std::string> id = (*client)->RegisterMesh(*mesh);
    if (!id.ok()) return id.status();
    std::cout << *id << "\n";
    return absl::OkStatus();
  }
  if (verb == "list") {
    absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> meshes =
        (*client)->ListMeshes();
    if (!meshes.ok()) return meshes.status();
    for (const auto& [id, mesh] : *meshes)
      std::cout << MeshSummary(id, mesh) << "\n";
    return absl::OkStatus();
  }
  if ((verb == "get" || verb == "delete") && argv.size() == 2) {
    if (verb == "delete") {
      absl::Status s = (*client)->DeleteMesh(argv[1]);
      if (s.ok()) std::cout << "deleted " << argv[1] << "\n";
      return s;
    }
    absl::StatusOr<Mesh> mesh = (*client)->GetMesh(argv[1]);
    if (!mesh.ok()) return mesh.status();
    std::cout << MeshSummary(argv[1], *mesh) << "\n";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("mesh: unknown or incomplete command \"",
                   absl::StrJoin(argv, " "), "\""));
}

absl::Status RunPlan(const std::string& server,
                     const std::vector<std::string>& argv) {
  if (HasBatchFlag(argv)) return RunPlanBatch(server, argv, std::cout);
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, PlanFlags(), {"offline", "merge", "json"});
  if (!args.ok()) return args.status();
  for (const char* required : {"mesh", "shape", "from", "to"}) {
    if (!args->Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", required, " is required"));
    }
  }
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  if (!mesh.ok()) return mesh.status();

  absl::StatusOr<PlanRequest> request = RequestFromFlags(*mesh, *args);
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan;
  if (args->Has("offline")) {
    plan = MakePlan(*mesh, *request);
  } else {
    absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
    if (!client.ok()) return client.status();
    plan = (*client)->PlanInline(*mesh, *request);
  }
  if (!plan.ok()) return plan.status();
  if (args->Has("json")) {
    std::cout << PlanJson(*mesh, *plan) << "\n";
  } else {
    std::cout << PlanTable(*mesh, *plan);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* env = std::getenv("RESHARD_SERVER");
  std::string server = env != nullptr && *env != '\0' ? env : "127.0.0.1:50051";
  bool server_given = false;  // exec plans in-process unless asked not to
  // Global --server flag before the command.
  while (!args.empty() && args[0].rfind("--server", 0) == 0) {
    if (args[0].size() > 9 && args[0][8] == '=') {
      server = args[0].substr(9);
      server_given = true;
      args.erase(args.begin());
    } else if (args[0] == "--server" && args.size() >= 2) {
      server = args[1];
      server_given = true;
      args.erase(args.begin(), args.begin() + 2);
    } else {
      break;
    }
  }
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::cout << reshard::kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  absl::Status status;
  if (args[0] == "plan") {
    status = reshard::RunPlan(server, rest);
  } else if (args[0] == "exec") {
    if (!rest.empty() && (rest[0] == "--help" || rest[0] == "help")) {
      std::cout << reshard::ExecUsage();
      return 0;
    }
    status = reshard::RunExec(
        server_given ? std::optional<std::string>(server) : std::nullopt, rest,
        std::cout);
  } else if (args[0] == "job") {
    status = reshard::RunJobCommand(server, rest, std::cout);
  } else if (args[0] == "mesh") {
    status = reshard::RunMesh(server, rest);
  } else if (args[0] == "health" && rest.empty()) {
    absl::StatusOr<std::unique_ptr<reshard::Client>> client =
        reshard::ConnectClient(server);
    status = client.ok() ? (*client)->Health() : client.status();
    if (status.ok()) std::cout << "SERVING\n";
  } else {
    std::cerr << "reshardctl: unknown command \"" << args[0] << "\"\n"
              << reshard::kUsage;
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "reshardctl: " << absl::StatusCodeToString(status.code())
              << ": " << status.message() << "\n";
    return 2;
  }
  return 0;
}
