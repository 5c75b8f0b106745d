#include "executor/run/cross_runner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fnv1a.h"
#include "executor/run/batch_runner.h"
#include "executor/run/box_copy.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/cross/layout_digest.h"
#include "run_values/cross_work.h"

namespace reshard::executor {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every rank's digest, compared with this one's: FAILED_PRECONDITION
// naming the first rank that differs.
absl::Status CompareDigests(Communicator& world,
                            const std::vector<int64_t>& ranks,
                            uint64_t digest) {
  const int64_t mine = static_cast<int64_t>(digest);
  std::vector<int64_t> all(ranks.size());
  absl::Status s = world.AllGather(&mine, all.data(), 1, DType::kInt64);
  if (!s.ok()) return s;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != mine) {
      return absl::FailedPreconditionError(absl::StrCat(
          "layout_digest: rank ", ranks[i], " runs a plan for another layout (",
          DigestHex(static_cast<uint64_t>(all[i])), " against ",
          DigestHex(digest), "); no data was moved"));
    }
  }
  return absl::OkStatus();
}

absl::Status Prefixed(const std::string& prefix, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

// The program of a rank in neither mesh of an item (a batch tensor of
// another pipeline stage): no role, nothing to move.
CrossProgram Bystander(const Mesh& src_mesh, const Mesh& dst_mesh,
                       const CrossMeshPlan& plan, int64_t rank) {
  CrossProgram p;
  p.rank = rank;
  p.dtype = plan.tensor.dtype();
  p.layout_digest = plan.layout_digest;
  p.run_ranks = CrossRanks(src_mesh, dst_mesh);
  return p;
}

// Every item's layout digest in order; one plan's is its own.
uint64_t BatchDigest(const std::vector<uint64_t>& digests) {
  if (digests.size() == 1) return digests[0];
  std::string text;
  for (uint64_t d : digests) absl::StrAppend(&text, DigestHex(d), "\n");
  return Fnv1a64(text);
}

// One item's piece list in a peer's message, from byte `at`.
struct Segment {
  int item = 0;
  const std::vector<Box>* boxes = nullptr;
  int64_t at = 0;
};

struct PeerSegments {
  int peer = 0;  // index in the run's ranks
  int64_t bytes = 0;
  std::vector<Segment> segments;
};

}  // namespace

struct CrossRunner::Item {
  Mesh src_mesh;
  CrossMeshPlan plan;
  CrossProgram program;
  // Staging for the mid blocks, where a pre- or post-step has steps.
  bool staged_src = false, staged_dst = false;
  std::vector<char> src_mid, dst_mid;
  int64_t itemsize() const { return plan.tensor.itemsize(); }
};

// One role's steps of several items on one mesh (the pre-steps of the
// items that share a source mesh, or the post-steps), bucketed as a
// single-mesh batch's (planner/batch/bucket_schedule.h) and run by one
// BatchRunner: one collective per bucket, not one per tensor.
struct CrossRunner::RoleBatch {
  std::vector<int> items;
  std::unique_ptr<BatchRunner> runner;
  std::vector<const void*> in;  // per member, the Run under way's
  std::vector<void*> out;
};

// Consecutive items [begin, end) and their messages: ascending peer.
struct CrossRunner::Exchange {
  int begin = 0, end = 0;
  std::vector<PeerSegments> sends, recvs;
  // Per group of kTransferRoundsInFlight rounds: the messages posted, and
  // the receives to unpack (indexes into recvs).
  std::vector<std::vector<PeerMessage>> round_sends, round_recvs;
  std::vector<std::vector<size_t>> round_unpacks;
};

CrossRunner::CrossRunner(const Mesh& dst_mesh, int64_t rank)
    : dst_mesh_(dst_mesh), rank_(rank) {}

CrossRunner::~CrossRunner() = default;

absl::StatusOr<std::unique_ptr<CrossRunner>> CrossRunner::Compile(
    const Mesh& src_mesh, const Mesh& dst_mesh, const CrossMeshPlan& plan,
    int64_t rank, CommunicatorProvider& provider) {
  std::vector<CrossWork> one;
  one.push_back({src_mesh, dst_mesh, plan});
  return CompileBatch(std::move(one), std::numeric_limits<int64_t>::max(), rank,
                      provider);
}

