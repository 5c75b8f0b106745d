// reshard::Client is the C++ client of the Reshard service: the Planner
// and the Coordinator's caller side (running plans on jobs of agents).
// Every call carries a deadline and retries UNAVAILABLE with exponential
// backoff (a target listing several servers is load-balanced round-robin,
// so a retry reaches a survivor), except RunJob, which runs things and is
// never retried. Plans on meshes registered through this client
// transparently re-register when a replica answers NOT_FOUND. Job calls go
// to the job's own replica (planner/job_replica.h), the one its agents
// use. Results are core types (planner/, executor/), converted in one
// place.
//
// A Client is safe for concurrent use from multiple threads. The installed
// public header: no gRPC or generated type appears in it (the channel and
// stubs live in Client::Impl, client/client.cc).
#ifndef RESHARD_CLIENT_H_
#define RESHARD_CLIENT_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls_config.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/cross/cross_plan.h"
#include "planner/search/planner.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"
#include "run_values/run_summary.h"

namespace reshard {

struct ClientOptions {
  // "host:port", or several comma-separated ("127.0.0.1:1,127.0.0.1:2"),
  // balanced round-robin.
  std::string target = "127.0.0.1:50051";
  absl::Duration timeout = absl::Seconds(10);  // per attempt
  // Bounds each call as a whole, its retries and backoff included: no
  // attempt runs past it and no retry starts after it (a call then fails
  // with its last attempt's status). Infinite: `timeout` per attempt only.
  // RunJob is bounded by JobRunOptions::deadline instead.
  absl::Duration deadline = absl::InfiniteDuration();
  int max_attempts = 5;
  absl::Duration initial_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Milliseconds(500);
  // Sent with every call (gRPC metadata; empty: none). The planner's
  // admin token (reshard-planner --admin_token_file): DeleteMesh needs it,
  // and with it ListJobs and GetJob show every job.
  std::string admin_token;
  // The token of the jobs this client runs, watches and cancels: every
  // job call needs it for a job created with one (the agents'
  // --job_token_file).
  std::string job_token;
  // TLS to the service (common/tls_config.h; common/tls_files.h reads it
  // from PEM files); disabled: plaintext.
  TlsConfig tls;
};

// One resolved communicator group of a rank (ResolveGroups).
struct ResolvedGroup {
  std::string name;
  Group mesh_dims;
  std::vector<int64_t> ranks;
  int64_t index = 0;
};

// What a job run asks of the agents (RunJobRequest's knobs).
struct JobRunOptions {
  int iters = 10;               // timed runs
  int warmup = 2;               // untimed runs before them
  double timeout_seconds = 30;  // bounds every collective
  // Bounds the whole call: waiting for the job's agents, planning,
  // dispatch and every report.
  absl::Duration deadline = absl::Minutes(5);
  // How long to wait for a rank that was connected and is gone before the
  // call fails (UNAVAILABLE naming it); 0: the server's
  // --agent_wait_seconds.
  double agent_wait_seconds = 0;
  // Move the job's own tensors (docs/DESIGN.md §6.6): per item (a plan:
  // one), the names its ranks' clients registered at their agents, read
  // from `source` and written to `into`. Set: one execution, no warm-up
  // (`iters` and `warmup` are ignored), judged by the conservation
  // checksum, staged and committed unless `no_staging`.
  struct Tensors {
    std::string source;
    std::string into;
  };
  std::vector<Tensors> tensors;
  bool no_staging = false;
  // A rank where an `into` is not registered allocates it (clients fetch
  // it from the agent, docs/DESIGN.md §6.6) instead of failing NOT_FOUND.
  bool allocate = false;
};

// One run on a job's agents (a plan is a batch of one), as the Coordinator
// aggregated it.
struct JobRun {
  std::string run_id;
  Mesh mesh;
  executor::BatchWork
      work;  // what ran: the plan the replica made, or the batch
  int iters = 0;
  int warmup = 0;
  std::string backend;  // the job's: gloo or nccl
  executor::RunSummary summary;
  std::vector<executor::RankReport> ranks;  // by rank
  // Stopped by CancelJob with `stop`: the summary's rows are the
  // executions every rank finished (`executions_completed`, warmup
  // included), and nothing was validated.
  bool interrupted = false;
  int executions_completed = 0;
  // A run on registered tensors: every rank wrote its destinations.
  bool committed = false;
  // A cross-mesh run (RunCrossJob): its plan on its two meshes; `mesh` is
  // then one dim over the job's ranks and `work` empty.
  struct Cross {
    Mesh src_mesh;
    Mesh dst_mesh;
    CrossMeshPlan plan;
  };
  std::optional<Cross> cross;
  // A run of a prepared schedule (RunSchedule): its id, and whether the
  // agents were sent its plan (the first run, or one after a failure).
  std::string schedule_id;
  bool plan_sent = false;
  // A cross-mesh batch's run (RunCrossBatchJob, or a batch's schedule):
  // its tensors, named in the summary's; 0 otherwise.
  int cross_batch_tensors = 0;
};

// A cross-mesh move planned once for a job (PrepareCrossMesh,
// docs/DESIGN.md §9 "A static schedule"): RunSchedule names `id`.
struct CrossSchedule {
  std::string id;
  int64_t generation = 0;  // an agent joining or leaving ends it
  int schedules = 0;       // the job's now, this one included
  // The plan on its meshes (PrepareCrossMesh); a batch's schedule
  // (PrepareCrossBatch) holds its first tensor's meshes and no plan.
  Mesh src_mesh;
  Mesh dst_mesh;
  CrossMeshPlan plan;
  int batch_tensors = 0;  // a batch's schedule: its tensors; 0 otherwise
};

// One agent of a job, as the Coordinator shows it (not its incarnation:
// the Coordinator keeps who holds a rank to itself).
struct JobAgentInfo {
  int64_t rank = 0;
  std::string version;
  std::string host;
  bool connected = false;  // its dispatch stream is open
};

// A job's state on its replica.
struct JobInfo {
  std::string name;
  int64_t world_size = 0;
  std::string backend;  // gloo or nccl
  int64_t generation = 0;
  std::string state;  // joining, ready, running
  // By rank. ListJobs may hold only the first of a job too large for one
  // reply; GetJob holds them all.
  std::vector<JobAgentInfo> agents;
  int64_t agents_joined = 0;     // every joined agent
  int64_t agents_connected = 0;  // of those, the connected ones
  std::string current_run;       // "" when idle
  // The current run's executions every rank finished (warmup included) of
  // its total, and the seconds since its dispatch; zeros when idle.
  int current_run_executions_done = 0;
  int current_run_executions_total = 0;
  double current_run_seconds = 0;
  // RunJob calls in the job: waiting for it to be ready or free, or running.
  int64_t run_calls = 0;
  int64_t runs_total = 0;
  int64_t runs_failed = 0;
  int64_t store_keys = 0;
  int64_t store_bytes = 0;
  struct Run {
    std::string run_id;
    std::string result;  // validated, not_validated or a status code name
    std::string error;
    double seconds = 0;
  };
  std::vector<Run> recent_runs;  // the last 16, oldest first
  // The prepared schedules of this generation (PrepareCrossMesh), by id.
  struct Schedule {
    std::string id;
    int64_t tensors = 0;     // 1 for one plan, else the batch's
    bool delivered = false;  // every agent holds its plans
  };
  std::vector<Schedule> schedules;
};

class Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);

  // The mesh's content-addressed id (the same on every replica).
  absl::StatusOr<std::string> RegisterMesh(const Mesh& mesh);
  absl::StatusOr<Mesh> GetMesh(const std::string& mesh_id);
  absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> ListMeshes();
  absl::Status DeleteMesh(const std::string& mesh_id);

  // Plans on a mesh registered through this client (re-registered when a
  // replica does not know it).
  absl::StatusOr<Plan> PlanRegistered(const std::string& mesh_id,
                                      const PlanRequest& request);
  // Plans on an inline mesh: any replica can answer.
  absl::StatusOr<Plan> PlanInline(const Mesh& mesh, const PlanRequest& request);
  // Plans every request (one options set) on an inline mesh, in order;
  // the first bad item fails the call (all or nothing).
  absl::StatusOr<std::vector<Plan>> PlanBatch(
      const Mesh& mesh, const std::vector<PlanRequest>& requests);
  // Plans a batch (docs/DESIGN.md §8) on an inline mesh: every item's plan or
  // its own error (`items[i].field: ...`; under options.all_or_nothing the
  // first fails the call), and the bucketed schedule of the planned items.
  // The requests share requests[0]'s options.
  absl::StatusOr<BatchPlan> PlanBatchBucketed(
      const Mesh& mesh, const std::vector<PlanRequest>& requests,
      const BatchOptions& options);
  // Plans a cross-mesh request (docs/DESIGN.md §9) on two inline meshes;
  // transfers past the reply's list are expanded again here.
  absl::StatusOr<CrossMeshPlan> PlanCrossMesh(const Mesh& src_mesh,
                                              const Mesh& dst_mesh,
                                              const CrossMeshRequest& request);

  absl::StatusOr<std::vector<ResolvedGroup>> ResolveGroups(
      const std::string& mesh_id, int64_t rank);

  // OK when the server reports SERVING.
  absl::Status Health();

  // Runs a plan on every agent of `job` and returns the aggregated run.
  // The job's replica plans `request` on `mesh` (its plan cache shared);
  // the second form runs `plan` as given. Not retried; bounded by
  // options.deadline. NOT_FOUND for an unknown job, DEADLINE_EXCEEDED when
  // the agents did not join or report in time, the failing ranks' error
  // for a run that failed; a run that ran but did not validate is OK with
  // summary.validated false.
  absl::StatusOr<JobRun> RunJob(const std::string& job, const Mesh& mesh,
                                const PlanRequest& request,
                                const JobRunOptions& options);
  absl::StatusOr<JobRun> RunJob(const std::string& job, const Mesh& mesh,
                                const Plan& plan, const JobRunOptions& options);
  // Runs a planned batch whole on every agent of `job`: `work`'s plans as
  // its schedule says (bucketed, or tensor by tensor); its names label the
  // summary's tensors. Errors as RunJob's.
  absl::StatusOr<JobRun> RunJob(const std::string& job, const Mesh& mesh,
                                const executor::BatchWork& work,
                                const JobRunOptions& options);
  // Runs a cross-mesh request (docs/DESIGN.md §9) on every agent of
  // `job`, planned by the job's replica, on generated data: the union of
  // both meshes' rank maps must be the job's ranks 0..N-1 (each agent
  // advertising "cross_mesh"). The run's `cross` holds the plan, its
  // summary's rows are pre_steps, transfers and post_steps, and its one
  // tensor is judged on the destination ranks. Errors as RunJob's.
  absl::StatusOr<JobRun> RunCrossJob(const std::string& job,
                                     const Mesh& src_mesh, const Mesh& dst_mesh,
                                     const CrossMeshRequest& request,
                                     const JobRunOptions& options);
  // One tensor of a cross-mesh batch as planned (MakeCrossMeshBatch's
  // plans): its name, its meshes and its plan.
  struct CrossBatchTensor {
    std::string name;
    Mesh src_mesh;
    Mesh dst_mesh;
    CrossMeshPlan plan;
  };
  // Runs a cross-mesh batch (docs/DESIGN.md §9) on every agent of `job`,
  // on generated data or, with options.tensors (one binding per tensor, in
  // order), on its registered tensors, judged by conservation and
  // committed as RunJob's: one destination mesh for all tensors, the union of
  // every rank map the job's ranks 0..N-1 (each agent advertising
  // "cross_mesh_batches"), the exchanges and the steps' buckets bounded by
  // `exchange_bytes`. Its summary's rows are pre_steps, transfers and
  // post_steps over every tensor; its tensors, named, are judged on the
  // destination ranks. Errors as RunJob's.
  absl::StatusOr<JobRun> RunCrossBatchJob(
      const std::string& job, const std::vector<CrossBatchTensor>& tensors,
      int64_t exchange_bytes, const JobRunOptions& options);
  // Plans a cross-mesh move once for `job` and keeps it there as a
  // schedule (RunCrossJob's refusals of the request and the job;
  // RESOURCE_EXHAUSTED when the job holds as many as it keeps). Never
  // retried: each call makes a schedule.
  absl::StatusOr<CrossSchedule> PrepareCrossMesh(
      const std::string& job, const Mesh& src_mesh, const Mesh& dst_mesh,
      const CrossMeshRequest& request);
  // One tensor of a cross-mesh batch for the job's replica to plan: its
  // name, its meshes (its own source mesh, or the batch's) and request.
  struct CrossBatchRequestTensor {
    std::string name;
    Mesh src_mesh;
    Mesh dst_mesh;
    CrossMeshRequest request;
  };
  // Plans a cross-mesh batch without running it (PlanCrossMeshBatch,
  // docs/DESIGN.md §9): each tensor's plan or its own error, the buckets
  // under `bucket_bytes` and the totals, as the in-process
  // MakeCrossMeshBatch gives them (the pre- and post-steps' schedules
  // count their collectives only). Refusals of a tensor's request name it
  // ("tensors[t]."); transfers past the reply's list are expanded again.
  absl::StatusOr<CrossBatchPlan> PlanCrossMeshBatch(
      const std::vector<CrossBatchRequestTensor>& tensors,
      int64_t bucket_bytes);
  // RunCrossBatchJob with every tensor planned by the job's replica (its
  // plan cache shared); refusals of a request name it
  // ("cross_batch_request.tensors[t]."). The reply names the tensors but
  // does not carry their plans.
  absl::StatusOr<JobRun> RunCrossBatchJob(
      const std::string& job,
      const std::vector<CrossBatchRequestTensor>& tensors,
      int64_t exchange_bytes, const JobRunOptions& options);
  // Keeps a cross-mesh batch planned by the caller (RunCrossBatchJob's
  // tensors and bound) for `job` as a schedule: a run naming it runs the
  // whole batch, on generated data or, with options.tensors, one binding
  // per tensor, on the job's registered tensors. RunCrossBatchJob's
  // refusals of the batch, PrepareCrossMesh's of the job. Never retried.
  absl::StatusOr<CrossSchedule> PrepareCrossBatch(
      const std::string& job, const std::vector<CrossBatchTensor>& tensors,
      int64_t exchange_bytes);
  // PrepareCrossBatch with every tensor planned by the job's replica.
  absl::StatusOr<CrossSchedule> PrepareCrossBatch(
      const std::string& job,
      const std::vector<CrossBatchRequestTensor>& tensors,
      int64_t exchange_bytes);
  // Runs schedule `schedule_id` on every agent of `job` as RunCrossJob
  // runs its move, without planning; once every agent keeps its plan, the
  // plan is not sent either. FAILED_PRECONDITION saying "prepare again"
  // once it was deleted or an agent joined or left since it was prepared.
  absl::StatusOr<JobRun> RunSchedule(const std::string& job,
                                     const std::string& schedule_id,
                                     const JobRunOptions& options);
  // Forgets a schedule (NOT_FOUND naming it when the job holds none).
  absl::Status DeleteSchedule(const std::string& job,
                              const std::string& schedule_id);
  // Every job on every replica, by name.
  absl::StatusOr<std::vector<JobInfo>> ListJobs();
  absl::StatusOr<JobInfo> GetJob(const std::string& job);
  // Cancels the job's current run; returns its id ("" when none ran). With
  // `stop`, its RunJob returns what the ranks measured before they stopped
  // (JobRun::interrupted) instead of failing CANCELLED.
  absl::StatusOr<std::string> CancelJob(const std::string& job,
                                        bool stop = false);

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reshard

#endif  // RESHARD_CLIENT_H_
