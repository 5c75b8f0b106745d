#include "executor/backends/gloo/gloo_communicator.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/run/box_copy.h"
#include "executor/run/element_ops.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/barrier.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"
#include "gloo/types.h"

namespace reshard::executor {
namespace {

// The slot prefix of point-to-point calls: above every prefix Gloo's own
// collectives use (gloo/types.h).
constexpr uint8_t kPointToPointSlotPrefix = 0x7e;

// Block `b` of a ring of `n` members, taken modulo n (b may be negative).
int RingBlock(int b, int n) { return ((b % n) + n) % n; }

// The run's KeyValueStore as Gloo's connectFullMesh sees it: keys under
// the group's prefix, failures thrown as Gloo expects (a timeout says
// "timed out", which FromGloo maps to DEADLINE_EXCEEDED), and every wait
// bounded by the run's timeout (Gloo would otherwise wait up to its own
// 30 s default). And a barrier: connectFullMesh publishes this rank's pair
// addresses under the key "<rank>" and then connects pair by pair, where a
// pair whose address sorts lower waits, up to the timeout and
// uninterruptibly, for its peer to connect. A peer that gave up while still
// waiting for keys (its run was cancelled) never does. So right after
// publishing, this store waits for every rank's addresses at once (a wait
// that ends when the run does), and from then on answers from what that
// wait fetched, without asking the store again: once every rank has
// published, every rank connects, in milliseconds, and a cancel is seen
// before connecting or after.
class ConnectStore : public gloo::rendezvous::Store {
 public:
  ConnectStore(KeyValueStore& inner, std::string prefix, int rank, int size,
               std::chrono::milliseconds timeout)
      : inner_(inner),
        prefix_(std::move(prefix)),
        rank_(rank),
        size_(size),
        timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    Check(inner_.Set(Prefixed(key), std::string(data.begin(), data.end())));
    if (key != std::to_string(rank_)) return;
    std::vector<std::string> everyone;
    for (int r = 0; r < size_; ++r) everyone.push_back(std::to_string(r));
    Fetch(everyone, timeout_);
  }
  std::vector<char> get(const std::string& key) override {
    Fetch({key}, timeout_);
    const std::string& value = fetched_.at(key);
    return {value.begin(), value.end()};
  }
  void wait(const std::vector<std::string>& keys) override {
    Fetch(keys, timeout_);
  }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    Fetch(keys, std::min(timeout, timeout_));
  }

 private:
  std::string Prefixed(const std::string& key) const {
    return absl::StrCat(prefix_, "/", key);
  }
  static void Check(const absl::Status& status) {
    if (status.ok()) return;
    throw gloo::IoException(absl::StrCat(
        status.message(), status.code() == absl::StatusCode::kDeadlineExceeded
                              ? ""
                              : " (store failed)"));
  }
  // Reads the keys not fetched yet into `fetched_`.
  void Fetch(const std::vector<std::string>& keys,
             std::chrono::milliseconds timeout) {
    std::vector<std::string> wanted, prefixed;
    for (const std::string& key : keys) {
      if (fetched_.contains(key)) continue;
      wanted.push_back(key);
      prefixed.push_back(Prefixed(key));
    }
    if (wanted.empty()) return;
    absl::StatusOr<std::vector<std::string>> values =
        inner_.Get(prefixed, timeout);
    Check(values.status());
    for (size_t i = 0; i < wanted.size(); ++i) {
      fetched_[wanted[i]] = std::move((*values)[i]);
    }
  }

  KeyValueStore& inner_;
  const std::string prefix_;
  const int rank_;
  const int size_;
  const std::chrono::milliseconds timeout_;
  std::map<std::string, std::string> fetched_;
};

