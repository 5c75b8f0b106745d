// The tensors a rank's processes registered at its agent (docs/DESIGN.md
// §6.6): by name, each a mapping of the memfd its owner sent, with its
// dtype and local shape. Runs hold a registration's memory by a shared
// pointer, so unregistering (or the owner's connection closing) frees the
// mapping once no run uses it. Bounded in count and bytes. Thread-safe.
#ifndef RESHARD_AGENT_TENSOR_REGISTRY_H_
#define RESHARD_AGENT_TENSOR_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/tensor_layout.h"
#include "planner/core/tensor_spec.h"

namespace reshard::agent {

// `length` bytes at `offset` of a memfd, mapped shared (read and write) for
// as long as the object lives.
class SharedMemory {
 public:
  // INVALID_ARGUMENT naming `offset` or `length` when they do not lie
  // within the file; FAILED_PRECONDITION when the file is not sealed
  // against shrinking (a truncate would fault every reader, the agent
  // first).
  // With `keep_fd`, the mapping keeps a duplicate of `fd` (closed with
  // it), which fd() returns, to hand the memory to a client.
  static absl::StatusOr<std::shared_ptr<SharedMemory>> Map(
      int fd, int64_t offset, int64_t length, bool keep_fd = false);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  char* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  int fd() const { return fd_; }  // -1 unless kept
  // The same file range (device, inode, offset, length).
  bool SameRange(const SharedMemory& other) const;

 private:
  SharedMemory() = default;
  void* base_ = nullptr;  // the page-aligned mapping
  size_t mapped_ = 0;
  char* data_ = nullptr;
  int64_t bytes_ = 0;
  uint64_t device_ = 0, inode_ = 0;
  int64_t offset_ = 0;
  int fd_ = -1;
};

// The owner of what the agent allocated itself (a run's destination that
// no client registered): never dropped with a connection.
inline constexpr uint64_t kAgentOwner = 0;

struct TensorEntry {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // the rank's local shape
  std::shared_ptr<SharedMemory> memory;
  uint64_t owner = 0;  // the connection that registered it
  // Where given: the layout its block is of (runs bind it only as such).
  std::optional<TensorLayout> layout;
};

struct RegistryLimits {
  int64_t max_tensors = 4096;
  int64_t max_bytes = int64_t{64} << 30;
};

// A registration request's fields, checked by Register.
struct TensorRequest {
  std::string name;
  std::optional<DType> dtype;  // none: not given or unknown
  std::vector<int64_t> shape;
  int64_t offset = 0;
  int64_t length = 0;
  std::optional<TensorLayout> layout;  // checked against the shape already
};

class TensorRegistry {
 public:
  explicit TensorRegistry(RegistryLimits limits = {}) : limits_(limits) {}

  // Registers (or replaces) `request.name` for `owner`, mapping `fd`
  // (which the caller keeps and closes). INVALID_ARGUMENT naming the field
  // (name, dtype, shape, length, offset); FAILED_PRECONDITION for an
  // unsealed memfd; RESOURCE_EXHAUSTED naming the bound past
  // max_tensors or max_bytes. The same name for the same file range, dtype
  // and shape again changes nothing.
  absl::Status Register(uint64_t owner, const TensorRequest& request, int fd);
  // Registers `request.name` in a new sealed memfd of the agent's own
  // (kAgentOwner; zero-filled), which clients fetch: a destination the
  // agent allocates and shares back. Register's refusals; INTERNAL when no
  // memfd can be made.
  absl::Status Allocate(const TensorRequest& request);
  // NOT_FOUND naming the tensor when none is registered under it.
  absl::Status Unregister(const std::string& name);
  // Everything `owner` registered (its connection closed).
  void DropOwner(uint64_t owner);

  std::optional<TensorEntry> Find(const std::string& name) const;
  std::vector<TensorEntry> List() const;  // by name
  int64_t bytes() const;

 private:
  absl::Status CheckBounds(const TensorRequest& request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RegistryLimits limits_;
  mutable absl::Mutex mu_;
  std::map<std::string, TensorEntry> entries_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_TENSOR_REGISTRY_H_
