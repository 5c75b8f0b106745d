#include "executor/run/cross_runner.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/run/box_copy.h"
#include "planner/cross/layout_digest.h"

namespace reshard::executor {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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
          DigestHex(static_cast<uint64_t>(all[i])), " against ",
          DigestHex(digest), "); no data was moved"));
    }
  }
  return absl::OkStatus();
}

std::string WithPrefix(const char* prefix, const absl::Status& s) {
  return absl::StrCat(prefix, s.message());
}

}  // namespace

CrossRunner::CrossRunner(const Mesh& src_mesh, const Mesh& dst_mesh,
                         const CrossMeshPlan& plan, CrossProgram program)
    : src_mesh_(src_mesh),
      dst_mesh_(dst_mesh),
      plan_(plan),
      program_(std::move(program)) {}

CrossRunner::~CrossRunner() = default;

absl::StatusOr<std::unique_ptr<CrossRunner>> CrossRunner::Compile(
    const Mesh& src_mesh, const Mesh& dst_mesh, const CrossMeshPlan& plan,
    int64_t rank, CommunicatorProvider& provider) {
  absl::StatusOr<CrossProgram> program =
      CompileCrossProgram(src_mesh, dst_mesh, plan, rank);
  if (!program.ok()) return program.status();
  std::unique_ptr<CrossRunner> runner(
      new CrossRunner(src_mesh, dst_mesh, plan, *std::move(program)));
  absl::Status s = runner->Connect(provider);
  if (s.ok()) s = runner->CompileRoles(provider);
  if (!s.ok()) return s;
  runner->ScheduleRounds();
  return runner;
}

// The run's communicator, the digests compared on it, and the staging of
// every message.
absl::Status CrossRunner::Connect(CommunicatorProvider& provider) {
  const std::vector<int64_t>& ranks = program_.run_ranks;
  index_ = static_cast<int>(
      std::lower_bound(ranks.begin(), ranks.end(), program_.rank) -
      ranks.begin());
  absl::StatusOr<Communicator*> world = provider.Get(ranks, "cross");
  if (!world.ok()) return world.status();
  world_ = *world;
  absl::Status s = CompareDigests(*world_, ranks, program_.layout_digest);
  if (!s.ok()) return s;
  const int64_t itemsize = plan_.tensor.itemsize();
  for (auto [peers, packed] : {std::pair{&program_.sends, &send_packed_},
                               std::pair{&program_.recvs, &recv_packed_}}) {
    for (const PeerPieces& p : *peers) {
      packed->emplace_back(static_cast<size_t>(p.numel * itemsize));
    }
  }
  int64_t local = 0;
  for (const Box& b : program_.local_from) local += b.numel();
  local_packed_.resize(static_cast<size_t>(local * itemsize));
  return absl::OkStatus();
}

// The pre- and post-steps' runners, where they have steps (a plan without
// steps leaves every block where it is: the mid block is the caller's).
absl::Status CrossRunner::CompileRoles(CommunicatorProvider& provider) {
  const int64_t itemsize = plan_.tensor.itemsize();
  if (is_source() && program_.source->program) {
    absl::StatusOr<std::unique_ptr<PlanRunner>> pre =
        PlanRunner::Compile(src_mesh_, plan_.pre, program_.rank, provider);
    if (!pre.ok()) {
      return absl::Status(pre.status().code(),
                          WithPrefix("pre-steps: ", pre.status()));
    }
    pre_ = *std::move(pre);
    src_mid_.resize(
        static_cast<size_t>(program_.source->mid.numel() * itemsize));
  }
  if (is_destination() && program_.destination->program) {
    absl::StatusOr<std::unique_ptr<PlanRunner>> post =
        PlanRunner::Compile(dst_mesh_, plan_.post, program_.rank, provider);
    if (!post.ok()) {
      return absl::Status(post.status().code(),
                          WithPrefix("post-steps: ", post.status()));
    }
    post_ = *std::move(post);
    dst_mid_.resize(
        static_cast<size_t>(program_.destination->mid.numel() * itemsize));
  }
  return absl::OkStatus();
}

