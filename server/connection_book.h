// The connections the planner's own accept loop handed to gRPC
// (server/connection_gate.h), counted per peer address and in all, so
// that a new one past either cap is refused. gRPC closes a connection
// without telling: each is kept as its file descriptor and the socket's
// inode, and Sweep forgets those whose descriptor no longer names that
// socket. Pure; one thread uses it.
#ifndef RESHARD_SERVER_CONNECTION_BOOK_H_
#define RESHARD_SERVER_CONNECTION_BOOK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace reshard::server {

struct ConnectionLimits {
  int64_t max_total = 0;     // --max_connections; 0: none
  int64_t max_per_peer = 0;  // --max_connections_per_peer; 0: none
};

// The per-address cap when the operator sets none: half the total (at
// least 1), so that a flood from one address leaves room for the others;
// 0 (none) when the total has no cap either.
inline int64_t DefaultPerPeerCap(int64_t max_total) {
  return max_total > 0 ? (max_total + 1) / 2 : 0;
}

// Whether one address may hold every slot: the caps say so (a per-peer
// cap of none or at least the total, under a total cap).
inline bool OnePeerTakesAll(const ConnectionLimits& limits) {
  return limits.max_total > 0 &&
         (limits.max_per_peer == 0 || limits.max_per_peer >= limits.max_total);
}

class ConnectionBook {
 public:
  enum class Verdict { kAdmit, kTotal, kPeer };

  explicit ConnectionBook(ConnectionLimits limits) : limits_(limits) {}

  // Whether one more connection from `peer` (its address, no port) fits.
  Verdict Check(const std::string& peer) const;
  // Counts connection `fd` (socket inode `inode`) from `peer`.
  void Add(int fd, uint64_t inode, const std::string& peer);
  // Forgets every connection for which `alive(fd, inode)` is false.
  void Sweep(const std::function<bool(int fd, uint64_t inode)>& alive);

  int64_t open() const { return static_cast<int64_t>(open_.size()); }
  int64_t OpenFrom(const std::string& peer) const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Open {
    uint64_t inode;
    std::string peer;
  };

  const ConnectionLimits limits_;
  std::map<int, Open> open_;  // by fd
  std::map<std::string, int64_t> per_peer_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_CONNECTION_BOOK_H_
