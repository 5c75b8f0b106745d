#include "client/cross_plan_command.h"

#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/batch_file.h"
#include "client/plan_flags.h"
#include "planner/batch/batch_plan.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_planner.h"
#include "planner/cross/cross_request.h"
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
    // Numbered after the source, within the ranks a cross-mesh plan takes.
    int64_t world = 1;
    for (int64_t size : spec->shape) {
      if (size < 1 || world > kMaxCrossMeshRanks / size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", side, "_mesh: more than ", kMaxCrossMeshRanks,
            " ranks; cross-mesh plans take meshes of at most that many"));
      }
      world *= size;
    }
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
  std::vector<const char*> required = {"src_mesh", "dst_mesh"};
  if (!args.Has("batch"))
    required.insert(required.end(), {"shape", "from", "to"});
  for (const char* flag : required) {
    if (!args.Has(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan: --", flag,
                       " is required for a cross-mesh "
                       "plan"));
    }
  }
  return absl::OkStatus();
}

// What every item of the command shares: unavailable ranks, the cross
// link and the options.
struct Shared {
  std::vector<int64_t> unavailable;
  LinkParams link;
  PlanOptions options;
};

absl::StatusOr<Shared> SharedOf(const CliArgs& args) {
  Shared shared;
  if (args.Has("unavailable_ranks")) {
    absl::StatusOr<std::vector<int64_t>> ranks =
        ParseIntList(*args.Get("unavailable_ranks"), "unavailable_ranks");
    if (!ranks.ok()) return ranks.status();
    shared.unavailable = *std::move(ranks);
  }
  absl::StatusOr<LinkParams> link = CrossLink(args);
  if (!link.ok()) return link.status();
  shared.link = *link;
  absl::StatusOr<PlanOptions> options = OptionsFromFlags(args);
  if (!options.ok()) return options.status();
  shared.options = *options;
  return shared;
}

absl::StatusOr<CrossMeshRequest> RequestOf(const CliArgs& args,
                                           const Shared& shared,
                                           const Mesh& src, const Mesh& dst) {
  absl::StatusOr<std::vector<int64_t>> shape =
      ParseIntList(*args.Get("shape"), "shape");
  if (!shape.ok()) return shape.status();
  return ParseCrossMeshRequest(src, dst, *std::move(shape),
                               args.Get("dtype").value_or("float32"),
                               *args.Get("from"), *args.Get("to"),
                               shared.unavailable, shared.link, shared.options);
}

// A batch file line's own source mesh, as --src_mesh and its flags take it.
absl::StatusOr<std::shared_ptr<const Mesh>> ItemMesh(
    const BatchFileItem& item) {
  std::vector<std::string> argv = {"--src_mesh", item.src_mesh};
  if (!item.src_ranks.empty()) {
    argv.insert(argv.end(),
                {"--src_ranks", absl::StrJoin(item.src_ranks, ",")});
  }
  for (const std::string& group : item.src_flatten) {
    argv.insert(argv.end(), {"--src_flatten", group});
  }
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, {"src_mesh", "src_ranks", "src_flatten"}, {});
  if (!args.ok()) return args.status();
  absl::StatusOr<Mesh> mesh = SideMesh(*args, "src", 0);
  if (!mesh.ok()) return mesh.status();
  return std::make_shared<const Mesh>(*std::move(mesh));
}

CrossBatchItem ItemOf(const BatchFileItem& line, const Shared& shared,
                      const Mesh& src, const Mesh& dst) {
  CrossBatchItem item{line.name};
  if (!line.src_mesh.empty()) {
    absl::StatusOr<std::shared_ptr<const Mesh>> own = ItemMesh(line);
    if (!own.ok()) {
      item.invalid = own.status();
      return item;
    }
    item.src_mesh = *std::move(own);
  }
  absl::StatusOr<CrossMeshRequest> request = ParseCrossMeshRequest(
      item.src_mesh ? *item.src_mesh : src, dst, line.shape, line.dtype,
      line.from, line.to, shared.unavailable, shared.link, shared.options);
  if (request.ok()) {
    item.request = *std::move(request);
  } else {
    item.invalid = request.status();
  }
  return item;
}

