// A CrossRunner is one global rank's compiled form of cross-mesh plans
// (docs/DESIGN.md §9): one plan, or a batch of them (a model's weights,
// each tensor with its own source mesh where it has one) that share the
// destination mesh. Per tensor: its source role (the pre-steps on its
// source mesh, src → src_mid), its transfers (src_mid → dst_mid on the
// destination mesh) and its destination role (the post-steps, dst_mid →
// dst). Every rank of the run (the union of every rank map) compiles the
// same plans at the same time; a rank in both meshes plays both roles.
//
// Steps: the pre-steps of the tensors that share a source mesh run as one
// single-mesh batch, and so do all tensors' post-steps (BatchRunner,
// bucketed by ScheduleBuckets under the batch's bound: one collective per
// bucket, not one per tensor); every rank of a mesh groups alike, from
// the plans and meshes alone.
//
// Transfers: each rank expands its own from each plan's sender rule at
// Compile (CompileCrossProgram, cross_program.h). The tensors run in
// exchanges: consecutive tensors, in order, while the sum of their plans'
// max_send + max_recv stays within the batch's exchange bound (a tensor
// above it is an exchange alone; a single plan is one exchange). Within an
// exchange, every piece one rank sends another, of every tensor, travels
// in one message, packed tensor by tensor in the rule's order; a rank's
// copies to itself are local. Messages run in rounds over the run's ranks
// (round k: to index + k, from index − k), kTransferRoundsInFlight rounds
// posted at once: a rank's concurrent transfers are bounded, and since
// every rank posts the same rounds together no order of arrival can
// deadlock.
//
// Memory: the staging buffers (src_mid and dst_mid blocks where a pre- or
// post-step needs them; per peer and direction, one message as large as
// that peer's largest exchange) are allocated at Compile and kept: a
// repeated Run allocates nothing. Host memory only (Gloo): the packing
// copies run on the host.
//
// Not thread-safe: one Run at a time per runner.
#ifndef RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_
#define RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "executor/run/communicator.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/cross_program.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "run_values/cross_work.h"

namespace reshard::executor {

// How many rounds of a rank's transfers are posted at once (each round at
// most one send and one receive).
inline constexpr int kTransferRoundsInFlight = 8;

// What one Run measured, over every tensor.
struct CrossRunStats {
  double pre_seconds = 0;
  double transfer_seconds = 0;  // packing, the exchanges, unpacking
  double post_seconds = 0;
  double total_seconds = 0;
  int64_t sent_bytes = 0;      // to other ranks
  int64_t received_bytes = 0;  // from other ranks
};

class CrossRunner {
 public:
  // Compiles `plan` for global `rank` (CompileCrossProgram's errors); the
  // provider's error when the run's communicator ("cross": every rank of
  // the union, ascending) cannot be created; FAILED_PRECONDITION naming
  // the first rank whose plan's layout digest differs from this one's
  // (before any data moves); PlanRunner::Compile's for the pre- or
  // post-steps. The meshes and the plan are copied.
  static absl::StatusOr<std::unique_ptr<CrossRunner>> Compile(
      const Mesh& src_mesh, const Mesh& dst_mesh, const CrossMeshPlan& plan,
      int64_t rank, CommunicatorProvider& provider);

  // Compiles a batch (each tensor's work: its own source mesh or the
  // batch's, and one destination mesh for all) as Compile compiles one
  // plan; `exchange_bytes` bounds the exchanges and the steps' buckets.
  // Errors of a tensor are prefixed "tensors[t]: ", of a role's batch
  // "pre-steps: the batch of tensors[a,b]: ". INVALID_ARGUMENT
  // for an empty batch, tensors on different destination meshes or an
  // exchange bound below one byte. The digest compared is every tensor's
  // layout digest in order: a rank given another batch stops every rank.
  static absl::StatusOr<std::unique_ptr<CrossRunner>> CompileBatch(
      std::vector<CrossWork> items, int64_t exchange_bytes, int64_t rank,
      CommunicatorProvider& provider);

  // Runs the plans: in[t] holds this rank's source block of tensor t under
  // its plan's `src` (SourceNumel(t) elements, row-major; null when not a
  // source rank of it), out[t] receives its block under `dst`
  // (ResultNumel(t); null when not a destination rank). The first failure
  // is returned, naming the part ("pre-steps: ", "transfers: ",
  // "post-steps: ", after "tensors[t]: " in a batch of several).
  absl::Status RunBatch(absl::Span<const void* const> in,
                        absl::Span<void* const> out,
                        CrossRunStats* stats = nullptr);
  // The one tensor of a runner compiled from one plan.
  absl::Status Run(const void* in, void* out, CrossRunStats* stats = nullptr);

  int size() const;
  int exchanges() const;  // how many the transfers run in
  bool is_source(int t = 0) const;
  bool is_destination(int t = 0) const;
  int64_t SourceNumel(int t = 0) const;
  int64_t ResultNumel(int t = 0) const;
  // The staging bytes the runner holds (mid blocks and messages).
  int64_t StagingBytes() const;
  const Mesh& src_mesh(int t = 0) const;
  const Mesh& dst_mesh() const { return dst_mesh_; }
  const CrossMeshPlan& plan(int t = 0) const;
  const CrossProgram& program(int t = 0) const;
  int64_t src_position(int t = 0) const;
  int64_t dst_position(int t = 0) const;
  // Every rank of the run (of any tensor's meshes), ascending.
  const std::vector<int64_t>& run_ranks() const { return run_ranks_; }

  ~CrossRunner();

 private:
  struct Item;
  struct RoleBatch;
  struct Exchange;

  CrossRunner(const Mesh& dst_mesh, int64_t rank);
  absl::Status AddItems(std::vector<CrossWork> items);
  absl::Status Connect(CommunicatorProvider& provider);
  absl::Status CompileRoles(int64_t bucket_bytes,
                            CommunicatorProvider& provider);
  absl::Status CompileRole(RoleBatch& batch, bool pre, int64_t bucket_bytes,
                           CommunicatorProvider& provider);
  void GroupExchanges(int64_t exchange_bytes);
  void LayOutMessages(Exchange& exchange);
  void ScheduleRounds(Exchange& exchange);
  absl::Status RunExchange(Exchange& exchange,
                           const std::vector<const char*>& src_mid,
                           const std::vector<char*>& dst_mid,
                           CrossRunStats& stats);

  Mesh dst_mesh_;
  int64_t rank_ = 0;
  std::vector<Item> items_;
  // The pre-steps by source mesh, and the post-steps (at most one).
  std::vector<RoleBatch> pre_, post_;
  std::vector<Exchange> exchanges_;
  std::vector<int64_t> run_ranks_;  // every item's, ascending
  uint64_t digest_ = 0;             // the layout digests, in order
  Communicator* world_ = nullptr;   // the provider's
  int index_ = 0;                   // this rank's in `world_`
  // Per rank of the run (index into run_ranks_) and direction: one packed
  // message, as large as its largest exchange's; the local copies' buffer.
  std::vector<std::vector<char>> send_packed_, recv_packed_;
  std::vector<char> local_packed_;
  // Per item, the caller's or the staged mid blocks of the Run under way.
  std::vector<const char*> src_mid_ptrs_;
  std::vector<char*> dst_mid_ptrs_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_