absl::StatusOr<std::unique_ptr<CrossRunner>> CrossRunner::CompileBatch(
    std::vector<CrossWork> items, int64_t exchange_bytes, int64_t rank,
    CommunicatorProvider& provider) {
  if (items.empty()) {
    return absl::InvalidArgumentError("a cross-mesh batch holds no tensor");
  }
  for (size_t t = 1; t < items.size(); ++t) {
    if (!(items[t].dst_mesh == items[0].dst_mesh)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensors[", t,
                       "]: its destination mesh is not tensors[0]'s: a "
                       "batch has one destination mesh"));
    }
  }
  const Mesh dst_mesh = items[0].dst_mesh;
  if (exchange_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exchange_bytes: must be at least 1, got ", exchange_bytes));
  }
  std::unique_ptr<CrossRunner> runner(new CrossRunner(dst_mesh, rank));
  absl::Status s = runner->AddItems(std::move(items));
  if (s.ok()) s = runner->Connect(provider);
  if (s.ok()) s = runner->CompileRoles(exchange_bytes, provider);
  if (!s.ok()) return s;
  runner->GroupExchanges(exchange_bytes);
  return runner;
}

// Every item's program, the run's ranks and the batch digest.
absl::Status CrossRunner::AddItems(std::vector<CrossWork> items) {
  run_ranks_ = CrossBatchRanks(items);
  std::vector<uint64_t> digests;
  for (size_t t = 0; t < items.size(); ++t) {
    CrossWork& in = items[t];
    const bool plays = in.src_mesh.PositionOfRank(rank_) >= 0 ||
                       dst_mesh_.PositionOfRank(rank_) >= 0;
    absl::StatusOr<CrossProgram> program =
        !plays && items.size() > 1
            ? Bystander(in.src_mesh, dst_mesh_, in.plan, rank_)
            : CompileCrossProgram(in.src_mesh, dst_mesh_, in.plan, rank_);
    if (!program.ok()) {
      return items.size() > 1 ? Prefixed(absl::StrCat("tensors[", t, "]: "),
                                         program.status())
                              : program.status();
    }
    digests.push_back(in.plan.layout_digest);
    items_.push_back(
        {std::move(in.src_mesh), std::move(in.plan), *std::move(program)});
  }
  if (!std::binary_search(run_ranks_.begin(), run_ranks_.end(), rank_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank_, " is in no mesh of the batch"));
  }
  digest_ = BatchDigest(digests);
  src_mid_ptrs_.resize(items_.size());
  dst_mid_ptrs_.resize(items_.size());
  return absl::OkStatus();
}

// The run's communicator and the digests compared on it.
absl::Status CrossRunner::Connect(CommunicatorProvider& provider) {
  index_ = static_cast<int>(
      std::lower_bound(run_ranks_.begin(), run_ranks_.end(), rank_) -
      run_ranks_.begin());
  absl::StatusOr<Communicator*> world = provider.Get(run_ranks_, "cross");
  if (!world.ok()) return world.status();
  world_ = *world;
  return CompareDigests(*world_, run_ranks_, digest_);
}

