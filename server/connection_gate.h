// The planner's listening sockets and its own accept loop, in front of
// gRPC: each accepted connection is counted (server/connection_book.h) and
// handed to the server through gRPC's external connection acceptor, which
// keeps TLS. Why not gRPC's own listener: gRPC 1.51 stops accepting for
// good at the first EMFILE, and has no cap on connections (docs/DESIGN.md
// §5, Connections). Here, past --max_connections or
// --max_connections_per_peer a new connection is closed at once; an accept
// that meets EMFILE frees a reserve descriptor, accepts and closes the
// connection it finds, and takes the reserve back, so the loop always
// goes on. One thread; thread-safe counts.
#ifndef RESHARD_SERVER_CONNECTION_GATE_H_
#define RESHARD_SERVER_CONNECTION_GATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "server/connection_book.h"

namespace reshard::server {

class ConnectionGate {
 public:
  // What the loop did, for the metrics.
  struct Counts {
    std::atomic<int64_t> accepted{0};
    std::atomic<int64_t> refused_total{0};      // past --max_connections
    std::atomic<int64_t> refused_per_peer{0};   // past ..._per_peer
    std::atomic<int64_t> shed_out_of_files{0};  // EMFILE: closed at once
    std::atomic<int64_t> open{0};
  };

  // Binds every address `listen` (host:port; port 0 picks a free one)
  // resolves to, and listens; the error says why, `listen` named.
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Bind(
      const std::string& listen, ConnectionLimits limits);
  // Stop()s.
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int port() const { return port_; }
  // Hands every connection accepted from now on to `acceptor` (gRPC's,
  // from ServerBuilder's AddExternalConnectionAcceptor, its server
  // started), on the gate's own thread.
  void Start(
      std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);
  // Stops accepting and closes the listening sockets. Idempotent.
  void Stop();
  const Counts& counts() const { return counts_; }

 private:
  ConnectionGate(std::vector<int> listeners, int port, int wake,
                 ConnectionLimits limits);
  void Loop();
  // Accepts what `listener` has waiting.
  void AcceptFrom(int listener);
  // Hands `fd` (from `peer`) to gRPC, or closes it past a cap.
  void Admit(int listener, int fd, const std::string& peer);
  // EMFILE: frees the reserve descriptor to accept and close one
  // connection, then takes it back.
  void Shed(int listener);
  // Forgets the connections gRPC closed.
  void Sweep();
  // A refusal in the log, at most one per reason per kLogEvery.
  void LogRefusal(ConnectionBook::Verdict why, const std::string& peer);

  const std::vector<int> listeners_;
  const int port_;
  const int wake_;  // an eventfd: Stop wakes the loop
  int reserve_ = -1;
  ConnectionBook book_;
  Counts counts_;
  absl::Time last_sweep_ = absl::InfinitePast();
  absl::Time last_log_[3] = {absl::InfinitePast(), absl::InfinitePast(),
                             absl::InfinitePast()};
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_CONNECTION_GATE_H_
