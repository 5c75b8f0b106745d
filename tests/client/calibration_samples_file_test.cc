// A calibration printed with --json reads back into the same samples
// (group, size index, op, bytes, packed bytes, time), so that refitting a
// saved sweep gives the links and copy rate the sweep gave; bad files
// name the field. A fit that predicts its held-out sizes badly is warned
// about, and fails the command past --max_error; flags are printed to 4
// significant digits.
#include "client/calibration_samples_file.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "client/calibrate_command.h"
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

// Samples(mesh) with group A's all_gather twice as slow at the odd sizes:
// fitted on the even ones, it mispredicts them by half.
std::vector<CalibrationSample> NoisySamples(const Mesh& mesh) {
  std::vector<CalibrationSample> samples = Samples(mesh);
  for (CalibrationSample& s : samples) {
    if (mesh.GroupName(s.group) == "A" && s.size_index % 2 == 1 &&
        s.sample.op == StepOp::kAllGather && s.sample.packed_bytes == 0) {
      s.sample.time_us *= 2;
    }
  }
  return samples;
}

std::string TextOf(const std::vector<CalibrationSample>& s,
                   const Calibration& c) {
  std::ostringstream out;
  PrintCalibrationText({"j", {4096, 65536, 1048576, 16777216}, s, &c}, out);
  return out.str();
}

// Samples(mesh) fit within 28% everywhere; NoisySamples puts group A's
// all_gather above 60%: past a bound between the two only that group and
// op is named, and the text warns about every group above 25%.
TEST(CalibrationOutputTest, APoorFitIsNamedByGroupAndOp) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const std::vector<CalibrationSample> clean = Samples(mesh);
  const absl::StatusOr<Calibration> good = Calibrate(mesh, clean);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(PoorFits(*good, 0.5).empty()) << TextOf(clean, *good);
  const std::vector<CalibrationSample> noisy = NoisySamples(mesh);
  const absl::StatusOr<Calibration> poor = Calibrate(mesh, noisy);
  ASSERT_TRUE(poor.ok()) << poor.status();
  const std::vector<std::string> lines = PoorFits(*poor, 0.5);
  ASSERT_EQ(lines.size(), 1u) << TextOf(noisy, *poor);
  EXPECT_TRUE(std::regex_match(
      lines[0],
      std::regex(
          R"(group A: held-out error all_gather [0-9.]+% \(above 50\.0%\))")))
      << lines[0];
  const std::string text = TextOf(noisy, *poor);
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(\nwarning \[poor_fit\]: group A: held-out error )"
                       R"(all_gather [0-9.]+% \(above 25\.0%\): its links )"
                       R"(mispredict; calibrate again)")))
      << text;
  EXPECT_NE(JsonOf(noisy, *poor).find("\"poor_fits\": [\"group A: "),
            std::string::npos);
}

TEST(CalibrationOutputTest, FlagsArePrintedToFourSignificantDigits) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const std::vector<CalibrationSample> samples = Samples(mesh);
  const absl::StatusOr<Calibration> c = Calibrate(mesh, samples);
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string text = TextOf(samples, *c);
  const size_t links = text.find("links: ");
  ASSERT_NE(links, std::string::npos) << text;
  const std::string line = text.substr(links, text.find('\n', links) - links);
  // Every number on the line: at most 4 significant digits.
  const std::regex number(R"([0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?)");
  int numbers = 0;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), number);
       it != std::sregex_iterator(); ++it, ++numbers) {
    std::string mantissa = it->str().substr(0, it->str().find('e'));
    mantissa.erase(std::remove(mantissa.begin(), mantissa.end(), '.'),
                   mantissa.end());
    mantissa.erase(0, mantissa.find_first_not_of('0'));
    EXPECT_LE(mantissa.size(), 4u) << it->str() << " in " << line;
  }
  EXPECT_GE(numbers, 4) << line;
  // Rounded, they still describe the same links to 1 part in 1000.
  const Mesh pasted = ForPasting(c->mesh);
  ASSERT_TRUE(pasted.copy_gbps().has_value());
  EXPECT_NEAR(*pasted.copy_gbps(), *c->mesh.copy_gbps(),
              1e-3 * *c->mesh.copy_gbps());
}

TEST(CalibrationOutputTest, MaxErrorFailsTheCommandAfterTheOutput) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const std::vector<CalibrationSample> noisy = NoisySamples(mesh);
  const absl::StatusOr<Calibration> poor = Calibrate(mesh, noisy);
  ASSERT_TRUE(poor.ok()) << poor.status();
  const std::string file = ::testing::TempDir() + "/noisy-calibration.json";
  std::ofstream(file) << JsonOf(noisy, *poor);
  const auto run = [&](std::vector<std::string> more, std::string& out) {
    std::vector<std::string> argv = {"--mesh", "A=2,B=4",        "--flatten",
                                     "A,B",    "--samples_from", file};
    argv.insert(argv.end(), more.begin(), more.end());
    std::ostringstream text;
    absl::Status s = RunCalibrate(ServerFlags{}, "j", argv, text);
    out = text.str();
    return s;
  };
  std::string out;
  EXPECT_TRUE(run({}, out).ok());
  EXPECT_NE(out.find("warning [poor_fit]: group A"), std::string::npos) << out;
  const absl::Status failed = run({"--max_error", "0.25"}, out);
  EXPECT_EQ(failed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(failed.message().rfind("--max_error=0.25: group A: held-out "
                                   "error all_gather ",
                                   0),
            0u)
      << failed.message();
  EXPECT_NE(out.find("links: --link A="), std::string::npos) << out;
  EXPECT_TRUE(run({"--max_error", "0.9"}, out).ok());
  const absl::Status bad = run({"--max_error", "0"}, out);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(),
            "--max_error: \"0\" is not a fraction above 0 (0.25 allows 25% "
            "held-out error)");
  std::remove(file.c_str());
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
