// reshard-agent: one rank of a job (docs/DESIGN.md §6.4). Joins the job through
// the Coordinator at --server, runs what its dispatch stream sends and reports.
// Exit status: 0 after a shutdown from the Coordinator or SIGTERM/SIGINT
// (the current run finishes or fails first, then the agent leaves the
// job; a second signal exits at once with 1), 1 when the join is refused,
// when the dispatch stream dropped and rejoining failed for
// --reconnect_seconds, or when --metrics_listen cannot be served, 2 for bad
// flags.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/coordinator_channel.h"
#include "agent/memory_capacity.h"
#include "agent/tensor_endpoint.h"
#include "agent/tensor_registry.h"
#include "common/crash_report.h"
#include "common/flags_usage.h"
#include "common/job_replica.h"
#include "common/tls_flags.h"
#include "executor/backends/nccl/nccl_backend.h"
#include "executor/backends/provider_factory.h"
#include "metrics/metrics_endpoint.h"
#include "metrics/port_file.h"
#include "run_values/backend.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

// Numbers arrive as text so that every bad value is refused with the
// flag's name and exit status 2 (ParseAgentFlags).
ABSL_FLAG(std::string, server, "",
          "the Coordinator, HOST:PORT, or a comma-separated replica list "
          "(the job's replica is picked by hashing its name; required)");
ABSL_FLAG(std::string, job, "", "the job to join (required)");
ABSL_FLAG(std::string, rank, "",
          "this agent's global rank, in [0, --world_size) (required)");
ABSL_FLAG(std::string, world_size, "", "the job's rank count (required)");
ABSL_FLAG(std::string, backend,
          std::string(reshard::BackendName(reshard::Backend::kGloo)),
          "gloo (host memory, CPU) or nccl (device memory, GPU)");
ABSL_FLAG(std::string, device, "-1",
          "the GPU for nccl; -1: the rank mod the GPU count");
ABSL_FLAG(std::string, listen_address, "127.0.0.1",
          "the address this rank's peers connect to (Gloo binds it)");
ABSL_FLAG(std::string, timeout_seconds, "30",
          "deadline of Join and every other call to the Coordinator");
ABSL_FLAG(std::string, reconnect_seconds, "60",
          "when the dispatch stream drops (the Coordinator restarted), how "
          "long to keep rejoining, with backoff from 100 ms to 2 s, before "
          "exiting; 0: exit at once");
ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics on http://ADDR/metrics (IP:PORT, or PORT "
          "for every interface; port 0 picks a free port; off when empty)");
ABSL_FLAG(std::string, metrics_port_file, "",
          "if set, write the bound metrics port here once serving");
ABSL_FLAG(std::string, max_run_bytes, "auto",
          "refuse a run whose planned peak on a rank exceeds this many bytes "
          "(KiB, MiB, GiB or TiB may follow the number; 0: no bound; auto: "
          "3/4 of the memory the runs use, the host's for gloo (its cgroup "
          "limit where lower), the GPU's for nccl, divided by "
          "--agents_per_host)");
ABSL_FLAG(int64_t, agents_per_host, 0,
          "the agents sharing this host's memory (for nccl: this GPU's), "
          "which --max_run_bytes auto divides; 0: $LOCAL_WORLD_SIZE, else 1");

ABSL_FLAG(std::string, job_token_file, "",
          "a file holding the job's token (else $RESHARD_JOB_TOKEN): the "
          "first agent creates the job with it, every other agent and every "
          "caller of the job must present it; none: an open job");

ABSL_FLAG(std::string, tensor_socket, "",
          "serve this rank's local endpoint at this filesystem Unix socket: "
          "processes of the agent's uid (or --tensor_socket_group) that "
          "present the job's token register tensors there, which `job run "
          "--tensor` moves (needs the job token; off when empty)");
ABSL_FLAG(std::string, tensor_socket_group, "",
          "a group whose members may also use --tensor_socket (the socket is "
          "then mode 0660 of that group; else 0600)");
ABSL_FLAG(std::string, max_tensors, "4096",
          "the most tensors registered at once at --tensor_socket");
ABSL_FLAG(std::string, max_tensor_bytes, "16GiB",
          "the most bytes registered at once at --tensor_socket (KiB, MiB, "
          "GiB or TiB may follow the number)");

