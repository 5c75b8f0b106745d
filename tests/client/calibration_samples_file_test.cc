// A calibration printed with --json reads back into the same samples
// (group, size index, op, bytes, packed bytes, time), so that refitting a
// saved sweep gives the links and copy rate the sweep gave; bad files
// name the field.
#include "client/calibration_samples_file.h"

#include <sstream>

#include "client/calibration_output.h"
#include "gtest/gtest.h"
#include "tests/planner/test_util.h"

namespace reshard::client {
namespace {

using reshard::testing::MakeMesh;

// Every op on A, B and A_B at 4 sizes, timed 100 µs + 1 µs per KiB; and
// strided gathers, which take 1 µs more per KiB.
std::vector<CalibrationSample> Samples(const Mesh& mesh) {
  std::vector<CalibrationSample> samples;
  for (const Group& g : CalibrationGroups(mesh)) {
    for (StepOp op : kCalibratedOps) {
      int64_t bytes = 4096;
      for (int i = 0; i < 4; ++i, bytes *= 16) {
        const double us = 100.0 * static_cast<double>(g.size()) +
                          static_cast<double>(bytes) / 1024;
        samples.push_back({g, i, {op, mesh.GroupSize(g), bytes, us}});
      }
    }
    int64_t bytes = 4096;
    for (int i = 0; i < 4; ++i, bytes *= 16) {
      const double us = 100.0 * static_cast<double>(g.size()) +
                        static_cast<double>(bytes) / 512;
      samples.push_back({g,
                         i,
                         {StepOp::kAllGather, mesh.GroupSize(g), bytes, us,
                          /*packed_bytes=*/bytes}});
    }
  }
  return samples;
}

std::string JsonOf(const std::vector<CalibrationSample>& s,
                   const Calibration& c) {
  std::ostringstream out;
  PrintCalibrationJson({"j", {4096, 65536, 1048576, 16777216}, s, &c}, out);
  return out.str();
}

TEST(CalibrationSamplesFileTest, ASavedSweepReadsBackAndRefitsTheSame) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const std::vector<CalibrationSample> samples = Samples(mesh);
  const absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  ASSERT_TRUE(c.ok()) << c.status();
  const absl::StatusOr<SavedSweep> read =
      ParseCalibrationJson(JsonOf(samples, *c), mesh);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->sizes,
            std::vector<int64_t>({4096, 65536, 1048576, 16777216}));
  ASSERT_EQ(read->samples.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const CalibrationSample& a = samples[i];
    const CalibrationSample& b = read->samples[i];
    EXPECT_EQ(b.group, a.group) << i;
    EXPECT_EQ(b.size_index, a.size_index) << i;
    EXPECT_EQ(b.sample.op, a.sample.op) << i;
    EXPECT_EQ(b.sample.members, a.sample.members) << i;
    EXPECT_EQ(b.sample.bytes, a.sample.bytes) << i;
    EXPECT_EQ(b.sample.packed_bytes, a.sample.packed_bytes) << i;
    EXPECT_NEAR(b.sample.time_us, a.sample.time_us, 1e-9 * a.sample.time_us);
  }
  ASSERT_TRUE(c->mesh.copy_gbps().has_value());
  const absl::StatusOr<Calibration> again = Calibrate(mesh, read->samples);
  ASSERT_TRUE(again.ok()) << again.status();
  for (size_t g = 0; g < c->groups.size(); ++g) {
    const LinkFit& want = c->groups[g].fit;
    const LinkFit& got = again->groups[g].fit;
    EXPECT_NEAR(got.bandwidth_gbps, want.bandwidth_gbps,
                1e-9 * want.bandwidth_gbps);
    EXPECT_NEAR(got.latency_us, want.latency_us, 1e-9 * want.latency_us + 1e-9);
    EXPECT_EQ(again->groups[g].own_link, c->groups[g].own_link);
  }
  EXPECT_NEAR(*again->mesh.copy_gbps(), *c->mesh.copy_gbps(),
              1e-9 * *c->mesh.copy_gbps());
}

TEST(CalibrationSamplesFileTest, BadFilesNameTheField) {
  const Mesh mesh = MakeMesh({2, 4});
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {R"({"groups": []})", "sizes: is required"},
      {R"({"sizes": [4096.5], "groups": []})", "sizes[0]: not an integer"},
      {R"({"sizes": [4096], "groups": [{"group": "A_B", "samples": []}]})",
       "groups[0].group: \"A_B\" is not calibrated on this mesh"},
      {R"({"sizes": [4096], "groups": [{"group": "A", "samples":
          [{"op": "chunk", "bytes": 4096, "measured_us": 1}]}]})",
       "groups[0].samples[0].op: \"chunk\" is not a calibrated op"},
      {R"({"sizes": [4096], "groups": [{"group": "B", "samples":
          [{"op": "all_gather", "bytes": 4096}]}]})",
       "groups[0].samples[0].measured_us: is required"},
      {R"({"sizes": [4096], "groups": [{"group": "B", "samples": {}}]})",
       "groups[0].samples: not an array"},
      {R"({"sizes": 4096, "groups": []})", "sizes: not an array"},
      {R"({"sizes": [4096], "groups": [{"group": "B", "samples":
          [{"op": "all_gather", "bytes": 4096, "measured_us": 1,
            "packed_bytes": -1}]}]})",
       "groups[0].samples[0].packed_bytes: not a non-negative integer"},
  };
  for (const auto& c : cases) {
    const absl::StatusOr<SavedSweep> read = ParseCalibrationJson(c.text, mesh);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument)
        << c.text;
    EXPECT_EQ(read.status().message(), c.error) << c.text;
  }
}

TEST(CalibrationSamplesFileTest, AMissingFileIsNotFoundNamingIt) {
  const absl::StatusOr<SavedSweep> read =
      ReadCalibrationJson("/nonexistent/calibration.json", MakeMesh({2}));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(),
            "--samples_from: cannot read \"/nonexistent/calibration.json\"");
}

}  // namespace
}  // namespace reshard::client
