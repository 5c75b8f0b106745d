// Calibrate turns timings into a mesh's links: synthetic timings made from
// known links (and all_to_all latencies) give them back exactly, a
// flattened group gets its own link only when its dims' links mispredict
// it, and held-out sizes are predicted by a fit that never saw them.
#include "planner/cost/link_calibration.h"

#include "gtest/gtest.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/cost_model.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

constexpr LinkParams kHosts{0.025, 80};  // A: between hosts
constexpr LinkParams kLocal{0.5, 20};    // B: within a host

// `mesh` with A's and B's links and, for its flattened groups, `own`.
Mesh TrueMesh(const Mesh& mesh, const LinkParams& own) {
  MeshSpec spec = mesh.ToSpec();
  spec.links = {kHosts, kLocal};
  spec.flattened_links.assign(mesh.flattened().size(), own);
  return *Mesh::Create(spec);
}

// Every op at 4 KiB .. 64 MiB on `group`, timed as the α-β model prices it
// on `truth`.
void AddTimings(const Mesh& truth, const Group& group,
                std::vector<CalibrationSample>& samples) {
  const TensorSpec unused = *TensorSpec::Create({1}, DType::kFloat32);
  const CostModel model(truth, unused, CostOptions{});
  int index = 0;
  for (int64_t bytes = 4096; bytes <= (64 << 20); bytes *= 4, ++index) {
    for (StepOp op : kCalibratedOps) {
      LinkSample s{op, truth.GroupSize(group), bytes, 0};
      s.time_us = model.CollectiveTime(op, group, bytes);
      samples.push_back({group, index, s});
    }
  }
}

// Strided all_gathers at 4 KiB .. 64 MiB on `group`: the collective as
// the model prices it on `truth`, and their output unpacked at its copy
// rate.
void AddStridedGathers(const Mesh& truth, const Group& group,
                       std::vector<CalibrationSample>& samples) {
  const TensorSpec unused = *TensorSpec::Create({1}, DType::kFloat32);
  const CostModel model(truth, unused, CostOptions{});
  int index = 0;
  for (int64_t bytes = 4096; bytes <= (64 << 20); bytes *= 4, ++index) {
    LinkSample s{StepOp::kAllGather, truth.GroupSize(group), bytes, 0, bytes};
    s.time_us = model.CollectiveTime(s.op, group, bytes) +
                static_cast<double>(bytes) * model.PackingUsPerByte();
    samples.push_back({group, index, s});
  }
}

// Every group of `truth` (A, B and A_B flattened), timed on it.
std::vector<CalibrationSample> TimingsOn(const Mesh& truth) {
  std::vector<CalibrationSample> samples;
  for (const Group& g : {Group{0}, Group{1}, Group{0, 1}}) {
    AddTimings(truth, g, samples);
  }
  return samples;
}

// Every group of `mesh`, the flattened group's rings over `flattened`.
std::vector<CalibrationSample> Timings(const Mesh& mesh,
                                       const LinkParams& flattened) {
  return TimingsOn(TrueMesh(mesh, flattened));
}

void ExpectLink(const LinkParams& got, const LinkParams& want) {
  ASSERT_TRUE(got.bandwidth_gbps.has_value());
  ASSERT_TRUE(got.latency_us.has_value());
  EXPECT_NEAR(*got.bandwidth_gbps, *want.bandwidth_gbps,
              *want.bandwidth_gbps * 1e-9);
  EXPECT_NEAR(*got.latency_us, *want.latency_us, *want.latency_us * 1e-9);
}

TEST(LinkCalibrationTest, RecoversDimLinksAndAFlattenedGroupsOwn) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};  // faster than A's link: one flow per host
  absl::StatusOr<Calibration> c = Calibrate(mesh, Timings(mesh, ring));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectLink(c->mesh.links()[0], kHosts);
  ExpectLink(c->mesh.links()[1], kLocal);
  ExpectLink(c->mesh.flattened_links()[0], ring);
  ASSERT_EQ(c->groups.size(), 3u);
  EXPECT_TRUE(c->groups[2].own_link);
  EXPECT_GT(c->groups[2].dims_error, kOwnLinkError);
  for (const GroupCalibration& g : c->groups) {
    for (double e : g.held_out_error) EXPECT_NEAR(e, 0, 1e-9);
    EXPECT_NEAR(g.fit.median_abs_error, 0, 1e-9);
    EXPECT_NEAR(g.median_abs_error, 0, 1e-9);
    // 8 sizes: the fit on sizes 0, 2, 4, 6 predicts 1, 3, 5, 7 of each op.
    for (const std::vector<double>& errors : g.held_out_errors) {
      EXPECT_EQ(errors.size(), 4u);
    }
  }
  for (double e : c->held_out_error) EXPECT_NEAR(e, 0, 1e-9);
}

