#include "executor/plan_runner.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/box_copy.h"
#include "executor/digest_exchange.h"
#include "executor/local_step.h"
#include "planner/plan_digest.h"
#include "planner/plan_structure.h"

namespace reshard::executor {

struct PlanRunner::CompiledStep {
  Step step;
  StepLayout layout;
  Communicator* comm = nullptr;  // collectives only
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

  int64_t Bytes(int64_t numel) const { return numel * itemsize; }
};

namespace {

using Compiled = PlanRunner::CompiledStep;

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// True when box j of `boxes` is the j-th run of `block` elements of a
// tensor of `shape`.
bool ConsecutiveBlocks(const std::vector<Box>& boxes,
                       const std::vector<int64_t>& shape, int64_t block) {
  for (size_t j = 0; j < boxes.size(); ++j) {
    if (boxes[j].numel() != block) return false;
    const std::optional<int64_t> at = ContiguousOffset(shape, boxes[j]);
    if (!at.has_value() || *at != static_cast<int64_t>(j) * block) {
      return false;
    }
  }
  return true;
}

std::string StepLabel(const Mesh& mesh, size_t index, const Step& step) {
  return absl::StrCat("steps[", index, "] (", StepOpName(step.op), " on ",
                      mesh.GroupName(step.group), ")");
}

// The wire bytes a step packs into, beyond its input and output tensors.
struct WireUse {
  int64_t in = 0;
  int64_t out = 0;
};

WireUse WireOf(const Compiled& c) {
  const int64_t n = c.layout.group_size;
  WireUse use;
  switch (c.step.op) {
    case StepOp::kAllGather:
      if (!c.direct_recv) use.out = c.Bytes(n * c.block);
      break;
    case StepOp::kReduceScatter:
      if (!c.direct_send) use.in = c.Bytes(n * c.block);
      if (c.out_numel != c.block) use.out = c.Bytes(c.block);
      break;
    case StepOp::kAllToAll:
      if (!c.direct_send) use.in = c.Bytes(n * c.block);
      if (!c.direct_recv) use.out = c.Bytes(n * c.block);
      break;
    default:
      break;
  }
  return use;
}

int64_t StepBytes(const Compiled& c) {
  const WireUse wire = WireOf(c);
  return c.Bytes(c.in_numel) + c.Bytes(c.out_numel) + wire.in + wire.out;
}

}  // namespace

PlanRunner::PlanRunner(const Mesh& mesh, const Plan& plan, int64_t position)
    : mesh_(mesh), plan_(plan), position_(position) {}

PlanRunner::~PlanRunner() = default;

namespace {

void ChooseFastPaths(Compiled& c) {
  const StepLayout& l = c.layout;
  switch (c.step.op) {
    case StepOp::kAllGather:
      c.direct_recv = ConsecutiveBlocks(l.recv, l.out_shape, c.block);
      break;
    case StepOp::kReduceScatter:
      c.direct_send = ConsecutiveBlocks(l.send, l.in_shape, c.block);
      break;
    case StepOp::kAllToAll:
      c.direct_send = ConsecutiveBlocks(l.send, l.in_shape, c.block);
      c.direct_recv = ConsecutiveBlocks(l.recv, l.out_shape, c.block);
      break;
    default:
      break;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PlanRunner>> PlanRunner::Compile(
    const Mesh& mesh, const Plan& plan, int64_t rank,
    CommunicatorProvider& provider) {
  absl::Status s = CheckPlanStructure(mesh, plan);
  if (!s.ok()) return s;
  const int64_t position = mesh.PositionOfRank(rank);
  if (position < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: ", rank, " is not a rank of the mesh"));
  }
  s = ExchangeDigest(mesh, PlanDigest(mesh, plan), rank, provider, "plan");
  if (!s.ok()) return s;
  std::unique_ptr<PlanRunner> runner(new PlanRunner(mesh, plan, position));
  const std::vector<int64_t>& shape = plan.tensor.shape();
  runner->source_numel_ =
      Numel(LocalBox(mesh, plan.src, shape, position).extent);
  runner->result_numel_ = runner->source_numel_;
  int64_t tensor_cap = 0, wire_in_cap = 0, wire_out_cap = 0;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    Compiled c;
    c.step = plan.steps[k];
    c.layout = MakeStepLayout(mesh, shape, c.step, position);
    c.skip = c.layout.group_size == 1;
    c.dtype = plan.tensor.dtype();
    c.itemsize = plan.tensor.itemsize();
    c.in_numel = Numel(c.layout.in_shape);
    c.out_numel = Numel(c.layout.out_shape);
    c.block = IsCollective(c.step.op) ? c.layout.BlockNumel() : 0;
    runner->result_numel_ = c.out_numel;
    if (!c.skip && IsCollective(c.step.op)) {
      absl::StatusOr<Communicator*> comm =
          provider.Get(mesh.GroupRanks(position, c.step.group),
                       mesh.GroupName(c.step.group));
      if (!comm.ok()) {
        return absl::Status(comm.status().code(),
                            absl::StrCat(StepLabel(mesh, k, c.step), ": ",
                                         comm.status().message()));
      }
      c.comm = *comm;
      ChooseFastPaths(c);
    }
    if (!c.skip) {
      const WireUse wire = WireOf(c);
      tensor_cap = std::max(tensor_cap, c.Bytes(c.out_numel));
      wire_in_cap = std::max(wire_in_cap, wire.in);
      wire_out_cap = std::max(wire_out_cap, wire.out);
      runner->memory_bound_ = std::max(runner->memory_bound_, StepBytes(c));
    }
    runner->steps_.push_back(std::move(c));
  }
  for (auto& t : runner->tensors_) t.resize(tensor_cap);
  runner->wire_in_.resize(wire_in_cap);
  runner->wire_out_.resize(wire_out_cap);
  return runner;
}

namespace {

struct Wires {
  char* in;
  char* out;
};

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

// Blocks are packed on demand (or sent in place when they are the input's
// consecutive blocks); every member takes this same path, whatever its own
// layout, because the backend's exchange protocol must match.
absl::Status RunAllToAll(const Compiled& c, const char* in, char* out,
                         Wires wires) {
  const StepLayout& l = c.layout;
  auto pack = [&](int j) -> const void* {
    if (c.direct_send) return in + c.Bytes(j * c.block);
    char* block = wires.in + c.Bytes(j * c.block);
    PackBox(in, l.in_shape, l.send[j], c.itemsize, block);
    return block;
  };
  char* received = c.direct_recv ? out : wires.out;
  absl::Status s =
      c.comm->AllToAllPacking(pack, wires.in, received, c.block, c.dtype);
  if (!s.ok() || c.direct_recv) return s;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    UnpackBox(received + c.Bytes(i * c.block), out, l.out_shape, l.recv[i],
              c.itemsize);
  }
  return absl::OkStatus();
}

absl::Status Execute(const Compiled& c, const char* in, char* out,
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

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::Status PlanRunner::Run(const void* in, void* out, RunStats* stats) {
  if (stats != nullptr) {
    stats->step_seconds.assign(steps_.size(), 0.0);
    stats->peak_bytes = 0;
  }
  int last = -1;
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (!steps_[k].skip) last = static_cast<int>(k);
  }
  const char* current = static_cast<const char*>(in);
  int next = 0;
  for (int k = 0; k <= last; ++k) {
    const Compiled& c = steps_[k];
    if (c.skip) continue;
    char* target = k == last ? static_cast<char*>(out) : tensors_[next].data();
    const auto start = std::chrono::steady_clock::now();
    absl::Status s =
        Execute(c, current, target, {wire_in_.data(), wire_out_.data()});
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(StepLabel(mesh_, k, c.step),
                                                 ": ", s.message()));
    }
    if (stats != nullptr) {
      stats->step_seconds[k] = SecondsSince(start);
      stats->peak_bytes = std::max(stats->peak_bytes, StepBytes(c));
    }
    current = target;
    next ^= 1;
  }
  if (last < 0) {
    CopyBytes(out, in, source_numel_ * plan_.tensor.itemsize());
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
