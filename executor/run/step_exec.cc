#include "executor/run/step_exec.h"

#include "executor/run/box_copy.h"
#include "executor/run/local_step.h"

namespace reshard::executor {
namespace {

using Compiled = CompiledStep;

absl::Status RunAllGather(const Compiled& c, const char* in, char* out,
                          Wires wires) {
  const StepLayout& l = c.layout;
  char* gathered = c.direct_recv ? out : wires.out;
  char* mine = gathered + c.Bytes(l.index * c.block);
  PackBox(in, l.in_shape, l.send[0], c.itemsize, mine);
  absl::Status s = c.comm->AllGather(mine, gathered, c.block, c.dtype);
  if (!s.ok() || c.direct_recv) return s;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    UnpackBox(gathered + c.Bytes(i * c.block), out, l.out_shape, l.recv[i],
              c.itemsize);
  }
  return absl::OkStatus();
}

absl::Status RunAllReduce(const Compiled& c, const char* in, char* out) {
  CopyBytes(out, in, c.Bytes(c.in_numel));
  return c.comm->AllReduce(out, c.block, c.dtype,
                           {c.step.reduce_op, c.step.avg_divisor});
}

absl::Status RunReduceScatter(const Compiled& c, const char* in, char* out,
                              Wires wires) {
  const StepLayout& l = c.layout;
  const char* send = in;
  if (!c.direct_send) {
    for (size_t j = 0; j < l.send.size(); ++j) {
      PackBox(in, l.in_shape, l.send[j], c.itemsize,
              wires.in + c.Bytes(j * c.block));
    }
    send = wires.in;
  }
  // The block is the output, row-major, followed by padding when this
  // member's part is smaller than the largest.
  char* result = c.out_numel == c.block ? out : wires.out;
  absl::Status s = c.comm->ReduceScatter(
      send, result, c.block, c.dtype, {c.step.reduce_op, c.step.avg_divisor});
  if (s.ok() && result != out) {
    CopyBytes(out, result, c.Bytes(c.out_numel));
  }
  return s;
}

// Each block goes as SendRunsOf says (packed on demand, just before it is
// sent). A backend that sends runs in place asks for this member's own
// block last, once its sends are on their way, and it is copied straight
// to where it lands; any other backend asks for it as for the rest. Every
// member takes this same path, whatever its own layout, because the
// backend's exchange protocol must match.
absl::Status RunAllToAll(const Compiled& c, const char* in, char* out,
                         Wires wires) {
  const StepLayout& l = c.layout;
  const int64_t block_bytes = c.Bytes(c.block);
  char* received = c.direct_recv ? out : wires.out;
  const bool own_placed = c.comm->SendsRunsInPlace();
  auto send = [&](int j) -> SendBlock {
    if (own_placed && j == l.index) {
      char* mine = received + l.index * block_bytes;
      if (c.direct_send) {
        CopyBytes(mine, in + l.index * block_bytes, block_bytes);
      } else {
        PackBox(in, l.in_shape, l.send[l.index], c.itemsize, mine);
      }
      return {};
    }
    if (!c.send_packed[j]) return {in, c.Bytes(c.in_numel), c.send_runs[j]};
    PackBox(in, l.in_shape, l.send[j], c.itemsize, wires.in + j * block_bytes);
    return {wires.in, l.group_size * block_bytes, c.send_runs[j]};
  };
  auto recv = [&](int i) -> absl::Span<const ByteRun> {
    return c.recv_runs[i];
  };
  absl::Status s =
      c.comm->AllToAllRuns(send, recv, wires.in, received, block_bytes);
  if (!s.ok() || c.direct_recv) return s;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    UnpackBox(received + i * block_bytes, out, l.out_shape, l.recv[i],
              c.itemsize);
  }
  return absl::OkStatus();
}

// Runs shorter than this are packed: below it a message of their own
// costs more than the copy it saves (build/bench/executor_bench, (a)).
constexpr int64_t kInPlaceRunBytes = 256 * 1024;
// Blocks of more runs than this are packed.
constexpr int64_t kMaxInPlaceRuns = 64;

