#include "client/cross_plan_command.h"

#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/plan_flags.h"
#include "planner/cross/cross_planner.h"
#include "planner/format/cross_plan_format.h"
#include "reshard/client.h"

namespace reshard::client {
namespace {

// The flags of one side ("src" or "dst") as `plan`'s mesh flags, so that
// MeshSpecFromFlags reads them.
absl::StatusOr<MeshSpec> SideSpec(const CliArgs& args,
                                  const std::string& side) {
  std::vector<std::string> argv;
  if (args.Has(side + "_mesh")) argv = {"--mesh", *args.Get(side + "_mesh")};
  for (const std::string& group : args.GetAll(side + "_flatten")) {
    argv.insert(argv.end(), {"--flatten", group});
  }
  absl::StatusOr<CliArgs> mesh_args =
      CliArgs::Parse(argv, {"mesh", "flatten"}, {});
  if (!mesh_args.ok()) return mesh_args.status();
  absl::StatusOr<MeshSpec> spec = MeshSpecFromFlags(*mesh_args);
  if (!spec.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", side, "_mesh: ", spec.status().message()));
  }
  return spec;
}

// The side's mesh with its rank map: --SIDE_ranks, else `first`..
absl::StatusOr<Mesh> SideMesh(const CliArgs& args, const std::string& side,
                              int64_t first) {
  absl::StatusOr<MeshSpec> spec = SideSpec(args, side);
  if (!spec.ok()) return spec.status();
  if (args.Has(side + "_ranks")) {
    absl::StatusOr<std::vector<int64_t>> ranks =
        ParseIntList(*args.Get(side + "_ranks"), side + "_ranks");
    if (!ranks.ok()) return ranks.status();
    spec->rank_map = *std::move(ranks);
  } else if (first > 0) {
    int64_t world = 1;
    for (int64_t size : spec->shape) world *= size;
    for (int64_t r = 0; r < world; ++r) spec->rank_map.push_back(first + r);
  }
  absl::StatusOr<Mesh> mesh = Mesh::Create(*std::move(spec));
  if (!mesh.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", side, "_mesh: ", mesh.status().message()));
  }
  return mesh;
}

absl::StatusOr<LinkParams> CrossLink(const CliArgs& args) {
  LinkParams link;
  if (!args.Has("cross_link")) return link;
  const std::vector<std::string> fields =
      absl::StrSplit(*args.Get("cross_link"), ':');
  if (fields.size() != 2 || !ParseLinkField(fields[0], link.bandwidth_gbps) ||
      !ParseLinkField(fields[1], link.latency_us)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cross_link: \"", *args.Get("cross_link"),
                     "\" must be GBPS:US (a field may be `default`)"));
  }
  return link;
}

absl::Status CheckFlags(const CliArgs& args) {
  for (const char* required : {"src_mesh", "dst_mesh", "shape", "from", "to"}) {
    if (!args.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", required,
                       " is required for a cross-mesh "
                       "plan"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CrossMeshRequest> RequestOf(const CliArgs& args, const Mesh& src,
                                           const Mesh& dst) {
  absl::StatusOr<std::vector<int64_t>> shape =
      ParseIntList(*args.Get("shape"), "shape");
  if (!shape.ok()) return shape.status();
  std::vector<int64_t> unavailable;
  if (args.Has("unavailable_ranks")) {
    absl::StatusOr<std::vector<int64_t>> ranks =
        ParseIntList(*args.Get("unavailable_ranks"), "unavailable_ranks");
    if (!ranks.ok()) return ranks.status();
    unavailable = *std::move(ranks);
  }
  absl::StatusOr<LinkParams> link = CrossLink(args);
  if (!link.ok()) return link.status();
  absl::StatusOr<PlanOptions> options = OptionsFromFlags(args);
  if (!options.ok()) return options.status();
  return ParseCrossMeshRequest(src, dst, *std::move(shape),
                               args.Get("dtype").value_or("float32"),
                               *args.Get("from"), *args.Get("to"),
                               std::move(unavailable), *link, *options);
}

// In-process with --offline, else on the service.
absl::StatusOr<CrossMeshPlan> PlanIt(const ServerFlags& server,
                                     const CliArgs& args, const Mesh& src,
                                     const Mesh& dst,
                                     const CrossMeshRequest& request) {
  if (args.Has("offline")) return MakeCrossMeshPlan(src, dst, request);
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  return (*client)->PlanCrossMesh(src, dst, request);
}

}  // namespace

bool HasCrossMeshFlag(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "--src_mesh" || a.rfind("--src_mesh=", 0) == 0) return true;
  }
  return false;
}

absl::Status RunCrossMeshPlan(const ServerFlags& server,
                              const std::vector<std::string>& argv,
                              std::ostream& out) {
  std::set<std::string> flags = {"src_mesh",
                                 "dst_mesh",
                                 "src_ranks",
                                 "dst_ranks",
                                 "src_flatten",
                                 "dst_flatten",
                                 "cross_link",
                                 "unavailable_ranks",
                                 "shape",
                                 "dtype",
                                 "from",
                                 "to",
                                 "planner",
                                 "cost_model",
                                 "devices_per_host",
                                 "flatten_policy",
                                 "max_peak_bytes",
                                 "search_budget"};
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, flags, {"offline", "json"});
  if (!args.ok()) return args.status();
  if (absl::Status s = CheckFlags(*args); !s.ok()) return s;
  absl::StatusOr<Mesh> src = SideMesh(*args, "src", 0);
  if (!src.ok()) return src.status();
  absl::StatusOr<Mesh> dst = SideMesh(*args, "dst", src->world_size());
  if (!dst.ok()) return dst.status();
  absl::StatusOr<CrossMeshRequest> request = RequestOf(*args, *src, *dst);
  if (!request.ok()) return request.status();
  absl::StatusOr<CrossMeshPlan> plan =
      PlanIt(server, *args, *src, *dst, *request);
  if (!plan.ok()) return plan.status();
  if (args->Has("json")) {
    out << CrossPlanJson(*src, *dst, *plan) << "\n";
  } else {
    out << CrossPlanTable(*src, *dst, *plan);
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