// A Gloo error as a status: timeouts are DEADLINE_EXCEEDED, everything else
// (closed connections, resets) UNAVAILABLE. Gloo's message names the peer's
// address where it knows it.
absl::Status FromGloo(absl::string_view what, const std::exception& e) {
  const std::string message = absl::StrCat(what, ": ", e.what());
  if (absl::StrContains(e.what(), "Timed out") ||
      absl::StrContains(e.what(), "timed out") ||
      absl::StrContains(e.what(), "Wait timeout")) {
    return absl::DeadlineExceededError(message);
  }
  return absl::UnavailableError(message);
}

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<gloo::Context> context, std::string name,
                   std::vector<int64_t> ranks, GlooOptions options)
      : context_(std::move(context)),
        name_(std::move(name)),
        ranks_(std::move(ranks)),
        options_(options) {}

  int index() const override { return context_->rank; }
  int size() const override { return context_->size; }
  const std::string& name() const override { return name_; }

  absl::Status AllGather(const void* in, void* out, int64_t block_numel,
                         DType dtype) override {
    return Guard("all_gather", block_numel, [&] {
      const int64_t bytes = block_numel * ItemSize(dtype);
      char* base = static_cast<char*>(out);
      // The ring gathers in place, this member's block at its offset.
      if (in != base + index() * bytes) {
        CopyBytes(base + index() * bytes, in, bytes);
      }
      RingAllGather(base, static_cast<size_t>(bytes));
    });
  }

  absl::Status AllReduce(void* data, int64_t block_numel, DType dtype,
                         Reduction reduction) override {
    return Guard("all_reduce", block_numel, [&] {
      ReduceInPlace(data, block_numel, dtype, reduction.op);
      DivideElements(dtype, data, block_numel, Divisor(reduction));
    });
  }

  absl::Status ReduceScatter(const void* in, void* out, int64_t block_numel,
                             DType dtype, Reduction reduction) override {
    return Guard("reduce_scatter", block_numel, [&] {
      const int64_t bytes = block_numel * ItemSize(dtype);
      if (options_.reduce_scatter == GlooReduceScatter::kRing) {
        RingReduceScatter(static_cast<const char*>(in), static_cast<char*>(out),
                          block_numel, dtype, reduction.op);
      } else {
        scratch_.assign(static_cast<const char*>(in),
                        static_cast<const char*>(in) + bytes * size());
        ReduceInPlace(scratch_.data(), block_numel * size(), dtype,
                      reduction.op);
        CopyBytes(out, scratch_.data() + index() * bytes, bytes);
      }
      DivideElements(dtype, out, block_numel, Divisor(reduction));
    });
  }

  absl::Status AllToAll(const void* in, void* out, int64_t block_numel,
                        DType dtype) override {
    return Guard("all_to_all", block_numel, [&] {
      const size_t bytes = block_numel * ItemSize(dtype) * size();
      gloo::AlltoallOptions o(context_);
      o.setInput(const_cast<char*>(static_cast<const char*>(in)), bytes);
      o.setOutput(static_cast<char*>(out), bytes);
      o.setTimeout(options_.timeout);
      gloo::alltoall(o);
    });
  }

  // Receives are posted first; then each block is packed (when it must
  // be) just before its runs are handed to Gloo's I/O thread, so packing
  // overlaps the exchange, and runs long enough go from the input in place.
  absl::Status AllToAllRuns(
      absl::FunctionRef<SendBlock(int)> send,
      absl::FunctionRef<absl::Span<const ByteRun>(int)> recv, void*, void* out,
      int64_t block_bytes) override {
    return Guard("all_to_all", block_bytes, [&] {
      RunsAllToAll(send, recv, static_cast<char*>(out), block_bytes);
    });
  }

  bool SendsRunsInPlace() const override { return true; }

  absl::Status Send(int peer, const void* data, int64_t bytes) override {
    return PointToPoint("send to", peer, bytes, [&] {
      auto buffer = context_->createUnboundBuffer(const_cast<void*>(data),
                                                  static_cast<size_t>(bytes));
      buffer->send(peer, PointToPointSlot());
      if (!buffer->waitSend(options_.timeout)) {
        throw std::runtime_error("send aborted");
      }
    });
  }

  absl::Status Recv(int peer, void* data, int64_t bytes) override {
    return PointToPoint("receive from", peer, bytes, [&] {
      auto buffer =
          context_->createUnboundBuffer(data, static_cast<size_t>(bytes));
      buffer->recv(peer, PointToPointSlot());
      if (!buffer->waitRecv(options_.timeout)) {
        throw std::runtime_error("receive aborted");
      }
    });
  }

  // Receives are posted first, then sends; every wait is bounded by the
  // timeout and the first to fail names its peer.
  absl::Status Exchange(absl::Span<const PeerMessage> sends,
                        absl::Span<const PeerMessage> recvs) override {
    for (const PeerMessage& m : sends) {
      if (absl::Status s = CheckPeer("send to", m.peer); !s.ok()) return s;
    }
    for (const PeerMessage& m : recvs) {
      if (absl::Status s = CheckPeer("receive from", m.peer); !s.ok()) {
        return s;
      }
    }
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> posted;
    const char* what = "receive from";
    int peer = 0;
    try {
      for (const auto& [list, send] :
           {std::pair{recvs, false}, std::pair{sends, true}}) {
        for (const PeerMessage& m : list) {
          if (m.bytes == 0) continue;
          posted.push_back(context_->createUnboundBuffer(
              m.data, static_cast<size_t>(m.bytes)));
          if (send) {
            posted.back()->send(m.peer, PointToPointSlot());
          } else {
            posted.back()->recv(m.peer, PointToPointSlot());
          }
        }
      }
      size_t k = 0;
      for (const auto& [list, send] :
           {std::pair{recvs, false}, std::pair{sends, true}}) {
        for (const PeerMessage& m : list) {
          if (m.bytes == 0) continue;
          what = send ? "send to" : "receive from";
          peer = m.peer;
          const bool done = send ? posted[k]->waitSend(options_.timeout)
                                 : posted[k]->waitRecv(options_.timeout);
          ++k;
          if (!done) throw std::runtime_error("exchange aborted");
        }
      }
      return absl::OkStatus();
    } catch (const std::exception& e) {
      return FromGloo(absl::StrCat(what, " member ", peer, " (rank ",
                                   ranks_[peer], ") of group ", name_),
                      e);
    }
  }

 private:
  // Point-to-point calls use a slot of their own, the same on both ends
  // whatever collectives each member ran before (a collective's slots
  // come from counters that only its members advance).
  static uint64_t PointToPointSlot() {
    return gloo::Slot::build(kPointToPointSlotPrefix, 0);
  }

  // A send or receive with member `peer`, its exceptions turned into a
  // status naming the peer.
  template <typename F>
  absl::Status PointToPoint(absl::string_view what, int peer, int64_t bytes,
                            F body) {
    absl::Status s = CheckPeer(what, peer);
    if (!s.ok() || bytes == 0) return s;
    try {
      body();
      return absl::OkStatus();
    } catch (const std::exception& e) {
      return FromGloo(absl::StrCat(what, " member ", peer, " (rank ",
                                   ranks_[peer], ") of group ", name_),
                      e);
    }
  }

  // Runs a Gloo call, its exceptions turned into a status. Empty blocks
  // move nothing (and Gloo divides by their size).
  template <typename F>
  absl::Status Guard(absl::string_view op, int64_t block_numel, F body) {
    if (block_numel == 0) return absl::OkStatus();
    try {
      body();
      return absl::OkStatus();
    } catch (const std::exception& e) {
      return FromGloo(absl::StrCat(op, " on group ", name_, " (ranks [",
                                   absl::StrJoin(ranks_, ","), "])"),
                      e);
    }
  }

  int64_t Divisor(Reduction r) const { return DivisorOf(r, size()); }

  void ReduceInPlace(void* data, int64_t numel, DType dtype, ReduceOp op);
  void RunsAllToAll(absl::FunctionRef<SendBlock(int)> send,
                    absl::FunctionRef<absl::Span<const ByteRun>(int)> recv,
                    char* out, int64_t block_bytes);
  void RingReduceScatter(const char* in, char* out, int64_t block_numel,
                         DType dtype, ReduceOp op);
  void RingAllGather(char* out, size_t bytes);

  std::shared_ptr<gloo::Context> context_;
  std::string name_;
  std::vector<int64_t> ranks_;
  GlooOptions options_;
  // The ring's partial sums (two, alternating) and its receive block; the
  // all-reduce-and-slice option's copy of the input.
  std::vector<char> scratch_;
};

