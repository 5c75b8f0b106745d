#include "server/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace reshard::server {
namespace {

// How often the loop forgets connections gRPC closed, and at most how
// often a refusal sweeps first (so a flood of refusals stays cheap).
constexpr absl::Duration kSweepEvery = absl::Seconds(1);
constexpr absl::Duration kSweepBeforeRefusing = absl::Milliseconds(10);
// At most one log line per refusal reason in this time.
constexpr absl::Duration kLogEvery = absl::Seconds(10);
// Accepts per readable listener before the loop looks at the others.
constexpr int kAcceptsPerTurn = 64;
constexpr int kBacklog = 4096;

struct HostPort {
  std::string host;
  std::string port;
};

// "host:port", "[v6]:port" or ":port" split; nullopt without a port.
std::optional<HostPort> SplitHostPort(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return std::nullopt;
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{host, listen.substr(colon + 1)};
}

absl::Status ListenFailure(const std::string& listen, int error) {
  return absl::UnavailableError(absl::StrCat(
      "--listen=", listen, ": cannot listen: ", std::strerror(error)));
}

int PortOf(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

void SetPort(sockaddr* address, int port) {
  if (address->sa_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(port);
  }
}

// A listening socket on `a`; -errno when it cannot be. A v6 socket takes
// v4 too unless a v4 socket is bound beside it (`v6_only`).
int ListenOn(const addrinfo& a, bool v6_only) {
  const int fd = socket(a.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        a.ai_protocol);
  if (fd < 0) return -errno;
  const int one = 1;  // TIME_WAIT sockets do not hold the port
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (a.ai_family == AF_INET6) {
    const int only = v6_only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof(only));
  }
  if (bind(fd, a.ai_addr, a.ai_addrlen) != 0 || listen(fd, kBacklog) != 0) {
    const int error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

// The peer's address without its port; a v4 peer of a v6 socket as v4.
std::string PeerAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    return text;
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
  if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
    inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof(text));
    return text;
  }
  inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
  return text;
}

uint64_t InodeOf(int fd) {
  struct stat info {};
  return fstat(fd, &info) == 0 ? static_cast<uint64_t>(info.st_ino) : 0;
}

int OpenReserve() { return open("/dev/null", O_RDONLY | O_CLOEXEC); }

}  // namespace

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Bind(
    const std::string& listen, ConnectionLimits limits) {
  const std::optional<HostPort> split = SplitHostPort(listen);
  if (!split.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", listen, ": cannot listen: not host:port"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(split->host.empty() ? nullptr : split->host.c_str(),
                  split->port.c_str(), &hints, &found) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen=", listen, ": cannot listen: not an address of this host"));
  }
  bool has_v4 = false;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    has_v4 = has_v4 || a->ai_family == AF_INET;
  }
  std::vector<int> listeners;
  int port = 0;
  int error = 0;
  for (addrinfo* a = found; a != nullptr && error == 0; a = a->ai_next) {
    // Port 0: every address gets the port the first one was given.
    if (port != 0) SetPort(a->ai_addr, port);
    const int fd = ListenOn(*a, has_v4);
    if (fd < 0) {
      error = -fd;
      break;
    }
    listeners.push_back(fd);
    port = PortOf(fd);
  }
  freeaddrinfo(found);
  const int wake = error == 0 ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
  if (error == 0 && wake < 0) error = errno;
  if (error != 0) {
    for (int fd : listeners) close(fd);
    return ListenFailure(listen, error);
  }
  return std::unique_ptr<ConnectionGate>(
      new ConnectionGate(std::move(listeners), port, wake, limits));
}

ConnectionGate::ConnectionGate(std::vector<int> listeners, int port, int wake,
                               ConnectionLimits limits)
    : listeners_(std::move(listeners)),
      port_(port),
      wake_(wake),
      reserve_(OpenReserve()),
      book_(limits) {}

ConnectionGate::~ConnectionGate() {
  Stop();
  if (reserve_ >= 0) close(reserve_);
  close(wake_);
}

void ConnectionGate::Start(
    std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor) {
  acceptor_ = std::move(acceptor);
  thread_ = std::thread([this] { Loop(); });
}

void ConnectionGate::Stop() {
  if (stopping_.exchange(true)) return;
  const uint64_t one = 1;
  if (write(wake_, &one, sizeof(one)) < 0) {
    spdlog::warn("connections: cannot wake the accept loop: {}",
                 std::strerror(errno));
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : listeners_) close(fd);
}

