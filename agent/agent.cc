#include "agent/agent.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/backoff.h"
#include "agent/progress_reporter.h"
#include "agent/run_work.h"
#include "common/incarnation_text.h"
#include "common/tensor_name.h"
#include "common/tls_hint.h"
#include "common/version.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/cross_harness.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "spdlog/spdlog.h"

namespace reshard::agent {
namespace {

// How long a first Join attempt waits for an answer before the agent says
// that the Coordinator does not answer (and goes on waiting for it).
constexpr auto kFirstAnswer = std::chrono::seconds(1);

// Fresh per process: two draws of the system's entropy source, never 0.
uint64_t FreshIncarnation() {
  std::random_device entropy;
  const uint64_t value = (uint64_t{entropy()} << 32) ^ entropy();
  return value == 0 ? 1 : value;
}

// A Join refusal that the same request would meet again (another version,
// world size or backend); everything else (the Coordinator down, draining,
// restarting, or still holding this rank's previous stream) may pass later.
bool Refusal(absl::StatusCode code) {
  return code == absl::StatusCode::kFailedPrecondition ||
         code == absl::StatusCode::kInvalidArgument ||
         code == absl::StatusCode::kUnimplemented ||
         code == absl::StatusCode::kPermissionDenied ||
         code == absl::StatusCode::kUnauthenticated;
}

// What ran: a plan's steps or a batch's tensors and rows.
std::string RunShape(const v1::RunWork& run) {
  if (run.cross_batch_size() > 0) {
    return absl::StrCat("cross-mesh batch of ", run.cross_batch_size(),
                        " tensors");
  }
  if (run.has_cross()) {
    return absl::StrCat("cross-mesh plan, ", run.cross().pre().steps_size(),
                        " + ", run.cross().post().steps_size(), " steps");
  }
  if (!run.schedule_id().empty()) {
    return absl::StrCat("schedule ", run.schedule_id());
  }
  if (!run.has_batch()) return absl::StrCat(run.plan().steps_size(), " steps");
  return absl::StrCat("batch of ", run.batch().batch().plans_size(),
                      " tensors, ", run.batch().batch().buckets_size(),
                      run.batch().bucketed() ? " buckets" : " steps");
}

// A validated result's figures: a plan's checksum, the time per run and
// the peak.
std::string ValidatedFigures(const executor::RankReport& report) {
  std::string figures;
  if (report.tensors.size() == 1) {
    figures = absl::StrCat(", checksum ", report.tensors[0].checksum);
  }
  return absl::StrCat(
      figures, absl::StrFormat(", %.6f s per run, peak %d B",
                               report.total_seconds_median, report.peak_bytes));
}

// The run's line in the log: id, generation, outcome, wall time.
void LogRun(const v1::RunWork& run, const executor::RankReport& result,
            const absl::Status& sent, double wall_seconds) {
  const absl::Status& status = result.status;
  const std::optional<std::string> why_not = result.WhyNotValidated();
  std::string outcome;
  if (!status.ok()) {
    outcome = absl::StrCat("FAILED: ", status.ToString());
  } else if (why_not.has_value()) {
    outcome = absl::StrCat("NOT VALIDATED: ", *why_not);
  } else {
    outcome = absl::StrCat("validated", ValidatedFigures(result));
  }
  if (!sent.ok()) {
    absl::StrAppend(&outcome, "; report not delivered: ", sent.ToString());
  }
  const bool ok = status.ok() && !why_not.has_value() && sent.ok();
  spdlog::log(ok ? spdlog::level::info : spdlog::level::warn,
              "run {} (generation {}, {}): {}; wall {:.3f} s", run.run_id(),
              run.generation(), RunShape(run), outcome, wall_seconds);
}

// A run refused before it ran.
executor::RankReport Refused(int64_t rank, absl::Status status) {
  executor::RankReport report;
  report.rank = rank;
  report.status = std::move(status);
  return report;
}

}  // namespace

Agent::Agent(AgentConfig config, std::shared_ptr<grpc::Channel> channel,
             AgentMetrics* metrics, executor::MemorySpace* space,
             TensorRegistry* tensors)
    : config_(std::move(config)),
      stub_(v1::Coordinator::NewStub(channel)),
      comms_([this](const CommKey& key) { return OpenCommunicators(key); }),
      metrics_(metrics),
      space_(space),
      tensors_(tensors) {
  id_.set_job(config_.job);
  id_.set_rank(config_.rank);
  id_.set_incarnation(FreshIncarnation());
  store_ = std::make_shared<CoordinatorStore>(stub_, id_, RpcTimeout());
}

std::chrono::milliseconds Agent::RpcTimeout() const {
  return std::chrono::milliseconds(
      static_cast<int64_t>(config_.timeout_seconds * 1000));
}

std::chrono::system_clock::time_point Agent::Deadline() const {
  return std::chrono::system_clock::now() + RpcTimeout();
}

absl::StatusOr<int64_t> Agent::Join() { return Join(Deadline()); }

// Who this agent is and what it runs.
v1::JoinRequest Agent::JoinRequestOf() const {
  v1::JoinRequest request;
  *request.mutable_agent() = id_;
  request.set_world_size(config_.world_size);
  request.set_backend(proto::BackendToProto(config_.backend));
  request.set_version(kReshardVersion);
  request.set_protocol(kCoordinatorProtocol);
  request.set_host(config_.listen_address);
  if (tensors_ != nullptr && space_ == nullptr) {
    request.add_capabilities(kRegisteredTensors);
  }
  // The cross-mesh runner packs on the host (executor/run/cross_runner.h).
  if (space_ == nullptr) {
    request.add_capabilities(kCrossMesh);
    request.add_capabilities(kCrossMeshBatches);
  }
  return request;
}

absl::StatusOr<int64_t> Agent::Join(
    std::chrono::system_clock::time_point deadline) {
  v1::JoinRequest request = JoinRequestOf();
  v1::JoinResponse response;
  grpc::Status status = JoinOnce(request, deadline, response);
  // ALREADY_EXISTS: this rank's previous process has died but the
  // Coordinator has not yet seen its stream close; ask again until then,
  // saying so at once (the rank may also be held by a live agent).
  if (status.error_code() == grpc::ALREADY_EXISTS) {
    spdlog::warn(
        "{}; asking again until the Coordinator sees it gone, for "
        "up to {} s",
        status.error_message(), config_.timeout_seconds);
  }
  for (auto backoff = std::chrono::milliseconds(50);
       status.error_code() == grpc::ALREADY_EXISTS &&
       std::chrono::system_clock::now() + backoff < deadline;
       backoff = std::min(backoff * 2, std::chrono::milliseconds(1000))) {
    if (SleepUnlessStopped(absl::FromChrono(backoff))) break;
    status = JoinOnce(request, deadline, response);
  }
  // A first Join whose answer was lost (its retry presents no session):
  // the Coordinator keeps that join's session to itself, so join afresh.
  if (status.error_code() == grpc::PERMISSION_DENIED && id_.session().empty()) {
    spdlog::warn("{}; joining again as a new incarnation",
                 status.error_message());
    id_.set_incarnation(FreshIncarnation());
    *request.mutable_agent() = id_;
    status = JoinOnce(request, deadline, response);
  }
  if (status.error_code() == grpc::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer from the Coordinator at ", config_.server,
                     " by the ", "deadline (", status.error_message(), ")"));
  }
  if (!status.ok()) {
    return WithTlsHint(proto::StatusFromGrpc(status), config_.tls);
  }
  if (response.session() != id_.session()) {  // a first join, or a new server
    id_.set_session(response.session());
    store_ = std::make_shared<CoordinatorStore>(stub_, id_, RpcTimeout());
  }
  spdlog::info(
      "joined job {} as rank {} of {} (generation {}, incarnation {}, "
      "coordinator {}, agent {})",
      config_.job, config_.rank, config_.world_size, response.generation(),
      IncarnationText(id_.incarnation()), response.coordinator_version(),
      kReshardVersion);
  return response.generation();
}

