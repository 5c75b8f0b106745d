#include "executor/run/cross_runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/run/box_copy.h"
#include "planner/core/local_layout.h"
#include "planner/cross/transfer.h"

namespace reshard::executor {

// One peer's pieces in one direction, packed in the sender rule's order:
// boxes in this rank's src_mid frame (`from`: sent) or dst_mid frame
// (`to`: received); the copies to itself have both.
struct CrossRunner::Message {
  int64_t peer = 0;  // global rank
  std::vector<Box> from, to;
  std::vector<char> packed;
};

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `box` (global coordinates) in the frame of a block at `origin`.
Box InFrame(const Box& box, const Box& origin) {
  Box local = box;
  for (size_t d = 0; d < local.offset.size(); ++d) {
    local.offset[d] -= origin.offset[d];
  }
  return local;
}

// Every rank of the run: both rank maps' union, ascending.
std::vector<int64_t> RunRanks(const Mesh& src, const Mesh& dst) {
  std::vector<int64_t> ranks;
  for (const Mesh* mesh : {&src, &dst}) {
    for (int64_t p = 0; p < mesh->world_size(); ++p) {
      ranks.push_back(mesh->RankAt(p));
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

int64_t PackedNumel(const std::vector<Box>& boxes) {
  int64_t numel = 0;
  for (const Box& b : boxes) numel += b.numel();
  return numel;
}

// The messages' bytes: each box's elements, packed.
void SizeMessages(std::vector<CrossRunner::Message>& messages,
                  int64_t itemsize) {
  for (CrossRunner::Message& m : messages) {
    m.packed.resize(static_cast<size_t>(
        PackedNumel(m.from.empty() ? m.to : m.from) * itemsize));
  }
}

// Every rank's layout digest, compared with this one's: FAILED_PRECONDITION
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
          absl::Hex(static_cast<uint64_t>(all[i]), absl::kZeroPad16),
          " against ", absl::Hex(digest, absl::kZeroPad16),
          "); no data was moved"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

CrossRunner::CrossRunner(const Mesh& src_mesh, const Mesh& dst_mesh,
                         const CrossMeshPlan& plan, int64_t rank)
    : src_mesh_(src_mesh),
      dst_mesh_(dst_mesh),
      plan_(plan),
      rank_(rank),
      src_position_(src_mesh.PositionOfRank(rank)),
      dst_position_(dst_mesh.PositionOfRank(rank)) {}

CrossRunner::~CrossRunner() = default;

absl::StatusOr<std::unique_ptr<CrossRunner>> CrossRunner::Compile(
    const Mesh& src_mesh, const Mesh& dst_mesh, const CrossMeshPlan& plan,
    int64_t rank, CommunicatorProvider& provider) {
  std::unique_ptr<CrossRunner> runner(
      new CrossRunner(src_mesh, dst_mesh, plan, rank));
  if (!runner->is_source() && !runner->is_destination()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is in neither mesh of the plan"));
  }
  absl::Status s = runner->CompileTransfers(provider);
  if (s.ok()) s = runner->CompileRoles(provider);
  if (!s.ok()) return s;
  return runner;
}

// The pre- and post-steps' runners, where they have steps (a plan without
// steps leaves every block where it is: the mid block is the caller's).
absl::Status CrossRunner::CompileRoles(CommunicatorProvider& provider) {
  const int64_t itemsize = plan_.tensor.itemsize();
  if (is_source() && !plan_.pre.steps.empty()) {
    absl::StatusOr<std::unique_ptr<PlanRunner>> pre =
        PlanRunner::Compile(src_mesh_, plan_.pre, rank_, provider);
    if (!pre.ok()) {
      return absl::Status(pre.status().code(),
                          absl::StrCat("pre-steps: ", pre.status().message()));
    }
    pre_ = *std::move(pre);
    src_mid_.resize(static_cast<size_t>(src_mid_box_.numel() * itemsize));
  }
  if (is_destination() && !plan_.post.steps.empty()) {
    absl::StatusOr<std::unique_ptr<PlanRunner>> post =
        PlanRunner::Compile(dst_mesh_, plan_.post, rank_, provider);
    if (!post.ok()) {
      return absl::Status(
          post.status().code(),
          absl::StrCat("post-steps: ", post.status().message()));
    }
    post_ = *std::move(post);
    dst_mid_.resize(static_cast<size_t>(dst_mid_box_.numel() * itemsize));
  }
  return absl::OkStatus();
}

// This rank's transfers by peer, its staging, the run's communicator (the
// digests compared on it) and the rounds of the exchange.
absl::Status CrossRunner::CompileTransfers(CommunicatorProvider& provider) {
  const std::vector<int64_t>& shape = plan_.tensor.shape();
  if (is_source()) {
    src_mid_box_ = LocalBox(src_mesh_, plan_.src_mid, shape, src_position_);
  }
  if (is_destination()) {
    dst_mid_box_ = LocalBox(dst_mesh_, plan_.dst_mid, shape, dst_position_);
  }
  const std::vector<int64_t> ranks = RunRanks(src_mesh_, dst_mesh_);
  index_ = static_cast<int>(
      std::lower_bound(ranks.begin(), ranks.end(), rank_) - ranks.begin());
  absl::StatusOr<Communicator*> world = provider.Get(ranks, "cross");
  if (!world.ok()) return world.status();
  world_ = *world;
  absl::Status s = CompareDigests(*world_, ranks, plan_.layout_digest);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Transfer>> transfers =
      TransfersOfRank({src_mesh_, dst_mesh_, shape, plan_.src_mid,
                       plan_.dst_mid, plan_.unavailable_ranks},
                      rank_);
  if (!transfers.ok()) return transfers.status();
  std::map<int64_t, Message> sends, recvs;
  Message local{rank_};
  for (const Transfer& t : *transfers) {
    const Box box{t.offset, t.extent};
    if (box.numel() == 0) continue;
    if (t.from == rank_) {
      Message& m = t.to == rank_ ? local : sends[t.to];
      m.peer = t.to;
      m.from.push_back(InFrame(box, src_mid_box_));
    }
    if (t.to == rank_) {
      Message& m = t.from == rank_ ? local : recvs[t.from];
      m.peer = t.from;
      m.to.push_back(InFrame(box, dst_mid_box_));
    }
  }
  for (auto& [peer, m] : sends) sends_.push_back(std::move(m));
  for (auto& [peer, m] : recvs) recvs_.push_back(std::move(m));
  if (!local.from.empty()) {
    local_ = std::make_unique<Message>(std::move(local));
    local_->packed.resize(static_cast<size_t>(PackedNumel(local_->from) *
                                              plan_.tensor.itemsize()));
  }
  SizeMessages(sends_, plan_.tensor.itemsize());
  SizeMessages(recvs_, plan_.tensor.itemsize());
  ScheduleRounds(ranks);
  return absl::OkStatus();
}

// Round k: to index + k, from index − k; kTransferRoundsInFlight rounds
// per call, the same groups on every rank.
void CrossRunner::ScheduleRounds(const std::vector<int64_t>& ranks) {
  const int64_t n = static_cast<int64_t>(ranks.size());
  const int64_t groups =
      (n - 1 + kTransferRoundsInFlight - 1) / kTransferRoundsInFlight;
  round_sends_.resize(groups);
  round_recvs_.resize(groups);
  round_unpacks_.resize(groups);
  auto find = [](std::vector<Message>& list, int64_t peer) -> Message* {
    auto it = std::lower_bound(
        list.begin(), list.end(), peer,
        [](const Message& m, int64_t p) { return m.peer < p; });
    return it != list.end() && it->peer == peer && !it->packed.empty()
               ? &*it
               : nullptr;
  };
  for (int64_t k = 1; k < n; ++k) {
    const int64_t g = (k - 1) / kTransferRoundsInFlight;
    const int to = static_cast<int>((index_ + k) % n);
    const int from = static_cast<int>((index_ - k + n) % n);
    if (Message* m = find(sends_, ranks[to]); m != nullptr) {
      round_sends_[g].push_back(
          {to, m->packed.data(), static_cast<int64_t>(m->packed.size())});
    }
    if (Message* m = find(recvs_, ranks[from]); m != nullptr) {
      round_recvs_[g].push_back(
          {from, m->packed.data(), static_cast<int64_t>(m->packed.size())});
      round_unpacks_[g].push_back(m);
    }
  }
}

int64_t CrossRunner::SourceNumel() const {
  return is_source() ? LocalBox(src_mesh_, plan_.src, plan_.tensor.shape(),
                                src_position_)
                           .numel()
                     : 0;
}

int64_t CrossRunner::ResultNumel() const {
  return is_destination() ? LocalBox(dst_mesh_, plan_.dst, plan_.tensor.shape(),
                                     dst_position_)
                                .numel()
                          : 0;
}

int64_t CrossRunner::StagingBytes() const {
  int64_t bytes = static_cast<int64_t>(src_mid_.size() + dst_mid_.size());
  for (const std::vector<Message>* list : {&sends_, &recvs_}) {
    for (const Message& m : *list) bytes += m.packed.size();
  }
  if (local_ != nullptr) bytes += local_->packed.size();
  return bytes;
}

// Packs every send (and the copies to itself), exchanges the rounds'
// messages, and unpacks each group's receipts as it completes.
absl::Status CrossRunner::Exchange(const char* src_mid, char* dst_mid,
                                   CrossRunStats& stats) {
  const int64_t itemsize = plan_.tensor.itemsize();
  auto pack = [&](Message& m) {
    int64_t at = 0;
    for (const Box& b : m.from) {
      PackBox(src_mid, src_mid_box_.extent, b, itemsize, m.packed.data() + at);
      at += b.numel() * itemsize;
    }
  };
  auto unpack = [&](const Message& m) {
    int64_t at = 0;
    for (const Box& b : m.to) {
      UnpackBox(m.packed.data() + at, dst_mid, dst_mid_box_.extent, b,
                itemsize);
      at += b.numel() * itemsize;
    }
  };
  for (Message& m : sends_) {
    pack(m);
    stats.sent_bytes += static_cast<int64_t>(m.packed.size());
  }
  if (local_ != nullptr) {
    pack(*local_);
    unpack(*local_);
  }
  for (size_t g = 0; g < round_sends_.size(); ++g) {
    if (round_sends_[g].empty() && round_recvs_[g].empty()) continue;
    absl::Status s = world_->Exchange(round_sends_[g], round_recvs_[g]);
    if (!s.ok()) return s;
    for (const Message* m : round_unpacks_[g]) {
      unpack(*m);
      stats.received_bytes += static_cast<int64_t>(m->packed.size());
    }
  }
  return absl::OkStatus();
}

absl::Status CrossRunner::Run(const void* in, void* out, CrossRunStats* stats) {
  CrossRunStats local_stats;
  CrossRunStats& st = stats != nullptr ? *stats : local_stats;
  st = CrossRunStats{};
  const Clock::time_point start = Clock::now();
  const char* src_mid = static_cast<const char*>(in);
  if (pre_ != nullptr) {
    absl::Status s = pre_->Run(in, src_mid_.data());
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("pre-steps: ", s.message()));
    }
    src_mid = src_mid_.data();
  }
  st.pre_seconds = SecondsSince(start);
  const Clock::time_point moved = Clock::now();
  char* dst_mid = post_ != nullptr ? dst_mid_.data() : static_cast<char*>(out);
  absl::Status s = Exchange(src_mid, dst_mid, st);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("transfers: ", s.message()));
  }
  st.transfer_seconds = SecondsSince(moved);
  const Clock::time_point posted = Clock::now();
  if (post_ != nullptr) {
    s = post_->Run(dst_mid_.data(), out);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("post-steps: ", s.message()));
    }
  }
  st.post_seconds = SecondsSince(posted);
  st.total_seconds = SecondsSince(start);
  return absl::OkStatus();
}

}  // namespace reshard::executor