namespace reshard::agent {
namespace {

AgentFlagValues FlagValues() {
  AgentFlagValues values;
  values.server = absl::GetFlag(FLAGS_server);
  values.job = absl::GetFlag(FLAGS_job);
  values.rank = absl::GetFlag(FLAGS_rank);
  values.world_size = absl::GetFlag(FLAGS_world_size);
  values.backend = absl::GetFlag(FLAGS_backend);
  values.device = absl::GetFlag(FLAGS_device);
  values.listen_address = absl::GetFlag(FLAGS_listen_address);
  values.timeout_seconds = absl::GetFlag(FLAGS_timeout_seconds);
  values.reconnect_seconds = absl::GetFlag(FLAGS_reconnect_seconds);
  values.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  values.metrics_port_file = absl::GetFlag(FLAGS_metrics_port_file);
  values.max_run_bytes = absl::GetFlag(FLAGS_max_run_bytes);
  values.agents_per_host = absl::GetFlag(FLAGS_agents_per_host);
  values.job_token_file = absl::GetFlag(FLAGS_job_token_file);
  values.tensor_socket = absl::GetFlag(FLAGS_tensor_socket);
  values.tensor_socket_group = absl::GetFlag(FLAGS_tensor_socket_group);
  values.max_tensors = absl::GetFlag(FLAGS_max_tensors);
  values.max_tensor_bytes = absl::GetFlag(FLAGS_max_tensor_bytes);
  const TlsFiles tls = TlsFilesFromFlags();
  values.tls_cert = tls.cert;
  values.tls_key = tls.key;
  values.tls_ca = tls.ca;
  return values;
}

// Every log line names the job and the rank (several agents share a
// terminal or a log collector).
void SetUpLogging(const AgentConfig& config) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("reshard-agent"));
  const std::string job = absl::StrReplaceAll(config.job, {{"%", "%%"}});
  spdlog::set_pattern(absl::StrCat("%Y-%m-%dT%H:%M:%S.%e %^%l%$ reshard-agent ",
                                   job, "/", config.rank, " %v"));
}

// Serves until stopped; a dropped dispatch stream is followed by a rejoin
// (Agent::Rejoin) for up to --reconnect_seconds.
int JoinAndServe(Agent& agent, const AgentConfig& config) {
  absl::StatusOr<int64_t> generation = agent.Join();
  if (!generation.ok() && agent.stopping()) {
    spdlog::info("stopped before joining");
    return 0;
  }
  if (!generation.ok()) {
    spdlog::error("cannot join job {} at {} as rank {}: {}", config.job,
                  config.server, config.rank, generation.status().ToString());
    return 1;
  }
  while (true) {
    absl::Status served = agent.Serve();
    if (served.ok()) break;
    if (config.reconnect_seconds <= 0) {
      spdlog::error("{}; exiting (--reconnect_seconds=0)", served.ToString());
      return 1;
    }
    spdlog::warn("{}; rejoining for up to {} s", served.ToString(),
                 config.reconnect_seconds);
    generation = agent.Rejoin(absl::Seconds(config.reconnect_seconds));
    if (agent.stopping()) break;
    if (!generation.ok()) {
      spdlog::error("{}; exiting", generation.status().ToString());
      return 1;
    }
    spdlog::info("rejoined job {} (generation {})", config.job, *generation);
  }
  spdlog::info("stopped");
  return 0;
}

// The agent's metrics on --metrics_listen with its port written to
// --metrics_port_file; null when not asked for; the reason when the address
// cannot be bound or the file not written.
absl::StatusOr<std::unique_ptr<metrics::MetricsEndpoint>> StartMetrics(
    const AgentConfig& config, std::shared_ptr<prometheus::Registry> families) {
  if (config.metrics_listen.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<metrics::MetricsEndpoint>> endpoint =
      metrics::MetricsEndpoint::Start(config.metrics_listen,
                                      std::move(families));
  if (!endpoint.ok()) {
    return absl::UnavailableError(
        absl::StrCat("--metrics_listen: ", endpoint.status().message()));
  }
  absl::Status written = metrics::WritePortFile(
      "metrics_port_file", config.metrics_port_file, (*endpoint)->port());
  if (!written.ok()) return written;
  spdlog::info("metrics on port {} at /metrics", (*endpoint)->port());
  return endpoint;
}

// The local endpoint at --tensor_socket; null when not asked for. Device
// backends do not run on registered (host) tensors yet.
absl::StatusOr<std::unique_ptr<TensorEndpoint>> StartTensorEndpoint(
    const AgentConfig& config, executor::MemorySpace* space,
    TensorRegistry& registry) {
  if (config.tensor_socket.empty()) return nullptr;
  if (space != nullptr) {
    return absl::FailedPreconditionError(
        "--tensor_socket: registered tensors are host memory; --backend nccl "
        "does not run them yet");
  }
  EndpointConfig endpoint{config.tensor_socket, config.job, config.rank,
                          config.job_token, config.tensor_group};
  absl::StatusOr<std::unique_ptr<TensorEndpoint>> started =
      TensorEndpoint::Start(std::move(endpoint), &registry);
  if (started.ok()) {
    spdlog::info("local tensor endpoint at {}", config.tensor_socket);
  }
  return started;
}

// Signals wait on their own thread (blocked everywhere else): the first
// SIGTERM/SIGINT stops the agent after its current run, a second exits at
// once. SIGUSR1 from main() ends the thread when the agent stopped first.
int Run(const AgentConfig& config, executor::MemorySpace* space) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  // Before any thread starts (gRPC's included), so only the waiter sees them.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (config.max_run_bytes > 0) {
    spdlog::info(
        "runs planned above {} bytes on a rank are refused "
        "(--max_run_bytes)",
        config.max_run_bytes);
  }
  auto families = std::make_shared<prometheus::Registry>();
  AgentMetrics metrics(*families);
  // Declared before the agent: destroyed after it stops recording.
  absl::StatusOr<std::unique_ptr<metrics::MetricsEndpoint>> endpoint =
      StartMetrics(config, families);
  if (!endpoint.ok()) {
    spdlog::error("{}", std::string(endpoint.status().message()));
    return 1;
  }
  TensorRegistry registry(
      RegistryLimits{config.max_tensors, config.max_tensor_bytes});
  absl::StatusOr<std::unique_ptr<TensorEndpoint>> local =
      StartTensorEndpoint(config, space, registry);
  if (!local.ok()) {
    spdlog::error("{}", std::string(local.status().message()));
    return 1;
  }
  // With several replicas, the job's own (the one its callers reach too).
  Agent agent(config,
              CoordinatorChannel(
                  ReplicaForJob(config.job, SplitReplicaList(config.server)),
                  config.job_token, config.tls),
              &metrics, space, *local != nullptr ? &registry : nullptr);
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    int signal = 0;
    bool stopping = false;
    while (sigwait(&signals, &signal) == 0) {
      if (signal == SIGUSR1) {
        if (done) return;
      } else if (stopping) {
        spdlog::warn("signal {} again: exiting now", signal);
        _exit(1);
      } else {
        spdlog::info("signal {}: leaving after the current run", signal);
        stopping = true;
        agent.Stop();
      }
    }
  });
  const int status = JoinAndServe(agent, config);
  done = true;
  pthread_kill(waiter.native_handle(), SIGUSR1);
  waiter.join();
  return status;
}

