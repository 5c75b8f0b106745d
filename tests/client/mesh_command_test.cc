// `reshardctl mesh list|get` output (client/mesh_command.h): meshes that
// differ only in link overrides or rank map print differently, as a line
// and as JSON.
#include "client/mesh_command.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/plan_flags.h"
#include "gtest/gtest.h"
#include "tests/json_lite.h"

namespace reshard::client {
namespace {

using testing::Json;

Mesh MeshWith(std::vector<LinkParams> links, std::vector<int64_t> ranks) {
  MeshSpec spec;
  spec.shape = {2, 2};
  spec.dim_names = {"A", "B"};
  spec.flattened = {{"A", "B"}};
  spec.links = std::move(links);
  spec.rank_map = std::move(ranks);
  absl::StatusOr<Mesh> mesh = Mesh::Create(std::move(spec));
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

TEST(MeshCommandTest, LineShowsLinkOverridesAndRankMap) {
  EXPECT_EQ(MeshLine("m", MeshWith({}, {})), "m  A=2,B=2  flattened A_B");
  EXPECT_EQ(MeshLine("m", MeshWith({{100, 1.5}, {}}, {})),
            "m  A=2,B=2  flattened A_B  links A=100:1.5");
  EXPECT_EQ(MeshLine("m", MeshWith({{std::nullopt, 2}, {25, std::nullopt}},
                                   {3, 2, 1, 0})),
            "m  A=2,B=2  flattened A_B  links A=default:2 B=25:default  "
            "rank_map 3,2,1,0");
}

TEST(MeshCommandTest, FlattenedGroupLinksPrintAsLinkFlags) {
  MeshSpec spec;
  spec.shape = {2, 2};
  spec.dim_names = {"A", "B"};
  spec.flattened = {{"A", "B"}};
  spec.links = {{0.02, 80}, {}};
  spec.flattened_links = {{0.1, std::nullopt}};
  const Mesh mesh = Mesh::Create(spec).value();
  EXPECT_EQ(MeshLine("m", mesh),
            "m  A=2,B=2  flattened A_B  links A=0.02:80 A,B=0.1:default");
  const Json json = Json::Parse(MeshJson("m", mesh));
  ASSERT_EQ(json["links"].array.size(), 2u);
  EXPECT_EQ(json["links"].array[1]["group"].array[1].string, "B");
  EXPECT_DOUBLE_EQ(json["links"].array[1]["bandwidth_gbps"].number, 0.1);
}

// --link takes a dim or a --flatten group; what it prints it reads back.
TEST(MeshCommandTest, LinkFlagsNameDimsOrFlattenedGroups) {
  const std::vector<std::string> argv = {"--mesh", "A=2,B=2",   "--flatten",
                                         "A,B",    "--link",    "A=0.02:80",
                                         "--link", "A,B=0.1:30"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, PlanFlags(), {});
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->flattened_links()[0], LinkParams({0.1, 30}));
  EXPECT_EQ(LinkFlagValues(*mesh),
            std::vector<std::string>({"A=0.02:80", "A,B=0.1:30"}));
  const std::vector<std::string> bad = {"--mesh", "A=2,B=2", "--link",
                                        "B,A=0.1:30"};
  absl::StatusOr<Mesh> refused =
      MeshFromFlags(*CliArgs::Parse(bad, PlanFlags(), {}));
  EXPECT_EQ(refused.status().message(),
            "--link: \"B,A\" is neither a mesh dim nor a --flatten group");
}

// A third --link field is the group's all_to_all latency; any field may be
// `default`, as LinkFlagValues prints an unset one, so what it prints it
// reads back.
TEST(MeshCommandTest, LinkFlagsTakeAnAllToAllLatency) {
  const std::vector<std::string> argv = {
      "--mesh",    "A=2,B=2",
      "--flatten", "A,B",
      "--link",    "A=0.02:80:900",
      "--link",    "A,B=default:default:3100",
      "--link",    "B=default:5:default"};
  absl::StatusOr<Mesh> mesh =
      MeshFromFlags(*CliArgs::Parse(argv, PlanFlags(), {}));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->links()[0], LinkParams({0.02, 80, 900}));
  EXPECT_EQ(mesh->links()[1], LinkParams({std::nullopt, 5}));
  EXPECT_EQ(mesh->flattened_links()[0], LinkParams({.all_to_all_us = 3100}));
  const std::vector<std::string> values = LinkFlagValues(*mesh);
  EXPECT_EQ(values, std::vector<std::string>({"A=0.02:80:900", "B=default:5",
                                              "A,B=default:default:3100"}));
  std::vector<std::string> again = {"--mesh", "A=2,B=2", "--flatten", "A,B"};
  for (const std::string& v : values) {
    again.push_back("--link");
    again.push_back(v);
  }
  EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(again, PlanFlags(), {})).value(),
            *mesh);
  const Json json = Json::Parse(MeshJson("m", *mesh));
  EXPECT_DOUBLE_EQ(json["links"].array[0]["all_to_all_us"].number, 900);
  EXPECT_EQ(json["links"].array[1]["all_to_all_us"].kind, Json::Kind::kNull);
  for (const char* bad : {"A=1:2:3:4", "A=1", "A=1:2:soon"}) {
    const std::vector<std::string> refused = {"--mesh", "A=2", "--link", bad};
    EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(refused, PlanFlags(), {}))
                  .status()
                  .message(),
              absl::StrCat("--link: \"", bad,
                           "\" must be DIM=GBPS:US[:A2A_US] or "
                           "DIM,DIM...=GBPS:US[:A2A_US] (a field may be "
                           "default)"));
  }
  const std::vector<std::string> negative = {"--mesh", "A=2", "--link",
                                             "A=1:2:-3"};
  EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(negative, PlanFlags(), {}))
                .status()
                .message(),
            "mesh.links[0].all_to_all_us: must be in [0, 1e+09] us, got -3");
}