// The pre- and post-steps' batches, where they have steps (a plan without
// steps leaves every block where it is: the mid block is the caller's).
// Every rank of a mesh groups alike: by plan and mesh alone.
absl::Status CrossRunner::CompileRoles(int64_t bucket_bytes,
                                       CommunicatorProvider& provider) {
  for (int t = 0; t < size(); ++t) {
    Item& item = items_[t];
    const CrossProgram& p = item.program;
    if (p.source && p.source->program) {
      auto same = [&](const RoleBatch& b) {
        return items_[b.items.front()].src_mesh == item.src_mesh;
      };
      auto it = std::find_if(pre_.begin(), pre_.end(), same);
      if (it == pre_.end()) it = pre_.emplace(pre_.end());
      it->items.push_back(t);
      item.staged_src = true;
      item.src_mid.resize(
          static_cast<size_t>(p.source->mid.numel() * item.itemsize()));
    }
    if (p.destination && p.destination->program) {
      if (post_.empty()) post_.emplace_back();
      post_.front().items.push_back(t);
      item.staged_dst = true;
      item.dst_mid.resize(
          static_cast<size_t>(p.destination->mid.numel() * item.itemsize()));
    }
  }
  for (RoleBatch& b : pre_) {
    absl::Status s = CompileRole(b, true, bucket_bytes, provider);
    if (!s.ok()) return s;
  }
  for (RoleBatch& b : post_) {
    absl::Status s = CompileRole(b, false, bucket_bytes, provider);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// `b`'s BatchRunner: its items' pre-steps (`pre`) or post-steps, bucketed.
absl::Status CrossRunner::CompileRole(RoleBatch& b, bool pre,
                                      int64_t bucket_bytes,
                                      CommunicatorProvider& provider) {
  const Mesh& mesh = pre ? items_[b.items.front()].src_mesh : dst_mesh_;
  std::vector<Plan> plans;
  for (int t : b.items)
    plans.push_back(pre ? items_[t].plan.pre : items_[t].plan.post);
  std::vector<const Plan*> members;
  for (const Plan& plan : plans) members.push_back(&plan);
  const char* part = pre ? "pre-steps: " : "post-steps: ";
  const std::string label =
      size() > 1 ? absl::StrCat(part, "the batch of tensors[",
                                absl::StrJoin(b.items, ","), "]: ")
                 : std::string(part);
  absl::StatusOr<BucketSchedule> schedule =
      ScheduleBuckets(mesh, members, {bucket_bytes, {}});
  if (!schedule.ok()) return Prefixed(label, schedule.status());
  absl::StatusOr<std::unique_ptr<BatchRunner>> runner = BatchRunner::Compile(
      mesh, std::move(plans), *std::move(schedule), rank_, provider);
  if (!runner.ok()) return Prefixed(label, runner.status());
  b.runner = *std::move(runner);
  b.in.resize(b.items.size());
  b.out.resize(b.items.size());
  return absl::OkStatus();
}

// Consecutive items while their plans' max_send + max_recv sum within
// `exchange_bytes`: every rank groups alike, from the plans alone.
void CrossRunner::GroupExchanges(int64_t exchange_bytes) {
  const int n = size();
  send_packed_.assign(run_ranks_.size(), {});
  recv_packed_.assign(run_ranks_.size(), {});
  int64_t load = 0;
  for (int t = 0; t < n; ++t) {
    const TransferBytes& b = items_[t].plan.bytes_by_rank;
    const int64_t bytes = b.max_send + b.max_recv;
    if (exchanges_.empty() || load + bytes > exchange_bytes ||
        load + bytes < load) {
      exchanges_.push_back({t, t});
      load = 0;
    }
    exchanges_.back().end = t + 1;
    load += bytes;
  }
  for (Exchange& e : exchanges_) LayOutMessages(e);
  for (Exchange& e : exchanges_) ScheduleRounds(e);
}

// Each peer's message of `e`: its items' pieces, item by item; the packed
// buffers grow to the largest exchange's.
void CrossRunner::LayOutMessages(Exchange& e) {
  for (bool sending : {true, false}) {
    std::map<int, PeerSegments> by_peer;
    for (int t = e.begin; t < e.end; ++t) {
      const Item& item = items_[t];
      const CrossProgram& p = item.program;
      for (const PeerPieces& pieces : sending ? p.sends : p.recvs) {
        if (pieces.numel == 0) continue;
        const int peer =
            static_cast<int>(std::lower_bound(run_ranks_.begin(),
                                              run_ranks_.end(), pieces.peer) -
                             run_ranks_.begin());
        PeerSegments& m = by_peer[peer];
        m.peer = peer;
        m.segments.push_back({t, &pieces.boxes, m.bytes});
        m.bytes += pieces.numel * item.itemsize();
      }
      if (!sending) continue;
      int64_t local = 0;  // one tensor's local copies pass through at a time
      for (const Box& b : p.local_from) local += b.numel() * item.itemsize();
      if (local > static_cast<int64_t>(local_packed_.size())) {
        local_packed_.resize(static_cast<size_t>(local));
      }
    }
    std::vector<std::vector<char>>& packed =
        sending ? send_packed_ : recv_packed_;
    for (auto& [peer, m] : by_peer) {
      if (m.bytes > static_cast<int64_t>(packed[peer].size())) {
        packed[peer].resize(static_cast<size_t>(m.bytes));
      }
      (sending ? e.sends : e.recvs).push_back(std::move(m));
    }
  }
}

// Round k: to index + k, from index − k; kTransferRoundsInFlight rounds
// per call, the same groups on every rank.
void CrossRunner::ScheduleRounds(Exchange& e) {
  const int64_t n = static_cast<int64_t>(run_ranks_.size());
  const int64_t groups =
      (n - 1 + kTransferRoundsInFlight - 1) / kTransferRoundsInFlight;
  e.round_sends.resize(groups);
  e.round_recvs.resize(groups);
  e.round_unpacks.resize(groups);
  auto find = [](const std::vector<PeerSegments>& list, int peer) {
    auto it = std::lower_bound(
        list.begin(), list.end(), peer,
        [](const PeerSegments& m, int r) { return m.peer < r; });
    return it != list.end() && it->peer == peer
               ? static_cast<int64_t>(it - list.begin())
               : int64_t{-1};
  };
  for (int64_t k = 1; k < n; ++k) {
    const int64_t g = (k - 1) / kTransferRoundsInFlight;
    const int to = static_cast<int>((index_ + k) % n);
    const int from = static_cast<int>((index_ - k + n) % n);
    if (const int64_t i = find(e.sends, to); i >= 0) {
      e.round_sends[g].push_back(
          {to, send_packed_[to].data(), e.sends[i].bytes});
    }
    if (const int64_t i = find(e.recvs, from); i >= 0) {
      e.round_recvs[g].push_back(
          {from, recv_packed_[from].data(), e.recvs[i].bytes});
      e.round_unpacks[g].push_back(static_cast<size_t>(i));
    }
  }
}

int CrossRunner::size() const { return static_cast<int>(items_.size()); }

int CrossRunner::exchanges() const {
  return static_cast<int>(exchanges_.size());
}

bool CrossRunner::is_source(int t) const {
  return items_[t].program.source.has_value();
}

bool CrossRunner::is_destination(int t) const {
  return items_[t].program.destination.has_value();
}

const Mesh& CrossRunner::src_mesh(int t) const { return items_[t].src_mesh; }

const CrossMeshPlan& CrossRunner::plan(int t) const { return items_[t].plan; }

const CrossProgram& CrossRunner::program(int t) const {
  return items_[t].program;
}

int64_t CrossRunner::src_position(int t) const {
  return is_source(t) ? items_[t].program.source->position : -1;
}

int64_t CrossRunner::dst_position(int t) const {
  return is_destination(t) ? items_[t].program.destination->position : -1;
}

int64_t CrossRunner::SourceNumel(int t) const {
  const Item& item = items_[t];
  return is_source(t) ? LocalBox(item.src_mesh, item.plan.src,
                                 item.plan.tensor.shape(), src_position(t))
                            .numel()
                      : 0;
}

int64_t CrossRunner::ResultNumel(int t) const {
  const Item& item = items_[t];
  return is_destination(t) ? LocalBox(dst_mesh_, item.plan.dst,
                                      item.plan.tensor.shape(), dst_position(t))
                                 .numel()
                           : 0;
}

int64_t CrossRunner::StagingBytes() const {
  int64_t bytes = static_cast<int64_t>(local_packed_.size());
  for (const Item& item : items_) {
    bytes += static_cast<int64_t>(item.src_mid.size() + item.dst_mid.size());
  }
  for (const auto* list : {&send_packed_, &recv_packed_}) {
    for (const std::vector<char>& m : *list) bytes += m.size();
  }
  return bytes;
}

// Packs every send of `e` (and its items' copies to themselves), exchanges
// the rounds' messages, and unpacks each group's receipts as it completes.
absl::Status CrossRunner::RunExchange(Exchange& e,
                                      const std::vector<const char*>& src_mid,
                                      const std::vector<char*>& dst_mid,
                                      CrossRunStats& stats) {
  auto pack = [&](int t, const std::vector<Box>& boxes, char* packed) {
    const Item& item = items_[t];
    for (const Box& b : boxes) {
      PackBox(src_mid[t], item.program.source->mid.extent, b, item.itemsize(),
              packed);
      packed += b.numel() * item.itemsize();
    }
  };
  auto unpack = [&](int t, const std::vector<Box>& boxes, const char* packed) {
    const Item& item = items_[t];
    for (const Box& b : boxes) {
      UnpackBox(packed, dst_mid[t], item.program.destination->mid.extent, b,
                item.itemsize());
      packed += b.numel() * item.itemsize();
    }
  };
  for (const PeerSegments& m : e.sends) {
    for (const Segment& s : m.segments) {
      pack(s.item, *s.boxes, send_packed_[m.peer].data() + s.at);
    }
    stats.sent_bytes += m.bytes;
  }
  for (int t = e.begin; t < e.end; ++t) {
    const CrossProgram& p = items_[t].program;
    if (p.local_from.empty()) continue;
    pack(t, p.local_from, local_packed_.data());
    unpack(t, p.local_to, local_packed_.data());
  }
  for (size_t g = 0; g < e.round_sends.size(); ++g) {
    if (e.round_sends[g].empty() && e.round_recvs[g].empty()) continue;
    absl::Status s = world_->Exchange(e.round_sends[g], e.round_recvs[g]);
    if (!s.ok()) return s;
    for (size_t i : e.round_unpacks[g]) {
      const PeerSegments& m = e.recvs[i];
      for (const Segment& seg : m.segments) {
        unpack(seg.item, *seg.boxes, recv_packed_[m.peer].data() + seg.at);
      }
      stats.received_bytes += m.bytes;
    }
  }
  return absl::OkStatus();
}

absl::Status CrossRunner::Run(const void* in, void* out, CrossRunStats* stats) {
  return RunBatch({in}, {out}, stats);
}

absl::Status CrossRunner::RunBatch(absl::Span<const void* const> in,
                                   absl::Span<void* const> out,
                                   CrossRunStats* stats) {
  if (in.size() != items_.size() || out.size() != items_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a run of ", items_.size(), " tensors was given ",
                     in.size(), " sources and ", out.size(), " results"));
  }
  CrossRunStats local_stats;
  CrossRunStats& st = stats != nullptr ? *stats : local_stats;
  st = CrossRunStats{};
  const Clock::time_point start = Clock::now();
  for (size_t t = 0; t < items_.size(); ++t) {
    Item& item = items_[t];
    src_mid_ptrs_[t] =
        item.staged_src ? item.src_mid.data() : static_cast<const char*>(in[t]);
    dst_mid_ptrs_[t] =
        item.staged_dst ? item.dst_mid.data() : static_cast<char*>(out[t]);
  }
  for (RoleBatch& b : pre_) {
    for (size_t k = 0; k < b.items.size(); ++k) {
      b.in[k] = in[b.items[k]];
      b.out[k] = items_[b.items[k]].src_mid.data();
    }
    absl::Status s = b.runner->Run(b.in, b.out);
    if (!s.ok()) return Prefixed("pre-steps: ", s);
  }
  st.pre_seconds = SecondsSince(start);
  const Clock::time_point moved = Clock::now();
  for (Exchange& e : exchanges_) {
    absl::Status s = RunExchange(e, src_mid_ptrs_, dst_mid_ptrs_, st);
    if (!s.ok()) return Prefixed("transfers: ", s);
  }
  st.transfer_seconds = SecondsSince(moved);
  const Clock::time_point posted = Clock::now();
  for (RoleBatch& b : post_) {
    for (size_t k = 0; k < b.items.size(); ++k) {
      b.in[k] = items_[b.items[k]].dst_mid.data();
      b.out[k] = out[b.items[k]];
    }
    absl::Status s = b.runner->Run(b.in, b.out);
    if (!s.ok()) return Prefixed("post-steps: ", s);
  }
  st.post_seconds = SecondsSince(posted);
  st.total_seconds = SecondsSince(start);
  return absl::OkStatus();
}

}  // namespace reshard::executor