// The batch planned in-process with --offline, else by the service.
absl::StatusOr<CrossBatch> PlannedBatch(const ServerFlags& server,
                                        const CliArgs& args,
                                        const CrossMeshes& meshes) {
  if (args.Has("offline")) return CrossBatchFromFlags(args, meshes);
  absl::StatusOr<CrossBatch> batch = CrossBatchLinesFromFlags(args, meshes);
  if (!batch.ok()) return batch.status();
  absl::StatusOr<std::vector<Client::CrossBatchRequestTensor>> tensors =
      CrossBatchRequests(*batch);
  if (!tensors.ok()) return tensors.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<CrossBatchPlan> plan =
      (*client)->PlanCrossMeshBatch(*tensors, batch->bucket_bytes);
  if (!plan.ok()) return plan.status();
  batch->plan = *std::move(plan);
  return batch;
}

absl::Status RunBatch(const ServerFlags& server, const CliArgs& args,
                      const CrossMeshes& meshes, std::ostream& out) {
  absl::StatusOr<CrossBatch> batch = PlannedBatch(server, args, meshes);
  if (!batch.ok()) return batch.status();
  out << (args.Has("json") ? CrossBatchJson(meshes.src, meshes.dst,
                                            batch->items, batch->plan) +
                                 "\n"
                           : CrossBatchTable(batch->items, batch->plan));
  return absl::OkStatus();
}

// In-process without a server or with --offline, else on the service.
absl::StatusOr<CrossMeshPlan> PlanIt(const ServerFlags* server,
                                     const CliArgs& args, const Mesh& src,
                                     const Mesh& dst,
                                     const CrossMeshRequest& request) {
  if (server == nullptr || args.Has("offline")) {
    return MakeCrossMeshPlan(src, dst, request);
  }
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(*server);
  if (!client.ok()) return client.status();
  return (*client)->PlanCrossMesh(src, dst, request);
}

}  // namespace

std::set<std::string> CrossPlanFlags() {
  std::set<std::string> flags = PlanFlags();
  for (const char* mesh_flag : kMeshFlags) flags.erase(mesh_flag);
  flags.insert({"src_mesh", "dst_mesh", "src_ranks", "dst_ranks", "src_flatten",
                "dst_flatten", "cross_link", "unavailable_ranks", "batch",
                "bucket_bytes"});
  return flags;
}

absl::StatusOr<CrossMeshes> CrossMeshesFromFlags(const CliArgs& args) {
  if (absl::Status s = CheckFlags(args); !s.ok()) return s;
  absl::StatusOr<Mesh> src = SideMesh(args, "src", 0);
  if (!src.ok()) return src.status();
  absl::StatusOr<Mesh> dst = SideMesh(args, "dst", src->world_size());
  if (!dst.ok()) return dst.status();
  return CrossMeshes{*std::move(src), *std::move(dst)};
}

absl::StatusOr<CrossMeshRequest> CrossRequestFromFlags(
    const CliArgs& args, const CrossMeshes& meshes) {
  absl::StatusOr<Shared> shared = SharedOf(args);
  if (!shared.ok()) return shared.status();
  return RequestOf(args, *shared, meshes.src, meshes.dst);
}

absl::StatusOr<CrossMeshPlan> CrossPlanFromFlags(const ServerFlags* server,
                                                 const CliArgs& args,
                                                 const CrossMeshes& meshes) {
  absl::StatusOr<CrossMeshRequest> request =
      CrossRequestFromFlags(args, meshes);
  if (!request.ok()) return request.status();
  return PlanIt(server, args, meshes.src, meshes.dst, *request);
}

absl::StatusOr<CrossBatch> CrossBatchFromFlags(const CliArgs& args,
                                               const CrossMeshes& meshes) {
  if (!args.Has("offline")) {
    return absl::UnimplementedError(
        "--batch with --src_mesh: `exec` plans cross-mesh batches "
        "in-process; add --offline (`plan`, `job run` and `job prepare` "
        "without it have the service plan them)");
  }
  absl::StatusOr<CrossBatch> batch = CrossBatchLinesFromFlags(args, meshes);
  if (!batch.ok()) return batch.status();
  absl::StatusOr<CrossBatchPlan> plan = MakeCrossMeshBatch(
      meshes.src, meshes.dst, batch->items, batch->bucket_bytes);
  if (!plan.ok()) return plan.status();
  batch->plan = *std::move(plan);
  return batch;
}