// --max_run_bytes auto, from the `capacity` bytes of `memory`, logged with
// the number of agents assumed to share it.
void ResolveAutoRunBytes(int64_t capacity, const std::string& memory,
                         AgentConfig& config) {
  config.max_run_bytes = AutoRunBytes(capacity, config.agents_per_host);
  spdlog::info(
      "--max_run_bytes auto: {} bytes, 3/4 of {} ({} bytes) shared by {} "
      "agent(s) ({}; set --agents_per_host when more agents share it)",
      config.max_run_bytes, memory, capacity, config.agents_per_host,
      config.agents_per_host_source);
}

// With NCCL: the agent's GPU (asked for, or the rank's), and its device
// memory, which every run uses; exit status 2 naming why when there is no
// usable GPU.
int RunOnBackend(AgentConfig config) {
  if (config.backend == Backend::kGloo) {
    if (config.max_run_bytes == kAutoRunBytes) {
      ResolveAutoRunBytes(HostMemoryBytes(), "this host's memory", config);
    }
    return Run(config, nullptr);
  }
  absl::StatusOr<int> device =
      executor::ChooseDevice(config.rank, config.device);
  absl::StatusOr<std::unique_ptr<executor::MemorySpace>> space =
      device.ok() ? executor::MakeSpace(config.backend, *device)
                  : device.status();
  if (!space.ok()) {
    spdlog::error("--backend nccl: {}; use --backend gloo",
                  std::string(space.status().message()));
    return 2;
  }
  config.device = *device;
  spdlog::info("NCCL on device {}", config.device);
  if (config.max_run_bytes == kAutoRunBytes) {
    absl::StatusOr<int64_t> capacity =
        executor::DeviceMemoryBytes(config.device);
    if (!capacity.ok()) {
      spdlog::error("--max_run_bytes auto: {}",
                    std::string(capacity.status().message()));
      return 2;
    }
    ResolveAutoRunBytes(
        *capacity, absl::StrCat("device ", config.device, "'s memory"), config);
  }
  return Run(config, space->get());
}

}  // namespace
}  // namespace reshard::agent

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "reshard-agent --server HOST:PORT --job NAME --rank R --world_size N "
      "[--backend gloo|nccl [--device D]] [--listen_address IP] "
      "[--timeout_seconds T] "
      "[--reconnect_seconds S] "
      "[--metrics_listen ADDR [--metrics_port_file FILE]] "
      "[--max_run_bytes B] [--agents_per_host K] [--job_token_file FILE] "
      "[--tensor_socket PATH [--tensor_socket_group G] [--max_tensors N] "
      "[--max_tensor_bytes B]] "
      "[--tls_ca FILE [--tls_cert FILE --tls_key FILE]]");
  reshard::SetFlagsUsage("reshard-agent", "agent/main.cc");
  reshard::InstallCrashReport(argv[0]);
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<reshard::agent::AgentConfig> config =
      reshard::agent::ParseAgentFlags(reshard::agent::FlagValues());
  if (!config.ok()) {
    std::fprintf(stderr, "reshard-agent: %s\n",
                 std::string(config.status().message()).c_str());
    return 2;
  }
  reshard::agent::SetUpLogging(*config);
  return reshard::agent::RunOnBackend(*config);
}
