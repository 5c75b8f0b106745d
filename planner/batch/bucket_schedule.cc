#include "planner/batch/bucket_schedule.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "planner/core/field_error.h"
#include "planner/core/local_layout.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/plan_memory.h"

namespace reshard {
namespace {

bool IsReduction(StepOp op) {
  return op == StepOp::kAllReduce || op == StepOp::kReduceScatter;
}

// What the members of one bucket share (docs/DESIGN.md §8): data movement
// leaves reduce op, divisor and dtype at their neutral values. Groups with the
// same ranks in the same order share a key (Mesh::WithoutUnitDims).
struct BucketKey {
  StepOp op = StepOp::kAllGather;
  Group group;
  ReduceOp reduce_op = ReduceOp::kSum;
  int64_t avg_divisor = 1;
  int dtype = -1;  // a reduction's DType; -1 for data movement

  bool operator==(const BucketKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const BucketKey& k) {
    return H::combine(std::move(h), k.op, k.group, k.reduce_op, k.avg_divisor,
                      k.dtype);
  }
};

BucketKey KeyOf(const Mesh& mesh, const Step& step, DType dtype) {
  BucketKey key{step.op, mesh.WithoutUnitDims(step.group)};
  if (IsReduction(step.op)) {
    key.reduce_op = step.reduce_op;
    key.avg_divisor = step.avg_divisor;
    key.dtype = static_cast<int>(dtype);
  }
  return key;
}

// One communicating step as the schedule sees it: its padded buffers on
// the largest rank and the bytes its model prices.
struct MemberSize {
  int64_t in = 0;
  int64_t out = 0;
  int64_t priced = 0;
  double step_us = 0;  // the member's step alone (a bucket of one runs it)
};

// Builds the schedule plan by plan, first fit: each step joins the earliest
// bucket of its key after the bucket of its tensor's previous step that
// has room, else opens a bucket at the end. Joining an existing bucket
// never moves another tensor's steps, so every tensor's order holds.
class Scheduler {
 public:
  // `join`: steps join earlier buckets (false: one bucket per step).
  Scheduler(const Mesh& mesh, const BucketOptions& options, bool join)
      : mesh_(mesh),
        options_(options),
        join_(join),
        bucket_model_(mesh, none_, options.cost) {}

  void AddPlan(int tensor, const Plan& plan);
  BucketSchedule Finish() &&;

 private:
  // The bucket a step on `group` joins: the first of `key` after `after`
  // with room; a new bucket takes the step's own group.
  int Place(const BucketKey& key, const Group& group, const MemberSize& size,
            int after);
  double BucketTime(size_t b) const;
  bool Fits(const Bucket& bucket, const MemberSize& size) const {
    return bucket.in_bytes + size.in <= options_.bucket_bytes &&
           bucket.out_bytes + size.out <= options_.bucket_bytes;
  }

  const Mesh& mesh_;
  const BucketOptions& options_;
  const bool join_;
  const TensorSpec none_;  // buckets are priced by group and bytes only
  const CostModel bucket_model_;
  BucketSchedule schedule_;
  std::vector<int64_t> priced_bytes_;  // per bucket
  std::vector<double> first_step_us_;  // per bucket: its first member's
  absl::flat_hash_map<BucketKey, std::vector<int>> by_key_;
};

void Scheduler::AddPlan(int tensor, const Plan& plan) {
  const CostModel model(mesh_, plan.tensor, options_.cost);
  int after = -1;  // the bucket of this tensor's previous step
  for (size_t j = 0; j < plan.steps.size(); ++j) {
    const Step& step = plan.steps[j];
    const Transition t = step.transition();
    const StepCost cost = model.Price(step.from, t);
    schedule_.time_us_before += cost.time_us;
    if (!step.IsCommunicating(mesh_)) {
      schedule_.time_us_after += cost.time_us;
      continue;
    }
    ++schedule_.collectives_before;
    const auto [in, out] = model.PaddedBuffers(
        step.from, t, MaxLocalExtents(mesh_, step.from, plan.tensor.shape()));
    after = Place(KeyOf(mesh_, step, plan.tensor.dtype()), step.group,
                  {in, out, cost.bytes, cost.time_us}, after);
    schedule_.buckets[after].members.push_back({tensor, static_cast<int>(j)});
  }
}

int Scheduler::Place(const BucketKey& key, const Group& group,
                     const MemberSize& size, int after) {
  std::vector<int>& candidates = by_key_[key];
  auto it = join_
                ? std::upper_bound(candidates.begin(), candidates.end(), after)
                : candidates.end();
  for (; it != candidates.end(); ++it) {
    if (Fits(schedule_.buckets[*it], size)) break;
  }
  int index;
  if (it != candidates.end()) {
    index = *it;
  } else {
    index = static_cast<int>(schedule_.buckets.size());
    Bucket bucket;
    bucket.op = key.op;
    bucket.group = group;
    bucket.reduce_op = key.reduce_op;
    bucket.avg_divisor = key.avg_divisor;
    schedule_.buckets.push_back(std::move(bucket));
    priced_bytes_.push_back(0);
    first_step_us_.push_back(size.step_us);
    candidates.push_back(index);
  }
  Bucket& bucket = schedule_.buckets[index];
  bucket.in_bytes += size.in;
  bucket.out_bytes += size.out;
  priced_bytes_[index] += size.priced;
  return index;
}

// A bucket of one member runs its step as planned; a larger one packs
// every member's blocks into its wire buffers and back out.
double Scheduler::BucketTime(size_t b) const {
  const Bucket& bucket = schedule_.buckets[b];
  if (bucket.members.size() == 1) return first_step_us_[b];
  const double packed = static_cast<double>(bucket.in_bytes + bucket.out_bytes);
  return bucket_model_.CollectiveTime(bucket.op, bucket.group,
                                      priced_bytes_[b]) +
         packed * bucket_model_.PackingUsPerByte();
}

BucketSchedule Scheduler::Finish() && {
  for (size_t b = 0; b < schedule_.buckets.size(); ++b) {
    Bucket& bucket = schedule_.buckets[b];
    bucket.bytes = std::max(bucket.in_bytes, bucket.out_bytes);
    bucket.time_us = BucketTime(b);
    schedule_.time_us_after += bucket.time_us;
  }
  schedule_.collectives_after = static_cast<int64_t>(schedule_.buckets.size());
  return std::move(schedule_);
}

// Every planned tensor's steps through a Scheduler (joining buckets or,
// tensor by tensor, not), and the schedule's peak.
BucketSchedule Schedule(const Mesh& mesh, absl::Span<const Plan* const> plans,
                        const BucketOptions& options, bool join) {
  Scheduler scheduler(mesh, options, join);
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i] != nullptr) {
      scheduler.AddPlan(static_cast<int>(i), *plans[i]);
    }
  }
  BucketSchedule schedule = std::move(scheduler).Finish();
  schedule.peak_bytes = BatchPeakBytes(mesh, plans, schedule);
  return schedule;
}

}  // namespace

