#include "agent/communicator_cache.h"

#include <utility>

namespace reshard::agent {

CommunicatorCache::CommunicatorCache(Factory factory)
    : factory_(std::move(factory)) {}

executor::CommunicatorProvider& CommunicatorCache::For(const CommKey& key) {
  absl::MutexLock lock(&mu_);
  reused_ = provider_ != nullptr && key_ == key;
  if (!reused_) {
    // The old provider's connections close before new ones open.
    provider_.reset();
    provider_ = factory_(key);
    key_ = key;
    ++opened_;
  }
  return *provider_;
}

void CommunicatorCache::Drop() {
  absl::MutexLock lock(&mu_);
  provider_.reset();
  key_.reset();
}

void CommunicatorCache::Cancel(absl::string_view why) {
  absl::MutexLock lock(&mu_);
  if (provider_ != nullptr) provider_->Cancel(why);
}

}  // namespace reshard::agent
