#include "client/plan_flags.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/flag_file.h"
#include "common/json_text.h"
#include "planner/format/plan_json_reader.h"

namespace reshard::client {
namespace {

// The word LinkValue writes, and ParseLinkField reads, for a link field
// the cost model defaults.
constexpr absl::string_view kDefaultField = "default";

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

// The index of the --flatten group named by the dims "A,B", or -1.
int FlattenedIndex(const MeshSpec& spec, const std::string& dims) {
  const std::vector<std::string> names = absl::StrSplit(dims, ',');
  for (size_t f = 0; f < spec.flattened.size(); ++f) {
    if (spec.flattened[f] == names) return static_cast<int>(f);
  }
  return -1;
}

// Where "NAME" of a --link points: a dim's link, or a flattened group's
// ("A,B", as --flatten gave it); nullptr when neither.
LinkParams* LinkTarget(const std::string& name, MeshSpec& spec) {
  if (name.find(',') != std::string::npos) {
    const int f = FlattenedIndex(spec, name);
    if (f < 0) return nullptr;
    spec.flattened_links.resize(spec.flattened.size());
    return &spec.flattened_links[f];
  }
  for (size_t d = 0; d < spec.dim_names.size(); ++d) {
    if (spec.dim_names[d] == name) {
      spec.links.resize(spec.dim_names.size());
      return &spec.links[d];
    }
  }
  return nullptr;
}

// "A=100:1.5" -> link override of dim A (GB/s, µs per hop); "A,B=0.1:20"
// -> the own link of the flattened group A,B; a third field is the group's
// all_to_all latency (µs). A field may be `default`.
absl::Status ParseLinkFlag(const std::string& text, MeshSpec& spec) {
  std::vector<std::string> kv = absl::StrSplit(text, '=');
  std::vector<std::string> values =
      kv.size() == 2 ? absl::StrSplit(kv[1], ':') : std::vector<std::string>{};
  LinkParams parsed;
  if (values.size() < 2 || values.size() > 3 ||
      !ParseLinkField(values[0], parsed.bandwidth_gbps) ||
      !ParseLinkField(values[1], parsed.latency_us) ||
      (values.size() == 3 &&
       !ParseLinkField(values[2], parsed.all_to_all_us))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--link: \"", text,
                     "\" must be DIM=GBPS:US[:A2A_US] or "
                     "DIM,DIM...=GBPS:US[:A2A_US] (a field may be default)"));
  }
  LinkParams* link = LinkTarget(kv[0], spec);
  if (link == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link: \"", kv[0], "\" is neither a mesh dim nor a --flatten group"));
  }
  *link = parsed;
  return absl::OkStatus();
}

// --NAME's number (of `unit`) into `value` when given.
absl::Status ParseNumberFlag(const CliArgs& args, const std::string& name,
                             absl::string_view unit,
                             std::optional<double>& value) {
  const std::optional<std::string> text = args.Get(name);
  if (!text.has_value()) return absl::OkStatus();
  double number = 0;
  if (!absl::SimpleAtod(*text, &number)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, ": \"", *text, "\" must be a number of ", unit));
  }
  value = number;
  return absl::OkStatus();
}

// GBPS:US[:A2A_US] as ParseLinkFlag reads it.
std::string LinkValue(const LinkParams& link) {
  std::string value =
      absl::StrCat(FormatOptionalDouble(link.bandwidth_gbps, kDefaultField),
                   ":", FormatOptionalDouble(link.latency_us, kDefaultField));
  if (link.all_to_all_us.has_value()) {
    absl::StrAppend(&value, ":", FormatOptionalDouble(link.all_to_all_us, ""));
  }
  return value;
}

}  // namespace

bool ParseLinkField(const std::string& text, std::optional<double>& value) {
  if (text == kDefaultField) return true;
  double number = 0;
  if (!absl::SimpleAtod(text, &number)) return false;
  value = number;
  return true;
}

absl::StatusOr<Mesh> MeshFromFlags(const CliArgs& args) {
  absl::StatusOr<MeshSpec> spec = MeshSpecFromFlags(args);
  if (!spec.ok()) return spec.status();
  return Mesh::Create(*std::move(spec));
}

absl::StatusOr<MeshSpec> MeshSpecFromFlags(const CliArgs& args) {
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
  s = ParseNumberFlag(args, "copy_gbps", "GB/s", spec.copy_gbps);
  if (!s.ok()) return s;
  s = ParseNumberFlag(args, "base_us", "us", spec.base_us);
  if (!s.ok()) return s;
  s = ParseNumberFlag(args, "reduce_gbps", "GB/s", spec.reduce_gbps);
  if (!s.ok()) return s;
  return spec;
}

