// One rank of a job (docs/DESIGN.md §6.4, reshard-agent's logic without its
// main()): it joins through the Coordinator, holds one dispatch stream, and
// for each run converts the mesh and plan, checks the plan's digest before
// any communicator opens, runs the plan on this rank (executor::RunJudged:
// the data rule's source or its registered tensors, timed runs, the checks) and
// reports. Communicators meet in the Coordinator's rendezvous store; they are
// kept while runs name the same comm_prefix and timeout and torn down after a
// failed or cancelled run. Every RPC but the dispatch stream has a
// deadline; the stream ends when the Coordinator goes away or on Stop().
// The stream is read on its own thread (DispatchInbox), so a cancel, or
// the stream's end, stops the run in flight at its next execution; runs
// execute one at a time on the thread that calls Serve().
#ifndef RESHARD_AGENT_AGENT_H_
#define RESHARD_AGENT_AGENT_H_

#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/agent_config.h"
#include "agent/agent_metrics.h"
#include "agent/communicator_cache.h"
#include "agent/coordinator_store.h"
#include "agent/dispatch_inbox.h"
#include "agent/kept_schedules.h"
#include "agent/run_work.h"
#include "agent/tensor_binding.h"
#include "agent/tensor_registry.h"
#include "executor/judge/harness.h"
#include "executor/memory/memory_space.h"
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
  // With --backend nccl, `space` is the agent's device memory (it must
  // outlive the Agent); every run's data lives there.
  // `tensors` (may be null: none) holds what this rank's processes
  // registered at the local endpoint; with it (and host memory) the agent
  // advertises kRegisteredTensors and runs on them. It must outlive the
  // Agent.
  Agent(AgentConfig config, std::shared_ptr<grpc::Channel> channel,
        AgentMetrics* metrics = nullptr, executor::MemorySpace* space = nullptr,
        TensorRegistry* tensors = nullptr);

  // Joins the job (creating it if this rank is the first); returns the
  // job's generation after the join. The Coordinator's refusal as it gave
  // it (FAILED_PRECONDITION for another protocol version, world size or
  // backend), or DEADLINE_EXCEEDED / UNAVAILABLE when it cannot be reached.
  absl::StatusOr<int64_t> Join();
  // The same, with every attempt bounded by `deadline`.
  absl::StatusOr<int64_t> Join(std::chrono::system_clock::time_point deadline);

  // After the dispatch stream dropped: joins again (the same incarnation:
  // this process keeps no communicator of the old stream) until it works
  // or `within` has passed, waiting Backoff's steps between refusals.
  // The job's generation; the Coordinator's refusal when it is not worth
  // retrying (FAILED_PRECONDITION, INVALID_ARGUMENT); UNAVAILABLE naming
  // the last failure past `within`; CANCELLED after Stop().
  absl::StatusOr<int64_t> Rejoin(absl::Duration within);

  // Receives and runs work until a shutdown or Stop() (then leaves the job
  // and returns OK) or until the dispatch stream ends otherwise: UNAVAILABLE
  // naming how it ended (the run in flight, if any, was stopped first).
  absl::Status Serve();

  // Asks Serve() to return once the current run (if any) has finished and
  // been reported. Thread-safe; may come before Serve().
  void Stop();

  uint64_t incarnation() const { return id_.incarnation(); }
  // Whether Stop() was called.
  bool stopping();

 private:
  enum class Ending { kShutdown, kStopped, kDropped };

  // The reader thread: every item of the stream into `inbox`, then Close.
  static void ReadStream(grpc::ClientReader<v1::Work>& stream,
                         DispatchInbox& inbox);
  // The run thread: handles the inbox's items until the stream ends.
  Ending HandleInbox(DispatchInbox& inbox);
  // Returns true for a shutdown.
  bool HandleWork(const v1::Work& work, DispatchInbox& inbox);
  void HandleRun(const v1::RunWork& run, DispatchInbox& inbox);
  // The run on `bound`'s tensors (or generated data when it holds null),
  // after the runner's pre-flight step (executor/run/preflight.h).
  // `keep_communicators`: set when a refusal in pre-flight left them
  // usable.
  executor::RankReport Execute(
      const v1::RunWork& run, const RunSetup& setup, DispatchInbox& inbox,
      const absl::StatusOr<std::shared_ptr<BoundRun>>& bound,
      bool& keep_communicators);
  // A cross-mesh run's part on this rank: generated data, or its
  // registered tensors (BindCross) after the pre-flight step; a kept
  // schedule's runner reused while its communicators are open.
  executor::RankReport ExecuteCross(
      const v1::RunWork& run, const RunSetup& setup,
      const executor::RunOptions& options,
      const absl::StatusOr<std::shared_ptr<BoundRun>>& bound,
      bool& keep_communicators, executor::CommunicatorProvider& provider);
  // Frees the runners and bindings other kept schedules hold when with
  // this cross-mesh run's peak they would exceed --max_run_bytes.
  void FitKeptSchedules(const v1::RunWork& run, const RunSetup& setup);
  // A run on registered tensors: its tensors bound on this rank (a kept
  // schedule's binding again while BoundRun::StillBound).
  absl::StatusOr<std::shared_ptr<BoundRun>> BindTensors(const v1::RunWork& run,
                                                        const RunSetup& setup);
  // The Coordinator's commit of run `run_id`: the staged results written,
  // and the answer sent.
  void HandleCommit(const std::string& run_id);
  // Who this agent is and what it runs (its capabilities).
  v1::JoinRequest JoinRequestOf() const;
  // One Join call: a short first attempt, then (saying so) one that waits
  // for the Coordinator up to `deadline`.
  grpc::Status JoinOnce(const v1::JoinRequest& request,
                        std::chrono::system_clock::time_point deadline,
                        v1::JoinResponse& response);
  // One Join attempt on `context`, which Stop() cancels; CANCELLED without
  // a call once Stop() came.
  grpc::Status JoinCall(grpc::ClientContext& context,
                        const v1::JoinRequest& request,
                        v1::JoinResponse& response);
  // Sleeps `wait` unless Stop() comes first; true when it did.
  bool SleepUnlessStopped(absl::Duration wait);
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
  executor::MemorySpace* const space_;  // null: host memory (Gloo)
  TensorRegistry* const tensors_;       // null: no local endpoint
  // The last run on registered tensors while its results wait for the
  // commit (run thread only); dropped by any other work.
  std::string staged_run_;
  std::shared_ptr<BoundRun> staged_;
  // The prepared schedules of the job (run thread only).
  KeptSchedules schedules_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // The dispatch call while it is open (Stop() cancels it between runs).
  grpc::ClientContext* dispatch_ ABSL_GUARDED_BY(mu_) = nullptr;
  // A Join call in flight (Stop() cancels it: a Join may wait for the
  // Coordinator up to --timeout_seconds).
  grpc::ClientContext* joining_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_AGENT_H_
