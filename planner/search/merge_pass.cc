#include "planner/search/merge_pass.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/core/chunking.h"
#include "planner/cost/plan_costs.h"
#include "planner/search/plan_warnings.h"

namespace reshard {
namespace {

bool Mergeable(StepOp op) {
  return op == StepOp::kAllGather || op == StepOp::kAllReduce ||
         op == StepOp::kReduceScatter;
}

bool LinearPartial(const Placement& p) {
  return p.is_partial() &&
         (p.op() == ReduceOp::kSum || p.op() == ReduceOp::kAvg);
}

// Whether `step` joins the run that `first` opened: same kind and the same
// per-dim placement pair, or {sum,avg} Partial sources with the same target.
bool JoinsRun(const Step& first, const Step& step) {
  if (step.op != first.op || step.group.size() != 1) return false;
  const int a = first.group[0];
  const int b = step.group[0];
  const Placement fs = first.from.placement(a), ft = first.to.placement(a);
  const Placement ss = step.from.placement(b), st = step.to.placement(b);
  if (ft != st) return false;
  return fs == ss || (LinearPartial(fs) && LinearPartial(ss));
}

// Every extent the split tensor dim can have on some rank just before the
// run's group (the "outermost extent" PyTorch checks for divisibility).
std::set<int64_t> OuterExtents(const Mesh& mesh, const DistState& state,
                               int tensor_dim, int levels, int64_t extent) {
  std::set<int64_t> extents{extent};
  const std::vector<int> order = state.ShardOrder(tensor_dim);
  for (int i = 0; i < levels; ++i) {
    std::set<int64_t> next;
    const int64_t n = mesh.size(order[i]);
    for (int64_t e : extents) {
      // Parts are full, then at most one partial, then empty: three values.
      const int64_t full = ChunkFull(e, n);
      next.insert(full);
      next.insert(ChunkSize(e, n, e / std::max<int64_t>(full, 1)));
      next.insert(ChunkSize(e, n, n - 1));
    }
    extents = std::move(next);
  }
  return extents;
}

// The runs that would merge onto one unregistered group if it were
// registered, and what they would save together.
struct MissingGroup {
  Group dims;  // ascending, as the merged step lists them
  std::string first_run;
  int runs = 0;
  double run_time_us = 0;
  double merged_time_us = 0;
};

// The extent PyTorch checks a merged reduce_scatter of `run` against
// on rank 0: the destination tensor dim split by the mesh dims that shard
// it before the run (greedy: in the source placements, on mesh dims before
// the run's first; the graph planner: in the state before the run).
int64_t TorchCheckedExtent(const Mesh& mesh, const DistState& source,
                           ShapeSource shapes, const std::vector<Step>& run,
                           int64_t extent) {
  const Step& first = run.front();
  const int b = *first.dst_tensor_dim;
  const int first_dim = std::min_element(run.begin(), run.end(),
                                         [](const Step& x, const Step& y) {
                                           return x.group[0] < y.group[0];
                                         })
                            ->group[0];
  const bool greedy = shapes == ShapeSource::kGreedySource;
  const DistState& state = greedy ? source : first.from;
  for (int k = 0; k < mesh.ndim(); ++k) {
    if (greedy && k >= first_dim) break;
    if (state.placement(k) == Placement::Shard(b)) {
      extent = ChunkSize(extent, mesh.size(k), 0);
    }
  }
  return extent;
}

class Merger {
 public:
  Merger(const Mesh& mesh, const CostModel& model, const DistState& source,
         ShapeSource shapes)
      : mesh_(mesh), model_(model), source_(source), shapes_(shapes) {}

  // Returns the merged step, or nullopt (with a warning when warranted).
  // PyTorch's checks in its order: ascending dims, a registered group,
  // then evenness.
  std::optional<Step> TryMerge(const std::vector<Step>& run,
                               std::vector<Warning>& warnings) {
    if (run.size() < 2) return std::nullopt;
    const StepOp op = run[0].op;
    Group dims;
    for (const Step& s : run) dims.push_back(s.group[0]);
    Group sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<std::string> names = GroupDimNames(mesh_, sorted);
    const std::string what =
        absl::StrCat(run.size(), " sequential ", StepOpName(op),
                     " steps on mesh dims ", QuotedDims(names));
    if (!Ascending(op, dims, sorted)) {
      AddWarning(warnings, {WarningCode::kNonAscendingMergeRefused, names,
                            absl::StrCat(what,
                                         ": it is not possible to merge "
                                         "non-ascending order ",
                                         StepOpName(op), " operations"),
                            0});
      return std::nullopt;
    }
    absl::StatusOr<Step> merged =
        MakeStep(mesh_, run.front().from, run.back().to, sorted);
    if (!merged.ok()) return std::nullopt;
    // A registered group serves the run when it has the same ranks in the
    // same order (its size-1 dims aside), as PyTorch's lookup of a
    // flattened mesh by layout finds it.
    if (mesh_.ServingGroup(sorted) == nullptr) {
      NoteMissing(sorted, what, run, *merged);
      return std::nullopt;
    }
    if (std::optional<std::string> why = Uneven(run, *merged)) {
      AddWarning(warnings, {WarningCode::kUnevenMergeRefused, names,
                            absl::StrCat(what, " cannot merge: ", *why), 0});
      return std::nullopt;
    }
    return *merged;
  }