bool Bucket::Reduces() const { return IsReduction(op); }

absl::StatusOr<BucketSchedule> ScheduleBuckets(
    const Mesh& mesh, absl::Span<const Plan* const> plans,
    const BucketOptions& options) {
  if (options.bucket_bytes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bucket_bytes: must be >= 1, got ", options.bucket_bytes));
  }
  return Schedule(mesh, plans, options, /*join=*/true);
}

BucketSchedule UnbucketedSchedule(const Mesh& mesh,
                                  absl::Span<const Plan* const> plans,
                                  const CostOptions& cost) {
  return Schedule(mesh, plans, {kDefaultBucketBytes, cost}, /*join=*/false);
}

namespace {

// What a schedule's reader checks as it walks the buckets: each tensor's
// last scheduled step and the bucket that held it.
class ScheduleCheck {
 public:
  ScheduleCheck(const Mesh& mesh, absl::Span<const Plan* const> plans)
      : mesh_(mesh),
        plans_(plans),
        last_step_(plans.size(), -1),
        last_bucket_(plans.size(), -1),
        covered_(plans.size(), 0) {}

  absl::Status Member(int b, const Bucket& bucket, const BucketMember& m,
                      const std::string& field);
  absl::Status Covered() const;

 private:
  const Mesh& mesh_;
  absl::Span<const Plan* const> plans_;
  std::vector<int> last_step_, last_bucket_, covered_;
};

absl::Status ScheduleCheck::Member(int b, const Bucket& bucket,
                                   const BucketMember& m,
                                   const std::string& field) {
  if (m.tensor < 0 || m.tensor >= static_cast<int>(plans_.size()) ||
      plans_[m.tensor] == nullptr) {
    return InvalidField(field,
                        absl::StrCat("tensor ", m.tensor, " is not planned"));
  }
  const Plan& plan = *plans_[m.tensor];
  if (m.step < 0 || m.step >= static_cast<int>(plan.steps.size()) ||
      !plan.steps[m.step].IsCommunicating(mesh_)) {
    return InvalidField(
        field, absl::StrCat("step ", m.step, " is not a communicating step"));
  }
  const Step& step = plan.steps[m.step];
  const BucketKey key = KeyOf(mesh_, step, plan.tensor.dtype());
  const BucketKey first = KeyOf(
      mesh_, plans_[bucket.members[0].tensor]->steps[bucket.members[0].step],
      plans_[bucket.members[0].tensor]->tensor.dtype());
  if (step.op != bucket.op || !mesh_.SameRanks(step.group, bucket.group) ||
      !(key == first) ||
      (bucket.Reduces() && (step.reduce_op != bucket.reduce_op ||
                            step.avg_divisor != bucket.avg_divisor))) {
    return InvalidField(field,
                        "its step does not match the bucket's op, "
                        "group, reduction or dtype");
  }
  if (m.step <= last_step_[m.tensor] || b <= last_bucket_[m.tensor]) {
    return InvalidField(field, absl::StrCat("step ", m.step, " of tensor ",
                                            m.tensor, " is out of its order"));
  }
  last_step_[m.tensor] = m.step;
  last_bucket_[m.tensor] = b;
  ++covered_[m.tensor];
  return absl::OkStatus();
}

absl::Status ScheduleCheck::Covered() const {
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (plans_[t] == nullptr) continue;
    if (covered_[t] != plans_[t]->CommunicatingSteps(mesh_)) {
      return InvalidField(absl::StrCat("tensors[", t, "]"),
                          absl::StrCat(covered_[t], " of its ",
                                       plans_[t]->CommunicatingSteps(mesh_),
                                       " communicating steps are scheduled"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBucketSchedule(const Mesh& mesh,
                                 absl::Span<const Plan* const> plans,
                                 const BucketSchedule& schedule) {
  ScheduleCheck check(mesh, plans);
  for (size_t b = 0; b < schedule.buckets.size(); ++b) {
    const Bucket& bucket = schedule.buckets[b];
    if (bucket.members.empty()) {
      return InvalidField(absl::StrCat("buckets[", b, "]"), "no members");
    }
    for (size_t k = 0; k < bucket.members.size(); ++k) {
      const std::string field =
          absl::StrCat("buckets[", b, "].members[", k, "]");
      // The first member is checked before it serves as the reference.
      absl::Status s =
          check.Member(static_cast<int>(b), bucket, bucket.members[k], field);
      if (!s.ok()) return s;
    }
  }
  return check.Covered();
}

}  // namespace reshard
