#include "agent/tensor_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/tensor_name.h"
#include "planner/core/field_error.h"

namespace reshard::agent {
namespace {

// A local shape's rank past which a request is a mistake.
constexpr size_t kMaxShapeRank = 16;

// The shape's bytes for `dtype`, or INVALID_ARGUMENT naming the dim.
absl::StatusOr<int64_t> ShapeBytes(const std::vector<int64_t>& shape,
                                   DType dtype) {
  if (shape.size() > kMaxShapeRank) {
    return InvalidField("shape", absl::StrCat("rank ", shape.size(),
                                              " is over ", kMaxShapeRank));
  }
  int64_t bytes = ItemSize(dtype);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      return InvalidField(absl::StrCat("shape[", d, "]"), "must be >= 0");
    }
    if (shape[d] > 0 &&
        bytes > std::numeric_limits<int64_t>::max() / shape[d]) {
      return InvalidField("shape", "its bytes overflow int64");
    }
    bytes *= shape[d];
  }
  return bytes;
}

bool SameEntry(const TensorEntry& entry, const TensorRequest& request,
               const SharedMemory& memory) {
  return entry.dtype == *request.dtype && entry.shape == request.shape &&
         entry.memory->SameRange(memory);
}

}  // namespace

absl::StatusOr<std::shared_ptr<SharedMemory>> SharedMemory::Map(int fd,
                                                                int64_t offset,
                                                                int64_t length,
                                                                bool keep_fd) {
  if (offset < 0) return InvalidField("offset", "must be >= 0");
  if (length < 0) return InvalidField("length", "must be >= 0");
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "memory: the file descriptor is ",
        seals < 0 ? absl::StrCat("not a sealable memfd (", strerror(errno), ")")
                  : "not sealed with F_SEAL_SHRINK",
        "; seal it so that a truncate cannot fault the agent"));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory: fstat failed: ", strerror(errno)));
  }
  if (offset > st.st_size || length > st.st_size - offset) {
    return InvalidField(
        "length", absl::StrCat(offset, " + ", length,
                               " bytes run past the file's ", st.st_size));
  }
  auto memory = std::shared_ptr<SharedMemory>(new SharedMemory());
  memory->bytes_ = length;
  memory->device_ = st.st_dev;
  memory->inode_ = st.st_ino;
  memory->offset_ = offset;
  if (keep_fd) memory->fd_ = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (length == 0) return memory;
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t start = offset / page * page;
  memory->mapped_ = static_cast<size_t>(offset - start + length);
  void* base = mmap(nullptr, memory->mapped_, PROT_READ | PROT_WRITE,
                    MAP_SHARED, fd, start);
  if (base == MAP_FAILED) {
    // ENOMEM is this agent's limit; anything else is the descriptor's
    // (opened read-only, or sealed against writes).
    const bool no_memory = errno == ENOMEM;
    const std::string why = absl::StrCat("memory: mmap of ", length,
                                         " bytes failed: ", strerror(errno));
    return no_memory ? absl::ResourceExhaustedError(why)
                     : absl::FailedPreconditionError(why);
  }
  memory->base_ = base;
  memory->data_ = static_cast<char*>(base) + (offset - start);
  return memory;
}

SharedMemory::~SharedMemory() {
  if (base_ != nullptr) munmap(base_, mapped_);
  if (fd_ >= 0) close(fd_);
}

bool SharedMemory::SameRange(const SharedMemory& other) const {
  return device_ == other.device_ && inode_ == other.inode_ &&
         offset_ == other.offset_ && bytes_ == other.bytes_;
}

absl::Status TensorRegistry::CheckBounds(const TensorRequest& request) const {
  const auto old = entries_.find(request.name);
  const int64_t count =
      static_cast<int64_t>(entries_.size()) + (old == entries_.end() ? 1 : 0);
  if (count > limits_.max_tensors) {
    return absl::ResourceExhaustedError(
        absl::StrCat("register ", request.name, ": this agent holds ",
                     entries_.size(), " tensors, its --max_tensors (",
                     limits_.max_tensors, "); unregister some first"));
  }
  const int64_t freed = old == entries_.end() ? 0 : old->second.memory->bytes();
  if (bytes_ - freed + request.length > limits_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("register ", request.name, ": ", request.length,
                     " bytes more than the ", bytes_ - freed,
                     " registered would pass this agent's --max_tensor_bytes (",
                     limits_.max_bytes, ")"));
  }
  return absl::OkStatus();
}

absl::Status TensorRegistry::Register(uint64_t owner,
                                      const TensorRequest& request, int fd) {
  absl::Status s = CheckTensorName("name", request.name);
  if (!s.ok()) return s;
  if (!request.dtype.has_value()) return InvalidField("dtype", "required");
  absl::StatusOr<int64_t> bytes = ShapeBytes(request.shape, *request.dtype);
  if (!bytes.ok()) return bytes.status();
  if (*bytes != request.length) {
    return InvalidField(
        "length",
        absl::StrCat(request.length, " is not the ", *bytes,
                     " bytes of shape [", absl::StrJoin(request.shape, ", "),
                     "] of ", DTypeName(*request.dtype)));
  }
  absl::StatusOr<std::shared_ptr<SharedMemory>> memory = SharedMemory::Map(
      fd, request.offset, request.length, owner == kAgentOwner);
  if (!memory.ok()) return memory.status();
  absl::MutexLock lock(&mu_);
  auto old = entries_.find(request.name);
  if (old != entries_.end() && SameEntry(old->second, request, **memory)) {
    old->second.owner = owner;
    old->second.layout = request.layout;
    return absl::OkStatus();
  }
  s = CheckBounds(request);
  if (!s.ok()) return s;
  if (old != entries_.end()) bytes_ -= old->second.memory->bytes();
  bytes_ += request.length;
  entries_[request.name] =
      TensorEntry{request.name,       *request.dtype, request.shape,
                  *std::move(memory), owner,          request.layout};
  return absl::OkStatus();
}

absl::Status TensorRegistry::Allocate(const TensorRequest& request) {
  const int fd =
      memfd_create("reshard-destination", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(
        "allocate ", request.name, ": memfd_create: ", strerror(errno)));
  }
  absl::Status s;
  if (ftruncate(fd, std::max<int64_t>(request.length, 1)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
    s = absl::InternalError(absl::StrCat(
        "allocate ", request.name, ": sizing the memfd: ", strerror(errno)));
  }
  if (s.ok()) s = Register(kAgentOwner, request, fd);
  close(fd);  // the mapping keeps its own duplicate
  return s;
}

absl::Status TensorRegistry::Unregister(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::NotFoundError(
        absl::StrCat("unregister: no tensor \"", name, "\" is registered"));
  }
  bytes_ -= it->second.memory->bytes();
  entries_.erase(it);
  return absl::OkStatus();
}

void TensorRegistry::DropOwner(uint64_t owner) {
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.owner != owner) {
      ++it;
      continue;
    }
    bytes_ -= it->second.memory->bytes();
    it = entries_.erase(it);
  }
}

std::optional<TensorEntry> TensorRegistry::Find(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::vector<TensorEntry> TensorRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<TensorEntry> out;
  for (const auto& [name, entry] : entries_) out.push_back(entry);
  return out;
}

int64_t TensorRegistry::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace reshard::agent
