#include "client/run_flags.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "client/batch_command.h"
#include "client/plan_flags.h"

namespace reshard::client {
namespace {

// Which work the flags name, and that they name one.
absl::Status CheckWork(const CliArgs& args, const std::string& command) {
  if (!args.Has("batch")) {
    for (const char* flag : {"bucket_bytes", "no-bucketing"}) {
      if (args.Has(flag)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": only with --batch FILE"));
      }
    }
  }
  if (args.Has("plan") && args.Has("batch")) {
    return absl::InvalidArgumentError(
        "--plan: cannot be combined with --batch (one plan or one batch)");
  }
  if (args.Has("plan")) {
    // The file fixes mesh, tensor and states; a plan flag beside it would be
    // silently ignored.
    for (const std::string& flag : PlanFlags()) {
      if (args.Has(flag)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--plan: cannot be combined with --", flag,
            " (the plan file fixes the mesh, the tensor and the states)"));
      }
    }
    if (args.Has("merge")) {
      return absl::InvalidArgumentError(
          "--plan: cannot be combined with --merge");
    }
  } else if (!args.Has("mesh") && !args.Has("src_mesh") &&
             !args.Has("schedule")) {
    return absl::InvalidArgumentError(absl::StrCat(
        command,
        ": --plan FILE or the plan flags (--mesh, --shape, --from, --to, ...) "
        "are required, or --batch FILE with --mesh"));
  }
  return absl::OkStatus();
}

}  // namespace

std::set<std::string> RunValueFlags() {
  std::set<std::string> flags = PlanFlags();
  for (const std::string& f : BatchFlags()) flags.insert(f);
  flags.insert({"plan", "iters", "warmup", "timeout_seconds"});
  return flags;
}

std::set<std::string> RunSwitches() {
  return {"merge", "json", "no-bucketing"};
}

absl::StatusOr<RunFlags> ParseRunFlags(const CliArgs& args,
                                       const std::string& command) {
  RunFlags flags;
  for (auto [flag, min, target] :
       {std::tuple{"iters", 1, &flags.iters},
        std::tuple{"warmup", 0, &flags.warmup},
        std::tuple{"timeout_seconds", 1, &flags.timeout_seconds}}) {
    absl::Status s = ParseIntFlag(args, flag, min, *target);
    if (!s.ok()) return s;
  }
  absl::Status s = CheckWork(args, command);
  if (!s.ok()) return s;
  flags.json = args.Has("json");
  flags.batch = args.Has("batch");
  flags.bucketed = !args.Has("no-bucketing");
  return flags;
}

}  // namespace reshard::client
