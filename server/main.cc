// reshard-planner: the Reshard planner service. Serves reshard.v1.Planner,
// grpc.health.v1.Health and server reflection on --listen, and Prometheus
// metrics on --metrics_listen when given. On SIGTERM or SIGINT it reports
// NOT_SERVING, lets in-flight calls finish (up to --drain_seconds) and
// exits 0.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/byte_size.h"
#include "common/crash_report.h"
#include "common/flags_usage.h"
#include "common/issued_job_token.h"
#include "common/open_file_limit.h"
#include "common/periodic_task.h"
#include "common/secret_file.h"
#include "common/tls_files.h"
#include "common/tls_flags.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "metrics/metrics_endpoint.h"
#include "planner/search/search_support.h"
#include "server/connection_gate.h"
#include "server/coordinator_service.h"
#include "server/grpc_log.h"
#include "server/planner_metrics.h"
#include "server/planner_service.h"
#include "server/server_flags.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "transport/tls_credentials.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "address to serve on; port 0 picks a free port");
ABSL_FLAG(std::string, port_file, "",
          "if set, write the bound port here once serving");
ABSL_FLAG(int64_t, cache_entries, 10000, "plan cache capacity (LRU); 0: off");
ABSL_FLAG(int64_t, max_meshes, 1000, "mesh registry capacity");
ABSL_FLAG(int64_t, max_meshes_per_credential, 250,
          "meshes one job token (or callers with none) may have registered");
ABSL_FLAG(int64_t, search_budget, reshard::kDefaultSearchBudget,
          "default search budget (expanded states) per plan");
ABSL_FLAG(int64_t, max_search_budget, reshard::kMaxSearchBudget,
          "largest search budget a request may ask for");
ABSL_FLAG(int64_t, max_batch_items, 4096, "most items in one PlanBatch");
ABSL_FLAG(std::string, max_search_bytes,
          reshard::FormatByteSize(reshard::kDefaultMaxSearchBytes),
          "most bytes one optimal search's tables may hold; past it the "
          "search falls back as past its budget");
ABSL_FLAG(int32_t, planning_workers, 0,
          "threads that run heavy searches (never gRPC's); 0: half the "
          "cores, at least 1");
ABSL_FLAG(int32_t, planning_queue, 64,
          "heavy searches that may wait for a worker; more are refused");
ABSL_FLAG(int32_t, planning_queue_per_credential, 8,
          "heavy searches one credential may have waiting; its searches run "
          "one at a time");
ABSL_FLAG(std::string, max_message_bytes, "16MiB",
          "largest request or response message");
ABSL_FLAG(int64_t, drain_seconds, 10,
          "how long SIGTERM waits for in-flight calls; 0: cancel them");
ABSL_FLAG(int64_t, max_connection_idle_seconds, 300,
          "close a client connection with no call in flight for this long");
ABSL_FLAG(int64_t, max_connections, 0,
          "most client connections open at once; past it a new one is "
          "closed at once; 0: the open-file limit less a reserve");
ABSL_FLAG(std::optional<int64_t>, max_connections_per_peer, std::nullopt,
          "most client connections open at once from one address; 0: no "
          "cap; unset: half of --max_connections, so that one address "
          "never holds every slot");
ABSL_FLAG(int64_t, max_jobs, 1024, "most Coordinator jobs held at once");
ABSL_FLAG(int64_t, max_concurrent_runs, 64,
          "most RunJob calls waiting or running at once");
ABSL_FLAG(int64_t, max_jobs_per_credential, 256,
          "most jobs created with one job token (or with none)");
ABSL_FLAG(int64_t, max_runs_per_credential, 16,
          "most RunJob calls waiting or running at once per job token (or "
          "for callers with none)");
ABSL_FLAG(int64_t, max_store_waiters,
          reshard::coordinator::CoordinatorLimits{}.max_store_waiters,
          "most StoreGet calls waiting for keys at once (each holds memory, "
          "not a thread)");
