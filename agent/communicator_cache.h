// The agent's communicators between runs. Opening them is collective and
// costs a rendezvous per group, so they are kept while runs name the same
// place to meet (RunWork.comm_prefix: the run that opened them) and the
// same timeout, and torn down after a failed or cancelled run, whose peers
// may have left their side of a connection in any state. Thread-compatible.
#ifndef RESHARD_AGENT_COMMUNICATOR_CACHE_H_
#define RESHARD_AGENT_COMMUNICATOR_CACHE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "executor/communicator_provider.h"

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

  // Whether the last For() returned the provider it already had.
  bool reused() const { return reused_; }
  // How many providers For() has made.
  int64_t opened() const { return opened_; }

 private:
  Factory factory_;
  std::optional<CommKey> key_;
  std::unique_ptr<executor::CommunicatorProvider> provider_;
  bool reused_ = false;
  int64_t opened_ = 0;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_COMMUNICATOR_CACHE_H_