grpc::Status Agent::JoinOnce(const v1::JoinRequest& request,
                             std::chrono::system_clock::time_point deadline,
                             v1::JoinResponse& response) {
  // A first short attempt: a Coordinator that does not answer is said at
  // once, then waited for (still starting, or restarting) up to the
  // deadline.
  {
    grpc::ClientContext context;
    context.set_deadline(
        std::min(deadline, std::chrono::system_clock::now() + kFirstAnswer));
    const grpc::Status status = JoinCall(context, request, response);
    if (status.error_code() != grpc::UNAVAILABLE &&
        status.error_code() != grpc::DEADLINE_EXCEEDED) {
      return status;
    }
    if (std::chrono::system_clock::now() >= deadline) return status;
    spdlog::warn(
        "the Coordinator at {} does not answer yet ({}); waiting for it for "
        "up to {} s",
        config_.server,
        std::string(
            WithTlsHint(proto::StatusFromGrpc(status), config_.tls).message()),
        config_.timeout_seconds);
  }
  grpc::ClientContext context;
  context.set_deadline(deadline);
  context.set_wait_for_ready(true);
  return JoinCall(context, request, response);
}

grpc::Status Agent::JoinCall(grpc::ClientContext& context,
                             const v1::JoinRequest& request,
                             v1::JoinResponse& response) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return grpc::Status(grpc::CANCELLED, "the agent stopped");
    joining_ = &context;
  }
  grpc::Status status = stub_->Join(&context, request, &response);
  absl::MutexLock lock(&mu_);
  joining_ = nullptr;
  if (stopping_ && !status.ok()) {
    return grpc::Status(grpc::CANCELLED, "the agent stopped");
  }
  return status;
}

