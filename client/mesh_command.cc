#include "client/mesh_command.h"

#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "client/plan_flags.h"
#include "planner/format/plan_format.h"
#include "reshard/client.h"

namespace reshard::client {
namespace {

constexpr char kMeshUsage[] =
    "usage: reshardctl [global flags] mesh register --mesh A=2,B=2 "
    "[--flatten A,B]... [--link DIM[,DIM...]=GBPS:US[:A2A_US]]...\n"
    "         [--copy_gbps X] [--base_us X] [--reduce_gbps X]\n"
    "       reshardctl [global flags] mesh list [--json]\n"
    "       reshardctl [global flags] mesh get MESH_ID [--json]\n"
    "       reshardctl [global flags] mesh delete MESH_ID "
    "[--admin_token_file FILE] [--json]\n"
    "  The service's mesh registry. `register` prints the mesh's id (the\n"
    "  same for the same mesh on every replica); `plan --mesh_id ID` plans\n"
    "  on it. `list` and `get` print the id, dims, flattened groups, link\n"
    "  overrides (DIM=GBPS:US[:A2A_US], and A,B=... for a flattened group's\n"
    "  own link; A2A_US, an all_to_all's latency, only where measured;\n"
    "  `default` where the cost model's value applies), the local\n"
    "  copy rate (--copy_gbps, GB/s), every collective's base latency\n"
    "  (--base_us, µs), the reduction rate (--reduce_gbps, GB/s) and a\n"
    "  rank map other than the identity. `delete` sends the\n"
    "  admin token of FILE (or $RESHARD_ADMIN_TOKEN) to a planner started\n"
    "  with --admin_token_file.\n";

std::string LinkJsonFields(const LinkParams& link) {
  return absl::StrCat(
      "\"bandwidth_gbps\": ", FormatOptionalDouble(link.bandwidth_gbps, "null"),
      ", \"latency_us\": ", FormatOptionalDouble(link.latency_us, "null"),
      ", \"all_to_all_us\": ",
      FormatOptionalDouble(link.all_to_all_us, "null"));
}

std::string GroupNamesJson(const Mesh& mesh, const Group& group) {
  std::vector<std::string> names;
  for (int d : group) names.push_back(JsonString(mesh.dim_names()[d]));
  return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
}

// Dims' links ({"dim": ...}), then flattened groups' own ({"group": [...]}).
std::string LinksJson(const Mesh& mesh) {
  std::vector<std::string> links;
  for (int d = 0; d < mesh.ndim(); ++d) {
    const LinkParams& link = mesh.links()[d];
    if (link == LinkParams{}) continue;
    links.push_back(absl::StrCat("{\"dim\": ", JsonString(mesh.dim_names()[d]),
                                 ", ", LinkJsonFields(link), "}"));
  }
  for (size_t f = 0; f < mesh.flattened().size(); ++f) {
    const LinkParams& link = mesh.flattened_links()[f];
    if (link == LinkParams{}) continue;
    links.push_back(
        absl::StrCat("{\"group\": ", GroupNamesJson(mesh, mesh.flattened()[f]),
                     ", ", LinkJsonFields(link), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(links, ", "), "]");
}

}  // namespace

const char* MeshUsage() { return kMeshUsage; }

std::string MeshLine(const std::string& id, const Mesh& mesh) {
  std::vector<std::string> dims;
  for (int d = 0; d < mesh.ndim(); ++d) {
    dims.push_back(absl::StrCat(mesh.dim_names()[d], "=", mesh.size(d)));
  }
  std::vector<std::string> groups;
  for (const Group& g : mesh.flattened()) groups.push_back(mesh.GroupName(g));
  std::string line = absl::StrCat(id, "  ", absl::StrJoin(dims, ","));
  if (!groups.empty()) {
    absl::StrAppend(&line, "  flattened ", absl::StrJoin(groups, " "));
  }
  const std::vector<std::string> links = LinkFlagValues(mesh);
  if (!links.empty()) {
    absl::StrAppend(&line, "  links ", absl::StrJoin(links, " "));
  }
  if (mesh.copy_gbps().has_value()) {
    absl::StrAppend(&line, "  copy_gbps ",
                    FormatOptionalDouble(mesh.copy_gbps(), ""));
  }
  if (mesh.base_us().has_value()) {
    absl::StrAppend(&line, "  base_us ",
                    FormatOptionalDouble(mesh.base_us(), ""));
  }
  if (mesh.reduce_gbps().has_value()) {
    absl::StrAppend(&line, "  reduce_gbps ",
                    FormatOptionalDouble(mesh.reduce_gbps(), ""));
  }
  if (!mesh.has_identity_rank_map()) {
    absl::StrAppend(&line, "  rank_map ", absl::StrJoin(mesh.rank_map(), ","));
  }
  return line;
}

std::string MeshJson(const std::string& id, const Mesh& mesh) {
  std::vector<std::string> names;
  for (const std::string& name : mesh.dim_names()) {
    names.push_back(JsonString(name));
  }
  std::vector<std::string> flattened;
  for (const Group& g : mesh.flattened()) {
    flattened.push_back(GroupNamesJson(mesh, g));
  }
  return absl::StrCat(
      "{\"mesh_id\": ", JsonString(id), ", \"shape\": [",
      absl::StrJoin(mesh.shape(), ", "), "], \"dim_names\": [",
      absl::StrJoin(names, ", "), "], \"flattened\": [",
      absl::StrJoin(flattened, ", "), "], \"links\": ", LinksJson(mesh),
      ", \"copy_gbps\": ", FormatOptionalDouble(mesh.copy_gbps(), "null"),
      ", \"base_us\": ", FormatOptionalDouble(mesh.base_us(), "null"),
      ", \"reduce_gbps\": ", FormatOptionalDouble(mesh.reduce_gbps(), "null"),
      ", \"rank_map\": ",
      mesh.has_identity_rank_map()
          ? std::string("null")
          : absl::StrCat("[", absl::StrJoin(mesh.rank_map(), ", "), "]"),
      "}");
}

namespace {

absl::Status Register(Client& client, absl::Span<const std::string> argv,
                      std::ostream& out) {
  absl::StatusOr<CliArgs> args = CliArgs::Parse(
      argv, std::set<std::string>(std::begin(kMeshFlags), std::end(kMeshFlags)),
      {});
  if (!args.ok()) return args.status();
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<std::string> id = client.RegisterMesh(*mesh);
  if (!id.ok()) return id.status();
  out << *id << "\n";
  return absl::OkStatus();
}

absl::Status List(Client& client, bool json, std::ostream& out) {
  absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> meshes =
      client.ListMeshes();
  if (!meshes.ok()) return meshes.status();
  std::vector<std::string> items;
  for (const auto& [id, mesh] : *meshes) {
    if (json) {
      items.push_back(MeshJson(id, mesh));
    } else {
      out << MeshLine(id, mesh) << "\n";
    }
  }
  if (json) out << "{\"meshes\": [" << absl::StrJoin(items, ", ") << "]}\n";
  return absl::OkStatus();
}

absl::Status GetOrDelete(Client& client, const std::string& verb,
                         const std::string& id, bool json, std::ostream& out) {
  if (verb == "delete") {
    absl::Status s = client.DeleteMesh(id);
    if (s.ok() && json) out << "{\"deleted\": " << JsonString(id) << "}\n";
    if (s.ok() && !json) out << "deleted " << id << "\n";
    return s;
  }
  absl::StatusOr<Mesh> mesh = client.GetMesh(id);
  if (!mesh.ok()) return mesh.status();
  out << (json ? MeshJson(id, *mesh) : MeshLine(id, *mesh)) << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::Status RunMeshCommand(const ServerFlags& server,
                            const std::vector<std::string>& argv,
                            std::ostream& out) {
  const std::string verb = argv.empty() ? "" : argv[0];
  if (verb != "register" && verb != "list" && verb != "get" &&
      verb != "delete") {
    return absl::InvalidArgumentError(
        absl::StrCat("mesh: expected register, list, get or delete",
                     verb.empty() ? "" : absl::StrCat(", not \"", verb, "\"")));
  }
  const auto rest = absl::MakeConstSpan(argv).subspan(1);
  std::vector<std::string> positional;
  if ((verb == "get" || verb == "delete") && !rest.empty() &&
      rest[0].rfind("--", 0) != 0) {
    positional.push_back(rest[0]);
  }
  absl::StatusOr<CliArgs> args;
  if (verb != "register") {
    args = CliArgs::Parse(rest.subspan(positional.size()), {},
                          std::set<std::string>{"json"});
    if (!args.ok()) return args.status();
  }
  if ((verb == "get" || verb == "delete") && positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("mesh ", verb, ": MESH_ID is required"));
  }
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  if (verb == "register") return Register(**client, rest, out);
  const bool json = args->Has("json");
  if (verb == "list") return List(**client, json, out);
  return GetOrDelete(**client, verb, positional[0], json, out);
}

}  // namespace reshard::client
