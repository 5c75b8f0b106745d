// An agent's local endpoint (docs/DESIGN.md §6.6): a filesystem Unix socket
// (not an abstract one, which lives per network namespace) where the
// processes of this rank register tensors (proto/reshard/v1/agent_local.proto).
// A peer is admitted by SO_PEERCRED (the agent's own uid, or a member of
// the configured group) and every request must carry the job's token, the
// job and the rank. Registrations live while their connection does: a
// client that exits is freed. Clients, message sizes and the time a
// message may take are bounded; the endpoint's threads never wait on a
// client past that.
#ifndef RESHARD_AGENT_TENSOR_ENDPOINT_H_
#define RESHARD_AGENT_TENSOR_ENDPOINT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/tensor_registry.h"

namespace reshard::agent {

struct EndpointConfig {
  std::string path;  // the socket's path (at most 107 bytes)
  std::string job;
  int64_t rank = 0;
  std::string token;  // the job's; required
  gid_t group = -1;   // also admitted; (gid_t)-1: only the agent's uid
  int max_clients = 64;
  int64_t max_message_bytes = 64 << 10;
  absl::Duration message_timeout = absl::Seconds(5);
};

class TensorEndpoint {
 public:
  // Binds and listens (the socket mode 0600, or 0660 owned by `group`),
  // replacing a stale socket at the path but nothing else.
  // INVALID_ARGUMENT naming --tensor_socket for a path too long, a
  // non-socket in the way, or no token; the bind's error otherwise.
  static absl::StatusOr<std::unique_ptr<TensorEndpoint>> Start(
      EndpointConfig config, TensorRegistry* registry);
  // Stops accepting, closes every client (freeing its registrations) and
  // removes the socket.
  ~TensorEndpoint();

  const std::string& path() const { return config_.path; }

 private:
  TensorEndpoint(EndpointConfig config, TensorRegistry* registry, int listener,
                 int wake_read, int wake_write);
  void AcceptLoop();
  // Joins the threads of clients that have gone.
  void ReapFinished();
  void Serve(int fd, uint64_t owner);
  // Whether the peer on `fd` may use the endpoint; the refusal otherwise.
  absl::Status Admit(int fd) const;

  const EndpointConfig config_;
  TensorRegistry* const registry_;
  const int listener_;
  const int wake_read_, wake_write_;  // a pipe that wakes every poll
  std::thread acceptor_;
  absl::Mutex mu_;
  std::map<uint64_t, std::thread> clients_ ABSL_GUARDED_BY(mu_);
  // Clients whose thread has ended, joined by the next accept.
  std::vector<uint64_t> finished_ ABSL_GUARDED_BY(mu_);
  uint64_t next_owner_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_TENSOR_ENDPOINT_H_
