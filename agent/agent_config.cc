#include "agent/agent_config.h"

#include <grp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/byte_size.h"
#include "common/credential_headers.h"
#include "common/job_replica.h"
#include "common/secret_file.h"
#include "common/tls_files.h"
#include "metrics/port_file.h"
#include "planner/core/field_error.h"

namespace reshard::agent {
namespace {

// Job names travel in every RPC and log line: printable, no spaces.
constexpr size_t kMaxJobName = 128;
// An RPC timeout beyond an hour is a typo, not a choice.
constexpr double kMaxTimeoutSeconds = 3600;

absl::StatusOr<int64_t> ParseInteger(absl::string_view flag,
                                     const std::string& text) {
  int64_t value = 0;
  if (text.empty()) return InvalidField(flag, "required");
  if (!absl::SimpleAtoi(text, &value)) {
    return InvalidField(flag, absl::StrCat("\"", text, "\" is not an integer"));
  }
  return value;
}

absl::Status CheckOneServer(const std::string& server) {
  const size_t colon = server.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(server.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return InvalidField("--server", absl::StrCat("\"", server,
                                                 "\" is not HOST:PORT with a "
                                                 "port in [1, 65535]"));
  }
  return absl::OkStatus();
}

// One address, or the replica list the job's replica is picked from.
absl::Status CheckServer(const std::string& list) {
  if (list.empty()) return InvalidField("--server", "required (HOST:PORT)");
  for (const std::string& server : SplitReplicaList(list)) {
    absl::Status s = CheckOneServer(server);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckJob(const std::string& job) {
  if (job.empty()) return InvalidField("--job", "required");
  if (job.size() > kMaxJobName) {
    return InvalidField(
        "--job", absl::StrCat("longer than ", kMaxJobName, " characters"));
  }
  for (char c : job) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c))) {
      return InvalidField("--job", absl::StrCat("\"", job,
                                                "\" has a space or a "
                                                "non-printable character"));
    }
  }
  return absl::OkStatus();
}

// Whether this machine can run the NCCL backend is asked when the agent
// starts (ChooseDevice), not here: parsing stays pure.
absl::Status ParseBackendFlag(const std::string& text, AgentConfig& config) {
  absl::StatusOr<Backend> backend = ParseBackend(text, "--backend");
  if (!backend.ok()) return backend.status();
  config.backend = *backend;
  return absl::OkStatus();
}

absl::StatusOr<double> ParseTimeout(const std::string& text) {
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds) ||
      seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    return InvalidField("--timeout_seconds",
                        absl::StrCat("\"", text,
                                     "\" is not a number of "
                                     "seconds in (0, ",
                                     kMaxTimeoutSeconds, "]"));
  }
  return seconds;
}

// 0 (never reconnect) up to a day.
absl::StatusOr<double> ParseReconnect(const std::string& text) {
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds) ||
      seconds < 0 || seconds > kMaxTimeoutSeconds) {
    return InvalidField(
        "--reconnect_seconds",
        absl::StrCat("\"", text, "\" is not a number of seconds in [0, ",
                     kMaxTimeoutSeconds, "]"));
  }
  return seconds;
}

// "auto", or a byte count (common/byte_size.h): "0" turns the bound off.
absl::StatusOr<int64_t> ParseRunBytes(const std::string& text) {
  if (text == "auto") return kAutoRunBytes;
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return InvalidField(
        "--max_run_bytes",
        absl::StrCat("\"", text, "\" is not auto or ", kByteSizeForm));
  }
  return *bytes;
}

// --world_size, then --rank within it.
absl::Status ParseRanks(const AgentFlagValues& flags, AgentConfig& config) {
  absl::StatusOr<int64_t> world =
      ParseInteger("--world_size", flags.world_size);
  if (!world.ok()) return world.status();
  if (*world < 1) return InvalidField("--world_size", "must be at least 1");
  absl::StatusOr<int64_t> rank = ParseInteger("--rank", flags.rank);
  if (!rank.ok()) return rank.status();
  if (*rank < 0 || *rank >= *world) {
    return InvalidField("--rank", absl::StrCat(*rank,
                                               " is not in [0, "
                                               "--world_size=",
                                               *world, ")"));
  }
  config.world_size = *world;
  config.rank = *rank;
  return absl::OkStatus();
}

absl::Status ParseDevice(const std::string& text, AgentConfig& config) {
  absl::StatusOr<int64_t> device = ParseInteger("--device", text);
  if (!device.ok()) return device.status();
  if (*device < -1 || *device > 1024) {
    return InvalidField("--device", absl::StrCat(*device,
                                                 " is not -1 (none) "
                                                 "or a device index"));
  }
  config.device = static_cast<int>(*device);
  return absl::OkStatus();
}

// The metrics endpoint itself is checked when it starts (the address must
// bind); here, what can be known before.
absl::Status CheckMetricsFlags(const AgentFlagValues& flags) {
  if (flags.metrics_port_file.empty()) return absl::OkStatus();
  if (flags.metrics_listen.empty()) {
    return InvalidField("--metrics_port_file", "needs --metrics_listen");
  }
  return metrics::ProbePortFile("metrics_port_file", flags.metrics_port_file);
}