absl::StatusOr<int64_t> Agent::Rejoin(absl::Duration within) {
  const auto until =
      std::chrono::system_clock::now() + absl::ToChronoMilliseconds(within);
  Backoff backoff(id_.incarnation());
  absl::Status last;
  while (true) {
    absl::StatusOr<int64_t> generation = Join(std::min(until, Deadline()));
    if (generation.ok()) return generation;
    last = generation.status();
    if (Refusal(last.code())) return last;  // retrying changes nothing
    const absl::Duration wait = backoff.Next();
    if (std::chrono::system_clock::now() + absl::ToChronoMilliseconds(wait) >=
        until) {
      break;
    }
    spdlog::info("rejoining job {}: {}; next attempt in {} ms", config_.job,
                 last.ToString(), absl::ToInt64Milliseconds(wait));
    if (SleepUnlessStopped(wait)) break;
  }
  if (stopping()) return absl::CancelledError("stopped while rejoining");
  return absl::UnavailableError(
      absl::StrCat("could not rejoin job ", config_.job, " within ",
                   absl::FormatDuration(within), ": ", last.ToString()));
}

bool Agent::stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool Agent::SleepUnlessStopped(absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait);
  return stopping_;
}

absl::Status Agent::Serve() {
  grpc::ClientContext context;
  bool open = false;
  {
    absl::MutexLock lock(&mu_);
    open = !stopping_;
    if (open) dispatch_ = &context;
  }
  Ending ending = Ending::kStopped;
  grpc::Status finished;
  if (open) {
    comms_.Drop();  // an earlier stream's peers may have moved on
    v1::DispatchRequest request;
    *request.mutable_agent() = id_;
    std::unique_ptr<grpc::ClientReader<v1::Work>> stream =
        stub_->Dispatch(&context, request);
    // A cancel ends the run's collectives in flight where the backend can
    // (NCCL aborts its communicators); the run thread then drops them.
    DispatchInbox inbox([this](const std::string& why) { comms_.Cancel(why); });
    std::thread reader([&] { ReadStream(*stream, inbox); });
    ending = HandleInbox(inbox);
    // Leaving on our own: the reader must not wait for the server.
    if (ending != Ending::kDropped) context.TryCancel();
    reader.join();
    finished = stream->Finish();
    absl::MutexLock lock(&mu_);
    dispatch_ = nullptr;
  }
  if (ending == Ending::kDropped) {
    return absl::UnavailableError(absl::StrCat(
        "the dispatch stream ended: ",
        finished.ok() ? "closed by the Coordinator without a shutdown"
                      : proto::StatusFromGrpc(finished).ToString()));
  }
  Leave();
  return absl::OkStatus();
}