template <typename Word>
void SetAllreduceOutput(gloo::AllreduceOptions& o, void* data, int64_t numel) {
  o.setOutput(static_cast<Word*>(data), static_cast<size_t>(numel));
}

void GlooCommunicator::ReduceInPlace(void* data, int64_t numel, DType dtype,
                                     ReduceOp op) {
  gloo::AllreduceOptions o(context_);
  switch (ItemSize(dtype)) {
    case 2:
      SetAllreduceOutput<uint16_t>(o, data, numel);
      break;
    case 4:
      SetAllreduceOutput<uint32_t>(o, data, numel);
      break;
    default:
      SetAllreduceOutput<uint64_t>(o, data, numel);
      break;
  }
  // Gloo's own sum/min/max cannot reduce bfloat16 and would treat the
  // words as integers: reduce on values with the executor's functions.
  o.setReduceFunction(
      [dtype, op](void* c, const void* a, const void* b, size_t n) {
        ReduceElements(dtype, op, c, a, b, static_cast<int64_t>(n));
      });
  o.setTimeout(options_.timeout);
  gloo::allreduce(o);
}

// Ring reduce-scatter: at step s member r sends its partial sum of block
// (r - s - 1) mod n to r + 1 and adds its own input block (r - s - 2) mod n
// to the partial sum of that block received from r - 1; after n - 1 steps
// the block it holds is block r, complete. Each block crosses n - 1 links
// (the bandwidth optimum; all_reduce-and-slice moves twice the data), and
// the input is only read: partial sums alternate between two scratch
// blocks, the last one lands in `out`.
void GlooCommunicator::RingReduceScatter(const char* in, char* out,
                                         int64_t block_numel, DType dtype,
                                         ReduceOp op) {
  const int n = size();
  const int r = index();
  const size_t bytes = block_numel * ItemSize(dtype);
  if (n == 1) {
    CopyBytes(out, in, bytes);
    return;
  }
  scratch_.resize(3 * bytes);
  char* partial[2] = {scratch_.data(), scratch_.data() + bytes};
  char* incoming = scratch_.data() + 2 * bytes;
  auto input = context_->createUnboundBuffer(const_cast<char*>(in), bytes * n);
  auto sums = context_->createUnboundBuffer(scratch_.data(), 3 * bytes);
  const uint64_t slot = context_->nextSlot();
  for (int s = 0; s + 1 < n; ++s) {
    // The receive first, so that the peer's data has a place when it comes.
    sums->recv((r + n - 1) % n, slot, 2 * bytes, bytes);
    // Step 0 forwards an input block; later steps the last partial sum.
    if (s == 0) {
      input->send((r + 1) % n, slot, RingBlock(r - 1, n) * bytes, bytes);
    } else {
      sums->send((r + 1) % n, slot, ((s - 1) % 2) * bytes, bytes);
    }
    const bool sent = s == 0 ? input->waitSend(options_.timeout)
                             : sums->waitSend(options_.timeout);
    if (!sums->waitRecv(options_.timeout) || !sent) {
      throw std::runtime_error("reduce_scatter ring step aborted");
    }
    char* target = s + 2 == n ? out : partial[s % 2];
    ReduceElements(dtype, op, target, in + RingBlock(r - s - 2, n) * bytes,
                   incoming, block_numel);
  }
}

