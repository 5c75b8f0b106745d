#include "executor/backends/provider_factory.h"

#include <utility>

#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/backends/nccl/nccl_backend.h"

namespace reshard::executor {

std::unique_ptr<CommunicatorProvider> MakeProvider(Backend backend,
                                                   ProviderSetup setup) {
  switch (backend) {
    case Backend::kNccl:
      return OpenNcclCommunicators(
          std::move(setup.store), std::move(setup.prefix), setup.rank,
          setup.world_size, setup.timeout, setup.device);
    case Backend::kGloo:
      break;
  }
  GlooOptions options;
  options.hostname = std::move(setup.hostname);
  options.timeout = setup.timeout;
  return std::make_unique<GlooCommunicatorProvider>(
      std::move(setup.store), std::move(setup.prefix), setup.rank, options);
}

absl::StatusOr<std::unique_ptr<MemorySpace>> MakeSpace(Backend backend,
                                                       int device) {
  switch (backend) {
    case Backend::kNccl:
      return MakeDeviceSpace(device);
    case Backend::kGloo:
      break;
  }
  return nullptr;
}

}  // namespace reshard::executor