  // One missing_flattened_group warning per group that no registered group
  // serves, as PyTorch warns, with what registering it saves (every
  // run noted for it merging at once), or that it saves nothing.
  void AddMissingGroupWarnings(std::vector<Warning>& warnings) const {
    for (const MissingGroup& m : missing_) {
      const double saving = std::max(0.0, m.run_time_us - m.merged_time_us);
      const std::vector<std::string> names = GroupDimNames(mesh_, m.dims);
      const std::string effect =
          saving > 0
              ? absl::StrCat("saving ", SavingText(saving, m.run_time_us))
              : absl::StrFormat(
                    "which would not save time under this cost model (%.4g "
                    "us merged vs %.4g us; PyTorch advises it anyway)",
                    m.merged_time_us, m.run_time_us);
      const std::string runs =
          m.runs == 1
              ? absl::StrCat(m.first_run, " could run as one collective, ",
                             effect)
              : absl::StrCat(m.runs, " runs of sequential steps on mesh dims ",
                             QuotedDims(names), " (the first: ", m.first_run,
                             ") could each run as one collective, ", effect,
                             saving > 0 ? " in all" : "");
      AddWarning(warnings,
                 {WarningCode::kMissingFlattenedGroup, names,
                  absl::StrCat(runs, "; ", RegisterGroupAdvice(mesh_, m.dims)),
                  saving});
    }
  }

 private:
  void NoteMissing(const Group& dims, const std::string& what,
                   const std::vector<Step>& run, const Step& merged) {
    auto it =
        std::find_if(missing_.begin(), missing_.end(),
                     [&](const MissingGroup& m) { return m.dims == dims; });
    if (it == missing_.end()) {
      it = missing_.insert(missing_.end(), MissingGroup{dims, what});
    }
    ++it->runs;
    it->run_time_us += TotalTime(model_, run);
    it->merged_time_us += TotalTime(model_, {merged});
  }

  static bool Ascending(StepOp op, const Group& dims, const Group& sorted) {
    if (op == StepOp::kReduceScatter) {
      return dims == sorted &&
             std::adjacent_find(dims.begin(), dims.end()) == dims.end();
    }
    if (op == StepOp::kAllGather)
      return Group(sorted.rbegin(), sorted.rend()) == dims;
    return true;
  }

  // Why the run must not merge for its extents, or nullopt. PyTorch
  // checks reduce_scatter on rank 0 only (TorchCheckedExtent) and never
  // all_gather; a merged collective over two or more dims of size > 1 on
  // extents some rank cannot split evenly places data unlike the steps it
  // replaces (PyTorch gives wrong data there), so that stays refused.
  std::optional<std::string> Uneven(const std::vector<Step>& run,
                                    const Step& merged) const {
    const int64_t n = mesh_.GroupSize(merged.group);
    const std::string product = absl::StrCat(
        "the tensor dimension is not evenly divisible by the product of the "
        "mesh dim sizes (",
        n, ")");
    if (merged.op == StepOp::kReduceScatter &&
        TorchCheckedExtent(mesh_, source_, shapes_, run,
                           model_.tensor().shape()[*merged.dst_tensor_dim]) %
                Divisor(n) !=
            0) {
      return absl::StrCat(product, " on rank 0, as PyTorch checks it");
    }
    if (merged.op == StepOp::kAllReduce ||
        mesh_.WithoutUnitDims(merged.group).size() < 2 ||
        EvenlyDivisible(merged)) {
      return std::nullopt;
    }
    return absl::StrCat(
        product,
        " on every rank; PyTorch merges it and places data wrongly "
        "(docs/PLAN_JSON.md, uneven_merge_refused)");
  }

  static int64_t Divisor(int64_t n) { return std::max<int64_t>(n, 1); }

  // The extents checked are those just outside the group: all_gather's
  // source order without the group, reduce_scatter's order before it.
  bool EvenlyDivisible(const Step& merged) const {
    const bool gather = merged.op == StepOp::kAllGather;
    const int dim = gather ? *merged.src_tensor_dim : *merged.dst_tensor_dim;
    const DistState& outer = gather ? merged.to : merged.from;
    const int64_t n = mesh_.GroupSize(merged.group);
    for (int64_t e : OuterExtents(mesh_, outer, dim, outer.ShardDepth(dim),
                                  model_.tensor().shape()[dim])) {
      if (e % n != 0) return false;
    }
    return true;
  }

  const Mesh& mesh_;
  const CostModel& model_;
  const DistState& source_;
  ShapeSource shapes_;
  std::vector<MissingGroup> missing_;
};

}  // namespace

MergeResult MergeFlattened(const Mesh& mesh, const CostModel& model,
                           const DistState& source, ShapeSource shapes,
                           std::vector<Step> steps) {
  MergeResult result;
  Merger merger(mesh, model, source, shapes);
  size_t i = 0;
  while (i < steps.size()) {
    if (!Mergeable(steps[i].op) || steps[i].group.size() != 1) {
      result.steps.push_back(std::move(steps[i++]));
      continue;
    }
    size_t end = i + 1;
    while (end < steps.size() && JoinsRun(steps[i], steps[end])) ++end;
    std::vector<Step> run(steps.begin() + i, steps.begin() + end);
    std::optional<Step> merged = merger.TryMerge(run, result.warnings);
    if (merged.has_value()) {
      result.steps.push_back(*std::move(merged));
    } else {
      for (Step& s : run) result.steps.push_back(std::move(s));
    }
    i = end;
  }
  merger.AddMissingGroupWarnings(result.warnings);
  return result;
}

}  // namespace reshard
