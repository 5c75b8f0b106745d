// The Gloo backend (docs/DESIGN.md §6.1): TCP communicators on host memory, one
// Gloo context per group, created through the run's KeyValueStore under the
// caller's run prefix and the group's ranks. Gloo reports failures by
// throwing (some from its own I/O thread, rethrown on the next call): every
// call here catches them and returns a status naming the op, the group and
// the peer where Gloo's message names one. SIGPIPE is ignored once a
// provider exists, so a dead peer is an error, not a killed process.
#ifndef RESHARD_EXECUTOR_BACKENDS_GLOO_GLOO_COMMUNICATOR_H_
#define RESHARD_EXECUTOR_BACKENDS_GLOO_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/run/communicator_provider.h"
#include "executor/stores/key_value_store.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace reshard::executor {

// How a Gloo reduce_scatter runs: this Gloo has no reduce_scatter function
// (docs/notes/2026-11-23-executor-on-gloo.md, "(c) reduce_scatter options",
// compares them).
enum class GlooReduceScatter {
  kRing,               // ring over the group: each block crosses n-1 links
  kAllReduceAndSlice,  // all_reduce the whole buffer, keep one block
};

struct GlooOptions {
  std::string hostname = "127.0.0.1";        // the interface ranks bind
  std::chrono::milliseconds timeout{30000};  // every call and store wait
  GlooReduceScatter reduce_scatter = GlooReduceScatter::kRing;
};

// Creates and caches this rank's Gloo communicators. `store` is shared by
// every rank of the run (executor/stores/key_value_store.h); `prefix` keeps
// runs (and generations) apart. Thread-compatible: one thread at a time.
class GlooCommunicatorProvider : public CommunicatorProvider {
 public:
  GlooCommunicatorProvider(std::shared_ptr<KeyValueStore> store,
                           std::string prefix, int64_t rank,
                           GlooOptions options);
  ~GlooCommunicatorProvider() override;

  absl::StatusOr<Communicator*> Get(const std::vector<int64_t>& ranks,
                                    absl::string_view name) override;

 private:
  absl::Status EnsureDevice();
  absl::StatusOr<std::shared_ptr<gloo::Context>> Connect(
      const std::vector<int64_t>& ranks, int index, const std::string& label);

  std::shared_ptr<KeyValueStore> store_;
  std::string prefix_;
  int64_t rank_;
  GlooOptions options_;
  std::shared_ptr<gloo::transport::Device> device_;
  // One Gloo context per ordered rank tuple, shared by every name the
  // tuple is asked for (the world and a dim of a 1-D mesh are the same
  // ranks); one communicator per (tuple, name), so errors name the group
  // the caller asked for.
  std::map<std::vector<int64_t>, std::shared_ptr<gloo::Context>> contexts_;
  std::map<std::pair<std::vector<int64_t>, std::string>,
           std::unique_ptr<Communicator>>
      groups_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_GLOO_GLOO_COMMUNICATOR_H_
