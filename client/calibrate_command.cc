#include "client/calibrate_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/calibration_output.h"
#include "client/calibration_samples_file.h"
#include "client/plan_flags.h"
#include "common/median.h"
#include "planner/cost/calibration_plans.h"
#include "planner/cost/link_calibration.h"
#include "reshard/client.h"

namespace reshard::client {

const char kCalibrateUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job calibrate NAME\n"
    "         --mesh A=2,B=4 [--flatten A,B]... [--min_bytes B]\n"
    "         [--max_bytes B] [--iters K] [--warmup W] [--timeout_seconds T]\n"
    "         [--small_passes P] [--links_file FILE] [--json]\n"
    "         [--samples_from FILE] [--max_error E]\n"
    "  Measures the links of job NAME's mesh: every collective (all_gather,\n"
    "  reduce_scatter, all_reduce, all_to_all) on every dim of size > 1 and\n"
    "  every --flatten group, at sizes B, 4B, 16B, ... from --min_bytes\n"
    "  (4096) to --max_bytes (64MiB; byte counts take KiB, MiB, GiB or TiB),\n"
    "  each an ordinary run of a one-step\n"
    "  plan on the job's agents (K timed runs after W warm-up runs: 5, 1;\n"
    "  4K timed runs below 1 MiB, where times vary most and cost least,\n"
    "  and there P separate passes over the sweep (3), each sample the\n"
    "  median of its passes, as which scheduler ticks a run sees changes\n"
    "  from run to run;\n"
    "  T bounds every collective: 30 s; --deadline_seconds bounds each run:\n"
    "  300 s). Fits each group's latency per round and bandwidth to the\n"
    "  α-β model (robust least squares on relative error; a flattened\n"
    "  group's all_to_all is predicted from its dims' links, not fitted)\n"
    "  and prints the fit, its median error, the median error per op on the\n"
    "  odd sizes of fits on the even ones, and the --link flags of the\n"
    "  measured links: one per dim, and one per flattened group whose dims'\n"
    "  links mispredict its rings by more than 10%. Each group also runs a\n"
    "  strided all_gather (S(1) -> R, blocks unpacked) at each size; their\n"
    "  time beyond the contiguous gather's gives the rate a rank copies at\n"
    "  (--copy_gbps, the median per byte over those of >= 1 MiB). A\n"
    "  reduce_scatter's time beyond the contiguous gather's of the same\n"
    "  bytes gives the rate a rank reduces at (--reduce_gbps, the median per\n"
    "  reduced byte over those of >= 1 MiB; none where they take no\n"
    "  longer), taken off reduce_scatters and all_reduces before links are\n"
    "  fitted to them. The base\n"
    "  latency every collective pays (--base_us) is the one that, with links\n"
    "  fitted under it, predicts every sample best (all_to_alls included).\n"
    "  --links_file FILE writes those flags, one per line, for\n"
    "  `mesh register` and `plan`. Progress\n"
    "  goes to stderr. --samples_from FILE fits the samples of an earlier\n"
    "  --json output on this mesh instead of running a sweep (no server).\n"
    "  Flags are printed to 4 significant digits; a group whose held-out\n"
    "  error on an op is above 25% is warned about (poor_fit), and with\n"
    "  --max_error E (a fraction: 0.25) one above E fails the command\n"
    "  (exit 5) after the output.\n";

namespace {

constexpr int kDefaultMinBytes = 4096;
constexpr int kDefaultMaxBytes = 64 << 20;
constexpr int kDefaultIters = 5;
constexpr int kDefaultWarmup = 1;
constexpr int kDefaultTimeoutSeconds = 30;
constexpr int kDefaultRunDeadlineSeconds = 300;
// Small sizes are latency: their times vary most between runs (a woken rank
// may wait for a core) and cost least, so they run this many times more.
constexpr int64_t kManyItersBelowBytes = 1 << 20;
constexpr int kSmallSizeItersFactor = 4;
// ... and in this many separate passes over the sweep: the ticks a run
// waits for change from run to run, not with the size
// (docs/notes/2026-11-29-calibrated-again.md, "Calibrated again").
constexpr int kDefaultSmallPasses = 3;

struct CalibrateFlags {
  int64_t min_bytes = kDefaultMinBytes;
  int64_t max_bytes = kDefaultMaxBytes;
  int small_passes = kDefaultSmallPasses;
  JobRunOptions run;
  std::string links_file;
  std::string samples_from;
  bool json = false;
  // --max_error: fail when a held-out error is above it (a fraction).
  std::optional<double> max_error;
};

// --max_error's fraction into `out` when given.
absl::Status ParseMaxError(const CliArgs& args, std::optional<double>& out) {
  const std::optional<std::string> text = args.Get("max_error");
  if (!text.has_value()) return absl::OkStatus();
  double fraction = 0;
  if (!absl::SimpleAtod(*text, &fraction) || !(fraction > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_error: \"", *text,
        "\" is not a fraction above 0 (0.25 allows 25% held-out error)"));
  }
  out = fraction;
  return absl::OkStatus();
}

// FAILED_PRECONDITION naming the groups whose held-out error is above
// --max_error, or OK.
absl::Status CheckMaxError(const Calibration& calibration,
                           std::optional<double> max_error) {
  if (!max_error.has_value()) return absl::OkStatus();
  const std::vector<std::string> poor = PoorFits(calibration, *max_error);
  if (poor.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "--max_error=", *max_error, ": ", absl::StrJoin(poor, "; ")));
}

