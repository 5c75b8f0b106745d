// reshardctl: the command-line front end of Reshard.
//   plan      plans on the planner service (--server or RESHARD_SERVER,
//             default 127.0.0.1:50051) or in-process with --offline; prints
//             the trace, a step table and warnings, or with --json the plan
//             JSON of DESIGN §4 — the same output either way.
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
#include "client/cli_args.h"
#include "client/client.h"
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
    "       reshardctl [--server HOST:PORT] mesh register --mesh A=2,B=2 "
    "[--flatten A,B]... [--link DIM=GBPS:US]...\n"
    "       reshardctl [--server HOST:PORT] mesh get|delete MESH_ID\n"
    "       reshardctl [--server HOST:PORT] mesh list\n"
    "       reshardctl [--server HOST:PORT] health\n";

// "A=2,B=2,C=2" -> names and sizes.
absl::Status ParseMeshFlag(const std::string& text, MeshSpec& spec) {
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<std::string> kv = absl::StrSplit(part, '=');
    int64_t size = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mesh: \"", part, "\" must be NAME=SIZE (in \"", text, "\")"));
    }
    spec.dim_names.push_back(kv[0]);
    spec.shape.push_back(size);
  }
  return absl::OkStatus();
}

// "A=100:1.5" -> link override of dim A (GB/s, µs per hop).
absl::Status ParseLinkFlag(const std::string& text, MeshSpec& spec) {
  std::vector<std::string> kv = absl::StrSplit(text, '=');
  std::vector<std::string> values =
      kv.size() == 2 ? absl::StrSplit(kv[1], ':') : std::vector<std::string>{};
  double bw = 0;
  double lat = 0;
  if (values.size() != 2 || !absl::SimpleAtod(values[0], &bw) ||
      !absl::SimpleAtod(values[1], &lat)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--link: \"", text, "\" must be DIM=GBPS:US"));
  }
  int dim = -1;
  for (size_t d = 0; d < spec.dim_names.size(); ++d) {
    if (spec.dim_names[d] == kv[0]) dim = static_cast<int>(d);
  }
  if (dim < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--link: unknown mesh dim \"", kv[0], "\""));
  }
  spec.links.resize(spec.dim_names.size());
  spec.links[dim].bandwidth_gbps = bw;
  spec.links[dim].latency_us = lat;
  return absl::OkStatus();
}

// The mesh described by --mesh, --flatten and --link.
absl::StatusOr<Mesh> MeshFromFlags(const CliArgs& args) {
  if (!args.Has("mesh")) {
    return absl::InvalidArgumentError("--mesh is required, e.g. A=2,B=2");
  }
  MeshSpec spec;
  absl::Status s = ParseMeshFlag(*args.Get("mesh"), spec);
  if (!s.ok()) return s;
  for (const std::string& group : args.GetAll("flatten")) {
    spec.flattened.push_back(absl::StrSplit(group, ','));
  }
  for (const std::string& link : args.GetAll("link")) {
    s = ParseLinkFlag(link, spec);
    if (!s.ok()) return s;
  }
  return Mesh::Create(std::move(spec));
}

absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& server) {
  ClientOptions options;
  options.target = server;
  options.max_attempts = 2;
  return Client::Create(options);
}

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
  absl::StatusOr<std::unique_ptr<Client>> client = Connect(server);
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
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv,
                     {"mesh", "flatten", "shape", "dtype", "from", "to",
                      "planner", "cost_model", "devices_per_host", "link",
                      "flatten_policy", "max_peak_bytes", "search_budget"},
                     {"offline", "merge", "json"});
  if (!args.ok()) return args.status();
  for (const char* required : {"mesh", "shape", "from", "to"}) {
    if (!args->Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", required, " is required"));
    }
  }
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  if (!mesh.ok()) return mesh.status();

  PlanOptions options;
  if (auto planner = args->Get("planner")) {
    std::optional<PlannerKind> kind = ParsePlanner(*planner);
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--planner: unknown planner \"", *planner,
                       "\"; expected optimal, torch_greedy or torch_graph"));
    }
    options.planner = *kind;
  }
  if (auto model = args->Get("cost_model")) {
    std::optional<CostModelKind> kind = ParseCostModel(*model);
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cost_model: unknown cost model \"", *model,
                       "\"; expected alpha_beta or torch"));
    }
    options.cost_model = *kind;
  }
  for (auto [flag, target] :
       {std::pair{"devices_per_host", &options.devices_per_host},
        std::pair{"search_budget", &options.search_budget}}) {
    if (auto value = args->Get(flag)) {
      if (!absl::SimpleAtoi(*value, target)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": \"", *value, "\" is not an integer"));
      }
    }
  }
  if (auto value = args->Get("max_peak_bytes")) {
    int64_t bytes = 0;
    if (!absl::SimpleAtoi(*value, &bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max_peak_bytes: \"", *value, "\" is not an integer"));
    }
    options.max_peak_bytes = bytes;
  }
  if (auto policy = args->Get("flatten_policy")) {
    std::optional<FlattenPolicy> parsed = ParseFlattenPolicy(*policy);
    if (!parsed.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--flatten_policy: unknown policy \"", *policy,
                       "\"; expected existing, any or none"));
    }
    options.flatten_policy = *parsed;
  }
  options.merge = args->Has("merge");
  absl::StatusOr<std::vector<int64_t>> shape =
      ParseIntList(*args->Get("shape"), "shape");
  if (!shape.ok()) return shape.status();
  absl::StatusOr<PlanRequest> request = ParsePlanRequest(
      *mesh, *std::move(shape), args->Get("dtype").value_or("float32"),
      *args->Get("from"), *args->Get("to"), options);
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan;
  if (args->Has("offline")) {
    plan = MakePlan(*mesh, *request);
  } else {
    absl::StatusOr<std::unique_ptr<Client>> client = Connect(server);
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
  // Global --server flag before the command.
  while (!args.empty() && args[0].rfind("--server", 0) == 0) {
    if (args[0].size() > 9 && args[0][8] == '=') {
      server = args[0].substr(9);
      args.erase(args.begin());
    } else if (args[0] == "--server" && args.size() >= 2) {
      server = args[1];
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
  } else if (args[0] == "mesh") {
    status = reshard::RunMesh(server, rest);
  } else if (args[0] == "health" && rest.empty()) {
    absl::StatusOr<std::unique_ptr<reshard::Client>> client =
        reshard::Connect(server);
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
