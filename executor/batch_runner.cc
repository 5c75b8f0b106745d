#include "executor/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "executor/batch_work.h"
#include "executor/box_copy.h"
#include "executor/digest_exchange.h"
#include "executor/local_step.h"
#include "executor/step_exec.h"
#include "planner/batch_digest.h"
#include "planner/plan_structure.h"

namespace reshard::executor {

// Data movement buckets move bytes: counted in 16-bit words, which every
// dtype's blocks fill exactly.
constexpr DType kWordDType = DType::kFloat16;

struct BatchRunner::TensorState {
  std::vector<StepLayout> layouts;  // per step, this rank's
  std::vector<char> skip;           // per step: a group of size 1
  std::vector<int64_t> bytes;       // per step: its input and output bytes
  int last = -1;                    // the last step that is not skipped
  int64_t itemsize = 0;
  int64_t source_numel = 0;
  int64_t result_numel = 0;
  std::vector<char> buffers[2];
  // Progress within one Run.
  int next_step = 0;
  const char* current = nullptr;
  char* out = nullptr;
  int flip = 0;

  // Where step j writes: the caller's output for the last step, else the
  // buffer that does not hold its input.
  char* Target(int j) { return j == last ? out : buffers[flip].data(); }
  void Advance(int j, char* target) {
    current = target;
    flip ^= 1;
    next_step = j + 1;
  }
};

struct BatchRunner::CompiledBucket {
  BucketLayout layout;
  Communicator* comm = nullptr;
  // A bucket of one step runs as that step alone (PlanRunner's path, which
  // sends from and receives into the tensors where it can).
  std::optional<CompiledStep> single;
  DType dtype = kWordDType;  // reductions: the members' dtype
  int64_t wire_numel = 0;    // the packed block in `dtype` elements
  WireBlocks blocks;
  int64_t bytes_held = 0;  // members' inputs and outputs, and the wire