std::vector<std::string> LinkFlagValues(const Mesh& mesh) {
  std::vector<std::string> values;
  for (int d = 0; d < mesh.ndim(); ++d) {
    const LinkParams& link = mesh.links()[d];
    if (link == LinkParams{}) continue;
    values.push_back(absl::StrCat(mesh.dim_names()[d], "=", LinkValue(link)));
  }
  for (size_t f = 0; f < mesh.flattened().size(); ++f) {
    const LinkParams& link = mesh.flattened_links()[f];
    if (link == LinkParams{}) continue;
    std::vector<std::string> names;
    for (int d : mesh.flattened()[f]) names.push_back(mesh.dim_names()[d]);
    values.push_back(
        absl::StrCat(absl::StrJoin(names, ","), "=", LinkValue(link)));
  }
  return values;
}

std::vector<std::string> LinkFlags(const Mesh& mesh) {
  std::vector<std::string> flags;
  for (const std::string& link : LinkFlagValues(mesh)) {
    flags.push_back(absl::StrCat("--link ", link));
  }
  for (const auto& [name, value] :
       {std::pair{"copy_gbps", mesh.copy_gbps()},
        std::pair{"base_us", mesh.base_us()},
        std::pair{"reduce_gbps", mesh.reduce_gbps()}}) {
    if (value.has_value()) {
      flags.push_back(
          absl::StrCat("--", name, " ", FormatOptionalDouble(value, "")));
    }
  }
  return flags;
}

std::set<std::string> PlanFlags() {
  std::set<std::string> flags = {"shape",
                                 "dtype",
                                 "from",
                                 "to",
                                 "planner",
                                 "cost_model",
                                 "devices_per_host",
                                 "flatten_policy",
                                 "max_peak_bytes",
                                 "search_budget"};
  flags.insert(std::begin(kMeshFlags), std::end(kMeshFlags));
  return flags;
}

absl::StatusOr<PlanOptions> OptionsFromFlags(const CliArgs& args) {
  PlanOptions options;
  if (auto planner = args.Get("planner")) {
    std::optional<PlannerKind> kind = ParsePlanner(*planner);
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--planner: unknown planner \"", *planner,
                       "\"; expected optimal, torch_greedy or torch_graph"));
    }
    options.planner = *kind;
  }
  if (auto model = args.Get("cost_model")) {
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
    if (auto value = args.Get(flag)) {
      if (!absl::SimpleAtoi(*value, target)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": \"", *value, "\" is not an integer"));
      }
    }
  }
  if (args.Has("max_peak_bytes")) {
    int64_t bytes = 0;
    absl::Status s = ParseByteFlag(args, "max_peak_bytes", 0, bytes);
    if (!s.ok()) return s;
    options.max_peak_bytes = bytes;
  }
  if (auto policy = args.Get("flatten_policy")) {
    std::optional<FlattenPolicy> parsed = ParseFlattenPolicy(*policy);
    if (!parsed.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--flatten_policy: unknown policy \"", *policy,
                       "\"; expected existing, any or none"));
    }
    options.flatten_policy = *parsed;
  }
  options.merge = args.Has("merge");
  return options;
}

absl::StatusOr<PlanRequest> RequestFromFlags(const Mesh& mesh,
                                             const CliArgs& args) {
  for (const char* required : {"shape", "from", "to"}) {
    if (!args.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required"));
    }
  }
  absl::StatusOr<PlanOptions> options = OptionsFromFlags(args);
  if (!options.ok()) return options.status();
  absl::StatusOr<std::vector<int64_t>> shape =
      ParseIntList(*args.Get("shape"), "shape");
  if (!shape.ok()) return shape.status();
  return ParsePlanRequest(mesh, *std::move(shape),
                          args.Get("dtype").value_or("float32"),
                          *args.Get("from"), *args.Get("to"), *options);
}

absl::StatusOr<MeshAndPlan> ReadPlanFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFlagFile("plan", path);
  if (!text.ok()) return text.status();
  absl::StatusOr<PlanFile> read = ReadPlanJson(*text);
  if (!read.ok()) {
    return absl::Status(
        read.status().code(),
        absl::StrCat("--plan ", path, ": ", read.status().message()));
  }
  return MeshAndPlan{std::move(read->mesh), std::move(read->plan)};
}

}  // namespace reshard::client