void Agent::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  if (joining_ != nullptr) joining_->TryCancel();
  // Mid-run the run finishes and reports first; HandleInbox then returns.
  if (dispatch_ != nullptr && !running_) dispatch_->TryCancel();
}

bool Agent::BeginWork() {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  running_ = true;
  return true;
}

bool Agent::EndWork() {
  absl::MutexLock lock(&mu_);
  running_ = false;
  return !stopping_;
}

void Agent::ReadStream(grpc::ClientReader<v1::Work>& stream,
                       DispatchInbox& inbox) {
  v1::Work work;
  while (stream.Read(&work)) {
    if (work.kind_case() == v1::Work::kCancel) {
      spdlog::info("run {} cancelled by the Coordinator",
                   work.cancel().run_id());
    }
    inbox.Deliver(std::move(work));
    work.Clear();
  }
  inbox.Close("the dispatch stream ended");
}

Agent::Ending Agent::HandleInbox(DispatchInbox& inbox) {
  while (std::optional<v1::Work> work = inbox.Next()) {
    if (!BeginWork()) return Ending::kStopped;
    const bool shutdown = HandleWork(*work, inbox);
    if (!EndWork()) return Ending::kStopped;
    if (shutdown) return Ending::kShutdown;
  }
  absl::MutexLock lock(&mu_);
  return stopping_ ? Ending::kStopped : Ending::kDropped;
}

bool Agent::HandleWork(const v1::Work& work, DispatchInbox& inbox) {
  if (work.kind_case() != v1::Work::kCommit) {
    staged_.reset();  // its run failed elsewhere, or the next one began
    staged_run_.clear();
  }
  switch (work.kind_case()) {
    case v1::Work::kCommit:
      HandleCommit(work.commit().run_id());
      return false;
    case v1::Work::kRun:
      HandleRun(work.run(), inbox);
      return false;
    case v1::Work::kCancel:
      // Runs execute one at a time, so the cancelled run is over (stopped,
      // or never started here); its peers may not be: start afresh.
      comms_.Drop();
      return false;
    case v1::Work::kShutdown:
      spdlog::info("shutdown: {}", work.shutdown().reason());
      return true;
    default:
      spdlog::warn("work of an unknown kind ({}) ignored",
                   static_cast<int>(work.kind_case()));
      return false;
  }
}

void Agent::HandleRun(const v1::RunWork& run, DispatchInbox& inbox) {
  const auto start = std::chrono::steady_clock::now();
  inbox.Begin(run.run_id());
  schedules_.Retain({run.live_schedules().begin(), run.live_schedules().end()},
                    run.generation());
  const absl::StatusOr<RunSetup> setup =
      PrepareRun(run, config_.world_size, config_.max_run_bytes, &schedules_);
  if (setup.ok() && setup->is_cross()) FitKeptSchedules(run, *setup);
  absl::StatusOr<std::shared_ptr<BoundRun>> bound =
      setup.ok() ? BindTensors(run, *setup)
                 : absl::StatusOr<std::shared_ptr<BoundRun>>(nullptr);
  // A run refused in pre-flight leaves the communicators as they were.
  bool keep_communicators = false;
  executor::RankReport report =
      !setup.ok() ? Refused(config_.rank, setup.status())
                  : Execute(run, *setup, inbox, bound, keep_communicators);
  absl::Status& status = report.status;
  // A cancelled run fails as such, whatever its peers' stopping did here.
  const std::optional<std::string> cancelled = inbox.Cancelled();
  inbox.Finish();
  if (!status.ok() && cancelled.has_value()) {
    status =
        absl::CancelledError(absl::StrCat("run ", run.run_id(), " cancelled (",
                                          *cancelled, "): ", status.message()));
  }
  if (metrics_ != nullptr && setup.ok()) {
    metrics_->RecordRun(*setup, report);
  } else if (metrics_ != nullptr) {
    metrics_->RecordRefusal(status);
  }
  // The peers of a failed run may hold half-used connections.
  if (!status.ok() && !keep_communicators) comms_.Drop();
  if (bound.ok() && *bound != nullptr && (*bound)->staged() && status.ok() &&
      !report.WhyNotValidated().has_value()) {
    staged_run_ = run.run_id();
    staged_ = *std::move(bound);
  }
  const absl::Status sent = SendReport(run, report);
  LogRun(run, report, sent,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count());
}

