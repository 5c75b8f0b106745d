#include "executor/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "executor/batch_work.h"
#include "executor/box_copy.h"
#include "executor/bucket_copies.h"
#include "executor/copy_program.h"
#include "executor/digest_exchange.h"
#include "executor/local_step.h"
#include "executor/run_timer.h"
#include "executor/step_exec.h"
#include "planner/batch_digest.h"
#include "planner/plan_structure.h"
#include "planner/step_memory.h"

namespace reshard::executor {

// Data movement buckets move bytes: counted in 16-bit words, which every
// dtype's blocks fill exactly.
constexpr DType kWordDType = DType::kFloat16;

// A copy program compiled for the run path: run on host memory, or as the
// MemorySpace's prepared table.
struct BatchRunner::CompiledCopies {
  CopyProgram program;
  const PreparedTable* table = nullptr;
};

struct BatchRunner::TensorState {
  std::vector<StepLayout> layouts;  // per step, this rank's
  std::vector<char> skip;           // per step: a group of size 1
  std::vector<int64_t> bytes;       // per step: StepLiveBytes
  int last = -1;                    // the last step that is not skipped
  int64_t itemsize = 0;
  int64_t source_numel = 0;
  int64_t result_numel = 0;
  // Two buffers of the largest intermediate result: host memory, or the
  // space's.
  int64_t buffer_bytes = 0;
  std::vector<char> host[2];
  SpaceBuffer in_space[2];
  char* buffers[2] = {nullptr, nullptr};
  // With a MemorySpace: per step, a local step's copies; and the copy of
  // the input to the output when no step moves anything.
  std::vector<CompiledCopies> local;
  CompiledCopies through;
  // Progress within one Run.
  int next_step = 0;
  const char* current = nullptr;
  char* out = nullptr;
  int flip = 0;

  // A tensor no step moves is copied from the caller's input to its output.
  int64_t ThroughBytes() const { return 2 * source_numel * itemsize; }
  // Where step j writes: the caller's output for the last step, else the
  // buffer that does not hold its input.
  char* Target(int j) { return j == last ? out : buffers[flip]; }
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
  // With a MemorySpace, the single step's copies around its collective.
  CompiledCopies before, after;
  CollectiveIo io;
  bool calls_collective = false;
  // Several members: each one's packing and unpacking.
  std::vector<CompiledCopies> pack, unpack;
  DType dtype = kWordDType;  // reductions: the members' dtype
  int64_t wire_numel = 0;    // the packed block in `dtype` elements
  int64_t bytes_held = 0;    // members' inputs and outputs, and the wire

  int64_t Block() const { return layout.block_bytes; }
};

namespace {

std::string BucketLabel(const Mesh& mesh, size_t b, const Bucket& bucket) {
  return absl::StrCat("buckets[", b, "] (", StepOpName(bucket.op), " on ",
                      mesh.GroupName(bucket.group), ", ", bucket.members.size(),
                      " members)");
}

// The collective `op` from `send` into `recv` (all_reduce: in place on
// `recv`), blocks of `block_numel` elements.
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

absl::Status Labelled(const absl::Status& s, absl::string_view label) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(label, ": ", s.message()));
}

}  // namespace

BatchRunner::BatchRunner(const Mesh& mesh, std::vector<Plan> plans,
                         BucketSchedule schedule, int64_t position,
                         CommunicatorProvider& provider, MemorySpace* space)
    : mesh_(mesh),
      plans_(std::move(plans)),
      schedule_(std::move(schedule)),
      position_(position),
      provider_(&provider),
      space_(space),
      timer_(space) {}

BatchRunner::~BatchRunner() = default;

int64_t BatchRunner::SourceNumel(size_t t) const {
  return tensors_[t].source_numel;
}
int64_t BatchRunner::ResultNumel(size_t t) const {
  return tensors_[t].result_numel;
}

absl::StatusOr<std::unique_ptr<BatchRunner>> BatchRunner::Compile(
    const Mesh& mesh, std::vector<Plan> plans, BucketSchedule schedule,
    int64_t rank, CommunicatorProvider& provider, MemorySpace* space) {
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
                     space, DigestNoun(plans.size()));
  if (!s.ok()) return s;
  std::unique_ptr<BatchRunner> runner(new BatchRunner(
      mesh, std::move(plans), std::move(schedule), position, provider, space));
  runner->CompileTensors();
  s = runner->CompileBuckets(provider);
  if (s.ok()) s = runner->AllocateBuffers();
  if (s.ok() && space != nullptr) s = runner->PrepareTables();
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
      state.bytes.push_back(
          StepLiveBytes(plan.steps[j].op, layout, state.itemsize));
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
    } else {
      step_bound_ = std::max(step_bound_, state.ThroughBytes());
    }
    state.buffer_bytes = buffer * state.itemsize;
    memory_bound_ += 2 * state.buffer_bytes;
  }
}

