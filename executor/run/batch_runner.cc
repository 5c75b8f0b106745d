#include "executor/run/batch_runner.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "executor/memory/host_memory_space.h"
#include "executor/run/bucket_copies.h"
#include "executor/run/copy_program.h"
#include "executor/run/preflight.h"
#include "executor/run/run_timer.h"
#include "executor/run/step_exec.h"
#include "planner/batch/batch_digest.h"
#include "planner/core/plan_structure.h"
#include "planner/core/step_memory.h"
#include "run_values/batch_work.h"

namespace reshard::executor {

// Data movement buckets move bytes: counted in 16-bit words, which every
// dtype's blocks fill exactly.
constexpr DType kWordDType = DType::kFloat16;

struct BatchRunner::TensorState {
  std::vector<StepLayout> layouts;  // per step, this rank's
  std::vector<char> skip;           // per step: a group of size 1
  std::vector<int64_t> bytes;       // per step: StepLiveBytes
  int last = -1;                    // the last step that is not skipped
  int64_t itemsize = 0;
  int64_t source_numel = 0;
  int64_t result_numel = 0;
  // Two buffers of the largest intermediate result.
  int64_t buffer_bytes = 0;
  SpaceBuffer buffers[2];
  // Per step, a local step's work (null for the others); and the copy of
  // the input to the output when no step moves anything.
  std::vector<std::unique_ptr<SpaceWork>> local;
  std::unique_ptr<SpaceWork> through;
  // Progress within one Run.
  int next_step = 0;
  const char* current = nullptr;
  char* out = nullptr;
  int flip = 0;

  // A tensor no step moves is copied from the caller's input to its output.
  int64_t ThroughBytes() const { return 2 * source_numel * itemsize; }
  // Where step j writes: the caller's output for the last step, else the
  // buffer that does not hold its input.
  char* Target(int j) { return j == last ? out : buffers[flip].get(); }
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
  std::unique_ptr<SpaceWork> single;
  // Several members: each one's packing and unpacking.
  std::vector<std::unique_ptr<SpaceWork>> pack, unpack;
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

absl::Status Labelled(const absl::Status& s, absl::string_view label) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(label, ": ", s.message()));
}

}  // namespace

BatchRunner::BatchRunner(const Mesh& mesh, std::vector<Plan> plans,
                         BucketSchedule schedule, int64_t position,
                         CommunicatorProvider& provider, MemorySpace& space,
                         std::unique_ptr<MemorySpace> own_space)
    : mesh_(mesh),
      plans_(std::move(plans)),
      schedule_(std::move(schedule)),
      position_(position),
      provider_(&provider),
      own_space_(std::move(own_space)),
      space_(&space),
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
    int64_t rank, CommunicatorProvider& provider, MemorySpace* space,
    Preflight* preflight) {
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
  std::unique_ptr<MemorySpace> host;
  if (space == nullptr) {
    host = std::make_unique<HostMemorySpace>();
    space = host.get();
  }
  Preflight own;
  s = RunPreflight(mesh, BatchDigest(mesh, ptrs, schedule),
                   DigestNoun(plans.size()), rank, provider, *space,
                   preflight != nullptr ? *preflight : own);
  if (!s.ok()) return s;
  std::unique_ptr<BatchRunner> runner(
      new BatchRunner(mesh, std::move(plans), std::move(schedule), position,
                      provider, *space, std::move(host)));
  runner->CompileTensors();
  s = runner->PrepareTensors();
  if (s.ok()) s = runner->CompileBuckets(provider);
  if (s.ok()) s = runner->AllocateBuffers();
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
absl::Status BatchRunner::CompileSingle(CompiledBucket& c,
                                        const BucketMember& m) {
  const Plan& plan = plans_[m.tensor];
  CompiledStep step =
      CompileStep(mesh_, plan.tensor, plan.steps[m.step], position_);
  step.comm = c.comm;
  const WireUse wire = WireOf(step);
  wire_bytes_[0] = std::max(wire_bytes_[0], wire.in);
  wire_bytes_[1] = std::max(wire_bytes_[1], wire.out);
  c.bytes_held = StepBytes(step);
  absl::StatusOr<std::unique_ptr<SpaceWork>> work =
      space_->PrepareStep(std::move(step));
  if (!work.ok()) return work.status();
  c.single = *std::move(work);
  return absl::OkStatus();
}

// A bucket of several members: one collective over their packed blocks.
absl::Status BatchRunner::CompileShared(CompiledBucket& c,
                                        const Bucket& bucket) {
  if (bucket.Reduces()) {
    c.dtype = plans_[bucket.members[0].tensor].tensor.dtype();
  }
  c.wire_numel = c.Block() / ItemSize(c.dtype);
  const WireUse wire = BucketWire(bucket.op, c.layout);
  wire_bytes_[0] = std::max(wire_bytes_[0], wire.in);
  wire_bytes_[1] = std::max(wire_bytes_[1], wire.out);
  c.bytes_held = BucketLiveBytes(bucket.op, c.layout);
  for (size_t k = 0; k < bucket.members.size(); ++k) {
    absl::StatusOr<std::unique_ptr<SpaceWork>> pack =
        space_->PrepareCopies(BucketPackProgram(c.layout, bucket.op, k));
    if (!pack.ok()) return pack.status();
    c.pack.push_back(*std::move(pack));
    absl::StatusOr<std::unique_ptr<SpaceWork>> unpack =
        space_->PrepareCopies(BucketUnpackProgram(c.layout, bucket.op, k));
    if (!unpack.ok()) return unpack.status();
    c.unpack.push_back(*std::move(unpack));
  }
  return absl::OkStatus();
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
    absl::Status s = bucket.members.size() == 1
                         ? CompileSingle(c, bucket.members[0])
                         : CompileShared(c, bucket);
    if (!s.ok()) return s;
    step_bound_ = std::max(step_bound_, c.bytes_held);
  }
  memory_bound_ += wire_bytes_[0] + wire_bytes_[1];
  return absl::OkStatus();
}