ABSL_FLAG(
    int64_t, max_store_waiters_per_credential,
    reshard::coordinator::CoordinatorLimits{}.max_store_waiters_per_credential,
    "most StoreGet calls waiting at once per job token (or for callers "
    "with none); at least the largest job's world size");
ABSL_FLAG(std::string, max_store_bytes_per_job, "64MiB",
          "rendezvous store bytes (keys + values) per job");
ABSL_FLAG(std::string, max_store_bytes_per_credential, "256MiB",
          "rendezvous store bytes (keys + values) of one credential's jobs "
          "together");
ABSL_FLAG(std::string, max_store_bytes_total, "1GiB",
          "rendezvous store bytes (keys + values) of all jobs together");
ABSL_FLAG(int64_t, job_idle_seconds, 300,
          "drop a job once no agent has been connected to it (and no run "
          "or caller in it) for this long");
ABSL_FLAG(double, agent_wait_seconds, 10,
          "how long RunJob waits for a rank whose agent was connected and "
          "went away before failing, naming it (ranks that never joined are "
          "waited for until the call's deadline)");
ABSL_FLAG(int64_t, max_store_keys_per_job, int64_t{1} << 16,
          "rendezvous store keys per job");
ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics on http://ADDR/metrics (IP:PORT; port 0 "
          "picks a free port); off when empty");
ABSL_FLAG(std::string, metrics_port_file, "",
          "if set, write the bound metrics port here once serving");
ABSL_FLAG(std::optional<bool>, allow_open_jobs, std::nullopt,
          "=true|false: serve jobs created without a job token (agents' "
          "--job_token_file); when not given: true if --listen is a "
          "loopback address, false otherwise");
ABSL_FLAG(std::string, admin_token_file, "",
          "a file holding the admin token: DeleteMesh then needs it (gRPC "
          "metadata x-reshard-admin-token) and job tokens are issued under "
          "a key derived from it (reshardctl job token NAME); empty: "
          "DeleteMesh is open and no job token verifies");
ABSL_FLAG(bool, legacy_job_tokens, false,
          "also accept job tokens that were not issued (self-chosen), all "
          "counting in one share; for one release, warned about at start");