// A bucket of one step: compiled as the step alone.
void BatchRunner::CompileSingle(CompiledBucket& c, const BucketMember& m) {
  const Plan& plan = plans_[m.tensor];
  c.single = CompileStep(mesh_, plan.tensor, plan.steps[m.step], position_);
  c.single->comm = c.comm;
  const WireUse wire = WireOf(*c.single);
  wire_bytes_[0] = std::max(wire_bytes_[0], wire.in);
  wire_bytes_[1] = std::max(wire_bytes_[1], wire.out);
  c.bytes_held = StepBytes(*c.single);
}

// A bucket of several members: one collective over their packed blocks.
void BatchRunner::CompileShared(CompiledBucket& c, const Bucket& bucket) {
  if (bucket.Reduces()) {
    c.dtype = plans_[bucket.members[0].tensor].tensor.dtype();
  }
  c.wire_numel = c.Block() / ItemSize(c.dtype);
  const WireUse wire = BucketWire(bucket.op, c.layout);
  wire_bytes_[0] = std::max(wire_bytes_[0], wire.in);
  wire_bytes_[1] = std::max(wire_bytes_[1], wire.out);
  c.bytes_held = BucketLiveBytes(bucket.op, c.layout);
  for (size_t k = 0; k < bucket.members.size(); ++k) {
    c.pack.push_back({BucketPackProgram(c.layout, bucket.op, k)});
    c.unpack.push_back({BucketUnpackProgram(c.layout, bucket.op, k)});
  }
}

absl::Status BatchRunner::CompileBuckets(CommunicatorProvider& provider) {
  std::vector<const Plan*> ptrs;
  for (const Plan& p : plans_) ptrs.push_back(&p);
  for (size_t b = 0; b < schedule_.buckets.size(); ++b) {
    const Bucket& bucket = schedule_.buckets[b];
    CompiledBucket& c = buckets_.emplace_back();
    c.layout = MakeBucketLayout(mesh_, bucket, ptrs, position_);
    absl::StatusOr<Communicator*> comm =
        provider.Get(mesh_.GroupRanks(position_, bucket.group),
                     mesh_.GroupName(bucket.group));
    if (!comm.ok()) {
      return Labelled(comm.status(), BucketLabel(mesh_, b, bucket));
    }
    c.comm = *comm;
    if (bucket.members.size() == 1) {
      CompileSingle(c, bucket.members[0]);
    } else {
      CompileShared(c, bucket);
    }
    step_bound_ = std::max(step_bound_, c.bytes_held);
  }
  memory_bound_ += wire_bytes_[0] + wire_bytes_[1];
  return absl::OkStatus();
}

absl::StatusOr<char*> BatchRunner::Reserve(int64_t bytes,
                                           std::vector<char>& host,
                                           SpaceBuffer& owned) {
  if (space_ == nullptr) {
    host.resize(bytes);
    return host.data();
  }
  absl::StatusOr<SpaceBuffer> buffer = AllocateIn(*space_, bytes);
  if (!buffer.ok()) return buffer.status();
  owned = *std::move(buffer);
  return owned.get();
}

absl::Status BatchRunner::AllocateBuffers() {
  for (TensorState& state : tensors_) {
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<char*> b =
          Reserve(state.buffer_bytes, state.host[i], state.in_space[i]);
      if (!b.ok()) return b.status();
      state.buffers[i] = *b;
    }
  }
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<char*> b =
        Reserve(wire_bytes_[i], host_wire_[i], space_wire_[i]);
    if (!b.ok()) return b.status();
    wire_[i] = *b;
  }
  return absl::OkStatus();
}

absl::Status BatchRunner::Prepare(CompiledCopies& copies) {
  absl::StatusOr<const PreparedTable*> table =
      PrepareProgram(*space_, copies.program);
  if (!table.ok()) return table.status();
  copies.table = *table;
  return absl::OkStatus();
}

