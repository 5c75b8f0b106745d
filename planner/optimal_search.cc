#include "planner/optimal_search.h"

#include <algorithm>
#include <array>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/local_layout.h"
#include "planner/remaining_bound.h"
#include "planner/search_edges.h"
#include "planner/state_table.h"

namespace reshard {
namespace {

// The search's record of one state: the best (cost, communicating steps,
// steps) known for it and how it was reached (the state it came from and
// the group of the step; MakeStep infers the rest when the plan is read
// back). One per distinct state, so memory grows with states, not edges.
struct Record {
  DistState state;
  double cost = std::numeric_limits<double>::infinity();  // unreached
  int32_t comm_steps = 0;
  int32_t steps = 0;
  int32_t parent = -1;
  uint32_t version = 0;  // bumped whenever a cheaper way in is found
  std::array<int8_t, kMaxMeshDims> via_group{};
  int8_t via_size = 0;
  bool closed = false;
};

// Ordered by estimated total cost, then estimated total communicating
// steps (so that among equal-cost plans the fewest collectives win), then
// deeper nodes first (cheap progress through commuting steps), then push
// order (determinism).
struct QueueEntry {
  double f;
  int32_t comm_estimate;
  double g;
  int64_t counter;
  uint32_t record;
  uint32_t version;  // stale when the record has moved on
  bool operator>(const QueueEntry& o) const {
    if (f != o.f) return f > o.f;
    if (comm_estimate != o.comm_estimate)
      return comm_estimate > o.comm_estimate;
    if (g != o.g) return g < o.g;
    return counter > o.counter;
  }
};

// What a search allocates, kept per thread between searches (see
// state_table.h for why) unless a search grew it unusually large.
struct SearchScratch {
  std::vector<QueueEntry> queue;  // a min-heap by std::greater
  StateTable<Record> records;
  RemainingBound::Memo memo;