namespace reshard::server {
namespace {

// Server pings on every connection: a peer silent for the timeout after
// one is gone.
constexpr int kKeepaliveMs = 120000;
// The Coordinator's own health name, NOT_SERVING while it would refuse new
// work (Coordinator::Admitting), checked this often.
constexpr char kCoordinatorHealth[] = "reshard.v1.Coordinator";
constexpr absl::Duration kAdmittingPeriod = absl::Seconds(1);
constexpr int kKeepaliveTimeoutMs = 20000;
// A server certificate this close to its expiry is warned about at start.
constexpr absl::Duration kCertificateWarning = absl::Hours(14 * 24);
// Files --max_connections=0 leaves to everything but connections (the
// store, logs, gRPC's own pipes, the metrics endpoint's sockets).
constexpr int64_t kFilesBesideConnections = 256;

// The start-up flags, byte counts parsed (common/byte_size.h), checked;
// nullopt (after logging which flag is wrong) when one is.
std::optional<ServerFlags> StartupFlags() {
  ServerFlags flags;
  flags.port_file = absl::GetFlag(FLAGS_port_file);
  flags.metrics_port_file = absl::GetFlag(FLAGS_metrics_port_file);
  flags.cache_entries = absl::GetFlag(FLAGS_cache_entries);
  flags.max_meshes = absl::GetFlag(FLAGS_max_meshes);
  flags.max_batch_items = absl::GetFlag(FLAGS_max_batch_items);
  flags.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  flags.max_connection_idle_seconds =
      absl::GetFlag(FLAGS_max_connection_idle_seconds);
  flags.max_meshes_per_credential =
      absl::GetFlag(FLAGS_max_meshes_per_credential);
  for (auto [name, text, out] :
       {std::tuple{"max_message_bytes", absl::GetFlag(FLAGS_max_message_bytes),
                   &flags.max_message_bytes},
        std::tuple{"max_search_bytes", absl::GetFlag(FLAGS_max_search_bytes),
                   &flags.max_search_bytes},
        std::tuple{"max_store_bytes_per_job",
                   absl::GetFlag(FLAGS_max_store_bytes_per_job),
                   &flags.max_store_bytes_per_job},
        std::tuple{"max_store_bytes_per_credential",
                   absl::GetFlag(FLAGS_max_store_bytes_per_credential),
                   &flags.max_store_bytes_per_credential},
        std::tuple{"max_store_bytes_total",
                   absl::GetFlag(FLAGS_max_store_bytes_total),
                   &flags.max_store_bytes_total}}) {
    absl::StatusOr<int64_t> bytes = ParseByteFlag(name, text);
    if (!bytes.ok()) {
      spdlog::error("{}", std::string(bytes.status().message()));
      return std::nullopt;
    }
    *out = *bytes;
  }
  if (absl::Status s = ValidateServerFlags(flags); !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return std::nullopt;
  }
  return flags;
}

// Which job tokens are accepted: those issued under `admin_token`'s key
// and, with --legacy_job_tokens, self-chosen ones. Logged.
std::shared_ptr<const coordinator::TokenRules> TokenRulesFromFlags(
    const std::string& admin_token) {
  std::optional<JobTokenKey> key;
  if (!admin_token.empty()) {
    key = JobTokenKey::FromAdminToken(admin_token);
    spdlog::info("job tokens issued under key {} are accepted", key->key_id());
  }
  const bool legacy = absl::GetFlag(FLAGS_legacy_job_tokens);
  if (legacy) {
    spdlog::warn(
        "--legacy_job_tokens: self-chosen job tokens are accepted, all in one "
        "share, and whoever joins a name first holds it; issue tokens "
        "instead (reshardctl job token NAME) before this flag goes away");
  }
  return std::make_shared<const coordinator::TokenRules>(std::move(key),
                                                         legacy);
}

// The service limits and the admin token from the flags; nullopt (after
// logging why) when they contradict each other or the token cannot be read.
std::optional<ServiceOptions> ServiceOptionsFromFlags(
    const ServerFlags& startup) {
  ServiceOptions options;
  options.default_search_budget = absl::GetFlag(FLAGS_search_budget);
  options.max_search_budget = absl::GetFlag(FLAGS_max_search_budget);
  if (options.default_search_budget < 1 ||
      options.default_search_budget > options.max_search_budget) {
    spdlog::error("--search_budget={} must be in [1, --max_search_budget={}]",
                  options.default_search_budget, options.max_search_budget);
    return std::nullopt;
  }
  options.max_batch_items =
      static_cast<int>(absl::GetFlag(FLAGS_max_batch_items));
  options.max_message_bytes = startup.max_message_bytes;
  options.max_search_bytes = startup.max_search_bytes;
  if (options.max_search_bytes < (int64_t{1} << 20)) {
    spdlog::error("--max_search_bytes={} must be at least 1 MiB",
                  options.max_search_bytes);
    return std::nullopt;
  }
  if (const std::string file = absl::GetFlag(FLAGS_admin_token_file);
      !file.empty()) {
    absl::StatusOr<std::string> token =
        ReadSecretFile("admin_token_file", file);
    if (!token.ok()) {
      spdlog::error("{}", std::string(token.status().message()));
      return std::nullopt;
    }
    options.admin_token = *std::move(token);
    spdlog::info("DeleteMesh needs the admin token of --admin_token_file");
  }
  options.token_rules = TokenRulesFromFlags(options.admin_token);
  return options;
}

// --allow_open_jobs as given, else whether --listen is loopback only.
// Logged.
bool AllowOpenJobs() {
  const std::string listen = absl::GetFlag(FLAGS_listen);
  const bool loopback = ListensOnLoopbackOnly(listen);
  const bool allow = absl::GetFlag(FLAGS_allow_open_jobs).value_or(loopback);
  spdlog::info("jobs without a job token are {}", allow ? "served" : "refused");
  return allow;
}

// The planning pool's bounds; nullopt (after logging which flag is wrong)
// when one is out of range.
std::optional<PlanningLimits> PlanningLimitsFromFlags() {
  PlanningLimits limits;
  limits.workers = absl::GetFlag(FLAGS_planning_workers);
  if (limits.workers == 0) {
    limits.workers =
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
  }
  limits.queue = absl::GetFlag(FLAGS_planning_queue);
  limits.queue_per_credential =
      absl::GetFlag(FLAGS_planning_queue_per_credential);
  for (auto [flag, value, least] :
       {std::tuple{"planning_workers", limits.workers, 1},
        std::tuple{"planning_queue", limits.queue, 0},
        std::tuple{"planning_queue_per_credential", limits.queue_per_credential,
                   1}}) {
    if (value < least || value > 4096) {
      spdlog::error("--{}={} must be in [{}, 4096]", flag, value, least);
      return std::nullopt;
    }
  }
  spdlog::info("planning: {} workers, {} searches may wait ({} per credential)",
               limits.workers, limits.queue, limits.queue_per_credential);
  return limits;
}

// The Coordinator's bounds from the flags, with `token_rules`; nullopt
// (after logging which flag is wrong) when one is not positive.
std::optional<coordinator::CoordinatorLimits> CoordinatorLimitsFromFlags(
    const coordinator::TokenRules* token_rules, const ServerFlags& startup) {
  coordinator::CoordinatorLimits limits;
  limits.token_rules = token_rules;
  limits.max_jobs = absl::GetFlag(FLAGS_max_jobs);
  limits.max_concurrent_runs = absl::GetFlag(FLAGS_max_concurrent_runs);
  limits.max_jobs_per_credential = absl::GetFlag(FLAGS_max_jobs_per_credential);
  limits.max_runs_per_credential = absl::GetFlag(FLAGS_max_runs_per_credential);
  limits.max_store_waiters = absl::GetFlag(FLAGS_max_store_waiters);
  limits.max_store_waiters_per_credential =
      absl::GetFlag(FLAGS_max_store_waiters_per_credential);
  limits.max_store_bytes_per_job = startup.max_store_bytes_per_job;
  limits.max_store_bytes_total = startup.max_store_bytes_total;
  limits.max_store_bytes_per_credential =
      startup.max_store_bytes_per_credential;
  limits.max_store_keys_per_job = absl::GetFlag(FLAGS_max_store_keys_per_job);
  limits.job_idle_seconds = absl::GetFlag(FLAGS_job_idle_seconds);
  limits.agent_wait_seconds = absl::GetFlag(FLAGS_agent_wait_seconds);
  if (!(limits.agent_wait_seconds > 0 && limits.agent_wait_seconds <= 86400)) {
    spdlog::error("--agent_wait_seconds={} must be in (0, 86400]",
                  limits.agent_wait_seconds);
    return std::nullopt;
  }
  limits.allow_open_jobs = AllowOpenJobs();
  for (auto [flag, value] :
       {std::pair{"max_jobs", limits.max_jobs},
        std::pair{"max_concurrent_runs", limits.max_concurrent_runs},
        std::pair{"max_jobs_per_credential", limits.max_jobs_per_credential},
        std::pair{"max_runs_per_credential", limits.max_runs_per_credential},
        std::pair{"max_store_waiters", limits.max_store_waiters},
        std::pair{"max_store_waiters_per_credential",
                  limits.max_store_waiters_per_credential},
        std::pair{"max_store_bytes_per_job", limits.max_store_bytes_per_job},
        std::pair{"max_store_bytes_total", limits.max_store_bytes_total},
        std::pair{"max_store_bytes_per_credential",
                  limits.max_store_bytes_per_credential},
        std::pair{"max_store_keys_per_job", limits.max_store_keys_per_job},
        std::pair{"job_idle_seconds", limits.job_idle_seconds}}) {
    if (value < 1) {
      spdlog::error("--{}={} must be at least 1", flag, value);
      return std::nullopt;
    }
  }
  return limits;
}

// Connections hold server memory: one with no call in flight closes after
// --max_connection_idle_seconds, and keepalive pings find peers that
// vanished without closing theirs (a dead agent host's dispatch stream).
void AddConnectionBounds(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_IDLE_MS,
      static_cast<int>(absl::GetFlag(FLAGS_max_connection_idle_seconds) *
                       1000));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             kKeepaliveTimeoutMs);
}