absl::StatusOr<CrossBatch> CrossBatchLinesFromFlags(const CliArgs& args,
                                                    const CrossMeshes& meshes) {
  absl::StatusOr<Shared> shared = SharedOf(args);
  if (!shared.ok()) return shared.status();
  absl::StatusOr<std::vector<BatchFileItem>> lines =
      ReadBatchFile(*args.Get("batch"), /*source_meshes=*/true);
  if (!lines.ok()) return lines.status();
  CrossBatch batch{meshes};
  batch.bucket_bytes = kDefaultBucketBytes;
  absl::Status s = ParseByteFlag(args, "bucket_bytes", 1, batch.bucket_bytes);
  if (!s.ok()) return s;
  for (const BatchFileItem& line : *lines) {
    batch.items.push_back(ItemOf(line, *shared, meshes.src, meshes.dst));
  }
  return batch;
}

absl::StatusOr<std::vector<executor::CrossWork>> CrossBatchWorks(
    const CrossBatch& batch) {
  std::vector<executor::CrossWork> works;
  for (size_t t = 0; t < batch.items.size(); ++t) {
    const CrossBatchItem& item = batch.items[t];
    const absl::StatusOr<CrossMeshPlan>& plan = batch.plan.plans[t];
    if (!plan.ok()) {
      return absl::Status(plan.status().code(),
                          absl::StrCat("--batch: tensors[", t, "] (", item.name,
                                       "): ", plan.status().message()));
    }
    works.push_back({item.src_mesh ? *item.src_mesh : batch.meshes.src,
                     batch.meshes.dst, *plan});
  }
  return works;
}

std::vector<Client::CrossBatchTensor> CrossBatchTensors(
    const CrossBatch& batch, const std::vector<executor::CrossWork>& works) {
  std::vector<Client::CrossBatchTensor> tensors;
  for (size_t t = 0; t < works.size(); ++t) {
    const executor::CrossWork& w = works[t];
    tensors.push_back({batch.items[t].name, w.src_mesh, w.dst_mesh, w.plan});
  }
  return tensors;
}

absl::StatusOr<std::vector<Client::CrossBatchRequestTensor>> CrossBatchRequests(
    const CrossBatch& batch) {
  std::vector<Client::CrossBatchRequestTensor> tensors;
  for (size_t t = 0; t < batch.items.size(); ++t) {
    const CrossBatchItem& item = batch.items[t];
    if (!item.invalid.ok()) {
      return absl::Status(item.invalid.code(),
                          absl::StrCat("--batch: tensors[", t, "] (", item.name,
                                       "): ", item.invalid.message()));
    }
    tensors.push_back({item.name,
                       item.src_mesh ? *item.src_mesh : batch.meshes.src,
                       batch.meshes.dst, item.request});
  }
  return tensors;
}

bool HasCrossMeshFlag(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "--src_mesh" || a.rfind("--src_mesh=", 0) == 0) return true;
  }
  return false;
}

absl::Status RunCrossMeshPlan(const ServerFlags& server,
                              const std::vector<std::string>& argv,
                              std::ostream& out) {
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, CrossPlanFlags(), {"offline", "json"});
  if (!args.ok()) return args.status();
  absl::StatusOr<CrossMeshes> meshes = CrossMeshesFromFlags(*args);
  if (!meshes.ok()) return meshes.status();
  const Mesh& src = meshes->src;
  const Mesh& dst = meshes->dst;
  if (args->Has("batch")) return RunBatch(server, *args, *meshes, out);
  absl::StatusOr<CrossMeshPlan> plan =
      CrossPlanFromFlags(&server, *args, *meshes);
  if (!plan.ok()) return plan.status();
  if (args->Has("json")) {
    out << CrossPlanJson(src, dst, *plan) << "\n";
  } else {
    out << CrossPlanTable(src, dst, *plan);
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
