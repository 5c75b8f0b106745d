// The one place a backend becomes communicators and memory (docs/DESIGN.md
// §6.1): the agent, reshardctl exec, the benchmarks and the tests ask here
// for a rank's CommunicatorProvider and MemorySpace by the Backend enum
// (run_values/backend.h). NCCL is reached through nccl/nccl_backend.h only.
#ifndef RESHARD_EXECUTOR_BACKENDS_PROVIDER_FACTORY_H_
#define RESHARD_EXECUTOR_BACKENDS_PROVIDER_FACTORY_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "executor/memory/memory_space.h"
#include "executor/run/communicator_provider.h"
#include "executor/stores/key_value_store.h"
#include "run_values/backend.h"

namespace reshard::executor {

// Where one rank of a run meets its peers.
struct ProviderSetup {
  std::shared_ptr<KeyValueStore> store;  // shared by every rank of the run
  std::string prefix;                    // keeps runs apart in the store
  int64_t rank = 0;                      // global
  int64_t world_size = 1;
  std::chrono::milliseconds timeout{30000};  // every call and store wait
  std::string hostname = "127.0.0.1";        // Gloo: the interface ranks bind
  int device = -1;                           // NCCL: the GPU (ChooseDevice's)
};

// This rank's communicators on `backend`, created as they are first asked
// for.
std::unique_ptr<CommunicatorProvider> MakeProvider(Backend backend,
                                                   ProviderSetup setup);

// Where `backend`'s data lives: null for host memory (Gloo), GPU
// `device`'s memory for NCCL (the backend's error when it cannot be had).
absl::StatusOr<std::unique_ptr<MemorySpace>> MakeSpace(Backend backend,
                                                       int device);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_PROVIDER_FACTORY_H_