  void Reset() {
    queue.clear();
    records.Clear();
  }
  // Called when a search ends: keeps at most a few MB per thread.
  void Trim() {
    constexpr size_t kKeepStates = size_t{1} << 15;
    if (records.size() > kKeepStates || queue.capacity() > 4 * kKeepStates) {
      queue = {};
      records.Release();
    }
  }
};

}  // namespace

absl::StatusOr<SearchResult> OptimalSearch(const Mesh& mesh,
                                           const CostModel& model,
                                           const DistState& src,
                                           const DistState& dst,
                                           const SearchOptions& options) {
  const TensorSpec& tensor = model.tensor();
  const DistState goal = dst.Canonical(mesh);
  EdgeGenerator edges(mesh, src, dst, tensor.rank(), options.flatten_policy);
  const bool has_unit_dims = std::find(mesh.shape().begin(), mesh.shape().end(),
                                       1) != mesh.shape().end();
  auto canonical = [&](const DistState& s) {
    return has_unit_dims ? s.Canonical(mesh) : s;
  };
  thread_local SearchScratch scratch;
  scratch.Reset();
  struct TrimOnExit {
    SearchScratch& scratch;
    ~TrimOnExit() { scratch.Trim(); }
  } trim_on_exit{scratch};
  RemainingBound remaining(mesh, model, options.flatten_policy, scratch.memo);
  auto heuristic = [&](const DistState& s) -> std::pair<double, int> {
    if (!options.use_heuristic) return {0.0, 0};
    return remaining.Of(canonical(s), goal);
  };
  auto better = [](double g, int32_t comm, int32_t steps, const Record& r) {
    if (g != r.cost) return g < r.cost;
    if (comm != r.comm_steps) return comm < r.comm_steps;
    return steps < r.steps;
  };
  StateTable<Record>& records = scratch.records;
  {
    Record& first = *records.FindOrInsert(src.Pack(), {}).value;
    first.state = src;
    first.cost = 0;
  }
  std::vector<QueueEntry>& queue = scratch.queue;
  auto push = [&](const QueueEntry& e) {
    queue.push_back(e);
    std::push_heap(queue.begin(), queue.end(), std::greater<QueueEntry>());
  };
  {
    const auto [h, h_comm] = heuristic(src);
    push({h, h_comm, 0.0, 0, 0, 0});
  }
  int64_t counter = 0;
  SearchResult result;
  bool peak_pruned = false;
  std::vector<int64_t> extents;
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), std::greater<QueueEntry>());
    const QueueEntry top = queue.back();
    queue.pop_back();
    Record& entry = records.at(top.record);
    if (entry.closed || entry.version != top.version) continue;  // stale
    entry.closed = true;
    // `records` grows below: copy what the edges need first.
    const DistState state = entry.state;
    const double cost_here = entry.cost;
    const int32_t comm_here = entry.comm_steps;
    const int32_t steps_here = entry.steps;
    if (canonical(state) == goal) {
      std::vector<uint32_t> chain;
      for (int32_t r = static_cast<int32_t>(top.record); r > 0;
           r = records.at(r).parent) {
        chain.push_back(r);
      }
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Record& r = records.at(*it);
        absl::StatusOr<Step> step = MakeStep(
            mesh, records.at(r.parent).state, r.state,
            Group(r.via_group.begin(), r.via_group.begin() + r.via_size));
        if (!step.ok()) return step.status();
        result.steps.push_back(*std::move(step));
      }
      result.cost = cost_here;
      return result;
    }
    if (options.stop && result.states_expanded % 64 == 0) {
      absl::Status stop = options.stop();
      if (!stop.ok()) return stop;
    }
    if (++result.states_expanded > options.budget) {
      return absl::ResourceExhaustedError(
          absl::StrCat("optimal: search budget of ", options.budget,
                       " expanded states exceeded"));
    }
    extents = MaxLocalExtents(mesh, state, tensor.shape());
    edges.Expand(state, [&](const Transition& t, DistState& to) {
      // One lookup per edge; a state first seen here starts unreached.
      const StateTable<Record>::Found found =
          records.FindOrInsert(to.Pack(), Record{});
      Record& known = *found.value;
      if (found.inserted) known.state = to;
      const StepCost cost = model.PriceWithExtents(state, t, extents);
      if (options.max_peak_bytes.has_value() &&
          cost.peak_bytes > *options.max_peak_bytes) {
        peak_pruned = true;
        return;
      }
      const double g = cost_here + cost.time_us;
      const bool communicating =
          IsCollective(t.op) && mesh.GroupSize(t.group) > 1;
      const int32_t comm = comm_here + (communicating ? 1 : 0);
      const int32_t steps = steps_here + 1;
      if (!better(g, comm, steps, known)) return;
      // A closed state reopens only when reached clearly cheaper (the
      // bound is admissible, not consistent); rounding noise and ties do
      // not reopen.
      if (known.closed && g >= known.cost * (1 - 1e-12)) return;
      const auto [h, h_comm] = heuristic(to);
      const double f = std::max(g + h, top.f);  // pathmax
      if (options.cost_bound.has_value() && f >= *options.cost_bound) return;
      known.cost = g;
      known.comm_steps = comm;
      known.steps = steps;
      known.parent = static_cast<int32_t>(top.record);
      known.via_size = static_cast<int8_t>(t.group.size());
      std::copy(t.group.begin(), t.group.end(), known.via_group.begin());
      known.closed = false;
      push({f, comm + h_comm, g, ++counter, found.index, ++known.version});
    });
  }
  if (options.cost_bound.has_value()) {
    return absl::NotFoundError("optimal: no plan below the cost bound");
  }
  if (peak_pruned) {
    return absl::FailedPreconditionError(
        absl::StrCat("options.max_peak_bytes: no plan from ", src.ToString(),
                     " to ", dst.ToString(), " keeps every step within ",
                     *options.max_peak_bytes, " bytes per rank"));
  }
  return absl::InternalError(absl::StrCat(
      "optimal: no path from ", src.ToString(), " to ", dst.ToString()));
}

}  // namespace reshard
