// reshardctl: the command-line front end of Reshard. `plan --offline` plans
// in-process with the core library and prints the trace, a step table and
// warnings, or the plan JSON of DESIGN §4 with --json. Errors go to stderr
// with exit status 2.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli_args.h"
#include "planner/mesh.h"
#include "planner/plan_format.h"
#include "planner/planner.h"

namespace reshard {
namespace {

constexpr char kUsage[] =
    "usage: reshardctl plan --offline --mesh A=2,B=2,C=2 [--flatten A,C]...\n"
    "         --shape 16,16 [--dtype f32] --from 'P(sum),R,P(sum)' --to "
    "'R,R,R'\n"
    "         [--planner optimal|torch_greedy|torch_graph] [--merge]\n"
    "         [--cost_model alpha_beta|torch] [--devices_per_host N]\n"
    "         [--flatten_policy existing|any|none] [--link DIM=GBPS:US]...\n"
    "         [--max_peak_bytes N] [--search_budget N] [--json]\n";

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

absl::Status RunPlan(const std::vector<std::string>& argv) {
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv,
                     {"mesh", "flatten", "shape", "dtype", "from", "to",
                      "planner", "cost_model", "devices_per_host", "link",
                      "flatten_policy", "max_peak_bytes", "search_budget"},
                     {"offline", "merge", "json"});
  if (!args.ok()) return args.status();
  if (!args->Has("offline")) {
    return absl::UnimplementedError(
        "plan: this build has no planner service client yet; pass --offline");
  }
  for (const char* required : {"mesh", "shape", "from", "to"}) {
    if (!args->Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", required, " is required"));
    }
  }
  MeshSpec spec;
  absl::Status s = ParseMeshFlag(*args->Get("mesh"), spec);
  if (!s.ok()) return s;
  for (const std::string& group : args->GetAll("flatten")) {
    spec.flattened.push_back(absl::StrSplit(group, ','));
  }
  for (const std::string& link : args->GetAll("link")) {
    s = ParseLinkFlag(link, spec);
    if (!s.ok()) return s;
  }
  absl::StatusOr<Mesh> mesh = Mesh::Create(std::move(spec));
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
  absl::StatusOr<Plan> plan = MakePlan(*mesh, *request);
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
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::cout << reshard::kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "plan") {
    std::cerr << "reshardctl: unknown command \"" << args[0] << "\"\n"
              << reshard::kUsage;
    return 2;
  }
  const absl::Status status = reshard::RunPlan({args.begin() + 1, args.end()});
  if (!status.ok()) {
    std::cerr << "reshardctl: " << absl::StatusCodeToString(status.code())
              << ": " << status.message() << "\n";
    return 2;
  }
  return 0;
}
