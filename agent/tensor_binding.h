// A run's registered tensors on this rank (docs/DESIGN.md §6.6): each item's
// source and destination found in the registry and checked against what
// the plan reads and writes here (dtype and local shape) before anything
// moves; staging buffers for the results unless the run waives them; and
// the commit that copies staged results into the destinations.
#ifndef RESHARD_AGENT_TENSOR_BINDING_H_
#define RESHARD_AGENT_TENSOR_BINDING_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "agent/tensor_layout.h"
#include "agent/tensor_registry.h"
#include "executor/run/run.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"
#include "run_values/cross_work.h"

namespace reshard::agent {

struct TensorNames {
  std::string source;
  std::string into;
  // A rank where `into` is not registered allocates it
  // (TensorRegistry::Allocate) instead of failing.
  bool allocate = false;
  bool operator==(const TensorNames&) const = default;
};

class BoundRun {
 public:
  // One side of an item on this rank: the layout the run reads or writes
  // it as, and the rank's position in its mesh.
  struct Side {
    TensorLayout layout;
    int64_t position = 0;
    std::vector<int64_t> Shape() const;  // the rank's block
  };

  // Binds every item of `work` on `rank`. NOT_FOUND naming the rank, the
  // binding and the name for a tensor not registered (a destination with
  // `allocate` is allocated instead); FAILED_PRECONDITION naming them for
  // a dtype or local shape that is not the plan's, or a registered layout
  // (tensor_layout.h) that is not the one the run moves it as.
  static absl::StatusOr<std::unique_ptr<BoundRun>> Bind(
      const Mesh& mesh, const executor::BatchWork& work, int64_t rank,
      const std::vector<TensorNames>& names, bool staging,
      TensorRegistry& registry);

  // Binds a cross-mesh run's items (one plan, or a batch) on global
  // `rank` (docs/DESIGN.md §9): each item's source where the rank is in
  // its source mesh, its destination where it is in the destination mesh
  // (a rank in neither binds nothing). The errors of Bind. tensors()
  // holds null where the rank has no role.
  static absl::StatusOr<std::unique_ptr<BoundRun>> BindCross(
      absl::Span<const executor::CrossWork> items, int64_t rank,
      const std::vector<TensorNames>& names, bool staging,
      TensorRegistry& registry);

  // What the executor reads and writes (the staging buffers, or the
  // destinations themselves).
  const executor::RunBuffers& tensors() const { return tensors_; }
  // Bound with staging: the run's results wait for Commit (a rank with no
  // destination commits nothing).
  bool staged() const { return staging_mode_; }
  // Bytes the staging buffers hold.
  int64_t staging_bytes() const;
  // Whether a run binding `names` with `staging` may use this binding
  // again: the same names and mode, and every tensor still registered as
  // the memory it bound (not unregistered or replaced since).
  bool StillBound(const std::vector<TensorNames>& names, bool staging,
                  const TensorRegistry& registry) const;

  // Copies every staged result into its destination. FAILED_PRECONDITION
  // naming the tensor when a destination was unregistered or replaced
  // since the run began (nothing is written then).
  absl::Status Commit(const TensorRegistry& registry) const;

 private:
  BoundRun(std::vector<TensorNames> names, bool staging)
      : names_(std::move(names)), staging_mode_(staging) {}
  // Item t's source (when `src` is set) and destination (when `dst` is).
  absl::Status BindItem(size_t t, DType dtype, const std::optional<Side>& src,
                        const std::optional<Side>& dst,
                        TensorRegistry& registry);

  std::vector<TensorNames> names_;
  bool staging_mode_ = false;
  std::vector<std::shared_ptr<SharedMemory>> sources_, destinations_;
  // The item of each source and destination.
  std::vector<size_t> source_items_, destination_items_;
  // Not zero-filled: the run writes every byte before the commit reads it.
  std::vector<std::unique_ptr<char[]>> staging_;
  std::vector<int64_t> staging_sizes_;
  executor::RunBuffers tensors_;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_TENSOR_BINDING_H_