// The caps on connections from the flags; --max_connections=0 is the
// soft open-file limit less the files the rest of the server needs.
ConnectionLimits ConnectionLimitsFromFlags() {
  ConnectionLimits limits;
  limits.max_total = absl::GetFlag(FLAGS_max_connections);
  if (rlimit files{}; limits.max_total == 0 &&
                      getrlimit(RLIMIT_NOFILE, &files) == 0 &&
                      files.rlim_cur != RLIM_INFINITY) {
    limits.max_total = std::max<int64_t>(
        1, static_cast<int64_t>(files.rlim_cur) - kFilesBesideConnections);
  }
  limits.max_per_peer = absl::GetFlag(FLAGS_max_connections_per_peer)
                            .value_or(DefaultPerPeerCap(limits.max_total));
  spdlog::info("connections: at most {} open, {} per peer address",
               limits.max_total, limits.max_per_peer);
  if (OnePeerTakesAll(limits)) {
    spdlog::warn(
        "connections: one address can hold every connection slot "
        "(--max_connections_per_peer={}, {} in all); lower "
        "--max_connections_per_peer below the total",
        limits.max_per_peer, limits.max_total);
  }
  return limits;
}

// The planner's own accept loop on --listen (server/connection_gate.h);
// null for a unix: address, which gRPC listens on itself; nullopt (after
// logging why) when a flag is wrong or the address cannot be bound.
std::optional<std::unique_ptr<ConnectionGate>> GateFromFlags() {
  const std::string listen = absl::GetFlag(FLAGS_listen);
  if (listen.rfind("unix:", 0) == 0) return nullptr;
  for (auto [flag, value] :
       {std::pair{"max_connections", absl::GetFlag(FLAGS_max_connections)},
        std::pair{"max_connections_per_peer",
                  absl::GetFlag(FLAGS_max_connections_per_peer).value_or(0)}}) {
    if (value < 0) {
      spdlog::error("--{}={} must be at least 0", flag, value);
      return std::nullopt;
    }
  }
  absl::StatusOr<std::unique_ptr<ConnectionGate>> gate =
      ConnectionGate::Bind(listen, ConnectionLimitsFromFlags());
  if (!gate.ok()) {
    spdlog::error("{}", std::string(gate.status().message()));
    return std::nullopt;
  }
  return *std::move(gate);
}