// Every copy the run makes, as the space's tables: local steps, a copy
// through for tensors no step moves, and every bucket's copies.
absl::Status BatchRunner::PrepareTables() {
  absl::Status s;
  for (size_t t = 0; t < tensors_.size() && s.ok(); ++t) {
    TensorState& state = tensors_[t];
    const Plan& plan = plans_[t];
    state.local.resize(plan.steps.size());
    for (size_t j = 0; j < plan.steps.size() && s.ok(); ++j) {
      if (state.skip[j] || IsCollective(plan.steps[j].op)) continue;
      state.local[j].program =
          CopiesOf(CompileStep(mesh_, plan.tensor, plan.steps[j], position_))
              .before;
      s = Prepare(state.local[j]);
    }
    if (s.ok() && state.last < 0) {
      state.through.program.copies.push_back(
          ContiguousCopy(CopyBuffer::kIn, 0, CopyBuffer::kOut, 0,
                         state.source_numel * state.itemsize));
      s = Prepare(state.through);
    }
  }
  for (CompiledBucket& c : buckets_) {
    if (c.single.has_value()) {
      const StepCopies copies = CopiesOf(*c.single);
      c.before.program = copies.before;
      c.after.program = copies.after;
      c.io = copies.io;
      c.calls_collective = copies.collective;
      if (s.ok()) s = Prepare(c.before);
      if (s.ok()) s = Prepare(c.after);
    }
    for (CompiledCopies& p : c.pack) s.Update(Prepare(p));
    for (CompiledCopies& p : c.unpack) s.Update(Prepare(p));
  }
  return s;
}

absl::Status BatchRunner::Move(const CompiledCopies& copies,
                               const CopyBuffers& buffers) {
  if (space_ == nullptr) {
    RunOnHost(copies.program, buffers);
    return absl::OkStatus();
  }
  return space_->Run(*copies.table, buffers);
}

absl::Status BatchRunner::AdvanceLocal(size_t t, int until,
                                       BatchRunStats& stats) {
  TensorState& state = tensors_[t];
  for (int j = state.next_step; j < until; ++j) {
    if (state.skip[j]) continue;
    const int64_t start = timer_.Now();
    char* target = state.Target(j);
    if (space_ == nullptr) {
      RunLocalStep(state.layouts[j], state.itemsize, state.current, target);
    } else {
      absl::Status s =
          Move(state.local[j], {state.current, target, wire_[0], wire_[1]});
      if (!s.ok()) return Labelled(s, StepLabel({static_cast<int>(t), j}));
    }
    state.Advance(j, target);
    timer_.Add(start, timer_.Now(), &stats.step_seconds[t][j]);
    stats.peak_bytes = std::max(stats.peak_bytes, state.bytes[j]);
  }
  state.next_step = std::max(state.next_step, until);
  return absl::OkStatus();
}

// A single step in a MemorySpace: its copies around its collective.
absl::Status BatchRunner::RunSingleInSpace(const CompiledBucket& c,
                                           const char* in, char* out) {
  const CopyBuffers buffers{in, out, wire_[0], wire_[1]};
  absl::Status s = Move(c.before, buffers);
  if (s.ok() && c.calls_collective) {
    const CompiledStep& step = *c.single;
    s = CallCollective(*c.comm, step.step.op,
                       ReadableBuffer(c.io.send, buffers) + c.io.send_offset,
                       WritableBuffer(c.io.recv, buffers), step.block,
                       step.dtype,
                       {step.step.reduce_op, step.step.avg_divisor});
  }
  if (s.ok()) s = Move(c.after, buffers);
  return s;
}

absl::Status BatchRunner::RunSingle(size_t b) {
  const BucketMember& m = schedule_.buckets[b].members[0];
  TensorState& state = tensors_[m.tensor];
  const CompiledBucket& c = buckets_[b];
  char* target = state.Target(m.step);
  absl::Status s =
      space_ == nullptr
          ? ExecuteStep(*c.single, state.current, target, {wire_[0], wire_[1]})
          : RunSingleInSpace(c, state.current, target);
  if (!s.ok()) return Labelled(s, StepLabel(m));
  state.Advance(m.step, target);
  return absl::OkStatus();
}