// Ring all-gather in place: at step s member r receives block (r - s - 1)
// mod n from r - 1 and sends block (r - s) mod n (its own at step 0, then
// the one it received last) to r + 1. The receive is posted before the
// send, as in RingReduceScatter: on a link the group's pairs share, Gloo's
// own allgather measured up to a quarter slower than this ring's
// reduce_scatter of the same bytes
// (docs/notes/2026-11-29-all-gather-receive-first.md, "All-gather posts its
// receive first").
void GlooCommunicator::RingAllGather(char* out, size_t bytes) {
  const int n = size();
  const int r = index();
  auto buffer = context_->createUnboundBuffer(out, bytes * n);
  const uint64_t slot = context_->nextSlot();
  for (int s = 0; s + 1 < n; ++s) {
    buffer->recv((r + n - 1) % n, slot, RingBlock(r - s - 1, n) * bytes, bytes);
    buffer->send((r + 1) % n, slot, RingBlock(r - s, n) * bytes, bytes);
    const bool sent = buffer->waitSend(options_.timeout);
    if (!buffer->waitRecv(options_.timeout) || !sent) {
      throw std::runtime_error("all_gather ring step aborted");
    }
  }
}

void GlooCommunicator::RunsAllToAll(
    absl::FunctionRef<SendBlock(int)> send,
    absl::FunctionRef<absl::Span<const ByteRun>(int)> recv, char* out,
    int64_t block_bytes) {
  const int n = size();
  const int r = index();
  auto received = context_->createUnboundBuffer(out, block_bytes * n);
  const uint64_t slot = context_->nextSlot();
  int receives = 0;
  for (int i = 0; i < n; ++i) {
    if (i == r) continue;
    for (const ByteRun& run : recv(i)) {
      received->recv(i, slot, i * block_bytes + run.offset, run.bytes);
      ++receives;
    }
  }
  // One send buffer per buffer the runs are of (the input, the packed
  // wire), made when a block first names it. Start with the next member
  // so that no member is everyone's first.
  struct Source {
    const char* base;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    int sends = 0;
  };
  std::vector<Source> sources;
  for (int k = 1; k < n; ++k) {
    const int j = (r + k) % n;
    const SendBlock block = send(j);
    auto at =
        std::find_if(sources.begin(), sources.end(),
                     [&](const Source& s) { return s.base == block.base; });
    if (at == sources.end()) {
      sources.push_back(
          {block.base, context_->createUnboundBuffer(
                           const_cast<char*>(block.base), block.extent)});
      at = sources.end() - 1;
    }
    for (const ByteRun& run : block.runs) {
      at->buffer->send(j, slot, run.offset, run.bytes);
      ++at->sends;
    }
  }
  (void)send(r);  // this member's own block, placed by the caller
  for (Source& source : sources) {
    for (int k = 0; k < source.sends; ++k) {
      if (!source.buffer->waitSend(options_.timeout)) {
        throw std::runtime_error("all_to_all send aborted");
      }
    }
  }
  for (int k = 0; k < receives; ++k) {
    if (!received->waitRecv(options_.timeout)) {
      throw std::runtime_error("all_to_all receive aborted");
    }
  }
}

}  // namespace