// Every member's runs of an all_to_all step, as sent by this member and
// as received by it from each of the others (their layouts computed here).
void CompileAllToAllRuns(const Mesh& mesh, const TensorSpec& tensor,
                         int64_t position, Compiled& c) {
  const int64_t block_bytes = c.Bytes(c.block);
  const std::vector<int64_t> members =
      mesh.GroupPositions(position, c.step.group);
  for (size_t j = 0; j < members.size(); ++j) {
    SendRuns mine =
        SendRunsOf(c.layout, c.direct_send, j, c.itemsize, block_bytes);
    c.send_packed.push_back(mine.packed);
    c.send_runs.push_back(std::move(mine.runs));
    StepLayout other;
    const StepLayout& peer = static_cast<int64_t>(j) == c.layout.index
                                 ? c.layout
                                 : (other = MakeStepLayout(mesh, tensor.shape(),
                                                           c.step, members[j]));
    const SendRuns theirs =
        SendRunsOf(peer, ChooseDirectPaths(c.step.op, peer).send,
                   c.layout.index, c.itemsize, block_bytes);
    std::vector<ByteRun>& arriving = c.recv_runs.emplace_back();
    int64_t at = 0;
    for (const ByteRun& run : theirs.runs) {
      arriving.push_back({at, run.bytes});
      at += run.bytes;
    }
  }
}

}  // namespace

CompiledStep CompileStep(const Mesh& mesh, const TensorSpec& tensor,
                         const Step& step, int64_t position) {
  Compiled c;
  c.step = step;
  c.layout = MakeStepLayout(mesh, tensor.shape(), c.step, position);
  c.skip = c.layout.group_size == 1;
  c.dtype = tensor.dtype();
  c.itemsize = tensor.itemsize();
  c.in_numel = Numel(c.layout.in_shape);
  c.out_numel = Numel(c.layout.out_shape);
  c.block = IsCollective(c.step.op) ? c.layout.BlockNumel() : 0;
  if (!c.skip && IsCollective(c.step.op)) {
    const DirectPaths direct = ChooseDirectPaths(c.step.op, c.layout);
    c.direct_send = direct.send;
    c.direct_recv = direct.recv;
    if (c.step.op == StepOp::kAllToAll) {
      CompileAllToAllRuns(mesh, tensor, position, c);
    }
  }
  return c;
}

SendRuns SendRunsOf(const StepLayout& l, bool direct_send, size_t j,
                    int64_t itemsize, int64_t block_bytes) {
  const ByteRun whole{static_cast<int64_t>(j) * block_bytes, block_bytes};
  if (direct_send) return {false, {whole}};
  const Box& box = l.send[j];
  const int64_t numel = box.numel();
  const int64_t run = numel == 0 ? 0 : RowsOf(l.in_shape, box).run;
  if (run * itemsize < kInPlaceRunBytes || numel / run > kMaxInPlaceRuns) {
    return {true, {whole}};
  }
  SendRuns runs;
  ForEachBoxRun(l.in_shape, box, [&](int64_t at, int64_t, int64_t count) {
    runs.runs.push_back({at * itemsize, count * itemsize});
  });
  return runs;
}

WireUse WireOf(const Compiled& c) {
  return StepWire(c.step.op, c.layout, {c.direct_send, c.direct_recv},
                  c.itemsize);
}

int64_t StepBytes(const Compiled& c) {
  return StepBytesWith(c.step.op, c.layout, c.itemsize,
                       {c.direct_send, c.direct_recv});
}

absl::Status ExecuteStep(const CompiledStep& c, const char* in, char* out,
                         Wires wires) {
  // Every member of a group agrees on the block: when it is empty every
  // member's input and output are too, and nothing moves.
  if (IsCollective(c.step.op) && c.block == 0) return absl::OkStatus();
  switch (c.step.op) {
    case StepOp::kAllGather:
      return RunAllGather(c, in, out, wires);
    case StepOp::kAllReduce:
      return RunAllReduce(c, in, out);
    case StepOp::kReduceScatter:
      return RunReduceScatter(c, in, out, wires);
    case StepOp::kAllToAll:
      return RunAllToAll(c, in, out, wires);
    default:
      RunLocalStep(c.layout, c.itemsize, in, out);
      return absl::OkStatus();
  }
}

absl::Status CallCollective(Communicator& comm, StepOp op, const char* send,
                            char* recv, int64_t block_numel, DType dtype,
                            Reduction reduction) {
  switch (op) {
    case StepOp::kAllGather:
      return comm.AllGather(send, recv, block_numel, dtype);
    case StepOp::kAllReduce:
      return comm.AllReduce(recv, block_numel, dtype, reduction);
    case StepOp::kReduceScatter:
      return comm.ReduceScatter(send, recv, block_numel, dtype, reduction);
    default:
      return comm.AllToAll(send, recv, block_numel, dtype);
  }
}

}  // namespace reshard::executor
