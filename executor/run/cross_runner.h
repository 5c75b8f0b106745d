// A CrossRunner is one global rank's compiled form of a cross-mesh plan
// (docs/DESIGN.md §9): its source role (the pre-steps on the source mesh,
// src → src_mid), its transfers (src_mid on the source mesh → dst_mid on
// the destination mesh) and its destination role (the post-steps on the
// destination mesh, dst_mid → dst). Every rank of the run (the union of
// both rank maps) compiles the same plan at the same time; a rank in both
// meshes plays both roles.
//
// Transfers: each rank expands its own from the plan's sender rule at
// Compile (CompileCrossProgram, cross_program.h). The pieces for one rank pair
// travel as one message, packed in the rule's order; a rank's copies to
// itself are local. Messages run in rounds over the run's ranks (round k:
// to index + k, from index − k), kTransferRoundsInFlight rounds posted at
// once: a rank's concurrent transfers are bounded, and since every rank
// posts the same rounds together no order of arrival can deadlock.
//
// Memory: the staging buffers (src_mid and dst_mid blocks where a pre- or
// post-step needs them, one packed message per peer) are allocated at
// Compile and kept: a repeated Run allocates nothing. Host memory only
// (Gloo): the packing copies run on the host.
//
// Not thread-safe: one Run at a time per runner.
#ifndef RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_
#define RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/run/communicator.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/cross_program.h"
#include "executor/run/plan_runner.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"

namespace reshard::executor {

// How many rounds of a rank's transfers are posted at once (each round at
// most one send and one receive).
inline constexpr int kTransferRoundsInFlight = 8;

// What one Run measured.
struct CrossRunStats {
  double pre_seconds = 0;
  double transfer_seconds = 0;  // packing, the exchange, unpacking
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

  // Runs the plan: `in` holds this rank's source block under `plan.src`
  // (SourceNumel() elements, row-major; null when not a source rank),
  // `out` receives its block under `plan.dst` (ResultNumel(); null when
  // not a destination rank). The first failure is returned, naming the
  // part ("pre-steps: ", "transfers: ", "post-steps: ").
  absl::Status Run(const void* in, void* out, CrossRunStats* stats = nullptr);

  bool is_source() const { return program_.source.has_value(); }
  bool is_destination() const { return program_.destination.has_value(); }
  int64_t SourceNumel() const;
  int64_t ResultNumel() const;
  // The staging bytes the runner holds (mid blocks and messages).
  int64_t StagingBytes() const;
  const CrossMeshPlan& plan() const { return plan_; }
  const CrossProgram& program() const { return program_; }
  int64_t src_position() const;
  int64_t dst_position() const;

  ~CrossRunner();

 private:
  CrossRunner(const Mesh& src_mesh, const Mesh& dst_mesh,
              const CrossMeshPlan& plan, CrossProgram program);
  absl::Status Connect(CommunicatorProvider& provider);
  absl::Status CompileRoles(CommunicatorProvider& provider);
  void ScheduleRounds();
  absl::Status Exchange(const char* src_mid, char* dst_mid,
                        CrossRunStats& stats);

  Mesh src_mesh_, dst_mesh_;
  CrossMeshPlan plan_;
  CrossProgram program_;
  std::unique_ptr<PlanRunner> pre_, post_;
  // Staging for the mid blocks, where a pre- or post-step has steps.
  std::vector<char> src_mid_, dst_mid_;
  Communicator* world_ = nullptr;  // the provider's
  int index_ = 0;                  // this rank's in `world_`
  // One packed message per peer and direction (program_.sends, .recvs),
  // and the copies to itself.
  std::vector<std::vector<char>> send_packed_, recv_packed_;
  std::vector<char> local_packed_;
  // Per group of kTransferRoundsInFlight rounds: the messages posted, and
  // the receives to unpack (indexes into program_.recvs).
  std::vector<std::vector<PeerMessage>> round_sends_, round_recvs_;
  std::vector<std::vector<size_t>> round_unpacks_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_CROSS_RUNNER_H_