  int64_t Block() const { return layout.block_bytes; }
};

namespace {

using Compiled = BatchRunner::CompiledBucket;

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string BucketLabel(const Mesh& mesh, size_t b, const Bucket& bucket) {
  return absl::StrCat("buckets[", b, "] (", StepOpName(bucket.op), " on ",
                      mesh.GroupName(bucket.group), ", ", bucket.members.size(),
                      " members)");
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Member k's send boxes into the packed input: its block at offset o of
// every packed block it fills.
void PackMember(const Compiled& c, StepOp op, size_t k, const char* in,
                char* wire) {
  const StepLayout& l = c.layout.members[k];
  const int64_t s = c.layout.itemsizes[k];
  char* at = wire + c.layout.offsets[k];
  switch (op) {
    case StepOp::kAllGather:
      PackBox(in, l.in_shape, l.send[0], s, at);
      break;
    case StepOp::kAllReduce:
      CopyBytes(at, in, Numel(l.in_shape) * s);
      break;
    default:  // reduce_scatter, all_to_all: block j goes to member j
      for (size_t j = 0; j < l.send.size(); ++j) {
        PackBox(in, l.in_shape, l.send[j], s, at + j * c.Block());
      }
      break;
  }
}

// Member k's output from the packed result.
void UnpackMember(const Compiled& c, StepOp op, size_t k, const char* wire,
                  char* out) {
  const StepLayout& l = c.layout.members[k];
  const int64_t s = c.layout.itemsizes[k];
  const char* at = wire + c.layout.offsets[k];
  switch (op) {
    case StepOp::kAllReduce:
    case StepOp::kReduceScatter:  // this member's part, row-major
      CopyBytes(out, at, Numel(l.out_shape) * s);
      break;
    default:  // all_gather, all_to_all: block i comes from member i
      for (size_t i = 0; i < l.recv.size(); ++i) {
        UnpackBox(at + i * c.Block(), out, l.out_shape, l.recv[i], s);
      }
      break;
  }
}

absl::Status Collective(const Compiled& c, const Bucket& bucket, char* in,
                        char* out) {
  const Reduction reduction{bucket.reduce_op, bucket.avg_divisor};
  switch (bucket.op) {
    case StepOp::kAllGather:
      return c.comm->AllGather(in, out, c.wire_numel, c.dtype);
    case StepOp::kAllReduce:
      return c.comm->AllReduce(in, c.wire_numel, c.dtype, reduction);
    case StepOp::kReduceScatter:
      return c.comm->ReduceScatter(in, out, c.wire_numel, c.dtype, reduction);
    default:
      return c.comm->AllToAll(in, out, c.wire_numel, c.dtype);
  }
}

}  // namespace

BatchRunner::BatchRunner(const Mesh& mesh, std::vector<Plan> plans,
                         BucketSchedule schedule, int64_t position)
    : mesh_(mesh),
      plans_(std::move(plans)),
      schedule_(std::move(schedule)),
      position_(position) {}

BatchRunner::~BatchRunner() = default;

int64_t BatchRunner::SourceNumel(size_t t) const {
  return tensors_[t].source_numel;
}
int64_t BatchRunner::ResultNumel(size_t t) const {
  return tensors_[t].result_numel;
}

absl::StatusOr<std::unique_ptr<BatchRunner>> BatchRunner::Compile(
    const Mesh& mesh, std::vector<Plan> plans, BucketSchedule schedule,
    int64_t rank, CommunicatorProvider& provider) {
  std::vector<const Plan*> ptrs;
  for (size_t t = 0; t < plans.size(); ++t) {
    ptrs.push_back(&plans[t]);
    absl::Status s = CheckPlanStructure(mesh, plans[t]);
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat(TensorPrefix(plans.size(), t), s.message()));
    }
  }
  absl::Status s = CheckBucketSchedule(mesh, ptrs, schedule);
  if (!s.ok()) return s;
  const int64_t position = mesh.PositionOfRank(rank);
  if (position < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: ", rank, " is not a rank of the mesh"));
  }
  s = ExchangeDigest(mesh, BatchDigest(mesh, ptrs, schedule), rank, provider,
                     DigestNoun(plans.size()));
  if (!s.ok()) return s;
  std::unique_ptr<BatchRunner> runner(
      new BatchRunner(mesh, std::move(plans), std::move(schedule), position));
  runner->CompileTensors();
  s = runner->CompileBuckets(provider);
  if (!s.ok()) return s;
  return runner;
}

std::string BatchRunner::TensorLabel(size_t t) const {
  return TensorPrefix(plans_.size(), t);
}

std::string BatchRunner::StepLabel(const BucketMember& m) const {
  const Step& step = plans_[m.tensor].steps[m.step];
  return absl::StrCat(TensorLabel(m.tensor), "steps[", m.step, "] (",
                      StepOpName(step.op), " on ", mesh_.GroupName(step.group),
                      ")");
}

void BatchRunner::CompileTensors() {
  tensors_.resize(plans_.size());
  for (size_t t = 0; t < plans_.size(); ++t) {
    const Plan& plan = plans_[t];
    TensorState& state = tensors_[t];
    const std::vector<int64_t>& shape = plan.tensor.shape();
    state.itemsize = plan.tensor.itemsize();
    state.source_numel =
        Numel(LocalBox(mesh_, plan.src, shape, position_).extent);
    state.result_numel = state.source_numel;
    for (size_t j = 0; j < plan.steps.size(); ++j) {
      const StepLayout& layout = state.layouts.emplace_back(
          MakeStepLayout(mesh_, shape, plan.steps[j], position_));
      state.skip.push_back(layout.group_size == 1);
      state.bytes.push_back((Numel(layout.in_shape) + Numel(layout.out_shape)) *
                            state.itemsize);
      if (state.skip.back()) continue;
      state.last = static_cast<int>(j);
      if (!IsCollective(plan.steps[j].op)) {
        step_bound_ = std::max(step_bound_, state.bytes.back());
      }
    }
    int64_t buffer = 0;
    for (int j = 0; j < state.last; ++j) {
      if (state.skip[j]) continue;
      buffer = std::max(buffer, Numel(state.layouts[j].out_shape));
    }
    if (state.last >= 0) {
      state.result_numel = Numel(state.layouts[state.last].out_shape);
    }
    for (auto& b : state.buffers) b.resize(buffer * state.itemsize);
    memory_bound_ += 2 * buffer * state.itemsize;
  }
}