// Builds and starts the server with health checking and reflection, its
// connections handed over by `gate` (else gRPC listens on --listen's unix
// address); null (after logging why) when it cannot serve.
std::unique_ptr<grpc::Server> StartServer(PlannerService& service,
                                          CoordinatorService& coordinator,
                                          const TlsConfig& tls,
                                          ConnectionGate* gate,
                                          int max_message_bytes, int& port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second server on the same port
  // would start and share it, clients seeing two registries at random.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  AddConnectionBounds(builder);
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor;
  if (gate != nullptr) {
    acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        ServerCredentialsFor(tls));
  } else {
    builder.AddListeningPort(absl::GetFlag(FLAGS_listen),
                             ServerCredentialsFor(tls), &port);
  }
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
  builder.RegisterService(&service);
  builder.RegisterService(&coordinator);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server != nullptr && gate != nullptr) {
    gate->Start(std::move(acceptor));
    port = gate->port();
  }
  if (server == nullptr || port == 0) {
    spdlog::error("--listen={}: cannot listen", absl::GetFlag(FLAGS_listen));
    return nullptr;
  }
  return server;
}

// What the accept loop did, at scrape time.
void AddConnectionReadings(metrics::ScrapeReadings& readings,
                           const ConnectionGate::Counts& counts) {
  readings.AddGauge("reshard_connections_open",
                    "Client connections open (as of the last sweep, 1 s)", {},
                    [&counts] { return counts.open.load(); });
  readings.AddCounter("reshard_connections_accepted_total",
                      "Client connections handed to the server", {},
                      [&counts] { return counts.accepted.load(); });
  const std::string help =
      "Client connections closed at once: past --max_connections (total), "
      "--max_connections_per_peer (peer), or out of open files";
  for (const auto& [reason, count] :
       {std::pair{"total", &counts.refused_total},
        std::pair{"peer", &counts.refused_per_peer},
        std::pair{"out_of_files", &counts.shed_out_of_files}}) {
    readings.AddCounter("reshard_connections_refused_total", help,
                        {{"reason", reason}},
                        [count] { return count->load(); });
  }
}

