// A Gloo rendezvous store over the Coordinator's StoreSet/StoreGet RPCs
// (DESIGN §5): agents on different hosts meet there instead of in a shared
// directory. Every call names this agent and the current run, which the
// Coordinator uses to namespace the keys and to delete them when the run
// ends. Waits block on the server, bounded by the wait's timeout (and a
// gRPC deadline a little later), so a missing peer is an error, never a
// hang. Gloo expects failures as exceptions: every failure throws
// gloo::IoException whose message names the keys, the run and the
// Coordinator's error; timeouts say "timed out", which the Gloo backend
// reports as DEADLINE_EXCEEDED. Thread-safe.
#ifndef RESHARD_EXECUTOR_AGENT_COORDINATOR_STORE_H_
#define RESHARD_EXECUTOR_AGENT_COORDINATOR_STORE_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "gloo/rendezvous/store.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::agent {

class CoordinatorStore : public gloo::rendezvous::Store {
 public:
  // How much later than a wait's own timeout its RPC's deadline falls: the
  // server answers DEADLINE_EXCEEDED (naming the missing keys) first.
  static constexpr std::chrono::milliseconds kWaitMargin{5000};

  // `rpc_timeout` bounds StoreSet; waits without a timeout of their own wait
  // `default_wait` (Gloo's 30 s).
  CoordinatorStore(std::shared_ptr<v1::Coordinator::StubInterface> stub,
                   v1::AgentId agent, std::chrono::milliseconds rpc_timeout,
                   std::chrono::milliseconds default_wait = kDefaultTimeout);

  // The run whose keys later calls set and read (between runs).
  void SetRun(const std::string& run_id);

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits up to the default wait for `key`.
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  // Reads `keys`, waiting up to `timeout` on the server; throws on failure.
  std::vector<std::string> Fetch(const std::vector<std::string>& keys,
                                 std::chrono::milliseconds timeout);
  std::string Run() const;

  std::shared_ptr<v1::Coordinator::StubInterface> stub_;
  const v1::AgentId agent_;
  const std::chrono::milliseconds rpc_timeout_;
  const std::chrono::milliseconds default_wait_;
  mutable absl::Mutex mu_;
  std::string run_id_ ABSL_GUARDED_BY(mu_);
  // Values a wait() fetched, handed to the get() that follows it (Gloo
  // waits for a key and then reads it: one RPC instead of two). Cleared
  // between runs.
  std::map<std::string, std::vector<char>> fetched_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::agent

#endif  // RESHARD_EXECUTOR_AGENT_COORDINATOR_STORE_H_