// Strided gathers give the copy rate; they leave the links and the
// per-op errors, which read the other samples, as they were.
TEST(LinkCalibrationTest, RecoversTheCopyRateFromStridedGathers) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};
  std::vector<CalibrationSample> samples = Timings(mesh, ring);
  EXPECT_FALSE(Calibrate(mesh, samples)->mesh.copy_gbps().has_value());
  EXPECT_EQ(Calibrate(mesh, samples)->copy_error, -1);
  MeshSpec spec = TrueMesh(mesh, ring).ToSpec();
  spec.copy_gbps = 1.5;
  const Mesh truth = *Mesh::Create(spec);
  for (const Group& g : {Group{0}, Group{1}, Group{0, 1}}) {
    AddStridedGathers(truth, g, samples);
  }
  absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->mesh.copy_gbps().has_value());
  EXPECT_NEAR(*c->mesh.copy_gbps(), 1.5, 1.5e-9);
  EXPECT_NEAR(c->copy_error, 0, 1e-9);
  EXPECT_NEAR(c->copy_held_out_error, 0, 1e-9);
  // Without a copy rate the 64 MiB strided gathers are mispredicted.
  EXPECT_GT(c->copy_error_unpriced, 0.05);
  ExpectLink(c->mesh.links()[0], kHosts);
  ExpectLink(c->mesh.links()[1], kLocal);
  ExpectLink(c->mesh.flattened_links()[0], ring);
  for (const GroupCalibration& g : c->groups) {
    EXPECT_NEAR(g.median_abs_error, 0, 1e-9);
    for (const std::vector<double>& errors : g.held_out_errors) {
      EXPECT_EQ(errors.size(), 4u);
    }
  }
}

// Timings with a base latency of the series calibration tries give it back,
// and the links with it.
TEST(LinkCalibrationTest, RecoversTheBaseLatency) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};
  double base = kBaseLatencyUs;
  for (int i = 0; i < 24; ++i) base *= kBaseLatencyStep;  // about 422 µs
  MeshSpec spec = TrueMesh(mesh, ring).ToSpec();
  spec.base_us = base;
  absl::StatusOr<Calibration> c =
      Calibrate(mesh, TimingsOn(*Mesh::Create(spec)));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->mesh.base_us().has_value());
  EXPECT_NEAR(*c->mesh.base_us(), base, base * 1e-12);
  ExpectLink(c->mesh.links()[0], kHosts);
  ExpectLink(c->mesh.links()[1], kLocal);
  ExpectLink(c->mesh.flattened_links()[0], ring);
  for (double e : c->held_out_error) EXPECT_NEAR(e, 0, 1e-9);
  // Timings at kBaseLatencyUs give none: the mesh keeps its default.
  EXPECT_FALSE(
      Calibrate(mesh, Timings(mesh, ring))->mesh.base_us().has_value());
}

// Timings whose reduce_scatters and all_reduces also reduce at a known
// rate give it back, and the links under it: the reduction is taken off
// before the links are fitted. Timings without it give none.
TEST(LinkCalibrationTest, RecoversTheReductionRate) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};
  EXPECT_FALSE(
      Calibrate(mesh, Timings(mesh, ring))->mesh.reduce_gbps().has_value());
  MeshSpec spec = TrueMesh(mesh, ring).ToSpec();
  spec.reduce_gbps = 0.6;
  absl::StatusOr<Calibration> c =
      Calibrate(mesh, TimingsOn(*Mesh::Create(spec)));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->mesh.reduce_gbps().has_value());
  EXPECT_NEAR(*c->mesh.reduce_gbps(), 0.6, 0.6e-9);
  EXPECT_FALSE(c->mesh.base_us().has_value());
  ExpectLink(c->mesh.links()[0], kHosts);
  ExpectLink(c->mesh.links()[1], kLocal);
  ExpectLink(c->mesh.flattened_links()[0], ring);
  for (const GroupCalibration& g : c->groups) {
    EXPECT_NEAR(g.median_abs_error, 0, 1e-9);
  }
  for (double e : c->held_out_error) EXPECT_NEAR(e, 0, 1e-9);
}

TEST(LinkCalibrationTest, HeldOutErrorsPoolEveryGroupPerOp) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  std::vector<CalibrationSample> samples = Timings(mesh, {0.1, 30});
  // B's all_gather at the held-out sizes takes twice the model's time:
  // its error is -50% there, and B's other ops and every other group fit.
  for (CalibrationSample& s : samples) {
    if (s.group == Group({1}) && s.sample.op == StepOp::kAllGather &&
        s.size_index % 2 == 1) {
      s.sample.time_us *= 2;
    }
  }
  absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->groups[1].held_out_error[0], 0.5, 1e-9);
  EXPECT_NEAR(c->groups[1].held_out_error[2], 0, 1e-9);
  // Pooled over three groups, 4 of 12 all_gather errors are 50%: median 0.
  EXPECT_NEAR(c->held_out_error[0], 0, 1e-9);
  EXPECT_NEAR(c->held_out_error[1], 0, 1e-9);
}