GlooCommunicatorProvider::GlooCommunicatorProvider(
    std::shared_ptr<KeyValueStore> store, std::string prefix, int64_t rank,
    GlooOptions options)
    : store_(std::move(store)),
      prefix_(std::move(prefix)),
      rank_(rank),
      options_(options) {
  // A peer that dies mid-send must surface as an error, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
}

GlooCommunicatorProvider::~GlooCommunicatorProvider() = default;

absl::Status GlooCommunicatorProvider::EnsureDevice() {
  if (device_ != nullptr) return absl::OkStatus();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options_.hostname;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo: cannot open a TCP device on ", options_.hostname,
                     ": ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<gloo::Context>>
GlooCommunicatorProvider::Connect(const std::vector<int64_t>& ranks, int index,
                                  const std::string& label) {
  auto known = contexts_.find(ranks);
  if (known != contexts_.end()) return known->second;
  absl::Status s = EnsureDevice();
  if (!s.ok()) return s;
  auto context = std::make_shared<gloo::rendezvous::Context>(
      index, static_cast<int>(ranks.size()));
  context->setTimeout(options_.timeout);
  try {
    ConnectStore store(*store_,
                       absl::StrCat(prefix_, "/", absl::StrJoin(ranks, "_")),
                       index, static_cast<int>(ranks.size()), options_.timeout);
    context->connectFullMesh(store, device_);
    // A member's pairs count as connected once it has sent its side, which
    // can be before its peers have read it: a member whose collectives on
    // the group are all empty (an uneven shape's empty blocks) would
    // otherwise finish and close its pairs while a peer still reads, and
    // that peer fail "Connection closed by peer". After the barrier every
    // member has finished connecting.
    gloo::BarrierOptions barrier(context);
    barrier.setTimeout(options_.timeout);
    gloo::barrier(barrier);
  } catch (const std::exception& e) {
    return FromGloo(absl::StrCat("connecting ", label), e);
  }
  contexts_.emplace(ranks, context);
  return context;
}

absl::StatusOr<Communicator*> GlooCommunicatorProvider::Get(
    const std::vector<int64_t>& ranks, absl::string_view name) {
  auto key = std::make_pair(ranks, std::string(name));
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second.get();
  const auto me = std::find(ranks.begin(), ranks.end(), rank_);
  const std::string label = absl::StrCat("group ", name, " (ranks [",
                                         absl::StrJoin(ranks, ","), "])");
  if (me == ranks.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " does not contain rank ", rank_));
  }
  absl::StatusOr<std::shared_ptr<gloo::Context>> context =
      Connect(ranks, static_cast<int>(me - ranks.begin()), label);
  if (!context.ok()) return context.status();
  auto comm = std::make_unique<GlooCommunicator>(
      *std::move(context), std::string(name), ranks, options_);
  Communicator* raw = comm.get();
  groups_.emplace(std::move(key), std::move(comm));
  return raw;
}

}  // namespace reshard::executor
