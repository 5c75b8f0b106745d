#include "planner/search/optimal_search.h"

#include <algorithm>
#include <array>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/core/local_layout.h"
#include "planner/search/remaining_bound.h"
#include "planner/search/search_edges.h"
#include "planner/search/state_table.h"

namespace reshard {
namespace {

// The search's record of one state: the best (cost, communicating steps,
// steps) known for it and how it was reached (the state it came from and
// the group of the step; MakeStep infers the rest when the plan is read
// back). One per distinct state, so memory grows with states, not edges;
// the state is kept as its code (DistState::Unpack reads it back).
struct Record {
  DistState::Code code;
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
      // Swapped out, not assigned `{}`: that keeps the capacity.
      std::vector<QueueEntry>().swap(queue);
      records.Release();
    }
    // The heuristic's memo grows with the states too past RemainingBound's
    // dense dims (within them it is bounded, and kept for the next search).
    if (memo.sparse.size() > kKeepStates) {
      memo.sparse = absl::flat_hash_map<uint32_t, double>();
    }
  }
};

// Reads the plan back from the records, from the source to `last`: MakeStep
// infers each step from the state it left, the state it reached and its
// group.
absl::StatusOr<std::vector<Step>> ReadPath(const Mesh& mesh,
                                           StateTable<Record>& records,
                                           uint32_t last) {
  return ReadBackPath(
      last,
      [&](int64_t r) { return records.at(static_cast<uint32_t>(r)).parent; },
      [&](int64_t index) {
        const Record& r = records.at(static_cast<uint32_t>(index));
        return MakeStep(
            mesh, DistState::Unpack(records.at(r.parent).code, mesh.ndim()),
            DistState::Unpack(r.code, mesh.ndim()),
            Group(r.via_group.begin(), r.via_group.begin() + r.via_size));
      });
}

// The state being expanded, unpacked from its record, and the record's
// figures as they were when it was popped.
struct Expanding {
  DistState state;
  double cost;
  int32_t comm_steps;
  int32_t steps;
  uint32_t record;
  double f;  // the estimate it was popped with (pathmax)
};

// One run of the search. Its phases: seed the queue with the source, pop
// the next live entry, stop at the goal, expand a state and relax each edge
// out of it, and say why no plan was found.
class Search {
 public:
  Search(const Mesh& mesh, const CostModel& model, const DistState& src,
         const DistState& dst, const SearchOptions& options,
         SearchScratch& scratch)
      : mesh_(mesh),
        model_(model),
        src_(src),
        dst_(dst),
        options_(options),
        goal_(dst.Canonical(mesh)),
        has_unit_dims_(std::find(mesh.shape().begin(), mesh.shape().end(), 1) !=
                       mesh.shape().end()),
        edges_(mesh, src, dst, model.tensor().rank(), options.flatten_policy,
               model.PricesOneRankCollectives()),
        remaining_(mesh, model, options.flatten_policy, scratch.memo),
        records_(scratch.records),
        queue_(scratch.queue) {}

  // After Run() returned RESOURCE_EXHAUSTED: no plan costs less than this.
  double lower_bound() const { return lower_bound_; }
  int64_t peak_bytes() const { return result_.peak_bytes; }

  absl::StatusOr<SearchResult> Run() {
    Seed();
    QueueEntry top{};
    while (PopLive(top)) {
      Record& entry = records_.at(top.record);
      entry.closed = true;
      const Expanding here{DistState::Unpack(entry.code, mesh_.ndim()),
                           entry.cost,
                           entry.comm_steps,
                           entry.steps,
                           top.record,
                           top.f};
      if (Canonical(here.state) == goal_) return Found(here);
      if (absl::Status stop = PollStop(options_.stop, result_.states_expanded);
          !stop.ok()) {
        return stop;
      }
      if (++result_.states_expanded > options_.budget) {
        lower_bound_ = top.f;
        return absl::ResourceExhaustedError(
            absl::StrCat("optimal: search budget of ", options_.budget,
                         " expanded states exceeded"));
      }
      if (result_.states_expanded % kStopPollInterval == 0 && OverMemory()) {
        lower_bound_ = top.f;
        return absl::ResourceExhaustedError(
            absl::StrCat("optimal: search memory bound of ", options_.max_bytes,
                         " bytes reached (--max_search_bytes)"));
      }
      Expand(here);
    }
    return NoPlan();
  }

 private:
  // Whether the tables' contents reached half the memory bound (their
  // doubling allocations then stay within it); records the peak.
  bool OverMemory() {
    const auto allocated = static_cast<int64_t>(
        records_.AllocatedBytes() + queue_.capacity() * sizeof(QueueEntry));
    result_.peak_bytes = std::max(result_.peak_bytes, allocated);
    const auto used = static_cast<int64_t>(records_.UsedBytes() +
                                           queue_.size() * sizeof(QueueEntry));
    return 2 * used > options_.max_bytes;
  }

  DistState Canonical(const DistState& s) const {
    return has_unit_dims_ ? s.Canonical(mesh_) : s;
  }

  std::pair<double, int> Heuristic(const DistState& s) {
    if (!options_.use_heuristic) return {0.0, 0};
    return remaining_.Of(Canonical(s), goal_);
  }

  // Ties: fewer communicating steps, then fewer steps.
  static bool Better(double g, int32_t comm, int32_t steps, const Record& r) {
    if (g != r.cost) return g < r.cost;
    if (comm != r.comm_steps) return comm < r.comm_steps;
    return steps < r.steps;
  }