absl::Status BatchRunner::CompileBuckets(CommunicatorProvider& provider) {
  std::vector<const Plan*> ptrs;
  for (const Plan& p : plans_) ptrs.push_back(&p);
  int64_t wire_in = 0, wire_out = 0;
  for (size_t b = 0; b < schedule_.buckets.size(); ++b) {
    const Bucket& bucket = schedule_.buckets[b];
    CompiledBucket c;
    c.layout = MakeBucketLayout(mesh_, bucket, ptrs, position_);
    absl::StatusOr<Communicator*> comm =
        provider.Get(mesh_.GroupRanks(position_, bucket.group),
                     mesh_.GroupName(bucket.group));
    if (!comm.ok()) {
      return absl::Status(comm.status().code(),
                          absl::StrCat(BucketLabel(mesh_, b, bucket), ": ",
                                       comm.status().message()));
    }
    c.comm = *comm;
    if (bucket.members.size() == 1) {
      const BucketMember& m = bucket.members[0];
      const Plan& plan = plans_[m.tensor];
      c.single = CompileStep(mesh_, plan.tensor, plan.steps[m.step], position_);
      c.single->comm = c.comm;
      const WireUse wire = WireOf(*c.single);
      wire_in = std::max(wire_in, wire.in);
      wire_out = std::max(wire_out, wire.out);
      c.bytes_held = StepBytes(*c.single);
      step_bound_ = std::max(step_bound_, c.bytes_held);
      buckets_.push_back(std::move(c));
      continue;
    }
    if (bucket.Reduces()) {
      c.dtype = plans_[bucket.members[0].tensor].tensor.dtype();
    }
    c.wire_numel = c.Block() / ItemSize(c.dtype);
    c.blocks = CollectiveWireBlocks(bucket.op, c.layout.group_size);
    wire_in = std::max(wire_in, c.blocks.in * c.Block());
    // all_reduce runs in place
    const int64_t out_blocks =
        bucket.op == StepOp::kAllReduce ? 0 : c.blocks.out;
    wire_out = std::max(wire_out, out_blocks * c.Block());
    c.bytes_held = (c.blocks.in + out_blocks) * c.Block();
    for (const BucketMember& m : bucket.members) {
      c.bytes_held += tensors_[m.tensor].bytes[m.step];
    }
    step_bound_ = std::max(step_bound_, c.bytes_held);
    buckets_.push_back(std::move(c));
  }
  wire_in_.resize(wire_in);
  wire_out_.resize(wire_out);
  memory_bound_ += wire_in + wire_out;
  return absl::OkStatus();
}

void BatchRunner::AdvanceLocal(size_t t, int until, BatchRunStats& stats) {
  TensorState& state = tensors_[t];
  for (int j = state.next_step; j < until; ++j) {
    if (state.skip[j]) continue;
    const auto start = std::chrono::steady_clock::now();
    char* target = state.Target(j);
    RunLocalStep(state.layouts[j], state.itemsize, state.current, target);
    state.Advance(j, target);
    stats.step_seconds[t][j] = SecondsSince(start);
    stats.peak_bytes = std::max(stats.peak_bytes, state.bytes[j]);
  }
  state.next_step = std::max(state.next_step, until);
}

