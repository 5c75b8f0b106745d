#include "client/plan_command.h"

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/batch_command.h"
#include "client/cross_plan_command.h"
#include "client/plan_flags.h"
#include "executor/run/rank_program_json.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reshard/client.h"

namespace reshard::client {
namespace {

constexpr char kPlanUsage[] =
    "usage: reshardctl [global flags] plan [--offline] --mesh A=2,B=2,C=2 "
    "[--flatten A,C]...\n"
    "         [--link DIM[,DIM...]=GBPS:US[:A2A_US]]... [--copy_gbps X] "
    "[--base_us X]\n"
    "         [--reduce_gbps X]\n"
    "         --shape 16,16 [--dtype f32]\n"
    "         --from 'P(sum),R,P(sum)' --to 'R,R,R'\n"
    "         [--planner optimal|torch_greedy|torch_graph] [--merge]\n"
    "         [--cost_model alpha_beta|torch] [--devices_per_host N]\n"
    "         [--flatten_policy existing|any|none] [--max_peak_bytes N]\n"
    "         [--search_budget N] [--json [--programs | --program_position "
    "P]]\n"
    "       reshardctl [global flags] plan --mesh_id MESH_ID --shape ... "
    "--from ... --to ... [options]\n"
    "       reshardctl [global flags] plan [--offline] --batch FILE --mesh "
    "... [options]\n"
    "         [--bucket_bytes N] [--all_or_nothing] [--json]\n"
    "       reshardctl [global flags] plan [--offline] --src_mesh A=2,B=2 "
    "--dst_mesh C=4\n"
    "         [--src_ranks 0,1,2,3] [--dst_ranks 4,5,6,7] "
    "[--src_flatten A,B]...\n"
    "         [--dst_flatten ...]... [--cross_link GBPS:US] "
    "[--unavailable_ranks R,...]\n"
    "         --shape ... [--dtype ...] --from SRC --to DST [--json]\n"
    "       reshardctl [global flags] plan --offline --src_mesh ... --dst_mesh "
    "... --batch FILE\n"
    "         [--bucket_bytes N] [--json]\n"
    "  Plans a redistribution on the service (--offline: in-process) and\n"
    "  prints the trace, one row per step and the warnings, or the plan JSON\n"
    "  (docs/PLAN_JSON.md). --mesh_id plans on a mesh registered with\n"
    "  `mesh register`. --link gives a mesh dim's bandwidth in GB/s (1e9\n"
    "  bytes/s) and latency per hop in us, and optionally an all_to_all's\n"
    "  latency on it in us; --link A,C=GBPS:US[:A2A_US] a --flatten group's\n"
    "  own (`job calibrate` measures them all; a field may be `default`).\n"
    "  --batch FILE: one\n"
    "  {\"name\",\"shape\",\"dtype\",\"from\",\"to\"} per line, planned and\n"
    "  bucketed.\n"
    "  --src_mesh: a cross-mesh plan (docs/DESIGN.md §9), --from on the\n"
    "  source mesh, --to on the destination; --src_ranks and --dst_ranks give\n"
    "  the global rank at each position in row-major order (default: the\n"
    "  source 0..N-1, the destination next); --cross_link prices the\n"
    "  transfers (default: the slower mesh's dim 0 link). With --batch, a\n"
    "  line may name its own \"src_mesh\", \"src_ranks\" and \"src_flatten\"\n"
    "  (a pipeline stage's sub-mesh); the transfers are bucketed so that no\n"
    "  rank stages more than --bucket_bytes at once.\n"
    "  --programs adds every rank's compiled program to the JSON (meshes of\n"
    "  up to 1024 ranks), --program_position P the rank at position P's:\n"
    "  what reshard.torch.run_plan runs without the native module.\n"
    "  Global flags (before or after the command): --server HOST[:PORT]\n"
    "  (port 50051 when omitted), --deadline_seconds D.\n";

absl::Status CheckRequired(const CliArgs& args) {
  const bool by_id = args.Has("mesh_id");
  if (by_id && args.Has("offline")) {
    return absl::InvalidArgumentError(
        "--mesh_id: the registry is the service's; cannot be combined with "
        "--offline");
  }
  for (const char* flag : kMeshFlags) {
    if (by_id && args.Has(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mesh_id: cannot be combined with --", flag,
                       " (the registered mesh fixes the mesh)"));
    }
  }
  if (!by_id && !args.Has("mesh")) {
    return absl::InvalidArgumentError("plan: --mesh or --mesh_id is required");
  }
  for (const char* required : {"shape", "from", "to"}) {
    if (!args.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", required, " is required"));
    }
  }
  return absl::OkStatus();
}

// Plans on the registered mesh `id`; `mesh` receives it.
// An unknown mesh id points at what lists the known ones.
absl::Status WithMeshListHint(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kNotFound) return s;
  return absl::NotFoundError(
      absl::StrCat(s.message(),
                   "; `reshardctl mesh list` shows the meshes registered on "
                   "this server"));
}

