// A fresh temporary directory for a local run's FileStore rendezvous
// (docs/DESIGN.md §5: a local store for `reshardctl exec --local`), removed
// with everything in it when the owner goes away. A FileStore needs a directory
// no earlier run has written to: stale keys break rendezvous.
#ifndef RESHARD_EXECUTOR_STORES_RENDEZVOUS_DIR_H_
#define RESHARD_EXECUTOR_STORES_RENDEZVOUS_DIR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace reshard::executor {

class RendezvousDir {
 public:
  // Creates /tmp/<prefix>-XXXXXX. INTERNAL when it cannot.
  static absl::StatusOr<std::unique_ptr<RendezvousDir>> Create(
      const std::string& prefix);
  ~RendezvousDir();
  RendezvousDir(const RendezvousDir&) = delete;
  RendezvousDir& operator=(const RendezvousDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit RendezvousDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_STORES_RENDEZVOUS_DIR_H_
