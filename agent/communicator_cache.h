// The agent's communicators between runs. Opening them is collective and
// costs a rendezvous per group, so they are kept while runs name the same
// place to meet (RunWork.comm_prefix: the run that opened them) and the
// same timeout, and torn down after a failed or cancelled run, whose peers
// may have left their side of a connection in any state. Used by the run
// thread; Cancel is the one call another thread may make.
#ifndef RESHARD_AGENT_COMMUNICATOR_CACHE_H_
#define RESHARD_AGENT_COMMUNICATOR_CACHE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "executor/run/communicator_provider.h"

namespace reshard::agent {

// Where a run's communicators meet and how long each call may take: two
// runs with the same key can share communicators.
struct CommKey {
  std::string prefix;
  std::chrono::milliseconds timeout{0};
  bool operator==(const CommKey& other) const = default;
};

class CommunicatorCache {
 public:
  using Factory = std::function<std::unique_ptr<executor::CommunicatorProvider>(
      const CommKey&)>;
  explicit CommunicatorCache(Factory factory);

  // The provider for a run with `key`: the open one when it was opened for
  // the same key, else a new one from the factory (the old one is destroyed
  // first, closing its connections before new ones open).
  executor::CommunicatorProvider& For(const CommKey& key);

  // Tears the open provider down (after a failed or cancelled run): the
  // next For() opens a fresh one whatever its key.
  void Drop();

  // The run using the open provider was cancelled: its calls in flight end
  // now where the backend can end them (CommunicatorProvider::Cancel).
  // Thread-safe; the run thread drops the provider afterwards.
  void Cancel(absl::string_view why);

  // Whether the last For() returned the provider it already had.
  bool reused() const { return reused_; }
  // How many providers For() has made.
  int64_t opened() const { return opened_; }

 private:
  Factory factory_;
  std::optional<CommKey> key_;
  absl::Mutex mu_;  // provider_'s replacement against Cancel
  std::unique_ptr<executor::CommunicatorProvider> provider_
      ABSL_GUARDED_BY(mu_);
  bool reused_ = false;
  int64_t opened_ = 0;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_COMMUNICATOR_CACHE_H_