absl::StatusOr<Plan> PlanOnRegistered(const ServerFlags& server,
                                      const std::string& id,
                                      const CliArgs& args,
                                      std::optional<Mesh>& mesh) {
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<Mesh> registered = (*client)->GetMesh(id);
  if (!registered.ok()) return WithMeshListHint(registered.status());
  mesh = *std::move(registered);
  absl::StatusOr<PlanRequest> request = RequestFromFlags(*mesh, args);
  if (!request.ok()) return request.status();
  return (*client)->PlanRegistered(id, *request);
}

// Plans on the mesh of the mesh flags, on the service or in-process.
absl::StatusOr<Plan> PlanOnFlags(const ServerFlags& server, const CliArgs& args,
                                 std::optional<Mesh>& mesh) {
  absl::StatusOr<Mesh> given = MeshFromFlags(args);
  if (!given.ok()) return given.status();
  mesh = *std::move(given);
  absl::StatusOr<PlanRequest> request = RequestFromFlags(*mesh, args);
  if (!request.ok()) return request.status();
  if (args.Has("offline")) return MakePlan(*mesh, *request);
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  return (*client)->PlanInline(*mesh, *request);
}

// The plan JSON, with the `programs` that --programs or
// --program_position ask for.
absl::StatusOr<std::string> PlanJsonWithPrograms(const Mesh& mesh,
                                                 const Plan& plan,
                                                 const CliArgs& args) {
  std::string json = PlanJson(mesh, plan);
  const bool one = args.Has("program_position");
  if (!one && !args.Has("programs")) return json;
  if (one && args.Has("programs")) {
    return absl::InvalidArgumentError(
        "--programs: cannot be combined with --program_position");
  }
  std::optional<int64_t> position;
  if (one) {
    int p = 0;
    absl::Status s = ParseIntFlag(args, "program_position", 0, p);
    if (!s.ok()) return s;
    if (p >= mesh.world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--program_position: ", p, " is not a position of the ",
                       mesh.world_size(), "-rank mesh"));
    }
    position = p;
  }
  absl::StatusOr<std::string> programs =
      executor::ProgramsJson(mesh, plan, position);
  if (!programs.ok()) return programs.status();
  json.pop_back();  // the object's closing brace
  return absl::StrCat(json, ",\"programs\":", *programs, "}");
}

}  // namespace

const char* PlanUsage() { return kPlanUsage; }

absl::Status RunPlanCommand(const ServerFlags& server,
                            const std::vector<std::string>& argv,
                            std::ostream& out) {
  if (HasCrossMeshFlag(argv)) return RunCrossMeshPlan(server, argv, out);
  if (HasBatchFlag(argv)) return RunPlanBatch(server, argv, out);
  std::set<std::string> flags = PlanFlags();
  flags.insert("mesh_id");
  flags.insert("program_position");
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, flags, {"offline", "merge", "json", "programs"});
  if (!args.ok()) return args.status();
  if (absl::Status s = CheckRequired(*args); !s.ok()) return s;
  std::optional<Mesh> mesh;
  absl::StatusOr<Plan> plan =
      args->Has("mesh_id")
          ? PlanOnRegistered(server, *args->Get("mesh_id"), *args, mesh)
          : PlanOnFlags(server, *args, mesh);
  if (!plan.ok()) return plan.status();
  if (args->Has("json")) {
    absl::StatusOr<std::string> json =
        PlanJsonWithPrograms(*mesh, *plan, *args);
    if (!json.ok()) return json.status();
    out << *json << "\n";
  } else {
    out << PlanTable(*mesh, *plan);
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