// When the server's certificate expires, for alerts on its renewal, and
// the client handshakes that failed, by likely cause (server/grpc_log.h).
void AddTlsReadings(metrics::ScrapeReadings& readings, const TlsConfig& tls) {
  const auto expiry = static_cast<double>(tls.cert_not_after);
  readings.AddGauge("reshard_tls_certificate_expiry_seconds",
                    "When --tls_cert's certificate expires (Unix seconds)", {},
                    [expiry] { return expiry; });
  for (int f = 0; f < kHandshakeFailureCount; ++f) {
    readings.AddCounter(
        "reshard_tls_handshake_failures_total",
        "Client TLS handshakes that failed, by likely cause (gRPC's log)",
        {{"reason",
          std::string(HandshakeFailureName(static_cast<HandshakeFailure>(f)))}},
        [f] { return HandshakeFailures()[f].load(); });
  }
}

// Serves `families` and the scrape-time readings of the planner, the
// Coordinator, the certificate and the accept loop on --metrics_listen;
// null (after logging why) when it cannot listen.
std::unique_ptr<metrics::MetricsEndpoint> StartMetrics(
    std::shared_ptr<prometheus::Registry> families,
    const PlannerService& service, const MeshRegistry& registry,
    const PlanCache& cache, const PlanningPool& pool,
    const coordinator::Coordinator& core, const TlsConfig& tls,
    const ConnectionGate* gate) {
  const std::string address = absl::GetFlag(FLAGS_metrics_listen);
  absl::StatusOr<std::unique_ptr<metrics::MetricsEndpoint>> metrics =
      metrics::MetricsEndpoint::Start(address, std::move(families));
  if (!metrics.ok()) {
    spdlog::error("--metrics_listen: {}",
                  std::string(metrics.status().message()));
    return nullptr;
  }
  metrics::ScrapeReadings& readings = (*metrics)->readings();
  AddPlannerReadings(readings, service, registry, cache, &pool);
  AddCoordinatorReadings(readings, core);
  if (tls.enabled) AddTlsReadings(readings, tls);
  if (gate != nullptr) AddConnectionReadings(readings, gate->counts());
  if (absl::Status s = metrics::WritePortFile(
          "metrics_port_file", absl::GetFlag(FLAGS_metrics_port_file),
          (*metrics)->port());
      !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return nullptr;
  }
  spdlog::info("metrics on port {} at /metrics (--metrics_listen {})",
               (*metrics)->port(), address);
  return *std::move(metrics);
}

