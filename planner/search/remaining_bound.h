// RemainingBound: an admissible lower bound on what the optimal search
// still has to pay from a state (cost, and communicating steps).
//
// Every mesh dim (size > 1) gets a demand from its placement now and at the
// end:
//  - kOne: S now, S elsewhere at the end: some collective on it.
//  - kFinal: S now, R (or a non-sum P, reached through R) at the end: its
//    last collective (all_gather or all_reduce) leaves it R.
//  - kFirst: P now, S or P(sum) at the end: its first collective is a
//    reduce_scatter or all_reduce.
//  - kTwo: P now, R (or another non-sum P, reached through R) at the end: a
//    first collective, then (or in the same all_reduce) a last one leaving
//    it R.
//  - kMaybe: R now and R (or a non-sum P) at the end: either no collective
//    ever touches it (it stays unsplit: kDone), or it needs a last one
//    (kFinal).
//  - kLocalSum: R or S now, P(sum) at the end: its last local step
//    (partition or shard_to_partial) leaves it P(sum), unsplit from then on.
//  - P now and the same P at the end: either untouched for good (kDone) or
//    its first collective comes (kFirst, or kTwo for non-sum ops).
// A kFirst/kTwo dim is P until its first collective, and a dim whose last
// collective or local step has happened (kDone) is R or P from then on:
// neither splits the tensor, so every step meanwhile moves their factor
// more bytes. A local step writes at least the bytes of its unsplit side.
// A collective on group G with such dims U outside G moves, per rank, at
// least total*|U|/world bytes (all_to_all) or total*|G|*|U|/world (all_gather
// output, reduce_scatter and all_reduce input). The cheapest time-ordered
// schedule of typed collectives that meets every demand bounds the
// remaining cost from below: a dynamic program over demand vectors (3 bits
// per mesh dim). Every event's price is affine in the tensor's bytes, so on
// meshes of up to 5 dims the program computes each demand vector's
// envelope (the Pareto-least (fixed, per-byte) pairs of its schedules) once
// and keeps it per thread for every later search with the same groups and
// prices, whatever its tensor; beyond 5 dims it computes the cost at this
// tensor's bytes, memoized per search. The smallest cover of the demanding
// dims bounds the remaining communicating steps.
//
// The bound is admissible but not consistent (a dim that became kDone reads
// as kMaybe in the next state), so the search reopens states it reaches
// more cheaply later.
#ifndef RESHARD_PLANNER_SEARCH_REMAINING_BOUND_H_
#define RESHARD_PLANNER_SEARCH_REMAINING_BOUND_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/cost/cost_model.h"
#include "planner/search/flatten_policy.h"

namespace reshard {

class RemainingBound {
 public:
  // A schedule's price at u bytes per rank-share: fixed + per_unit * u.
  struct Line {
    double fixed;
    double per_unit;
  };
  // Memoized bounds of demand vectors, one per thread. Up to 5 mesh dims:
  // envelopes, kept for the sets of groups and prices (`inputs`) searches
  // keep using; otherwise costs, reset by each search.
  struct Envelopes {
    std::vector<double> inputs;  // what the envelopes depend on
    // By demand vector: its envelope's first line in `lines` << 8 | its
    // line count; 0: not computed.
    std::vector<uint64_t> packed;
    std::vector<Line> lines;
    uint64_t last_used = 0;
  };
  struct Memo {
    // A request's search and its missing-group search use different
    // groups: a few sets of envelopes, the least recently used replaced.
    std::array<Envelopes, 4> envelopes;
    uint64_t uses = 0;
    absl::flat_hash_map<uint32_t, double> sparse;
  };

  // Groups are those `policy` lets a plan use on `mesh`; costs follow
  // `model` (and its tensor), read once here. Keeps a reference to `memo`,
  // which must outlive it; not thread-safe (one per search).
  RemainingBound(const Mesh& mesh, const CostModel& model, FlattenPolicy policy,
                 Memo& memo);

  // {cost bound, communicating-step bound} from `s` to `dst`, both
  // canonical (size-1 dims R).
  std::pair<double, int> Of(const DistState& s, const DistState& dst);