absl::StatusOr<CalibrateFlags> ParseCalibrateFlags(const CliArgs& args,
                                                   const ServerFlags& server) {
  CalibrateFlags flags;
  flags.run.iters = kDefaultIters;
  flags.run.warmup = kDefaultWarmup;
  int timeout = kDefaultTimeoutSeconds;
  for (absl::Status s :
       {ParseByteFlag(args, "min_bytes", 4, flags.min_bytes),
        ParseByteFlag(args, "max_bytes", 4, flags.max_bytes),
        ParseIntFlag(args, "iters", 1, flags.run.iters),
        ParseIntFlag(args, "warmup", 0, flags.run.warmup),
        ParseIntFlag(args, "small_passes", 1, flags.small_passes),
        ParseIntFlag(args, "timeout_seconds", 1, timeout),
        ParseMaxError(args, flags.max_error)}) {
    if (!s.ok()) return s;
  }
  flags.run.timeout_seconds = timeout;
  flags.run.deadline =
      server.deadline.value_or(absl::Seconds(kDefaultRunDeadlineSeconds));
  flags.links_file = args.Get("links_file").value_or("");
  flags.samples_from = args.Get("samples_from").value_or("");
  flags.json = args.Has("json");
  return flags;
}

// One run of the sweep: `plan` (`what` names it) on `group` at
// sizes[index] (`bytes`).
absl::StatusOr<CalibrationSample> TimeOne(
    Client& client, const std::string& job, const Mesh& mesh,
    const Group& group, const std::string& what, const Plan& plan,
    int64_t bytes, int index, const JobRunOptions& options) {
  const Step& step = plan.steps[0];
  JobRunOptions sized = options;
  if (bytes < kManyItersBelowBytes) sized.iters *= kSmallSizeItersFactor;
  absl::StatusOr<JobRun> run = client.RunJob(job, mesh, plan, sized);
  if (!run.ok()) {
    return absl::Status(run.status().code(),
                        absl::StrCat(what, ": ", run.status().message()));
  }
  if (!run->summary.validated || run->summary.rows.size() != 1) {
    return absl::DataLossError(absl::StrCat(
        what, ": the run did not validate: ", run->summary.why_not));
  }
  const executor::SummaryRow& row = run->summary.rows[0];
  // What a plan's step pays: per execution the slowest rank, the median
  // of those (the slowest rank's own median where an older server does
  // not say).
  const double seconds = row.slowest_median_seconds > 0
                             ? row.slowest_median_seconds
                             : row.seconds_median;
  std::cerr << absl::StrFormat(
      "calibrate: %s: %.3f ms (default model %.3f ms)\n", what, seconds * 1e3,
      row.model_seconds * 1e3);
  // (row.members counts a bucket's tensors, not the group's ranks.)
  LinkSample sample{step.op, mesh.GroupSize(group), row.bytes, seconds * 1e6,
                    PackedBytes(mesh, plan)};
  return CalibrationSample{group, index, sample};
}

// The plans of one group and size, with the names the progress lines give
// them: each op's, then the strided gather.
absl::StatusOr<std::vector<std::pair<std::string, Plan>>> PlansAt(
    const Mesh& mesh, const Group& group, int64_t bytes) {
  std::vector<std::pair<std::string, Plan>> plans;
  const std::string where =
      absl::StrCat(mesh.GroupName(group), " ", bytes, " B");
  for (StepOp op : kCalibratedOps) {
    absl::StatusOr<Plan> plan = CalibrationPlan(mesh, group, op, bytes);
    if (!plan.ok()) return plan.status();
    plans.emplace_back(absl::StrCat(StepOpName(op), " ", where),
                       *std::move(plan));
  }
  absl::StatusOr<Plan> strided = StridedGatherPlan(mesh, group, bytes);
  if (!strided.ok()) return strided.status();
  plans.emplace_back(absl::StrCat("strided all_gather ", where),
                     *std::move(strided));
  return plans;
}

