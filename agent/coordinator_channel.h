// The agent's channel to the Coordinator: bounds and reconnection suited
// to a dispatch stream that lives as long as the agent, TLS when asked
// (--tls_ca), and the job's token (--job_token_file) on every call, added here
// once so that no call site can forget it (common/credential_headers.h).
#ifndef RESHARD_AGENT_COORDINATOR_CHANNEL_H_
#define RESHARD_AGENT_COORDINATOR_CHANNEL_H_

#include <memory>
#include <string>

#include "common/tls_config.h"
#include "grpcpp/channel.h"

namespace reshard::agent {

// A channel to `server` (HOST:PORT), over TLS when `tls` is enabled,
// whose every call carries `job_token` as metadata (empty: none).
std::shared_ptr<grpc::Channel> CoordinatorChannel(const std::string& server,
                                                  const std::string& job_token,
                                                  const TlsConfig& tls);

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_COORDINATOR_CHANNEL_H_