void ConnectionGate::Loop() {
  std::vector<pollfd> watched;
  for (int fd : listeners_) watched.push_back({fd, POLLIN, 0});
  watched.push_back({wake_, POLLIN, 0});
  while (!stopping_.load()) {
    if (reserve_ < 0) reserve_ = OpenReserve();
    // Out of files with no reserve to shed with: wait for gRPC to close
    // some rather than spin on a listener that stays readable.
    const bool starved = reserve_ < 0;
    const nfds_t count = starved ? 0 : listeners_.size();
    const int ready = poll(watched.data() + (starved ? listeners_.size() : 0),
                           starved ? 1 : watched.size(), starved ? 100 : 1000);
    if (ready < 0 && errno != EINTR) {
      spdlog::error("connections: poll failed: {}", std::strerror(errno));
      break;
    }
    for (nfds_t i = 0; i < count && ready > 0; ++i) {
      if (watched[i].revents & POLLIN) AcceptFrom(watched[i].fd);
    }
    if (absl::Now() - last_sweep_ >= kSweepEvery) Sweep();
  }
}

void ConnectionGate::AcceptFrom(int listener) {
  for (int turn = 0; turn < kAcceptsPerTurn; ++turn) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&address),
                           &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(listener, fd, PeerAddress(address));
      continue;
    }
    switch (errno) {
      case EINTR:
      case ECONNABORTED:
        continue;
      case EMFILE:
      case ENFILE:
        Shed(listener);
        if (reserve_ < 0) return;
        continue;
      case EAGAIN:
        return;
      default:
        spdlog::warn("connections: accept failed: {}", std::strerror(errno));
        return;
    }
  }
}

void ConnectionGate::Admit(int listener, int fd, const std::string& peer) {
  ConnectionBook::Verdict verdict = book_.Check(peer);
  if (verdict != ConnectionBook::Verdict::kAdmit &&
      absl::Now() - last_sweep_ >= kSweepBeforeRefusing) {
    Sweep();
    verdict = book_.Check(peer);
  }
  if (verdict != ConnectionBook::Verdict::kAdmit) {
    close(fd);
    (verdict == ConnectionBook::Verdict::kTotal ? counts_.refused_total
                                                : counts_.refused_per_peer)
        .fetch_add(1);
    LogRefusal(verdict, peer);
    return;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  book_.Add(fd, InodeOf(fd), peer);
  counts_.accepted.fetch_add(1);
  counts_.open.store(book_.open());
  grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters
      params;
  params.listener_fd = listener;
  params.fd = fd;
  acceptor_->HandleNewConnection(&params);
}

void ConnectionGate::Shed(int listener) {
  if (reserve_ < 0) return;
  close(reserve_);
  reserve_ = -1;
  const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    counts_.shed_out_of_files.fetch_add(1);
  }
  reserve_ = OpenReserve();
  const absl::Time now = absl::Now();
  if (now - last_log_[0] >= kLogEvery) {
    last_log_[0] = now;
    spdlog::warn(
        "connections: out of open files ({} connections open): a new "
        "connection is closed at once (reshard_connections_refused_total"
        "{{reason=\"out_of_files\"}}); raise the hard open-file limit or "
        "lower --max_connections",
        book_.open());
  }
}

void ConnectionGate::Sweep() {
  last_sweep_ = absl::Now();
  book_.Sweep([](int fd, uint64_t inode) { return InodeOf(fd) == inode; });
  counts_.open.store(book_.open());
}

void ConnectionGate::LogRefusal(ConnectionBook::Verdict why,
                                const std::string& peer) {
  const bool total = why == ConnectionBook::Verdict::kTotal;
  const absl::Time now = absl::Now();
  absl::Time& last = last_log_[total ? 1 : 2];
  if (now - last < kLogEvery) return;
  last = now;
  if (total) {
    spdlog::warn(
        "connections: {} open, --max_connections={}: a new connection "
        "from {} is closed (reshard_connections_refused_total"
        "{{reason=\"total\"}})",
        book_.open(), book_.limits().max_total, peer);
  } else {
    spdlog::warn(
        "connections: {} open from {}, --max_connections_per_peer={}: a "
        "new one is closed (reshard_connections_refused_total"
        "{{reason=\"peer\"}})",
        book_.OpenFrom(peer), peer, book_.limits().max_per_peer);
  }
}

}  // namespace reshard::server
