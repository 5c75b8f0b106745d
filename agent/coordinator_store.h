// The rendezvous KeyValueStore of a job's agents, over the Coordinator's
// StoreSet/StoreGet/StoreDelete RPCs (docs/DESIGN.md §5): agents on different
// hosts meet there instead of in a shared directory. Every call names this
// agent and the current run, which the Coordinator uses to namespace the keys
// and to delete them when the run ends. Gets block on the server, bounded by
// their timeout (and a gRPC deadline kWaitMargin later), so a missing peer
// is an error, never a hang. Errors name the keys, the run and the
// Coordinator's error; a timeout is DEADLINE_EXCEEDED. Thread-safe.
#ifndef RESHARD_AGENT_COORDINATOR_STORE_H_
#define RESHARD_AGENT_COORDINATOR_STORE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "executor/stores/key_value_store.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::agent {

class CoordinatorStore : public executor::KeyValueStore {
 public:
  // How much later than a get's own timeout its RPC's deadline falls: the
  // server answers DEADLINE_EXCEEDED (naming the missing keys) first.
  static constexpr std::chrono::milliseconds kWaitMargin{5000};

  // `rpc_timeout` bounds StoreSet and StoreDelete.
  CoordinatorStore(std::shared_ptr<v1::Coordinator::StubInterface> stub,
                   v1::AgentId agent, std::chrono::milliseconds rpc_timeout);

  // The run whose keys later calls set and read (between runs).
  void SetRun(const std::string& run_id);

  // StoreSet in the current run, bounded by `rpc_timeout`.
  absl::Status Set(const std::string& key, const std::string& value) override;
  // One StoreGet that waits on the Coordinator; the RPC's deadline is
  // `timeout` plus a margin for the trip.
  absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds timeout) override;
  // StoreDelete in the current run, bounded by `rpc_timeout`.
  absl::Status DeleteByPrefix(const std::string& prefix) override;

 private:
  std::string Run() const;
  // A request naming this agent and the current run.
  template <typename Request>
  Request Stamped() const;

  std::shared_ptr<v1::Coordinator::StubInterface> stub_;
  const v1::AgentId agent_;
  const std::chrono::milliseconds rpc_timeout_;
  mutable absl::Mutex mu_;
  std::string run_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_COORDINATOR_STORE_H_
