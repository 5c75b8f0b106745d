// One step compiled for one rank and run on its buffers: the unit of
// PlanRunner, and of BatchRunner for buckets that hold one step (a bucket
// of one runs exactly as the step alone). Compiling a step computes its
// layout (planner/core/step_layout.h) and the fast paths that send from and
// receive into the tensors themselves when its blocks are their
// consecutive full blocks, and bounds its memory; running it moves data.
#ifndef RESHARD_EXECUTOR_RUN_STEP_EXEC_H_
#define RESHARD_EXECUTOR_RUN_STEP_EXEC_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "executor/run/communicator.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/core/step_layout.h"
#include "planner/core/step_memory.h"
#include "planner/core/tensor_spec.h"

namespace reshard::executor {

struct CompiledStep {
  Step step;
  StepLayout layout;
  Communicator* comm = nullptr;  // collectives only; the caller's to set
  bool skip = false;             // a group of size 1 moves no data
  DType dtype = DType::kFloat32;
  int64_t itemsize = 0;
  int64_t in_numel = 0;
  int64_t out_numel = 0;
  int64_t block = 0;  // elements per padded block
  // The send boxes are the input's consecutive full blocks (send in place).
  bool direct_send = false;
  // The receive boxes are the output's consecutive full blocks.
  bool direct_recv = false;
  // all_to_all (docs/DESIGN.md §6.1), per member j: the runs block j is
  // sent as (SendRunsOf), from the input, or from block j of the send
  // wire where `send_packed[j]` (packed just before it is sent); and the
  // runs member j's block for this member arrives as, within block j.
  std::vector<std::vector<ByteRun>> send_runs, recv_runs;
  std::vector<char> send_packed;

  int64_t Bytes(int64_t numel) const { return numel * itemsize; }
};

// How a member with layout `l` (`direct_send`: ChooseDirectPaths's) sends
// all_to_all block j of `block_bytes`: its box's runs from the input in
// place when they are few and long enough that a message each costs less
// than packing them, else one run (the block, consecutive in the input
// already, or packed: `packed` set).
struct SendRuns {
  bool packed = false;
  std::vector<ByteRun> runs;
};
SendRuns SendRunsOf(const StepLayout& l, bool direct_send, size_t j,
                    int64_t itemsize, int64_t block_bytes);

// Compiles `step` of a `tensor` for the rank at mesh `position`: layout,
// sizes and fast paths; `comm` is left for the caller to obtain.
CompiledStep CompileStep(const Mesh& mesh, const TensorSpec& tensor,
                         const Step& step, int64_t position);

// The wire bytes a step packs into, beyond its input and output tensors
// (planner/core/step_memory.h).
WireUse WireOf(const CompiledStep& c);
// The most bytes the step holds: input, output and wire.
int64_t StepBytes(const CompiledStep& c);

// The caller's packed wire buffers (at least WireOf's sizes).
struct Wires {
  char* in;
  char* out;
};

// Runs the step: `in` holds its input tensor, `out` receives its output
// (they must not overlap). The collective's status.
absl::Status ExecuteStep(const CompiledStep& c, const char* in, char* out,
                         Wires wires);

// The collective `op` from `send` into `recv` (all_reduce: in place on
// `recv`), blocks of `block_numel` elements: how a step's or a bucket's
// copies call its collective. Its status.
absl::Status CallCollective(Communicator& comm, StepOp op, const char* send,
                            char* recv, int64_t block_numel, DType dtype,
                            Reduction reduction);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_STEP_EXEC_H_