 private:
  enum Demand : uint32_t {
    kNone = 0,
    kOne = 1,
    kFinal = 2,
    kFirst = 3,
    kTwo = 4,
    kMaybe = 5,
    kDone = 6,
    kLocalSum = 7,
  };
  static constexpr int kDenseDims = 5;
  // An envelope keeps at most this many lines (more are merged into their
  // pointwise minimum, a lower bound of both).
  static constexpr size_t kMaxLines = 16;
  // Past this many lines a set of envelopes starts again (4 MB; with the
  // dense index, at most 4.3 MB a set and 17 MB a thread).
  static constexpr size_t kMaxMemoLines = size_t{1} << 18;
  // Searches after which envelopes not used since may be replaced.
  static constexpr uint64_t kEnvelopesIdle = 64;
  using Lines = absl::InlinedVector<Line, kMaxLines + 1>;
  // The cover count of a set of dims no usable group covers: more steps
  // than any plan has, and small enough that adding to it cannot overflow.
  static constexpr int kUncoverable = 1 << 20;

  struct GroupBound {
    int mask;  // mesh dims of size > 1
    double size;
    CostModel::CollectiveBound bound;
  };

  // Constructor phases: the usable groups (`usable`: the dims of size > 1)
  // with their collective bounds, the smallest covers of dim sets, and the
  // memo left by the previous search.
  void InitGroups(const Mesh& mesh, const CostModel& model,
                  FlattenPolicy policy, int usable);
  void InitCoverCounts(int usable);
  void ResetMemo();

  static uint32_t DemandOf(const DistState& s, const DistState& dst, int m);
  static uint32_t Field(uint32_t demand, int m) {
    return (demand >> (3 * m)) & 7;
  }
  static uint32_t SetField(uint32_t demand, int m, uint32_t value) {
    return (demand & ~(7u << (3 * m))) | value << (3 * m);
  }
  // The cheapest time-ordered schedule of typed collectives meeting
  // `demand` at this tensor's bytes (memoized).
  double Cost(uint32_t demand);
  // Up to kDenseDims: the envelope of `demand`'s schedules (memoized), as
  // Memo::envelopes packs it.
  uint64_t Envelope(uint32_t demand);
  // The envelope, computed: every event meets at least one demand.
  Lines ScheduleLines(uint32_t demand);
  // Beyond kDenseDims: the cost, computed.
  double Schedule(uint32_t demand);
  // The first kMaybe dim of `demand`, or -1.
  int FirstMaybe(uint32_t demand) const;

  // The dims of a demand vector (without kMaybe) by demand, as bit masks.
  struct DimSets {
    int one = 0, final = 0, pending = 0, done = 0, two = 0, local = 0;
  };
  DimSets Classify(uint32_t demand) const;
  // `demand` with the `served` dims met: kTwo -> `two_to`, kFinal -> kDone,
  // the rest -> kNone.
  static uint32_t Meet(uint32_t demand, int served, uint32_t two_to);
  // Lowers `best` to the cheapest schedule whose next event is a local
  // step, or a collective on `g`, where one is cheaper.
  void Consider(double event, uint32_t child, double& best);
  // Adds to `out` the event `e` followed by each of `child`'s schedules.
  void Consider(Line e, uint32_t child, Lines& out);
  // Every first event of a schedule for `demand`: `visit(event, child)`
  // with the event's price as a Line.
  template <typename Visit>
  void ForEachFirstEvent(uint32_t demand, Visit visit);
  template <typename Visit>
  void LocalStepFirst(uint32_t demand, const DimSets& sets, Visit& visit);
  template <typename Visit>
  void CollectiveFirst(uint32_t demand, const DimSets& sets,
                       const GroupBound& g, Visit& visit);
  // The inputs of the envelopes but the bytes (Memo::inputs).
  std::vector<double> EnvelopeInputs() const;

  // Whether every event on `g` costs no more than the same event on `h`:
  // `g` is no larger and none of its bound's terms is larger.
  static bool NoDearer(const GroupBound& g, const GroupBound& h);

  int ndim_;
  double unit_bytes_;  // total / world
  double local_us_per_byte_;
  std::vector<GroupBound> groups_;
  std::vector<int> group_of_mask_;    // index into groups_, -1: not usable
  std::vector<double> size_product_;  // by mesh dim mask
  std::vector<int> cover_count_;
  Memo& memo_;
  Envelopes* envelopes_ = nullptr;  // this search's; null: costs
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_REMAINING_BOUND_H_
