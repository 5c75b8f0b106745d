// `reshardctl exec --local N --src_mesh ... --dst_mesh ...`: a cross-mesh
// plan (docs/DESIGN.md §9) run on N ranks of this machine, N the size of
// the union of both rank maps (which must be 0..N−1), on generated data:
// sources by the data rule on the source mesh, every destination rank's
// result validated by §6.2's checksums on the destination mesh (a rank
// that is only a source reports no checksum). With --batch (and --offline)
// a cross-mesh batch, every tensor validated alike.
#ifndef RESHARD_CLIENT_CROSS_EXEC_COMMAND_H_
#define RESHARD_CLIENT_CROSS_EXEC_COMMAND_H_

#include <optional>
#include <ostream>

#include "absl/status/status.h"
#include "client/cli_args.h"
#include "client/run_flags.h"

namespace reshard::client {

// What `exec` parsed beside the plan flags.
struct CrossExecFlags {
  int ranks = 0;
  RunFlags run;
  bool threads = false;
};

// Plans (in-process without a server or with --offline), runs and prints:
// a table, or with --json one object
// {"kind": "cross_mesh", "plan" (plan --json's), "backend", "world_size",
// "iters", "warmup", "rows": [{"name" ("pre_steps", "transfers",
// "post_steps"), "seconds_min", "seconds_median"} (the slowest rank's)],
// "seconds_min", "seconds_median" (a whole run, slowest rank), "ranks":
// [{"rank", "source", "destination", "checksum" and "validated" (null on
// a rank that is only a source)}], "validated" (every destination rank
// validated), "staging_bytes_max", "wall_seconds"}; a batch prints
// PrintCrossBatchRun's (client/cross_run_output.h). OK only when validated;
// DATA_LOSS naming the first rank (and tensor) that did not.
absl::Status RunCrossExec(const std::optional<ServerFlags>& server,
                          const CliArgs& args, const CrossExecFlags& flags,
                          std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CROSS_EXEC_COMMAND_H_
