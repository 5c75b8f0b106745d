// `reshardctl exec --local N --batch FILE` (DESIGN §8): plans a batch as
// `plan --batch` does (in-process, or on the service with --server), runs
// it on N local Gloo ranks, bucketed or with --no-bucketing tensor by
// tensor, validates every tensor on every rank by the data rule and prints
// one row per bucket (or per communicating step), the whole batch's time
// per run, and every tensor's verdict and checksums by rank; --json prints
// one object (exec's, with "buckets" for "steps" and "tensors").
#ifndef RESHARD_CLIENT_BATCH_EXEC_H_
#define RESHARD_CLIENT_BATCH_EXEC_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"

namespace reshard {

// Runs `reshardctl exec --batch FILE ...`; prints to `out`. OK only when
// every tensor validated on every rank: otherwise, after printing,
// DATA_LOSS naming the first tensor that did not. INVALID_ARGUMENT for bad
// flags or a batch with an item that could not be planned (its error);
// the failing ranks' error when the run failed. `server` is set when
// --server was given.
absl::Status RunExecBatch(const std::optional<ServerFlags>& server,
                          const std::vector<std::string>& argv,
                          std::ostream& out);

}  // namespace reshard

#endif  // RESHARD_CLIENT_BATCH_EXEC_H_