  void Push(const QueueEntry& e) {
    queue_.push_back(e);
    std::push_heap(queue_.begin(), queue_.end(), std::greater<QueueEntry>());
  }

  void Seed() {
    const DistState::Code code = src_.Pack();
    Record& first = *records_.FindOrInsert(code, Record{.code = code}).value;
    first.cost = 0;
    const auto [h, h_comm] = Heuristic(src_);
    Push({h, h_comm, 0.0, 0, 0, 0});
  }

  // Pops entries until one is live (its record open and not moved on);
  // false when the queue runs dry.
  bool PopLive(QueueEntry& top) {
    while (!queue_.empty()) {
      std::pop_heap(queue_.begin(), queue_.end(), std::greater<QueueEntry>());
      top = queue_.back();
      queue_.pop_back();
      const Record& entry = records_.at(top.record);
      if (!entry.closed && entry.version == top.version) return true;
    }
    return false;
  }

  absl::StatusOr<SearchResult> Found(const Expanding& here) {
    absl::StatusOr<std::vector<Step>> steps =
        ReadPath(mesh_, records_, here.record);
    if (!steps.ok()) return steps.status();
    result_.steps = *std::move(steps);
    result_.cost = here.cost;
    OverMemory();  // records the final peak
    return std::move(result_);
  }

  void Expand(const Expanding& here) {
    extents_ = MaxLocalExtents(mesh_, here.state, model_.tensor().shape());
    edges_.Expand(here.state, [&](const Transition& t, DistState& to) {
      Relax(here, t, to);
    });
  }

  // Records the edge `t` from `here` to `to` when it is the best way in
  // known so far, and queues `to`.
  void Relax(const Expanding& here, const Transition& t, DistState& to) {
    // One lookup per edge; a state first seen here starts unreached.
    const DistState::Code code = to.Pack();
    const StateTable<Record>::Found found =
        records_.FindOrInsert(code, Record{.code = code});
    Record& known = *found.value;
    // Steps cost >= 0, so a state already reached for less than `here`
    // cannot be reached better through it: skip pricing the step.
    if (known.cost < here.cost || (known.closed && known.cost <= here.cost)) {
      return;
    }
    const StepCost cost = model_.PriceWithExtents(here.state, t, extents_);
    if (options_.max_peak_bytes.has_value() &&
        cost.peak_bytes > *options_.max_peak_bytes) {
      peak_pruned_ = true;
      return;
    }
    const double g = here.cost + cost.time_us;
    const bool communicating =
        IsCollective(t.op) && mesh_.GroupSize(t.group) > 1;
    const int32_t comm = here.comm_steps + (communicating ? 1 : 0);
    const int32_t steps = here.steps + 1;
    if (!Better(g, comm, steps, known)) return;
    // A closed state reopens only when reached clearly cheaper (the bound
    // is admissible, not consistent); rounding noise and ties do not reopen.
    if (known.closed && g >= known.cost * (1 - 1e-12)) return;
    const auto [h, h_comm] = Heuristic(to);
    const double f = std::max(g + h, here.f);  // pathmax
    if (options_.cost_bound.has_value() && f >= *options_.cost_bound) return;
    known.cost = g;
    known.comm_steps = comm;
    known.steps = steps;
    known.parent = static_cast<int32_t>(here.record);
    known.via_size = static_cast<int8_t>(t.group.size());
    std::copy(t.group.begin(), t.group.end(), known.via_group.begin());
    known.closed = false;
    Push({f, comm + h_comm, g, ++counter_, found.index, ++known.version});
  }

  absl::Status NoPlan() const {
    if (options_.cost_bound.has_value()) {
      return absl::NotFoundError("optimal: no plan below the cost bound");
    }
    if (peak_pruned_) {
      return absl::FailedPreconditionError(
          absl::StrCat("options.max_peak_bytes: no plan from ", src_.ToString(),
                       " to ", dst_.ToString(), " keeps every step within ",
                       *options_.max_peak_bytes, " bytes per rank"));
    }
    // Unreachable for valid input (see OptimalSearch): a plan through R
    // always exists and every edge into it has a finite cost, so only a
    // bug in the edges or the cost model gets here.
    return absl::InternalError(absl::StrCat(
        "optimal: no path from ", src_.ToString(), " to ", dst_.ToString()));
  }

  const Mesh& mesh_;
  const CostModel& model_;
  const DistState& src_;
  const DistState& dst_;
  const SearchOptions& options_;
  const DistState goal_;
  const bool has_unit_dims_;
  EdgeGenerator edges_;
  RemainingBound remaining_;
  StateTable<Record>& records_;
  std::vector<QueueEntry>& queue_;
  std::vector<int64_t> extents_;  // of the state being expanded
  int64_t counter_ = 0;
  bool peak_pruned_ = false;
  double lower_bound_ = 0;
  SearchResult result_;
};

}  // namespace

absl::StatusOr<SearchResult> OptimalSearch(
    const Mesh& mesh, const CostModel& model, const DistState& src,
    const DistState& dst, const SearchOptions& options, double* lower_bound,
    int64_t* peak_bytes) {
  thread_local SearchScratch scratch;
  scratch.Reset();
  Search search(mesh, model, src, dst, options, scratch);
  absl::StatusOr<SearchResult> result = search.Run();
  if (lower_bound != nullptr) *lower_bound = search.lower_bound();
  if (peak_bytes != nullptr) *peak_bytes = search.peak_bytes();
  scratch.Trim();
  return result;
}

}  // namespace reshard