// The local endpoint's flags: a socket path needs the job token; the
// group must exist; the bounds are positive.
absl::Status ParseTensorFlags(const AgentFlagValues& flags,
                              AgentConfig& config) {
  if (flags.tensor_socket.empty()) {
    if (!flags.tensor_socket_group.empty()) {
      return InvalidField("--tensor_socket_group", "needs --tensor_socket");
    }
    return absl::OkStatus();
  }
  if (config.job_token.empty()) {
    return InvalidField("--tensor_socket",
                        "needs the job's token (--job_token_file or "
                        "$RESHARD_JOB_TOKEN): every registration presents it");
  }
  config.tensor_socket = flags.tensor_socket;
  if (!flags.tensor_socket_group.empty()) {
    const group* g = getgrnam(flags.tensor_socket_group.c_str());
    if (g == nullptr) {
      return InvalidField(
          "--tensor_socket_group",
          absl::StrCat("no group \"", flags.tensor_socket_group, "\""));
    }
    config.tensor_group = g->gr_gid;
  }
  if (!absl::SimpleAtoi(flags.max_tensors, &config.max_tensors) ||
      config.max_tensors < 1) {
    return InvalidField(
        "--max_tensors",
        absl::StrCat("\"", flags.max_tensors, "\" is not a count >= 1"));
  }
  absl::StatusOr<int64_t> bytes = ParseByteSize(flags.max_tensor_bytes);
  if (!bytes.ok() || *bytes < 1) {
    return InvalidField("--max_tensor_bytes",
                        absl::StrCat("\"", flags.max_tensor_bytes, "\" is not ",
                                     kByteSizeForm, " >= 1"));
  }
  config.max_tensor_bytes = *bytes;
  return absl::OkStatus();
}

}  // namespace

// --agents_per_host, else $LOCAL_WORLD_SIZE, else 1.
absl::Status ResolveAgentsPerHost(int64_t flag, AgentConfig& config) {
  if (flag < 0 || flag > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("--agents_per_host: ", flag,
                     " is not in [0, 65536] (0: "
                     "$LOCAL_WORLD_SIZE, else 1)"));
  }
  if (flag > 0) {
    config.agents_per_host = flag;
    config.agents_per_host_source = "--agents_per_host";
    return absl::OkStatus();
  }
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  int64_t from_env = 0;
  if (local != nullptr && absl::SimpleAtoi(local, &from_env) && from_env >= 1 &&
      from_env <= 65536) {
    config.agents_per_host = from_env;
    config.agents_per_host_source = "$LOCAL_WORLD_SIZE";
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentConfig> ParseAgentFlags(const AgentFlagValues& flags) {
  AgentConfig config;
  for (absl::Status s :
       {CheckServer(flags.server), CheckJob(flags.job),
        ParseRanks(flags, config), ParseBackendFlag(flags.backend, config),
        ParseDevice(flags.device, config)}) {
    if (!s.ok()) return s;
  }
  if (flags.listen_address.empty() ||
      flags.listen_address.find_first_of(" \t\n") != std::string::npos) {
    return InvalidField(
        "--listen_address",
        absl::StrCat("\"", flags.listen_address, "\" is not an address"));
  }
  absl::StatusOr<double> timeout = ParseTimeout(flags.timeout_seconds);
  if (!timeout.ok()) return timeout.status();
  absl::StatusOr<double> reconnect = ParseReconnect(flags.reconnect_seconds);
  if (!reconnect.ok()) return reconnect.status();
  config.reconnect_seconds = *reconnect;
  config.server = flags.server;
  config.job = flags.job;
  config.listen_address = flags.listen_address;
  config.timeout_seconds = *timeout;
  absl::Status metrics = CheckMetricsFlags(flags);
  if (!metrics.ok()) return metrics;
  config.metrics_listen = flags.metrics_listen;
  config.metrics_port_file = flags.metrics_port_file;
  absl::StatusOr<int64_t> run_bytes = ParseRunBytes(flags.max_run_bytes);
  if (!run_bytes.ok()) return run_bytes.status();
  config.max_run_bytes = *run_bytes;
  absl::Status sharing = ResolveAgentsPerHost(flags.agents_per_host, config);
  if (!sharing.ok()) return sharing;
  absl::StatusOr<std::string> token =
      SecretFromFileOrEnv("job_token_file", flags.job_token_file, kJobTokenEnv);
  if (!token.ok()) return token.status();
  config.job_token = *std::move(token);
  absl::Status tensors = ParseTensorFlags(flags, config);
  if (!tensors.ok()) return tensors;
  absl::StatusOr<TlsConfig> tls =
      ClientTlsFromFiles({flags.tls_cert, flags.tls_key, flags.tls_ca});
  if (!tls.ok()) return tls.status();
  config.tls = *std::move(tls);
  return config;
}

int64_t AutoRunBytes(int64_t capacity, int64_t agents) {
  return capacity / 4 * 3 / std::max<int64_t>(agents, 1);
}

}  // namespace reshard::agent