// One pass of the sweep: every op and the strided gather on every group at
// every size (`small_only`: at the sizes below kManyItersBelowBytes), in
// one fixed order (groups, sizes, plans), so that the samples of two
// passes line up (Sweep merges them by position).
absl::StatusOr<std::vector<CalibrationSample>> Pass(
    Client& client, const std::string& job, const Mesh& mesh,
    const std::vector<int64_t>& sizes, const JobRunOptions& options,
    bool small_only) {
  std::vector<CalibrationSample> samples;
  for (const Group& group : CalibrationGroups(mesh)) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (small_only && sizes[i] >= kManyItersBelowBytes) continue;
      auto plans = PlansAt(mesh, group, sizes[i]);
      if (!plans.ok()) return plans.status();
      for (const auto& [what, plan] : *plans) {
        absl::StatusOr<CalibrationSample> s =
            TimeOne(client, job, mesh, group, what, plan, sizes[i],
                    static_cast<int>(i), options);
        if (!s.ok()) return s.status();
        samples.push_back(*std::move(s));
      }
    }
  }
  return samples;
}

// The whole sweep once, then `small_passes` - 1 more passes over its sizes
// below kManyItersBelowBytes; each of those samples is the median of its
// passes. A small pass holds the first pass's samples below that size, in
// the same order (Pass), so the k-th of them is the k-th small sample.
absl::StatusOr<std::vector<CalibrationSample>> Sweep(
    Client& client, const std::string& job, const Mesh& mesh,
    const std::vector<int64_t>& sizes, const JobRunOptions& options,
    int small_passes) {
  absl::StatusOr<std::vector<CalibrationSample>> samples =
      Pass(client, job, mesh, sizes, options, false);
  if (!samples.ok()) return samples.status();
  std::vector<std::vector<double>> times;
  for (const CalibrationSample& s : *samples) {
    times.push_back({s.sample.time_us});
  }
  for (int pass = 1; pass < small_passes; ++pass) {
    absl::StatusOr<std::vector<CalibrationSample>> more =
        Pass(client, job, mesh, sizes, options, true);
    if (!more.ok()) return more.status();
    size_t next = 0;
    for (size_t i = 0; i < samples->size(); ++i) {
      if (sizes[(*samples)[i].size_index] >= kManyItersBelowBytes) continue;
      times[i].push_back((*more)[next++].sample.time_us);
    }
  }
  for (size_t i = 0; i < samples->size(); ++i) {
    (*samples)[i].sample.time_us = Median(times[i]);
  }
  return samples;
}

// The sweep's sizes and samples: run on the job's agents, or read back
// from --samples_from.
absl::StatusOr<SavedSweep> SweepOrSaved(const ServerFlags& server,
                                        const std::string& job,
                                        const Mesh& mesh,
                                        const CalibrateFlags& flags) {
  if (!flags.samples_from.empty()) {
    return ReadCalibrationJson(flags.samples_from, mesh);
  }
  absl::StatusOr<std::vector<int64_t>> sizes =
      CalibrationSizes(flags.min_bytes, flags.max_bytes);
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::vector<CalibrationSample>> samples =
      Sweep(**client, job, mesh, *sizes, flags.run, flags.small_passes);
  if (!samples.ok()) return samples.status();
  return SavedSweep{*std::move(sizes), *std::move(samples)};
}

absl::Status WriteLinksFile(const std::string& path, const Mesh& mesh) {
  std::ofstream file(path);
  for (const std::string& flag : LinkFlags(ForPasting(mesh))) {
    file << flag << "\n";
  }
  file.close();
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("--links_file: cannot write \"", path, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCalibrate(const ServerFlags& server, const std::string& job,
                          absl::Span<const std::string> argv,
                          std::ostream& out) {
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv,
                     {"mesh", "flatten", "min_bytes", "max_bytes", "iters",
                      "warmup", "timeout_seconds", "small_passes", "links_file",
                      "samples_from", "max_error"},
                     {"json"});
  if (!args.ok()) return args.status();
  absl::StatusOr<CalibrateFlags> flags = ParseCalibrateFlags(*args, server);
  if (!flags.ok()) return flags.status();
  absl::StatusOr<Mesh> mesh = MeshFromFlags(*args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<SavedSweep> sweep = SweepOrSaved(server, job, *mesh, *flags);
  if (!sweep.ok()) return sweep.status();
  absl::StatusOr<Calibration> calibration = Calibrate(*mesh, sweep->samples);
  if (!calibration.ok()) return calibration.status();
  if (!flags->links_file.empty()) {
    absl::Status s = WriteLinksFile(flags->links_file, calibration->mesh);
    if (!s.ok()) return s;
  }
  const CalibrationReport report{job, sweep->sizes, sweep->samples,
                                 &*calibration};
  if (flags->json) {
    PrintCalibrationJson(report, out);
  } else {
    PrintCalibrationText(report, out);
  }
  return CheckMaxError(*calibration, flags->max_error);
}

}  // namespace reshard::client