// Every tensor's local steps as work in the space, and the copy through
// for tensors no step moves.
absl::Status BatchRunner::PrepareTensors() {
  for (size_t t = 0; t < tensors_.size(); ++t) {
    TensorState& state = tensors_[t];
    const Plan& plan = plans_[t];
    state.local.resize(plan.steps.size());
    for (size_t j = 0; j < plan.steps.size(); ++j) {
      if (state.skip[j] || IsCollective(plan.steps[j].op)) continue;
      absl::StatusOr<std::unique_ptr<SpaceWork>> work = space_->PrepareStep(
          CompileStep(mesh_, plan.tensor, plan.steps[j], position_));
      if (!work.ok()) return work.status();
      state.local[j] = *std::move(work);
    }
    if (state.last >= 0) continue;
    CopyProgram through;
    through.copies.push_back(
        ContiguousCopy(CopyBuffer::kIn, 0, CopyBuffer::kOut, 0,
                       state.source_numel * state.itemsize));
    absl::StatusOr<std::unique_ptr<SpaceWork>> work =
        space_->PrepareCopies(through);
    if (!work.ok()) return work.status();
    state.through = *std::move(work);
  }
  return absl::OkStatus();
}

absl::Status BatchRunner::AllocateBuffers() {
  for (TensorState& state : tensors_) {
    for (SpaceBuffer& buffer : state.buffers) {
      absl::StatusOr<SpaceBuffer> b = AllocateIn(*space_, state.buffer_bytes);
      if (!b.ok()) return b.status();
      buffer = *std::move(b);
    }
  }
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<SpaceBuffer> b = AllocateIn(*space_, wire_bytes_[i]);
    if (!b.ok()) return b.status();
    wire_[i] = *std::move(b);
  }
  return absl::OkStatus();
}

CopyBuffers BatchRunner::On(const char* in, char* out) const {
  return {in, out, wire_[0].get(), wire_[1].get()};
}

absl::Status BatchRunner::AdvanceLocal(size_t t, int until,
                                       BatchRunStats& stats) {
  TensorState& state = tensors_[t];
  for (int j = state.next_step; j < until; ++j) {
    if (state.skip[j]) continue;
    const int64_t start = timer_.Now();
    char* target = state.Target(j);
    absl::Status s = state.local[j]->Run(On(state.current, target));
    if (!s.ok()) return Labelled(s, StepLabel({static_cast<int>(t), j}));
    state.Advance(j, target);
    timer_.Add(start, timer_.Now(), &stats.step_seconds[t][j]);
    stats.peak_bytes = std::max(stats.peak_bytes, state.bytes[j]);
  }
  state.next_step = std::max(state.next_step, until);
  return absl::OkStatus();
}

absl::Status BatchRunner::RunSingle(size_t b) {
  const BucketMember& m = schedule_.buckets[b].members[0];
  TensorState& state = tensors_[m.tensor];
  const CompiledBucket& c = buckets_[b];
  char* target = state.Target(m.step);
  absl::Status s = c.single->Run(On(state.current, target));
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
    s = c.pack[k]->Run(On(tensors_[bucket.members[k].tensor].current, nullptr));
  }
  // Members of a group agree on the packed block: when it is empty nothing
  // moves on any of them.
  if (s.ok() && c.Block() > 0) {
    char* result = wire_[bucket.op == StepOp::kAllReduce ? 0 : 1].get();
    s = CallCollective(*c.comm, bucket.op, wire_[0].get(), result, c.wire_numel,
                       c.dtype, {bucket.reduce_op, bucket.avg_divisor});
  }
  for (size_t k = 0; k < bucket.members.size() && s.ok(); ++k) {
    TensorState& state = tensors_[bucket.members[k].tensor];
    char* target = state.Target(bucket.members[k].step);
    s = c.unpack[k]->Run(On(nullptr, target));
    state.Advance(bucket.members[k].step, target);
  }
  return Labelled(s, BucketLabel(mesh_, b, bucket));
}

absl::Status BatchRunner::RunBucket(size_t b, BatchRunStats& stats) {
  stats.peak_bytes = std::max(stats.peak_bytes, buckets_[b].bytes_held);
  return buckets_[b].single != nullptr ? RunSingle(b) : RunShared(b);
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
    s = state.through->Run(On(static_cast<const char*>(in[t]), state.out));
    if (!s.ok()) return Labelled(s, TensorLabel(t) + "copy");
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
  if (s.ok()) s = space_->Synchronize();
  if (s.ok()) s = timer_.Resolve();
  if (!s.ok()) return s;
  ++executions_;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (const BucketMember& m : schedule_.buckets[b].members) {
      st.step_seconds[m.tensor][m.step] = st.bucket_seconds[b];
    }
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
