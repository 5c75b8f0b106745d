// What reshard-agent runs as, read from its flags (docs/DESIGN.md §6.4): the
// Coordinator to join, the job, this process's rank and the job's world
// size, the backend and the address its peers reach it at. Flags arrive as
// text so that every bad value, numbers included, is refused here with the
// flag's name (and exit status 2) instead of by the flags library.
#ifndef RESHARD_AGENT_AGENT_CONFIG_H_
#define RESHARD_AGENT_AGENT_CONFIG_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls_config.h"
#include "run_values/backend.h"

namespace reshard::agent {

// The flags as given (empty: not given).
struct AgentFlagValues {
  std::string server;
  std::string job;
  std::string rank;
  std::string world_size;
  std::string backend{BackendName(Backend::kGloo)};
  std::string device = "-1";
  std::string listen_address = "127.0.0.1";
  std::string timeout_seconds = "30";
  std::string reconnect_seconds = "60";
  std::string metrics_listen;     // empty: no metrics endpoint
  std::string metrics_port_file;  // empty: none
  std::string max_run_bytes = "auto";
  // The agents sharing this host's (for nccl: this GPU's) memory, which
  // --max_run_bytes auto divides; 0: $LOCAL_WORLD_SIZE (torchrun's), else 1.
  int64_t agents_per_host = 0;
  std::string job_token_file;  // empty: $RESHARD_JOB_TOKEN, else none
  std::string tls_cert;        // PEM files; none: plaintext
  std::string tls_key;
  std::string tls_ca;
  std::string tensor_socket;        // empty: no local endpoint
  std::string tensor_socket_group;  // empty: only this uid
  std::string max_tensors = "4096";
  std::string max_tensor_bytes = "16GiB";
};

// --max_run_bytes auto: a share of the memory the runs use (the host's for
// Gloo, the GPU's for NCCL), decided when the agent starts.
inline constexpr int64_t kAutoRunBytes = -1;
// The auto bound: 3/4 of `capacity`, the rest left to the process and its
// neighbours, shared by the `agents` that use the same memory.
int64_t AutoRunBytes(int64_t capacity, int64_t agents);

// A validated configuration: rank in [0, world_size), a backend (gloo, or
// nccl: device memory on `device`), a positive finite RPC timeout, a
// reconnect window in [0, 86400] s.
struct AgentConfig {
  std::string server;  // HOST:PORT
  std::string job;
  int64_t rank = 0;
  int64_t world_size = 1;
  Backend backend = Backend::kGloo;
  // NCCL's GPU; -1: the rank mod the GPU count (fixed when the agent
  // starts: ChooseDevice). Gloo uses none.
  int device = -1;
  std::string listen_address = "127.0.0.1";
  double timeout_seconds = 30;  // Join and every other unary RPC
  // How long a dropped dispatch stream is retried (rejoining with backoff)
  // before the agent exits; 0: it exits at once.
  double reconnect_seconds = 60;
  std::string metrics_listen;     // IP:PORT or PORT; empty: no metrics
  std::string metrics_port_file;  // where the bound metrics port goes
  // The most bytes a run may hold on this rank (its planned peak, from
  // planner/cost/plan_memory.h); a run planned above it is refused before any
  // allocation. 0: no bound; kAutoRunBytes: resolved when the agent starts
  // (AutoRunBytes).
  int64_t max_run_bytes = kAutoRunBytes;
  // How many agents share the memory auto divides (--agents_per_host
  // resolved: at least 1), and where the number came from.
  int64_t agents_per_host = 1;
  std::string agents_per_host_source = "the default";
  // The job's token, sent with every call (agent/coordinator_channel.h);
  // empty: none (an open job).
  std::string job_token;
  // TLS to the Coordinator (common/tls_files.h, a client's rules).
  TlsConfig tls;
  // The local endpoint where this rank's processes register tensors
  // (agent/tensor_endpoint.h); empty: none. It needs the job token.
  std::string tensor_socket;
  // The group also admitted there; (gid_t)-1: only this agent's uid.
  gid_t tensor_group = static_cast<gid_t>(-1);
  // Bounds on what may be registered at once.
  int64_t max_tensors = 4096;
  int64_t max_tensor_bytes = int64_t{16} << 30;
};

// INVALID_ARGUMENT naming the flag and the problem
// ("--rank: 5 is not in [0, --world_size=4)"). Whether NCCL can run here
// is not asked: the agent asks when it starts. A --metrics_port_file needs
// --metrics_listen and must be writable. The job token is read from
// --job_token_file, else $RESHARD_JOB_TOKEN (common/secret_file.h).
absl::StatusOr<AgentConfig> ParseAgentFlags(const AgentFlagValues& flags);

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_AGENT_CONFIG_H_