// A bucket of several members: pack each, one collective, unpack each.
absl::Status BatchRunner::RunShared(size_t b) {
  const Bucket& bucket = schedule_.buckets[b];
  const CompiledBucket& c = buckets_[b];
  absl::Status s;
  for (size_t k = 0; k < bucket.members.size() && s.ok(); ++k) {
    s = Move(c.pack[k], {tensors_[bucket.members[k].tensor].current, nullptr,
                         wire_[0], wire_[1]});
  }
  // Members of a group agree on the packed block: when it is empty nothing
  // moves on any of them.
  if (s.ok() && c.Block() > 0) {
    char* result = bucket.op == StepOp::kAllReduce ? wire_[0] : wire_[1];
    s = CallCollective(*c.comm, bucket.op, wire_[0], result, c.wire_numel,
                       c.dtype, {bucket.reduce_op, bucket.avg_divisor});
  }
  for (size_t k = 0; k < bucket.members.size() && s.ok(); ++k) {
    TensorState& state = tensors_[bucket.members[k].tensor];
    char* target = state.Target(bucket.members[k].step);
    s = Move(c.unpack[k], {nullptr, target, wire_[0], wire_[1]});
    state.Advance(bucket.members[k].step, target);
  }
  return Labelled(s, BucketLabel(mesh_, b, bucket));
}

absl::Status BatchRunner::RunBucket(size_t b, BatchRunStats& stats) {
  stats.peak_bytes = std::max(stats.peak_bytes, buckets_[b].bytes_held);
  return buckets_[b].single.has_value() ? RunSingle(b) : RunShared(b);
}

void BatchRunner::StartRun(absl::Span<const void* const> in,
                           absl::Span<void* const> out, BatchRunStats& st) {
  timer_.Start();
  st.bucket_seconds.assign(buckets_.size(), 0.0);
  st.local_seconds = 0;
  st.total_seconds = 0;
  st.peak_bytes = 0;
  st.step_seconds.resize(tensors_.size());
  for (size_t t = 0; t < tensors_.size(); ++t) {
    st.step_seconds[t].assign(tensors_[t].layouts.size(), 0.0);
    TensorState& state = tensors_[t];
    state.next_step = 0;
    state.flip = 0;
    state.current = static_cast<const char*>(in[t]);
    state.out = static_cast<char*>(out[t]);
  }
}

// After the last bucket: every tensor's remaining local steps, and the
// copy through for tensors no step moves.
absl::Status BatchRunner::FinishRun(absl::Span<const void* const> in,
                                    BatchRunStats& st) {
  for (size_t t = 0; t < tensors_.size(); ++t) {
    TensorState& state = tensors_[t];
    absl::Status s =
        AdvanceLocal(t, static_cast<int>(state.layouts.size()), st);
    if (!s.ok()) return s;
    if (state.last >= 0) continue;
    st.peak_bytes = std::max(st.peak_bytes, state.ThroughBytes());
    const char* from = static_cast<const char*>(in[t]);
    if (space_ == nullptr) {
      CopyBytes(state.out, from, state.source_numel * state.itemsize);
    } else {
      s = Move(state.through, {from, state.out, wire_[0], wire_[1]});
      if (!s.ok()) return Labelled(s, TensorLabel(t) + "copy");
    }
  }
  return absl::OkStatus();
}

absl::Status BatchRunner::Run(absl::Span<const void* const> in,
                              absl::Span<void* const> out,
                              BatchRunStats* stats) {
  BatchRunStats local_stats;
  BatchRunStats& st = stats != nullptr ? *stats : local_stats;
  StartRun(in, out, st);
  const int64_t run_start = timer_.Now();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const int64_t local_start = timer_.Now();
    absl::Status s;
    for (const BucketMember& m : schedule_.buckets[b].members) {
      if (s.ok()) s = AdvanceLocal(m.tensor, m.step, st);
    }
    if (!s.ok()) return s;
    const int64_t bucket_start = timer_.Now();
    timer_.Add(local_start, bucket_start, &st.local_seconds);
    s = RunBucket(b, st);
    if (!s.ok()) return s;
    timer_.Add(bucket_start, timer_.Now(), &st.bucket_seconds[b]);
  }
  const int64_t tail_start = timer_.Now();
  absl::Status s = FinishRun(in, st);
  const int64_t run_end = timer_.Now();
  timer_.Add(tail_start, run_end, &st.local_seconds);
  timer_.Add(run_start, run_end, &st.total_seconds);
  // The run's one wait (its collectives, then what follows the last one),
  // then its times.
  if (s.ok()) s = provider_->Drain();
  if (s.ok() && space_ != nullptr) s = space_->Synchronize();
  if (s.ok()) s = timer_.Resolve();
  if (!s.ok()) return s;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (const BucketMember& m : schedule_.buckets[b].members) {
      st.step_seconds[m.tensor][m.step] = st.bucket_seconds[b];
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