// Round k: to index + k, from index − k; kTransferRoundsInFlight rounds
// per call, the same groups on every rank.
void CrossRunner::ScheduleRounds() {
  const std::vector<int64_t>& ranks = program_.run_ranks;
  const int64_t n = static_cast<int64_t>(ranks.size());
  const int64_t groups =
      (n - 1 + kTransferRoundsInFlight - 1) / kTransferRoundsInFlight;
  round_sends_.resize(groups);
  round_recvs_.resize(groups);
  round_unpacks_.resize(groups);
  auto find = [](const std::vector<PeerPieces>& list, int64_t peer) {
    auto it = std::lower_bound(
        list.begin(), list.end(), peer,
        [](const PeerPieces& p, int64_t r) { return p.peer < r; });
    return it != list.end() && it->peer == peer && it->numel > 0
               ? static_cast<int64_t>(it - list.begin())
               : int64_t{-1};
  };
  for (int64_t k = 1; k < n; ++k) {
    const int64_t g = (k - 1) / kTransferRoundsInFlight;
    const int to = static_cast<int>((index_ + k) % n);
    const int from = static_cast<int>((index_ - k + n) % n);
    if (const int64_t i = find(program_.sends, ranks[to]); i >= 0) {
      std::vector<char>& m = send_packed_[i];
      round_sends_[g].push_back({to, m.data(), static_cast<int64_t>(m.size())});
    }
    if (const int64_t i = find(program_.recvs, ranks[from]); i >= 0) {
      std::vector<char>& m = recv_packed_[i];
      round_recvs_[g].push_back(
          {from, m.data(), static_cast<int64_t>(m.size())});
      round_unpacks_[g].push_back(static_cast<size_t>(i));
    }
  }
}

int64_t CrossRunner::src_position() const {
  return is_source() ? program_.source->position : -1;
}

int64_t CrossRunner::dst_position() const {
  return is_destination() ? program_.destination->position : -1;
}

int64_t CrossRunner::SourceNumel() const {
  return is_source() ? LocalBox(src_mesh_, plan_.src, plan_.tensor.shape(),
                                program_.source->position)
                           .numel()
                     : 0;
}

int64_t CrossRunner::ResultNumel() const {
  return is_destination() ? LocalBox(dst_mesh_, plan_.dst, plan_.tensor.shape(),
                                     program_.destination->position)
                                .numel()
                          : 0;
}

int64_t CrossRunner::StagingBytes() const {
  int64_t bytes = static_cast<int64_t>(src_mid_.size() + dst_mid_.size() +
                                       local_packed_.size());
  for (const auto* list : {&send_packed_, &recv_packed_}) {
    for (const std::vector<char>& m : *list) bytes += m.size();
  }
  return bytes;
}

// Packs every send (and the copies to itself), exchanges the rounds'
// messages, and unpacks each group's receipts as it completes.
absl::Status CrossRunner::Exchange(const char* src_mid, char* dst_mid,
                                   CrossRunStats& stats) {
  const int64_t itemsize = plan_.tensor.itemsize();
  auto pack = [&](const std::vector<Box>& boxes, char* packed) {
    int64_t at = 0;
    for (const Box& b : boxes) {
      PackBox(src_mid, program_.source->mid.extent, b, itemsize, packed + at);
      at += b.numel() * itemsize;
    }
  };
  auto unpack = [&](const std::vector<Box>& boxes, const char* packed) {
    int64_t at = 0;
    for (const Box& b : boxes) {
      UnpackBox(packed + at, dst_mid, program_.destination->mid.extent, b,
                itemsize);
      at += b.numel() * itemsize;
    }
  };
  for (size_t i = 0; i < program_.sends.size(); ++i) {
    pack(program_.sends[i].boxes, send_packed_[i].data());
    stats.sent_bytes += static_cast<int64_t>(send_packed_[i].size());
  }
  if (!local_packed_.empty()) {
    pack(program_.local_from, local_packed_.data());
    unpack(program_.local_to, local_packed_.data());
  }
  for (size_t g = 0; g < round_sends_.size(); ++g) {
    if (round_sends_[g].empty() && round_recvs_[g].empty()) continue;
    absl::Status s = world_->Exchange(round_sends_[g], round_recvs_[g]);
    if (!s.ok()) return s;
    for (size_t i : round_unpacks_[g]) {
      unpack(program_.recvs[i].boxes, recv_packed_[i].data());
      stats.received_bytes += static_cast<int64_t>(recv_packed_[i].size());
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
    if (!s.ok()) return absl::Status(s.code(), WithPrefix("pre-steps: ", s));
    src_mid = src_mid_.data();
  }
  st.pre_seconds = SecondsSince(start);
  const Clock::time_point moved = Clock::now();
  char* dst_mid = post_ != nullptr ? dst_mid_.data() : static_cast<char*>(out);
  absl::Status s = Exchange(src_mid, dst_mid, st);
  if (!s.ok()) return absl::Status(s.code(), WithPrefix("transfers: ", s));
  st.transfer_seconds = SecondsSince(moved);
  const Clock::time_point posted = Clock::now();
  if (post_ != nullptr) {
    s = post_->Run(dst_mid_.data(), out);
    if (!s.ok()) return absl::Status(s.code(), WithPrefix("post-steps: ", s));
  }
  st.post_seconds = SecondsSince(posted);
  st.total_seconds = SecondsSince(start);
  return absl::OkStatus();
}

}  // namespace reshard::executor
