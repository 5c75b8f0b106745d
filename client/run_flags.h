// The flags of every command that runs work on ranks, `reshardctl exec` and
// `reshardctl job run`: timed runs, warm-up, the collective timeout, JSON
// output, and which work (plan flags, --plan FILE, or --batch FILE with
// --bucket_bytes / --no-bucketing). One parser, so both commands take the
// same flags with the same checks and messages.
#ifndef RESHARD_CLIENT_RUN_FLAGS_H_
#define RESHARD_CLIENT_RUN_FLAGS_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli_args.h"

namespace reshard::client {

struct RunFlags {
  int iters = 10;            // timed runs
  int warmup = 2;            // untimed runs before them
  int timeout_seconds = 30;  // bounds every collective
  bool json = false;
  bool batch = false;    // --batch FILE
  bool bucketed = true;  // unless --no-bucketing
};

// The value flags and switches a run command takes, beside its own.
std::set<std::string> RunValueFlags();
std::set<std::string> RunSwitches();

// INVALID_ARGUMENT naming the flag for a value out of range, a bucket flag
// without --batch, --plan beside --batch or beside a plan flag, or no work
// at all (neither --plan, --batch nor the plan flags).
// `command` ("exec", "job run") leads the message of the last.
absl::StatusOr<RunFlags> ParseRunFlags(const CliArgs& args,
                                       const std::string& command);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_RUN_FLAGS_H_
