#include "agent/communicator_cache.h"

#include <utility>

namespace reshard::agent {

CommunicatorCache::CommunicatorCache(Factory factory)
    : factory_(std::move(factory)) {}

executor::CommunicatorProvider& CommunicatorCache::For(const CommKey& key) {
  reused_ = provider_ != nullptr && key_ == key;
  if (!reused_) {
    Drop();
    provider_ = factory_(key);
    key_ = key;
    ++opened_;
  }
  return *provider_;
}

void CommunicatorCache::Drop() {
  provider_.reset();
  key_.reset();
}

}  // namespace reshard::agent