// The TLS of --tls_cert, --tls_key and --tls_ca; nullopt (after logging
// why) when a file is missing or unreadable. Warns when the server is
// reachable beyond loopback in plaintext.
std::optional<TlsConfig> TlsFromFlags() {
  const absl::Time now = absl::Now();
  const TlsFiles files = TlsFilesFromFlags();
  absl::StatusOr<TlsConfig> tls =
      ServerTlsFromFiles(files, absl::ToUnixSeconds(now));
  if (!tls.ok()) {
    spdlog::error("{}", std::string(tls.status().message()));
    return std::nullopt;
  }
  const absl::Time expiry = absl::FromUnixSeconds(tls->cert_not_after);
  if (tls->enabled && expiry - now < kCertificateWarning) {
    spdlog::warn(
        "--tls_cert={}: the certificate expires at {}, in {:.1f} days: "
        "renew it (reshard_tls_certificate_expiry_seconds)",
        files.cert,
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expiry, absl::UTCTimeZone()),
        absl::ToDoubleHours(expiry - now) / 24);
  }
  const std::string listen = absl::GetFlag(FLAGS_listen);
  if (!tls->enabled && !ListensOnLoopbackOnly(listen)) {
    spdlog::warn(
        "--listen={} is reachable beyond loopback without TLS (--tls_cert): "
        "tokens and data travel in clear",
        listen);
  }
  if (tls->enabled) {
    spdlog::info("serving TLS{}", tls->ca_pem.empty()
                                      ? ""
                                      : "; clients need a certificate of "
                                        "--tls_ca");
  }
  return *std::move(tls);
}

// Refuses new calls, lets running ones finish (up to --drain_seconds), then
// closes everything (gRPC's own Shutdown would also wait for idle client
// connections).
void Drain(PlannerService& service, grpc::Server& server,
           ConnectionGate* gate) {
  service.StartDraining();
  const auto drain = std::chrono::seconds(absl::GetFlag(FLAGS_drain_seconds));
  if (!service.WaitIdle(std::chrono::steady_clock::now() + drain)) {
    spdlog::warn("calls still running after {}s; cancelling them",
                 drain.count());
  }
  if (gate != nullptr) gate->Stop();
  server.Shutdown(std::chrono::system_clock::now() +
                  std::chrono::milliseconds(100));
  server.Wait();
}

// Reports SERVING and writes --port_file; false (after logging why) when
// the port file cannot be written.
bool Announce(grpc::HealthCheckServiceInterface& health, int port) {
  health.SetServingStatus(true);
  health.SetServingStatus("reshard.v1.Planner", true);
  health.SetServingStatus(kCoordinatorHealth, true);
  if (absl::Status s = metrics::WritePortFile(
          "port_file", absl::GetFlag(FLAGS_port_file), port);
      !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return false;
  }
  spdlog::info("reshard-planner serving on port {} (listen {})", port,
               absl::GetFlag(FLAGS_listen));
  return true;
}

// SIGTERM and SIGINT, blocked before any thread starts so that only the
// waiter in StopOnSignal sees them.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Waits for a stop signal, then says NOT_SERVING (stopping the tick that
// could say SERVING again first) and drains the in-flight calls.
void StopOnSignal(const sigset_t& signals, std::unique_ptr<PeriodicTask> tick,
                  PlannerService& service, CoordinatorService& coordinator,
                  grpc::Server& server, ConnectionGate* gate) {
  int signal = 0;
  sigwait(&signals, &signal);
  spdlog::info("signal {}: NOT_SERVING, draining in-flight calls", signal);
  tick.reset();
  server.GetHealthCheckService()->SetServingStatus(false);
  coordinator.StartDraining();
  Drain(service, server, gate);
  spdlog::info("reshard-planner stopped");
}