// --copy_gbps sets the mesh's copy rate; LinkFlags gives it back with the
// --link flags, as a links file holds them; list and get show it.
TEST(MeshCommandTest, CopyRateIsAFlagLikeTheLinks) {
  const std::vector<std::string> argv = {"--mesh",   "A=2",         "--link",
                                         "A=0.1:30", "--copy_gbps", "1.25"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, PlanFlags(), {});
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->copy_gbps(), 1.25);
  EXPECT_EQ(LinkFlags(*mesh),
            std::vector<std::string>({"--link A=0.1:30", "--copy_gbps 1.25"}));
  EXPECT_EQ(MeshLine("m", *mesh), "m  A=2  links A=0.1:30  copy_gbps 1.25");
  EXPECT_DOUBLE_EQ(Json::Parse(MeshJson("m", *mesh))["copy_gbps"].number, 1.25);
  for (const char* bad : {"fast", "0"}) {
    const std::vector<std::string> refused = {"--mesh", "A=2", "--copy_gbps",
                                              bad};
    EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(refused, PlanFlags(), {}))
                  .status()
                  .message(),
              std::string(bad) == "0"
                  ? "mesh.copy_gbps: must be in [1e-06, 1e+09] GB/s, got 0"
                  : "--copy_gbps: \"fast\" must be a number of GB/s");
  }
}

TEST(MeshCommandTest, BaseLatencyIsAFlagLikeTheCopyRate) {
  const std::vector<std::string> argv = {"--mesh", "A=2", "--base_us", "3900"};
  absl::StatusOr<Mesh> mesh =
      MeshFromFlags(*CliArgs::Parse(argv, PlanFlags(), {}));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->base_us(), 3900);
  EXPECT_EQ(LinkFlags(*mesh), std::vector<std::string>({"--base_us 3900"}));
  EXPECT_EQ(MeshLine("m", *mesh), "m  A=2  base_us 3900");
  EXPECT_DOUBLE_EQ(Json::Parse(MeshJson("m", *mesh))["base_us"].number, 3900);
  for (const char* bad : {"slow", "-1"}) {
    const std::vector<std::string> refused = {"--mesh", "A=2", "--base_us",
                                              bad};
    EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(refused, PlanFlags(), {}))
                  .status()
                  .message(),
              std::string(bad) == "-1"
                  ? "mesh.base_us: must be in [0, 1e+09] us, got -1"
                  : "--base_us: \"slow\" must be a number of us");
  }
}

// --reduce_gbps sets the mesh's reduction rate; LinkFlags gives it back
// after the other rates, as a links file holds them.
TEST(MeshCommandTest, ReductionRateIsAFlagLikeTheCopyRate) {
  const std::vector<std::string> argv = {"--mesh", "A=2",           "--base_us",
                                         "3900",   "--reduce_gbps", "0.6"};
  absl::StatusOr<Mesh> mesh =
      MeshFromFlags(*CliArgs::Parse(argv, PlanFlags(), {}));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->reduce_gbps(), 0.6);
  EXPECT_EQ(LinkFlags(*mesh),
            std::vector<std::string>({"--base_us 3900", "--reduce_gbps 0.6"}));
  EXPECT_EQ(MeshLine("m", *mesh), "m  A=2  base_us 3900  reduce_gbps 0.6");
  EXPECT_DOUBLE_EQ(Json::Parse(MeshJson("m", *mesh))["reduce_gbps"].number,
                   0.6);
  const std::vector<std::string> refused = {"--mesh", "A=2", "--reduce_gbps",
                                            "quick"};
  EXPECT_EQ(MeshFromFlags(*CliArgs::Parse(refused, PlanFlags(), {}))
                .status()
                .message(),
            "--reduce_gbps: \"quick\" must be a number of GB/s");
}

TEST(MeshCommandTest, JsonHasEveryField) {
  const Json plain = Json::Parse(MeshJson("m", MeshWith({}, {})));
  EXPECT_EQ(plain["mesh_id"].string, "m");
  EXPECT_EQ(plain["shape"].array.size(), 2u);
  EXPECT_EQ(plain["dim_names"].array[1].string, "B");
  EXPECT_EQ(plain["flattened"].array[0].array[1].string, "B");
  EXPECT_TRUE(plain["links"].array.empty());
  EXPECT_EQ(plain["copy_gbps"].kind, Json::Kind::kNull);
  EXPECT_EQ(plain["base_us"].kind, Json::Kind::kNull);
  EXPECT_EQ(plain["reduce_gbps"].kind, Json::Kind::kNull);
  EXPECT_EQ(plain["rank_map"].kind, Json::Kind::kNull);

  const Json linked = Json::Parse(
      MeshJson("m", MeshWith({{}, {12.5, std::nullopt}}, {1, 0, 3, 2})));
  ASSERT_EQ(linked["links"].array.size(), 1u);
  const Json& link = linked["links"].array[0];
  EXPECT_EQ(link["dim"].string, "B");
  EXPECT_DOUBLE_EQ(link["bandwidth_gbps"].number, 12.5);
  EXPECT_EQ(link["latency_us"].kind, Json::Kind::kNull);
  ASSERT_EQ(linked["rank_map"].array.size(), 4u);
  EXPECT_EQ(linked["rank_map"].array[0].Int(), 1);
}

}  // namespace
}  // namespace reshard::client
