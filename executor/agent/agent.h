// One rank of a job (DESIGN §6.4, reshard-agent's logic without its
// main()): it joins through the Coordinator, holds one dispatch stream, and
// for each run converts the mesh and plan, checks the plan's digest before
// any communicator opens, runs the plan on this rank (executor::RunRank:
// the data rule's source, timed runs, validation, checksum) and reports.
// Communicators meet in the Coordinator's rendezvous store; they are kept
// while runs name the same comm_prefix and timeout and torn down after a
// failed or cancelled run. Every RPC but the dispatch stream has a
// deadline; the stream ends when the Coordinator goes away or on Stop().
// Runs execute one at a time on the thread that calls Serve().
#ifndef RESHARD_EXECUTOR_AGENT_AGENT_H_
#define RESHARD_EXECUTOR_AGENT_AGENT_H_

#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "executor/agent/agent_config.h"
#include "executor/agent/agent_metrics.h"
#include "executor/agent/communicator_cache.h"
#include "executor/agent/coordinator_store.h"
#include "executor/agent/run_work.h"
#include "executor/rank_run.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::agent {

class Agent {
 public:
  // `channel` reaches the Coordinator. The incarnation is fresh (random)
  // for every Agent, so a restarted process is never taken for its
  // previous life.
  // `metrics` (may be null: none) records each run; it must outlive the
  // Agent.
  Agent(AgentConfig config, std::shared_ptr<grpc::Channel> channel,
        AgentMetrics* metrics = nullptr);

  // Joins the job (creating it if this rank is the first); returns the
  // job's generation after the join. The Coordinator's refusal as it gave
  // it (FAILED_PRECONDITION for another protocol version, world size or
  // backend), or DEADLINE_EXCEEDED / UNAVAILABLE when it cannot be reached.
  absl::StatusOr<int64_t> Join();

  // Receives and runs work until a shutdown or Stop() (then leaves the job
  // and returns OK) or until the dispatch stream ends otherwise: UNAVAILABLE
  // naming how it ended (reconnecting is issue 15's).
  absl::Status Serve();

  // Asks Serve() to return once the current run (if any) has finished and
  // been reported. Thread-safe; may come before Serve().
  void Stop();

  uint64_t incarnation() const { return id_.incarnation(); }

 private:
  enum class Ending { kShutdown, kStopped, kDropped };

  Ending ReadWork(grpc::ClientReader<v1::Work>& stream);
  // Returns true for a shutdown.
  bool HandleWork(const v1::Work& work);
  void HandleRun(const v1::RunWork& run);
  executor::RankReport Execute(const v1::RunWork& run, const RunSetup& setup);
  absl::Status SendReport(const v1::RunWork& run,
                          const executor::RankReport& report);
  void Leave();
  std::unique_ptr<executor::CommunicatorProvider> OpenCommunicators(
      const CommKey& key);
  // Marks a run as started unless Stop() came; false then.
  bool BeginWork();
  // Ends a run; false when Stop() came meanwhile.
  bool EndWork();
  std::chrono::milliseconds RpcTimeout() const;
  std::chrono::system_clock::time_point Deadline() const;

  const AgentConfig config_;
  v1::AgentId id_;
  std::shared_ptr<v1::Coordinator::Stub> stub_;
  std::shared_ptr<CoordinatorStore> store_;
  CommunicatorCache comms_;
  AgentMetrics* const metrics_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // The dispatch call while it is open (Stop() cancels it between runs).
  grpc::ClientContext* dispatch_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace reshard::agent

#endif  // RESHARD_EXECUTOR_AGENT_AGENT_H_