// Each group's all_to_all latency is fitted to its all_to_alls, whose
// bytes its dims' links price: timings with latencies of their own (not
// one hop's) give them back, and the links as before.
TEST(LinkCalibrationTest, RecoversEachGroupsAllToAllLatency) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};
  MeshSpec spec = TrueMesh(mesh, ring).ToSpec();
  spec.links[0].all_to_all_us = 900;
  spec.links[1].all_to_all_us = 3800;
  spec.flattened_links[0].all_to_all_us = 3100;
  absl::StatusOr<Calibration> c =
      Calibrate(mesh, TimingsOn(*Mesh::Create(spec)));
  ASSERT_TRUE(c.ok()) << c.status();
  const double want[] = {900, 3800, 3100};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(c->groups[i].all_to_all_us.has_value());
    EXPECT_NEAR(*c->groups[i].all_to_all_us, want[i], want[i] * 1e-9);
    EXPECT_NEAR(c->groups[i].median_abs_error, 0, 1e-9);
  }
  EXPECT_NEAR(*c->mesh.links()[0].all_to_all_us, 900, 900 * 1e-9);
  EXPECT_NEAR(*c->mesh.links()[1].all_to_all_us, 3800, 3800 * 1e-9);
  EXPECT_NEAR(*c->mesh.flattened_links()[0].all_to_all_us, 3100, 3100 * 1e-9);
  ExpectLink(c->mesh.links()[0], kHosts);
  ExpectLink(c->mesh.flattened_links()[0], ring);
  for (double e : c->held_out_error) EXPECT_NEAR(e, 0, 1e-9);
  // Timings of one hop give the hop's latency: A's 80 µs.
  c = Calibrate(mesh, Timings(mesh, ring));
  EXPECT_NEAR(*c->mesh.links()[0].all_to_all_us, 80, 80 * 1e-9);
}

// All_to_alls whose time grows faster with bytes than their dims' links say
// are mispredicted: a latency cannot absorb bytes, and the held-out error
// shows it.
TEST(LinkCalibrationTest, AFlattenedAllToAllsBytesFollowItsDims) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const LinkParams ring{0.1, 30};
  std::vector<CalibrationSample> samples = Timings(mesh, ring);
  for (CalibrationSample& s : samples) {
    if (s.group == Group({0, 1}) && s.sample.op == StepOp::kAllToAll) {
      s.sample.time_us *= 2;
    }
  }
  absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectLink(c->mesh.flattened_links()[0], ring);
  const GroupCalibration& flat = c->groups[2];
  EXPECT_GT(flat.held_out_error[3], 0.1);
  EXPECT_NEAR(flat.held_out_error[0], 0, 1e-9);
}

TEST(LinkCalibrationTest, AGroupItsDimsPredictGetsNoOwnLink) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  // A ring over both dims as slow as the slower one: what the model says.
  const LinkParams slowest{kHosts.bandwidth_gbps, kHosts.latency_us};
  absl::StatusOr<Calibration> c = Calibrate(mesh, Timings(mesh, slowest));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->groups[2].own_link);
  EXPECT_NEAR(c->groups[2].dims_error, 0, 1e-9);
  // Only its all_to_all latency, which the dims' (80 µs) predicts.
  EXPECT_EQ(c->mesh.flattened_links()[0].bandwidth_gbps, std::nullopt);
  EXPECT_EQ(c->mesh.flattened_links()[0].latency_us, std::nullopt);
  EXPECT_NEAR(*c->mesh.flattened_links()[0].all_to_all_us, 80, 80 * 1e-9);
}

TEST(LinkCalibrationTest, RefusesSamplesOfGroupsItDoesNotCalibrate) {
  const Mesh mesh = MakeMesh({2, 4});
  std::vector<CalibrationSample> samples;
  AddTimings(TrueMesh(mesh, {}), {0, 1}, samples);
  absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "samples[0]: group A_B is not calibrated on this mesh");
}

TEST(LinkCalibrationTest, AGroupWithoutTimingsFailsNamingIt) {
  const Mesh mesh = MakeMesh({2, 4});
  std::vector<CalibrationSample> samples;
  AddTimings(TrueMesh(mesh, {}), {0}, samples);
  absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("group B: "), std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace reshard