absl::Status BatchRunner::RunSingle(size_t b) {
  const BucketMember& m = schedule_.buckets[b].members[0];
  TensorState& state = tensors_[m.tensor];
  char* target = state.Target(m.step);
  absl::Status s = ExecuteStep(*buckets_[b].single, state.current, target,
                               {wire_in_.data(), wire_out_.data()});
  if (!s.ok()) return s;
  state.Advance(m.step, target);
  return absl::OkStatus();
}

absl::Status BatchRunner::RunBucket(size_t b, BatchRunStats& stats) {
  const Bucket& bucket = schedule_.buckets[b];
  const CompiledBucket& c = buckets_[b];
  stats.peak_bytes = std::max(stats.peak_bytes, c.bytes_held);
  if (c.single.has_value()) {
    absl::Status s = RunSingle(b);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(StepLabel(bucket.members[0]),
                                                 ": ", s.message()));
    }
    return s;
  }
  for (size_t k = 0; k < bucket.members.size(); ++k) {
    PackMember(c, bucket.op, k, tensors_[bucket.members[k].tensor].current,
               wire_in_.data());
  }
  // Members of a group agree on the packed block: when it is empty nothing
  // moves on any of them.
  if (c.Block() > 0) {
    absl::Status s = Collective(c, bucket, wire_in_.data(), wire_out_.data());
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(BucketLabel(mesh_, b, bucket),
                                                 ": ", s.message()));
    }
  }
  const char* result =
      bucket.op == StepOp::kAllReduce ? wire_in_.data() : wire_out_.data();
  for (size_t k = 0; k < bucket.members.size(); ++k) {
    const BucketMember& m = bucket.members[k];
    TensorState& state = tensors_[m.tensor];
    char* target = state.Target(m.step);
    UnpackMember(c, bucket.op, k, result, target);
    state.Advance(m.step, target);
  }
  return absl::OkStatus();
}

absl::Status BatchRunner::Run(absl::Span<const void* const> in,
                              absl::Span<void* const> out,
                              BatchRunStats* stats) {
  BatchRunStats local_stats;
  BatchRunStats& st = stats != nullptr ? *stats : local_stats;
  st.bucket_seconds.assign(buckets_.size(), 0.0);
  st.local_seconds = 0;
  st.peak_bytes = 0;
  st.step_seconds.resize(tensors_.size());
  for (size_t t = 0; t < tensors_.size(); ++t) {
    st.step_seconds[t].assign(tensors_[t].layouts.size(), 0.0);
  }
  const auto run_start = std::chrono::steady_clock::now();
  for (size_t t = 0; t < tensors_.size(); ++t) {
    TensorState& state = tensors_[t];
    state.next_step = 0;
    state.flip = 0;
    state.current = static_cast<const char*>(in[t]);
    state.out = static_cast<char*>(out[t]);
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const auto local_start = std::chrono::steady_clock::now();
    for (const BucketMember& m : schedule_.buckets[b].members) {
      AdvanceLocal(m.tensor, m.step, st);
    }
    st.local_seconds += SecondsSince(local_start);
    const auto bucket_start = std::chrono::steady_clock::now();
    absl::Status s = RunBucket(b, st);
    if (!s.ok()) return s;
    st.bucket_seconds[b] = SecondsSince(bucket_start);
    for (const BucketMember& m : schedule_.buckets[b].members) {
      st.step_seconds[m.tensor][m.step] = st.bucket_seconds[b];
    }
  }
  const auto tail_start = std::chrono::steady_clock::now();
  for (size_t t = 0; t < tensors_.size(); ++t) {
    TensorState& state = tensors_[t];
    AdvanceLocal(t, static_cast<int>(state.layouts.size()), st);
    if (state.last < 0) {
      CopyBytes(state.out, in[t], state.source_numel * state.itemsize);
    }
  }
  st.local_seconds += SecondsSince(tail_start);
  st.total_seconds = SecondsSince(run_start);
  return absl::OkStatus();
}

}  // namespace reshard::executor