// Raises the soft open-file limit to the hard one (common/open_file_limit.h)
// and says so; a failure is logged and the server goes on.
void RaiseAndLogOpenFileLimit() {
  absl::StatusOr<OpenFileLimit> limit = RaiseOpenFileLimit();
  if (!limit.ok()) {
    spdlog::warn("open files: {}", std::string(limit.status().message()));
    return;
  }
  spdlog::info("open files: soft limit {} (was {}), hard limit {}", limit->soft,
               limit->soft_before, limit->hard);
}

int Serve() {
  const sigset_t signals = BlockStopSignals();
  const std::optional<ServerFlags> startup = StartupFlags();
  if (!startup.has_value()) return 2;
  MeshRegistry registry(
      static_cast<size_t>(absl::GetFlag(FLAGS_max_meshes)),
      static_cast<size_t>(absl::GetFlag(FLAGS_max_meshes_per_credential)));
  PlanCache cache(static_cast<size_t>(absl::GetFlag(FLAGS_cache_entries)));
  const std::optional<ServiceOptions> options =
      ServiceOptionsFromFlags(*startup);
  if (!options.has_value()) return 2;
  const bool metrics_on = !absl::GetFlag(FLAGS_metrics_listen).empty();
  auto families = std::make_shared<prometheus::Registry>();
  PlannerMetrics planner_metrics(*families);
  const std::optional<PlanningLimits> planning = PlanningLimitsFromFlags();
  if (!planning.has_value()) return 2;
  PlanningPool pool(*planning);
  PlannerService service(registry, cache, *options,
                         metrics_on ? &planner_metrics : nullptr, &pool);
  const std::optional<coordinator::CoordinatorLimits> limits =
      CoordinatorLimitsFromFlags(options->token_rules.get(), *startup);
  if (!limits.has_value()) return 2;
  coordinator::Coordinator core(*limits);
  CoordinatorMetrics coordinator_metrics(*families);
  CoordinatorService coordinator(core, registry, cache, *options,
                                 metrics_on ? &coordinator_metrics : nullptr,
                                 &pool);
  const std::optional<TlsConfig> tls = TlsFromFlags();
  if (!tls.has_value()) return 2;
  std::optional<std::unique_ptr<ConnectionGate>> gate = GateFromFlags();
  if (!gate.has_value()) return 1;
  // The endpoint serving the metrics is declared after everything its
  // readings read, so it stops first.
  std::unique_ptr<metrics::MetricsEndpoint> metrics;
  if (metrics_on) {
    metrics = StartMetrics(families, service, registry, cache, pool, core, *tls,
                           gate->get());
    if (metrics == nullptr) return 1;
  }
  int port = 0;
  std::unique_ptr<grpc::Server> server =
      StartServer(service, coordinator, *tls, gate->get(),
                  static_cast<int>(startup->max_message_bytes), port);
  if (server == nullptr) return 1;
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  if (!Announce(*health, port)) {
    server->Shutdown();
    return 2;
  }
  auto admitting =
      std::make_unique<PeriodicTask>(kAdmittingPeriod, true, [health, &core] {
        health->SetServingStatus(kCoordinatorHealth, core.Admitting());
        return true;
      });
  StopOnSignal(signals, std::move(admitting), service, coordinator, *server,
               gate->get());
  // Its last tasks touch the services: done before they go.
  pool.Join();
  return 0;
}

}  // namespace
}  // namespace reshard::server

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("reshard-planner --listen 127.0.0.1:50051");
  reshard::SetFlagsUsage("reshard-planner", "server/main.cc");
  reshard::InstallCrashReport(argv[0]);
  absl::ParseCommandLine(argc, argv);
  // Structured one-line logs on stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("reshard-planner"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ reshard-planner %v");
  reshard::server::RouteGrpcLog();
  reshard::server::RaiseAndLogOpenFileLimit();
  return reshard::server::Serve();
}
