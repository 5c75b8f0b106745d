#include "executor/run/run.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<std::unique_ptr<BatchRunner>> CompileRun(
    const Mesh& mesh, const BatchWork& work, int64_t rank,
    CommunicatorProvider& provider, const RunOptions& options,
    Preflight* preflight) {
  return BatchRunner::Compile(mesh, work.plans, work.schedule, rank, provider,
                              options.space, preflight);
}

absl::Status Run(BatchRunner& program, const RunBuffers& buffers,
                 const RunOptions& options, BatchRunStats* stats) {
  if (options.stopped && options.stopped()) {
    return absl::CancelledError(
        absl::StrCat("stopped after ", program.executions(), " executions"));
  }
  absl::Status s = program.Run(buffers.sources, buffers.results, stats);
  if (s.ok() && options.progress) options.progress(program.executions());
  return s;
}

}  // namespace reshard::executor