void Agent::FitKeptSchedules(const v1::RunWork& run, const RunSetup& setup) {
  if (config_.max_run_bytes <= 0) return;
  const int64_t held = schedules_.HeldBytes(run.schedule_id());
  if (held == 0 || held + setup.cross->PeakBytes() <= config_.max_run_bytes) {
    return;
  }
  const int64_t freed = schedules_.Release(run.schedule_id());
  spdlog::info(
      "run {}: freed {} bytes other schedules' runners and bindings held, "
      "to fit --max_run_bytes {}",
      run.run_id(), freed, config_.max_run_bytes);
}

absl::StatusOr<std::shared_ptr<BoundRun>> Agent::BindTensors(
    const v1::RunWork& run, const RunSetup& setup) {
  if (run.tensors_size() == 0) return nullptr;
  if (tensors_ == nullptr || space_ != nullptr) {
    return absl::FailedPreconditionError(
        "this agent runs no registered tensors (no --tensor_socket, or a "
        "device backend)");
  }
  std::vector<TensorNames> names;
  for (const v1::TensorBinding& b : run.tensors()) {
    names.push_back({b.source(), b.into(), b.allocate()});
  }
  if (setup.is_cross()) {
    KeptSchedule* kept = schedules_.Find(run.schedule_id());
    const bool staging = !run.no_staging();
    if (kept != nullptr && kept->bound != nullptr &&
        kept->bound->StillBound(names, staging, *tensors_)) {
      return kept->bound;
    }
    absl::StatusOr<std::unique_ptr<BoundRun>> bound = BoundRun::BindCross(
        setup.cross->items, config_.rank, names, staging, *tensors_);
    if (!bound.ok()) return bound.status();
    std::shared_ptr<BoundRun> shared = *std::move(bound);
    if (kept != nullptr) kept->bound = shared;
    return shared;
  }
  return BoundRun::Bind(setup.mesh, setup.work, config_.rank, names,
                        !run.no_staging(), *tensors_);
}

void Agent::HandleCommit(const std::string& run_id) {
  absl::Status result = staged_ != nullptr && staged_run_ == run_id
                            ? staged_->Commit(*tensors_)
                            : absl::FailedPreconditionError(absl::StrCat(
                                  "nothing is staged for run ", run_id));
  staged_.reset();
  staged_run_.clear();
  v1::CommittedRequest request;
  *request.mutable_agent() = id_;
  request.set_run_id(run_id);
  request.set_code(static_cast<int>(result.code()));
  request.set_error(std::string(result.message()));
  v1::CommittedResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  const absl::Status sent =
      proto::StatusFromGrpc(stub_->Committed(&context, request, &response));
  spdlog::log(
      result.ok() && sent.ok() ? spdlog::level::info : spdlog::level::warn,
      "run {}: commit {}{}", run_id,
      result.ok() ? "written" : result.ToString(),
      sent.ok() ? ""
                : absl::StrCat("; answer not delivered: ", sent.ToString()));
}

executor::RankReport Agent::Execute(
    const v1::RunWork& run, const RunSetup& setup, DispatchInbox& inbox,
    const absl::StatusOr<std::shared_ptr<BoundRun>>& bound,
    bool& keep_communicators) {
  store_->SetRun(run.run_id());
  executor::CommunicatorProvider& provider =
      comms_.For({run.comm_prefix(), setup.timeout});
  executor::RunOptions options;
  options.space = space_;
  ProgressReporter progress(stub_, id_, run.run_id());
  options.progress = [&progress](int done) { progress.Update(done); };
  // First asked just before the first execution, once the communicators
  // are connected and the ranks' digests agree: the log then says that the
  // run's data moves (what tests wait for before they kill or cancel).
  options.stopped = [&inbox, &run, logged = false]() mutable {
    if (!logged) {
      logged = true;
      spdlog::info("run {}: executing", run.run_id());
    }
    return inbox.Cancelled().has_value();
  };
  if (setup.is_cross()) {
    return ExecuteCross(run, setup, options, bound, keep_communicators,
                        provider);
  }
  // Registered tensors are judged by conservation, generated data by the
  // data rule; a refusal to bind stops every rank in the pre-flight step.
  std::unique_ptr<executor::RunCheck> check =
      bound.ok() && *bound != nullptr
          ? executor::ConservedData((*bound)->tensors())
          : executor::GeneratedData(space_, false);
  executor::Preflight preflight{bound.status()};
  executor::RankReport report =
      executor::RunJudged(setup.mesh, setup.work, config_.rank, provider,
                          *check, options, setup.options, &preflight);
  keep_communicators = !preflight.verdict.ok() && preflight.exchanged;
  return report;
}

executor::RankReport Agent::ExecuteCross(
    const v1::RunWork& run, const RunSetup& setup,
    const executor::RunOptions& options,
    const absl::StatusOr<std::shared_ptr<BoundRun>>& bound,
    bool& keep_communicators, executor::CommunicatorProvider& provider) {
  // A kept schedule's runner is good on the communicators it was compiled
  // on; every rank of the run sees them change together (a new prefix).
  std::unique_ptr<executor::CrossRunner> fresh;
  std::unique_ptr<executor::CrossRunner>* runner = &fresh;
  if (KeptSchedule* kept = schedules_.Find(run.schedule_id())) {
    if (kept->runner_comms != comms_.opened()) {
      kept->runner.reset();
      kept->runner_comms = comms_.opened();
    }
    runner = &kept->runner;
  }
  const bool compiled = *runner != nullptr;
  executor::RankReport report;
  if (run.tensors_size() == 0) {
    report = executor::RunCrossBatchGenerated(
        setup.cross->items, setup.cross->exchange_bytes, config_.rank, provider,
        options, setup.options, runner);
  } else {
    // A refusal to bind stops every rank in the pre-flight step.
    executor::Preflight preflight{bound.status()};
    const executor::RunBuffers unbound;
    report = executor::RunCrossOnTensors(
        *setup.cross, config_.rank, provider, options,
        bound.ok() ? (*bound)->tensors() : unbound, preflight, runner);
    keep_communicators = !preflight.verdict.ok() && preflight.exchanged;
  }
  if (!compiled && *runner != nullptr && metrics_ != nullptr) {
    metrics_->RecordCrossCompile();
  }
  return report;
}

absl::Status Agent::SendReport(const v1::RunWork& run,
                               const executor::RankReport& report) {
  v1::ReportRequest request;
  *request.mutable_agent() = id_;
  request.set_generation(run.generation());
  request.set_run_id(run.run_id());
  proto::RankReportToProto(report, request.mutable_report());
  v1::ReportResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  return proto::StatusFromGrpc(stub_->Report(&context, request, &response));
}

void Agent::Leave() {
  v1::LeaveRequest request;
  *request.mutable_agent() = id_;
  v1::LeaveResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  const grpc::Status status = stub_->Leave(&context, request, &response);
  if (status.ok()) {
    spdlog::info("left job {}", config_.job);
  } else {
    spdlog::warn("leaving job {} failed: {}", config_.job,
                 proto::StatusFromGrpc(status).ToString());
  }
}

std::unique_ptr<executor::CommunicatorProvider> Agent::OpenCommunicators(
    const CommKey& key) {
  if (metrics_ != nullptr) metrics_->RecordCommunicatorsCreated();
  executor::ProviderSetup setup;
  setup.store = store_;
  setup.prefix = key.prefix;
  setup.rank = config_.rank;
  setup.world_size = config_.world_size;
  setup.timeout = key.timeout;
  setup.hostname = config_.listen_address;
  setup.device = config_.device;
  return executor::MakeProvider(config_.backend, std::move(setup));
}

}  // namespace reshard::agent
